"""The local scrub: once a forget commits, no file of the data dir keeps the content
(LMDB's freed pages included), and the receipt says so."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from chrysalis import Memory
from chrysalis.core.errors import Conflict, NotFound
from tests.conftest import exchange
from tests.eventually import eventually
from tests.files import files_under, read_if_there

SMALL = "the small secret ZEBRACORN-41 lives here"
LARGE = "the large secret QUOKKAPLEX-77 " + "padding words " * 6000  # > 64 KiB: a blob
MARKERS = (b"ZEBRACORN-41", b"QUOKKAPLEX-77")


def holders(root: Path, markers: tuple[bytes, ...] = MARKERS) -> list[str]:
    """Every file under ``root`` that holds one of ``markers`` (as bytes, anywhere)."""
    return sorted(
        str(p.relative_to(root))
        for p in files_under(root)
        if p.is_file() and any(m in read_if_there(p) for m in markers)
    )


def fill(mem: Memory, n: int = 300) -> list[str]:
    rows = [{"content": f"ordinary bead {i} about gardens", "role": "user"} for i in range(n)]
    return [b.id for b in mem.append_beads(rows)]


def test_scrub_takes_forgotten_text_off_every_file(open_memory: Callable[..., Memory]) -> None:
    mem = open_memory("a", embedder="deterministic", scrub_delay=3600)
    fill(mem)
    small, large = mem.append_bead(SMALL, role="user"), mem.append_bead(LARGE, role="user")
    mem.wait_indexed(60)
    digest = mem.state_digest()
    mem.forget(small.id)
    mem.forget(large.id)
    mem.wait_indexed(60)
    # The forget erased every live page at once; LMDB's freed pages may still hold the text
    # (unless a later write happened to reuse them): only LMDB's file, never an index.
    assert set(holders(mem.path)) <= {"lmdb/data.mdb"}
    receipt = mem.forget_receipt(small.id)
    lmdb = next(p for p in receipt.places if p.name.endswith("lmdb"))
    assert lmdb.state == "pending" and not receipt.clean and not receipt.settled
    assert mem.scrubber.due()
    mem.scrubber.run()
    assert holders(mem.path) == []
    assert not mem.scrubber.due()
    for bead in (small, large):
        receipt = mem.forget_receipt(bead.id)
        assert receipt.clean, receipt.places
        assert {p.name.split(": ")[1].split("/")[0] for p in receipt.places} >= {
            "lmdb",
            "keyword index",
            "vector index",
        }
    assert any(p.name.split(": ")[1].startswith("blobs/") for p in receipt.places)
    # Nothing else changed: the same beads, the same state but for the two forgets.
    assert mem.state_digest() != digest
    assert len(list(mem.all_beads())) == 300
    assert mem.retrieve("gardens", k=3).items


def test_the_scrub_runs_by_itself_within_its_delay(open_memory: Callable[..., Memory]) -> None:
    mem = open_memory("a", scrub_delay=0.2)
    fill(mem, 50)
    bead = mem.append_bead(SMALL, role="user")
    mem.forget(bead.id)
    # The receipt may say "pending" a moment after the files are clean: the index takes in
    # the forget after it (the row may never have reached a file), and says so only then.
    eventually(lambda: (holders(mem.path), mem.forget_receipt(bead.id).clean),
               until=lambda h: h == ([], True), timeout=20, interval=0.1,
               what="no file to hold the text and a clean receipt")  # fmt: skip
    assert holders(mem.path) == []
    assert mem.forget_receipt(bead.id).clean


def test_a_pulled_forget_is_scrubbed_too(open_memory: Callable[..., Memory]) -> None:
    a, b = open_memory("a", scrub_delay=3600), open_memory("b", scrub_delay=3600)
    bead = a.append_bead(SMALL, role="user")
    exchange(a, b)
    b.wait_indexed(30)
    assert holders(b.path)
    a.forget(bead.id)
    exchange(a, b)
    assert b.scrubber.due()
    b.scrubber.run()
    a.scrubber.run()
    assert holders(a.path) == [] and holders(b.path) == []
    assert a.state_digest() == b.state_digest()
    assert b.forget_receipt(bead.id).by == a.forget_receipt(bead.id).by == f"{a.replica_id}:2"


def test_reads_and_writes_go_on_during_a_scrub(open_memory: Callable[..., Memory]) -> None:
    mem = open_memory("a", scrub_delay=3600)
    fill(mem, 2000)
    bead = mem.append_bead(SMALL, role="user")
    mem.forget(bead.id)
    stop, errors, written = threading.Event(), [], []

    def reader() -> None:
        while not stop.is_set():
            try:
                assert len(mem.last_beads(5)) == 5
            except Exception as exc:
                errors.append(exc)

    def writer() -> None:
        while not stop.is_set():
            written.append(mem.append_bead(f"written during a scrub {len(written)}").id)

    threads = [threading.Thread(target=reader), threading.Thread(target=writer)]
    for t in threads:
        t.start()
    for _ in range(5):
        mem.scrubber.run()
    stop.set()
    for t in threads:
        t.join()
    assert errors == []
    assert written and all(mem.get_bead(i) for i in written)
    assert holders(mem.path) == []


def test_a_scrub_interrupted_by_a_crash(tmp_path: Path) -> None:
    """A forget whose scrub never ran (the process died) is scrubbed at the next open, and a
    compacting copy a crash left behind (it holds what it was erasing) is deleted."""
    script = f"""
