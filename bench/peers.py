"""Chrysalis against what people pick instead for a local agent memory: ChromaDB and SQLite FTS5.

    .venv/bin/python bench/peers.py            # full run: 100,000 items, 1,000 queries (minutes)
    .venv/bin/python bench/peers.py --quick    # 1,000 items, 50 queries (seconds; the suite's)
    .venv/bin/python bench/peers.py --json     # the figures as JSON on stdout
    .venv/bin/python bench/peers.py --no-durable --no-chroma   # leave parts out

Needs ``chromadb`` in the venv (``.venv/bin/pip install chromadb``); without it the Chroma
part is skipped with a message and the rest still runs. Everything is local: temporary dirs
under /tmp, in this one process, removed afterwards; nothing listens on a socket.

The data, the same for every system (fixed seeds):

- ``--items`` items (100,000; 1,000 with ``--quick``), each a 768-dim float32 unit vector,
  clustered (200 centres plus noise, as real embeddings are), and an English-ish text of 20-40
  words: about 40 % function words ("the", "of", ...) and the rest drawn Zipf-like from 20,000
  made-up content words ending in a, o or u (so that Porter stemming leaves them as they are
  and both keyword engines see the same terms).
- ``--queries`` vector queries (1,000; 50 with ``--quick``): a stored item's vector plus
  noise, normalised: near a stored item, not on it.
- As many keyword queries: 1-3 distinct content words of a random stored text (the words a
  user would remember), OR-ed. Chrysalis ORs the words too, so the semantics match, except
  that Chrysalis drops words found in more than ``COMMON`` (20 %) of the documents unless
  that leaves none (`KeywordIndex._selective`). The share of queries that holds such a word
  is printed, and so is how far Chrysalis's top 10 agrees with plain FTS5's (ties in BM25
  count as agreeing). Keyword latencies are also shown split in two: queries with no such
  word (where both engines rank the same words: apples to apples) and queries with one
  (where Chrysalis ranks fewer words).
- 20 extra queries of each kind warm each system up first and are not timed.

What is measured, in this order (each store closed and deleted before the next starts; a
``sync(2)`` before each load so that the previous phase's dirty pages are not billed to it):

1. Add throughput, items/s, batches of 1,000 through each system's public API.
   Chrysalis: ``append_beads`` (ids, texts) then ``put_embeddings`` (the precomputed vectors,
   tagged with the embedder's model and the text's hash, so the indexing worker adopts them
   instead of embedding). Two figures: when the API calls have returned (stored, replicable,
   not yet searchable), and until ``wait_indexed`` returns (the FAISS and FTS5 indexes caught
   up: searchable). The embedder given to ``Memory.open`` is a lookup table of the same
   vectors; if the worker reaches a bead before its ``put_embeddings`` commits, it embeds it
   itself (a lookup, not a model) and the count is printed. Run once with ``sync=False`` (no
   fsync) and once with durable ``sync=True`` (``--no-durable`` skips it).
   Chroma: ``PersistentClient``, a collection in ``cosine`` space (Chrysalis searches by inner
   product of unit vectors, the same order), default HNSW settings, no embedding function
   (vectors are passed), ``add(ids, embeddings, documents)``. Chroma's ``add`` returns with
   the items searchable, and it fsyncs (about 19 fsync/fdatasync calls per 1,000-item add,
   counted with strace), so its figure compares with Chrysalis's durable "until searchable"
   one. Chroma also indexes the documents for full-text search (an FTS5 trigram table), as
   Chrysalis does with its keyword index.
2. Vector query latency (p50/p95/p99 ms) and queries/s (the timed queries, one after another,
   over their wall time), k=10:
   - Chrysalis ``retrieve(text, k=10, strategy="emb", query_vector=q)``: the end-to-end
     retrieval API restricted to vectors. It does more than a vector search: it first checks
     the keyword index is caught up with the op log, asks FAISS for 50 hits (``max(50, 5k)``),
     reads the 40 best beads from LMDB with their provenance (origin replica and op), scores
     them (by vector similarity alone under ``strategy="emb"``), builds pydantic
     result items with texts and token counts, de-duplicates and trims to k.
   - Chrysalis ``indexer.vectors.search(q, 10)``: its FAISS index alone (exact inner product
     up to ``exact_limit`` = 50,000 vectors, IVF with nprobe 32 past it), to separate index
     from API overhead.
   - Chroma ``collection.query(query_embeddings=[q], n_results=10)`` with its default
     ``include`` (documents, metadatas, distances): HNSW (M 16, ef_search 100 as of 1.5).
   - recall@10 of each against exact brute-force top 10 (numpy) on the first 200 queries
     (all with ``--quick``), from the answers of the timed runs.
3. Keyword query latency and queries/s, k=10:
   - Chrysalis ``retrieve(text, k=10, strategy="keyword")``: the same API overhead as above,
     and it asks the keyword index for 50 hits; in a memory of over 20,000 items the keyword
     search runs on Chrysalis's search thread.
   - Chrysalis ``indexer.keyword.search(text, 10)``: its tantivy index alone (Porter
     stemming, stop words dropped, block-max WAND top-k).
   - Plain SQLite FTS5: a fresh ``CREATE VIRTUAL TABLE docs USING fts5(content)`` (default
     unicode61 tokenizer, default pragmas) loaded with the same texts in one transaction (load
     time printed), queried ``SELECT rowid, content, bm25(docs) FROM docs WHERE docs MATCH
     '"w1" OR "w2"' ORDER BY bm25(docs) LIMIT 10``.
4. Disk: bytes allocated (as ``du``) by each store once loaded and closed: Chrysalis's whole
   data dir (LMDB: the op log, which holds each vector once, in its ``embedding.put`` op, and
   the views; its tantivy keyword index; its saved FAISS index, which holds each vector
   again), Chroma's persist dir, the FTS5 database file.

Every figure is printed with the ratio Chrysalis / peer and which way is better. Latencies are
in-process (no sockets), single-threaded callers, on a 2-core machine. The load average is
printed at the start and the end: on a busy machine FAISS's exact index (used up to
``exact_limit``) with its default OpenMP threads stalls a single-query search for a scheduler
slice (measured here: ~0.5 ms idle, 7-15 ms with the cores busy); ``--faiss-threads 1`` shows
the difference. The IVF index past ``exact_limit`` is not affected.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from chrysalis import Memory
from chrysalis.search import text_hash
from chrysalis.search.embed import Embedder
from chrysalis.search.keyword import COMMON, STOP_WORDS

DIMS = 768
K = 10
BATCH = 1000  # items per add call (500 with --quick: two calls still)
WARMUP = 20
RECALL_SAMPLE = 200
CONTENT_WORDS = 20_000
FUNCTION_SHARE = 0.4
CHROMA_COLLECTION = "bench"

_FUNCTION = """the of and to a in is that for it was on with as at by from this have or
be an not are but had they his we her she which you their were has one all would there what
so up out if about who them me when"""
FUNCTION_WORDS = _FUNCTION.split()
_ONSET = "b br c ch cl d dr f fr g gl gr h j k l m n p pl pr r s sh sl st t th tr v w z"
_ONSETS = _ONSET.split()
_VOWELS = ["a", "e", "i", "o", "u"]
_CODAS = ["", "", "", "n", "r", "l", "s", "m", "t"]
_FINALS = ["a", "o", "u"]


def log(msg: str) -> None:
    """Progress goes to stderr so that ``--json`` leaves stdout clean."""
    print(msg, file=sys.stderr, flush=True)


# ---- the data ------------------------------------------------------------------------------


def clustered(n: int, dims: int, rng: np.random.Generator, centres: int = 200) -> np.ndarray:
    """Unit vectors around ``centres`` random centres (as in bench/retrieve_bench.py)."""
    c = rng.standard_normal((centres, dims)).astype(np.float32)
    data = c[rng.integers(0, centres, n)]
    data += 0.6 * rng.standard_normal((n, dims)).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    return data


def content_vocabulary(size: int, rng: np.random.Generator) -> list[str]:
    """Pronounceable made-up words, 2-3 syllables, ending in a, o or u: Porter leaves them be
    (no suffix it strips ends in a vowel preceded by a consonant)."""
    taken = set(FUNCTION_WORDS) | set(STOP_WORDS)
    words: list[str] = []
    while len(words) < size:
        syllables = int(rng.integers(1, 3))
        word = "".join(
            _ONSETS[rng.integers(len(_ONSETS))]
            + _VOWELS[rng.integers(len(_VOWELS))]
            + _CODAS[rng.integers(len(_CODAS))]
            for _ in range(syllables)
        )
        word += _ONSETS[rng.integers(len(_ONSETS))] + _FINALS[rng.integers(len(_FINALS))]
        if word not in taken:
            taken.add(word)
            words.append(word)
    return words


@dataclass
class Corpus:
    vectors: np.ndarray  # (n, DIMS) float32, unit rows
    texts: list[str]
    words: list[str]  # function words, then content words
    doc_words: list[np.ndarray]  # per text, the distinct content-word indexes into `words`
    df: np.ndarray  # documents holding each word


def make_corpus(n: int) -> Corpus:
    rng = np.random.default_rng(42)
    vectors = clustered(n, DIMS, rng)
    content = content_vocabulary(CONTENT_WORDS, rng)
    words = FUNCTION_WORDS + content
    nf = len(FUNCTION_WORDS)
    lengths = rng.integers(20, 41, n)
    total = int(lengths.sum())
    pf = 1.0 / np.arange(1, nf + 1)
    pc = 1.0 / (np.arange(1, len(content) + 1) + 2.7)  # Zipf-Mandelbrot
    is_function = rng.random(total) < FUNCTION_SHARE
    ids = np.where(
        is_function,
        rng.choice(nf, total, p=pf / pf.sum()),
        nf + rng.choice(len(content), total, p=pc / pc.sum()),
    )
    vocab = np.array(words, dtype=object)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    texts, doc_words = [], []
    for i in range(n):
        row = ids[offsets[i] : offsets[i + 1]]
        text = " ".join(vocab[row])
        texts.append(text[0].upper() + text[1:] + ".")
        doc_words.append(np.unique(row[row >= nf]))
    df = np.bincount(np.concatenate(doc_words), minlength=len(words))
    return Corpus(vectors, texts, words, doc_words, df)


@dataclass
class Queries:
    vectors: np.ndarray  # (q, DIMS)
    texts: list[str]  # 1-3 content words, space-separated
    common: list[bool]  # holds a word Chrysalis skips as too common


def make_queries(corpus: Corpus, count: int, seed: int) -> Queries:
    rng = np.random.default_rng(seed)
    n = len(corpus.texts)
    picks = rng.integers(0, n, count)
    noise = rng.standard_normal((count, DIMS)).astype(np.float32) / np.sqrt(DIMS)
    vectors = corpus.vectors[picks] + 0.5 * noise  # near a stored item, not on it
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    limit = COMMON * n
    texts, common = [], []
    for pick in rng.integers(0, n, count):
        choices = corpus.doc_words[pick]
        m = min(len(choices), int(rng.integers(1, 4)))
        chosen = rng.choice(choices, m, replace=False)
        texts.append(" ".join(corpus.words[w] for w in chosen))
        common.append(bool((corpus.df[chosen] > limit).any()))
    return Queries(vectors, texts, common)


def exact_top(vectors: np.ndarray, queries: np.ndarray, k: int) -> list[set[int]]:
    """Brute-force top k by inner product (cosine: the rows are unit vectors)."""
    sims = vectors @ queries.T  # (n, q)
    top = np.argpartition(-sims, k, axis=0)[:k]
    return [set(top[:, j].tolist()) for j in range(queries.shape[0])]


def recall_at_k(got: Sequence[Sequence[int]], exact: Sequence[set[int]]) -> float:
    hits = sum(len(set(g[:K]) & e) for g, e in zip(got, exact, strict=False))
    return hits / (K * len(exact))


# ---- measuring -----------------------------------------------------------------------------


def percentile(sorted_values: list[float], pct: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    rank = max(1, round(pct / 100 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


@dataclass
class Timing:
    p50: float
    p95: float
    p99: float
    qps: float
    answers: list[list[int]] = field(repr=False)
    latencies: list[float] = field(repr=False)  # ms, in query order

    def subset(self, mask: np.ndarray) -> Timing:
        """The same figures over the queries ``mask`` selects (q/s: one over the mean)."""
        chosen = sorted(np.asarray(self.latencies)[mask].tolist())
        if not chosen:
            return Timing(float("nan"), float("nan"), float("nan"), float("nan"), [], [])
        p50, p95, p99 = (percentile(chosen, pct) for pct in (50, 95, 99))
        return Timing(p50, p95, p99, 1000 * len(chosen) / sum(chosen), [], chosen)


def time_queries(
    run: Callable[[int], list[int]], count: int, warmup: Callable[[int], object]
) -> Timing:
    """``run(j)`` answers query j with item indexes; latency per call in ms."""
    for j in range(WARMUP):
        warmup(j)
    latencies, answers = [], []
    start = time.perf_counter()
    for j in range(count):
        t = time.perf_counter()
        got = run(j)
        latencies.append((time.perf_counter() - t) * 1000)
        answers.append(got)
    elapsed = time.perf_counter() - start
    ordered = sorted(latencies)
    return Timing(
        p50=percentile(ordered, 50),
        p95=percentile(ordered, 95),
        p99=percentile(ordered, 99),
        qps=count / elapsed,
        answers=answers,
        latencies=latencies,
    )


def disk_bytes(path: Path) -> int:
    """Bytes allocated, as ``du`` counts them (sparse files count what they use)."""
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return sum(p.stat().st_blocks * 512 for p in files)


SETTLE = True  # off with --quick: a smoke run's figures are not compared, and a sync may wait


def settle() -> None:
    """Flush other phases' dirty pages before a timed load."""
    if SETTLE:
        os.sync()
        time.sleep(0.5)


