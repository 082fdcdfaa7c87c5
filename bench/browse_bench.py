"""What browsing costs at scale: the reads under ``chrysalis ls`` and ``ls --sessions``.

    .venv/bin/python bench/browse_bench.py                     # 100,000 beads
    .venv/bin/python bench/browse_bench.py --quick             # 2,000 beads, 3 runs (the suite's)

A fresh memory (no embedder, no extractor: only LMDB and the time and session indexes these
reads walk) gets ``--beads`` beads in 1,000 sessions, 1 % of them tagged ``rare`` and every
fifth one from the assistant, one second apart. Then each read runs ``--runs`` times and its
median and slowest time are printed:

- the newest 20 beads (``ls``: `Memory.last_beads`);
- the newest 20 of one session (``ls --session``);
- the newest 20 with a rare tag (``ls --tag``: `select_beads(newest=True, count_all=False)`,
  which walks the time index backwards until it has 20) and with the assistant's role;
- the newest 20 with a tag no bead has (the worst case: the walk reads every bead);
- every session with its count and first and last time (``ls --sessions``: `session_stats`).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chrysalis import Memory


def timed(fn: Callable[[], Any], runs: int) -> tuple[float, float, Any]:
    times, out = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000, max(times) * 1000, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--beads", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="2,000 beads, 3 runs (the suite's)")
    args = parser.parse_args()
    if args.quick:
        args.beads, args.runs = 2_000, 3
    root = Path(tempfile.mkdtemp(prefix="browse-bench-"))
    try:
        mem = Memory.open(root / "m", embedder=None, extractor=None, sync=False)
        t0 = time.perf_counter()
        start = 1_700_000_000.0
        for first in range(0, args.beads, 1000):
            rows = [
                {
                    "content": f"bead {n} about harbour lanterns and copper meadows",
                    "ts": start + n,
                    "session_id": f"s{n % 1000}",
                    "role": "assistant" if n % 5 == 0 else "user",
                    "tags": ["rare"] if n % 100 == 7 else [],
                }
                for n in range(first, min(first + 1000, args.beads))
            ]
            mem.append_beads(rows)
        print(f"{args.beads:,} beads written in {time.perf_counter() - t0:.1f} s")

        def newest(selector: dict[str, Any]) -> list[str]:  # what GET /v1/beads does
            return mem.select_beads(selector, limit=20, newest=True, count_all=False).ids

        reads: list[tuple[str, Callable[[], Any]]] = [
            ("ls: newest 20", lambda: mem.last_beads(20)),
            ("ls --session: newest 20 of one", lambda: mem.last_beads(20, session_id="s7")),
            ("ls --tag (1 %): newest 20", lambda: newest({"tag": "rare"})),
            ("ls --role (20 %): newest 20", lambda: newest({"role": "assistant"})),
            ("ls --tag (none has it): newest 20", lambda: newest({"tag": "absent"})),
            ("ls --sessions", mem.session_stats),
        ]  # fmt: skip
        print(f"{'read':<36} {'median ms':>10} {'max ms':>8}  found")
        for name, fn in reads:
            median, worst, out = timed(fn, args.runs)
            found = len(out)
            print(f"{name:<36} {median:>10.2f} {worst:>8.2f}  {found}")
        mem.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
