"""The daemon as a subprocess on a real Unix socket, driven by the Client, the CLI and raw HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from chrysalis import AsyncClient, Client
from chrysalis.core.errors import Conflict, DaemonNotRunning, InvalidInput, NotFound
from tests.eventually import eventually

from .daemon_process import DaemonProcess, DaemonThread


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    d = DaemonThread(tmp_path_factory.mktemp("daemon") / "data").start()
    yield d
    assert d.stop() == 0, d.output()
    d.close()


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[DaemonProcess]:
    d = DaemonProcess(tmp_path / "data")
    yield d
    d.close()


def raw_http(sock_path: Path, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 exchange written by hand, as curl --unix-socket would."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(str(sock_path))
        s.sendall(request)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, body


def test_remember_then_recall_finds_it_with_provenance(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        bead = c.remember(
            "the user prefers green tea in the morning", session_id="s1", tags=["drinks"]
        )
        replica = c.status()["replica_id"]
        result = c.recall("what does the user drink in the morning?", k=5)
    top = result.items[0]
    assert (top.kind, top.id) == ("bead", bead.id)
    assert top.provenance["origin_replica"] == replica
    assert top.signals["keyword"] > 0
    # asked at a moment (ISO 8601 through the client): the span a query names is read against it
    with daemon.client() as c:
        c.remember("I baked a lemon tart for the party", id="tart", ts=1_685_181_600)  # Sat 27 May
        asked = datetime(2023, 5, 30, 12, tzinfo=UTC)
        item = c.recall("what did I bake last weekend?", k=1, now=asked).items[0]
    assert item.id == "tart" and item.signals["time"] == 1.0


def test_importance_is_judged_when_not_given(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        given = c.remember("a Quokkaplex note with its importance", importance=0.7)
        judged = c.remember("it is what it is")  # stop words only: nothing new
    assert (given.importance, judged.importance) == (0.7, 0.1)
    out = daemon.cli("remember", "Zebracorn tundra expedition", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["importance"] == 0.9  # words the memory never held
    bad = daemon.cli("remember", "x", "--importance", "1.5")
    assert bad.returncode == 2 and "1.5 is not in the range" in bad.stderr


def test_cli_remember_and_recall_json(daemon: DaemonProcess) -> None:
    out = daemon.cli(
        "remember", "deploys go out on Tuesdays after the standup", "--session", "ops", "--json"
    )
    assert out.returncode == 0, out.stderr
    bead = json.loads(out.stdout)
    out = daemon.cli("recall", "when do deploys go out?", "-k", "3", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    item = next(i for i in result["items"] if i["id"] == bead["id"])
    assert {"id", "kind", "text", "score", "signals", "provenance"} <= set(item)
    assert item["provenance"]["origin_replica"] == daemon.once("status")["replica_id"]
    human = daemon.cli("recall", "when do deploys go out?", "-k", "3")
    assert "why: keyword" in human.stdout and bead["id"] in human.stdout


def test_raw_http_with_version_header(daemon: DaemonProcess) -> None:
    status, headers, body = raw_http(
        daemon.socket, b"GET /_ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    assert (status, body) == (200, b"OK")
    assert headers["chrysalis-version"] == "0.1.0"
    payload = json.dumps({"content": "raw http bead", "id": "raw-1"}).encode()
    request = (
        b"POST /v1/beads HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(payload), payload)
    )
    status, headers, body = raw_http(daemon.socket, request)
    assert status == 201 and json.loads(body)["id"] == "raw-1"
    status, _, body = raw_http(
        daemon.socket, b"GET /v1/beads/raw-1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    assert status == 200 and json.loads(body)["content"] == "raw http bead"


def test_persona_and_skills_round_trip(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        p = c.put_persona(
            {
                "name": "Ada",
                "description": "a careful helper",
                "goals": ["ship"],
                "traits": {"tone": "dry"},
            }
        )
        assert c.get_persona() == p
        s = c.put_skill(
            {
                "id": "deploy",
                "name": "Deploy",
                "signature": "deploy(env)",
                "examples": ["deploy(prod)"],
            }
        )
        assert c.get_skill("deploy") == s
        assert "deploy" in [x.id for x in c.list_skills()]
        c.delete_skill("deploy")
        with pytest.raises(NotFound):
            c.get_skill("deploy")
    out = daemon.cli("skill", "put", "-", input=json.dumps({"id": "grep", "name": "Grep"}))
    assert out.returncode == 0, out.stderr
    listed = json.loads(daemon.cli("skill", "list", "--json").stdout)
    assert [s["id"] for s in listed] == ["grep"]
    shown = json.loads(daemon.cli("persona", "show", "--json").stdout)
    assert shown["name"] == "Ada" and shown["traits"] == {"tone": "dry"}


def test_fact_then_neighbors(daemon: DaemonProcess) -> None:
    out = daemon.cli("fact", "Alice", "works_at", "Acme Corp")
    assert out.returncode == 0, out.stderr
    assert "alice -[works_at]-> acme-corp" in out.stdout
    again = daemon.cli("fact", "Alice", "works_at", "Acme Corp", "--json")
    with daemon.client() as c:
        (n,) = c.neighbors("alice")
        assert (n.node.id, n.node.name, n.edge.predicate, n.direction) == (
            "acme-corp",
            "Acme Corp",
            "works_at",
            "out",
        )
        assert json.loads(again.stdout)["id"] == n.edge.id  # the same fact is one edge
        assert [x.node.id for x in c.neighbors("acme-corp")] == ["alice"]


def test_forget_is_gone_from_recall(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        bead = c.remember("the wifi password is hunter2-zebra", id="secret-1")
        assert c.recall("wifi password zebra", k=3).items[0].id == bead.id
    out = daemon.cli("forget", "secret-1")
    assert out.returncode == 0 and "forget receipt for secret-1" in out.stdout
    with daemon.client() as c:
        assert all(i.id != "secret-1" for i in c.recall("wifi password zebra", k=10).items)
        with pytest.raises(NotFound, match="forgotten"):
            c.get_bead("secret-1")
        with pytest.raises(Conflict):  # ids are never reused
            c.remember("again", id="secret-1")


def test_errors_come_back_as_library_classes(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        with pytest.raises(InvalidInput, match="k"):
            c.recall("x", k=0)
        with pytest.raises(NotFound, match="no node"):
            c.neighbors("nobody-here")
    out = daemon.cli("forget", "no-such-bead")
    assert out.returncode == 1
    assert out.stderr.strip() == "error: no bead 'no-such-bead'"


def test_status_reports_what_the_issue_lists(daemon: DaemonProcess) -> None:
    # a bead of its own: the module's other tests may run on another worker (xdist)
    daemon.once("remember", "a bead for the status's counts", session_id="status")
    out = daemon.cli("status", "--json")
    s = json.loads(out.stdout)
    assert {"replica_id", "state_digest", "counts", "index", "embedder", "jobs", "sync"} <= set(s)
    assert s["embedder"] == {"provider": "deterministic", "model": "chrysalis-hash-v1-384"}
    assert s["counts"]["beads"] >= 1
    (disk,) = [j for j in s["jobs"] if j["name"] == "disk"]
    assert (
        disk["runs"] >= 1 and disk["last_error"] is None and disk["last_result"]["free_bytes"] > 0
    )
    human = daemon.cli("status").stdout
    assert s["replica_id"] in human and "no remote configured" in human
    metrics = daemon.once("metrics")
    assert 'chrysalis_http_requests_total{method="GET",route="/v1/status",status="200"}' in metrics


def test_async_client(daemon: DaemonProcess) -> None:
    async def go() -> None:
        async with AsyncClient(daemon.socket) as c:
            beads = await asyncio.gather(
                *(c.remember(f"async note number {i}", session_id="async") for i in range(8))
            )
            assert len({b.id for b in beads}) == 8
            # The ranking below wants every vector in: a bead not yet embedded lacks the emb
            # signal its twins have (written at once, eight near-copies rank on it).
            for _ in range(200):
                if not any((await c.status())["index"]["behind"].values()):
                    break
                await asyncio.sleep(0.05)
            got = await c.recall("async note number 5", k=3, filters={"session_id": "async"})
            assert got.items[0].id == beads[5].id
            assert len(await c.last_beads(8, session_id="async")) == 8

    asyncio.run(go())


def test_export_import_is_idempotent(
    daemon: DaemonProcess, fresh: DaemonProcess, tmp_path: Path
) -> None:
    dump = tmp_path / "x.jsonl"
    assert daemon.cli("export", str(dump)).returncode == 0
    again = json.loads(daemon.cli("import", str(dump), "--json").stdout)
    assert sum(again["added"].values()) == 0 and sum(again["unchanged"].values()) > 0
    fresh.start()
    first = json.loads(fresh.cli("import", str(dump), "--json").stdout)
    second = json.loads(fresh.cli("import", str(dump), "--json").stdout)
    assert first["added"]["bead"] == daemon.once("status")["counts"]["beads"]
    assert sum(second["added"].values()) == 0
    assert fresh.once("get_persona") == daemon.once("get_persona")
    assert fresh.stop() == 0


def test_socket_is_private_and_browsers_are_refused(daemon: DaemonProcess) -> None:
    assert stat.S_IMODE(daemon.socket.stat().st_mode) == 0o600
    for header in (b"Origin: http://evil.example", b"Referer: http://evil.example/page"):
        status, _, body = raw_http(
            daemon.socket,
            b"GET /v1/status HTTP/1.1\r\nHost: x\r\n%s\r\nConnection: close\r\n\r\n" % header,
        )
        assert status == 403
        assert json.loads(body)["error"]["code"] == "forbidden"


@pytest.mark.skipif(
    os.getuid() != 0 or not hasattr(socket, "SO_PEERCRED"),
    reason="needs root to act as another user",
)
def test_another_user_is_refused_by_peer_uid(daemon: DaemonProcess) -> None:
    daemon.socket.chmod(0o666)  # let the file mode through, so the uid check is what refuses
    daemon.sock_dir.chmod(0o755)
    try:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child becomes "nobody" and knocks
            try:
                os.setgid(65534)
                os.setuid(65534)
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                    s.settimeout(10)
                    s.connect(str(daemon.socket))
                    s.sendall(b"GET /v1/status HTTP/1.1\r\nHost: x\r\n\r\n")
                    os.write(write, s.recv(4096))
            except BaseException as exc:
                os.write(write, f"child failed: {exc!r}".encode())
            finally:
                os._exit(0)
        os.close(write)
        os.waitpid(pid, 0)
        answer = os.read(read, 4096).decode()
        os.close(read)
        assert answer.startswith("HTTP/1.1 403"), answer
        assert "serves its owner only" in answer
    finally:
        daemon.socket.chmod(0o600)
        daemon.sock_dir.chmod(0o700)


def test_restart_keeps_everything_and_sigterm_exits_zero(fresh: DaemonProcess) -> None:
    fresh.start()
    with fresh.client() as c:
        bead = c.remember("the boiler code is 4471", session_id="house")
        c.put_persona({"name": "Keeper"})
        c.put_skill({"id": "boil", "name": "Boil water"})
        c.add_node("boiler", "thing")
        c.add_node("house", "place")
        edge = c.add_edge("boiler", "house", "located_in")
        eventually(
            lambda: c.status()["index"]["behind"],
            until=lambda b: not any(b.values()),
            timeout=30,
            what="the indexes to catch up",
        )  # embeddings are ops too
        digest = c.status()["state_digest"]
    assert fresh.stop(signal.SIGTERM) == 0
    assert not fresh.socket.exists()
    assert "stopped cleanly" in fresh.output()
    fresh.start()
    with fresh.client() as c:
        assert c.get_bead(bead.id) == bead
        assert c.get_persona().name == "Keeper"
        assert c.get_skill("boil").name == "Boil water"
        assert c.neighbors("boiler")[0].edge == edge
        assert c.recall("boiler code", k=1).items[0].id == bead.id
        assert c.status()["state_digest"] == digest
    assert fresh.stop(signal.SIGINT) == 0


def test_acknowledged_writes_survive_a_sigterm_mid_load(fresh: DaemonProcess) -> None:
    fresh.env["CHRYSALIS_DURABLE"] = "true"
    fresh.start()
    acked: list[str] = []
    stop = threading.Event()

    def writer(n: int) -> None:
        with fresh.client(timeout=10) as c:
            i = 0
            while not stop.is_set():
                try:
                    acked.append(c.remember(f"writer {n} note {i}").id)
                except Exception:
                    return  # the daemon went away: this write was not acknowledged
                i += 1

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    while len(acked) < 200:
        threading.Event().wait(0.01)
    assert fresh.stop(signal.SIGTERM) == 0
    stop.set()
    for t in threads:
        t.join()
    fresh.start()
    with fresh.client() as c:
        for bead_id in acked:
            c.get_bead(bead_id)
    fresh.stop()


def test_second_daemon_is_refused(daemon: DaemonProcess, tmp_path: Path) -> None:
    same_dir = DaemonProcess(daemon.data_dir)
    try:
        same_dir.start(wait=False)
        assert same_dir.proc is not None and same_dir.proc.wait(30) == 1
        assert "in use by another process" in same_dir.output()
    finally:
        same_dir.close()
    same_socket = DaemonProcess(tmp_path / "other", env={"CHRYSALIS_SOCKET": str(daemon.socket)})
    try:
        same_socket.start(wait=False)
        assert same_socket.proc is not None and same_socket.proc.wait(30) == 1
        assert "already listening" in same_socket.output()
    finally:
        same_socket.close()
    assert daemon.once("ping")


def test_stale_socket_is_replaced_and_a_plain_file_is_not(fresh: DaemonProcess) -> None:
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(fresh.socket))
    stale.close()  # the file stays; nothing listens
    fresh.start()
    assert fresh.once("ping")
    assert fresh.stop() == 0
    fresh.socket.write_text("not a socket")
    fresh.start(wait=False)
    assert fresh.proc is not None and fresh.proc.wait(30) == 1
    assert "exists and is not a socket" in fresh.output()


def test_default_socket_dir_is_made_0700(tmp_path: Path) -> None:
    runtime = Path(tempfile_short())
    d = DaemonProcess(tmp_path / "data", env={"XDG_RUNTIME_DIR": str(runtime)})
    del d.env["CHRYSALIS_SOCKET"]
    d.socket = runtime / "chrysalis" / "chrysalis.sock"
    try:
        d.start()
        assert stat.S_IMODE((runtime / "chrysalis").stat().st_mode) == 0o700
        assert stat.S_IMODE(d.socket.stat().st_mode) == 0o600
        assert d.stop() == 0
    finally:
        d.close()


def tempfile_short() -> str:
    import tempfile

    return tempfile.mkdtemp(prefix="chr-rt-", dir="/tmp")


def test_no_daemon_gets_a_hint(tmp_path: Path) -> None:
    nowhere = Path(tempfile_short()) / "none.sock"
    with (
        pytest.raises(DaemonNotRunning, match="start it with `chrysalis daemon`"),
        Client(nowhere) as c,
    ):
        c.status()
    out = subprocess.run(
        [sys.executable, "-m", "chrysalisd", "--socket", str(nowhere), "recall", "x"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1
    assert out.stderr.startswith(f"error: no daemon at {nowhere}; start it with `chrysalis daemon`")
    assert "Traceback" not in out.stderr


def test_bad_config_names_the_key(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('embeder = "deterministic"\n')
    d = DaemonProcess(tmp_path / "data")
    try:
        d.start("--config", str(cfg), wait=False)
        assert d.proc is not None and d.proc.wait(30) == 2
        assert "unknown key 'embeder'" in d.output()
        d.env["CHRYSALIS_MAX_BODY_BYTES"] = "lots"
        d.start(wait=False)
        assert d.proc.wait(30) == 2
        assert "CHRYSALIS_MAX_BODY_BYTES" in d.output()
    finally:
        d.close()


def test_client_commands_do_not_load_the_engine() -> None:
    code = (
        "import sys, chrysalisd.cli, chrysalis.client;"
        "heavy = {'faiss', 'numpy', 'lmdb', 'boto3', 'pydantic', 'chrysalis.memory'} & set(sys.modules);"
        "print(sorted(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_every_cli_command_has_an_example() -> None:
    import click

    from chrysalisd.cli import main

    def walk(cmd: click.Command, path: str) -> Iterator[tuple[str, click.Command]]:
        yield path, cmd
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                yield from walk(sub, f"{path} {name}")

    for path, cmd in walk(main, "chrysalis"):
        assert "Example:" in (cmd.help or ""), f"{path} --help has no example"


def test_json_log_lines_hold_their_fields_only() -> None:
    import logging

    from chrysalisd.server import JsonFormatter

    fmt = JsonFormatter()
    record = logging.LogRecord(
        "chrysalisd.x", logging.WARNING, __file__, 1, "hé %s", ("tea",), None
    )
    record.__dict__.update(color_message="uvicorn's", zep_api_key="s3cret")  # as extra= sets them
    line = fmt.format(record)
    assert "s3cret" not in line and "hé tea" in line  # one line, UTF-8 kept
    got = json.loads(line)
    assert list(got) == ["ts", "level", "logger", "msg"]
    assert got["level"] == "warning" and got["logger"] == "chrysalisd.x"
    assert got["ts"].endswith("+00:00") and len(got["ts"]) == len("2026-01-01T00:00:00.000+00:00")
    try:
        raise ZeroDivisionError("no")
    except ZeroDivisionError:
        failed = logging.LogRecord("x", logging.ERROR, __file__, 1, "boom", (), sys.exc_info())
    got = json.loads(fmt.format(failed))
    assert list(got) == ["ts", "level", "logger", "msg", "exc"]
    assert got["exc"].startswith("Traceback") and got["exc"].endswith("ZeroDivisionError: no")


def test_only_a_daemon_of_its_own_freezes_what_start_up_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`main` (a daemon process) hides its start-up heap from the cyclic GC; a daemon served
    on a thread of another program (a test's) leaves that program's collector alone."""
    import functools
    import gc

    from chrysalisd import server
    from chrysalisd.config import Settings

    asked: list[bool] = []
    monkeypatch.setattr(server, "configure_logging", lambda *a: None)  # this process's logs
    monkeypatch.setattr(
        server, "run", lambda settings, stop=None, *, freeze=False: asked.append(freeze)
    )
    assert server.main(Settings(data_dir=tmp_path / "unused")) == 0
    assert asked == [True]
    monkeypatch.undo()

    assert gc.get_freeze_count() == 0
    plain = DaemonThread(tmp_path / "plain").start()
    try:
        with plain.client() as c:
            assert c.ping()
        assert gc.get_freeze_count() == 0
    finally:
        plain.stop()
    monkeypatch.setattr(server, "run", functools.partial(server.run, freeze=True))
    frozen = DaemonThread(tmp_path / "frozen").start()
    try:
        assert gc.get_freeze_count() > 1000  # modules, schemas, the memory's indexes
        with frozen.client() as c:
            assert c.remember("still serving after the freeze").content
    finally:
        frozen.stop()
        gc.unfreeze()  # this process's collector as it was


