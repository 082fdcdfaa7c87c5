"""Who serves a port on this machine's loopback, before we send it a memory's text.

Ollama (embeddings, extraction) and a self-hosted Zep usually listen on 127.0.0.1. Any local
user may bind a port there, so when the real service is not running another user can take its
port and receive every bead we would have sent it. Before a request, `check_loopback_service`
asks the kernel who owns the listening socket (Linux: ``/proc/net/tcp`` and ``tcp6``, whose
``uid`` column is the listener's owner) and refuses unless it is us, root (system services,
``docker-proxy``) or a service account named for the job (``ollama``, which Ollama's installer
creates). Where the kernel cannot tell (no ``/proc``: macOS, the BSDs), it does not refuse:
docs/security.md says so.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import pwd
import socket
from pathlib import Path
from urllib.parse import urlsplit

from chrysalis.core.errors import ChrysalisError, Forbidden

__all__ = ["check_loopback_service", "connection_uid", "listener_uids", "loopback_address"]

TRUSTED_SERVICE_USERS = ("ollama",)
_LISTEN = "0A"  # TCP_LISTEN in /proc/net/tcp's st column
_PROC_NET = Path("/proc/net")


def loopback_address(url: str) -> tuple[str, int] | None:
    """``(host, port)`` of ``url`` when it names this machine's loopback, else None (a remote
    host is not a local user's to take). Every spelling a connection would take to loopback
    counts, given back in its plain form: ``localhost`` (also ``localhost.`` and
    ``*.localhost``), ``127.0.0.0/8`` and ``::1``, their other forms (``127.1``,
    ``2130706433``, ``::ffff:127.0.0.1``), and the unspecified addresses, which a connection
    takes to loopback: ``0.0.0.0`` is ``127.0.0.1`` and ``::`` is ``::1`` (``OLLAMA_HOST=
    0.0.0.0`` is how Ollama's own docs expose the server, and its clients read it too)."""
    parts = urlsplit(url if "://" in url else f"http://{url}")
    host = (parts.hostname or "").rstrip(".")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None
    if host == "localhost" or host.endswith(".localhost"):
        return "localhost", port
    ip = _ip(host)
    if ip is None:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_unspecified:
        ip = ipaddress.ip_address("127.0.0.1" if ip.version == 4 else "::1")
    return (str(ip), port) if ip.is_loopback else None


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``host`` as an address, in any form the resolver takes for one (``inet_aton``'s short,
    decimal, octal and hex forms included), or None for a name."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if not host or ":" in host or not host[0].isdigit():
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


def _addresses(host: str) -> set[str]:
    """The hex forms ``/proc/net/tcp[6]`` gives a listener that accepts ``host``: the host
    itself and the wildcard (a socket bound to 0.0.0.0 or :: also answers on loopback)."""
    names = {"00000000", "0" * 32}
    hosts = ["127.0.0.1", "::1"] if host == "localhost" else [host]
    for h in hosts:
        packed = socket.inet_pton(socket.AF_INET6 if ":" in h else socket.AF_INET, h)
        if len(packed) == 4:
            names.add(packed[::-1].hex().upper())  # little-endian on the x86 and arm kernels
            mapped = b"\0" * 10 + b"\xff\xff" + packed  # ::ffff:a.b.c.d, per 32-bit word
        else:
            mapped = packed
        names.add("".join(mapped[i : i + 4][::-1].hex().upper() for i in range(0, 16, 4)))
    return names


def listener_uids(host: str, port: int) -> set[int] | None:
    """The uids owning a TCP socket that listens on ``host:port`` (empty: nobody listens);
    None when this platform does not say (no ``/proc/net/tcp``)."""
    tables = [_PROC_NET / "tcp", _PROC_NET / "tcp6"]
    if not any(t.exists() for t in tables):
        return None
    wanted = _addresses(host)
    uids: set[int] = set()
    for table in tables:
        try:
            lines = table.read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 8 or fields[3] != _LISTEN:
                continue
            address, _, hex_port = fields[1].partition(":")
            if int(hex_port, 16) == port and address in wanted:
                uids.add(int(fields[7]))
    return uids


def _hex(host: str, port: int) -> str:
    """``host:port`` as ``/proc/net/tcp[6]`` prints an address: 32-bit words in host order."""
    packed = socket.inet_pton(socket.AF_INET6 if ":" in host else socket.AF_INET, host)
    words = "".join(packed[i : i + 4][::-1].hex().upper() for i in range(0, len(packed), 4))
    return f"{words}:{port:04X}"


def connection_uid(ours: tuple[str, int], peer: tuple[str, int]) -> int | None:
    """The uid owning the far end of a TCP connection on this machine: the socket whose local
    address is ``peer`` and remote address is ``ours``. None when the kernel does not say (no
    ``/proc/net/tcp``, or that end is already gone). One substring search per table, so it
    stays cheap when a flood fills the table."""
    needle = f"{_hex(*peer[:2])} {_hex(*ours[:2])}"
    for table in (_PROC_NET / ("tcp6" if ":" in peer[0] else "tcp"),):
        try:
            text = table.read_text()
        except OSError:
            return None
        at = text.find(needle)
        if at < 0:
            return None
        fields = text[text.rfind("\n", 0, at) + 1 :].split(maxsplit=9)
        return int(fields[7]) if len(fields) > 7 else None
    return None


def _trusted() -> set[int]:
    uids = {os.getuid(), 0}
    for name in TRUSTED_SERVICE_USERS:
        with contextlib.suppress(KeyError):
            uids.add(pwd.getpwnam(name).pw_uid)
    return uids


def check_loopback_service(url: str, what: str, error: type[ChrysalisError] = Forbidden) -> None:
    """Raise ``error`` (`Forbidden` unless the caller names its own kind) when ``url`` is on
    loopback and the socket listening there belongs to another user (not us, root or a trusted
    service account): sending would hand our text to them. Nothing listening, a remote host,
    or a platform that cannot tell: no refusal (the request itself then fails or goes where it
    was configured to)."""
    where = loopback_address(url)
    if where is None:
        return
    uids = listener_uids(*where)
    if not uids:
        return
    strangers = uids - _trusted()
    if strangers:
        owner = ", ".join(sorted(_name(u) for u in strangers))
        raise error(
            f"{what} at {where[0]}:{where[1]} is served by another user ({owner}), not you: "
            f"refusing to send it anything (start {what} as yourself, or set its address)"
        )


def _name(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"
