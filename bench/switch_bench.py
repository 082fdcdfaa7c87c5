"""Changing the embedder on a full memory (`chrysalis.search.switch`): recall latency before,
during and after the background re-embedding, and how long the switch takes.

The memory holds ``--beads`` beads of Step 11's moderate workload (`retrieve_bench`), embedded
by the deterministic embedder at 384 dims; it is closed and opened again with the
deterministic embedder at 256 dims (another model: every bead is embedded again). While the
worker re-embeds, the main thread recalls without pause (fusion, k=10, the query embedded by
the model recall searches) and records each latency, which model answered and whether the
answer was empty. The deterministic embedder runs in this process and holds the GIL while it
hashes, so recall competes with it for the interpreter: the worst case (Ollama embeds in its
own process).

    .venv/bin/python bench/switch_bench.py [--beads 100000] [--quick] [--json] [--to SPEC]

``--to minilm`` switches to all-MiniLM-L6-v2 in numpy instead: the re-embedding rate of a
real model on this machine's cores.

Prints: the build, the switch time and rate, recall p50/p95/p99 before, during and after,
and the recalls during the switch answered by the old model, by the new one, and empty.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from retrieve_bench import MODERATE, moderate_text

from chrysalis import Memory

FROM, TO = "deterministic:384", "deterministic:256"


def percentiles(ms: list[float]) -> dict[str, float]:
    if not ms:
        return {"n": 0}
    q = statistics.quantiles(ms, n=100, method="inclusive") if len(ms) > 1 else ms * 99
    return {"n": len(ms), "p50": round(q[49], 2), "p95": round(q[94], 2), "p99": round(q[98], 2)}


def queries(n: int) -> list[str]:
    rng = np.random.default_rng(11)
    return [
        " ".join(MODERATE[m] for m in rng.choice(len(MODERATE), 4, replace=False)) for _ in range(n)
    ]


def recall_for(mem: Memory, qs: list[str], seconds: float) -> list[float]:
    out = []
    deadline = time.perf_counter() + seconds
    for q in qs:
        t = time.perf_counter()
        mem.retrieve(q, k=10)
        out.append((time.perf_counter() - t) * 1000)
        if time.perf_counter() > deadline:
            break
    return out


def run(n: int, timeout: float, to: str = TO, recalls: int = 300) -> dict[str, Any]:
    """``recalls`` timed before and after the switch (one in fifteen of them first, to warm up)."""
    rng = np.random.default_rng(42)
    qs = queries(2000)
    out: dict[str, Any] = {"beads": n, "from": FROM, "to": to}
    with tempfile.TemporaryDirectory(prefix="chrysalis-switch-") as tmp:
        path = Path(tmp) / "m"
        t0 = time.perf_counter()
        with Memory.open(path, sync=False, embedder=FROM, extractor="none") as mem:
            old_model = mem.embedder.model if mem.embedder else ""
            for start in range(0, n, 1000):
                mem.append_beads(
                    {"id": f"b{i}", "content": moderate_text(i, rng), "session_id": f"s{i // 50}",
                     "ts": 1_700_000_000.0 + i}
                    for i in range(start, min(n, start + 1000))
                )  # fmt: skip
            mem.wait_indexed(timeout=timeout)
            out["build_s"] = round(time.perf_counter() - t0, 1)
            recall_for(mem, qs[: max(1, recalls // 15)], 5)  # warm
            out["before"] = percentiles(recall_for(mem, qs[:recalls], 30))

        t1 = time.perf_counter()
        with Memory.open(path, sync=False, embedder=to, extractor="none") as mem:
            out["open_s"] = round(time.perf_counter() - t1, 2)
            during: list[float] = []
            answered = {"old": 0, "new": 0, "empty": 0}
            i = 0
            while mem.indexer.status()["switch"] is not None:
                if time.perf_counter() - t1 > timeout:
                    raise TimeoutError(f"the switch took more than {timeout} s")
                serving = mem.indexer.serving()[1]
                t = time.perf_counter()
                result = mem.retrieve(qs[i % len(qs)], k=10)
                during.append((time.perf_counter() - t) * 1000)
                i += 1
                if not result.items:
                    answered["empty"] += 1
                else:
                    answered["old" if serving and serving.model == old_model else "new"] += 1
            out["switch_s"] = round(time.perf_counter() - t1, 1)
            out["switch_beads_per_s"] = round(n / max(1e-9, time.perf_counter() - t1))
            out["during"] = percentiles(during)
            out["during_answers"] = answered
            out["after"] = percentiles(recall_for(mem, qs[:recalls], 30))
            out["searching_after"] = mem.indexer.serving()[1].model  # type: ignore[union-attr]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--beads", type=int, default=100_000)
    parser.add_argument(
        "--quick", action="store_true", help="3,000 beads, 50 recalls before and after: a smoke run"
    )
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--to", default=TO, help=f"the embedder switched to (default {TO}; e.g. minilm)"
    )
    args = parser.parse_args(argv)
    if args.quick:  # the suite's smoke run (tests/test_embedder_switch.py)
        report = run(3_000, args.timeout, args.to, recalls=50)
    else:
        report = run(args.beads, args.timeout, args.to)
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"{report['beads']:,} beads, {report['from']} -> {report['to']}")
    print(f"  build {report['build_s']} s; reopen {report['open_s']} s")
    print(f"  switch {report['switch_s']} s ({report['switch_beads_per_s']:,} beads/s)")
    for phase in ("before", "during", "after"):
        p = report[phase]
        print(f"  recall {phase:6} n={p['n']:<5} p50 {p.get('p50')} ms  p95 {p.get('p95')} ms"
              f"  p99 {p.get('p99')} ms")  # fmt: skip
    print(f"  answers during the switch: {report['during_answers']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
