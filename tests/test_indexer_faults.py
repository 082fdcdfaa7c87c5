"""The indexing worker under faults: refused texts, a dead embedder, slow embedding, removed
items, an index ahead of its log, closing mid-work."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from chrysalis import ClosedError, EmbedderUnavailable, Memory
from chrysalis.search import KeywordIndex
from chrysalis.search.embed import DeterministicEmbedder


class Picky(DeterministicEmbedder):
    """Refuses any text with "poison" in it (as a server refuses one bad input)."""

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if any("poison" in t for t in texts):
            raise EmbedderUnavailable("refused")
        return super().embed_documents(texts)


class Down(DeterministicEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        raise EmbedderUnavailable("Ollama is not answering")


class Slow(DeterministicEmbedder):
    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        time.sleep(self.seconds)
        return super().embed_documents(texts)


class LateDims(DeterministicEmbedder):
    """Knows its dimension only after the first answer (an Ollama model not in our table)."""

    def __init__(self) -> None:
        super().__init__(dims=96)
        self.dims = 0

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.dims = 96
        return DeterministicEmbedder(dims=96).embed_documents(texts)


def test_a_refused_text_does_not_stop_the_others(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m", sync=False, embedder=Picky()) as mem:
        bad = mem.append_bead("poison pill")
        good = mem.append_bead("bananas are yellow")
        mem.wait_indexed(timeout=20)
        assert mem.indexer.vectors is not None and mem.indexer.vectors.has(f"bead:{good.id}")
        assert f"bead:{bad.id}" in mem.indexer.skipped
        assert "skipped 1 item" in (mem.indexer.last_error or "")


def test_a_dead_embedder_backs_off_and_the_wait_says_why(tmp_path: Path) -> None:
    embedder = Down()
    with Memory.open(tmp_path / "m", sync=False, embedder=embedder) as mem:
        mem.append_bead("hello there")
        t0 = time.monotonic()
        with pytest.raises(EmbedderUnavailable, match="indexing is stuck: Ollama is not answering"):
            mem.wait_indexed()  # no timeout given: it must still come back
        assert time.monotonic() - t0 < 15
        assert embedder.calls <= 6  # backed off, not spinning
        assert mem.retrieve("hello", k=3, strategy="keyword").items  # keywords work meanwhile


def test_dimension_learned_from_the_first_answer(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m", sync=False, embedder=LateDims()) as mem:
        b = mem.append_bead("a note about kites")
        mem.wait_indexed(timeout=20)
        assert mem.indexer.vectors is not None and mem.indexer.vectors.dims == 96
        assert mem.retrieve("kites", k=1, strategy="emb").items[0].id == b.id


def test_keyword_search_is_not_held_up_by_slow_embedding(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m", sync=False, embedder=Slow(3.0)) as mem:
        mem.append_bead("first note")
        time.sleep(0.3)  # the worker is now inside a slow embedding call
        mem.append_bead("kumquats are small")
        items = mem.retrieve("kumquats", k=3, strategy="keyword").items
        assert [i.text for i in items] == ["kumquats are small"]


def test_close_while_embedding_is_prompt_and_final(tmp_path: Path) -> None:
    mem = Memory.open(tmp_path / "m", sync=False, embedder=Slow(1.0))
    mem.append_beads([{"content": f"note {i}"} for i in range(400)])  # several chunks
    time.sleep(0.2)
    t0 = time.monotonic()
    mem.close()
    assert time.monotonic() - t0 < 5
    assert not any(t.name == "chrysalis-indexer" and t.is_alive() for t in threading.enumerate())
    with pytest.raises(ClosedError):
        mem.retrieve("note")
    with pytest.raises(ClosedError):
        mem.wait_indexed()


def test_forgotten_words_leave_no_trace_in_the_keyword_file(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m", sync=False) as mem:
        secret = mem.append_bead("my password is ZEBRAQUOKKA123 do not share")
        mem.wait_indexed(timeout=20)
        mem.forget(secret.id)
        mem.wait_indexed(timeout=20)
    kw = KeywordIndex(tmp_path / "m" / "index" / "keyword.tantivy")
    assert not kw.has_text("ZEBRAQUOKKA123")  # not even in the term list of a deleted document
    kw.close()
    raw = b"".join(p.read_bytes() for p in (tmp_path / "m" / "index").rglob("*") if p.is_file())
    assert b"ZEBRAQUOKKA123" not in raw.upper()


def test_removed_nodes_leave_the_vector_search(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m", sync=False, embedder="deterministic") as mem:
        mem.add_node("alice", "person", name="Alice Wonderland")
        mem.wait_indexed(timeout=20)
        assert mem.indexer.vectors is not None and mem.indexer.vectors.has("node:alice")
        mem.remove_node("alice")
        mem.wait_indexed(timeout=20)
        assert not mem.indexer.vectors.has("node:alice")
        assert not mem.retrieve("Alice Wonderland", k=5, strategy="emb").items
        mem.add_node("alice", "person", name="Alice Wonderland")  # back again
        mem.wait_indexed(timeout=20)
        assert mem.indexer.vectors.has("node:alice")


def test_filters_apply_before_the_candidate_cut(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m", sync=False, embedder="deterministic") as mem:
        target = mem.append_bead(
            "the zucchini in my garden", role="user", tags=["garden"], ts=5000.0
        )
        mem.append_beads(
            [
                {"content": "zucchini zucchini zucchini", "role": "assistant", "ts": 6000.0 + i}
                for i in range(120)
            ]
        )
        mem.append_beads([{"content": f"filler {i}", "ts": 9000.0 + i} for i in range(800)])
        mem.wait_indexed(timeout=60)
        for filters in ({"tags": ["garden"]}, {"role": "user"}, {"since": 5000.0, "until": 5000.0}):
            ids = [i.id for i in mem.retrieve("zucchini", k=5, filters=filters).items]
            assert ids[:1] == [target.id], filters


def test_an_index_ahead_of_its_log_is_rebuilt(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m", sync=False) as mem:
        mem.append_bead("an old note")
        mem.wait_indexed(timeout=20)
        replica = mem.replica_id
    kw = KeywordIndex(tmp_path / "m" / "index" / "keyword.tantivy")
    kw.apply([], [], {replica: 99})  # as if the log had lost its last writes
    kw.close()
    with Memory.open(tmp_path / "m", sync=False) as mem:
        mem.append_bead("a zucchini recipe")
        assert [i.text for i in mem.retrieve("zucchini", k=3, strategy="keyword").items] == [
            "a zucchini recipe"
        ]
        assert mem.retrieve("old note", k=3, strategy="keyword").items


def test_bad_query_vectors(tmp_path: Path) -> None:
    from chrysalis import InvalidInput

    with Memory.open(tmp_path / "m", sync=False, embedder="deterministic") as mem:
        mem.append_bead("x")
        mem.wait_indexed(timeout=20)
        for bad in ("abc", [float("nan")] * 384, [1.0, 2.0]):
            with pytest.raises(InvalidInput):
                mem.retrieve("x", query_vector=bad)
        with pytest.raises(InvalidInput):
            mem.retrieve("x", k=True)  # type: ignore[arg-type]
