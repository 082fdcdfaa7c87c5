"""Another user on the same host (issue 14): a symlink or a directory planted where the daemon's
socket goes, an impostor socket where the client looks. The attacker is a second real Unix user
(created here when running as root), its processes started with ``user=``; the default path is
made to land in a shared sticky directory of the test's own (``$XDG_RUNTIME_DIR``), never in the
real ``/tmp/chrysalis-$UID``."""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chrysalis import AsyncClient, Client
from chrysalis.client.transport import check_peer, peer_uid
from chrysalis.core.errors import Forbidden
from tests.eventually import eventually

from .daemon_process import DaemonProcess, run_process
from .test_mcp import session_run

MALLORY = "chrysalis-mallory"
SYSTEM_PYTHON = "/usr/bin/python3"  # the venv's may sit under a directory mallory cannot read

# A tiny HTTP server that answers anything with 200 {} and records, one line per connection,
# how many bytes arrived ("ready" once listening). Stdlib only: it runs as mallory.
IMPOSTOR = r"""
import os, socket, sys
path, log = sys.argv[1], sys.argv[2]
if len(sys.argv) > 3:
    srv = socket.socket(fileno=int(sys.argv[3]))
else:
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    os.chmod(path, 0o777)
srv.listen(8)  # Linux records the listener's credentials (what SO_PEERCRED tells) here
def note(line):
    with open(log, "a") as f:
        f.write(line + "\n")
note("ready")
while True:
    conn, _ = srv.accept()
    conn.settimeout(5)
    data = b""
    try:
        while chunk := conn.recv(65536):
            data += chunk
            if b"\r\n\r\n" in data:
                conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                             b"content-length: 2\r\nconnection: close\r\n\r\n{}")
                break
    except OSError:
        pass
    conn.close()
    note(f"got {len(data)}")
"""


@pytest.fixture(scope="module")
def mallory() -> Iterator[pwd.struct_passwd]:
    """A second Unix user; created (and removed after) when running as root."""
    if os.getuid() != 0:
        pytest.skip("needs root to create and act as a second user (useradd, setuid)")
    if not os.access(SYSTEM_PYTHON, os.X_OK):
        pytest.skip(f"no {SYSTEM_PYTHON} for the second user to run")
    created = False
    try:
        user = pwd.getpwnam(MALLORY)
    except KeyError:
        if shutil.which("useradd") is None:
            pytest.skip("no second user and no useradd to create one")
        subprocess.run(
            ["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", MALLORY],
            check=True,
            capture_output=True,
        )
        created = True
        user = pwd.getpwnam(MALLORY)
    try:
        yield user
    finally:
        if created:
            subprocess.run(["userdel", MALLORY], check=False, capture_output=True)


@pytest.fixture
def shared() -> Iterator[Path]:
    """A world-writable sticky directory, like ``/tmp``, standing in for the shared host."""
    d = Path(tempfile.mkdtemp(prefix="chr-shared-", dir="/tmp"))
    d.chmod(0o1777)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def as_user(user: pwd.struct_passwd, *args: str, **kw: object) -> subprocess.Popen[bytes]:
    return subprocess.Popen(  # type: ignore[call-overload, no-any-return]
        list(args), user=user.pw_uid, group=user.pw_gid, extra_groups=[], **kw
    )


def run_as(user: pwd.struct_passwd, code: str) -> None:
    proc = as_user(user, SYSTEM_PYTHON, "-I", "-c", code, stderr=subprocess.PIPE)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err.decode()


