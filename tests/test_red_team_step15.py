"""The red team of step 15 (issue 28): attacks on what step 15 built (the inspector, stop, drop,
the loopback check), each run for real. The probes that broke a promise on main were fixed with
them; the ones that held stay here so they keep holding.

Attackers: whoever writes to the bucket without the sync key (a forged drop marker), a process
of ours that leaves a stale listener pid for `stop`, another local user squatting a loopback
port under an address the check did not treat as loopback, and a page or a client poking the
inspector's port with odd paths, methods and headers."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from chrysalis import Memory
from chrysalis.client.routes import Routes
from chrysalis.core.errors import EmbedderUnavailable, SyncKeyError
from chrysalis.net.loopback import loopback_address
from chrysalis.remotes import open_remote
from chrysalis.search.embed import OllamaEmbedder
from chrysalis.sync import Sync
from chrysalis.sync.segment import Kind, encode
from tests.daemon_process import DaemonProcess

from .test_loopback_squatter import Squatter
from .test_socket_owner import mallory, run_as, shared  # noqa: F401 (fixtures)
from .test_stop import stop_cli

Opener = Callable[..., Memory]


# ---- drop: a bucket writer without the key ----------------------------------------------------


def _keyed_pair(open_memory: Opener, url: str, key: Path) -> tuple[Memory, Sync, Memory]:
    a, b = open_memory("a", replica_id="aaaa"), open_memory("b", replica_id="bbbb")
    sa, sb = Sync(a, url, key_file=key), Sync(b, url, key_file=key)
    a.append_bead("a's note about the okapi", id="a1")
    b.append_bead("b's note about the okapi", id="b1")
    for s in (sa, sb, sa):
        s.push()
        s.pull()
    sb.close()
    return a, sa, b


@pytest.mark.parametrize("how", ["no key", "another key"])
def test_a_forged_marker_does_not_erase_a_keyed_laptop_started_without_its_key(
    open_memory: Opener, remote_url: Any, tmp_path: Path, how: str
) -> None:
    """b synced under a key; it restarts with its key file missing (a misspelt variable: issue
    28 G15) or another key. A bucket writer, who can read the format's id in format.json,
    writes an unsealed marker ``dropped/<id>``. On main b read it with no key (decode of an
    unsealed object with key None succeeds), stopped as dropped, and its owner erased the copy:
    the default memory's data gone on a bucket writer's word. It must refuse to sync (the key
    is wrong or missing) and erase nothing."""
    key = tmp_path / "key"
    key.write_text(os.urandom(32).hex())
    url = remote_url()
    _a, sa, b = _keyed_pair(open_memory, url, key)
    assert sa.format is not None
    fid = sa.format["id"]
    name = f"dropped/{fid}"
    forged = encode(Kind.DROP, {"id": fid, "by": "aaaa", "at": 1.0}, object_key=name, key=None)
    open_remote(url).put(name, forged)
    other = tmp_path / "other"
    other.write_text(os.urandom(32).hex())
    sb = Sync(b, url, key_file=None if how == "no key" else other)
    erased: list[bool] = []
    sb.on_dropped = lambda: erased.append(True)
    with pytest.raises(SyncKeyError):
        sb.pull(force=True)
    assert erased == [], "a forged, unsealed drop marker erased a keyed laptop"
    assert sb.status()["dropped"] is None
    assert name in {t["key"] for t in sb.status()["tampered"]}
    sb.close()
    assert sorted(x.id for x in b.all_beads()) == ["a1", "b1"]


# ---- stop: a stale listener pid, reused by an innocent process --------------------------------

# Binds and listens on the socket (so the kernel records this process as the listener), forks,
# and leaves: its child serves on the inherited socket, answering the status route with the
# pid of the process that listened. Once that pid is reused, SO_PEERCRED still names it.
STALE_LISTENER = r"""
import json, os, socket, sys
path, pidfile = sys.argv[1], sys.argv[2]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
os.chmod(path, 0o600)
srv.listen(8)
listener = os.getpid()
if os.fork():
    os._exit(0)
with open(pidfile, "w") as f:
    f.write(str(os.getpid()))
while True:
    conn, _ = srv.accept()
    data = b""
    while b"\r\n\r\n" not in data and (chunk := conn.recv(65536)):
        data += chunk
    body = json.dumps({"pid": listener, "data_dir": "/nowhere"}).encode()
    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n"
                 b"content-length: %d\r\n\r\n%s" % (len(body), body))
    conn.close()
