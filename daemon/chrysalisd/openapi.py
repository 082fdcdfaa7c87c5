"""The daemon's OpenAPI document, for ``schemas/openapi.json``: ``python -m chrysalisd.openapi``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .app import create_app


def openapi_text() -> str:
    return json.dumps(create_app().openapi(), indent=2, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parent.parent.parent
    target = Path(argv[1]) if len(argv) > 1 else root / "schemas" / "openapi.json"
    target.write_text(openapi_text(), encoding="utf-8")
    print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
