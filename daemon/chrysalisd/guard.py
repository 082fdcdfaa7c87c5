"""`Guard`: the pure-ASGI middleware in front of every route (origin, body size, version
header, metrics)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import chrysalis
from chrysalis.core.errors import NotFound
from chrysalis.extract.worker import FOREGROUND

from .http_errors import error_response
from .memories import Memories, route_memory
from .state import Metrics

VERSION = chrysalis.__version__


Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
DRAIN_LIMIT = 1024**3  # past this an oversized body is not read to the end; the socket closes


def replaying(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands the app ``body`` (already read whole) first, then whatever
    ``receive`` says (a disconnect)."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _foreground(scope: Scope) -> bool:
    """A recall, a context or a remember: short requests an agent waits on (not an import,
    an export or a stream, which would hold extraction back for as long as they last)."""
    path = str(scope.get("path", ""))
    if path.endswith(("/v1/retrieve", "/v1/context")):
        return True
    return scope.get("method") == "POST" and path.endswith("/v1/beads")


class Guard:
    """Pure ASGI middleware in front of every route.

    - ``Origin`` or ``Referer`` present: 403. A browser page must never reach the memory
      (DNS rebinding, a local web page); agents and curl send neither.
    - Bodies over ``max_body`` bytes: 413, read to the end and dropped so the client gets the
      answer instead of a broken pipe (up to `DRAIN_LIMIT`). ``/v1/import`` is passed through
      unread: an import streams, of any size, and its route spools it.
    - ``/v1/m/<name>/...``: the memory it names, held in use until the answer's last byte
      (a drop waits for it), or 404 if there is none.
    - ``Chrysalis-Version`` on every answer; each request counted in `Metrics`.
    """

    def __init__(
        self, app: ASGIApp, max_body: int, metrics: Metrics, memories: Memories | None = None
    ) -> None:
        self.app = app
        self.max_body = max_body
        self.metrics = metrics
        self.memories = memories
        self.version_header = (b"chrysalis-version", VERSION.encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500
        route_memory(scope)  # /v1/m/<name>/... : the route, with the memory in the scope

        async def send_versioned(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", []), self.version_header]
            await send(message)

        try:
            if _foreground(scope):  # an agent waits on it: the extraction threads wait instead
                with FOREGROUND.busy():
                    await self._in_memory(scope, receive, send_versioned)
            else:
                await self._in_memory(scope, receive, send_versioned)
        finally:
            route = scope.get("route")
            name = getattr(route, "path", None) or "unmatched"
            self.metrics.observe(scope["method"], name, status, time.perf_counter() - started)

    async def _in_memory(self, scope: Scope, receive: Receive, send: Send) -> None:
        state = scope.get("state", {})
        if self.memories is None or "memory" not in state:
            await self._guarded(scope, receive, send)
            return
        try:
            host = state["host"] = self.memories.acquire(state["memory"])
        except NotFound as exc:
            await self._refuse(scope, receive, send, 404, "not_found", exc.message)
            return
        try:
            await self._guarded(scope, receive, send)
        finally:
            host.done()

    async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope["headers"])
        if b"origin" in headers or b"referer" in headers:
            which = "Origin" if b"origin" in headers else "Referer"
            await self._refuse(
                scope, receive, send, 403, "forbidden",
                f"requests carrying {which} are refused: the memory is not for web pages",
            )  # fmt: skip
            return
        if scope["method"] in ("POST", "PUT", "PATCH") and scope["path"] != "/v1/import":
            # Every body here is JSON, whatever the client labelled it (`curl -d` says
            # form-urlencoded): parse it as JSON so a mistake is reported as one.
            scope["headers"] = [(k, v) for k, v in scope["headers"] if k != b"content-type"] + [
                (b"content-type", b"application/json")
            ]
        if scope["path"] == "/v1/import":
            # An import streams (a file of any size); the route spools it to a temporary file.
            await self.app(scope, receive, send)
            return
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body:
            await self._too_large(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            more = message.get("more_body", False)
            if size > self.max_body:
                await self._too_large(scope, receive, send, more=more)
                return
            chunks.append(chunk)
        await self.app(scope, replaying(b"".join(chunks), receive), send)

    async def _too_large(
        self, scope: Scope, receive: Receive, send: Send, *, more: bool = True
    ) -> None:
        await self._refuse(
            scope, receive, send, 413, "too_large",
            f"request body over the limit of {self.max_body} bytes (max_body_bytes)",
            more=more,
        )  # fmt: skip

    async def _refuse(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        status: int,
        code: str,
        message: str,
        *,
        more: bool = True,
    ) -> None:
        """Answer with an error after reading what is left of the body (``more``)."""
        drained = 0
        while more and drained <= DRAIN_LIMIT:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                return
            drained += len(msg.get("body", b""))
            more = msg.get("more_body", False)
        await error_response(status, code, message)(scope, receive, send)
