"""`LightClient`: a few calls to the daemon over its Unix socket with the standard library only.

For a process whose whole life is one or two requests and whose start-up is the cost (the
Claude Code hook runs once per prompt): importing httpx alone takes longer than the request.
It checks what `chrysalis.client.Client` checks before a byte is sent (the socket and its
directory are the caller's, the process serving it runs as the caller: `local_socket`), sends
one HTTP/1.1 request per connection (``Connection: close``) and turns an error answer into the
`chrysalis.core.errors` class it names. Agents use `chrysalis.Client`; this is no substitute.
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

from chrysalis.client.local_socket import check_peer, check_socket_owner, default_socket_path
from chrysalis.core.errors import (
    ChrysalisError,
    DaemonNotRunning,
    InternalError,
    NotReady,
    error_class,
)

__all__ = ["LightClient", "quote_segment"]

MAX_ANSWER_BYTES = 64 * 1024 * 1024  # no answer the light client asks for comes near this


class LightClient:
    """``LightClient(socket=None, memory=None, connect_timeout=0.5, timeout=5.0)``: requests
    to the daemon at ``socket`` (`default_socket_path` by default), in named memory
    ``memory`` (default otherwise).

    ``connect_timeout`` bounds the connect; ``timeout`` the whole request, connect included.
    Nothing listening (no socket, refused, no accept in time) raises `DaemonNotRunning`; no
    answer within ``timeout`` raises `NotReady`; another user's socket raises `Forbidden`."""

    def __init__(
        self,
        socket: str | Path | None = None,
        *,
        memory: str | None = None,
        connect_timeout: float = 0.5,
        timeout: float = 5.0,
    ) -> None:
        self.socket = Path(socket).expanduser() if socket is not None else default_socket_path()
        self.memory = memory
        self.connect_timeout = connect_timeout
        self.timeout = timeout

    def path(self, path: str) -> str:
        """``path`` in the client's memory, as `chrysalis.client.Client` sends it."""
        if self.memory in (None, "default") or not path.startswith("/v1/"):
            return path
        return f"/v1/m/{quote_segment(self.memory)}/{path[len('/v1/') :]}"

    def get(self, path: str) -> Any:
        """``GET path``: the decoded JSON answer."""
        return self.request("GET", path)

    def post(self, path: str, body: Any) -> Any:
        """``POST path`` with ``body`` as JSON: the decoded JSON answer."""
        return self.request("POST", path, json.dumps(body, ensure_ascii=False).encode())

    def request(
        self, method: str, path: str, payload: bytes | None = None, content_type: str = ""
    ) -> Any:
        """One request (``path`` under /v1 is put in the client's memory); the decoded JSON
        answer, None for an empty one; an error answer raises the class its code names."""
        status, body = self._exchange(method, self.path(path), payload, content_type)
        if status >= 400:
            raise _error(status, body)
        if not body:
            return None
        try:
            return json.loads(body)
        except ValueError:
            raise InternalError(f"the daemon answered {status} with no JSON") from None

    def _exchange(
        self, method: str, path: str, payload: bytes | None, content_type: str
    ) -> tuple[int, bytes]:
        deadline = time.monotonic() + self.timeout
        check_socket_owner(self.socket)
        if not self.socket.exists():
            raise DaemonNotRunning(f"no daemon at {self.socket}; start it with `chrysalis daemon`")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(min(self.connect_timeout, self.timeout))
            try:
                sock.connect(str(self.socket))
            except TimeoutError:
                raise DaemonNotRunning(
                    f"the daemon at {self.socket} did not accept within {self.connect_timeout:g} s"
                ) from None
            except OSError as exc:  # refused: a stale socket file, nothing behind it
                raise DaemonNotRunning(f"no daemon at {self.socket}: {exc.strerror}") from None
            check_peer(sock, self.socket)
            head = [f"{method} {path} HTTP/1.1", "Host: chrysalis", "Connection: close"]
            if payload is not None:
                head.append(f"Content-Type: {content_type or 'application/json'}")
                head.append(f"Content-Length: {len(payload)}")
            sock.settimeout(max(0.001, deadline - time.monotonic()))
            sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + (payload or b""))
            raw = _read_all(sock, deadline, self.socket)
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise DaemonNotRunning(
                f"the connection to the daemon at {self.socket} broke: {exc}"
            ) from None
        except TimeoutError:
            raise NotReady(
                f"the daemon at {self.socket} did not answer within {self.timeout:g} s"
            ) from None
        finally:
            sock.close()
        return _parse(raw)


def _read_all(sock: socket.socket, deadline: float, where: Path) -> bytes:
    parts: list[bytes] = []
    size = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        sock.settimeout(left)
        chunk = sock.recv(1 << 16)
        if not chunk:
            return b"".join(parts)
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            raise InternalError(f"the answer from {where} is over {MAX_ANSWER_BYTES} bytes")
        parts.append(chunk)


def _parse(raw: bytes) -> tuple[int, bytes]:
    """(status, body) of an HTTP/1.1 answer read to its end."""
    head, sep, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    try:
        status = int(lines[0].split(" ", 2)[1])
    except (IndexError, ValueError):
        raise InternalError(f"not an HTTP answer: {raw[:80]!r}") from None
    if not sep:
        raise InternalError("the daemon closed the connection mid-answer")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return status, _dechunk(body)
    if (length := headers.get("content-length")) is not None and length.isdigit():
        if len(body) < int(length):
            raise InternalError("the daemon closed the connection mid-answer")
        body = body[: int(length)]
    return status, body


def _dechunk(body: bytes) -> bytes:
    out = []
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out.append(rest[:size])
        body = rest[size + 2 :]
    return b"".join(out)


def _error(status: int, body: bytes) -> ChrysalisError:
    try:
        err = json.loads(body)["error"]
        return error_class(str(err["code"]))(str(err["message"]), details=err.get("details"))
    except (ValueError, KeyError, TypeError):
        cls = InternalError if status >= 500 else ChrysalisError
        return cls(f"daemon answered {status}: {body[:200].decode('utf-8', 'replace')}")


_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def quote_segment(text: str) -> str:
    """``text`` as one URL path segment: every byte but the unreserved ones percent-encoded,
    ``/`` too (what ``urllib.parse.quote(text, safe="")`` does; urllib.parse costs the hook's
    start-up its import of ipaddress)."""
    return "".join(
        chr(b) if b in _UNRESERVED else f"%{b:02X}" for b in text.encode("utf-8", "surrogatepass")
    )