def test_recalls_begun_and_never_finished_do_not_hold_the_others_back(
    daemon: DaemonProcess,
) -> None:
    """At most `READS_AT_ONCE` recalls compute at once. A client that starts more recalls than
    that, sends half of each body and waits (or asks and never reads the answer) holds no
    slot: a slot is taken only while the recall computes."""
    from chrysalis.extract.worker import READS_AT_ONCE

    with daemon.client() as c:
        c.remember("the user keeps bees on the roof", session_id="s1")
        # an answer of ~300 kB: more than the socket buffers hold, so one never read blocks
        c.remember_many({"content": f"bees note {i}: " + "honey and wax " * 60} for i in range(200))
        body = json.dumps({"query": "bees honey", "k": 200}).encode()
        stalled = []
        for _ in range(READS_AT_ONCE * 2):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(str(daemon.socket))
            s.sendall(
                b"POST /v1/retrieve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body[:5]
            )
            stalled.append(s)
        for _ in range(READS_AT_ONCE * 2):  # asked in full, the answers never read
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.connect(str(daemon.socket))
            s.sendall(
                b"POST /v1/retrieve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
            )
            stalled.append(s)
        try:
            with daemon.client(timeout=10.0) as asker:  # held back, it would time out
                assert asker.recall("bees", k=1).items
        finally:
            for s in stalled:
                s.close()
