"""Where the daemon's socket is and whose it is: the default path, the owner checks on the
socket and its directory, and the uid of the process serving a connected socket.

Standard library only, so the lightest client (`chrysalis.client.light`, the Claude Code hook)
checks exactly what `chrysalis.client.transport` checks without importing httpx.
"""

from __future__ import annotations

import os
import pwd
import socket
import stat
import struct
import sys
from pathlib import Path

from chrysalis.core.errors import Forbidden

__all__ = ["check_peer", "check_socket_owner", "default_socket_path", "peer_uid", "who"]


def default_socket_path() -> Path:
    """``$CHRYSALIS_SOCKET``, else ``$XDG_RUNTIME_DIR/chrysalis/chrysalis.sock``, else
    ``/tmp/chrysalis-$UID/chrysalis.sock``."""
    if env := os.environ.get("CHRYSALIS_SOCKET"):
        return Path(env).expanduser()
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) / "chrysalis" if runtime else Path(f"/tmp/chrysalis-{os.getuid()}")
    return base / "chrysalis.sock"


# ---- whose socket is it -------------------------------------------------------------------

# root may own the directory (``/tmp`` itself, a ``--socket /run/x.sock``): root can do
# anything anyway. Another user may not.
_TRUSTED_DIR_OWNERS = frozenset({0})
_SOL_LOCAL, _LOCAL_PEERCRED = 0, 0x001  # <sys/un.h> on macOS and the BSDs
_XUCRED_SIZE = 128  # struct xucred is 76 bytes on macOS, a little more on FreeBSD


def who(uid: int) -> str:
    """``user mallory (uid 1001)``, or ``uid 1001`` when the name is unknown."""
    try:
        return f"user {pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def check_socket_owner(path: Path, refusing: str = "refusing to send") -> None:
    """Raise `Forbidden` unless ``path``, when it exists, is not a symlink and is the caller's,
    and its directory is not a symlink and is the caller's (or root's). Missing paths pass:
    connecting to them fails with "not running". lstat only: symlinks higher up the path
    (macOS's ``/tmp``) are followed, the last two components are not."""
    me = os.getuid()
    try:  # the socket first: it is what an impostor plants, so the message names it
        st = path.lstat()
    except (FileNotFoundError, NotADirectoryError):
        pass
    else:
        if stat.S_ISLNK(st.st_mode):
            raise Forbidden(f"the socket {path} is a symlink owned by {who(st.st_uid)}: {refusing}")
        if st.st_uid != me:
            raise Forbidden(f"the socket {path} belongs to {who(st.st_uid)}, not you: {refusing}")
    directory = path.parent
    try:
        st = directory.lstat()
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise Forbidden(
            f"the socket directory {directory} is a symlink owned by {who(st.st_uid)}: {refusing}"
        )
    if st.st_uid != me and st.st_uid not in _TRUSTED_DIR_OWNERS:
        raise Forbidden(
            f"the socket directory {directory} belongs to {who(st.st_uid)}, not you: {refusing}"
        )


def peer_uid(sock: socket.socket | None) -> int | None:
    """The uid of the process at the other end of a connected Unix socket: SO_PEERCRED on
    Linux, LOCAL_PEERCRED (getpeereid's source) on macOS and the BSDs; None where the
    platform offers neither or the call fails."""
    if sock is None:
        return None
    try:
        if hasattr(socket, "SO_PEERCRED"):
            raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            return int(struct.unpack("3i", raw)[1])  # struct ucred: pid, uid, gid
        if sys.platform == "darwin" or "bsd" in sys.platform:
            raw = sock.getsockopt(_SOL_LOCAL, _LOCAL_PEERCRED, _XUCRED_SIZE)
            return int(struct.unpack_from("=II", raw)[1])  # struct xucred: version, uid, ...
    except OSError:
        return None
    return None


def check_peer(sock: socket.socket | None, path: str | Path) -> None:
    """Raise `Forbidden` unless the process serving the connected ``sock`` runs as the caller
    (or when the platform cannot tell: a socket we cannot vouch for gets nothing)."""
    uid = peer_uid(sock)
    if uid is None:
        raise Forbidden(
            f"cannot tell which user serves {path}: this platform offers neither SO_PEERCRED "
            "nor LOCAL_PEERCRED; refusing to send"
        )
    if uid != os.getuid():
        raise Forbidden(f"the daemon at {path} runs as {who(uid)}, not you: refusing to send")
