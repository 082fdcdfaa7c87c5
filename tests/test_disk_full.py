"""A disk that fills up: writes are refused with `InsufficientStorage` (507) before LMDB hits
the wall, reads go on, writes resume when space returns, and nothing acknowledged is lost."""

from __future__ import annotations

import errno
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
from chrysalis.core.errors import InsufficientStorage
from chrysalis.core.models import Bead
from chrysalis.store.env import WriteContext
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

    from chrysalis.store.env import _out_of_space

    assert _out_of_space(lmdb.DiskError("mdb_txn_commit: No space left on device", 28))
    assert _out_of_space(lmdb.Error("mdb_txn_commit: Input/output error", errno.EIO))
    assert _out_of_space(OSError(errno.ENOSPC, "No space left on device"))
    # lmdb's C binding: a bare Error whose only argument is the message (what a full tmpfs
    # gave the red team, answered 503 store_error)
    assert _out_of_space(lmdb.Error("mdb_txn_commit: Input/output error"))
    assert _out_of_space(lmdb.Error("mdb_txn_commit: No space left on device"))
    assert _out_of_space(OSError(errno.EDQUOT, "Disk quota exceeded"))
    assert not _out_of_space(lmdb.CorruptedError("mdb_get: MDB_CORRUPTED", -30796))
    assert not _out_of_space(ValueError("no"))
    assert not _out_of_space(lmdb.Error("mdb_put: MDB_KEYEXIST: Key/data pair already exists"))


def test_every_binding_s_way_of_saying_the_disk_is_full_is_recognised() -> None:
    from chrysalis.core.errors import disk_full, out_of_space

    for exc in (
        OSError(errno.ENOSPC, "No space left on device"),
        OSError(errno.EDQUOT, "Disk quota exceeded"),
        ValueError("Internal error: 'No space left on device (os error 28)'"),  # tantivy
        RuntimeError("write error in /x/m-2.faiss: 4014 != 1280000 (No space left on device)"),
        InsufficientStorage("the disk holding /x has 0 MiB free"),
    ):
        assert out_of_space(exc), exc
    wrapped = RuntimeError("commit failed")
    wrapped.__cause__ = OSError(errno.ENOSPC, "No space left on device")
    assert out_of_space(wrapped)
    assert not out_of_space(OSError(errno.EACCES, "Permission denied"))
    full = disk_full("/nonexistent/place")
    assert (full.status, full.code) == (507, "disk_full")
    assert full.message.startswith("the disk holding /nonexistent/place has 0 MiB free;")


def test_a_large_bead_is_refused_before_its_blob_file_is_written(
    tmp_path: Path, disk: FakeDisk
) -> None:
    with Memory.open(tmp_path / "m", sync=False, min_free_bytes=100 * MiB) as m:
        disk.free = 42 * MiB
        time.sleep(0.6)
        with pytest.raises(InsufficientStorage):
            m.append_bead("x" * 200_000, id="big")
        assert not any(p.is_file() for p in (tmp_path / "m" / "blobs").rglob("*"))


# ---- a real full disk, through every write path ------------------------------------------------


def _fill_up(disk: Path) -> Path:
    """A ballast file that takes every byte the disk holding ``disk`` has left (written until
    the disk refuses, in smaller and smaller pieces): the next write that needs room fails."""
    ballast = disk / f"ballast-{time.monotonic_ns()}"
    with open(ballast, "wb", buffering=0) as f:
        for piece in (MiB, 64 * 1024, 4096, 512, 1):
            try:
                while True:
                    f.write(b"\0" * piece)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
    return ballast