"""

NS_LAST_PID = Path("/proc/sys/kernel/ns_last_pid")


def _spawn_as_pid(pid: int, argv: list[str]) -> subprocess.Popen[bytes] | None:
    """A process running ``argv`` whose pid is ``pid`` (root: ``ns_last_pid``), or None when
    another process of the machine took that pid first (the caller tries again)."""
    NS_LAST_PID.write_text(str(pid - 1))
    proc = subprocess.Popen(argv)
    if proc.pid == pid:
        return proc
    proc.kill()
    proc.wait()
    return None


@pytest.fixture
def stale_listener(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[bytes]]]:
    """A socket whose kernel-recorded listener pid now belongs to an innocent ``sleep``."""
    if os.getuid() != 0 or not os.access(NS_LAST_PID, os.W_OK):
        pytest.skip("needs root and a writable ns_last_pid to reuse a pid on purpose")
    sock, served = tmp_path / "s.sock", tmp_path / "server.pid"
    victim = None
    for _ in range(20):
        served.unlink(missing_ok=True)
        sock.unlink(missing_ok=True)
        parent = subprocess.Popen([sys.executable, "-c", STALE_LISTENER, str(sock), str(served)])
        listener = parent.pid
        parent.wait()  # the listener is gone (reaped): its pid is free
        deadline = time.monotonic() + 10
        while not served.exists() or not served.read_text():
            assert time.monotonic() < deadline, "the fake server did not start"
            time.sleep(0.01)
        server = int(served.read_text())
        victim = _spawn_as_pid(listener, ["sleep", "300"])
        if victim is not None:
            break
        os.kill(server, 9)
    if victim is None:
        pytest.skip("could not reuse the listener's pid (a busy machine)")
    try:
        yield sock, victim
    finally:
        os.kill(server, 9)
        victim.kill()
        victim.wait()


def test_stop_does_not_kill_a_process_that_reused_the_listeners_pid(
    tmp_path: Path, stale_listener: tuple[Path, subprocess.Popen[bytes]]
) -> None:
    """SO_PEERCRED names the process that called listen(), as it was then: a listener handed
    to a child, its creator gone and its pid reused by an innocent process, still names that
    pid. On main, `stop` found the status's pid equal to the kernel's, pinned the (reused) pid
    and sent SIGTERM to the ``sleep``. It must check the pinned process is a daemon."""
    sock, victim = stale_listener
    env = {**os.environ, "CHRYSALIS_SOCKET": str(sock), "CHRYSALIS_DATA_DIR": str(tmp_path / "d")}
    out = stop_cli(env)
    time.sleep(0.2)
    assert victim.poll() is None, f"stop killed pid {victim.pid}, a sleep: {out.stdout}"
    assert out.returncode == 1
    assert out.stderr == (
        f"error: {sock} answered that its daemon is pid {victim.pid}, but pid {victim.pid} is "
        f"not a chrysalis daemon (its listener's pid was reused): not signalling it\n"
    )


# ---- the loopback check: other spellings of this machine ----------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://0.0.0.0:11434", ("127.0.0.1", 11434)),  # connect() to 0.0.0.0 is 127.0.0.1
        ("0.0.0.0:11434", ("127.0.0.1", 11434)),  # OLLAMA_HOST as `ollama serve` takes it
        ("http://[::]:11434", ("::1", 11434)),
        ("http://127.1:11434", ("127.0.0.1", 11434)),  # inet_aton's short forms
        ("http://2130706433:11434", ("127.0.0.1", 11434)),
        ("http://0x7f000001:11434", ("127.0.0.1", 11434)),
        ("http://[::ffff:127.0.0.1]:11434", ("127.0.0.1", 11434)),
        ("http://localhost.:11434", ("localhost", 11434)),
        ("http://127.0.0.1:11434", ("127.0.0.1", 11434)),
        ("https://api.getzep.com", None),
        ("http://10.0.0.1:11434", None),
    ],
)
def test_every_spelling_of_this_machine_is_loopback(url: str, expected: Any) -> None:
    assert loopback_address(url) == expected


def test_ollama_host_0_0_0_0_sends_nothing_to_a_squatter(
    squatter: Squatter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``OLLAMA_HOST=0.0.0.0:11434`` is how Ollama's own docs expose the server; the client
    reads the same variable, and a connection to 0.0.0.0 reaches 127.0.0.1. On main the check
    took 0.0.0.0 for a remote host and the squatter (another user on 127.0.0.1) got the
    batch."""
    monkeypatch.setenv("OLLAMA_HOST", f"0.0.0.0:{squatter.port}")
    embedder = OllamaEmbedder(timeout=2)
    with pytest.raises(EmbedderUnavailable, match="another user"):
        embedder.embed_documents(["the launch code is in the blue folder"])
    time.sleep(0.3)
    assert squatter.received() == []


