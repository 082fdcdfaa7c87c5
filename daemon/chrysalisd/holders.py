"""Which process holds a socket or a data dir's lock, in the kernel's words: what `stop` may
signal. A pid that some answer names proves nothing (any process can write any number); these
read who the kernel says it is.

- `socket_peer`: the process listening on a Unix socket (SO_PEERCRED on Linux; LOCAL_PEERPID
  and LOCAL_PEERCRED on macOS), read on a fresh connection.
- `lock_holder`: the process holding a ``flock`` on a file (``/proc/locks``, Linux only),
  which must also have the file open.
- `listening_paths`, `is_daemon`, `owner`: what ``/proc`` says of a process (Linux only).

Each returns None, or raises `Unverified` with the reason in plain words, where it cannot tell.
"""

from __future__ import annotations

import os
import socket
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Peer",
    "Unverified",
    "is_daemon",
    "listening_paths",
    "lock_holder",
    "owner",
    "socket_peer",
]

PROC = Path("/proc")
_SOL_LOCAL, _LOCAL_PEERCRED, _LOCAL_PEERPID = 0, 0x001, 0x002  # <sys/un.h> on macOS
_ACCEPTING = 0x00010000  # __SO_ACCEPTCON in /proc/net/unix's Flags: a listening socket


class Unverified(Exception):
    """The kernel could not be asked (the reason is the message)."""


@dataclass(frozen=True)
class Peer:
    pid: int
    uid: int


def socket_peer(path: Path, timeout: float = 5.0) -> Peer:
    """The process that listens on the Unix socket ``path`` (it called listen()), as the kernel
    records it. Raises `Unverified` when nothing listens there or the platform does not say."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        try:
            sock.connect(str(path))
        except FileNotFoundError:
            raise Unverified("the socket file is gone") from None
        except ConnectionRefusedError:
            raise Unverified("nothing listens there any more") from None
        except OSError as exc:
            raise Unverified(f"cannot connect: {exc.strerror or exc}") from None
        try:
            if hasattr(socket, "SO_PEERCRED"):
                raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
                pid, uid, _ = struct.unpack("3i", raw)  # struct ucred: pid, uid, gid
                return Peer(pid, uid)
            if sys.platform == "darwin":
                pid = struct.unpack("=i", sock.getsockopt(_SOL_LOCAL, _LOCAL_PEERPID, 4))[0]
                cred = sock.getsockopt(_SOL_LOCAL, _LOCAL_PEERCRED, 128)
                return Peer(pid, struct.unpack_from("=II", cred)[1])  # xucred: version, uid
        except OSError as exc:
            raise Unverified(f"the kernel would not say: {exc.strerror or exc}") from None
    raise Unverified(f"this platform ({sys.platform}) does not say who holds a socket")


def lock_holder(lock: Path) -> int | None:
    """The pid holding an exclusive ``flock`` on ``lock`` (as ``/proc/locks`` lists it, the
    process also having the file open), or None when nobody holds it. Raises `Unverified`
    where there is no ``/proc/locks`` or the holder is ambiguous."""
    try:
        st = lock.stat()
    except FileNotFoundError:
        return None
    try:
        table = (PROC / "locks").read_text()
    except OSError:
        raise Unverified("this system has no /proc/locks to say who holds a lock") from None
    # "1: FLOCK  ADVISORY  WRITE 4242 00:2f:1234 0 EOF": the device is the file system's,
    # which an overlay file system reports differently from stat(); the inode, then the
    # holder's open file, tell.
    pids = set()
    for line in table.splitlines():
        fields = line.split()
        if "->" in fields or len(fields) < 6 or fields[1] != "FLOCK" or fields[3] != "WRITE":
            continue  # "->" marks a waiter, not a holder
        if fields[5].rsplit(":", 1)[-1] == str(st.st_ino):
            pids.add(int(fields[4]))
    holders = [pid for pid in pids if _has_open(pid, st)]
    if len(holders) > 1:
        raise Unverified(f"processes {sorted(holders)} all seem to hold {lock}")
    return holders[0] if holders else None


def _has_open(pid: int, st: os.stat_result) -> bool:
    """Whether process ``pid`` has the file ``st`` describes open."""
    try:
        fds = list((PROC / str(pid) / "fd").iterdir())
    except OSError:
        return False
    for fd in fds:
        try:
            other = fd.stat()
        except OSError:
            continue
        if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            return True
    return False


def listening_paths(pid: int) -> list[str]:
    """The paths of the Unix sockets process ``pid`` listens on (the name each was bound to,
    which the kernel keeps after the file is removed). Raises `Unverified` without /proc."""
    try:
        table = (PROC / "net" / "unix").read_text().splitlines()[1:]
        fds = list((PROC / str(pid) / "fd").iterdir())
    except OSError as exc:
        raise Unverified(f"cannot read /proc for pid {pid}: {exc.strerror or exc}") from None
    # "Num RefCount Protocol Flags Type St Inode Path"
    listening = {}
    for line in table:
        fields = line.split(maxsplit=7)
        if len(fields) == 8 and int(fields[3], 16) & _ACCEPTING:
            listening[fields[6]] = fields[7]
    paths = []
    for fd in fds:
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:[") and target[8:-1] in listening:
            paths.append(listening[target[8:-1]])
    return paths


def is_daemon(pid: int) -> bool:
    """Whether process ``pid`` runs ``chrysalis daemon`` (the console script or ``python -m
    chrysalisd``), by its command line."""
    try:
        argv = (PROC / str(pid) / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    words = [os.path.basename(a.decode(errors="replace")) for a in argv]
    return "daemon" in words and any(w in ("chrysalis", "chrysalisd") for w in words)


def owner(pid: int) -> int | None:
    """The uid process ``pid`` runs as, or None when it is gone (or there is no /proc)."""
    try:
        return (PROC / str(pid)).stat().st_uid
    except OSError:
        return None
