"""A disk that fills up: writes are refused with `InsufficientStorage` (507) before LMDB hits
the wall, reads go on, writes resume when space returns, and nothing acknowledged is lost."""

from __future__ import annotations

import logging
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from chrysalis import Memory
from chrysalis.errors import InsufficientStorage
from chrysalis.models import Bead
from chrysalis.store import WriteContext
from tests.eventually import eventually

from .daemon_process import DaemonProcess

MiB = 2**20


class FakeDisk:
    """``os.statvfs`` answering a free figure the test sets (in bytes)."""

    def __init__(self, free: int) -> None:
        self.free = free
        self.calls = 0

    def __call__(self, path: Any) -> Any:
        self.calls += 1
        return SimpleNamespace(f_bavail=self.free // 4096, f_frsize=4096)


@pytest.fixture
def disk(monkeypatch: pytest.MonkeyPatch) -> FakeDisk:
    fake = FakeDisk(10_000 * MiB)
    monkeypatch.setattr(os, "statvfs", fake)
    return fake


def test_writes_are_refused_below_the_floor_reads_go_on_and_writes_resume(
    tmp_path: Path, disk: FakeDisk
) -> None:
    with Memory.open(tmp_path / "m", sync=False, min_free_bytes=100 * MiB) as m:
        m.append_bead("kept", id="b1")
        digest = m.state_digest()
        disk.free = 42 * MiB
        time.sleep(0.6)  # past the time a figure far from the floor is trusted
        with pytest.raises(InsufficientStorage) as err:
            m.append_bead("refused", id="b2")
        assert err.value.message.startswith(
            f"the disk holding {tmp_path / 'm'} has 42 MiB free; writes are refused below 100 MiB"
        )
        assert (err.value.code, err.value.status) == ("disk_full", 507)
        for write in (
            lambda: m.add_node("n", "thing"),
            lambda: m.put_skill({"id": "s", "name": "s"}),
            lambda: m.update_persona(name="x"),
            lambda: m.forget("b1"),
            lambda: m.store.put_meta("cursor", 1),
        ):
            with pytest.raises(InsufficientStorage):
                write()
        assert m.get_bead("b1").content == "kept"  # reads go on
        assert m.state_digest() == digest  # a refused write is not half done
        disk.free = 300 * MiB  # space returns: checked again at once while near the floor
        assert m.append_bead("accepted", id="b2").id == "b2"
        assert [b.id for b in m.all_beads()] == ["b1", "b2"]


def test_far_from_the_floor_the_disk_is_asked_at_most_every_half_second(
    tmp_path: Path, disk: FakeDisk
) -> None:
    with Memory.open(tmp_path / "m", sync=False, min_free_bytes=MiB) as m:
        m.append_bead("first")
        before = disk.calls
        m.append_beads([{"content": f"bead {i}"} for i in range(5)])
        for i in range(20):
            m.append_bead(f"more {i}")
        assert disk.calls - before <= 1


def test_without_a_floor_the_disk_is_never_asked(tmp_path: Path, disk: FakeDisk) -> None:
    with Memory.open(tmp_path / "m", sync=False) as m:
        before = disk.calls
        m.append_bead("x")
        assert disk.calls == before


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """An 8 MiB tmpfs (needs root; skipped where mounting is not permitted)."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(path: Path, leave: int) -> Path:
    """A ballast file that leaves about ``leave`` bytes free on the disk holding ``path``."""
    st = os.statvfs(path)
    ballast = path / "ballast"
    size = st.f_bavail * st.f_frsize - leave
    with open(ballast, "wb") as f:
        f.write(b"\0" * max(size, 0))
    return ballast


def test_a_real_full_disk_refuses_writes_then_resumes(small_disk: Path) -> None:
    with Memory.open(small_disk / "m", sync=True, map_size=4 * MiB, min_free_bytes=MiB) as m:
        m.append_bead("kept", id="b1")
        ballast = _fill(small_disk, leave=MiB // 2)
        time.sleep(0.6)  # past the time a figure far from the floor is trusted
        with pytest.raises(InsufficientStorage, match="has 0 MiB free"):
            m.append_bead("refused", id="b2")
        assert m.get_bead("b1").content == "kept"
        ballast.unlink()
        m.append_bead("accepted", id="b2")
        assert [b.id for b in m.all_beads()] == ["b1", "b2"]


def test_a_commit_that_hits_a_full_disk_is_disk_full_not_a_store_error(small_disk: Path) -> None:
    with Memory.open(small_disk / "m", sync=True, map_size=4 * MiB) as m:  # no floor
        m.append_bead("kept", id="b1")
        ballast = _fill(small_disk, leave=0)
        with pytest.raises(InsufficientStorage, match="the disk holding"):
            m.append_beads([{"content": "x" * 2000, "id": f"big-{i}"} for i in range(2000)])
        assert m.get_bead("b1").content == "kept"
        ballast.unlink()
        m.append_bead("accepted", id="b2")
        assert {b.id for b in m.all_beads()} == {"b1", "b2"}


# ---- through a real daemon ---------------------------------------------------------------------


def test_the_daemon_answers_507_on_writes_200_on_reads_and_resumes(tmp_path: Path) -> None:
    """The floor sits 256 MiB under the free space; a 512 MiB ballast crosses it."""
    st = os.statvfs(tmp_path)
    free = st.f_bavail * st.f_frsize
    if free < 2048 * MiB:
        pytest.skip("needs 2 GiB free for the ballast")
    floor = free - 256 * MiB
    d = DaemonProcess(tmp_path / "data", env={"CHRYSALIS_MIN_FREE_DISK_BYTES": str(floor)})
    d.start()
    try:
        transport = httpx.HTTPTransport(uds=str(d.socket))
        with httpx.Client(transport=transport, base_url="http://chrysalis", timeout=30) as http:
            ok = http.post("/v1/beads", json={"content": "kept", "id": "b1"})
            assert ok.status_code == 201, ok.text
            ballast = tmp_path / "ballast"
            with open(ballast, "wb") as f:
                os.posix_fallocate(f.fileno(), 0, 512 * MiB)
            try:
                refused = http.post("/v1/beads", json={"content": "refused", "id": "b2"})
                assert refused.status_code == 507, refused.text
                error = refused.json()["error"]
                assert error["code"] == "disk_full"
                assert error["message"].startswith(f"the disk holding {tmp_path / 'data'} has ")
                assert http.get("/v1/beads/b1").status_code == 200
                assert http.get("/v1/status").status_code == 200
                assert http.get("/v1/beads/b2").status_code == 404
            finally:
                ballast.unlink()
            again = http.post("/v1/beads", json={"content": "accepted", "id": "b2"})
            assert again.status_code == 201, again.text
            assert http.get("/v1/beads/b2").json()["content"] == "accepted"
    finally:
        assert d.stop() == 0, d.output()
        d.close()


# ---- background writers pause, they do not crash -----------------------------------------------


def test_the_indexer_pauses_while_the_disk_is_full_and_catches_up_after(
    tmp_path: Path, disk: FakeDisk, caplog: pytest.LogCaptureFixture
) -> None:
    with Memory.open(tmp_path / "m", sync=False, embedder="deterministic") as m:
        m.wait_indexed(30)

        def fill_up(ctx: WriteContext) -> Bead:
            # The disk fills up as the bead commits, before the indexer hears of it: its
            # vector (the indexer's own write) is refused.
            bead = m.append_bead("written just before the disk filled up")
            m.store.min_free_bytes, disk.free = 100 * MiB, MiB
            return bead

        bead = m.store.write(fill_up)
        eventually(lambda: m.indexer.status()["last_error"], timeout=10,
                   what="the indexer to try", interval=0.02)  # fmt: skip
        assert "has 1 MiB free" in m.indexer.status()["last_error"]
        assert m.indexer._thread.is_alive()
        paused = [r for r in caplog.records if "indexing paused" in r.getMessage()]
        assert len(paused) == 1
        disk.free = 10_000 * MiB
        m.wait_indexed(30)
        assert m.get_embedding("bead", bead.id, m.indexer.embedder.model).item_id == bead.id


def test_a_sync_job_pauses_on_a_full_disk_and_says_so_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from chrysalisd.config import Settings
    from chrysalisd.state import Daemon

    caplog.set_level(logging.INFO, logger="chrysalisd")
    with Memory.open(tmp_path / "m", sync=False) as m:
        daemon = Daemon(Settings(), m)
        calls: list[int] = []

        def pull() -> dict[str, Any]:
            calls.append(1)
            if len(calls) < 3:
                m.store.check_space()  # under the floor below: refused like a pulled op
            return {"pulled": 0}

        job = daemon._pausing("pull", pull)
        m.store.min_free_bytes = 2**62
        first, second = job(), job()
        assert first["paused"] == second["paused"] == "disk_full"
        assert first["error"].startswith(f"the disk holding {tmp_path / 'm'} has ")
        m.store.min_free_bytes = 0
        assert job() == {"pulled": 0}
        said = [r.getMessage() for r in caplog.records if "job pull" in r.getMessage()]
        assert len(said) == 2 and "paused" in said[0] and "resumed" in said[1]


def test_lmdb_out_of_space_failures_are_recognised() -> None:
    import errno

    import lmdb

    from chrysalis.store import _out_of_space

    assert _out_of_space(lmdb.DiskError("mdb_txn_commit: No space left on device", 28))
    assert _out_of_space(lmdb.Error("mdb_txn_commit: Input/output error", errno.EIO))
    assert _out_of_space(OSError(errno.ENOSPC, "No space left on device"))
    assert not _out_of_space(lmdb.CorruptedError("mdb_get: MDB_CORRUPTED", -30796))
    assert not _out_of_space(ValueError("no"))


def test_a_large_bead_is_refused_before_its_blob_file_is_written(
    tmp_path: Path, disk: FakeDisk
) -> None:
    with Memory.open(tmp_path / "m", sync=False, min_free_bytes=100 * MiB) as m:
        disk.free = 42 * MiB
        time.sleep(0.6)
        with pytest.raises(InsufficientStorage):
            m.append_bead("x" * 200_000, id="big")
        assert not any(p.is_file() for p in (tmp_path / "m" / "blobs").rglob("*"))
