"""`chrysalis stop` signals only a process it has verified (issue 28, D11): the process the
kernel says holds the live socket (SO_PEERCRED), which must be ours and the pid the daemon's
answer names, or the process that holds the data dir's lock when the socket is gone. A pid
that an answer names, and nothing vouches for, gets no signal.

The attacker is a plain Python server on the socket path: it answers the status route with
someone else's pid (a ``sleep``, -1, 1), then closes, so the kernel has no one left to name.
-1 and 1 are run in-process with every way to send a signal replaced by a recorder: the code
before the fix sent SIGTERM to them, which as root means every process there is."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from chrysalisd.cli import main
from tests.daemon_process import DaemonProcess, run_process


class FakeDaemon(threading.Thread):
    """A server on ``path`` that answers one request with ``{"pid": pid}`` (what a daemon's
    status says), then removes the socket and closes: asked afterwards who answered, the
    kernel has no one to name."""

    def __init__(self, path: Path, pid: int) -> None:
        super().__init__(daemon=True)
        self.path, self.pid = path, pid
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(path))
        os.chmod(path, 0o600)
        self.listener.listen(1)
        self.listener.settimeout(30)
        self.start()

    def run(self) -> None:
        try:
            conn, _ = self.listener.accept()
            with conn:
                data = b""
                while b"\r\n\r\n" not in data and (chunk := conn.recv(65536)):
                    data += chunk
                body = json.dumps({"pid": self.pid, "data_dir": "/nowhere"}).encode()
                # Gone before the answer, not after it: a `stop` quick enough to ask the
                # kernel who listens while this thread was still closing got its own answer
                # (this test's pid), which it refuses too but in other words.
                self.path.unlink(missing_ok=True)
                self.listener.close()
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n"
                    b"content-length: %d\r\n\r\n%s" % (len(body), body)
                )
        finally:
            self.path.unlink(missing_ok=True)
            self.listener.close()


@pytest.fixture(autouse=True)
def fresh_daemons(monkeypatch: pytest.MonkeyPatch) -> None:
    """`chrysalis stop` signals only a process whose command line is a daemon's
    (`holders.is_daemon`): a forked one's is the forker's (`tests.forker`)."""
    monkeypatch.setattr(DaemonProcess, "fresh", True)


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    """An innocent process of ours: the attack wants it killed."""
    proc = subprocess.Popen(["sleep", "300"])
    yield proc
    proc.kill()
    proc.wait()


def stop_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_process(["stop", "--timeout", "5", *args], env)


def test_stop_does_not_kill_the_pid_a_fake_server_names(
    tmp_path: Path, sleeper: subprocess.Popen[bytes]
) -> None:
    sock = tmp_path / "s.sock"
    fake = FakeDaemon(sock, sleeper.pid)
    env = {**os.environ, "CHRYSALIS_SOCKET": str(sock), "CHRYSALIS_DATA_DIR": str(tmp_path / "d")}
    out = stop_cli(env)
    fake.join(10)
    assert sleeper.poll() is None, "stop killed the process the fake server named"
    assert out.returncode == 1
    assert out.stdout == ""
    assert out.stderr == (
        f"error: {sock} answered that its daemon is pid {sleeper.pid}, but no process could be "
        f"found holding {sock} to vouch for it (the socket file is gone): not "
        f"signalling pid {sleeper.pid}\n"
    )


@pytest.fixture
def no_signals(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """Every way `stop` could send a signal, recording instead (so an attack that works
    harms nothing while the test shows it)."""
    sent: list[tuple[str, Any]] = []

    def recorder(name: str) -> Any:
        return lambda *args: sent.append((name, args))

    monkeypatch.setattr(os, "kill", recorder("kill"))
    monkeypatch.setattr(os, "killpg", recorder("killpg"))
    monkeypatch.setattr(signal, "pidfd_send_signal", recorder("pidfd_send_signal"), raising=False)
    return sent


@pytest.mark.parametrize(
    ("pid", "said"),
    [
        (-1, "which names no single process (0 and below signal whole groups)"),
        (0, "which names no single process (0 and below signal whole groups)"),
        (1, "the system's first process, never a daemon"),
    ],
)
def test_stop_never_signals_pid_minus_one_zero_or_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_signals: list[Any], pid: int, said: str
) -> None:
    sock = tmp_path / "s.sock"
    monkeypatch.setenv("CHRYSALIS_DATA_DIR", str(tmp_path / "d"))
    fake = FakeDaemon(sock, pid)
    out = CliRunner().invoke(main, ["--socket", str(sock), "stop", "--timeout", "2"])
    fake.join(10)
    assert no_signals == []
    assert out.exit_code == 1
    assert out.stderr == (
        f"error: {sock} answered that its daemon is pid {pid}, {said}: not signalling it\n"
    )


def test_stop_signals_nothing_when_the_peer_cannot_be_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_signals: list[Any]
) -> None:
    """The fake answers our own test process's pid, then goes: before the fix, stop sent it
    SIGTERM (the check was skipped when its connect failed)."""
    sock = tmp_path / "s.sock"
    monkeypatch.setenv("CHRYSALIS_DATA_DIR", str(tmp_path / "d"))
    fake = FakeDaemon(sock, os.getpid())
    out = CliRunner().invoke(main, ["--socket", str(sock), "stop", "--timeout", "2"])
    fake.join(10)
    assert no_signals == []
    assert out.exit_code == 1
    assert "not signalling pid" in out.stderr and out.stdout == ""


# ---- the socket is gone, the daemon runs: the data dir's lock names it -----------------------


def test_stop_finds_the_daemon_by_its_data_dir_lock_when_the_socket_is_gone(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    d = DaemonProcess(data, env={"CHRYSALIS_DATA_DIR": str(data)}).start()
    try:
        assert d.proc is not None
        d.socket.unlink()  # e.g. a tmp cleaner; the daemon still runs and holds the data dir
        out = d.cli("stop")
        assert (out.returncode, out.stderr) == (0, "")
        assert out.stdout == (
            f"no daemon answers on {d.socket}, but pid {d.proc.pid} holds the data dir {data} "
            f"(its lock {data / 'LOCK'}) and is the chrysalis daemon that listened on "
            f"{d.socket}\nstopped (pid {d.proc.pid})\n"
        )
        assert d.proc.wait(30) == 0  # SIGTERM: a clean stop
        assert "stopped cleanly" in d.output()
    finally:
        d.close()


def test_a_lock_file_naming_a_pid_is_not_enough(
    tmp_path: Path, sleeper: subprocess.Popen[bytes]
) -> None:
    """The lock file says a pid, but nobody holds the lock: nothing to stop."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "LOCK").write_text(str(sleeper.pid))
    sock = tmp_path / "s.sock"
    env = {**os.environ, "CHRYSALIS_SOCKET": str(sock), "CHRYSALIS_DATA_DIR": str(data)}
    out = stop_cli(env)
    assert sleeper.poll() is None
    assert (out.returncode, out.stderr) == (
        1, f"error: no daemon answers on {sock}, and no process holds the data dir {data}: "
        "nothing to stop\n",
    )  # fmt: skip


