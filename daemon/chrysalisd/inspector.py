"""The memory inspector (``chrysalis ui``): a small web app the daemon serves on 127.0.0.1, so
a person can see what their agent remembers. It is a trust boundary of its own (DESIGN §16):
anyone on the host can reach its port, and any page in the owner's browser can make requests
to it.

It opens on the first ``POST /v1/ui`` over the Unix socket (so only the socket's user can ask
for it), is listening before that call answers, and closes with the daemon. Its rules:

- **127.0.0.1 only**, on a random port.
- **Sign-in tokens are one-time and short-lived.** Each ``POST /v1/ui`` mints a fresh token
  (32 random bytes) that works once, within `TOKEN_TTL` seconds. It is traded at ``/signin``
  (a form POST of ``token``, or ``GET /signin?token=T`` for the address ``chrysalis ui
  --no-browser`` prints). The CLI never puts it in a process's arguments or environment: it
  writes a 0600 page in a 0700 directory of its own that posts the form, and hands the browser
  that file. A token used already, expired or unknown: 401 in plain words; nothing is logged.
- **The session is a header, never a cookie.** A good trade answers the app's page with a new
  session secret in ``<meta name="chrysalis-session">``; app.js moves it to ``sessionStorage``
  (per origin: per port) and sends it as ``X-Chrysalis-Session`` on every API call. Cookies
  are shared by every port of a host and browsers attach them to any page's requests; a
  custom header is not: a page of another origin (another port of 127.0.0.1 included) needs a
  CORS preflight to send it, and none is ever answered. No cookie is set or read.
- **Host checked**: ``127.0.0.1:PORT`` or ``localhost:PORT`` only. A page of another site
  whose name was made to resolve to 127.0.0.1 (DNS rebinding) sends its own name: 403.
- **Origin checked**: a request that carries one must come from this origin (``/signin`` also
  takes ``null``: the CLI's sign-in page is a local file).
- **No CORS**: no ``Access-Control-*`` header is ever sent, so no other origin reads an answer.
- **Its own routes only.** ``/api/...`` reaches the daemon's API (``/api/v1/...``, per memory
  ``/api/v1/m/NAME/...``, every rule of the socket API unchanged) for the calls the app makes,
  checked on the path with the memory prefix taken off: the memories, status, beads (list,
  one, forget), the forget receipt, retrieve, the graph (whole, as a compact drawing, and
  a node's facts) (`ROUTES`). Anything else (ingest,
  import, export, settings, creating or dropping a memory, ``/v1/ui``): 403. The request
  reaches the API without the browser's Origin, Referer, Cookie and session headers (that API
  refuses requests carrying Origin or Referer); its body is at most `MAX_BODY` bytes (413).
- **The owner's processes only**: the kernel names the owner of a connection's far end
  (``/proc/net/tcp``); another user's connection is closed before a byte is read.
- **A bounded listener** that cannot take the descriptors the socket API needs: at most
  `MAX_CONNECTIONS` connections at a time (past it a connection is closed at once); a
  request's headers must arrive within `HEADER_TIMEOUT` seconds and its body within
  `BODY_TIMEOUT` (else 408 and closed); idle keep-alive connections close after 5 s.
- The page and its static assets hold no secret and are served without a session (a reload
  keeps working from ``sessionStorage``). They ship in the package (``chrysalisd/static``;
  ``static/vendor`` holds the graph library, built from the npm registry by
  ``scripts/vendor_ui.sh``, with its licences); nothing comes from a CDN. Every answer has
  a Content-Security-Policy of ``'self'`` (the graph's layout runs in a worker script of
  this origin; no eval, no inline script), ``nosniff``, no referrer, no caching, no framing.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import html
import logging
import mimetypes
import os
import re
import secrets
import socket
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, MutableMapping
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlencode

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from chrysalis.net.loopback import connection_uid

from .guard import ASGIApp, Receive, Scope, Send, replaying
from .http_errors import error_response
from .memories import route_memory

log = logging.getLogger("chrysalisd")

STATIC = "static"
TOKEN_TTL = 90.0  # seconds a sign-in token may wait to be traded
MAX_TOKENS = 32  # sign-in tokens waiting at once; past it the oldest is dropped
MAX_SESSIONS = 32  # sessions kept; past it the oldest signs out
MAX_CONNECTIONS = 64  # a browser opens about six per host
HEADER_TIMEOUT = 5.0  # seconds from connect (or the end of the last answer) to the headers' end
BODY_TIMEOUT = 10.0  # seconds from the headers' end to the body's
MAX_BODY = 64 * 1024  # the app sends a search query at most
SESSION_HEADER = b"x-chrysalis-session"
SESSION_META = "chrysalis-session"

# (method, path after the memory prefix is taken off): what app.js calls, and nothing else.
ROUTES = [
    ("GET", re.compile(r"/v1/memories")),
    ("GET", re.compile(r"/v1/status")),
    ("GET", re.compile(r"/v1/beads")),
    ("GET", re.compile(r"/v1/beads/[^/]+")),
    ("DELETE", re.compile(r"/v1/beads/[^/]+")),
    ("GET", re.compile(r"/v1/forget/[^/]+")),
    ("POST", re.compile(r"/v1/retrieve")),
    ("GET", re.compile(r"/v1/kg/graph")),
    ("GET", re.compile(r"/v1/kg/graph/draw")),
    ("GET", re.compile(r"/v1/kg/nodes/[^/]+/edges")),
]
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
_DROPPED = {b"origin", b"referer", b"cookie", SESSION_HEADER}  # not passed on to the API
_NOT_SIGNED_IN = (
    "not signed in: run `chrysalis ui` (it opens the inspector in your browser and signs you in)"
)


def _assets() -> dict[str, tuple[bytes, bytes]]:
    """The shipped files by name (``app.js``, ``vendor/graph.js``): (bytes, content type).
    Read once: nothing else is served."""
    out = {}
    root = resources.files("chrysalisd").joinpath(STATIC)
    folders = [("", root), *((d.name + "/", d) for d in root.iterdir() if d.is_dir())]
    for prefix, folder in folders:
        for entry in folder.iterdir():
            if entry.is_file() and not entry.name.startswith("."):
                kind = mimetypes.guess_type(entry.name)[0] or "text/plain"
                charset = (
                    "; charset=utf-8"
                    if kind.startswith(("text/", "application/javascript"))
                    else ""
                )
                out[prefix + entry.name] = (entry.read_bytes(), (kind + charset).encode())
    return out


def _digest(secret: str) -> bytes:
    """What is kept of a token or session: its hash (a lookup by it leaks no timing of use)."""
    return hashlib.sha256(secret.encode()).digest()


def allowed(method: str, path: str) -> bool:
    """Whether the inspector passes ``method path`` (``/v1/...``, maybe ``/v1/m/NAME/...``)
    on to the API: the path is checked as the API will route it, its memory prefix taken off."""
    probe: dict[str, Any] = {"path": path}
    route_memory(probe)
    return any(m == method and r.fullmatch(probe["path"]) for m, r in ROUTES)


class Inspector:
    """The inspector's ASGI app in front of the daemon's API app ``api``; ``clock`` is
    monotonic seconds (tests pass their own)."""

    def __init__(
        self, api: ASGIApp, port: int, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.api = api
        self.port = port
        self.clock = clock
        self.hosts = {f"127.0.0.1:{port}".encode(), f"localhost:{port}".encode()}
        self.origins = {b"http://" + h for h in self.hosts}
        self.assets = _assets()
        self._tokens: OrderedDict[bytes, float] = OrderedDict()  # digest -> expiry
        self._spent: OrderedDict[bytes, None] = OrderedDict()  # digests traded, to say so
        self._sessions: OrderedDict[bytes, None] = OrderedDict()

    @property
    def signin(self) -> str:
        return f"http://127.0.0.1:{self.port}/signin"

    def mint(self) -> str:
        """A new sign-in token: it works once, within `TOKEN_TTL` seconds."""
        now = self.clock()
        for digest, expiry in list(self._tokens.items()):
            if expiry <= now:
                del self._tokens[digest]
        while len(self._tokens) >= MAX_TOKENS:
            self._tokens.popitem(last=False)
        token = secrets.token_urlsafe(32)
        self._tokens[_digest(token)] = now + TOKEN_TTL
        return token

    def url(self, token: str, memory: str | None = None) -> str:
        """The address that signs in with ``token`` (and opens ``memory``)."""
        query = {"token": token, **({"memory": memory} if memory else {})}
        return f"{self.signin}?{urlencode(query)}"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = dict(scope["headers"])

        async def secured(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                kept = [
                    (k, v)
                    for k, v in message.get("headers", [])
                    if not k.lower().startswith(b"access-control-") and k.lower() != b"set-cookie"
                ]
                message["headers"] = kept + SECURITY_HEADERS
            await send(message)

        path, method = scope["path"], scope["method"]
        if headers.get(b"host") not in self.hosts:
            await _refuse(scope, receive, secured, 403, "this page is served to 127.0.0.1 only")
            return
        origin = headers.get(b"origin")
        local_file = path == "/signin" and origin == b"null"  # the CLI's sign-in page posts
        if origin is not None and origin not in self.origins and not local_file:
            await _refuse(scope, receive, secured, 403, "requests from other sites are refused")
            return
        if path == "/signin" and method in ("GET", "POST"):
            await self._sign_in(scope, receive, secured)
        elif path.startswith("/api/"):
            await self._api(scope, receive, secured, headers.get(SESSION_HEADER))
        elif method != "GET":
            await _refuse(scope, receive, secured, 404, f"nothing at {method} {path}")
        elif path == "/":
            await _answer(secured, 200, *self.assets["index.html"])
        elif path.startswith("/static/") and path[len("/static/") :] in self.assets:
            await _answer(secured, 200, *self.assets[path[len("/static/") :]])
        else:
            await _refuse(scope, receive, secured, 404, f"nothing at {path}")

    # ---- signing in ---------------------------------------------------------------------

    async def _sign_in(self, scope: Scope, receive: Receive, send: Send) -> None:
        fields = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if scope["method"] == "POST":
            body = await _read_body(receive, 4096)
            if body is None:
                await _refuse(scope, receive, send, 413, "a sign-in form is a few bytes")
                return
            fields = parse_qs(body.decode("latin-1"))
        token = fields.get("token", [""])[0]
        memory = fields.get("memory", [""])[0]
        why = self._trade(token)
        if why is not None:
            await _refuse(scope, receive, send, 401, why)
            return
        session = secrets.token_urlsafe(32)
        while len(self._sessions) >= MAX_SESSIONS:
            self._sessions.popitem(last=False)
        self._sessions[_digest(session)] = None
        page, kind = self.assets["index.html"]
        metas = f'<meta name="{SESSION_META}" content="{session}">'
        if memory:
            metas += f'\n  <meta name="chrysalis-memory" content="{html.escape(memory)}">'
        charset = b'<meta charset="utf-8">'
        await _answer(send, 200, page.replace(charset, charset + b"\n  " + metas.encode(), 1), kind)

    def _trade(self, token: str) -> str | None:
        """Spend ``token``: None when it was good, else why not (for the person)."""
        digest = _digest(token)
        expiry = self._tokens.pop(digest, None)
        again = "run `chrysalis ui` again to sign in"
        if expiry is None:
            if digest in self._spent:
                return f"this sign-in address was used already (each works once): {again}"
            return (
                "this sign-in address is not one this daemon gave (it may have restarted, or "
                f"the address is incomplete): {again}"
            )
        self._spent[digest] = None
        while len(self._spent) > 256:
            self._spent.popitem(last=False)
        if expiry <= self.clock():
            return f"this sign-in address expired (each lasts {TOKEN_TTL:.0f} s): {again}"
        return None

    def _signed_in(self, session: bytes | None) -> bool:
        return session is not None and _digest(session.decode("latin-1")) in self._sessions

    # ---- the API ------------------------------------------------------------------------

    async def _api(self, scope: Scope, receive: Receive, send: Send, session: bytes | None) -> None:
        if not self._signed_in(session):
            await _refuse(scope, receive, send, 401, _NOT_SIGNED_IN)
            return
        inner = dict(scope)
        inner["path"] = scope["path"][len("/api") :]
        inner["raw_path"] = inner["path"].encode()
        inner["headers"] = [(k, v) for k, v in scope["headers"] if k not in _DROPPED]
        if not allowed(scope["method"], inner["path"]):
            await _refuse(
                scope, receive, send, 403,
                f"the inspector does not serve {scope['method']} {inner['path']}: it reads, "
                "searches and forgets; the chrysalis CLI does the rest",
            )  # fmt: skip
            return
        body = await _read_body(receive, MAX_BODY)
        if body is None:
            await _refuse(
                scope, receive, send, 413,
                f"the inspector takes request bodies of at most {MAX_BODY} bytes",
            )  # fmt: skip
            return
        await self.api(inner, replaying(body, receive), send)


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The request's body, or None when it is over ``limit`` bytes (or the client left)."""
    chunks: list[bytes] = []
    size, more = 0, True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        more = message.get("more_body", False)
    return b"".join(chunks)


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
    code = {401: "unauthorized", 403: "forbidden", 404: "not_found", 413: "too_large"}[status]
    await error_response(status, code, message)(scope, receive, send)


