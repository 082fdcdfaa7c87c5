"""How fast each embedder turns text into vectors (issue 33): texts per second in batches, and
one short text's latency (a query's path), on this machine's numpy threads.

    .venv/bin/python bench/embed_bench.py                      # deterministic, minilm, and
                                                               # sentence-transformers if installed
    .venv/bin/python bench/embed_bench.py --texts 2000 --embedders minilm
    .venv/bin/python bench/embed_bench.py --quick              # 24 texts, no torch (the suite)

The texts are generated here (chat-like turns of 5 to 60 words, seeded), not read from a data
set. An embedder that is not installed is reported as such and skipped.

``--agreement FILE`` instead samples ``--texts`` turns and questions of a LoCoMo or LongMemEval
JSON file and prints how far the numpy MiniLM's vectors are from sentence-transformers' on them
(cosine: minimum, 0.1 % quantile, median): equal vectors rank every item alike, so the two
give the same dev-set figures.

    .venv/bin/python bench/embed_bench.py --agreement ../shared/eval/locomo/locomo-dev.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chrysalis import EmbedderUnavailable
from chrysalis.search.embed import Embedder, make_embedder

PHRASES = [
    "we moved the meeting to thursday because the client flew in late",
    "my sister asked whether the garden needs watering before the trip to Lisbon next month",
    "I think the new recipe uses less sugar than the old one",
    "although the oven runs hot so bake it shorter",
    "remind me which laptop charger fits the office dock the blue one or the grey one",
]
WORDS = " ".join(PHRASES).split()


def texts(count: int, seed: int = 7) -> list[str]:
    """``count`` turns of 5-60 words drawn from WORDS: lengths vary as a chat's do."""
    rng = random.Random(seed)
    return [" ".join(rng.choices(WORDS, k=rng.randint(5, 60))) for _ in range(count)]


def _spec(name: str) -> str:
    if name == "sentence-transformers":
        from chrysalis.search.bert import packaged_model_path

        return f"sentence-transformers:{packaged_model_path()}"
    return name


def dataset_texts(path: Path, count: int, seed: int = 7) -> list[str]:
    """``count`` distinct turns and questions of a LoCoMo or LongMemEval file, seeded."""
    found: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("content", "text", "question") and isinstance(value, str):
                    found.add(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads(path.read_text()))
    return random.Random(seed).sample(sorted(found), min(count, len(found)))


def agreement(path: Path, count: int) -> dict[str, float]:
    """Cosines between the numpy MiniLM's vectors and sentence-transformers' on a data set."""
    corpus = dataset_texts(path, count)
    ours = make_embedder("minilm").embed_documents(corpus)
    theirs = make_embedder(_spec("sentence-transformers")).embed_documents(corpus)
    cosines = (ours * theirs).sum(axis=1)
    return {
        "texts": len(corpus),
        "min": round(float(cosines.min()), 6),
        "q0.001": round(float(np.quantile(cosines, 0.001)), 6),
        "median": round(float(np.median(cosines)), 6),
    }


def measure(embedder: Embedder, corpus: list[str], singles: int) -> dict[str, float]:
    """Batch throughput over ``corpus`` and the median latency of ``singles`` one-text calls."""
    embedder.embed_documents(corpus[:8])  # warm: first-call allocations, lazy imports
    start = time.perf_counter()
    embedder.embed_documents(corpus)
    batch = time.perf_counter() - start
    latencies = []
    for text in corpus[:singles]:
        start = time.perf_counter()
        embedder.embed_query(text)
        latencies.append(time.perf_counter() - start)
    return {
        "texts_per_s": round(len(corpus) / batch, 1),
        "single_ms_median": round(statistics.median(latencies) * 1000, 2),
        "single_ms_max": round(max(latencies) * 1000, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=int, default=1000)
    parser.add_argument("--singles", type=int, default=50, help="one-text calls timed")
    parser.add_argument(
        "--embedders", help="comma-separated (deterministic,minilm,sentence-transformers)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="24 texts, 4 singles, no torch (the suite)"
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--agreement", type=Path, help="a LoCoMo or LongMemEval JSON: compare with torch's"
    )
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.agreement:
        print(json.dumps({"data": args.agreement.name, **agreement(args.agreement, args.texts)}))
        return
    count, singles = (24, 4) if args.quick else (args.texts, args.singles)
    names = args.embedders or (
        "deterministic,minilm" if args.quick else "deterministic,minilm,sentence-transformers"
    )
    corpus = texts(count)
    results: dict[str, object] = {}
    for name in names.split(","):
        try:
            start = time.perf_counter()
            embedder = make_embedder(_spec(name))
            load = time.perf_counter() - start
        except EmbedderUnavailable as exc:
            results[name] = {"unavailable": str(exc)}
            continue
        results[name] = {"load_s": round(load, 2), **measure(embedder, corpus, singles)}
    if args.json:
        print(json.dumps({"texts": count, "results": results}, indent=2))
        return
    print(f"{count} texts of 5-60 words; {singles} single-text calls")
    for name, figures in results.items():
        print(f"  {name:24} {figures}")


if __name__ == "__main__":
    main()