def _text(tag: str, chars: int) -> str:
    """``chars`` characters of prose no two calls share (a blob is named by its bytes)."""
    words = " ".join(f"{tag} word{i}" for i in range(chars // 10))
    return words[:chars]


def _writes(r: int) -> list[tuple[str, str, str, Any]]:
    """Each write path of the daemon, each needing more room than a full disk has (the LMDB
    file must grow; a blob file is written): (what, method, route, body)."""
    return [
        ("bead batch", "POST", "/v1/beads",
         [{"content": _text(f"r{r}b{i}", 15_000), "id": f"r{r}-b{i}"} for i in range(40)]),
        ("bead", "POST", "/v1/beads", {"content": _text(f"r{r}one", 15_000), "id": f"r{r}-one"}),
        ("blob bead", "POST", "/v1/beads", {"content": _text(f"r{r}blob", 300_000),
                                            "id": f"r{r}-blob"}),
        ("ingest", "POST", "/v1/ingest", {"text": _text(f"r{r}ingest", 600_000),
                                          "source": f"notes-{r}.md"}),
        ("skill", "PUT", f"/v1/skills/s{r}",
         {"name": "s", "examples": [_text(f"r{r}s{i}", 40_000) for i in range(20)]}),
        ("persona", "PATCH", "/v1/persona",
         {"goals": [_text(f"r{r}g{i}", 40_000) for i in range(20)]}),
    ]  # fmt: skip


def test_a_real_full_disk_answers_507_naming_it_on_every_write_path_every_time(
    small_disk: Path,
) -> None:
    """No floor (``min_free_disk_bytes = 0``): the disk itself refuses. Every write path
    answers 507 ``disk_full`` naming the data dir, three rounds over; reads go on; space freed,
    writes resume; after a restart every acknowledged bead is there and no refused one."""
    data = small_disk / "data"
    d = DaemonProcess(data, env={"CHRYSALIS_MIN_FREE_DISK_BYTES": "0"})
    d.log = small_disk.parent / "daemon.log"  # not on the disk under test
    d.start()
    acknowledged: set[str] = set()
    try:
        transport = httpx.HTTPTransport(uds=str(d.socket))
        with httpx.Client(transport=transport, base_url="http://chrysalis", timeout=60) as http:
            seeded = http.post("/v1/beads", json=[
                {"content": f"seed {i} about the alpine lake", "id": f"seed-{i}"} for i in range(30)
            ])  # fmt: skip
            assert seeded.status_code == 201, seeded.text
            acknowledged |= {b["id"] for b in seeded.json()}
            ballast = _fill_up(small_disk)
            try:
                for r in range(3):
                    for what, method, route, body in _writes(r):
                        answer = http.request(method, route, json=body)
                        assert answer.status_code == 507, (r, what, answer.text[:300])
                        error = answer.json()["error"]
                        assert error["code"] == "disk_full", (r, what, error)
                        assert error["message"].startswith(f"the disk holding {data}"), error
                    # reads go on, and say what they could not do
                    assert http.get("/v1/status").status_code == 200
                    assert http.get("/v1/beads/seed-0").json()["content"].startswith("seed 0")
                    found = http.post("/v1/retrieve", json={"query": "alpine lake"})
                    assert found.status_code == 200, found.text
            finally:
                ballast.unlink()
            after = http.post("/v1/beads", json={"content": "space is back", "id": "after"})
            assert after.status_code == 201, after.text
            acknowledged.add("after")
            persona = http.patch("/v1/persona", json={"name": "back"})
            assert persona.status_code == 200, persona.text
            # the indexes took the episode too: keyword search and a forget by query work
            found = http.post("/v1/retrieve", json={"query": "space back", "strategy": "keyword"})
            assert [i["id"] for i in found.json()["items"]][:1] == ["after"], found.text
            preview = http.post("/v1/forget", json={"query": "alpine lake"})
            assert preview.status_code == 200 and preview.json()["matched"] == 30, preview.text
    finally:
        assert d.stop() == 0, d.output()
    d.start()
    try:
        with httpx.Client(
            transport=httpx.HTTPTransport(uds=str(d.socket)), base_url="http://chrysalis"
        ) as http:
            stored = {b["id"] for b in http.get("/v1/beads", params={"limit": 1000}).json()}
            assert stored == acknowledged  # every acknowledged bead, and no refused one
            assert http.get("/v1/persona").json()["name"] == "back"
            assert http.get("/v1/skills").json() == []
    finally:
        assert d.stop() == 0, d.output()
        d.close()


def test_the_keyword_index_on_a_full_disk_is_disk_full_and_catches_up_after(
    small_disk: Path,
) -> None:
    """tantivy's writer dies on the I/O error (its message says only "killed"): the index
    answers `InsufficientStorage` naming its disk each time, keeps its last commit's
    watermark (the rows are read again), and takes writes again once there is room."""
    from chrysalis.search.keyword import KeywordIndex

    path = small_disk / "keyword"
    index = KeywordIndex(path)
    try:
        index.apply([("bead:first", "the first row", {})], [], {"r": 1})
        index.commit()
        ballast = _fill_up(small_disk)
        rows = [(f"bead:{i}", _text(f"row{i}", 4000), {}) for i in range(100)]
        for _ in range(3):
            with pytest.raises(InsufficientStorage) as err:
                index.apply(rows, [], {"r": 101})
            assert err.value.message.startswith(f"the disk holding {path}")
            assert index.watermark() == {"r": 1}
            assert index.size == 1 and index.has("bead:first")
        ballast.unlink()
        index.apply(rows, [], {"r": 101})
        index.commit()
        assert index.watermark() == {"r": 101} and index.size == 101
    finally:
        index.close()
    again = KeywordIndex(path)
    try:
        assert again.watermark() == {"r": 101} and again.size == 101
    finally:
        again.close()


def test_a_vector_index_save_on_a_full_disk_is_disk_full_and_leaves_the_saved_one(
    small_disk: Path,
) -> None:
    import numpy as np

    from chrysalis.search.vectors import VectorIndex

    directory = small_disk / "faiss"
    rng = np.random.default_rng(7)
    vectors = VectorIndex(directory, "m", 64)
    vectors.upsert([f"bead:{i}" for i in range(100)], rng.random((100, 64), dtype=np.float32))
    vectors.save()
    saved = sorted(p.name for p in directory.iterdir())
    vectors.upsert([f"bead:{i}" for i in range(100, 5000)], rng.random((4900, 64), np.float32))
    ballast = _fill_up(small_disk)
    for _ in range(3):
        with pytest.raises(InsufficientStorage) as err:
            vectors.save()
        assert err.value.message.startswith(f"the disk holding {directory}")
        assert sorted(p.name for p in directory.iterdir()) == saved  # no half-written file
        loaded = VectorIndex(directory, "m", 64)
        assert loaded.load() and len(loaded) == 100
    ballast.unlink()
    vectors.save()
    loaded = VectorIndex(directory, "m", 64)
    assert loaded.load() and len(loaded) == 5000


class _KilledWriter:
    """What tantivy's writer is after its worker thread died on an I/O error: every call
    fails, long after the disk has room again."""

    def __getattr__(self, name: str) -> Any:
        def killed(*args: Any, **kwargs: Any) -> Any:
            raise ValueError(
                "An error occurred in a thread: 'An index writer was killed.. A worker thread "
                "encountered an error (io::Error most likely) or panicked.'"
            )

        return killed


def test_a_keyword_writer_killed_while_the_disk_was_full_is_replaced_at_the_next_write(
    tmp_path: Path,
) -> None:
    with Memory.open(tmp_path / "m", sync=False) as m:
        m.append_bead("before the disk filled up", id="before")
        m.wait_indexed(30)
        keyword = m.indexer.keyword
        with keyword._lock:
            keyword._writer = _KilledWriter()  # the real one is dropped: its lock goes with it
        m.append_bead("after the disk had room again", id="after")
        assert m.indexer.wait_keyword(10)
        assert [i.id for i in m.retrieve("room again", strategy="keyword").items][:1] == ["after"]
        m.wait_indexed(30)
        assert keyword.watermark() == m.version_vector()