class Impostor:
    """IMPOSTOR running as ``user`` on ``path`` (or on a listening socket handed over)."""

    def __init__(self, user: pwd.struct_passwd, path: Path, log: Path, *, listener: int = -1):
        extra = [str(listener)] if listener >= 0 else []
        self.log = log
        self.proc = as_user(
            user,
            SYSTEM_PYTHON,
            "-I",
            "-c",
            IMPOSTOR,
            str(path),
            str(log),
            *extra,
            pass_fds=[listener] if listener >= 0 else [],
        )

        def ready() -> bool:
            assert self.proc.poll() is None, "the impostor did not start"
            return "ready" in self.lines()

        eventually(ready, timeout=20, what="the impostor to start", interval=0.02)

    def lines(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def bytes_received(self) -> list[int]:
        return [int(line.split()[1]) for line in self.lines() if line.startswith("got ")]

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def default_env(shared: Path) -> dict[str, str]:
    """The environment where the default socket path is ``shared/chrysalis/chrysalis.sock``."""
    env = {k: v for k, v in os.environ.items() if k != "CHRYSALIS_SOCKET"}
    env["XDG_RUNTIME_DIR"] = str(shared)
    return env


def daemon_at_default(tmp_path: Path, shared: Path) -> DaemonProcess:
    d = DaemonProcess(tmp_path / "data")
    d.env = {**d.env, **default_env(shared)}
    del d.env["CHRYSALIS_SOCKET"]
    d.socket = shared / "chrysalis" / "chrysalis.sock"
    return d


def refused_start(d: DaemonProcess) -> tuple[int, str]:
    d.start(wait=False)
    assert d.proc is not None
    return d.proc.wait(30), d.output()


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_process(args, env)


# ---- the daemon refuses a planted directory or socket ------------------------------------


def test_daemon_refuses_a_symlink_planted_as_its_socket_directory(
    mallory: pwd.struct_passwd, shared: Path, tmp_path: Path
) -> None:
    target = shared / "mallorys"
    run_as(
        mallory,
        f"import os; os.mkdir({str(target)!r}); os.chmod({str(target)!r}, 0o777); "
        f"os.symlink({str(target)!r}, {str(shared / 'chrysalis')!r})",
    )
    d = daemon_at_default(tmp_path, shared)
    try:
        code, out = refused_start(d)
    finally:
        d.close()
    assert code != 0, out
    assert (
        f"the socket directory {shared / 'chrysalis'} is a symlink, owned by user {MALLORY} "
        f"(uid {mallory.pw_uid}): refusing to listen there" in out
    ), out
    assert stat.S_IMODE(target.stat().st_mode) == 0o777  # not chmodded through the link
    assert list(target.iterdir()) == []  # and nothing bound there


def test_daemon_refuses_a_socket_directory_another_user_owns(
    mallory: pwd.struct_passwd, shared: Path, tmp_path: Path
) -> None:
    planted = shared / "chrysalis"
    run_as(mallory, f"import os; os.mkdir({str(planted)!r}); os.chmod({str(planted)!r}, 0o777)")
    d = daemon_at_default(tmp_path, shared)
    try:
        code, out = refused_start(d)
    finally:
        d.close()
    assert code != 0, out
    assert (
        f"the socket directory {planted} belongs to user {MALLORY} (uid {mallory.pw_uid}), "
        "not you: refusing to listen there" in out
    ), out
    assert stat.S_IMODE(planted.stat().st_mode) == 0o777
    assert list(planted.iterdir()) == []


def test_daemon_refuses_a_symlink_planted_as_its_socket(
    mallory: pwd.struct_passwd, shared: Path, tmp_path: Path
) -> None:
    sock = shared / "d.sock"  # --socket in a shared directory: the socket itself is planted
    run_as(mallory, f"import os; os.symlink('/etc/passwd', {str(sock)!r})")
    d = DaemonProcess(tmp_path / "data", env={"CHRYSALIS_SOCKET": str(sock)})
    try:
        code, out = refused_start(d)
    finally:
        d.close()
    assert code != 0, out
    assert (
        f"the socket {sock} is a symlink owned by user {MALLORY} (uid {mallory.pw_uid}): "
        "refusing to listen there" in out
    ), out


def test_daemon_refuses_a_symlinked_socket_directory_even_its_own(
    shared: Path, tmp_path: Path
) -> None:
    (shared / "elsewhere").mkdir()
    (shared / "chrysalis").symlink_to(shared / "elsewhere")
    d = daemon_at_default(tmp_path, shared)
    try:
        code, out = refused_start(d)
    finally:
        d.close()
    assert code != 0, out
    assert f"the socket directory {shared / 'chrysalis'} is a symlink" in out, out


# ---- the client refuses an impostor before sending a byte --------------------------------


def test_cli_and_clients_refuse_an_impostor_socket_without_sending_a_byte(
    mallory: pwd.struct_passwd, shared: Path
) -> None:
    planted = shared / "chrysalis"
    sock = planted / "chrysalis.sock"
    run_as(mallory, f"import os; os.mkdir({str(planted)!r}); os.chmod({str(planted)!r}, 0o777)")
    impostor = Impostor(mallory, sock, shared / "impostor.log")
    refusal = (
        f"the socket {sock} belongs to user {MALLORY} (uid {mallory.pw_uid}), not you: "
        "refusing to send"
    )
    try:
        out = cli(default_env(shared), "remember", "my bank PIN is 4321")
        assert out.returncode != 0
        assert out.stderr.strip() == f"error: {refusal}"
        assert "4321" not in out.stdout + out.stderr

        with Client(sock) as c, pytest.raises(Forbidden) as refused:
            c.remember("my bank PIN is 4321")
        assert refused.value.message == refusal

        async def go() -> None:
            async with AsyncClient(sock) as c:
                await c.remember("my bank PIN is 4321")

        with pytest.raises(Forbidden, match="refusing to send"):
            asyncio.run(go())

        assert impostor.bytes_received() == []  # not even a connection
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:  # the recorder works
            s.settimeout(10)
            s.connect(str(sock))
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            assert s.recv(100).startswith(b"HTTP/1.1 200")
        eventually(impostor.bytes_received, timeout=10, what="the impostor's log", interval=0.02)
        assert impostor.bytes_received() == [27]
    finally:
        impostor.close()


def test_mcp_refuses_an_impostor_socket_as_a_tool_error(
    mallory: pwd.struct_passwd, shared: Path
) -> None:
    planted = shared / "chrysalis"
    sock = planted / "chrysalis.sock"
    run_as(mallory, f"import os; os.mkdir({str(planted)!r}); os.chmod({str(planted)!r}, 0o777)")
    impostor = Impostor(mallory, sock, shared / "impostor.log")

    async def steps(session: Any) -> Any:
        return await session.call_tool("remember", {"content": "my bank PIN is 4321"})

    try:
        result = asyncio.run(session_run(sock, steps))
        assert result.is_error
        assert result.content[0].text.endswith(
            f"forbidden: the socket {sock} belongs to user {MALLORY} (uid {mallory.pw_uid}), "
            "not you: refusing to send"
        )
        assert impostor.bytes_received() == []
    finally:
        impostor.close()


def test_clients_check_the_peer_not_only_the_file(mallory: pwd.struct_passwd, shared: Path) -> None:
    """The socket file is ours (we bound it) but the process serving it runs as mallory (it
    called listen): only the peer's credentials tell, and they are read before a byte is
    sent."""
    sock = shared / "ours.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(sock))
    try:
        impostor = Impostor(mallory, sock, shared / "impostor.log", listener=listener.fileno())
    finally:
        listener.close()
    refusal = (
        f"the daemon at {sock} runs as user {MALLORY} (uid {mallory.pw_uid}), not you: "
        "refusing to send"
    )
    try:
        with Client(sock) as c, pytest.raises(Forbidden) as refused:
            c.remember("my bank PIN is 4321")
        assert refused.value.message == refusal

        async def go() -> None:
            async with AsyncClient(sock) as c:
                await c.remember("my bank PIN is 4321")

        with pytest.raises(Forbidden) as refused:
            asyncio.run(go())
        assert refused.value.message == refusal

        out = cli({**os.environ, "CHRYSALIS_SOCKET": str(sock)}, "remember", "PIN 4321")
        assert out.returncode != 0 and out.stderr.strip() == f"error: {refusal}"

        eventually(impostor.bytes_received, until=lambda got: len(got) >= 3, timeout=10,
                   what="three connections at the impostor", interval=0.02)  # fmt: skip
        assert impostor.bytes_received() == [0, 0, 0]
    finally:
        impostor.close()


def test_a_pooled_client_checks_each_new_connection(
    mallory: pwd.struct_passwd, shared: Path, tmp_path: Path
) -> None:
    """httpx pools connections: a client that talked to our daemon, which then stopped and
    left its path to an impostor, checks the next connection it opens."""
    d = DaemonProcess(tmp_path / "data").start()
    impostor = None
    try:
        with Client(d.socket) as c:
            assert c.ping()
            assert d.stop() == 0, d.output()
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(str(d.socket))
            try:
                impostor = Impostor(
                    mallory, d.socket, shared / "impostor.log", listener=listener.fileno()
                )
            finally:
                listener.close()
            with pytest.raises(Forbidden, match=f"runs as user {MALLORY}"):
                c.remember("my bank PIN is 4321")
        eventually(impostor.bytes_received, timeout=10, what="the impostor's log", interval=0.02)
        assert impostor.bytes_received() == [0]
    finally:
        if impostor is not None:
            impostor.close()
        d.close()


def test_without_peer_credentials_the_client_refuses_plainly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delattr(socket, "SO_PEERCRED", raising=False)
    monkeypatch.setattr(sys, "platform", "sunos5")
    a, b = socket.socketpair()
    with a, b:
        assert peer_uid(a) is None
        with pytest.raises(Forbidden, match="neither SO_PEERCRED nor LOCAL_PEERCRED"):
            check_peer(a, "/x.sock")


def test_doctor_on_another_users_directory_advises_a_private_one(
    mallory: pwd.struct_passwd, tmp_path: Path
) -> None:
    """Never "chmod" a directory that is not ours: use one of our own."""
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o777)
    theirs.chmod(0o777)
    os.chown(theirs, mallory.pw_uid, mallory.pw_gid)
    tmp_path.chmod(0o755)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(tmp_path / "run")}
    out = cli(env, "--socket", str(theirs / "c.sock"), "doctor", "--json")
    check = next(c for c in json.loads(out.stdout)["checks"] if c["check"] == "socket dir")
    private = tmp_path / "run" / "chrysalis" / "chrysalis.sock"
    assert (out.returncode, check["status"]) == (1, "error")
    assert check["detail"] == f"{theirs} belongs to uid {mallory.pw_uid}, not you"
    assert check["fix"] == (
        f"do not use it: give the socket a private directory: `chrysalis --socket {private} "
        f"daemon` (the daemon makes {private.parent} mode 700)"
    )