import os, sys
from chrysalis import Memory
mem = Memory.open({str(tmp_path / "d")!r}, scrub_delay=3600)
bead = mem.append_bead({SMALL!r}, role="user")
mem.forget(bead.id)
print(bead.id)
sys.stdout.flush()
os._exit(0)
"""
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    bead_id = out.stdout.strip()
    data = tmp_path / "d"
    assert holders(data) == ["lmdb/data.mdb"]
    leftover = data / "lmdb" / "compacting"
    leftover.mkdir()
    (leftover / "data.mdb").write_bytes(b"half a copy " + MARKERS[0])
    mem = Memory.open(data, sync=False, scrub_delay=0.1)
    try:
        assert not leftover.exists()
        eventually(mem.scrubber.due, until=lambda due: not due, timeout=20,
                   what="the scrub to run")  # fmt: skip
        assert holders(data) == []
        assert mem.forget_receipt(bead_id).clean
        assert mem.replica_id == mem.store.replica_id  # the same data dir, no new generation
        assert mem.store.generation == 1
    finally:
        mem.close()


def test_closing_runs_a_due_scrub(tmp_path: Path) -> None:
    mem = Memory.open(tmp_path / "d", sync=False, scrub_delay=3600)
    bead = mem.append_bead(SMALL, role="user")
    mem.forget(bead.id)
    mem.close()
    assert holders(tmp_path / "d") == []
    with Memory.open(tmp_path / "d", sync=False) as again:
        assert not again.scrubber.due()
        assert again.store.generation == 1


def test_receipt_of_a_live_or_unknown_bead(mem: Memory) -> None:
    bead = mem.append_bead("still here")
    with pytest.raises(Conflict, match="not forgotten"):
        mem.forget_receipt(bead.id)
    with pytest.raises(NotFound, match="unknown here"):
        mem.forget_receipt("no-such-bead")


def test_a_shared_blob_stays_for_the_live_bead(mem: Memory) -> None:
    first = mem.append_bead(LARGE, role="user")
    second = mem.append_bead(LARGE, role="assistant")  # the same bytes: the same blob
    mem.forget(first.id)
    mem.scrubber.run()
    receipt = mem.forget_receipt(first.id)
    blob = next(p for p in receipt.places if "blobs/" in p.name)
    assert blob.state == "in use" and second.id in blob.why
    assert not receipt.clean and receipt.settled
    assert mem.get_bead(second.id).content == LARGE


def test_writes_queued_behind_a_compaction_use_the_new_handles(
    open_memory: Callable[..., Memory],
) -> None:
    """A compaction reopens LMDB: a write queued behind it must look its databases up in its
    own transaction (the soak caught one that kept a handle across: "Database handle belongs
    to another environment")."""
    from chrysalis.sync.local import Local

    mem = open_memory("a", scrub_delay=3600)
    fill(mem, 200)
    beads = [mem.append_bead(f"{SMALL} {i}").id for i in range(5)]
    for bead_id in beads:
        mem.forget(bead_id)  # fills the remote to-do (scrub database)
    local = Local(mem)
    ops, _ = local.scrub_todo()
    errors: list[Exception] = []
    stop = threading.Event()

    def mark() -> None:
        while not stop.is_set():
            try:
                local.scrub_done("fid", "segment", list(ops))
            except Exception as exc:
                errors.append(exc)

    thread = threading.Thread(target=mark)
    thread.start()
    for _ in range(10):
        mem.store.compact()
    stop.set()
    thread.join()
    assert errors == []
    assert local.scrub_todo()[0][next(iter(ops))] == {"fid": ["segment"]}


def test_a_compacted_file_larger_than_the_map_opens_and_takes_writes(tmp_path: Path) -> None:
    """A compaction leaves a file with no free page; when it is larger than the map an
    opening asks for (1 GiB by default: a million beads), LMDB maps just the file, and the
    open's own first write was MapFull (bench/million.py met it at 1M)."""
    small = 256 * 1024
    with Memory.open(tmp_path / "d", sync=False, map_size=small) as mem:
        mem.append_beads({"content": f"{SMALL} number {i}"} for i in range(600))  # grows the map
        mem.store.compact()
    assert (tmp_path / "d" / "lmdb" / "data.mdb").stat().st_size > small
    with Memory.open(tmp_path / "d", sync=False, map_size=small) as mem:
        info, page = mem.store.env.info(), mem.store.env.stat()["psize"]
        # headroom, not a map ending at the file's last page (whether the first write then
        # fits depends on the few pages the copy's own fingerprint write freed)
        assert info["map_size"] >= 1.3 * (info["last_pgno"] + 1) * page
        mem.append_beads({"content": f"{SMALL} later {i}"} for i in range(300))
        assert mem.stats()["beads"] == 900