def bead_index(key_or_id: str) -> int:
    """``bead:b123``, ``b123`` -> 123."""
    return int(key_or_id.rpartition(":")[2][1:])


# ---- Chrysalis -----------------------------------------------------------------------------


class TableEmbedder(Embedder):
    """The corpus's own vectors by text: what the indexing worker would use if it reached a
    bead before the caller's ``put_embeddings`` did. Counts the texts it was asked for."""

    provider = "bench-table"

    def __init__(self, corpus: Corpus) -> None:
        self.table = {t: i for i, t in enumerate(corpus.texts)}
        self.vectors = corpus.vectors
        self.dims = DIMS
        self.model = f"bench-table-{DIMS}"
        self.calls = 0

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += len(texts)
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            i = self.table.get(text)
            if i is None:
                out[row, 0] = 1.0
            else:
                out[row] = self.vectors[i]
        return out


def chrysalis_load(mem: Memory, corpus: Corpus, embedder: TableEmbedder) -> tuple[float, float]:
    """Beads and their vectors in batches; returns (seconds in the API calls, seconds more
    until every index is caught up)."""
    n = len(corpus.texts)
    t0 = time.perf_counter()
    for start in range(0, n, BATCH):
        stop = min(n, start + BATCH)
        mem.append_beads([{"id": f"b{i}", "content": corpus.texts[i]} for i in range(start, stop)])
        mem.put_embeddings(
            [
                {"item_kind": "bead", "item_id": f"b{i}", "model": embedder.model,
                 "vector": corpus.vectors[i], "provider": embedder.provider,
                 "text_hash": text_hash(corpus.texts[i])}
                for i in range(start, stop)
            ]
        )  # fmt: skip
        if stop % (BATCH * 20) == 0:
            log(f"    {stop:,} items written")
    api = time.perf_counter() - t0
    t1 = time.perf_counter()
    mem.wait_indexed(timeout=3600)
    return api, time.perf_counter() - t1


