"""The daemon's OpenAPI document (``schemas/openapi.json``) and the API reference made from it
(``docs/api.md``): ``python -m chrysalisd.openapi`` writes both."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .app import create_app


def openapi_text() -> str:
    return json.dumps(create_app().openapi(), indent=2, sort_keys=True) + "\n"


def api_markdown() -> str:
    """A reference page per route: method, path, what it does, its body and answers."""
    doc = create_app().openapi()
    out = [
        "# The daemon's HTTP API",
        "",
        "Generated from the OpenAPI document (`schemas/openapi.json`) by "
        "`python -m chrysalisd.openapi`; a test fails when it is stale. The daemon answers on "
        "its Unix socket only (`curl --unix-socket $CHRYSALIS_SOCKET http://chrysalis/...`). "
        'Every error is `{"error": {"code", "message", "details"}}`.',
        "",
        "**Several memories.** Every route under `/v1/` except `/v1/memories` is also served "
        "per named memory as `/v1/m/{name}/...` (`POST /v1/m/team/beads`, `GET "
        "/v1/m/team/status`); without the prefix a route means the `default` memory. An "
        "unknown name answers 404. `/metrics` covers every memory (a `memory` label).",
        "",
    ]
    by_tag: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for path, methods in sorted(doc["paths"].items()):
        for method, op in methods.items():
            by_tag.setdefault((op.get("tags") or ["other"])[0], []).append((method, path, op))
    for tag, ops in sorted(by_tag.items()):
        out += [f"## {tag}", ""]
        for method, path, op in ops:
            out += [f"### `{method.upper()} {path}`", ""]
            text = (op.get("description") or op.get("summary") or "").strip()
            if text:
                out += [" ".join(text.split()), ""]
            params = [f"`{p['name']}` ({p['in']})" for p in op.get("parameters", [])]
            if params:
                out += ["Parameters: " + ", ".join(params) + ".", ""]
            body = op.get("requestBody", {}).get("content", {})
            for media, spec in body.items():
                ref = spec.get("schema", {}).get("$ref", "")
                name = ref.rsplit("/", 1)[-1] if ref else media
                out += [f"Body: `{name}` ({media}).", ""]
            codes = ", ".join(sorted(op.get("responses", {})))
            out += [f"Answers: {codes}.", ""]
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parent.parent.parent
    target = Path(argv[1]) if len(argv) > 1 else root / "schemas" / "openapi.json"
    target.write_text(openapi_text(), encoding="utf-8")
    print(target)
    if len(argv) <= 1:
        reference = root / "docs" / "api.md"
        reference.write_text(api_markdown(), encoding="utf-8")
        print(reference)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
