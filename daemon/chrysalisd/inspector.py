"""The memory inspector (``chrysalis ui``): a small web app the daemon serves on 127.0.0.1, so
a person can see what their agent remembers (DESIGN §16).

It opens on the first ``POST /v1/ui`` over the Unix socket (so only the socket's user can ask
for it) and closes with the daemon. Its rules:

- **127.0.0.1 only**, on a random port.
- **A per-start token** (32 random bytes) in the URL the CLI prints. ``GET /?token=T`` trades it
  for a session cookie (``HttpOnly; SameSite=Strict``) and redirects to ``/`` without it, so the
  token leaves the address bar. Every other request needs the cookie.
- **Host checked**: ``127.0.0.1:PORT`` or ``localhost:PORT`` only. A page of another site
  whose name was made to resolve to 127.0.0.1 (DNS rebinding) sends its own name: 403.
- **Origin checked**: a request that carries one must come from this origin (with
  SameSite=Strict, a second guard against another site's page posting here).
- **No CORS**: no ``Access-Control-*`` header is ever sent, so no other origin reads an answer.
- ``/api/...`` is the daemon's own API (``/api/v1/...``, per memory ``/api/v1/m/NAME/...``)
  with every rule of the socket API unchanged; the request reaches it without the browser's
  Origin, Referer and Cookie headers (that API refuses requests carrying Origin or Referer).
- Static assets ship in the package (``chrysalisd/static``); nothing comes from a CDN. Every
  answer has a Content-Security-Policy of ``'self'``, ``nosniff``, no referrer, no caching.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import mimetypes
import secrets
import socket
from collections.abc import Iterator, MutableMapping
from http.cookies import SimpleCookie
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlencode

import uvicorn

from .guard import ASGIApp, Receive, Scope, Send
from .http_errors import error_response

log = logging.getLogger("chrysalisd")

COOKIE = "chrysalis_ui"
STATIC = "static"
SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
        b"frame-ancestors 'none'; form-action 'self'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
    (b"x-frame-options", b"DENY"),
]
_DROPPED = {b"origin", b"referer", b"cookie"}  # not passed on to the API


def _assets() -> dict[str, tuple[bytes, bytes]]:
    """The shipped files by name: (bytes, content type). Read once: nothing else is served."""
    out = {}
    for entry in resources.files("chrysalisd").joinpath(STATIC).iterdir():
        if entry.is_file():
            kind = mimetypes.guess_type(entry.name)[0] or "application/octet-stream"
            charset = (
                "; charset=utf-8" if kind.startswith(("text/", "application/javascript")) else ""
            )
            out[entry.name] = (entry.read_bytes(), (kind + charset).encode())
    return out


class Inspector:
    """The inspector's ASGI app in front of the daemon's API app ``api``."""

    def __init__(self, api: ASGIApp, port: int) -> None:
        self.api = api
        self.port = port
        self.token = secrets.token_urlsafe(32)
        self._session = secrets.token_urlsafe(32)  # the cookie: never the token itself
        self.hosts = {f"127.0.0.1:{port}".encode(), f"localhost:{port}".encode()}
        self.origins = {b"http://" + h for h in self.hosts}
        self.assets = _assets()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = dict(scope["headers"])

        async def secured(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", []) if not _cors(k)]
                message["headers"] = kept + SECURITY_HEADERS
            await send(message)

        if headers.get(b"host") not in self.hosts:
            await _refuse(scope, receive, secured, 403, "this page is served to 127.0.0.1 only")
            return
        origin = headers.get(b"origin")
        if origin is not None and origin not in self.origins:
            await _refuse(scope, receive, secured, 403, "requests from other sites are refused")
            return
        path = scope["path"]
        if path == "/" and "token" in parse_qs(scope.get("query_string", b"").decode()):
            await self._exchange(scope, receive, secured)
            return
        if not self._signed_in(headers.get(b"cookie", b"")):
            await _refuse(
                scope, receive, secured, 401,
                "not signed in: open the address `chrysalis ui` prints (its token is new each "
                "time the daemon starts)",
            )  # fmt: skip
            return
        if path.startswith("/api/"):
            await self._api(scope, receive, secured)
        elif path == "/":
            await _answer(secured, 200, *self.assets["index.html"])
        elif path.startswith("/static/") and path[len("/static/") :] in self.assets:
            await _answer(secured, 200, *self.assets[path[len("/static/") :]])
        else:
            await _refuse(scope, receive, secured, 404, f"nothing at {path}")

    def _signed_in(self, cookie_header: bytes) -> bool:
        cookies: SimpleCookie = SimpleCookie()
        with contextlib.suppress(Exception):
            cookies.load(cookie_header.decode("latin-1"))
        morsel = cookies.get(COOKIE)
        return morsel is not None and hmac.compare_digest(morsel.value, self._session)

    async def _exchange(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = parse_qs(scope.get("query_string", b"").decode()).get("token", [""])[0]
        if not hmac.compare_digest(token.encode(), self.token.encode()):
            await _refuse(
                scope, receive, send, 401,
                "this token is not the current one: run `chrysalis ui` again for a fresh "
                "address (the daemon has restarted)",
            )  # fmt: skip
            return
        cookie = f"{COOKIE}={self._session}; Path=/; HttpOnly; SameSite=Strict"
        memory = parse_qs(scope.get("query_string", b"").decode()).get("memory", [""])[0]
        where = "/?" + urlencode({"memory": memory}) if memory else "/"
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [(b"location", where.encode()), (b"set-cookie", cookie.encode())],
            }
        )
        await send({"type": "http.response.body", "body": b""})

    async def _api(self, scope: Scope, receive: Receive, send: Send) -> None:
        inner = dict(scope)
        inner["path"] = scope["path"][len("/api") :]
        inner["raw_path"] = inner["path"].encode()
        inner["headers"] = [(k, v) for k, v in scope["headers"] if k not in _DROPPED]
        if inner["path"] == "/v1/ui":  # the address is asked for over the socket only
            await _refuse(scope, receive, send, 404, "nothing at /api/v1/ui")
            return
        await self.api(inner, receive, send)


def _cors(name: bytes) -> bool:
    return name.lower().startswith(b"access-control-")


async def _answer(send: Send, status: int, body: bytes, kind: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, message: str) -> None:
    code = {401: "unauthorized", 403: "forbidden", 404: "not_found"}[status]
    await error_response(status, code, message)(scope, receive, send)


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """The daemon's own server handles SIGTERM and SIGINT; this one is stopped by it."""
        yield


class InspectorServer:
    """The inspector's listener: opened once per daemon start, closed with the daemon."""

    def __init__(self, api: ASGIApp) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.app = Inspector(api, self.sock.getsockname()[1])
        config = uvicorn.Config(
            self.app,
            lifespan="off",
            log_config=None,
            access_log=False,
            timeout_graceful_shutdown=2,
            server_header=False,
        )
        self.server = _Server(config)
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self.server.serve(sockets=[self.sock]))
        log.info("inspector listening on http://127.0.0.1:%d/", self.app.port)

    async def close(self) -> None:
        self.server.should_exit = True
        if self.task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
        self.sock.close()