def run_chrysalis(
    corpus: Corpus, queries: Queries, warm: Queries, durable: bool, out: dict[str, Any]
) -> None:
    n = len(corpus.texts)
    if durable:
        log("Chrysalis: load with sync=True (durable) ...")
        with tempfile.TemporaryDirectory(prefix="chrysalis-peers-durable-", dir="/tmp") as tmp:
            embedder = TableEmbedder(corpus)
            settle()
            with Memory.open(Path(tmp) / "data", sync=True, embedder=embedder) as mem:
                api, catch_up = chrysalis_load(mem, corpus, embedder)
            out["durable_api_s"], out["durable_catch_up_s"] = api, catch_up
            out["durable_worker_embedded"] = embedder.calls
            log(f"  API {api:.1f} s, then indexes caught up in {catch_up:.1f} s")

    log("Chrysalis: load with sync=False ...")
    with tempfile.TemporaryDirectory(prefix="chrysalis-peers-", dir="/tmp") as tmp:
        path = Path(tmp) / "data"
        embedder = TableEmbedder(corpus)
        settle()
        with Memory.open(path, sync=False, embedder=embedder) as mem:
            api, catch_up = chrysalis_load(mem, corpus, embedder)
            out["api_s"], out["catch_up_s"] = api, catch_up
            out["worker_embedded"] = embedder.calls
            vindex = mem.indexer.vectors
            assert vindex is not None
            out["index_kind"] = vindex.kind
            out["index_items"] = len(vindex)
            out["exact_limit"], out["nprobe"] = vindex.exact_limit, vindex.nprobe
            log(f"  API {api:.1f} s, then indexes caught up in {catch_up:.1f} s "
                f"({vindex.kind} vector index of {len(vindex):,})")  # fmt: skip
            stored = mem.stats()["beads"]
            if stored != n or len(vindex) != n or mem.indexer.keyword.count() != n:
                raise AssertionError(
                    f"expected {n} items; beads {stored}, vectors {len(vindex)}, "
                    f"keyword {mem.indexer.keyword.count()}"
                )

            def api_emb(j: int) -> list[int]:
                result = mem.retrieve(
                    queries.texts[j], k=K, strategy="emb", query_vector=queries.vectors[j]
                )
                return [bead_index(item.id) for item in result.items]

            def api_emb_warm(j: int) -> object:
                return mem.retrieve(
                    warm.texts[j], k=K, strategy="emb", query_vector=warm.vectors[j]
                )

            log("  vector queries: retrieve(strategy='emb') ...")
            out["emb_api"] = time_queries(api_emb, len(queries.texts), api_emb_warm)
            log("  vector queries: VectorIndex.search ...")
            out["emb_index"] = time_queries(
                lambda j: [bead_index(h.key) for h in vindex.search(queries.vectors[j], K)],
                len(queries.texts),
                lambda j: vindex.search(warm.vectors[j], K),
            )

            keyword = mem.indexer.keyword
            log("  keyword queries: retrieve(strategy='keyword') ...")
            out["kw_api"] = time_queries(
                lambda j: [
                    bead_index(item.id)
                    for item in mem.retrieve(queries.texts[j], k=K, strategy="keyword").items
                ],
                len(queries.texts),
                lambda j: mem.retrieve(warm.texts[j], k=K, strategy="keyword"),
            )
            log("  keyword queries: KeywordIndex.search ...")
            out["kw_index"] = time_queries(
                lambda j: [bead_index(h.key) for h in keyword.search(queries.texts[j], K)],
                len(queries.texts),
                lambda j: keyword.search(warm.texts[j], K),
            )
        out["disk"] = disk_bytes(path)
        out["disk_lmdb"] = disk_bytes(path / "lmdb")
        out["disk_keyword"] = disk_bytes(path / "index" / "keyword.tantivy")
        out["disk_faiss"] = disk_bytes(path / "index" / "faiss")


