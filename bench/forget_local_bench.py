"""The local scrub's cost: after forgetting beads out of a memory of 100,000, how long the
compacting copy of LMDB takes, how long writers wait for it, how retrieval latency fares
while it runs, and what the file weighs before and after.

Beads carry ~60 words each, and vectors of the deterministic embedder (384 dims), so LMDB
holds what a real memory of that size holds. Each row forgets N beads spread over the
memory, then runs the scrub the daemon would run (`DataDirScrubber.run`) and checks that no file of
the data dir holds a forgotten bead's marker afterwards.

    .venv/bin/python bench/forget_local_bench.py [--beads 100000] [--json]
    .venv/bin/python bench/forget_local_bench.py --quick   # 1,000 beads, two rows (the suite's)
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from chrysalis import Memory

WORDS = [f"w{i}" for i in range(20000)]


def build(path: Path, n: int) -> tuple[Memory, list[str]]:
    mem = Memory.open(path, sync=False, embedder="deterministic", scrub_delay=3600)
    rng = random.Random(7)
    ids: list[str] = []
    for start in range(0, n, 2000):
        rows = [
            {
                "content": " ".join(rng.choices(WORDS, k=60)) + f" marker{start + i}x",
                "session_id": f"s{(start + i) // 40}",
                "role": "user" if i % 2 else "assistant",
            }
            for i in range(min(2000, n - start))
        ]
        ids += [b.id for b in mem.append_beads(rows)]
    mem.wait_indexed(3600)
    mem.scrubber.run()  # start from a compact file, as a memory scrubbed before would be
    return mem, ids


MARKER = re.compile(rb"marker(\d+)x")


def holds(path: Path, needles: list[bytes]) -> list[str]:
    """Files under ``path`` holding one of ``needles`` (markers ``marker<N>x``): one pass per
    file collecting every marker in it, then a set lookup."""
    wanted = set(needles)
    hits = []
    for p in path.rglob("*"):
        if p.is_file():
            found = {m.group(0) for m in MARKER.finditer(p.read_bytes())}
            if found & wanted:
                hits.append(str(p.relative_to(path)))
    return hits


def row(mem: Memory, ids: list[str], count: int, rng: random.Random, pace: float) -> dict[str, Any]:
    victims = rng.sample([i for i in ids if mem.reader.bead_states([i])[i] == "live"], count)
    markers = [mem.get_bead(i).content.rsplit(" ", 1)[1].encode() for i in victims]
    held_before = holds(mem.path, markers)  # the check below finds them, so it can fail
    t = time.perf_counter()
    for chunk in range(0, count, 500):
        for bead_id in victims[chunk : chunk + 500]:
            mem.forget(bead_id)
    forget_s = time.perf_counter() - t
    mem.wait_indexed(600)
    before = (mem.path / "lmdb" / "data.mdb").stat().st_size
    # While the scrub runs: one thread retrieves, one writes; we time both.
    stop = threading.Event()
    latencies: list[float] = []
    write_waits: list[float] = []

    def reader() -> None:
        while not stop.is_set():
            t0 = time.perf_counter()
            mem.retrieve("w12 w345 w6789", k=10)
            latencies.append(time.perf_counter() - t0)

    def writer() -> None:
        while not stop.is_set():
            t0 = time.perf_counter()
            mem.append_bead("written while scrubbing", role="note")
            write_waits.append(time.perf_counter() - t0)
            stop.wait(pace)

    threads = [threading.Thread(target=reader), threading.Thread(target=writer)]
    for th in threads:
        th.start()
    time.sleep(0.2)
    t = time.perf_counter()
    done = mem.scrubber.run()
    scrub_s = time.perf_counter() - t
    time.sleep(0.2)
    stop.set()
    for th in threads:
        th.join()
    after = (mem.path / "lmdb" / "data.mdb").stat().st_size
    left = holds(mem.path, markers)
    return {
        "forgotten": count,
        "write_every_s": pace,
        "forget_s": round(forget_s, 3),
        "scrub_s": round(scrub_s, 3),
        "compact_s": done["seconds"],
        "lmdb_mb_before": round(before / 1e6, 1),
        "lmdb_mb_after": round(after / 1e6, 1),
        "retrieve_p50_ms": round(statistics.median(latencies) * 1000, 2) if latencies else None,
        "retrieve_max_ms": round(max(latencies) * 1000, 2) if latencies else None,
        "write_max_ms": round(max(write_waits) * 1000, 2) if write_waits else None,
        "files_holding_before": held_before,
        "files_holding_markers": left,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--beads", type=int, default=100_000)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--quick", action="store_true", help="1,000 beads, two rows (the suite's)")
    args = ap.parse_args(argv)
    if args.quick:
        args.beads = 1_000
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        mem, ids = build(Path(tmp) / "m", args.beads)
        built = time.perf_counter() - t
        rng = random.Random(11)
        # A writer every 5 ms (a bulk import) leaves no quiet moment: the copy is made with
        # writers held. One every 0.5 s (an agent's turns) lets a copy made while writers go
        # on be swapped in between two writes.
        plan = [(1, 0.005), (100, 0.005), (1000, 0.005), (1, 0.5), (100, 0.5)]
        if args.quick:
            plan = [(1, 0.005), (50, 0.5)]
        rows = [row(mem, ids, n, rng, pace) for n, pace in plan]
        mem.close()
    if args.json:
        print(json.dumps({"beads": args.beads, "build_s": round(built, 1), "rows": rows}))
        return 0
    print(f"{args.beads} beads (deterministic 384-dim vectors), built in {built:.0f} s")
    head = (
        "forgotten  write every s  forget s  scrub s  compact s  LMDB MB before/after  "
        "retrieve p50/max ms  write max ms  files holding text before/after"
    )
    print(head)
    for r in rows:
        print(
            f"{r['forgotten']:>9}  {r['write_every_s']:>13}  {r['forget_s']:>8}  "
            f"{r['scrub_s']:>7}  {r['compact_s']:>9}  "
            f"{r['lmdb_mb_before']:>9} / {r['lmdb_mb_after']:<9}  "
            f"{r['retrieve_p50_ms']:>8} / {r['retrieve_max_ms']:<8}  {r['write_max_ms']:>12}  "
            f"{len(r['files_holding_before'])} / {len(r['files_holding_markers'])}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
