"""What automatic importance costs a write: beads written with and without an importance.

    .venv/bin/python bench/importance_bench.py                # 100,000 beads held
    .venv/bin/python bench/importance_bench.py --held 10000   # a quick run
    .venv/bin/python bench/importance_bench.py --quick        # 1,000 held, 20 calls (the suite's)

A bead written without an importance is judged at its origin: its distinct words are looked
up in the keyword index (`chrysalis.search.novelty`). This fills a memory with ``--held``
beads of Zipf-distributed words (a 20,000-word vocabulary, 12 to 30 words each), lets the
index catch up, then times, alternating the two kinds so both see the same memory:

- ``append_bead`` one at a time, durable (``sync=True``): p50 / p95 / p99 in ms, back to
  back and paced (a write every 20 ms, as an agent's turns come: the indexer has taken in
  the previous one);
- ``append_beads`` of 1,000 rows per call: beads/s.

Writes are durable; the data dir is a fresh one under /tmp, removed afterwards.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from chrysalis.memory import Memory

VOCABULARY = 20_000
BATCH = 1_000


def sentences(rng: random.Random, count: int) -> list[str]:
    weights = [1 / (rank + 1) for rank in range(VOCABULARY)]
    words = [f"w{rank}" for rank in range(VOCABULARY)]
    return [" ".join(rng.choices(words, weights, k=rng.randint(12, 30))) for _ in range(count)]


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--held", type=int, default=100_000, help="beads in the memory first")
    parser.add_argument("--single", type=int, default=2_000, help="append_bead calls per kind")
    parser.add_argument("--batches", type=int, default=5, help="append_beads calls per kind")
    parser.add_argument("--quick", action="store_true", help="1,000 held, 20 calls (the suite's)")
    args = parser.parse_args(argv)
    if args.quick:
        args.held, args.single, args.batches = 1_000, 20, 1
    rng = random.Random(7)
    with (
        tempfile.TemporaryDirectory(prefix="chrysalis-importance-", dir="/tmp") as tmp,
        Memory.open(Path(tmp) / "data") as mem,
    ):
        t0 = time.perf_counter()
        for start in range(0, args.held, BATCH):
            rows = sentences(rng, min(BATCH, args.held - start))
            mem.append_beads([{"content": t, "importance": 0.5} for t in rows])
        mem.wait_indexed(timeout=3600)
        print(f"held {args.held} beads, indexed, in {time.perf_counter() - t0:.1f} s",
              file=sys.stderr)  # fmt: skip
        single: dict[tuple[str, str], list[float]] = {}
        for pace, pause in (("back to back", 0.0), ("paced 20 ms", 0.02)):
            for n, text in enumerate(sentences(rng, 2 * args.single)):
                kind = "given" if n % 2 else "judged"
                fields: dict[str, Any] = {"importance": 0.5} if kind == "given" else {}
                time.sleep(pause)
                t = time.perf_counter()
                mem.append_bead(text, **fields)
                single.setdefault((pace, kind), []).append((time.perf_counter() - t) * 1000)
        bulk: dict[str, list[float]] = {"given": [], "judged": []}
        for n in range(2 * args.batches):
            kind = "given" if n % 2 else "judged"
            rows = [
                {"content": t, **({"importance": 0.5} if kind == "given" else {})}
                for t in sentences(rng, BATCH)
            ]
            t = time.perf_counter()
            mem.append_beads(rows)
            bulk[kind].append(BATCH / (time.perf_counter() - t))
    print(f"automatic importance, {args.held:,} beads held (durable writes)")
    print("| write | importance | p50 ms | p95 ms | p99 ms | beads/s |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for (pace, kind), ms in single.items():
        print(f"| append_bead, {pace} | {kind} | {pct(ms, 50):.2f} | {pct(ms, 95):.2f} | "
              f"{pct(ms, 99):.2f} | |")  # fmt: skip
    for kind in ("given", "judged"):
        print(f"| append_beads x{BATCH} | {kind} | | | | {statistics.median(bulk[kind]):,.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
