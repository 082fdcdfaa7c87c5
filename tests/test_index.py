"""Derived indexes: caught up by the worker, after restarts, rebuilt when damaged, forgetful."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from chrysalis import Memory
from chrysalis.search import VectorIndex
from chrysalis.search import vectors as vectors_module
from tests.eventually import eventually

from .conftest import exchange

TEXTS = [
    "Caroline went to the LGBTQ support group on Tuesday",
    "Melanie painted a sunrise over the lake",
    "The team shipped the sync protocol after a long review",
    "Grandma's recipe for apple pie needs cinnamon",
]


def fill(mem: Memory) -> None:
    mem.append_beads(
        [
            {"id": f"b{i}", "content": t, "session_id": "s1", "ts": 1000.0 + i}
            for i, t in enumerate(TEXTS)
        ]
    )


def keys(mem: Memory, query: str, strategy: str) -> list[str]:
    return [f"{i.kind}:{i.id}" for i in mem.retrieve(query, k=3, strategy=strategy).items]


def test_worker_embeds_and_indexes_everything(open_memory: Callable[..., Memory]) -> None:
    mem = open_memory(embedder="deterministic")
    fill(mem)
    mem.add_node("caroline", "person", name="Caroline")
    mem.put_skill({"id": "bake", "name": "baking", "description": "apple pie with cinnamon"})
    mem.wait_indexed(timeout=30)
    status = mem.indexer.status()
    assert status["keyword"]["items"] == 6 and status["vectors"]["items"] == 6
    assert mem.get_embedding("bead", "b0", "chrysalis-hash-v1-384").dims == 384
    assert set(keys(mem, "apple pie cinnamon", "keyword")[:2]) == {"bead:b3", "skill:bake"}
    assert keys(mem, "sunrise over the lake", "emb")[0] == "bead:b1"
    assert keys(mem, "Caroline", "keyword")[:2] == ["node:caroline", "bead:b0"] or keys(
        mem, "Caroline", "keyword"
    )[:2] == ["bead:b0", "node:caroline"]


def test_catch_up_after_restart(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m", sync=False, embedder="deterministic") as mem:
        fill(mem)
        mem.wait_indexed(timeout=30)
    with Memory.open(tmp_path / "m", sync=False) as mem:  # written with no worker running
        mem.append_bead("a brand new note about quantum knitting", id="late")
        mem.forget("b1")
    with Memory.open(tmp_path / "m", sync=False, embedder="deterministic") as mem:
        mem.wait_indexed(timeout=30)
        assert keys(mem, "quantum knitting", "keyword")[0] == "bead:late"
        assert keys(mem, "quantum knitting", "emb")[0] == "bead:late"
        assert not mem.indexer.keyword.has_text("sunrise")
        assert mem.indexer.vectors is not None and not mem.indexer.vectors.has("bead:b1")


def test_rebuild_after_index_files_are_deleted_or_corrupted(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m", sync=False, embedder="deterministic") as mem:
        fill(mem)
        mem.wait_indexed(timeout=30)
        before = keys(mem, "support group", "fusion")
    index_dir = tmp_path / "m" / "index"
    for f in (index_dir / "faiss").iterdir():
        f.write_bytes(b"garbage")
    for f in (index_dir / "keyword.tantivy").iterdir():
        if f.is_file():
            f.write_bytes(b"not an index at all" * 100)
    with Memory.open(tmp_path / "m", sync=False, embedder="deterministic") as mem:
        mem.wait_indexed(timeout=30)
        assert keys(mem, "support group", "fusion") == before
        assert mem.indexer.status()["vectors"]["items"] == 4
    for f in (index_dir / "faiss").iterdir():
        f.unlink()
    shutil.rmtree(index_dir / "keyword.tantivy")
    with Memory.open(tmp_path / "m", sync=False, embedder="deterministic") as mem:
        mem.wait_indexed(timeout=30)
        assert keys(mem, "support group", "fusion") == before


def test_forget_leaves_every_index(open_memory: Callable[..., Memory]) -> None:
    mem = open_memory(embedder="deterministic")
    fill(mem)
    mem.wait_indexed(timeout=30)
    mem.forget("b0")
    mem.wait_indexed(timeout=30)
    assert not mem.indexer.keyword.has_text("LGBTQ")
    index_files = [p for p in (mem.path / "index" / "keyword.tantivy").iterdir() if p.is_file()]
    assert not any(b"LGBTQ" in p.read_bytes() for p in index_files)  # not in freed pages either
    vector_ops = [
        op for op in mem.ops_since({}) if op["kind"] == "embedding.put" and op["target"] == "b0"
    ]
    assert vector_ops and all(op["data"].get("erased") for op in vector_ops)  # the log's copy too
    vectors = mem.indexer.vectors
    eventually(lambda: vectors.removed, until=lambda n: n == 0, timeout=5,
               what="the vector file to be saved without it", interval=0.02)  # fmt: skip
    assert mem.indexer.vectors.removed == 0  # saved since: the file no longer holds it
    assert mem.indexer.vectors is not None and not mem.indexer.vectors.has("bead:b0")
    for strategy in ("fusion", "emb", "keyword", "beads"):
        assert "bead:b0" not in [
            f"{i.kind}:{i.id}"
            for i in mem.retrieve("LGBTQ support group", k=10, strategy=strategy).items
        ]


def test_remote_ops_update_the_indexes_like_local_ones(open_memory: Callable[..., Memory]) -> None:
    a = open_memory("a", replica_id="laptop-a", embedder="deterministic")
    b = open_memory("b", replica_id="laptop-b", embedder="deterministic")
    fill(a)
    a.wait_indexed(timeout=30)
    exchange(a, b)
    b.wait_indexed(timeout=30)
    top = b.retrieve("support group Tuesday", k=1).items[0]
    assert top.id == "b0" and top.provenance["origin_replica"] == "laptop-a"
    # b did not embed again: the vectors came with the ops
    assert all(op["replica"] == "laptop-a" for op in b.ops_since({}))


def test_vector_index_goes_ivf_past_the_limit_and_keeps_recall(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    centers = rng.standard_normal((20, 32))
    data = centers[rng.integers(0, 20, 3000)] + 0.3 * rng.standard_normal((3000, 32))
    data = (data / np.linalg.norm(data, axis=1, keepdims=True)).astype(np.float32)
    index = VectorIndex(tmp_path, "m", 32, exact_limit=1000, nprobe=16)
    index.upsert([f"bead:{i}" for i in range(3000)], data)
    assert index.kind == "ivf"
    queries = data[:50] + 0.05 * rng.standard_normal((50, 32)).astype(np.float32)
    hits = 0
    for q in queries:
        exact = np.argsort(-(data @ q))[:10]
        got = {h.key for h in index.search(q, 10)}
        hits += len(got & {f"bead:{i}" for i in exact})
    assert hits / 500 >= 0.95
    index.remove(["bead:0"])
    assert "bead:0" not in {h.key for h in index.search(data[0], 5)}


def test_a_rebuild_reads_the_vectors_a_chunk_at_a_time_and_skips_the_vanished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rebuild from LMDB never holds every vector: it reads a training sample and then
    chunks; a key whose vector is gone by the time its chunk is read is left out."""
    monkeypatch.setattr(vectors_module, "REBUILD_CHUNK", 250)
    rng = np.random.default_rng(11)
    data = rng.standard_normal((3000, 32)).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    names = [f"bead:{i}" for i in range(3000)]
    gone = {"bead:5", "bead:2999"}  # forgotten after the listing, before the read
    asked: list[int] = []

    def read(some: Sequence[str]) -> dict[str, np.ndarray]:
        asked.append(len(some))
        return {k: data[int(k.split(":")[1])] for k in some if k not in gone}

    index = VectorIndex(tmp_path, "m", 32, exact_limit=1000, nprobe=64)
    index.rebuild(names, read)
    assert index.kind == "ivf" and len(index) == 2998
    assert max(asked) == 250 and sum(asked) > 3000  # the sample, then every key once
    assert not index.has("bead:5") and not index.has("bead:2999")
    for i in (0, 1234, 2998):
        assert index.search(data[i], 1)[0].key == f"bead:{i}"
    # the same vectors given whole: the same nearest neighbours
    whole = VectorIndex(tmp_path / "w", "m", 32, exact_limit=1000, nprobe=64)
    kept = [k for k in names if k not in gone]
    whole.rebuild_from(kept, np.vstack([data[int(k.split(":")[1])] for k in kept]))
    q = data[77] + 0.1 * rng.standard_normal(32).astype(np.float32)
    assert [h.key for h in whole.search(q, 10)] == [h.key for h in index.search(q, 10)]