def test_a_lock_held_by_something_else_than_a_daemon_is_not_signalled(tmp_path: Path) -> None:
    """A script that opened the memory as a library holds the lock: it is no daemon."""
    data = tmp_path / "data"
    data.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(data / "LOCK")],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        sock = tmp_path / "s.sock"
        env = {**os.environ, "CHRYSALIS_SOCKET": str(sock), "CHRYSALIS_DATA_DIR": str(data)}
        out = stop_cli(env)
        assert holder.poll() is None
        assert out.returncode == 1
        assert out.stderr == (
            f"error: no daemon answers on {sock}; pid {holder.pid} holds the data dir {data}, "
            "but it is not a chrysalis daemon: not signalling it\n"
        )
    finally:
        holder.kill()
        holder.communicate()


HOLD_LOCK = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
os.pwrite(fd, str(os.getpid()).encode(), 0)
print("locked", flush=True)
time.sleep(300)
"""


def test_a_daemon_on_another_socket_is_named_not_stopped(tmp_path: Path) -> None:
    """`chrysalis --socket X stop` with nothing on X stops no daemon that listens elsewhere,
    even one that holds the data dir the settings name: it says which socket to use. Named
    by ``--data-dir``, that daemon is stopped."""
    data = tmp_path / "data"
    d = DaemonProcess(data).start()
    try:
        assert d.proc is not None
        other = tmp_path / "other.sock"
        env = {**d.env, "CHRYSALIS_SOCKET": str(other), "CHRYSALIS_DATA_DIR": str(data)}
        out = stop_cli(env)
        assert d.proc.poll() is None and d.once("ping")
        assert out.returncode == 1
        assert out.stderr == (
            f"error: no daemon answers on {other}; pid {d.proc.pid} holds the data dir {data}, "
            f"but it listens on {d.socket}: not stopping it (`chrysalis --socket {d.socket} "
            "stop` does)\n"
        )
        named = stop_cli(env, "--data-dir", str(data))  # the data dir named: that daemon
        assert (named.returncode, named.stderr) == (0, "")
        assert named.stdout == (
            f"no daemon answers on {other}, but pid {d.proc.pid} holds the data dir {data} (its "
            f"lock {data / 'LOCK'}) and is the chrysalis daemon of the data dir --data-dir "
            f"names\nstopped (pid {d.proc.pid})\n"
        )
        assert d.proc.wait(30) == 0
    finally:
        d.close()


def test_data_dir_must_be_the_answering_daemons(
    tmp_path: Path, daemon_process: DaemonProcess
) -> None:
    """`stop --data-dir D` where another data dir's daemon answers on the socket: not that
    one."""
    daemon = daemon_process
    out = daemon.cli("stop", "--data-dir", str(tmp_path / "elsewhere"))
    assert daemon.proc is not None and daemon.proc.poll() is None
    assert (out.returncode, out.stderr) == (
        1, f"error: the daemon on {daemon.socket} serves the data dir {daemon.data_dir}, not "
        f"{tmp_path / 'elsewhere'}: not stopping it\n",
    )  # fmt: skip
    assert daemon.cli("stop", "--data-dir", str(daemon.data_dir)).returncode == 0
    assert daemon.proc.wait(30) == 0


def test_without_peer_credentials_no_process_is_vouched_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the platform cannot say who listens on a socket, nobody is named (so `stop`
    refuses, as for a server that went away)."""
    from chrysalisd.holders import Unverified, socket_peer

    sock = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(str(sock))
        listener.listen(1)
        assert socket_peer(sock).pid == os.getpid()
        monkeypatch.delattr(socket, "SO_PEERCRED", raising=False)
        monkeypatch.setattr(sys, "platform", "sunos5")
        with pytest.raises(Unverified, match=r"this platform \(sunos5\) does not say who holds"):
            socket_peer(sock)