# ---- ChromaDB ------------------------------------------------------------------------------


def run_chroma(corpus: Corpus, queries: Queries, warm: Queries, out: dict[str, Any]) -> None:
    import chromadb
    from chromadb.config import Settings

    out["version"] = chromadb.__version__
    n = len(corpus.texts)
    with tempfile.TemporaryDirectory(prefix="chroma-peers-", dir="/tmp") as tmp:
        path = Path(tmp) / "chroma"
        client = chromadb.PersistentClient(
            path=str(path), settings=Settings(anonymized_telemetry=False)
        )
        try:
            collection = client.create_collection(
                CHROMA_COLLECTION,
                configuration={"hnsw": {"space": "cosine"}},
                embedding_function=None,  # vectors are passed: never the default ONNX model
            )
            out["config"] = collection.configuration.get("hnsw")
            log(f"Chroma {chromadb.__version__}: add ... (hnsw {out['config']})")
            settle()
            t0 = time.perf_counter()
            for start in range(0, n, BATCH):
                stop = min(n, start + BATCH)
                collection.add(
                    ids=[f"b{i}" for i in range(start, stop)],
                    embeddings=corpus.vectors[start:stop],
                    documents=corpus.texts[start:stop],
                )
                if stop % (BATCH * 20) == 0:
                    log(f"    {stop:,} items added")
            out["add_s"] = time.perf_counter() - t0
            log(f"  add {out['add_s']:.1f} s")
            if collection.count() != n:
                raise AssertionError(f"Chroma holds {collection.count()} items, expected {n}")

            def query(j: int) -> list[int]:
                r = collection.query(query_embeddings=queries.vectors[j : j + 1], n_results=K)
                return [bead_index(i) for i in r["ids"][0]]

            log("  vector queries: collection.query ...")
            out["emb"] = time_queries(
                query,
                len(queries.texts),
                lambda j: collection.query(query_embeddings=warm.vectors[j : j + 1], n_results=K),
            )
        finally:
            close = getattr(client, "close", None)  # chromadb >= 1.1; the API type lacks it
            if close is not None:
                close()
        out["disk"] = disk_bytes(path)


