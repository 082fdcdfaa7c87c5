"""The daemon's one error shape, and the handlers that turn every failure into it.

Every error is ``{"error": {"code": "...", "message": "...", "details": ...}}`` with the status
its class names (`chrysalis.core.errors`); request validation is 400, or 413 for a field over its
size limit, naming each bad field; unknown routes and methods are 404 and 405; a disk that
refused a write (ENOSPC, EDQUOT) is 507 ``disk_full`` naming it, even where no layer below
mapped it; anything unforeseen is a logged 500.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import ValidationError
from starlette.exceptions import HTTPException

from chrysalis.core import errors
from chrysalis.core.explain import REQUEST_PARTS, sentence, sentences

log = logging.getLogger("chrysalisd.http")


def status_of(exc: errors.ChrysalisError) -> int:
    """The HTTP status of a Chrysalis error: each class names its own (`chrysalis.core.errors`)."""
    return exc.status


def error_response(
    status: int, code: str, message: str, details: Any = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    body = {"error": {"code": code, "message": message, "details": details}}
    return JSONResponse(body, status_code=status, headers=headers)


def add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(errors.ChrysalisError)
    async def chrysalis_error(request: Request, exc: errors.ChrysalisError) -> Response:
        status = status_of(exc)
        if status >= 500:
            log.error("%s %s failed: %s", request.method, request.url.path, exc)
        return error_response(status, exc.code, exc.message, exc.details)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> Response:
        return _validation_error(exc.errors())

    @app.exception_handler(ValidationError)
    async def invalid_model(request: Request, exc: ValidationError) -> Response:
        return _validation_error(exc.errors(include_url=False))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        if exc.status_code == 404:
            message = f"no route {request.method} {request.url.path}"
            return error_response(404, "not_found", message)
        if exc.status_code == 405:
            message = f"{request.method} is not allowed on {request.url.path}"
            return error_response(405, "method_not_allowed", message)
        if exc.status_code == 400:  # FastAPI: a body it could not decode (not UTF-8, say)
            return error_response(400, "invalid", f"request body cannot be read: {exc.detail}")
        return error_response(exc.status_code, "http_error", str(exc.detail))

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception) -> Response:
        log.exception("%s %s failed", request.method, request.url.path)
        message = f"internal error ({type(exc).__name__}); the daemon log has the details"
        return error_response(500, "internal", message)

    @app.exception_handler(OSError)
    async def os_error(request: Request, exc: OSError) -> Response:
        if not errors.out_of_space(exc):
            return await internal(request, exc)
        memories = getattr(request.app.state, "memories", None)
        where = Path(exc.filename).parent if isinstance(exc.filename, str) else None
        if where is None and memories is not None:
            where = memories.settings.data_dir.expanduser()
        full = errors.disk_full(where or "the data dir")
        log.error("%s %s failed: %s (%s)", request.method, request.url.path, full, exc)
        return error_response(full.status, full.code, full.message)


def _validation_error(problems: Any) -> Response:
    """A request pydantic refused, in plain words (`chrysalis.core.explain`): ``query must not be
    empty``, ``bead 2: content must not be empty``; 413 when a field is over its size limit."""
    found = []
    for err in problems:
        loc = list(err.get("loc", ()))
        if loc[:1] and loc[0] in REQUEST_PARTS and err.get("type") != "json_invalid":
            loc = loc[1:]  # where in the request: the field's name says enough
        found.append({**err, "loc": loc})
    # a batch of beads is the body's "many" member (routes/beads.py): its items are beads
    item = "bead" if any(e["loc"][:1] == ["many"] for e in found) else None
    whole = "the request body"
    details = [
        {
            "loc": [str(p) for p in e["loc"]],
            "msg": sentence(e, item=item, whole=whole),
            "type": e.get("type", ""),
        }
        for e in found
    ]
    parts = sentences(found, item=item, whole=whole)
    message = "; ".join(parts[:5]) + ("; ..." if len(parts) > 5 else "")
    too_large = any(e.get("type") in errors.TOO_LARGE for e in found)
    status, code = (413, "too_large") if too_large else (400, "invalid")
    return error_response(status, code, message, json.loads(json.dumps(details, default=str)))
