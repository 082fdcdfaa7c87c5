"""Daemons as subprocesses syncing through a real remote: a folder, and S3 on 127.0.0.1."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.daemon_process import DaemonProcess, DaemonThread
from tests.eventually import eventually
from tests.remote_fixtures import S3Server

QUIET = {  # the test drives sync with `chrysalis sync`; the schedule stays out of the way
    "CHRYSALIS_PUSH_INTERVAL": "3600",
    "CHRYSALIS_PULL_INTERVAL": "3600",
}


@pytest.fixture
def daemons(tmp_path: Path) -> Iterator[Callable[..., DaemonProcess]]:
    started: list[DaemonProcess] = []

    def start(name: str, *args: str, env: dict[str, str] | None = None) -> DaemonProcess:
        # a fault kills the daemon's process: that one needs a process of its own
        kind = DaemonProcess if "CHRYSALIS_FAULT" in (env or {}) else DaemonThread
        d = kind(tmp_path / name, env={**QUIET, **(env or {})})
        started.append(d)
        return d.start(*args)

    yield start
    for d in started:
        d.close()


def sync(d: DaemonProcess, *args: str) -> tuple[int, dict[str, Any]]:
    out = d.cli("sync", "--json", *args)
    assert out.stdout, out.stderr
    return out.returncode, json.loads(out.stdout)


def wait_indexed(d: DaemonProcess, timeout: float = 20.0) -> None:
    eventually(lambda: d.once("status")["index"]["behind"], until=lambda b: not any(b.values()),
               timeout=timeout, what="the indexes to catch up")  # fmt: skip


@pytest.mark.parametrize("kind", ["file", "s3"])
def test_three_daemons_work_offline_then_converge(
    daemons: Callable[..., DaemonProcess], tmp_path: Path, kind: str, request: Any
) -> None:
    s3: S3Server | None = None
    if kind == "file":
        folder = tmp_path / "shared"  # not there yet: the shared folder is "not mounted"
        url = f"file://{folder}"
    else:
        s3 = request.getfixturevalue("s3_server")
        url = s3.url(s3.new_bucket())
        s3.stop()  # the S3 server is down
    try:
        ds = [daemons(n, "--remote", url) for n in ("laptop-a", "laptop-b", "laptop-c")]
        ids = [d.once("status")["replica_id"] for d in ds]
        for d, name in zip(ds, "abc", strict=True):
            for i in range(3):
                d.once(
                    "remember", f"offline note {i} from laptop {name} zq{name}{i}", id=f"{name}{i}"
                )
        for d in ds:
            code, result = sync(d)
            assert code == 1 and not result["ok"]
            assert "Unavailable" in json.dumps(result) or "unavailable" in json.dumps(result)
            assert d.once("status")["sync"]["remote"]["consecutive_errors"] >= 1
        assert ds[0].once("status")["counts"]["beads"] == 3  # writes went on meanwhile
        if kind == "file":
            folder.mkdir()
        else:
            assert s3 is not None
            s3.start()
        for d in ds:
            wait_indexed(d)  # vectors are ops too: all made before the last round
        for _ in range(2):
            for d in ds:
                code, result = sync(d)
                assert code == 0 and result["ok"], result
        statuses = [d.once("status") for d in ds]
        assert len({s["state_digest"] for s in statuses}) == 1
        for s in statuses:
            remote = s["sync"]["remote"]
            assert remote["pending_ops"] == 0 and remote["consecutive_errors"] == 0
            assert {p["replica"] for p in remote["peers"]} == set(ids) - {s["replica_id"]}
        for d in ds:
            for origin, name in zip(ids, "abc", strict=True):
                items = d.once("recall", f"zq{name}1", k=3, strategy="keyword").items
                assert items[0].id == f"{name}1"
                assert items[0].provenance["origin_replica"] == origin
        text = ds[0].cli("status").stdout
        assert url.split("?")[0] in text and "lag 0 ops" in text
    finally:
        if s3 is not None:
            s3.start()


@pytest.mark.parametrize("kind", ["file", "s3"])
def test_sigkill_between_segment_put_and_cursor(
    daemons: Callable[..., DaemonProcess], tmp_path: Path, kind: str, request: Any
) -> None:
    if kind == "file":
        (tmp_path / "shared").mkdir()
        url = f"file://{tmp_path / 'shared'}"
    else:
        s3 = request.getfixturevalue("s3_server")
        url = s3.url(s3.new_bucket())
    a = daemons("a", "--remote", url, env={"CHRYSALIS_FAULT": "after-segment-put"})
    for i in range(5):
        a.once("remember", f"acknowledged before the crash {i}", id=f"k{i}")
    wait_indexed(a)  # its vectors are ops too: all of them in the one segment
    out = a.cli("sync", "--push")
    assert out.returncode != 0
    assert a.proc is not None and a.proc.wait(10) == -9  # killed after the put, before the cursor
    a.env.pop("CHRYSALIS_FAULT")
    a.start("--remote", url)
    code, result = sync(a, "--push")
    assert code == 0 and result["remote"]["push"]["objects"] == 0  # found its segment there
    a_status = a.once("status")
    written = a_status["version_vector"][a_status["replica_id"]]  # beads and their vectors
    assert result["remote"]["push"]["ops"] == written >= 5
    b = daemons("b", "--remote", url)
    assert sync(b)[0] == 0
    assert b.once("status")["version_vector"][a_status["replica_id"]] == written
    assert b.once("status")["state_digest"] == a.once("status")["state_digest"]
    assert b.once("status")["counts"]["beads"] == 5


def test_copied_data_dir_is_a_new_replica_and_memory_stays_whole(
    daemons: Callable[..., DaemonProcess], tmp_path: Path
) -> None:
    (tmp_path / "shared").mkdir()
    url = f"file://{tmp_path / 'shared'}"
    a = daemons("a", "--remote", url)
    a.once("remember", "before the copy", id="before")
    assert sync(a)[0] == 0
    a.once("remember", "written but not pushed before the copy", id="unpushed")
    first_id = a.once("status")["replica_id"]
    assert a.stop() == 0
    shutil.copytree(tmp_path / "a", tmp_path / "copy")  # the second laptop gets a copy
    a.start("--remote", url)
    copy = daemons("copy", "--remote", url)
    assert a.once("status")["replica_id"] == first_id
    copy_id = copy.once("status")["replica_id"]
    assert copy_id != first_id
    a.once("remember", "original after", id="orig-after")
    copy.once("remember", "copy after", id="copy-after")
    third = daemons("third", "--remote", url)
    for d in (a, copy):
        wait_indexed(d)
    for _ in range(2):
        for d in (copy, a, third):
            code, result = sync(d)
            assert code == 0, result
    digests = {d.once("status")["state_digest"] for d in (a, copy, third)}
    assert len(digests) == 1
    assert {b.id for b in third.once("last_beads", 100)} >= {
        "before",
        "unpushed",
        "orig-after",
        "copy-after",
    }
    assert "new generation" in copy.output()


def test_sync_without_a_remote_says_so(
    daemons: Callable[..., DaemonProcess],
) -> None:
    d = daemons("solo")
    out = d.cli("sync")
    assert out.returncode == 1
    assert "no remote configured" in out.stderr
    assert "sync      no remote configured" in d.cli("status").stdout


def test_bad_sync_key_file_stops_the_daemon_at_start(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    d = DaemonProcess(tmp_path / "k", env=QUIET)
    try:
        d.start(
            "--remote", f"file://{tmp_path / 'shared'}", "--sync-key-file", str(tmp_path / "nope"),
            wait=False,
        )  # fmt: skip
        assert d.proc is not None and d.proc.wait(30) == 1
        assert "cannot read sync key file" in d.output()
    finally:
        d.close()


def test_decommission_a_laptop_from_the_cli(
    daemons: Callable[..., DaemonProcess], tmp_path: Path
) -> None:
    (tmp_path / "shared").mkdir()
    url = f"file://{tmp_path / 'shared'}"
    a, b = daemons("a", "--remote", url), daemons("b", "--remote", url)
    b.once("remember", "the old laptop's last note", id="old")
    assert sync(b)[0] == 0
    gone = b.once("status")["replica_id"]
    assert b.stop() == 0
    code, result = sync(a, "--decommission", gone)
    assert code == 0, result
    peers = {p["replica"]: p for p in a.once("status")["sync"]["remote"]["peers"]}
    assert peers[gone]["decommissioned"]
    assert a.once("get_bead", "old").content == "the old laptop's last note"
    bad = a.cli("sync", "--decommission", "no-such-laptop")
    assert bad.returncode == 1 and "no replica" in bad.stdout + bad.stderr


def test_a_deleted_format_is_refused_then_repaired_from_the_cli(
    daemons: Callable[..., DaemonProcess], tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    a = daemons("a", "--remote", f"file://{shared}")
    a.once("remember", "before the format went", id="x1")
    assert sync(a)[0] == 0
    (shared / "format.json").unlink()
    code, result = sync(a)  # the running daemon notices on its next full pull
    assert code == 1
    assert "chrysalis sync --repair-format" in result["remote"]["pull"]["error"]
    code, result = sync(a)  # and its push too, from then on
    assert code == 1
    assert "chrysalis sync --repair-format" in result["remote"]["push"]["error"]
    assert not (shared / "format.json").exists()
    code, result = sync(a, "--repair-format")
    assert code == 0, result
    assert result["remote"]["repair_format"]["repaired"]
    assert (shared / "format.json").exists()
    human = a.cli("sync", "--repair-format")
    assert human.returncode == 0 and "already right" in human.stdout


def test_the_first_scheduled_push_honours_push_interval(tmp_path: Path) -> None:
    """A daemon told to push every hour does not push two seconds after start (the test
    above raced that push: a push the schedule started under a fault hook killed the daemon
    before the test's own)."""
    from chrysalis import Memory
    from chrysalis.sync import Sync
    from chrysalisd.config import Settings
    from chrysalisd.state import Daemon

    (tmp_path / "remote").mkdir()
    with Memory.open(tmp_path / "m", sync=False) as m:
        for every in (3600.0, 0.5):
            daemon = Daemon(Settings(push_interval=every, pull_interval=3600), m)
            daemon.attach_sync(Sync(m, f"file://{tmp_path / 'remote'}"))
            started = time.time()
            job = daemon.jobs.all.scheduler.get_job("push")
            first = job.next_run_time.timestamp() - started
            assert every - 1 <= first <= every + 1, (every, first)


def test_a_finished_scrub_is_pushed_at_once_not_at_the_next_interval(tmp_path: Path) -> None:
    """Forget receipts on other laptops wait for this replica's scrub report, which a push
    carries: it goes out when the scrub is done, whatever `push_interval` says."""
    from chrysalis import Memory
    from chrysalis.sync import Sync
    from chrysalisd.config import Settings
    from chrysalisd.state import Daemon

    (tmp_path / "remote").mkdir()
    with Memory.open(tmp_path / "m", sync=False, scrub_delay=0.1) as m:
        daemon = Daemon(Settings(push_interval=3600, pull_interval=3600), m)
        daemon.attach_sync(Sync(m, f"file://{tmp_path / 'remote'}"))
        poked: list[str] = []
        daemon.jobs.poke = poked.append  # type: ignore[method-assign]
        bead = m.append_bead("a secret to scrub")
        m.forget(bead.id)
        eventually(lambda: poked, timeout=20, what="a push to be asked for after the scrub")
        assert poked == ["push"] and not m.scrubber.due()
