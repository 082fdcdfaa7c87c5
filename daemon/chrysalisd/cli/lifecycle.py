"""The daemon in the background: ``chrysalis daemon --detach`` starts it, `stop` stops it.

`stop` sends SIGTERM, the daemon's one way to stop (it finishes in-flight requests, saves
the indexes, syncs LMDB and removes its socket, as under systemd or Ctrl-C), rather than a
new socket route: no new API, and the same path whoever started it. The pid comes from the
daemon's status and is checked against the kernel's word on who holds the socket
(SO_PEERCRED): the client already refuses a socket served by another user, so the signal
goes to our own daemon and to no recycled pid.
"""

from __future__ import annotations

import os
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from chrysalis.client import Client, default_socket_path
from chrysalis.errors import DaemonNotRunning

if TYPE_CHECKING:
    from ..config import Settings

EXIT_FAILED = 1
START_WAIT = 30.0  # seconds a detached start may take to answer
LOG_NAME = "daemon.log"


def detach(ctx: click.Context, settings: Settings, args: list[str]) -> None:
    """Start ``chrysalis daemon ARGS`` in a new session, its output appended to
    ``<data_dir>/daemon.log`` (0600), and return once its socket answers (exit 0) or it has
    failed (its ``error:`` line, its exit status). A data dir this made is removed again
    when the start fails."""
    path = settings.socket.expanduser().absolute()
    running = _answering(path)
    if running is not None:
        click.echo(
            f"error: a daemon is already running on {path} (pid {running['pid']}); "
            f"stop it with `chrysalis --socket {path} stop`",
            err=True,
        )
        ctx.exit(EXIT_FAILED)
    data_dir = settings.data_dir.expanduser().absolute()
    made = None  # the outermost folder this start creates
    for folder in (data_dir, *data_dir.parents):
        if folder.exists():
            break
        made = folder
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    log = data_dir / LOG_NAME
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    offset = os.fstat(fd).st_size
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "chrysalisd", "--socket", str(path), "daemon", *args],
            stdin=subprocess.DEVNULL, stdout=fd, stderr=fd, start_new_session=True,
        )  # fmt: skip
    finally:
        os.close(fd)
    deadline = time.monotonic() + START_WAIT
    while time.monotonic() < deadline:
        if child.poll() is not None:
            _failed(ctx, log, offset, child.returncode, made)
        if _answering(path) is not None:
            click.echo(f"daemon running, pid {child.pid}, socket {path}, log {log}")
            return
        time.sleep(0.1)
    click.echo(
        f"error: the daemon (pid {child.pid}) did not answer on {path} within "
        f"{START_WAIT:.0f} s; it may still be starting: see {log}",
        err=True,
    )
    ctx.exit(EXIT_FAILED)


def _failed(ctx: click.Context, log: Path, offset: int, status: int, made: Path | None) -> None:
    with open(log, "rb") as f:
        f.seek(offset)
        said = f.read().decode(errors="replace").splitlines()
    errors = [line for line in said if line.startswith(("error: ", "hint: "))] or said[-5:]
    for line in errors or [f"error: the daemon exited with status {status}; see {log}"]:
        click.echo(line, err=True)
    if made is not None:  # it was made for this start: leave nothing behind
        import shutil

        shutil.rmtree(made, ignore_errors=True)
    ctx.exit(status or EXIT_FAILED)


def _answering(path: Path) -> dict[str, Any] | None:
    """The status of the daemon answering on ``path``, or None."""
    try:
        with Client(path, timeout=5.0) as client:
            return client.status()
    except DaemonNotRunning:
        return None


@click.command()
@click.option(
    "--timeout", type=float, default=60.0, show_default=True,
    help="Seconds to wait for the daemon to finish and remove its socket.",
)  # fmt: skip
@click.pass_context
def stop(ctx: click.Context, timeout: float) -> None:
    """Stop the daemon on the socket (SIGTERM: in-flight requests finish, the indexes are
    saved, LMDB is synced), wait until its socket is gone, print its pid. Exits 1 when no
    daemon answers there.

    \b
    Example:
      chrysalis stop
      chrysalis --socket /tmp/c.sock stop
    """
    path = Path(ctx.ensure_object(dict).get("socket") or default_socket_path())
    path = path.expanduser().absolute()
    status = _answering(path)
    if status is None:
        click.echo(f"error: no daemon answers on {path}: nothing to stop", err=True)
        ctx.exit(EXIT_FAILED)
    pid = int(status["pid"])
    holder = _socket_pid(path)
    if holder is not None and holder != pid:
        click.echo(
            f"error: {path} is held by pid {holder}, but the daemon says pid {pid}: "
            "not signalling either",
            err=True,
        )
        ctx.exit(EXIT_FAILED)
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    if path.exists():
        click.echo(f"error: pid {pid} is still stopping after {timeout:.0f} s", err=True)
        ctx.exit(EXIT_FAILED)
    click.echo(f"stopped (pid {pid})")


def _socket_pid(path: Path) -> int | None:
    """The pid of the process listening on ``path`` (SO_PEERCRED; None where the platform
    does not say)."""
    if not hasattr(socket, "SO_PEERCRED"):
        return None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(5.0)
        try:
            sock.connect(str(path))
            raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        except OSError:
            return None
    return int(struct.unpack("3i", raw)[0])  # struct ucred: pid, uid, gid
