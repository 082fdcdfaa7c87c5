"""Fused retrieval at scale: 100,000 beads with 768-dim vectors, 20,000 nodes, 50,000 edges.

Vectors are clustered (not uniform): 200 centres plus noise, as real embeddings are. The
embedder is a lookup table of those vectors, so the numbers measure Chrysalis, not a model.
Prints: index build time (the worker embedding and indexing everything), fused retrieve
latency in-process with the query vector given, ANN recall@10 against exact search, the
load time at restart, and peak RSS.

    .venv/bin/python bench/retrieve_bench.py [--beads 100000] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from chrysalis import Memory
from chrysalis.embed import Embedder

DIMS = 768
_WORDS = """alpha budget cinnamon delta engine falcon garden harbor island jungle kettle
lantern meadow nebula orchard pepper quartz river saffron tundra umbrella velvet walnut xenon
yarrow zephyr"""
WORDS = _WORDS.split()


class TableEmbedder(Embedder):
    """Vectors by lookup; texts it has not seen get a stable pseudo-random unit vector."""

    provider = "bench-table"

    def __init__(self, table: dict[str, np.ndarray], dims: int = DIMS) -> None:
        self.table = table
        self.dims = dims
        self.model = f"bench-table-{dims}"

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            vector = self.table.get(text)
            if vector is None:
                seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
                vector = np.random.default_rng(seed).standard_normal(self.dims).astype(np.float32)
                vector /= np.linalg.norm(vector)
            out[row] = vector
        return out


def clustered(n: int, dims: int, rng: np.random.Generator, centres: int = 200) -> np.ndarray:
    c = rng.standard_normal((centres, dims)).astype(np.float32)
    data = c[rng.integers(0, centres, n)] + 0.6 * rng.standard_normal((n, dims)).astype(np.float32)
    return data / np.linalg.norm(data, axis=1, keepdims=True)


VOCAB = [f"{WORDS[j % len(WORDS)]}{j}" for j in range(20_000)]


def bead_text(i: int, rng: np.random.Generator) -> str:
    """Twelve words with a Zipf-like spread, as in real notes: a few common, most rare."""
    ranks = np.minimum(rng.zipf(1.3, 12) - 1, len(VOCAB) - 1)
    return f"note {i}: " + " ".join(VOCAB[r] for r in ranks)


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(n_beads: int, n_nodes: int, n_edges: int, queries: int) -> dict[str, Any]:
    rng = np.random.default_rng(42)
    vectors = clustered(n_beads, DIMS, rng)
    texts = [bead_text(i, rng) for i in range(n_beads)]
    table = {t: v for t, v in zip(texts, vectors, strict=True)}
    out: dict[str, Any] = {"beads": n_beads, "nodes": n_nodes, "edges": n_edges, "dims": DIMS}
    with tempfile.TemporaryDirectory(prefix="chrysalis-retrieve-") as tmp:
        path = Path(tmp) / "m"
        embedder = TableEmbedder(table)
        t0 = time.perf_counter()
        with Memory.open(path, sync=False, embedder=embedder) as mem:
            for start in range(0, n_beads, 1000):
                mem.append_beads(
                    [
                        {"id": f"b{i}", "content": texts[i], "session_id": f"s{i // 50}",
                         "ts": 1_700_000_000.0 + i}
                        for i in range(start, min(n_beads, start + 1000))
                    ]
                )  # fmt: skip
            for i in range(n_nodes):
                mem.add_node(f"n{i}", "entity", name=f"{WORDS[i % len(WORDS)]} {i}")
            for i in range(n_edges):
                src, dst = int(rng.integers(0, n_nodes)), int(rng.integers(0, n_nodes))
                mem.add_edge(
                    f"n{src}", f"n{dst}", "related_to", id=f"e{i}", evidence=[f"b{i % n_beads}"]
                )
            out["write_s"] = round(time.perf_counter() - t0, 1)
            t1 = time.perf_counter()
            mem.wait_indexed(timeout=3600)
            out["index_build_s"] = round(time.perf_counter() - t1, 1)
            out["index_kind"] = mem.indexer.status()["vectors"]["kind"]

            qrng = np.random.default_rng(7)
            picks = qrng.integers(0, n_beads, queries)
            noise = qrng.standard_normal((queries, DIMS)).astype(np.float32) / np.sqrt(DIMS)
            qvecs = vectors[picks] + 0.5 * noise  # a query near a stored item, not on it
            qvecs /= np.linalg.norm(qvecs, axis=1, keepdims=True)
            latencies, hits = [], 0
            vindex = mem.indexer.vectors
            assert vindex is not None
            for q, pick in zip(qvecs, picks, strict=True):
                query = " ".join(texts[pick].split()[2:5])
                t = time.perf_counter()
                result = mem.retrieve(query, k=10, query_vector=q)
                latencies.append((time.perf_counter() - t) * 1000)
                assert result.items
                exact = {f"bead:b{i}" for i in np.argsort(-(vectors @ q))[:10]}
                got = [h.key for h in vindex.search(q, 30) if h.key.startswith("bead:")][:10]
                hits += len(exact & set(got))
            latencies.sort()
            out["retrieve_ms_p50"] = round(statistics.median(latencies), 2)
            out["retrieve_ms_p95"] = round(latencies[int(0.95 * len(latencies))], 2)
            out["ann_recall@10"] = round(hits / (10 * queries), 4)
        t2 = time.perf_counter()
        with Memory.open(path, sync=False, embedder=embedder) as mem:
            mem.wait_indexed(timeout=3600)
            out["load_s"] = round(time.perf_counter() - t2, 2)
            mem.retrieve("alpha budget", k=10, query_vector=qvecs[0])
        out["data_dir_mib"] = round(
            sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20
        )
    out["peak_rss_mib"] = round(rss_mib())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--beads", type=int, default=100_000)
    parser.add_argument("--quick", action="store_true", help="10k beads, 2k nodes, 5k edges")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    n = 10_000 if args.quick else args.beads
    figures = run(n, n // 5, n // 2, args.queries)
    if args.json:
        print(json.dumps(figures))
    else:
        goals = {"retrieve_ms_p95": "goal <= 10", "ann_recall@10": "goal >= 0.95"}
        for key, value in figures.items():
            print(f"{key:<18} {value:>10}  {goals.get(key, '')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