# ---- our own daemon still works ----------------------------------------------------------


def test_our_own_daemon_at_the_default_path_still_works(shared: Path, tmp_path: Path) -> None:
    d = daemon_at_default(tmp_path, shared)
    try:
        d.start()
        assert stat.S_IMODE((shared / "chrysalis").stat().st_mode) == 0o700
        if hasattr(socket, "SO_PEERCRED"):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.connect(str(d.socket))
                assert peer_uid(s) == os.getuid()
        out = cli(default_env(shared), "remember", "the user prefers tea", "--json")
        assert out.returncode == 0, out.stderr
        with Client(d.socket) as c:
            assert c.ping()
            assert c.recall("what does the user drink?", k=1).items[0].text == (
                "the user prefers tea"
            )

        async def go() -> bool:
            async with AsyncClient(d.socket) as c:
                return await c.ping()

        assert asyncio.run(go())
        assert d.stop() == 0, d.output()
    finally:
        d.close()


def test_an_existing_default_directory_of_ours_is_made_0700_through_its_fd(
    shared: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chrysalisd.server import prepare_socket_dir

    monkeypatch.delenv("CHRYSALIS_SOCKET", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(shared))
    (shared / "chrysalis").mkdir(mode=0o755)
    prepare_socket_dir(shared / "chrysalis" / "chrysalis.sock")
    assert stat.S_IMODE((shared / "chrysalis").stat().st_mode) == 0o700
    (shared / "file").write_text("")
    with pytest.raises(Forbidden, match=f"the socket directory {shared / 'file'} is not a dir"):
        prepare_socket_dir(shared / "file" / "chrysalis.sock")
