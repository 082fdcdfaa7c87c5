"""Changing the embedder (`chrysalis.search.switch`): recall keeps the old model's answers until
the new model's vectors cover every bead, then switches; a restart midway resumes; a second
laptop follows through a folder remote, embedding nothing the first one already did."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chrysalis import Memory, Replica
from chrysalis.core.errors import EmbedderUnavailable, InvalidInput
from chrysalis.search.embed import DeterministicEmbedder, make_embedder
from chrysalis.search.switch import SERVING
from tests.bench_forker import BenchForker
from tests.eventually import eventually

OLD, NEW = "chrysalis-hash-v1-48", "chrysalis-hash-v1-96"
PEOPLE = ["Ines", "Tomasz", "Aiko", "Rafael", "Nkechi", "Bjorn", "Lucia", "Omar"]
DOINGS = ["repotted the", "argued about the", "forgot to water the", "photographed the",
          "sold the old", "borrowed a", "painted the", "fixed the wobbly"]  # fmt: skip
THINGS = ["fern", "bicycle", "harmonium", "kayak", "sourdough starter", "telescope",
          "rocking chair", "greenhouse", "accordion", "compost bin", "lantern"]  # fmt: skip
QUERIES = ["who fixed the wobbly kayak", "sourdough starter photographs",
           "Aiko and the harmonium", "telescope argument"]  # fmt: skip


def texts(n: int) -> list[str]:
    """Varied notes: a person, a doing, a thing, and a detail naming the note."""
    return [
        f"{PEOPLE[i % 8]} {DOINGS[(i // 8) % 8]} {THINGS[(i // 64) % 11]} on day {i}"
        + (" before the storm" if i % 5 == 0 else "")
        for i in range(n)
    ]


class Gated(DeterministicEmbedder):
    """The deterministic embedder, down (`EmbedderUnavailable`, as Ollama when it stops) once
    it has embedded ``budget`` texts, until ``open`` is set. Counts what it embedded."""

    def __init__(self, dims: int, budget: int | None = None) -> None:
        super().__init__(dims)
        self.budget = budget
        self.open = threading.Event()
        self.embedded = 0
        self.refused = 0
        self._lock = threading.Lock()

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            left = None if self.budget is None else self.budget - self.embedded
            if left is not None and len(texts) > left and not self.open.is_set():
                self.refused += 1
                raise EmbedderUnavailable("the test's embedder is down")
            self.embedded += len(texts)
        return super().embed_documents(texts)


def emb_answers(mem: Memory) -> dict[str, list[tuple[str, float]]]:
    return {
        q: [(i.id, i.signals["emb"]) for i in mem.retrieve(q, k=5, strategy="emb").items]
        for q in QUERIES
    }


def filled(path: Path, n: int) -> None:
    with Memory.open(path, sync=False, embedder="deterministic:48") as mem:
        mem.append_beads(
            {"id": f"b{i}", "content": t, "session_id": f"s{i // 40}"}
            for i, t in enumerate(texts(n))
        )
        mem.wait_indexed(timeout=60)
        assert mem.reader.get_meta(SERVING)["model"] == OLD


def test_recall_keeps_the_old_model_until_the_new_one_covers_everything(tmp_path: Path) -> None:
    path = tmp_path / "m"
    filled(path, 1500)
    with Memory.open(path, sync=False, embedder="deterministic:48") as mem:
        before = emb_answers(mem)
    assert all(before.values())

    new = Gated(96, budget=500)
    with Memory.open(path, sync=False, embedder=new) as mem:
        switch = eventually(
            lambda: mem.indexer.status()["switch"], timeout=30,
            until=lambda s: new.refused and s["vectors"] == new.embedded,
            what="the new embedder to stall midway, its vectors indexed",
        )  # fmt: skip
        assert switch["from"]["model"] == OLD and switch["to"]["model"] == NEW
        assert switch["searching"] == OLD and 0 < switch["percent"] < 100
        assert switch["items"] == 1500 and 0 < switch["vectors"] < 1500
        # recall answers as before the switch: the old model's vectors, its query embedding
        assert emb_answers(mem) == before
        # and a note written meanwhile is embedded with the old model too
        fresh = mem.append_bead("Quentin tuned the marimba with a tuning fork", session_id="x")
        eventually(
            lambda: mem.retrieve("marimba tuning fork", k=1, strategy="emb").items[0].id,
            until=lambda found: found == fresh.id, timeout=30,
            what="the old model to embed the new note",
        )  # fmt: skip
        assert mem.get_embedding("bead", fresh.id, OLD).dims == 48

        new.open.set()
        eventually(lambda: mem.indexer.status()["switch"] is None, timeout=60, what="the switch")
        assert mem.reader.get_meta(SERVING)["model"] == NEW
        assert mem.indexer.serving()[1].model == NEW  # type: ignore[union-attr]
        # answers now come from the new model: scores are its cosines
        query = QUERIES[0]
        items = mem.retrieve(query, k=5, strategy="emb").items
        ref = DeterministicEmbedder(96)
        for item in items:
            cos = float(ref.embed_query(query) @ ref.embed_documents([item.text])[0])
            assert item.signals["emb"] == pytest.approx(
                max(0.0, cos), abs=2e-3
            )  # stored as float16 (core.vector_bytes)
        # the old index files are gone; its vectors stay in LMDB (they replicate)
        faiss_files = [p.name for p in (path / "index" / "faiss").iterdir()]
        assert faiss_files and not any(OLD in name for name in faiss_files), faiss_files
        assert mem.get_embedding("bead", "b7", OLD).dims == 48


def test_a_restart_midway_resumes_instead_of_starting_over(tmp_path: Path) -> None:
    path = tmp_path / "m"
    n = 1200
    filled(path, n)
    first = Gated(96, budget=450)
    with Memory.open(path, sync=False, embedder=first) as mem:
        eventually(lambda: first.refused, timeout=30, what="the new embedder to stall")
        assert mem.indexer.status()["switch"]["searching"] == OLD
    assert 0 < first.embedded < n

    second = Gated(96)
    with Memory.open(path, sync=False, embedder=second) as mem:
        assert mem.indexer.status()["switch"] is not None  # the restart did not finish it
        mem.wait_indexed(timeout=60)
        eventually(lambda: mem.indexer.status()["switch"] is None, timeout=30, what="the switch")
    # every bead embedded once in all: the second run did only what the first had not
    assert second.embedded == n - first.embedded


def test_back_to_the_old_model_before_the_end_drops_the_partial_index(tmp_path: Path) -> None:
    path = tmp_path / "m"
    filled(path, 600)
    partial = Gated(96, budget=200)
    with Memory.open(path, sync=False, embedder=partial) as mem:
        eventually(lambda: partial.refused, timeout=30, what="the new embedder to stall")
        mem.indexer._maybe_save(force=True)  # its partial index on disk, as after hours of it
    assert any(NEW in p.name for p in (path / "index" / "faiss").iterdir())
    with Memory.open(path, sync=False, embedder="deterministic:48") as mem:
        assert mem.indexer.status()["switch"] is None
        assert mem.reader.get_meta(SERVING)["model"] == OLD
        # nothing maintains the abandoned index (a forget would not reach it): it is deleted
        assert not any(NEW in p.name for p in (path / "index" / "faiss").iterdir())
        assert mem.retrieve(QUERIES[1], k=3, strategy="emb").items


def test_an_old_model_that_cannot_be_opened_again_is_said(tmp_path: Path) -> None:
    path = tmp_path / "m"
    filled(path, 300)
    with Memory.open(path, sync=False) as mem:  # the record names a spec that no longer works
        rec = dict(mem.reader.get_meta(SERVING))
        mem.writer.put_meta(SERVING, {**rec, "spec": "deterministic:4"})
    new = Gated(96, budget=100)
    with Memory.open(path, sync=False, embedder=new) as mem:
        eventually(lambda: new.refused, timeout=30, what="the new embedder to stall")
        result = mem.retrieve(QUERIES[2], k=3, strategy="emb")
        (note,) = [n for n in result.notes if "switching" in n]
        assert OLD in note and "cannot embed queries" in note and "dims" in note
        assert mem.indexer.status()["switch"]["note"] == note


def test_deterministic_dims_spec() -> None:
    assert make_embedder("deterministic:200").dims == 200
    assert make_embedder("deterministic:200").spec == "deterministic:200"
    with pytest.raises(InvalidInput, match="takes a number of dims, not 'many'"):
        make_embedder("deterministic:many")
    with pytest.raises(InvalidInput, match="between 16 and 8192"):
        make_embedder("deterministic:9")


def test_a_second_laptop_follows_through_a_folder_remote(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    remote = f"file://{tmp_path / 'shared'}"

    def laptop(name: str, embedder: Any) -> Replica:
        return Replica.open(
            tmp_path / name, remote=remote, replica_id=name, sync=False, embedder=embedder
        )

    def sync(*replicas: Replica) -> None:
        for r in replicas:
            r.memory.wait_indexed(timeout=60)
            assert r.sync()["ok"]

    with laptop("a", "deterministic:48") as a, laptop("b", "deterministic:48") as b:
        a.memory.append_beads({"content": t, "session_id": "garden"} for t in texts(400))
        sync(a, b)
    with laptop("a", "deterministic:96") as a, laptop("b", "deterministic:48") as b:
        eventually(lambda: a.memory.indexer.status()["switch"] is None, timeout=60, what="a")
        sync(a, b)
        # the mixed period: b searches with the model it is configured for, and leaves a's
        # vectors alone; each embeds a note written on the other for its own model
        assert b.memory.indexer.serving()[1].model == OLD  # type: ignore[union-attr]
        note = b.memory.append_bead("Yusuf planted garlic by the fence", session_id="garden")
        sync(b, a)
        a.memory.wait_indexed(timeout=60)  # a embeds what it pulled, in the background
        assert a.memory.get_bead(note.id), (a.memory.version_vector(), b.memory.version_vector())
        assert a.memory.reader.embedding_record("bead", note.id, NEW) is not None, (
            a.memory.indexer.status(),
            a.memory.version_vector(),
            b.memory.version_vector(),
        )
        assert a.memory.get_embedding("bead", note.id, NEW).dims == 96
        assert b.memory.get_embedding("bead", note.id, OLD).dims == 48
        sync(a, b)
        top = b.retrieve("garlic by the fence", k=1, strategy="emb").items
        assert top[0].id == note.id
    follower = Gated(96)
    with laptop("b", follower) as b:
        eventually(lambda: b.memory.indexer.status()["switch"] is None, timeout=60, what="b")
        # a made every vector of the new model: b indexed them and embedded nothing
        assert follower.embedded == 0
        assert b.memory.indexer.serving()[1].model == NEW  # type: ignore[union-attr]
        top = b.retrieve("garlic by the fence", k=1, strategy="emb").items
        assert top[0].id == note.id


def test_switch_bench_quick_run_answers_throughout(bench_forker: BenchForker) -> None:
    root = Path(__file__).resolve().parent.parent
    out = bench_forker.run([str(root / "bench" / "switch_bench.py"), "--quick", "--json"], 600)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout)
    assert report["beads"] == 3000 and report["switch_s"] > 0
    answers = report["during_answers"]
    assert answers["empty"] == 0 and answers["old"] > 0, answers
    assert report["during"]["n"] == answers["old"] + answers["new"]
    assert report["searching_after"] == "chrysalis-hash-v1-256"
    assert all(report[p]["p95"] > 0 for p in ("before", "during", "after"))
