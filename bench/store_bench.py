"""Store benchmark: write, replication and read figures for `chrysalis.Memory`.

    .venv/bin/python bench/store_bench.py            # full run (100k beads; about 30 s)
    .venv/bin/python bench/store_bench.py --quick    # smoke run (2k beads; a few seconds)
    .venv/bin/python bench/store_bench.py --json     # the figures as JSON on stdout

Every benchmark works in a fresh data dir under /tmp, removed afterwards. Writes are
durable (``sync=True``, the default) except where the brief says otherwise: the source
replica that generates the ops for ``apply_ops`` is opened with ``sync=False`` and is not
timed; the ``apply_ops`` figure includes its validation of the ops. Progress, and the
store's own log lines (such as an LMDB map growth), go to stderr.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import lmdb

from chrysalis.memory import Memory
from chrysalis.store.env import DEFAULT_MAP_SIZE

CONTENT_CHARS = 100
BATCH_ROWS = 1000
MAP_SIZE = DEFAULT_MAP_SIZE  # --map-mib changes it


@dataclass
class Figure:
    key: str
    name: str
    value: float
    unit: str
    goal: float | None = None
    higher_is_better: bool = True

    @property
    def met(self) -> bool | None:
        if self.goal is None:
            return None
        return self.value >= self.goal if self.higher_is_better else self.value <= self.goal


def log(msg: str) -> None:
    """Progress goes to stderr so that ``--json`` leaves stdout clean."""
    print(msg, file=sys.stderr, flush=True)


def content(i: int) -> str:
    """About 100 chars of text, different for every bead."""
    return f"bead {i:09d}: the quick brown fox jumps over the lazy dog; ".ljust(CONTENT_CHARS, "x")


def rows(start: int, count: int) -> list[dict[str, Any]]:
    return [{"content": content(i)} for i in range(start, start + count)]


@contextmanager
def fresh_memory(name: str, *, sync: bool = True) -> Iterator[Memory]:
    """A Memory in a new temporary data dir, closed and removed afterwards."""
    with tempfile.TemporaryDirectory(prefix=f"chrysalis-bench-{name}-", dir="/tmp") as tmp:
        mem = Memory.open(Path(tmp) / "data", sync=sync, map_size=MAP_SIZE)
        try:
            yield mem
        finally:
            mem.close()


def fill(mem: Memory, count: int) -> None:
    for start in range(0, count, BATCH_ROWS):
        mem.append_beads(rows(start, min(BATCH_ROWS, count - start)))


def percentile(sorted_values: list[float], pct: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    rank = max(1, round(pct / 100 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


# ---- benchmarks ------------------------------------------------------------------------------


def bench_append_bead(threads: int, seconds: float, *, sync: bool = True) -> float:
    """``append_bead`` (durable unless ``sync=False``) from ``threads`` threads for
    ``seconds``; returns beads/s."""
    with fresh_memory(f"append{threads}", sync=sync) as mem:
        counts = [0] * threads
        start_line = threading.Barrier(threads + 1)
        deadline = 0.0

        def worker(t: int) -> None:
            start_line.wait()
            n = 0
            while time.perf_counter() < deadline:
                mem.append_bead(content(t * 10_000_000 + n), session_id=f"s{t}")
                n += 1
            counts[t] = n

        pool = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
        for th in pool:
            th.start()
        t0 = time.perf_counter()
        deadline = t0 + seconds
        start_line.wait()
        for th in pool:
            th.join()
        elapsed = time.perf_counter() - t0
        total = sum(counts)
        stored = mem.stats()["beads"]
        if stored != total:
            raise AssertionError(f"appended {total} beads but the store holds {stored}")
        log(f"  append_bead x{threads} threads: {total} beads in {elapsed:.2f} s, "
            f"{mem.store.commits} commits")  # fmt: skip
        return total / elapsed


def bench_append_beads(calls: int) -> float:
    """Durable ``append_beads`` of 1,000 rows per call, ``calls`` times; returns beads/s."""
    with fresh_memory("batch") as mem:
        batches = [rows(c * BATCH_ROWS, BATCH_ROWS) for c in range(calls)]
        t0 = time.perf_counter()
        for batch in batches:
            mem.append_beads(batch)
        elapsed = time.perf_counter() - t0
        log(f"  append_beads: {calls} x {BATCH_ROWS} beads in {elapsed:.2f} s")
        return calls * BATCH_ROWS / elapsed


def bench_replica_and_reads(n: int, read_calls: int) -> dict[str, float]:
    """``apply_ops`` of ``n`` remote ops, then reads on the resulting store of ``n`` beads."""
    out: dict[str, float] = {}
    with fresh_memory("src", sync=False) as src, fresh_memory("dst") as dst:
        t0 = time.perf_counter()
        fill(src, n)
        ops = src.ops_since({})
        gen = time.perf_counter() - t0
        log(f"  generated {len(ops)} ops on a sync=False source in {gen:.2f} s (not timed)")
        if len(ops) != n:
            raise AssertionError(f"ops_since returned {len(ops)} ops, expected {n}")

        t0 = time.perf_counter()
        result = dst.apply_ops(ops)
        elapsed = time.perf_counter() - t0
        log(f"  apply_ops: {result} in {elapsed:.2f} s")
        if (result.applied, result.duplicates, result.pending) != (n, 0, 0):
            raise AssertionError(f"apply_ops of {n} fresh ops returned {result}")
        if dst.state_digest() != src.state_digest():
            raise AssertionError("source and destination digests differ after apply_ops")
        out["apply_ops"] = n / elapsed

        for _ in range(100):  # warm up
            dst.last_beads(50)
        latencies = []
        for _ in range(read_calls):
            t0 = time.perf_counter()
            got = dst.last_beads(50)
            latencies.append((time.perf_counter() - t0) * 1e6)
        if len(got) != 50:
            raise AssertionError(f"last_beads(50) returned {len(got)} beads")
        latencies.sort()
        for pct in (50, 95, 99):
            out[f"last_beads_p{pct}"] = percentile(latencies, pct)

        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            dst.state_digest()
            times.append((time.perf_counter() - t0) * 1e3)
        out["state_digest"] = statistics.median(times)
    return out


# ---- main ------------------------------------------------------------------------------------


def environment() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "lmdb_binding": lmdb.__version__,
        "lmdb_library": ".".join(map(str, lmdb.version())),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
    }


def run(quick: bool, seconds: float) -> list[Figure]:
    # --quick is the suite's smoke run (tests/test_public_api.py): every phase, small sizes
    n = 2_000 if quick else 100_000
    batch_calls = 2 if quick else 50
    read_calls = 200 if quick else 2_000
    k = f"{n // 1000}k"

    log("append_bead, durable ...")
    one = bench_append_bead(1, seconds)
    eight = bench_append_bead(8, seconds)
    log("append_bead, sync=False (no fsync: the CPU's share of the cost) ...")
    eight_nosync = bench_append_bead(8, seconds, sync=False)
    log("append_beads, durable ...")
    batch = bench_append_beads(batch_calls)
    log(f"apply_ops and reads at {k} beads ...")
    rest = bench_replica_and_reads(n, read_calls)

    return [
        Figure("append_bead_1t", "append_bead, 1 thread", one, "beads/s"),
        Figure("append_bead_8t", "append_bead, 8 threads", eight, "beads/s", 20_000),
        Figure("append_bead_8t_nosync", "append_bead, 8 thr, sync=False", eight_nosync, "beads/s"),
        Figure("append_beads", f"append_beads, {BATCH_ROWS}/call", batch, "beads/s", 200_000),
        Figure("apply_ops", f"apply_ops, {k} ops", rest["apply_ops"], "ops/s", 100_000),
        Figure("last_beads_p50", f"last_beads(50) p50 @{k}", rest["last_beads_p50"], "us"),
        Figure(
            "last_beads_p95", f"last_beads(50) p95 @{k}", rest["last_beads_p95"], "us", 200, False
        ),
        Figure("last_beads_p99", f"last_beads(50) p99 @{k}", rest["last_beads_p99"], "us"),
        Figure("state_digest", f"state_digest @{k} (median of 5)", rest["state_digest"], "ms"),
    ]


def print_table(figures: list[Figure]) -> None:
    print(f"{'figure':<36} {'value':>12} {'unit':<8} {'goal':>12}  met")
    print("-" * 76)
    for f in figures:
        goal = "" if f.goal is None else f"{'>=' if f.higher_is_better else '<='} {f.goal:,.0f}"
        met = {None: "-", True: "yes", False: "NO"}[f.met]
        print(f"{f.name:<36} {f.value:>12,.1f} {f.unit:<8} {goal:>12}  {met}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller run (2k beads, 1 s appends)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--seconds", type=float, help="duration of each append_bead run")
    parser.add_argument(
        "--map-mib", type=int, help=f"LMDB map size (default {DEFAULT_MAP_SIZE >> 20} MiB)"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, format="  [%(name)s] %(message)s")
    logging.getLogger("chrysalis").setLevel(logging.INFO)
    global MAP_SIZE
    MAP_SIZE = args.map_mib << 20 if args.map_mib else DEFAULT_MAP_SIZE
    seconds = args.seconds if args.seconds is not None else (1.0 if args.quick else 3.0)

    env = environment()
    if not args.json:
        print(f"python {env['python']}, lmdb {env['lmdb_binding']} (LMDB {env['lmdb_library']}), "
              f"{env['cpu_count']} CPUs, {env['platform']}")  # fmt: skip
        print(
            f"mode: {'quick' if args.quick else 'full'}, map size {MAP_SIZE >> 20} MiB\n",
            flush=True,
        )

    figures = run(args.quick, seconds)

    if args.json:
        payload = {
            "environment": env,
            "quick": args.quick,
            "map_size": MAP_SIZE,
            "figures": [{**asdict(f), "met": f.met} for f in figures],
        }
        print(json.dumps(payload, indent=2))
    else:
        print()
        print_table(figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