# ---- the listener ---------------------------------------------------------------------------

_TOO_SLOW = (
    b'{"error": {"code": "timeout", "message": "the request did not arrive in time", '
    b'"details": null}}'
)


def _ours(transport: asyncio.Transport) -> bool:
    """Whether the process at the other end runs as us. The kernel says who owns each end
    of a loopback connection (`connection_uid`), so another user's connection is closed
    before a byte is read: they cannot try a token, nor hold the connections the owner's
    browser needs. Where the kernel does not say, the token and session still guard."""
    ours, peer = transport.get_extra_info("sockname"), transport.get_extra_info("peername")
    if not ours or not peer:
        return True
    uid = connection_uid(ours, peer)
    return uid is None or uid == os.getuid()


class BoundedProtocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with the bounds the inspector needs: a connection of
    another user, or past `MAX_CONNECTIONS`, is closed at once; headers that do not end
    within `HEADER_TIMEOUT`, or a body that does not within `BODY_TIMEOUT`, get a 408 and the
    connection is closed."""

    refused = False
    _timer: asyncio.TimerHandle | None = None
    _phase: object = None  # the client's h11 state the timer was set for

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if len(self.connections) >= MAX_CONNECTIONS or not _ours(transport):
            self.refused = True
            transport.abort()  # its descriptor goes back now, not after a timeout
            return
        super().connection_made(transport)
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_timer()
        if not self.refused:
            super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.refused:
            return
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()

    def _watch(self) -> None:
        """A deadline for the phase the client is in: headers (IDLE) or body (SEND_BODY); none
        while the answer is being made. Set once per phase: trickling bytes do not extend it."""
        phase = self.conn.their_state
        if phase is self._phase:
            return
        self._stop_timer()
        self._phase = phase
        limit = {h11.IDLE: HEADER_TIMEOUT, h11.SEND_BODY: BODY_TIMEOUT}.get(phase)
        if limit is not None and not self.transport.is_closing():
            self._timer = self.loop.call_later(limit, self._too_slow, phase)

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _too_slow(self, phase: object) -> None:
        self._timer = None
        if self.conn.their_state is not phase or self.transport.is_closing():
            return
        partial = bool(self.conn.trailing_data[0])  # else an idle keep-alive: close quietly
        unanswered = self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE)
        if unanswered and (phase is h11.SEND_BODY or partial):
            self.transport.write(
                b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
                b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(_TOO_SLOW), _TOO_SLOW)
            )
        self.transport.close()


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
        # Listening from here on: a connection made as soon as the address is known waits in
        # the queue instead of being refused. A small queue: asyncio accepts a queue's worth
        # at a time, each holding a descriptor until its protocol closes it.
        self.sock.listen(MAX_CONNECTIONS)
        self.app = Inspector(api, self.sock.getsockname()[1])
        config = uvicorn.Config(
            self.app,
            http=BoundedProtocol,
            lifespan="off",
            ws="none",  # nothing here speaks WebSocket: no upgrade is taken, no library loaded
            log_config=None,
            access_log=False,
            timeout_graceful_shutdown=2,
            timeout_keep_alive=5,
            backlog=MAX_CONNECTIONS,
            server_header=False,
        )
        self.server = _Server(config)
        self.task: asyncio.Task[None] | None = None

    async def start(self, timeout: float = 10.0) -> None:
        """Serve, and return once the server accepts connections (at once if it does)."""
        if self.task is None:
            self.task = asyncio.get_running_loop().create_task(
                self.server.serve(sockets=[self.sock])
            )
            log.info("inspector listening on http://127.0.0.1:%d/", self.app.port)
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if self.task.done():
                self.task.result()  # its failure, raised here
                raise RuntimeError("the inspector stopped before it started")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the inspector did not start within {timeout:.0f} s")
            await asyncio.sleep(0.005)

    async def close(self) -> None:
        self.server.should_exit = True
        if self.task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
        self.sock.close()
