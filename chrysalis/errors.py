"""The one tree of Chrysalis errors.

Foreign exceptions (pydantic, LMDB, later boto3/httpx/Zep) are mapped here once, at the
boundary where they occur, with ``raise Mapped(msg) from exc``::

    ChrysalisError
    ├── InvalidInput          bad input: nothing was written            (HTTP 400)
    │   ├── PayloadTooLarge   a field or body over its size limit       (HTTP 413)
    │   └── MethodNotAllowed  the route exists, the method does not     (HTTP 405)
    ├── Forbidden             refused: a browser origin, another user    (HTTP 403)
    ├── NotFound              no such bead, node, edge, skill, blob      (HTTP 404)
    ├── Conflict              the request contradicts stored state       (HTTP 409)
    │   └── DotConflict       same (replica, seq) with different content:
    │                         a cloned or restored data dir
    ├── EmbedderUnavailable   the embedding service cannot answer         (HTTP 503)
    ├── NotReady              the daemon is starting or stopping          (HTTP 503)
    ├── DaemonNotRunning      (client) nothing answers on the socket
    ├── DataDirLocked         another process has the data dir open
    ├── StoreError            LMDB or the blob store failed
    ├── ClosedError           the Memory was closed
    └── InternalError         the daemon failed; its log says why        (HTTP 500)
"""

from __future__ import annotations

from typing import Any


class ChrysalisError(Exception):
    """Base of every error Chrysalis raises on purpose."""

    code = "error"

    def __init__(self, message: str, *, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class InvalidInput(ChrysalisError, ValueError):
    """The input is malformed; nothing was changed."""

    code = "invalid"


class PayloadTooLarge(InvalidInput):
    """A field or body is over its size limit; nothing was changed."""

    code = "too_large"


class MethodNotAllowed(InvalidInput):
    """The route exists but not with this HTTP method."""

    code = "method_not_allowed"


class Forbidden(ChrysalisError, PermissionError):
    """Refused on principle: a request from a browser page, or a peer of another user."""

    code = "forbidden"


class NotFound(ChrysalisError, LookupError):
    """The named item does not exist (or was forgotten)."""

    code = "not_found"


class Conflict(ChrysalisError):
    """The request contradicts stored state; nothing was changed."""

    code = "conflict"


class DotConflict(Conflict):
    """An op arrived whose dot we hold with different content.

    Two replicas issued the same ``(replica, seq)``: a data dir was cloned or restored from a
    backup and kept writing. Nothing was applied; the copy must start a new generation.
    """

    code = "dot_conflict"


class EmbedderUnavailable(ChrysalisError):
    """The embedder cannot answer (Ollama down, model not pulled, timeout); says what to do."""

    code = "embedder_unavailable"


class NotReady(ChrysalisError):
    """The daemon is starting or shutting down; retry shortly."""

    code = "not_ready"


class DaemonNotRunning(ChrysalisError, ConnectionError):
    """Nothing answers on the daemon's socket (raised by the client)."""

    code = "no_daemon"


class DataDirLocked(ChrysalisError):
    """Another process (or another Memory in this process) has the data dir open."""

    code = "locked"


class StoreError(ChrysalisError):
    """LMDB or the blob store failed underneath us."""

    code = "store_error"


class ClosedError(ChrysalisError):
    """The Memory was closed."""

    code = "closed"


class InternalError(ChrysalisError):
    """The daemon failed while serving the request; its log has the traceback."""

    code = "internal"


def error_class(code: str) -> type[ChrysalisError]:
    """The error class whose ``code`` is ``code`` (`ChrysalisError` for an unknown one)."""
    todo: list[type[ChrysalisError]] = [ChrysalisError]
    while todo:
        cls = todo.pop()
        if cls.code == code:
            return cls
        todo.extend(cls.__subclasses__())
    return ChrysalisError


def from_pydantic(exc: Any, what: str) -> InvalidInput:
    """Turn a pydantic ``ValidationError`` into an `InvalidInput` naming each bad field."""
    problems = []
    too_large = False
    for err in exc.errors(include_url=False, include_input=False):
        loc = ".".join(str(p) for p in err.get("loc", ())) or what
        msg = err.get("msg", "")
        if err.get("type") == "string_unicode":  # pydantic's word for a lone surrogate
            msg = "text contains a lone surrogate (not valid Unicode)"
        problems.append(f"{loc}: {msg}")
        if err.get("type") in {"string_too_long", "too_long", "bytes_too_long"}:
            too_large = True
    cls = PayloadTooLarge if too_large else InvalidInput
    details = [
        {"loc": list(e.get("loc", ())), "msg": e.get("msg"), "type": e.get("type")}
        for e in exc.errors(include_url=False, include_input=False)
    ]
    return cls(f"invalid {what}: " + "; ".join(problems), details=details)
