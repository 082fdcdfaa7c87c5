"""The daemon in the background: ``chrysalis daemon --detach`` starts it, `stop` stops it.

`stop` sends SIGTERM, the daemon's one way to stop (it finishes in-flight requests, saves
the indexes, syncs LMDB and removes its socket, as under systemd or Ctrl-C), rather than a
new socket route: no new API, and the same path whoever started it.

A pid that an answer names proves nothing: any process of ours can bind a socket and answer
``{"pid": -1}``. So the signal goes only to a process the kernel vouches for (`holders`):
the one listening on the socket (SO_PEERCRED), which must be ours and the pid the status
names; or, when the socket is gone, the chrysalis daemon of ours holding the data dir's
lock (/proc/locks), which listened on that socket. Never pid 1 or below; on Linux the pid is
pinned by a pidfd before the last check, so a pid reused meanwhile is not hit.

`detach` shows on the terminal what the daemon warned about as it started (the log's
warnings up to its socket answering): a misspelt variable must not pass unseen.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from chrysalis.client import default_socket_path
from chrysalis.client.local_socket import who
from chrysalis.core.errors import DaemonNotRunning

from .. import holders
from .common import connect

if TYPE_CHECKING:
    from ..config import Settings

EXIT_FAILED = 1
START_WAIT = 30.0  # seconds a detached start may take to answer
LOG_NAME = "daemon.log"


def detach(ctx: click.Context, settings: Settings, args: list[str]) -> None:
    """Start ``chrysalis daemon ARGS`` in a new session, its output appended to
    ``<data_dir>/daemon.log`` (0600), and return once its socket answers (exit 0) or it has
    failed (its ``error:`` line, its exit status). Either way the warnings it logged as it
    started are printed first, ``warning: ...`` on stderr, as a foreground start shows them.
    A data dir this made is removed again when the start fails."""
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
    from chrysalis.core.errors import InvalidInput

    from ..config import check_data_dir

    try:  # before its log is made in it: refused as a foreground start is (status 2)
        check_data_dir(data_dir)
    except InvalidInput as exc:
        click.echo(f"error: {exc.message}", err=True)
        ctx.exit(2)
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
            for warning in _warnings(_said(log, offset)):
                click.echo(f"warning: {warning}", err=True)
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
    said = _said(log, offset)
    for warning in _warnings(said):  # a misspelt variable may be why it failed
        click.echo(f"warning: {warning}", err=True)
    errors = [line for line in said if line.startswith(("error: ", "hint: "))] or said[-5:]
    for line in errors or [f"error: the daemon exited with status {status}; see {log}"]:
        click.echo(line, err=True)
    if made is not None:  # it was made for this start: leave nothing behind
        import shutil

        shutil.rmtree(made, ignore_errors=True)
    ctx.exit(status or EXIT_FAILED)


def _said(log: Path, offset: int) -> list[str]:
    """The lines the daemon has written to ``log`` since ``offset``."""
    with open(log, "rb") as f:
        f.seek(offset)
        return f.read().decode(errors="replace").splitlines()


_TEXT_RECORD = re.compile(r"^\d\d:\d\d:\d\d warning  (.*)$")  # logs.TextFormatter's form


def _warnings(said: list[str]) -> list[str]:
    """The messages of the warning records among ``said`` (the daemon's log in either form:
    JSON to a file by default, text when ``log_format = "text"``), what a foreground start
    shows on the terminal."""
    out = []
    for line in said:
        if line.startswith("{"):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and record.get("level") == "warning":
                out.append(str(record.get("msg")))
        elif m := _TEXT_RECORD.match(line):
            out.append(m[1])
    return out


def _answering(path: Path) -> dict[str, Any] | None:
    """The status of the daemon answering on ``path``, or None."""
    try:
        with connect(path, timeout=5.0) as client:
            return client.status()
    except DaemonNotRunning:
        return None


@click.command()
@click.option(
    "--timeout", type=float, default=60.0, show_default=True,
    help="Seconds to wait for the daemon to finish.",
)  # fmt: skip
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Stop the daemon of this data dir (found by its lock when its socket is gone) "
    "[env CHRYSALIS_DATA_DIR; default: as `chrysalis daemon` would use].",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The TOML file that names the data dir [env CHRYSALIS_CONFIG].",
)
@click.pass_context
def stop(
    ctx: click.Context, timeout: float, data_dir: Path | None, config_file: Path | None
) -> None:
    """Stop the daemon (SIGTERM: in-flight requests finish, the indexes are saved, LMDB is
    synced), wait until it has exited, print its pid. Exits 1, signalling nothing, when no
    daemon can be found or it cannot be verified.

    The signal goes only to a process the kernel vouches for: the one listening on the socket
    (it must be yours, and the pid the daemon's status names), or, when nothing answers on
    the socket, the chrysalis daemon holding the data dir's lock (which listened on this
    socket, or whose data dir --data-dir names).

    \b
    Example:
      chrysalis stop
      chrysalis --socket /tmp/c.sock stop
      chrysalis stop --data-dir ~/agent-memory   # its socket was deleted
    """
    path = Path(ctx.ensure_object(dict).get("socket") or default_socket_path())
    path = path.expanduser().absolute()
    status = _answering(path)
    if status is None:
        pid, pidfd = _by_lock(ctx, path, data_dir, config_file)
    else:
        pid, pidfd = _by_socket(ctx, path, status, data_dir)
    if not _exited(pid, pidfd, timeout):
        _refuse(ctx, f"pid {pid} is still stopping after {timeout:.0f} s")
    click.echo(f"stopped (pid {pid})")


def _refuse(ctx: click.Context, message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    ctx.exit(EXIT_FAILED)
    raise AssertionError("not reached: ctx.exit raises")


def _by_socket(
    ctx: click.Context, path: Path, status: dict[str, Any], data_dir: Path | None
) -> tuple[int, int | None]:
    """SIGTERM to the daemon that answered on ``path``, once the kernel has said that the
    pid its status names is the process listening there, and that it is ours."""
    pid = status.get("pid")
    said = f"{path} answered that its daemon is pid {pid}"
    if not isinstance(pid, int) or isinstance(pid, bool):
        _refuse(ctx, f"{path} answered no daemon pid ({pid!r}): not signalling anything")
    if pid <= 0:
        _refuse(ctx, f"{said}, which names no single process (0 and below signal whole groups): "
                "not signalling it")  # fmt: skip
    if pid == 1:
        _refuse(ctx, f"{said}, the system's first process, never a daemon: not signalling it")
    served = Path(str(status.get("data_dir"))).resolve()
    if data_dir is not None and served != _absolute(data_dir).resolve():
        _refuse(ctx, f"the daemon on {path} serves the data dir {served}, not "
                f"{_absolute(data_dir)}: not stopping it")  # fmt: skip

    def vouched() -> str | None:
        try:
            peer = holders.socket_peer(path)
        except holders.Unverified as exc:
            return (
                f"{said}, but no process could be found holding {path} to vouch for it "
                f"({exc}): not signalling pid {pid}"
            )
        if peer.uid != os.getuid():
            return f"{path} is held by {who(peer.uid)}, not you: not signalling pid {pid}"
        if peer.pid != pid:
            return (
                f"{path} is held by pid {peer.pid}, but the daemon says pid {pid}: "
                "not signalling either"
            )
        # The kernel names the process that called listen(), as it was then: a listener
        # handed to a child outlives its maker, whose pid may now be another process's.
        # Asked once the pid is pinned, /proc says what the pid runs now.
        if holders.PROC.joinpath("self").is_dir() and not holders.is_daemon(pid):
            return (
                f"{said}, but pid {pid} is not a chrysalis daemon (its listener's pid was "
                "reused): not signalling it"
            )
        return None

    return pid, _terminate(ctx, pid, vouched)


def _by_lock(
    ctx: click.Context, path: Path, data_dir: Path | None, config_file: Path | None
) -> tuple[int, int | None]:
    """No daemon answers on ``path``: SIGTERM to the chrysalis daemon of ours that holds the
    data dir's lock (which the kernel names), if it listened on ``path`` or ``--data-dir``
    names its data dir."""
    from chrysalis.core.errors import InvalidInput

    from ..config import explain_settings

    nobody = f"no daemon answers on {path}"
    try:
        settings = explain_settings(config_file, {"data_dir": data_dir}).settings
    except InvalidInput as exc:
        _refuse(ctx, f"{nobody}, and the data dir to look in cannot be told: {exc.message}")
    data = _absolute(settings.data_dir)
    lock = data / "LOCK"

    def holder() -> int | None:
        try:
            return holders.lock_holder(lock)
        except holders.Unverified as exc:
            _refuse(ctx, f"{nobody}, and who holds the data dir {data} cannot be told ({exc}): "
                    "nothing stopped")  # fmt: skip

    pid = holder()
    if pid is None:
        _refuse(ctx, f"{nobody}, and no process holds the data dir {data}: nothing to stop")
    held = f"{nobody}; pid {pid} holds the data dir {data}"
    if pid <= 1:
        _refuse(ctx, f"{held}, which is no daemon: not signalling it")
    uid = holders.owner(pid)
    if uid != os.getuid():
        _refuse(ctx, f"{held}, and runs as {who(uid) if uid is not None else 'nobody'}, not "
                "you: not signalling it")  # fmt: skip
    if not holders.is_daemon(pid):
        _refuse(ctx, f"{held}, but it is not a chrysalis daemon: not signalling it")
    recorded = lock.read_text(errors="replace").strip()
    if recorded != str(pid):
        _refuse(ctx, f"{held}, but its lock file names pid {recorded or '(none)'}: not "
                "signalling either")  # fmt: skip
    try:
        listens = holders.listening_paths(pid)
    except holders.Unverified as exc:
        _refuse(ctx, f"{held}, but its socket cannot be told ({exc}): not stopping it")
    if str(path) in listens:
        why = f"is the chrysalis daemon that listened on {path}"
    elif data_dir is not None:
        why = "is the chrysalis daemon of the data dir --data-dir names"
    elif listens:
        _refuse(ctx, f"{held}, but it listens on {listens[0]}: not stopping it (`chrysalis "
                f"--socket {listens[0]} stop` does)")  # fmt: skip
    else:
        _refuse(ctx, f"{held}, but it listens on no socket yet (still starting?): not stopping "
                f"it (`chrysalis stop --data-dir {data}` does)")  # fmt: skip

    def vouched() -> str | None:
        if holder() != pid:
            return f"pid {pid} let go of the data dir {data} meanwhile: not signalling it"
        return None

    pidfd = _terminate(ctx, pid, vouched)
    click.echo(f"{nobody}, but pid {pid} holds the data dir {data} (its lock {lock}) and {why}")
    return pid, pidfd


def _terminate(ctx: click.Context, pid: int, vouched: Callable[[], str | None]) -> int | None:
    """SIGTERM to ``pid`` if ``vouched()`` (None, or the reason not to) still vouches for it
    once the pid is pinned by a pidfd (Linux: a pid reused meanwhile cannot be hit). Returns
    the pidfd to wait on, if any."""
    assert pid > 1  # the callers refuse the rest; this is the last line before a signal
    pidfd = None
    if hasattr(os, "pidfd_open"):
        try:
            pidfd = os.pidfd_open(pid)
        except ProcessLookupError:
            _refuse(ctx, f"pid {pid} has exited already")
    why = vouched()
    if why is not None:
        if pidfd is not None:
            os.close(pidfd)
        _refuse(ctx, why)
    if pidfd is not None:
        signal.pidfd_send_signal(pidfd, signal.SIGTERM)
    else:
        os.kill(pid, signal.SIGTERM)
    return pidfd


def _exited(pid: int, pidfd: int | None, timeout: float) -> bool:
    """Wait until ``pid`` has exited (its pidfd reads ready; without one, until the pid is
    gone); False after ``timeout`` s."""
    if pidfd is not None:
        try:
            ready, _, _ = select.select([pidfd], [], [], timeout)
            return bool(ready)
        finally:
            os.close(pidfd)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def _absolute(path: Path) -> Path:
    return path.expanduser().absolute()