def test_a_node_changing_without_a_new_vector_keeps_its_entry(
    open_memory: Callable[..., Memory],
) -> None:
    """A node that changes but keeps its vector (an extractor adds evidence to it at every bead
    naming it) is not re-added to the vector index: a re-add counts as a removal, and each
    removal writes the whole index file (at 100k beads, 150 MB per extracted batch)."""
    mem = open_memory(embedder="deterministic")
    fill(mem)
    mem.add_node("lake", "place", name="Lake Constance")
    mem.wait_indexed(timeout=30)
    vectors = mem.indexer.vectors
    assert vectors is not None and vectors.has("node:lake")
    vectors.save()
    saved = sorted(p.name for p in (mem.path / "index" / "faiss").iterdir())
    for n in range(3):  # what an extractor's evidence does to a node: same text, new record
        mem.add_node("lake", "place", name="Lake Constance", metadata={"seen": n})
    mem.wait_indexed(timeout=30)
    assert sorted(p.name for p in (mem.path / "index" / "faiss").iterdir()) == saved
    assert vectors.removed == 0 and vectors.has("node:lake")
    assert keys(mem, "Lake Constance", "emb")[0] == "node:lake"
    mem.add_node("lake", "place", name="Lake Geneva")  # a new text: a new vector replaces it
    mem.wait_indexed(timeout=30)
    assert keys(mem, "Lake Geneva", "emb")[0] == "node:lake"
    mem.remove_node("lake")  # and a node that leaves takes its vector along
    mem.wait_indexed(timeout=30)
    assert not vectors.has("node:lake")