@pytest.fixture
def squatter(mallory: pwd.struct_passwd, shared: Path) -> Iterator[Squatter]:  # noqa: F811
    s = Squatter(mallory, shared / "squatter.log")
    try:
        yield s
    finally:
        s.close()


# ---- the inspector: probes that hold --------------------------------------------------------


def _http(port: int, raw: bytes, timeout: float = 5.0) -> bytes:
    """Send ``raw`` to the inspector's port; everything it answers until it closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(raw)
        out = b""
        with contextlib.suppress(TimeoutError, ConnectionResetError):
            while chunk := s.recv(65536):
                out += chunk
    return out


def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0


# (request line, extra headers, the statuses that mean "refused"): what a signed-in page or a
# client holding a session might try to reach export or ingest with. 0: closed, no answer.
TRICKS = [
    ("GET /api/v1/export", "", {403}),
    ("GET /api/v1/m/default/../export", "", {403}),
    ("GET /api/v1/m/default%2F..%2Fexport", "", {403}),
    ("GET /api/v1/beads/..%2Fexport", "", {403}),
    ("GET /api/v1/beads/%2E%2E/export", "", {403}),
    ("GET /api//v1/export", "", {403}),
    ("GET //api/v1/export", "", {404}),
    ("GET /API/v1/export", "", {404}),
    ("GET /api/v1/EXPORT", "", {403}),
    ("GET /api/v1/export/", "", {403}),
    ("GET /api/v1/m/default/m/team/export", "", {403}),
    ("HEAD /api/v1/export", "", {403}),
    ("OPTIONS /api/v1/export", "", {403}),
    ("get /api/v1/export", "", {403, 400, 0}),
    ("POST /api/v1/m/default/ui", "", {403}),
    ("POST /api/v1/m/default/ingest", "", {403}),
    ("GET http://127.0.0.1:{port}/api/v1/export", "", {404, 400}),
    (
        "GET /api/v1/export",
        "Upgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n",
        {403, 404, 500, 0},
    ),
]


def test_no_path_method_or_upgrade_trick_reaches_export_or_ingest(
    daemon: DaemonProcess,
) -> None:
    """Signed in (a session in hand), every spelling of a route the inspector does not serve
    is refused, and nothing of the memory comes back."""
    with daemon.client() as c:
        c.remember("the harbour key is under the third stone", session_id="s", id="harbour")
        c.create_memory("team")
    port, session = _signed_in(daemon)
    for line, extra, refused in TRICKS:
        request = (
            f"{line.format(port=port)} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"X-Chrysalis-Session: {session}\r\n{extra}content-length: 0\r\n"
            "connection: close\r\n\r\n"
        ).encode()
        answer = _http(port, request)
        assert _status(answer) in refused, (line, answer[:300])
        assert b"third stone" not in answer, line
    # and the session does work where it should (so the refusals above are not a dead session)
    answer = _http(
        port,
        f"GET /api/v1/beads HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Chrysalis-Session: "
        f"{session}\r\nconnection: close\r\n\r\n".encode(),
    )
    assert _status(answer) == 200 and b"third stone" in answer


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1.:{port}", "127.1:{port}", "[::ffff:127.0.0.1]:{port}", "LOCALHOST:{port}",
     "127.0.0.1", "127.0.0.1:{port}@evil.example", "evil.example"],
)  # fmt: skip
def test_a_rebinding_host_is_refused_however_it_is_spelt(daemon: DaemonProcess, host: str) -> None:
    """DNS rebinding sends the attacker's own name; a name that only looks like ours is not."""
    port, session = _signed_in(daemon)
    answer = _http(
        port,
        f"GET /api/v1/beads HTTP/1.1\r\nHost: {host.format(port=port)}\r\n"
        f"X-Chrysalis-Session: {session}\r\nconnection: close\r\n\r\n".encode(),
    )
    assert _status(answer) == 403, answer[:300]


