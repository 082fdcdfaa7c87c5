"""Fused retrieval at scale: 100,000 beads with 768-dim vectors, 20,000 nodes, 50,000 edges.

Vectors are clustered (not uniform): 200 centres plus noise, as real embeddings are. The
embedder is a lookup table of those vectors, so the numbers measure Chrysalis, not a model.
Prints: index build time (the worker embedding and indexing everything), fused retrieve
latency in-process with the query vector given, ANN recall@10 against exact search, the
latency of ``context`` (800 tokens) for the same queries asked in the first person of a user
with 24 changing facts, the load time at restart, and peak RSS; ``*_cpu_ms_*`` are the
process's CPU time per call (every thread), steadier than wall time when the machine is shared.

    .venv/bin/python bench/retrieve_bench.py [--beads 100000] [--quick] [--json]

``--data-dir DIR`` keeps the memory in DIR: built there the first time (and timed), reused
as it is on later runs with the same ``--beads`` (the write and build figures are then left
out), so a change to recall can be measured before and after on the same memory.

``--workload moderate`` is Step 11's workload instead: the deterministic embedder embeds
everything, the query included (no query vector given); each bead holds two words of a
500-word "moderate" vocabulary (so each is in ~0.4 % of beads) among ten Zipf-spread filler
words; a query is four moderate words; the graph is beads/5 nodes and beads/2 edges (20k / 50k
at 100k), node names of the clustered workload's words (the query finds no node, as in the
issue's figures; ``--graph-hits``: each node name also carries a moderate word, so queries
find nodes and graph expansion walks from them). Prints p50/p95/p99 of
``retrieve(query, k=10)``, the build rate, and a per-stage breakdown (a second pass, timed by
wrapping the retriever's stages; the keyword stage runs on a thread past 20,000 items, so the
stages can add up to more than the total):

    .venv/bin/python bench/retrieve_bench.py --workload moderate --beads 10000,100000
    .venv/bin/python bench/retrieve_bench.py --workload moderate --beads 1000000 --no-vectors
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
from chrysalis.search.embed import Embedder

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


def add_graph(
    mem: Memory,
    n_beads: int,
    n_nodes: int,
    n_edges: int,
    rng: np.random.Generator,
    *,
    graph_hits: bool,
) -> None:
    """Nodes named by the clustered workload's words (and, with ``graph_hits``, a moderate
    word each, so queries find them) and random edges citing a bead as evidence."""
    for i in range(n_nodes):
        name = f"{WORDS[i % len(WORDS)]} {i}"
        if graph_hits:
            name = f"{MODERATE[i % len(MODERATE)]} {name}"
        mem.add_node(f"n{i}", "entity", name=name)
    for i in range(n_edges):
        src, dst = int(rng.integers(0, n_nodes)), int(rng.integers(0, n_nodes))
        mem.add_edge(f"n{src}", f"n{dst}", "related_to", id=f"e{i}", evidence=[f"b{i % n_beads}"])


def add_facts(mem: Memory) -> None:
    """24 changing facts of the user: moves and jobs over the years, each superseding the one
    before."""
    for n in range(12):
        at = 1_600_000_000.0 + n * 90 * 86400
        mem.add_fact("user", "lives_in", f"{WORDS[n % len(WORDS)]} town {n}", valid_at=at)
        mem.add_fact("user", "works_at", f"{WORDS[(n + 3) % len(WORDS)]} corp {n}", valid_at=at)


def time_context(
    mem: Memory, embedder: TableEmbedder, qvecs: np.ndarray, picks: np.ndarray, texts: list[str]
) -> dict[str, Any]:
    """p50/p95 of ``context`` (800 tokens) for the same queries, asked in the first person
    of a user with changing facts (`add_facts`: so the facts are read too), and its mean
    items/tokens."""
    for pick in picks[:5]:  # warm
        mem.context("where do I live? " + " ".join(texts[pick].split()[2:5]))
    latencies, cpu, items, tokens = [], [], [], []
    for q, pick in zip(qvecs, picks, strict=True):
        query = "where do I live and " + " ".join(texts[pick].split()[2:5])
        embedder.table[query] = q  # the context embeds its question: the same vector
        t, c = time.perf_counter(), time.process_time()
        ctx = mem.context(query)
        cpu.append((time.process_time() - c) * 1000)
        latencies.append((time.perf_counter() - t) * 1000)
        items.append(len(ctx.items))
        tokens.append(ctx.tokens)
    return {
        "context_ms_p50": round(statistics.median(latencies), 2),
        "context_ms_p95": percentile(sorted(latencies), 0.95),
        "context_cpu_ms_p50": round(statistics.median(cpu), 2),
        "context_cpu_ms_p95": percentile(sorted(cpu), 0.95),
        "context_items": round(statistics.fmean(items), 1),
        "context_tokens": round(statistics.fmean(tokens)),
    }


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(
    n_beads: int, n_nodes: int, n_edges: int, queries: int, data_dir: Path | None = None
) -> dict[str, Any]:
    rng = np.random.default_rng(42)
    vectors = clustered(n_beads, DIMS, rng)
    texts = [bead_text(i, rng) for i in range(n_beads)]
    table = {t: v for t, v in zip(texts, vectors, strict=True)}
    out: dict[str, Any] = {"beads": n_beads, "nodes": n_nodes, "edges": n_edges, "dims": DIMS}
    with tempfile.TemporaryDirectory(prefix="chrysalis-retrieve-") as tmp:
        path = Path(tmp) / "m" if data_dir is None else data_dir
        marker = path / "retrieve-bench.json"  # written once the memory is complete
        built = {"beads": n_beads, "nodes": n_nodes, "edges": n_edges}
        reuse = marker.exists()
        if reuse and json.loads(marker.read_text()) != built:
            raise SystemExit(f"{path} holds another bench memory: {marker.read_text()}")
        embedder = TableEmbedder(table)
        t0 = time.perf_counter()
        with Memory.open(path, sync=False, embedder=embedder) as mem:
            if not reuse:
                for start in range(0, n_beads, 1000):
                    mem.append_beads(
                        [
                            {"id": f"b{i}", "content": texts[i], "session_id": f"s{i // 50}",
                             "ts": 1_700_000_000.0 + i}
                            for i in range(start, min(n_beads, start + 1000))
                        ]
                    )  # fmt: skip
                add_graph(mem, n_beads, n_nodes, n_edges, rng, graph_hits=False)
                out["write_s"] = round(time.perf_counter() - t0, 1)
            t1 = time.perf_counter()
            mem.wait_indexed(timeout=3600)
            if not reuse:
                out["index_build_s"] = round(time.perf_counter() - t1, 1)
            out["index_kind"] = mem.indexer.status()["vectors"]["kind"]

            qrng = np.random.default_rng(7)
            picks = qrng.integers(0, n_beads, queries)
            noise = qrng.standard_normal((queries, DIMS)).astype(np.float32) / np.sqrt(DIMS)
            qvecs = vectors[picks] + 0.5 * noise  # a query near a stored item, not on it
            qvecs /= np.linalg.norm(qvecs, axis=1, keepdims=True)
            latencies, cpu, hits = [], [], 0
            vindex = mem.indexer.vectors
            assert vindex is not None
            for q, pick in zip(qvecs, picks, strict=True):
                query = " ".join(texts[pick].split()[2:5])
                t, c = time.perf_counter(), time.process_time()
                result = mem.retrieve(query, k=10, query_vector=q)
                cpu.append((time.process_time() - c) * 1000)
                latencies.append((time.perf_counter() - t) * 1000)
                assert result.items
                exact = {f"bead:b{i}" for i in np.argsort(-(vectors @ q))[:10]}
                got = [h.key for h in vindex.search(q, 30) if h.key.startswith("bead:")][:10]
                hits += len(exact & set(got))
            latencies.sort()
            out["retrieve_ms_p50"] = round(statistics.median(latencies), 2)
            out["retrieve_ms_p95"] = round(latencies[int(0.95 * len(latencies))], 2)
            # CPU time of the whole process per call (the keyword thread's too): what a
            # recall costs a core, steadier than wall time on a shared machine.
            cpu.sort()
            out["retrieve_cpu_ms_p50"] = round(statistics.median(cpu), 2)
            out["retrieve_cpu_ms_p95"] = percentile(cpu, 0.95)
            out["ann_recall@10"] = round(hits / (10 * queries), 4)
            if not reuse:
                add_facts(mem)
            out.update(time_context(mem, embedder, qvecs, picks, texts))
        if data_dir is not None and not reuse:
            marker.write_text(json.dumps(built))
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


MODERATE = [f"{a}{b}" for a in WORDS for b in WORDS][:500]  # "alphabudget", ...


def moderate_text(i: int, rng: np.random.Generator) -> str:
    """Ten Zipf-spread filler words and two moderate ones (each in ~2/500 = 0.4 % of beads)."""
    ranks = np.minimum(rng.zipf(1.3, 10) - 1, len(VOCAB) - 1)
    mods = rng.choice(len(MODERATE), 2, replace=False)
    words = [VOCAB[r] for r in ranks] + [MODERATE[m] for m in mods]
    rng.shuffle(words)
    return f"note {i}: " + " ".join(words)


STAGES = {  # (owner, attribute) -> stage name
    ("fusion", "_keyword_hits"): "keyword search",
    ("fusion", "_vector_hits"): "vector search (embed query + ANN)",
    ("reader", "last_beads"): "recent beads",
    ("fusion", "_expand_graph"): "graph expansion",
    ("fusion", "_add_context"): "context (adjacent beads)",
    ("fusion", "_score_and_explain"): "score (all below)",
    ("reader", "beads_with_origin"): "  bead decoding (beads_with_origin)",
    ("reader", "graph_items"): "  nodes and edges (graph_items)",
    ("fusion", "_fit"): "explain, dedup and fit (below)",
    ("module", "count_tokens"): "  token counting",
}


def _timed(fn: Any, name: str, acc: dict[str, float]) -> Any:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            acc[name] = acc.get(name, 0.0) + time.perf_counter() - t

    return wrapper


def stage_breakdown(mem: Memory, queries: list[str]) -> dict[str, float]:
    """Mean ms per query in each stage of `retrieve`, by wrapping them (a second pass)."""
    from chrysalis.read.reader import Reader
    from chrysalis.search import fusion

    acc: dict[str, float] = {}
    saved = []
    for (owner, attr), name in STAGES.items():
        target: Any = {"fusion": fusion.Retriever, "reader": Reader, "module": fusion}[owner]
        if isinstance(target, type):  # the class that defines it (Reader's graph part: a mixin)
            target = next(c for c in target.__mro__ if attr in vars(c))
        saved.append((target, attr, vars(target)[attr]))  # as stored: a staticmethod stays one
        fn = getattr(target, attr)
        if owner == "fusion" and attr == "_fit":  # a staticmethod: keep it one
            setattr(target, attr, staticmethod(_timed(fn, name, acc)))
        else:
            setattr(target, attr, _timed(fn, name, acc))
    try:
        t = time.perf_counter()
        for q in queries:
            mem.retrieve(q, k=10)
        total = time.perf_counter() - t
    finally:
        for target, attr, fn in saved:
            setattr(target, attr, fn)
    out = {name: round(acc.get(name, 0.0) * 1000 / len(queries), 3) for name in STAGES.values()}
    out["total (wrapped)"] = round(total * 1000 / len(queries), 3)
    return out


def percentile(sorted_values: list[float], q: float) -> float:
    return round(sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))], 2)


def run_moderate(n_beads: int, queries: int, vectors: bool, graph_hits: bool) -> dict[str, Any]:
    """Step 11's workload at ``n_beads`` (see the module doc)."""
    rng = np.random.default_rng(42)
    n_nodes, n_edges = n_beads // 5, n_beads // 2
    out: dict[str, Any] = {"beads": n_beads, "nodes": n_nodes, "edges": n_edges}
    out["embedder"] = "deterministic" if vectors else "none (keyword only)"
    out["graph_hits"] = graph_hits
    with tempfile.TemporaryDirectory(prefix="chrysalis-retrieve-") as tmp:
        path = Path(tmp) / "m"
        t0 = time.perf_counter()
        embedder = "deterministic" if vectors else None
        with Memory.open(path, sync=False, embedder=embedder) as mem:
            for start in range(0, n_beads, 1000):
                mem.append_beads(
                    [
                        {"id": f"b{i}", "content": moderate_text(i, rng),
                         "session_id": f"s{i // 50}", "ts": 1_700_000_000.0 + i}
                        for i in range(start, min(n_beads, start + 1000))
                    ]
                )  # fmt: skip
            out["append_s"] = round(time.perf_counter() - t0, 1)
            t1 = time.perf_counter()
            add_graph(mem, n_beads, n_nodes, n_edges, rng, graph_hits=graph_hits)
            out["graph_s"] = round(time.perf_counter() - t1, 1)
            t2 = time.perf_counter()
            mem.wait_indexed(timeout=36_000)
            out["index_wait_s"] = round(time.perf_counter() - t2, 1)
            build = time.perf_counter() - t0
            out["build_s"] = round(build, 1)
            out["build_beads_per_s"] = round(n_beads / build)
            if vectors:
                out["index_kind"] = mem.indexer.status()["vectors"]["kind"]
            qrng = np.random.default_rng(7)
            texts = [
                " ".join(MODERATE[m] for m in qrng.choice(len(MODERATE), 4, replace=False))
                for _ in range(queries)
            ]
            for q in texts[:5]:  # warm: the first, cold queries are reported elsewhere
                mem.retrieve(q, k=10)
            latencies = []
            for q in texts:
                t = time.perf_counter()
                result = mem.retrieve(q, k=10)
                latencies.append((time.perf_counter() - t) * 1000)
                assert result.items
            latencies.sort()
            out["retrieve_ms_p50"] = round(statistics.median(latencies), 2)
            out["retrieve_ms_p95"] = percentile(latencies, 0.95)
            out["retrieve_ms_p99"] = percentile(latencies, 0.99)
            out["stages_ms_mean"] = stage_breakdown(mem, texts)
        out["data_dir_mib"] = round(
            sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20
        )
    out["peak_rss_mib"] = round(rss_mib())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=["clustered", "moderate"], default="clustered")
    parser.add_argument("--beads", default="100000", help="a count; for moderate, a list: 1e4,1e5")
    parser.add_argument("--no-vectors", action="store_true", help="moderate: keyword only")
    parser.add_argument("--graph-hits", action="store_true", help="moderate: queries find nodes")
    parser.add_argument("--quick", action="store_true", help="2k beads, 50 queries (the suite's)")
    parser.add_argument("--queries", type=int, help="queries timed (200; 50 with --quick)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--data-dir", type=Path, help="clustered: build the memory here once, reuse it"
    )
    args = parser.parse_args(argv)
    if args.queries is None:
        args.queries = 50 if args.quick else 200
    if args.workload == "moderate":
        for n in (int(float(x)) for x in args.beads.split(",")):
            figures = run_moderate(n, args.queries, not args.no_vectors, args.graph_hits)
            if args.json:
                print(json.dumps(figures), flush=True)
                continue
            stages = figures.pop("stages_ms_mean")
            for key, value in figures.items():
                print(f"{key:<18} {value:>12}  {'goal <= 10' if key == 'retrieve_ms_p95' else ''}")
            print("stage (mean ms per query, second pass)")
            for key, value in stages.items():
                print(f"  {key:<36} {value:>8}")
            print(flush=True)
        return 0
    n = 2_000 if args.quick else int(args.beads)
    figures = run(n, n // 5, n // 2, args.queries, args.data_dir)
    if args.json:
        print(json.dumps(figures))
    else:
        goals = {
            "retrieve_ms_p95": "goal <= 10",
            "ann_recall@10": "goal >= 0.95",
            "context_ms_p95": "goal <= 15",
        }
        for key, value in figures.items():
            print(f"{key:<18} {value:>10}  {goals.get(key, '')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
