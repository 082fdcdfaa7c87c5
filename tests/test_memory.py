from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from chrysalis import ClosedError, Conflict, DataDirLocked, Memory, NotFound, Skill


def test_append_and_read_back(mem: Memory) -> None:
    b = mem.append_bead("the user prefers tea", role="user", session_id="s1", turn_id="t1",
                        importance=0.9, tags=("pref", "drink"), source="chat")  # fmt: skip
    got = mem.get_bead(b.id)
    assert got == b
    assert got.content == "the user prefers tea" and got.tags == ["pref", "drink"]
    assert mem.version_vector() == {mem.replica_id: 1}


def test_same_add_twice_never_duplicates(mem: Memory) -> None:
    a = mem.append_bead("hello", id="b1", ts=100.0)
    again = mem.append_bead("hello", id="b1")  # a retry without ts is the same add
    assert again == a
    assert mem.version_vector() == {mem.replica_id: 1}
    with pytest.raises(Conflict, match="b1"):
        mem.append_bead("something else", id="b1")
    assert [b.id for b in mem.last_beads(10)] == ["b1"]


def test_last_beads_time_order_and_sessions(mem: Memory) -> None:
    rows = [{"id": f"b{i}", "content": f"turn {i}", "ts": 1000.0 + i, "session_id": "s1" if i % 2 else "s2"}
            for i in range(10)]  # fmt: skip
    mem.append_beads(list(reversed(rows)))  # inserted out of order: read back in time order
    assert [b.id for b in mem.last_beads(3)] == ["b7", "b8", "b9"]
    assert [b.id for b in mem.last_beads(3, session_id="s1")] == ["b5", "b7", "b9"]
    assert [b.id for b in mem.last_beads(3, session_id="s2")] == ["b4", "b6", "b8"]
    assert mem.last_beads(3, session_id="s") == []  # a prefix of a session is not that session
    assert len(mem.last_beads(100)) == 10
    assert [b.id for b in mem.all_beads()] == [f"b{i}" for i in range(10)]


def test_large_content_is_stored_once_beside_lmdb(open_memory: Callable[..., Memory]) -> None:
    mem = open_memory(blob_threshold=1024)
    big = "lorem ipsum " * 10_000
    a = mem.append_bead(big, id="big1")
    b = mem.append_bead(big, id="big2")
    assert a.blob is not None and a.blob == b.blob and a.blob.size == len(big.encode())
    assert mem.get_bead("big1").content == big
    blob_files = [p for p in (mem.path / "blobs").rglob("*") if p.is_file()]
    assert len(blob_files) == 1  # content-addressed: stored once
    assert all(len(str(op["data"].get("content", ""))) < 1024 for op in mem.ops_since({}))
    mem.forget("big1")
    assert blob_files[0].exists()  # big2 still uses it
    mem.forget("big2")
    assert not blob_files[0].exists()


def test_forget_erases_views_and_the_op_payload(mem: Memory) -> None:
    b = mem.append_bead("my password is hunter2", session_id="s1")
    mem.append_bead("other")
    assert len(mem.last_beads(10)) == 2  # decoded and cached
    mem.last_beads(10)[0].tags.append("mutated")  # a caller's copy, not the cache
    assert mem.last_beads(10)[0].tags == []
    mem.forget(b.id)
    assert not any("hunter2" in str(d) for d in mem.store.decoded._data.values())
    with pytest.raises(NotFound, match="forgotten"):
        mem.get_bead(b.id)
    assert [x.content for x in mem.last_beads(10)] == ["other"]
    assert mem.last_beads(10, session_id="s1") == []
    log = mem.ops_since({})
    assert [op["kind"] for op in log] == ["bead.add", "bead.add", "bead.forget"]  # tombstone stays
    assert log[0]["data"] == {"id": b.id, "ts": b.ts, "erased": True}
    mem.forget(b.id)  # twice is a no-op
    with pytest.raises(NotFound):
        mem.forget("never-seen")
    with pytest.raises(Conflict, match="forgotten"):
        mem.append_bead("again", id=b.id)


