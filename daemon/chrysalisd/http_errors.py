"""The daemon's one error shape, and the handlers that turn every failure into it.

Every error is ``{"error": {"code": "...", "message": "...", "details": ...}}`` with the status
its class names (`chrysalis.errors`); request validation is 400, or 413 for a field over its
size limit, naming each bad field; unknown routes and methods are 404 and 405; anything
unforeseen is a logged 500.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import ValidationError
from starlette.exceptions import HTTPException

from chrysalis import errors

log = logging.getLogger("chrysalisd.http")


def status_of(exc: errors.ChrysalisError) -> int:
    """The HTTP status of a Chrysalis error: each class names its own (`chrysalis.errors`)."""
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


_TOO_LONG = {"string_too_long", "too_long", "bytes_too_long"}


def _validation_error(problems: Any) -> Response:
    details = []
    parts = []
    too_large = False
    for err in problems:
        loc = [str(p) for p in err.get("loc", ())]
        if loc[:1] == ["body"] and loc[1:2] in (["one"], ["many"]):
            del loc[1]  # the union's tag for a bead or a batch; not a field
        where = ".".join(loc) or "body"
        msg = err.get("msg", "invalid")
        kind = err.get("type", "")
        if kind == "json_invalid":
            ctx = err.get("ctx") or {}
            where = "body"
            at = f" at character {loc[1]}" if len(loc) > 1 else ""
            msg = f"malformed JSON{at}: {ctx.get('error', msg)}"
        if kind == "string_unicode":
            msg = "text contains a lone surrogate (not valid Unicode)"
        too_large |= kind in _TOO_LONG
        parts.append(f"{where}: {msg}")
        details.append({"loc": loc, "msg": msg, "type": kind})
    status, code = (413, "too_large") if too_large else (400, "invalid")
    message = "invalid request: " + "; ".join(parts[:5]) + ("; ..." if len(parts) > 5 else "")
    return error_response(status, code, message, json.loads(json.dumps(details, default=str)))
