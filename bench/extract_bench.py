"""Knowledge extraction at scale: the rules extractor and the knowledge worker at 100,000 beads.

Beads are real conversation turns (LongMemEval's dev haystacks, read from ../shared, cycled
to the count asked). Prints:

- the rules extractor alone: beads/s (one thread, no storage);
- the worker end to end: beads appended in batches of 1,000, then the time until every bead
  is extracted and written (node and edge ops with their evidence) and every session (20
  turns each, long past) summarised, beads/s, the ops and derived items per bead, and the
  LMDB size with and without knowledge;
- `remember` latency (one `append_bead` per call, durable commits) with the extractor off and
  while the worker is busy: extraction is off the write path, so it should not move.

    .venv/bin/python bench/extract_bench.py [--beads 100000] [--json]
    .venv/bin/python bench/extract_bench.py --quick    # 100 beads, 10 remembers (the suite's)

Exits 77 (skipped) when the dev set is not there.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from chrysalis import Memory
from chrysalis.core.models import Bead
from chrysalis.extract.rules import RulesExtractor

DATA = Path(__file__).resolve().parents[2] / "shared" / "eval" / "longmemeval" / "lme-dev.json"
REMEMBER_CALLS = 300
SKIPPED = 77  # the exit status that tells tests/test_benches.py its data is absent


def turns(n: int) -> Iterator[dict[str, Any]]:
    """``n`` bead rows from the dev haystacks' turns (distinct texts first, then cycled)."""
    data = json.loads(DATA.read_text())
    texts: list[tuple[str, str]] = []
    seen: set[str] = set()
    for q in data:
        for session in q["sessions"]:
            for turn in session["turns"]:
                text = turn["content"]
                if text and text not in seen:
                    seen.add(text)
                    texts.append((turn["role"], text))
    for i in range(n):
        role, text = texts[i % len(texts)]
        yield {"content": text, "role": role, "session_id": f"s{i // 20}", "ts": 1.6e9 + i}


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def remember_ms(mem: Memory, calls: int = REMEMBER_CALLS) -> dict[str, float]:
    times = []
    for i in range(calls):
        t0 = time.perf_counter()
        mem.append_bead(f"I talked to Ada Lovelace about the Analytical Engine, call {i}.")
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return {
        "p50": round(statistics.median(times), 3),
        "p95": round(times[int(0.95 * len(times))], 3),
    }


def run(n: int, remembers: int = REMEMBER_CALLS) -> dict[str, Any]:
    rows = list(turns(n))
    out: dict[str, Any] = {"beads": n}

    extractor = RulesExtractor()
    beads = [
        Bead(id=f"b{i}", ts=r["ts"], role=r["role"], content=r["content"])
        for i, r in enumerate(rows)
    ]
    t0 = time.perf_counter()
    found = extractor.extract(beads)
    seconds = time.perf_counter() - t0
    out["rules_alone_beads_per_s"] = round(n / seconds)
    out["entities_per_bead"] = round(sum(len(e.entities) for e in found) / n, 2)
    out["facts_per_bead"] = round(sum(len(e.facts) for e in found) / n, 3)

    for extractor_spec in (None, "rules"):
        with tempfile.TemporaryDirectory(prefix="extract-bench-") as tmp:
            path = Path(tmp) / "m"
            with Memory.open(path, extractor=extractor_spec) as mem:
                t0 = time.perf_counter()
                for start in range(0, n, 1000):
                    mem.append_beads(rows[start : start + 1000])
                appended = time.perf_counter() - t0
                busy = remember_ms(mem, remembers)  # while the worker extracts the backlog
                head = mem.version_vector()[mem.replica_id]
                mem.wait_learned(timeout=3600)
                total = time.perf_counter() - t0
                name = extractor_spec or "off"
                out[f"append_s[{name}]"] = round(appended, 1)
                out[f"remember_ms[{name}]"] = busy
                if extractor_spec:
                    ops = mem.version_vector()[mem.replica_id] - head
                    out["worker_s"] = round(total, 1)
                    out["worker_beads_per_s"] = round(n / total)
                    out["knowledge_ops_per_bead"] = round(ops / n, 2)
                    out["nodes"] = len(mem.all_nodes())
                    out["edges"] = len(mem.all_edges())
                    out["summaries"] = mem.knowledge.summaries  # one per 20-turn session
            out[f"lmdb_mb[{name}]"] = round(du(path / "lmdb") / 2**20, 1)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--beads", type=int, default=100_000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--quick", action="store_true", help="100 beads, 10 remembers (the suite's)"
    )
    args = parser.parse_args(argv)
    if not DATA.exists():
        print(f"skipped: {DATA} is not there (LongMemEval dev)", file=sys.stderr)
        return SKIPPED
    figures = run(100, 10) if args.quick else run(args.beads)
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key:>28}  {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
