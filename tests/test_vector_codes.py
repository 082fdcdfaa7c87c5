"""The vector index keeps codes, not a float32 copy: past the exact limit it searches 8-bit
codes and re-ranks by the vectors stored in LMDB, and still finds the true nearest neighbours."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from chrysalis import Memory
from chrysalis.core import vector_bytes
from chrysalis.search import VectorIndex
from chrysalis.search.embed import Embedder
from chrysalis.search.indexer import text_hash
from chrysalis.search.vectors import FORMAT, REFINE_MIN
from chrysalis.store.keys import pack, unpack

DIMS = 64


def clustered(n: int, seed: int) -> np.ndarray:
    """Unit vectors in tight clusters: many near-ties, where coarse codes alone misorder."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((12, DIMS))
    data = centres[rng.integers(0, 12, n)] + 0.25 * rng.standard_normal((n, DIMS))
    return (data / np.linalg.norm(data, axis=1, keepdims=True)).astype(np.float32)


class Table(Embedder):
    """Hands out the test's own vectors by text (the worker asks for none: they are put)."""

    provider = "test-table"

    def __init__(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        self.rows = {t: v for t, v in zip(texts, vectors, strict=True)}
        self.dims, self.model = DIMS, f"table-{DIMS}"

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        zero = np.zeros(DIMS, np.float32)
        return np.stack([self.rows.get(t, zero) for t in texts]).reshape(len(texts), DIMS)


def loaded(open_memory: Callable[..., Memory], n: int, seed: int) -> tuple[Memory, np.ndarray]:
    data = clustered(n, seed)
    texts = [f"entry {i} about the {('heron', 'pylon', 'quince')[i % 3]}" for i in range(n)]
    table = Table(texts, data)
    mem = open_memory(embedder=table, exact_limit=n // 4)
    mem.append_beads([{"id": f"v{i}", "content": t} for i, t in enumerate(texts)])
    mem.put_embeddings(
        [
            {"item_kind": "bead", "item_id": f"v{i}", "model": table.model, "vector": data[i],
             "provider": table.provider, "text_hash": text_hash(texts[i])}
            for i in range(n)
        ]
    )  # fmt: skip
    mem.wait_indexed(timeout=120)
    return mem, data


def test_ivf_on_codes_finds_what_float32_brute_force_finds(
    open_memory: Callable[..., Memory],
) -> None:
    """Through ``retrieve(strategy="emb")``, against numpy on the float32 vectors handed in."""
    mem, data = loaded(open_memory, 2400, seed=21)
    vectors = mem.indexer.vectors
    assert vectors is not None and vectors.kind == "ivf"
    rng = np.random.default_rng(4)
    hits = 0
    for j in rng.integers(0, len(data), 40):
        query = data[j] + 0.1 * rng.standard_normal(DIMS).astype(np.float32)
        query /= np.linalg.norm(query)
        exact = {f"v{i}" for i in np.argsort(-(data @ query))[:10]}
        got = mem.retrieve("anything", k=10, strategy="emb", query_vector=query).items
        assert [i.score for i in got] == sorted((i.score for i in got), reverse=True)
        hits += len(exact & {i.id for i in got})
    assert hits / 400 >= 0.99


def test_the_saved_index_holds_codes_not_float32(open_memory: Callable[..., Memory]) -> None:
    """A quarter of float32's bytes past the limit (plus lists and ids), and the ops hold
    each vector once, as float16."""
    mem, data = loaded(open_memory, 2400, seed=22)
    vectors = mem.indexer.vectors
    assert vectors is not None
    vectors.save()
    saved = sum(p.stat().st_size for p in (mem.path / "index" / "faiss").glob("*.faiss"))
    assert saved < data.nbytes * 0.45  # float32 was data.nbytes and more
    # the worker may have embedded a bead too (the same vector, from the table): any op of it
    ops = mem.ops_since({})
    puts = [o["data"] for o in ops if o["kind"] == "embedding.put" and o["target"] == "v7"]
    assert puts and all(p["item_kind"] == "bead" and len(p["vector"]) == DIMS * 2 for p in puts)
    assert np.abs(vector_bytes.decode(puts[-1]["vector"], DIMS) - data[7]).max() < 1e-3


def test_a_candidate_forgotten_meanwhile_is_not_returned(tmp_path: Path) -> None:
    """Re-ranking reads the stored vectors: one no longer stored (forgotten between the index
    search and the read) is dropped, not scored by its code."""
    data = clustered(1200, seed=23)
    store = {f"bead:{i}": data[i] for i in range(len(data))}
    index = VectorIndex(
        tmp_path,
        "m",
        DIMS,
        exact_limit=300,
        stored=lambda ks: {k: store[k] for k in ks if k in store},
    )
    index.upsert(list(store), data)
    assert index.kind == "ivf"
    first = index.search(data[5], 5)
    assert first[0].key == "bead:5" and first[0].score == np.float32(data[5] @ data[5])
    del store["bead:5"]
    assert "bead:5" not in {h.key for h in index.search(data[5], 5)}
    store.clear()
    assert index.search(data[5], 5) == []


def test_an_index_saved_in_the_float32_format_is_rebuilt(tmp_path: Path) -> None:
    """An older index file (float32 vectors, before codes) is not loaded: the worker rebuilds
    it from LMDB once, and search answers the same."""
    with Memory.open(tmp_path / "m", sync=False, embedder="deterministic") as mem:
        mem.append_beads(
            [{"content": f"the lighthouse keeper's log, night {i}"} for i in range(30)]
        )
        mem.wait_indexed(timeout=30)
        before = [i.id for i in mem.retrieve("lighthouse night 7", k=5, strategy="emb").items]
        vectors = mem.indexer.vectors
        assert vectors is not None
        vectors.save()
        meta_path = vectors.meta_path
    meta = unpack(meta_path.read_bytes())
    assert meta["format"] == FORMAT
    del meta["format"]  # what a round-2 index wrote
    meta_path.write_bytes(pack(meta))
    probe = VectorIndex(meta_path.parent, meta["model"], meta["dims"])
    assert not probe.load()
    with Memory.open(tmp_path / "m", sync=False, embedder="deterministic") as mem:
        mem.wait_indexed(timeout=30)
        assert [
            i.id for i in mem.retrieve("lighthouse night 7", k=5, strategy="emb").items
        ] == before
        assert mem.indexer.status()["vectors"]["items"] == 30
    assert unpack(meta_path.read_bytes())["format"] == FORMAT  # rebuilt, saved at close


def test_only_the_best_exact_hits_read_their_stored_vectors(tmp_path: Path) -> None:
    """``search(k, exact=m)``: the codes' ``m + REFINE_MIN`` best are re-ranked by their stored
    vectors and the ``m`` best of those lead, scored exactly; the rest of the ``k`` keep their
    codes' scores, close to the cosine, unread (a fused pool checks what it shows)."""
    data = clustered(1500, seed=24)
    store = {f"bead:{i}": data[i] for i in range(len(data))}
    asked: list[int] = []

    def stored(keys: Sequence[str]) -> dict[str, np.ndarray]:
        asked.append(len(keys))
        return {k: store[k] for k in keys if k in store}

    index = VectorIndex(tmp_path, "m", DIMS, exact_limit=300, stored=stored)
    index.upsert(list(store), data)
    assert index.kind == "ivf"
    rng = np.random.default_rng(9)
    query = data[11] + 0.2 * rng.standard_normal(DIMS).astype(np.float32)
    query /= np.linalg.norm(query)
    truth = {f"bead:{i}": float(data[i] @ query) for i in range(len(data))}
    best = sorted(truth, key=lambda k: -truth[k])

    hits = index.search(query, 80, exact=5)
    assert asked == [5 + REFINE_MIN] and len(hits) == 80
    assert [h.key for h in hits[:5]] == best[:5]
    assert all(abs(h.score - float(store[h.key] @ query)) < 1e-6 for h in hits[:5])
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert max(abs(h.score - truth[h.key]) for h in hits[5:]) < 0.02  # codes: close, not exact
    assert len({h.key for h in hits} & set(best[:80])) >= 72

    asked.clear()
    default = index.search(query, 30)  # exact=k: every hit read and scored exactly
    assert asked == [30 + REFINE_MIN]
    assert all(abs(h.score - float(store[h.key] @ query)) < 1e-6 for h in default)
    assert [h.key for h in index.search(query, 30, exact=30)] == [h.key for h in default]


def test_fused_recall_at_ivf_scale_scores_its_best_vector_hits_exactly(
    open_memory: Callable[..., Memory],
) -> None:
    """Fusion asks the index for a pool of 5k but exact scores for k: the k nearest still
    carry the cosine of their stored (float16) vectors as their emb signal."""
    mem, data = loaded(open_memory, 2400, seed=25)
    assert mem.indexer.vectors is not None and mem.indexer.vectors.kind == "ivf"
    rng = np.random.default_rng(5)
    for j in rng.integers(0, len(data), 10):
        query = data[j] + 0.1 * rng.standard_normal(DIMS).astype(np.float32)
        query /= np.linalg.norm(query)
        stored = {
            f"v{i}": float(vector_bytes.decode(vector_bytes.encode(data[i]), DIMS) @ query)
            for i in range(len(data))
        }
        nearest = sorted(stored, key=lambda i: -stored[i])[:10]
        got = mem.retrieve("anything", k=10, query_vector=query).items
        emb = {i.id: i.signals["emb"] for i in got if "emb" in i.signals}
        assert len(set(nearest) & set(emb)) >= 9
        assert all(abs(emb[i] - stored[i]) < 1e-5 for i in set(nearest) & set(emb))
