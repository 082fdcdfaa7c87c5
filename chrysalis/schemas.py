"""JSON Schemas of the models, for ``schemas/``: ``python -m chrysalis.schemas [DIR]``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from chrysalis.core.models import Bead, BlobRef, Edge, Embedding, Node, Op, Persona, Skill

SCHEMA_MODELS: dict[str, Any] = {
    "bead": Bead,
    "blob_ref": BlobRef,
    "node": Node,
    "edge": Edge,
    "persona": Persona,
    "skill": Skill,
    "embedding": Embedding,
    "op": TypeAdapter(Op),
}


def json_schemas() -> dict[str, str]:
    """File name -> JSON text of every exported schema."""
    out = {}
    for name, model in SCHEMA_MODELS.items():
        schema = (
            model.json_schema() if isinstance(model, TypeAdapter) else model.model_json_schema()
        )
        schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
        out[f"{name}.schema.json"] = json.dumps(schema, indent=2, sort_keys=True) + "\n"
    return out


def write_schemas(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in json_schemas().items():
        path = directory / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str]) -> int:
    target = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent / "schemas"
    for path in write_schemas(target):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
