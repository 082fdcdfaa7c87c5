"""The socket under both clients: where it is, a blocking Unix-socket connect that cleans up
after itself, and how an answer becomes a value or the `chrysalis.errors` class it names.

Import `default_socket_path` from `chrysalis.client`; the rest is the clients' machinery.
"""

from __future__ import annotations

import os
import select
import socket
from pathlib import Path
from typing import Any, TypeVar

import httpcore
import httpx

from .errors import ChrysalisError, DaemonNotRunning, InternalError, NotReady, error_class
from .routes import Call

__all__ = ["ClientBase", "default_socket_path", "error_from", "sync_transport"]

T = TypeVar("T")


def default_socket_path() -> Path:
    """``$CHRYSALIS_SOCKET``, else ``$XDG_RUNTIME_DIR/chrysalis/chrysalis.sock``, else
    ``/tmp/chrysalis-$UID/chrysalis.sock``."""
    if env := os.environ.get("CHRYSALIS_SOCKET"):
        return Path(env).expanduser()
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) / "chrysalis" if runtime else Path(f"/tmp/chrysalis-{os.getuid()}")
    return base / "chrysalis.sock"


def error_from(r: httpx.Response) -> ChrysalisError:
    """The `ChrysalisError` an error answer names (its ``code``), with its message."""
    try:
        body = r.json()["error"]
        cls = error_class(str(body["code"]))
        return cls(str(body["message"]), details=body.get("details"))
    except (ValueError, KeyError, TypeError):
        cls = InternalError if r.status_code >= 500 else ChrysalisError
        return cls(f"daemon answered {r.status_code}: {r.text[:200]}")


class _UnixBackend(httpcore.SyncBackend):
    """httpcore's blocking Unix-socket connect, closing the socket when the connect fails
    (httpcore's own leaves it to the garbage collector, with a ResourceWarning)."""

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.NetworkStream:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(timeout)
            sock.connect(path)
        except TimeoutError as exc:
            sock.close()
            raise httpcore.ConnectTimeout(str(exc)) from exc
        except OSError as exc:
            sock.close()
            raise httpcore.ConnectError(str(exc)) from exc
        return _UnixStream(sock)


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


def sync_transport(path: str) -> httpx.HTTPTransport:
    transport = httpx.HTTPTransport(uds=path)
    transport._pool = httpcore.ConnectionPool(uds=path, network_backend=_UnixBackend())
    return transport


class ClientBase:
    """What both clients share: where the socket is, and how answers become values or errors."""

    def __init__(self, socket: str | Path | None, timeout: float) -> None:
        self.socket = Path(socket).expanduser() if socket is not None else default_socket_path()
        self.timeout = timeout

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
        if not self.socket.exists():  # the usual "not running": say so without a connect
            raise self._not_running(FileNotFoundError())

    def _timed_out(self) -> NotReady:
        return NotReady(f"the daemon at {self.socket} did not answer within {self.timeout:g} s")

    @staticmethod
    def _read(call: Call[T], r: httpx.Response) -> T:
        if r.status_code >= 400:
            raise error_from(r)
        return call.parse(r)
