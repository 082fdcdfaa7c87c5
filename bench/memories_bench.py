"""What several memories cost one daemon: start-up, creating one, memory (RSS), threads, and
recall in one memory against recall across all of them.

    .venv/bin/python bench/memories_bench.py                  # 1, 4 and 16 memories
    .venv/bin/python bench/memories_bench.py --quick     # 2 memories, 100 beads, 20 queries

For each count N: a fresh data dir; ``chrysalis daemon`` as a subprocess (deterministic
embedder, rules extractor, no remote); N-1 named memories created through the API; each
memory given ``--beads`` beads (``remember_many``, 500 per call) and its indexes caught up;
then ``--queries`` fusion recalls (k=10) in default alone and across every memory, timed
in the client around the call. RSS and threads are read from ``/proc/<pid>/status`` once the
memories are idle. Then SIGTERM, and the daemon must exit 0.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from chrysalis import Client
from chrysalis.core.errors import DaemonNotRunning

WORDS = [
    "harbour",
    "lantern",
    "orchard",
    "quartz",
    "meadow",
    "copper",
    "violin",
    "glacier",
    "river",
    "planet",
    "garden",
    "rocket",
    "bridge",
    "window",
    "castle",
    "forest",
    "desert",
    "island",
    "canyon",
    "valley",
    "summit",
    "falcon",
    "otter",
    "maple",
    "cedar",
    "willow",
    "ember",
    "frost",
    "thunder",
    "breeze",
    "pebble",
    "marble",
    "velvet",
    "amber",
    "cobalt",
]


def sentence(rng: random.Random, n: int) -> str:
    return f"note {n}: " + " ".join(rng.choices(WORDS, k=12))


def proc_status(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "Threads"):
            fields[key] = int(value.split()[0])
    return fields


def wait_ready(client: Client, proc: subprocess.Popen[bytes], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the daemon exited {proc.returncode}")
        try:
            if client.ping():
                return
        except DaemonNotRunning:
            pass
        time.sleep(0.02)
    raise TimeoutError("the daemon did not answer")


def caught_up(socket: Path, name: str, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    with Client(socket, memory=name) as c:
        while time.monotonic() < deadline:
            if not any(c.status()["index"]["behind"].values()):
                return
            time.sleep(0.1)
    raise TimeoutError(f"{name}: indexes did not catch up")


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(p / 100 * len(values)))]


def run(n: int, beads: int, queries: int, rng: random.Random) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="chr-mem-bench-"))
    sock_dir = Path(tempfile.mkdtemp(prefix="chr-", dir="/tmp"))
    socket = sock_dir / "d.sock"
    env = {
        **os.environ,
        "CHRYSALIS_SOCKET": str(socket),
        "CHRYSALIS_EMBEDDER": "deterministic",
        "CHRYSALIS_EXTRACTOR": "rules",
        "CHRYSALIS_LOG_LEVEL": "warning",
    }
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "chrysalisd", "daemon", "--data-dir", str(root / "data")],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with Client(socket, timeout=120.0) as c:
            wait_ready(c, proc)
            ready_s = time.perf_counter() - started
            names = ["default"] + [f"m{i:02d}" for i in range(1, n)]
            create_ms = []
            for name in names[1:]:
                t = time.perf_counter()
                c.create_memory(name)
                create_ms.append((time.perf_counter() - t) * 1000)
        counter = 0
        for name in names:
            with Client(socket, timeout=120.0, memory=name) as m:
                for start in range(0, beads, 500):
                    rows = []
                    for _ in range(min(500, beads - start)):
                        counter += 1
                        rows.append({"content": sentence(rng, counter)})
                    m.remember_many(rows)
        for name in names:
            caught_up(socket, name)
        time.sleep(1.0)
        figures = proc_status(proc.pid)
        one, across = [], []
        with Client(socket, timeout=60.0) as c:
            for _ in range(queries):
                q = " ".join(rng.choices(WORDS, k=3))
                t = time.perf_counter()
                c.recall(q, k=10)
                one.append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                c.recall(q, k=10, memories=names)
                across.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(120)
        return {
            "memories": n,
            "ready_s": round(ready_s, 2),
            "create_ms_p50": round(pct(create_ms, 50), 1) if create_ms else None,
            "rss_mib": round(figures["VmRSS"] / 1024),
            "threads": figures["Threads"],
            "recall_one_p50_ms": round(pct(one, 50), 2),
            "recall_one_p95_ms": round(pct(one, 95), 2),
            "recall_all_p50_ms": round(pct(across, 50), 2),
            "recall_all_p95_ms": round(pct(across, 95), 2),
            "stop_s": round(time.perf_counter() - t, 2),
            "exit": code,
        }
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(sock_dir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--counts", default="1,4,16", help="numbers of memories to try")
    parser.add_argument("--beads", type=int, default=2000, help="beads in each memory")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="2 memories, 100 beads, 20 queries")
    args = parser.parse_args()
    if args.quick:
        # one daemon (the suite runs this: each daemon's start-up costs seconds of CPU), with
        # two memories so that creating one and recalling across them still run
        args.counts, args.beads, args.queries = "2", 100, 20
    rng = random.Random(args.seed)
    rows = [run(int(n), args.beads, args.queries, rng) for n in args.counts.split(",")]
    head = list(rows[0])
    print(" | ".join(head))
    for row in rows:
        print(" | ".join(str(row[k]) for k in head))
    if any(row["exit"] != 0 for row in rows):
        sys.exit("a daemon did not exit 0 on SIGTERM")


if __name__ == "__main__":
    main()
