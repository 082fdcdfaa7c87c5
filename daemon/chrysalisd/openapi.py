"""The daemon's OpenAPI document (``schemas/openapi.json``) and the API reference made from it
(``docs/api.md``): ``python -m chrysalisd.openapi`` writes both."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .apidoc import ERRORS
from .app import create_app


def openapi_text() -> str:
    return json.dumps(create_app().openapi(), indent=2, sort_keys=True) + "\n"


def api_markdown() -> str:
    """A reference page per route: method, path, what it does, its parameters, the fields of
    its body and its answers."""
    doc = create_app().openapi()
    schemas = doc["components"]["schemas"]
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
        "**Errors.** Each route lists the statuses it answers. A request with an `Origin` or "
        "`Referer` header is refused with 403 on every route (a browser page must not reach the "
        "memory), an unknown route is 404 and a wrong method 405. The error statuses mean:",
        "",
        *[f"- {code}: {text}." for code, text in ERRORS.items()],
        "",
    ]
    by_tag: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for path, methods in sorted(doc["paths"].items()):
        for method, op in methods.items():
            by_tag.setdefault((op.get("tags") or ["other"])[0], []).append((method, path, op))
    for tag, ops in sorted(by_tag.items()):
        out += [f"## {tag}", ""]
        for method, path, op in ops:
            out += [f"### `{method.upper()} {path}`", "", f"**{op['summary']}**", ""]
            text = (op.get("description") or "").strip()
            if text:
                out += [" ".join(text.split()), ""]
            params = op.get("parameters", [])
            if params:
                out += ["Parameters:", "", "| name | in | type | required / default | meaning |"]
                out += ["| --- | --- | --- | --- | --- |"]
                for p in params:
                    need = _need(p["schema"], p.get("required", False))
                    note = p.get("description") or p["schema"].get("description", "")
                    row = (f"`{p['name']}`", p["in"], _type(p["schema"]), need, note)
                    out.append(_row(row))
                out.append("")
            for media, spec in op.get("requestBody", {}).get("content", {}).items():
                out += _body(media, spec.get("schema", {}), schemas)
            codes = ", ".join(sorted(op.get("responses", {})))
            out += [f"Answers: {codes}.", ""]
    return "\n".join(out).rstrip() + "\n"


def _body(media: str, schema: dict[str, Any], schemas: dict[str, Any]) -> list[str]:
    """The body's line and a table of the fields of each object in it (nested ones too)."""
    if media != "application/json":
        return [f"Body: {schema.get('description', '')} (`{media}`).", ""]
    shown = _type(schema)
    root = schemas.get(shown, {})
    if "oneOf" in root:  # a root model: one of several shapes
        shown = " or ".join(_type(s) for s in root["oneOf"])
    out = [f"Body (`{media}`): {shown}.", ""]
    todo, seen = _refs(schema, schemas), set()
    while todo:
        name = todo.pop(0)
        if name in seen or "properties" not in schemas[name]:
            continue
        seen.add(name)
        model = schemas[name]
        required = set(model.get("required", []))
        out += [f"`{name}` fields:", "", "| field | type | required / default | meaning |"]
        out.append("| --- | --- | --- | --- |")
        for field, prop in model["properties"].items():
            need = _need(prop, field in required)
            out.append(_row((f"`{field}`", _type(prop), need, prop.get("description", ""))))
            todo += _refs(prop, schemas)
        out.append("")
    return out


def _refs(schema: Any, schemas: dict[str, Any]) -> list[str]:
    """The component names a schema refers to, itself and one-of shapes expanded."""
    if isinstance(schema, list):
        return [name for s in schema for name in _refs(s, schemas)]
    if not isinstance(schema, dict):
        return []
    if "$ref" in schema:
        name = str(schema["$ref"]).rsplit("/", 1)[-1]
        return [name, *_refs(schemas[name].get("oneOf", []), schemas)]
    return [name for key in ("anyOf", "oneOf", "items") for name in _refs(schema.get(key), schemas)]


def _type(schema: dict[str, Any]) -> str:
    """A JSON schema as a short type: `BeadIn`, string, list[string], number or string."""
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if "enum" in schema:
        return " | ".join(json.dumps(v) for v in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"])
    for key in ("anyOf", "oneOf"):  # null left out: "optional" says a field may be absent
        if key in schema:
            return " or ".join(_type(s) for s in schema[key] if s.get("type") != "null")
    kind = schema.get("type")
    if kind == "array":
        return f"list[{_type(schema.get('items', {}))}]"
    if kind == "object":
        values = schema.get("additionalProperties")
        return f"object of {_type(values)}" if isinstance(values, dict) else "object"
    if kind == "string" and "format" in schema:
        return f"string ({schema['format']})"
    return str(kind) if kind else "any JSON"


def _need(schema: dict[str, Any], required: bool) -> str:
    if required:
        return "required"
    if "default" in schema:
        return f"`{json.dumps(schema['default'])}`"
    return "optional"


def _row(cells: tuple[str, ...]) -> str:
    return "| " + " | ".join(" ".join(c.replace("|", "\\|").split()) for c in cells) + " |"


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
