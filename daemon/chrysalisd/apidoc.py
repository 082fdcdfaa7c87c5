"""The daemon's OpenAPI document as the daemon really answers, built on FastAPI's.

FastAPI documents its own defaults; where this daemon does otherwise, `document` (installed as
the app's ``openapi``) corrects it:

- bad input (a body, a query or path parameter) answers 400 ``invalid`` naming each bad field
  (`http_errors`), not FastAPI's 422 "Validation Error": that default becomes 400, plus 413 for
  a route with a JSON body (over ``max_body``) or a field with a size limit (a body's, a path
  id's: over it is 413). A 422 a route declares itself (``secrets = "refuse"`` on
  ``POST /v1/beads``) stays;
- every error answer has the one error shape, ``Error``;
- a route's summary is its docstring's first line and the rest its description (FastAPI would
  make "Get Bead" of the function's name);
- parameters and the library models' fields that carry no description get one here
  (`FIELD_NOTES`, `PARAM_NOTES`): `chrysalis.core.models` is kept small and free of prose.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.routing import APIRoute

ERROR_SCHEMA: dict[str, Any] = {
    "title": "Error",
    "description": "Every error answer: a stable code, a message in plain words, details.",
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "details"],
            "properties": {
                "code": {"type": "string", "description": "invalid, not_found, conflict, ..."},
                "message": {"type": "string", "description": "what is wrong, in plain words"},
                "details": {"description": "more, by code (the bad fields for invalid)"},
            },
        }
    },
}

ERRORS = {
    "400": "invalid request: the message names each bad field (nothing was changed)",
    "403": "forbidden",
    "404": "not found: the message says what",
    "409": "conflict: the description says when",
    "413": "too large: the body is over max_body, or a field (an id in the path too) over its "
    "size limit",
    "422": 'refused: a secret was found and secrets = "refuse" (nothing was stored)',
    "503": "unavailable for now: try again",
    "507": "not enough disk space: nothing was written",
}

FIELD_NOTES: dict[str, dict[str, str]] = {
    "NodeIn": {
        "id": "the node's id (the same id again replaces the node)",
        "type": 'what it is: "person", "project", "entity", ...',
        "name": "its display name",
        "labels": "free-form labels",
        "metadata": "JSON values by key",
        "evidence": "ids of the beads the node stands on",
        "derived_by": 'the extractor that derived it ("rules/1"); null when written by hand',
    },
    "PersonaIn": {
        "id": 'the persona\'s id ("default")',
        "name": "the agent's name",
        "description": "who the agent is, in prose",
        "goals": "what the agent is after",
        "norms": "rules the agent keeps",
        "skills": "ids of the skills it has (`PUT /v1/skills/{id}`)",
        "traits": "named traits (key → value)",
    },
    "Filters": {
        "session_id": "only beads of this session",
        "role": "only beads of this role",
        "tags": "only beads carrying any of these tags",
        "since": "only items stamped at or after this time (ISO 8601 or epoch seconds)",
        "until": "only items stamped before this time (ISO 8601 or epoch seconds)",
        "min_importance": "only beads at least this important (0 to 1)",
        "kinds": "only items of these kinds (bead, node, edge, ...)",
    },
    "SpanRef": {
        "path": "the file the content came from",
        "start_line": "its first line (1-based)",
        "end_line": "its last line (inclusive)",
    },
}

PARAM_NOTES: dict[tuple[str, str], str] = {
    ("/v1/beads", "limit"): "how many of the newest beads",
    ("/v1/beads", "session_id"): "only beads of this session",
    ("/v1/beads", "tag"): "only beads carrying this tag",
    ("/v1/beads", "role"): "only beads of this role",
    ("/v1/beads", "path"): "only beads ingested from this file, or from any file under this "
    "directory (absolute)",
    ("/v1/beads", "query"): "only beads whose text holds every word of this (stemmed; never by "
    "similarity)",
    ("/v1/beads", "after"): "only beads stamped after this (ISO 8601 or epoch seconds)",
    ("/v1/beads", "before"): "only beads stamped before this (ISO 8601 or epoch seconds)",
    ("/v1/kg/graph", "limit"): "at most this many nodes, the most connected first",
    ("/v1/kg/graph/draw", "limit"): "at most this many nodes, the most connected first",
    ("/v1/kg/graph/draw", "max_edges"): "at most this many edges between them, those among "
    "the most connected nodes first",
    ("/v1/kg/graph/draw", "if-none-match"): "the ETag of a drawing held: a 304 while it is current",
    ("/v1/kg/nodes/{id}/edges", "limit"): "at most this many edges",
    ("/v1/kg/nodes/{id}/neighbors", "depth"): "how many hops to walk",
    ("/v1/kg/nodes/{id}/neighbors", "as_of"): "walk the facts that held then "
    "(ISO 8601 or epoch seconds); by default those that hold now",
    ("/v1/kg/nodes/{id}/neighbors", "include_invalid"): "walk every fact, ended or superseded "
    "ones too",
}


def document(app: FastAPI) -> dict[str, Any]:
    """The app's OpenAPI document, corrected as the module says; built once per app."""
    doc = app.openapi_schema
    if doc is None:
        doc = FastAPI.openapi(app)  # FastAPI's own, cached on the app; corrected in place
        summaries = {
            (path, method.lower()): r.summary
            for r in app.routes
            if isinstance(r, APIRoute)
            for path in [r.path_format]
            for method in r.methods or ()
        }
        schemas = doc.setdefault("components", {}).setdefault("schemas", {})
        for path, methods in doc["paths"].items():
            for method, op in methods.items():
                _answers(op)
                if summaries.get((path, method)) is None:
                    _summary(op)
                for param in op.get("parameters", []):
                    note = PARAM_NOTES.get((path, param["name"]))
                    if note and not param.get("description"):
                        param["description"] = note
        for name, notes in FIELD_NOTES.items():
            for field, prop in schemas.get(name, {}).get("properties", {}).items():
                if field in notes and not prop.get("description"):
                    prop["description"] = notes[field]
        for default in ("HTTPValidationError", "ValidationError"):
            schemas.pop(default, None)
        schemas["Error"] = ERROR_SCHEMA
    return doc


def _answers(op: dict[str, Any]) -> None:
    responses = op["responses"]
    default = responses.get("422", {}).get("content", {}).get("application/json", {})
    if default.get("schema", {}).get("$ref", "").endswith("/HTTPValidationError"):
        del responses["422"]
        responses.setdefault("400", {})
        sized = [p["schema"] for p in op.get("parameters", []) if "maxLength" in str(p["schema"])]
        if sized or "application/json" in op.get("requestBody", {}).get("content", {}):
            responses.setdefault("413", {})  # a field over its size limit (`http_errors`)
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for code, answer in responses.items():
        if code in ERRORS:
            answer["description"] = ERRORS[code]
            answer["content"] = error
    op["responses"] = dict(sorted(responses.items()))


def _summary(op: dict[str, Any]) -> None:
    """The docstring's first line is the summary when it is a paragraph of its own."""
    first, _, rest = (op.get("description") or "").partition("\n\n")
    if first.strip() and "\n" not in first.strip():
        op["summary"] = first.strip().removesuffix(".")
        if rest.strip():
            op["description"] = rest.strip()
        else:
            op.pop("description", None)