def test_graph_nodes_edges_neighbors(mem: Memory) -> None:
    mem.add_node("alice", "person", name="Alice", labels=["human"], metadata={"age": 30})
    mem.add_node("bob", "person", name="Bob")
    mem.add_node("tea", "drink")
    mem.add_node("acme", "org")
    knows = mem.add_edge("alice", "bob", "knows", weight=0.5, evidence=["b1"])
    mem.add_edge("bob", "tea", "likes")
    mem.add_edge("acme", "alice", "employs")
    assert (
        mem.add_edge("alice", "bob", "knows", weight=0.5, evidence=["b1"]).id == knows.id
    )  # same fact
    one = {(n.node.id, n.depth, n.direction) for n in mem.neighbors("alice")}
    assert one == {("bob", 1, "out"), ("acme", 1, "in")}
    two = {(n.node.id, n.depth) for n in mem.neighbors("alice", depth=2)}
    assert two == {("bob", 1), ("acme", 1), ("tea", 2)}
    assert mem.get_node("alice").metadata == {"age": 30}
    with pytest.raises(NotFound, match="carol"):
        mem.add_edge("alice", "carol", "knows")
    mem.remove_node("bob")  # its edges are hidden, not lost
    assert {n.node.id for n in mem.neighbors("alice", depth=2)} == {"acme"}
    with pytest.raises(NotFound):
        mem.get_edge(knows.id)
    mem.add_node("bob", "person", name="Bob again")
    assert mem.get_edge(knows.id).weight == 0.5
    mem.remove_edge(knows.id)
    assert {n.node.id for n in mem.neighbors("alice")} == {"acme"}
    with pytest.raises(NotFound):
        mem.remove_edge(knows.id)
    with pytest.raises(NotFound):
        mem.neighbors("nobody")


def test_persona_and_skills(mem: Memory) -> None:
    assert mem.get_persona().name == ""
    mem.put_persona({"name": "Ada", "goals": ["help"], "traits": {"tone": "dry", "pace": "fast"}})
    p = mem.update_persona(goals=["help", "learn"], traits={"pace": None, "humour": "yes"})
    assert p.name == "Ada" and p.goals == ["help", "learn"]
    assert p.traits == {"tone": "dry", "humour": "yes"}
    p = mem.put_persona({"name": "Ada"})  # put replaces every field
    assert p.goals == [] and p.traits == {}
    s = mem.put_skill(Skill(id="search", name="web search", tags=["web"], examples=["find x"]))
    assert mem.get_skill("search") == s
    mem.put_skill({"id": "search", "name": "web search", "tags": ["web", "net"]})
    assert mem.get_skill("search").tags == ["web", "net"] and mem.get_skill("search").examples == []
    assert [k.id for k in mem.list_skills()] == ["search"]
    mem.delete_skill("search")
    assert mem.list_skills() == []
    with pytest.raises(NotFound):
        mem.get_skill("search")


def test_second_open_is_refused_clearly(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "d", sync=False):
        with pytest.raises(DataDirLocked, match="already open in this process"):
            Memory.open(tmp_path / "d")
        code = f"from chrysalis import Memory\nMemory.open({str(tmp_path / 'd')!r})"
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
        )
        assert out.returncode != 0
        assert "is in use by another process (pid" in out.stderr
    with Memory.open(tmp_path / "d", sync=False) as again:  # released on close
        assert again.version_vector() == {}


def test_closed_memory_says_so(tmp_path: Path) -> None:
    mem = Memory.open(tmp_path / "d", sync=False)
    mem.close()
    with pytest.raises(ClosedError):
        mem.append_bead("x")
    with pytest.raises(ClosedError):
        mem.last_beads(1)


def test_the_map_grows_before_it_fills(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "d", sync=False, map_size=1 << 20) as mem:
        start = mem.store.env.info()["map_size"]
        reader_errors: list[BaseException] = []
        stop = threading.Event()

        def read_while_growing() -> None:
            while not stop.is_set():
                try:
                    mem.last_beads(5)
                except BaseException as exc:
                    reader_errors.append(exc)
                    return

        reader = threading.Thread(target=read_while_growing)
        reader.start()
        # ~8 MiB of beads, as 5,000 long ones: the map's growth is in bytes, the indexer's
        # work (which only slows the test) in beads
        for batch in range(10):
            mem.append_beads([{"content": f"{batch}-{i} " + "x" * 1600} for i in range(500)])
        stop.set()
        reader.join()
        assert reader_errors == []
        assert mem.store.env.info()["map_size"] > start * 8
        assert len(mem.last_beads(100_000)) == 5_000


