"""The socket under both clients: where it is, who it belongs to, a Unix-socket connect that
checks that, and how an answer becomes a value or the `chrysalis.core.errors` class it names.

Every new connection (httpx pools them, so this is the connection factory, sync and async)
first checks that the socket and its directory are the caller's (`check_socket_owner`) and,
once connected, that the process serving it runs as the caller (`peer_uid`), before a byte is
sent: on a shared host another user could otherwise plant a socket at the default path and
read what an agent remembers. Either check failing raises `Forbidden`.

The checks themselves live in `chrysalis.local_socket` (standard library only, shared with
`chrysalis.light_client`). Import `default_socket_path` from `chrysalis.client`; the rest is
the clients' machinery.
"""

from __future__ import annotations

import select
import socket
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import httpcore
import httpx

from chrysalis.client.local_socket import (
    check_peer,
    check_socket_owner,
    default_socket_path,
    peer_uid,
    who,
)
from chrysalis.client.routes import Call
from chrysalis.core.errors import (
    ChrysalisError,
    DaemonNotRunning,
    Forbidden,
    InternalError,
    NotReady,
    error_class,
)

__all__ = [
    "ClientBase",
    "async_transport",
    "check_peer",
    "check_socket_owner",
    "default_socket_path",
    "error_from",
    "peer_uid",
    "sync_transport",
    "who",
]

T = TypeVar("T")


# ---- answers -------------------------------------------------------------------------------


def error_from(r: httpx.Response) -> ChrysalisError:
    """The `ChrysalisError` an error answer names (its ``code``), with its message."""
    try:
        body = r.json()["error"]
        cls = error_class(str(body["code"]))
        return cls(str(body["message"]), details=body.get("details"))
    except (ValueError, KeyError, TypeError):
        cls = InternalError if r.status_code >= 500 else ChrysalisError
        return cls(f"daemon answered {r.status_code}: {r.text[:200]}")


# ---- connections ---------------------------------------------------------------------------


class _UnixBackend(httpcore.SyncBackend):
    """httpcore's blocking Unix-socket connect with the owner checks, closing the socket when
    the connect or a check fails (httpcore's own leaves it to the garbage collector)."""

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.NetworkStream:
        check_socket_owner(Path(path))
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(timeout)
            sock.connect(path)
            check_peer(sock, path)
        except TimeoutError as exc:
            sock.close()
            raise httpcore.ConnectTimeout(str(exc)) from exc
        except Forbidden:
            sock.close()
            raise
        except OSError as exc:
            sock.close()
            raise httpcore.ConnectError(str(exc)) from exc
        return _UnixStream(sock)


class _AsyncUnixBackend(httpcore.AnyIOBackend):
    """anyio's Unix-socket connect with the same owner checks as `_UnixBackend`."""

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.AsyncNetworkStream:
        check_socket_owner(Path(path))
        stream = await super().connect_unix_socket(path, timeout, socket_options)
        try:
            check_peer(stream.get_extra_info("socket"), path)
        except BaseException:
            await stream.aclose()
            raise
        return stream


class _UnixStream(httpcore.NetworkStream):
    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            self._sock.settimeout(timeout)
            return self._sock.recv(max_bytes)
        except TimeoutError as exc:
            raise httpcore.ReadTimeout(str(exc)) from exc
        except OSError as exc:
            raise httpcore.ReadError(str(exc)) from exc

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        try:
            self._sock.settimeout(timeout)
            self._sock.sendall(buffer)
        except TimeoutError as exc:
            raise httpcore.WriteTimeout(str(exc)) from exc
        except OSError as exc:
            raise httpcore.WriteError(str(exc)) from exc

    def close(self) -> None:
        self._sock.close()

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            # httpcore asks before reusing an idle keep-alive connection: readable means the
            # daemon closed it (an idle timeout, a restart), so a fresh one is opened
            return _readable(self._sock)
        return self._sock if info == "socket" else None


def _readable(sock: socket.socket) -> bool:
    if sock.fileno() < 0:
        return True
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0))


# httpx builds a TLS context for every transport, loading the system's CA bundle (~0.1 s of
# CPU, in every client and every CLI call); the pool is replaced below by one that only
# speaks plain HTTP over the Unix socket, so no TLS context is ever used: none is loaded.
_NO_TLS = False


def sync_transport(path: str) -> httpx.HTTPTransport:
    transport = httpx.HTTPTransport(uds=path, verify=_NO_TLS)
    transport._pool = httpcore.ConnectionPool(uds=path, network_backend=_UnixBackend())
    return transport


def async_transport(path: str) -> httpx.AsyncHTTPTransport:
    transport = httpx.AsyncHTTPTransport(uds=path, verify=_NO_TLS)
    transport._pool = httpcore.AsyncConnectionPool(
        uds=path,
        network_backend=_AsyncUnixBackend(),
        max_connections=100,  # httpx's default limits, which its own pool would have had
        max_keepalive_connections=20,
        keepalive_expiry=5.0,
    )
    return transport


DEFAULT_TIMEOUT = 30.0  # seconds a client waits for an answer


class ClientBase:
    """What both clients share: where the socket is, and how answers become values or errors."""

    def __init__(self, socket: str | Path | None, timeout: float, memory: str | None) -> None:
        self.socket = Path(socket).expanduser() if socket is not None else default_socket_path()
        self.timeout = timeout
        self.memory = memory

    def _path(self, path: str) -> str:
        """``path`` in the client's memory: ``/v1/x`` becomes ``/v1/m/<memory>/x`` (the
        routes that list and manage memories, and those outside /v1, stay as they are)."""
        if self.memory in (None, "default") or not path.startswith("/v1/"):
            return path
        if path == "/v1/memories" or path.startswith("/v1/memories/"):
            return path
        return f"/v1/m/{quote(self.memory, safe='')}/{path[len('/v1/') :]}"

    def _not_running(self, exc: Exception) -> DaemonNotRunning:
        return DaemonNotRunning(
            f"no daemon at {self.socket}; start it with `chrysalis daemon`"
            + (f" (or set CHRYSALIS_SOCKET): {exc}" if str(exc) else "")
        )

    def _broke(self, exc: Exception) -> DaemonNotRunning:
        return DaemonNotRunning(
            f"the connection to the daemon at {self.socket} broke mid-request (it stopped or "
            f"restarted; the request may or may not have been applied): {exc}"
        )

    def _check_socket(self) -> None:
        check_socket_owner(self.socket)  # again on each connect; here it fails fast
        if not self.socket.exists():  # the usual "not running": say so without a connect
            raise self._not_running(FileNotFoundError())

    def _timed_out(self) -> NotReady:
        return NotReady(f"the daemon at {self.socket} did not answer within {self.timeout:g} s")

    @staticmethod
    def _read(call: Call[T], r: httpx.Response) -> T:
        if r.status_code >= 400:
            raise error_from(r)
        return call.parse(r)