# ---- plain SQLite FTS5 ---------------------------------------------------------------------


def fts_match(text: str) -> str:
    return " OR ".join(f'"{w}"' for w in text.split())


def run_fts5(corpus: Corpus, queries: Queries, warm: Queries, out: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory(prefix="fts5-peers-", dir="/tmp") as tmp:
        path = Path(tmp) / "docs.sqlite"
        db = sqlite3.connect(path, isolation_level=None)
        try:
            log("SQLite FTS5: load ...")
            settle()
            t0 = time.perf_counter()
            db.execute("CREATE VIRTUAL TABLE docs USING fts5(content)")
            db.execute("BEGIN")
            db.executemany(
                "INSERT INTO docs(rowid, content) VALUES (?, ?)",
                ((i + 1, t) for i, t in enumerate(corpus.texts)),
            )
            db.execute("COMMIT")
            out["load_s"] = time.perf_counter() - t0
            log(f"  load {out['load_s']:.1f} s")
            sql = (
                "SELECT rowid, content, bm25(docs) FROM docs WHERE docs MATCH ? "
                "ORDER BY bm25(docs) LIMIT ?"
            )
            scores: list[list[float]] = []

            def query(j: int) -> list[int]:
                rows = db.execute(sql, (fts_match(queries.texts[j]), K)).fetchall()
                scores.append([r[2] for r in rows])
                return [r[0] - 1 for r in rows]

            log("  keyword queries: MATCH ... ORDER BY bm25 ...")
            out["kw"] = time_queries(
                query,
                len(queries.texts),
                lambda j: db.execute(sql, (fts_match(warm.texts[j]), K)).fetchall(),
            )
            out["scores"] = scores

            def agreement(answers: list[list[int]]) -> list[float]:
                """Per query: the share of FTS5's top k that Chrysalis also returned, ties in
                BM25 counting as the same (their order is arbitrary in both)."""
                shares = []
                for j, got in enumerate(answers):
                    mine = scores[j]
                    if not mine:
                        shares.append(1.0 if not got else 0.0)
                        continue
                    tenth = mine[-1]
                    marks = ",".join("?" * len(got))
                    bm25 = dict(
                        db.execute(
                            "SELECT rowid, bm25(docs) FROM docs WHERE docs MATCH ? "
                            f"AND rowid IN ({marks})",
                            (fts_match(queries.texts[j]), *[g + 1 for g in got]),
                        ).fetchall()
                    ) if got else {}  # fmt: skip
                    agreeing = sum(1 for g in got if g + 1 in bm25 and bm25[g + 1] <= tenth + 1e-9)
                    shares.append(min(1.0, agreeing / len(mine)))
                return shares

            for name in ("kw_api", "kw_index"):
                timing = out.get(f"chrysalis_{name}")
                if timing is not None:
                    out[f"agree_{name}"] = agreement(timing.answers)
        finally:
            db.close()
        out["disk"] = disk_bytes(path)


# ---- report --------------------------------------------------------------------------------


@dataclass
class Row:
    name: str
    unit: str
    chrysalis: float | None
    peer: float | None
    peer_name: str
    higher_is_better: bool | None  # None: no direction (a count, a note)

    @property
    def ratio(self) -> float | None:
        if self.chrysalis is None or not self.peer:
            return None
        ratio = self.chrysalis / self.peer
        return ratio if math.isfinite(ratio) else None

    @property
    def winner(self) -> str:
        r = self.ratio
        if r is None or self.higher_is_better is None:
            return ""
        if abs(r - 1) < 0.05:
            return "even"
        return "Chrysalis" if (r > 1) == self.higher_is_better else "peer"


def build_rows(
    n: int, c: dict[str, Any], ch: dict[str, Any], fts: dict[str, Any], common: np.ndarray
) -> list[Row]:
    chroma = "Chroma" if ch.get("add_s") else "Chroma (skipped)"
    chroma_rate = n / ch["add_s"] if ch.get("add_s") else None
    rows = [
        Row("add, sync=False: API calls returned", "items/s", n / c["api_s"], chroma_rate,
            chroma, True),
        Row("add, sync=False: until searchable", "items/s", n / (c["api_s"] + c["catch_up_s"]),
            chroma_rate, chroma, True),
    ]  # fmt: skip
    if "durable_api_s" in c:
        durable = c["durable_api_s"], c["durable_catch_up_s"]
        rows += [
            Row("add, sync=True: API calls returned", "items/s", n / durable[0], chroma_rate,
                chroma, True),
            Row("add, sync=True: until searchable", "items/s", n / sum(durable), chroma_rate,
                chroma, True),
        ]  # fmt: skip

    def latencies(label: str, mine: Timing, peer: Timing | None, who: str) -> list[Row]:
        out = [
            Row(f"{label} {stat}", "ms", getattr(mine, stat), getattr(peer, stat, None), who, False)
            for stat in ("p50", "p95", "p99")
        ]
        return [*out, Row(f"{label} queries/s", "q/s", mine.qps, getattr(peer, "qps", None),
                          who, True)]  # fmt: skip

    emb_peer: Timing | None = ch.get("emb")
    exact = c["exact"]
    peer_recall = recall_at_k(emb_peer.answers, exact) if emb_peer else None
    rows += latencies("vector: retrieve(emb)", c["emb_api"], emb_peer, chroma)
    rows += latencies("vector: VectorIndex.search", c["emb_index"], emb_peer, chroma)
    for key, label in (("emb_api", "retrieve(emb)"), ("emb_index", "VectorIndex.search")):
        mine = recall_at_k(c[key].answers, exact)
        rows.append(Row(f"vector: recall@10, {label}", "", mine, peer_recall, chroma, True))

    rows += latencies("keyword: retrieve(keyword)", c["kw_api"], fts["kw"], "FTS5")
    rows += latencies("keyword: KeywordIndex.search", c["kw_index"], fts["kw"], "FTS5")
    for mask, part in ((~common, "no common word"), (common, "a common word")):
        for key, label in (("kw_api", "retrieve(keyword)"), ("kw_index", "KeywordIndex.search")):
            mine, peer = c[key].subset(mask), fts["kw"].subset(mask)
            rows += [
                Row(f"kw, {part}: {label} {stat}", "ms", getattr(mine, stat),
                    getattr(peer, stat), "FTS5", False)
                for stat in ("p50", "p95")
            ]  # fmt: skip
    for key, label in (("kw_api", "retrieve(keyword)"), ("kw_index", "KeywordIndex.search")):
        share = float(np.mean(fts[f"agree_{key}"]))
        rows.append(Row(f"keyword: agreement@10, {label}", "", share, None, "FTS5", None))
    rows.append(Row("keyword: FTS5 load, one transaction", "items/s", None, n / fts["load_s"],
                    "FTS5", True))  # fmt: skip

    mib = 2**20
    chroma_disk = ch["disk"] / mib if ch.get("disk") else None
    rows += [
        Row("disk: whole store", "MiB", c["disk"] / mib, chroma_disk, chroma, False),
        Row("disk: keyword index alone", "MiB", c["disk_keyword"] / mib, fts["disk"] / mib,
            "FTS5", False),
    ]  # fmt: skip
    return rows


def print_table(rows: list[Row]) -> None:
    def num(v: float | None, unit: str) -> str:
        if v is None:
            return "-"
        if unit in ("ms",):
            return f"{v:,.2f}"
        if unit == "":
            return f"{v:.3f}"
        return f"{v:,.0f}" if v >= 100 else f"{v:,.1f}"

    head = f"{'figure':<44} {'Chrysalis':>11} {'peer':>11} {'peer is':<17} {'unit':<8}"
    print(f"{head} {'C/peer':>7}  {'better':<7} winner")
    print("-" * 123)
    for r in rows:
        ratio = "-" if r.ratio is None else f"{r.ratio:.2f}"
        better = {True: "higher", False: "lower", None: ""}[r.higher_is_better]
        print(f"{r.name:<44} {num(r.chrysalis, r.unit):>11} {num(r.peer, r.unit):>11} "
              f"{r.peer_name:<17} {r.unit:<8} {ratio:>7}  {better:<7} {r.winner}")  # fmt: skip


def environment(chroma_version: str | None) -> dict[str, Any]:
    import faiss

    cpu = ""
    with open("/proc/cpuinfo") as fh:
        for line in fh:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "faiss": faiss.__version__,
        "faiss_threads": faiss.omp_get_max_threads(),
        "chromadb": chroma_version,
        "sqlite": sqlite3.sqlite_version,
        "cpu_count": os.cpu_count(),
        "cpu": cpu,
        "platform": platform.platform(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=1_000)
    parser.add_argument("--quick", action="store_true", help="1,000 items, 50 queries")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--no-durable", action="store_true", help="skip the sync=True load")
    parser.add_argument("--no-chroma", action="store_true", help="skip ChromaDB")
    parser.add_argument(
        "--faiss-threads", type=int, help="FAISS OpenMP threads (default: FAISS's, as Chrysalis)"
    )
    args = parser.parse_args(argv)
    if args.faiss_threads:
        import faiss

        faiss.omp_set_num_threads(args.faiss_threads)
    global SETTLE, BATCH
    SETTLE = not args.quick
    if args.quick:  # the suite's smoke run: every phase, each load still in two add calls
        BATCH = 500
    n = 1_000 if args.quick else args.items
    q = 50 if args.quick else args.queries
    if n < 2 * BATCH or q < 1:
        parser.error(f"need at least {2 * BATCH:,} items and one query")

    chroma_skip: str | None = "--no-chroma" if args.no_chroma else None
    chroma_version = None
    if chroma_skip is None:
        try:
            import chromadb

            chroma_version = chromadb.__version__
        except Exception as exc:  # not installed, or its import fails here
            chroma_skip = f"chromadb cannot be imported ({type(exc).__name__}: {exc})"
            log(f"SKIPPING CHROMA: {chroma_skip}; `.venv/bin/pip install chromadb` to include it")

    env = environment(chroma_version)
    if env["load_average_at_start"][0] > 0.5:
        log(f"WARNING: the machine is busy (load average {env['load_average_at_start']}): "
            "latencies will be noisy, FAISS's multi-threaded search especially")  # fmt: skip
    if not args.json:
        print(f"python {env['python']}, numpy {env['numpy']}, faiss {env['faiss']} "
              f"({env['faiss_threads']} OpenMP threads), "
              f"chromadb {env['chromadb'] or '(none)'}, SQLite {env['sqlite']}")  # fmt: skip
        print(f"{env['cpu_count']} CPUs ({env['cpu']}), {env['platform']}, "
              f"load average at start {env['load_average_at_start']}")  # fmt: skip
        print(f"mode: {'quick' if args.quick else 'full'}: {n:,} items x {DIMS} dims, "
              f"{q:,} vector + {q:,} keyword queries, k={K}\n", flush=True)  # fmt: skip

    t_start = time.perf_counter()
    log(f"making {n:,} items and {q:,} queries ...")
    corpus = make_corpus(n)
    queries = make_queries(corpus, q, seed=7)
    warm = make_queries(corpus, WARMUP, seed=8)
    sample = min(RECALL_SAMPLE, q)
    c: dict[str, Any] = {"exact": exact_top(corpus.vectors, queries.vectors[:sample], K)}

    run_chrysalis(corpus, queries, warm, durable=not args.no_durable, out=c)

    fts: dict[str, Any] = {
        "chrysalis_kw_api": c["kw_api"],
        "chrysalis_kw_index": c["kw_index"],
    }
    run_fts5(corpus, queries, warm, fts)

    ch: dict[str, Any] = {}
    if chroma_skip is None:
        try:
            run_chroma(corpus, queries, warm, ch)
        except Exception as exc:
            chroma_skip = f"the Chroma run failed ({type(exc).__name__}: {exc})"
            log(f"SKIPPING CHROMA: {chroma_skip}")
            ch = {}

    common = np.asarray(queries.common)
    rows = build_rows(n, c, ch, fts, common)
    agree_api = np.asarray(fts["agree_kw_api"])
    notes = [
        f"Chrysalis vector index: {c['index_kind']} ({c['index_items']:,} vectors; exact up to "
        f"{c['exact_limit']:,}, IVF nprobe {c['nprobe']} past it); catch-up after the API calls: "
        f"{c['catch_up_s']:.1f} s"
        + (
            f" (sync=False), {c['durable_catch_up_s']:.1f} s (sync=True)"
            if "durable_catch_up_s" in c
            else ""
        ),
        f"items the indexing worker embedded itself (lookup) before put_embeddings landed: "
        f"{c['worker_embedded']:,} (sync=False)"
        + (f", {c['durable_worker_embedded']:,} (sync=True)" if "durable_api_s" in c else ""),
        f"recall@10 measured on the first {sample} vector queries against numpy brute force",
        f"keyword queries holding a word Chrysalis skips as common (df > "
        f"{COMMON * n:,.0f}): {common.mean():.1%}; agreement@10 of retrieve(keyword) "
        f"with FTS5 on those: {agree_api[common].mean() if common.any() else float('nan'):.3f}, "
        f"on the rest: {agree_api[~common].mean() if (~common).any() else float('nan'):.3f}",
        f"Chrysalis data dir: LMDB {c['disk_lmdb'] / 2**20:,.0f} MiB, keyword index "
        f"{c['disk_keyword'] / 2**20:,.0f} MiB, FAISS {c['disk_faiss'] / 2**20:,.0f} MiB",
        f"plain FTS5 load (one transaction): {fts['load_s']:.2f} s",
    ]
    if ch.get("config"):
        notes.append(f"Chroma collection hnsw config: {ch['config']}")
    if chroma_skip:
        notes.append(f"Chroma skipped: {chroma_skip}")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    notes.append(f"wall time of the whole run: {time.perf_counter() - t_start:.0f} s; load "
                 f"average at the end: {load}")  # fmt: skip

    if args.json:
        payload = {
            "environment": env,
            "items": n,
            "queries": q,
            "dims": DIMS,
            "k": K,
            "rows": [{**asdict(r), "ratio": r.ratio, "winner": r.winner} for r in rows],
            "notes": notes,
        }
        print(json.dumps(payload, indent=2))
    else:
        print_table(rows)
        print()
        for note in notes:
            print(f"- {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