def _signed_in(daemon: DaemonProcess) -> tuple[int, str]:
    """The inspector's port and a session, traded the way the CLI's page does (a form post
    from a local file: Origin null)."""
    with daemon.client() as c:
        found = c.raw(Routes.ui)
    port, token = found["port"], found["token"]
    body = f"token={token}".encode()
    page = _http(
        port,
        b"POST /signin HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nOrigin: null\r\nconnection: close\r\n"
        b"content-type: application/x-www-form-urlencoded\r\ncontent-length: %d\r\n\r\n%s"
        % (port, len(body), body),
    )
    marker = b'name="chrysalis-session" content="'
    assert marker in page, page[:300]
    return port, page.split(marker, 1)[1].split(b'"', 1)[0].decode()


# ---- keyed entity ids: a passphrase is not a key ------------------------------------------------

PASSPHRASE = "correct horse battery staple"
PASSPHRASES = ["hunter2hunter2", "password1234", "letmeinletmein", PASSPHRASE, "0123456789ab"]


def test_an_entity_id_is_no_fast_test_of_a_sync_passphrase(tmp_path: Path) -> None:
    """A sync key file may hold a passphrase: the data key is scrypt of it (slow to guess).
    On main the graph key was a plain BLAKE2b of the same passphrase, so one entity whose name
    and id anyone holding a copy of the data dir (or a mirror of the graph) can read turned the
    passphrase into a fast guess: one hash per candidate, then the remote decrypts and every
    forgotten entity's id is testable again. Two replicas with the passphrase still agree."""
    import hashlib

    from chrysalis.core.graph_ids import derived_node_id

    a = Memory.open(tmp_path / "a", sync=False, extractor="rules", graph_secret=PASSPHRASE)
    b = Memory.open(tmp_path / "b", sync=False, extractor="rules", graph_secret=PASSPHRASE)
    try:
        for m in (a, b):
            m.append_bead("Ada Lovelace wrote the notes.", session_id="notes")
            assert m.wait_learned(10)
        ids = {n.id for n in a.all_nodes() if n.name == "Ada Lovelace"}
        assert ids and ids == {n.id for n in b.all_nodes() if n.name == "Ada Lovelace"}
        fast = {
            candidate
            for candidate in PASSPHRASES
            if derived_node_id(
                "Ada Lovelace",
                hashlib.blake2b(
                    candidate.encode(), digest_size=32, person=b"chrysalis-graph"
                ).digest(),
            )
            in ids
        }
        assert fast == set(), "one BLAKE2b per guess recovers the sync passphrase"
    finally:
        a.close()
        b.close()


# ---- the sign-in page in a shared /tmp: holds ---------------------------------------------------


def test_the_sign_in_page_in_a_shared_tmp_is_neither_readable_nor_a_lever(
    mallory: pwd.struct_passwd,  # noqa: F811
    shared: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without XDG_RUNTIME_DIR the page goes to the shared temp dir. Another user plants a
    folder and a symlink with the page's prefix (to make us delete or write through them) and
    then tries to read the page: the link and their folder are left alone, the page is ours,
    0600 in a 0700 folder, and they read nothing."""
    import tempfile

    from chrysalisd.cli.signin import PREFIX, write_signin_page

    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "keep.txt").write_text("the owner's file")
    run_as(
        mallory,
        f"import os; os.mkdir({str(shared / (PREFIX + 'theirs'))!r}, 0o777); "
        f"os.symlink({str(precious)!r}, {str(shared / (PREFIX + 'link'))!r})",
    )
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    page = write_signin_page("http://127.0.0.1:1/signin", "T0KEN-secret", None, 90)
    try:
        assert page.parent.parent == shared
        assert (precious / "keep.txt").read_text() == "the owner's file"
        assert (shared / (PREFIX + "theirs")).is_dir()
        assert (page.stat().st_mode & 0o777, page.parent.stat().st_mode & 0o777) == (0o600, 0o700)
        probe = (
            "import os, sys\n"
            f"for p in ({str(page)!r}, {str(page.parent)!r}):\n"
            "    try:\n"
            "        (open(p).read() if os.path.isfile(p) else os.listdir(p))\n"
            "        sys.exit('read ' + p)\n"
            "    except PermissionError:\n"
            "        pass\n"
        )
        run_as(mallory, probe)
    finally:
        shutil.rmtree(page.parent, ignore_errors=True)