def test_concurrent_writers_share_commits(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "d", sync=True) as mem:
        ids: list[list[str]] = [[] for _ in range(8)]

        def writer(n: int) -> None:
            for i in range(200):
                ids[n].append(mem.append_bead(f"w{n} {i}").id)

        threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert mem.version_vector() == {mem.replica_id: 1600}
        assert len({i for w in ids for i in w}) == 1600
        assert mem.store.commits < 1600  # batched: fewer commits than writes
        seqs = [op["seq"] for op in mem.ops_since({})]
        assert seqs == list(range(1, 1601))  # no gaps, no repeats


def test_trusted_construction_matches_validation(mem: Memory) -> None:
    from chrysalis.core.models import Bead
    from chrysalis.read.reader import _trusted

    b = mem.append_bead("fast path", session_id="s", tags=["t"], importance=0.25, ts=12.5)
    data = b.model_dump()
    fast = _trusted(Bead, dict(data))
    assert fast == Bead.model_validate(data)
    assert fast.model_dump() == data and repr(fast) == repr(b)
    assert mem.last_beads(1) == [b]


def test_hlc_stays_monotonic_across_a_restart_with_the_clock_set_back(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "d", sync=False) as mem:
        mem.append_bead("before")
        first = mem.ops_since({})[-1]["hlc"]
    with Memory.open(tmp_path / "d", sync=False) as mem:
        mem.store.clock._wall_ms = lambda: 1_000  # the wall clock now says 1970
        mem.append_bead("after")
        assert mem.ops_since({})[-1]["hlc"] > first
        assert mem.version_vector() == {mem.replica_id: 2}


def test_meta_values_persist(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "d", sync=False) as mem:
        replica = mem.replica_id
        assert mem.store.generation == 1
        assert mem.store.get_meta("push_cursor") is None
        mem.store.put_meta("push_cursor", {"seq": 42})
    with Memory.open(tmp_path / "d", sync=False) as mem:
        assert mem.replica_id == replica
        assert mem.store.get_meta("push_cursor") == {"seq": 42}
    with pytest.raises(DataDirLocked, match="belongs to replica"):
        Memory.open(tmp_path / "d", replica_id="someone-else")
    with Memory.open(tmp_path / "d", sync=False):  # the refusal released the lock
        pass


def test_a_blob_name_that_is_not_a_sha256_names_no_blob(mem: Memory) -> None:
    blobs = mem.store.blobs
    assert not blobs.has("") and not blobs.has("../..") and not blobs.has("ab")
    with pytest.raises(NotFound, match="64 hex digits"):
        blobs.get("")


def test_an_empty_persona_update_writes_no_op(mem: Memory) -> None:
    mem.update_persona(name="Ada")
    before = mem.version_vector()
    assert mem.update_persona().name == "Ada"
    assert mem.version_vector() == before


def test_nothing_writes_in_the_data_dir_once_closed(tmp_path: Path) -> None:
    """After close returns, no thread of ours or of a library creates a file in the data dir:
    a caller removes it at once (bench/changing_facts.py in a TemporaryDirectory once failed
    with "Directory not empty: .../keyword.tantivy": tantivy's reader, kept alive past the
    close, reloaded half a second after the last commit and took its lock file again)."""
    path = tmp_path / "d"
    mem = Memory.open(path, sync=False, embedder="deterministic", summary_after=None)
    mem.append_beads([{"content": f"note {i}: I moved to city {i % 7}"} for i in range(100)])
    mem.wait_indexed(timeout=60)  # commits the keyword index: close follows at once
    mem.close()

    def files() -> list[str]:
        return sorted(str(p.relative_to(path)) for p in path.rglob("*") if not p.is_dir())

    for name in files():  # a removal part way: the lock files gone, the rest not yet
        if "lock" in Path(name).name:
            (path / name).unlink()
    left = files()
    for _ in range(30):  # tantivy's meta-file watcher polls every 0.5 s
        time.sleep(0.05)
        assert files() == left
    shutil.rmtree(path)
