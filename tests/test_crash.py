"""SIGKILL a writer at random moments: every acknowledged bead survives, the store opens clean."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from chrysalis import Memory

WRITER = r"""
import sys, threading
from chrysalis import Memory

path, tag = sys.argv[1], sys.argv[2]
mem = Memory.open(path)  # durable: sync on
lock = threading.Lock()

def report(ids):
    with lock:
        sys.stdout.write("".join(f"{i}\n" for i in ids))
        sys.stdout.flush()

def single(n):
    i = 0
    while True:
        bead = mem.append_bead(f"{tag} single {n} {i}", id=f"{tag}-s{n}-{i}", session_id=f"s{n}")
        report([bead.id])
        i += 1

def batches():
    i = 0
    while True:
        rows = [{"id": f"{tag}-b{i}-{j}", "content": f"{tag} batch {i} row {j} " + "x" * 200} for j in range(50)]
        report([b.id for b in mem.append_beads(rows)])
        i += 1

threads = [threading.Thread(target=single, args=(n,), daemon=True) for n in range(3)]
threads.append(threading.Thread(target=batches, daemon=True))
print("ready", flush=True)
for t in threads:
    t.start()
threads[0].join()
"""


def test_sigkill_never_loses_an_acknowledged_bead(tmp_path: Path) -> None:
    data = tmp_path / "data"
    rnd = random.Random(1234)
    acked: list[str] = []
    for round_no in range(6):
        child = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(data), f"r{round_no}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None
        first = child.stdout.readline().strip()
        if first != "ready":
            child.kill()
            raise AssertionError(f"writer did not start: {child.communicate(timeout=30)[1]}")
        time.sleep(rnd.uniform(0.05, 0.6))
        os.kill(child.pid, signal.SIGKILL)
        out, _ = child.communicate(timeout=30)
        assert child.returncode == -signal.SIGKILL
        lines = out.split("\n")
        acked.extend(line for line in lines[:-1] if line)  # the last piece may be a torn line

        with Memory.open(data, sync=False) as mem:  # opens cleanly after the kill
            missing = [i for i in acked if not _has(mem, i)]
            assert missing == [], f"round {round_no}: {len(missing)} acknowledged beads lost"
            vv = mem.version_vector()
            ops = mem.ops_since({})
            assert [op["seq"] for op in ops] == list(range(1, vv.get(mem.replica_id, 0) + 1))
            assert len(list(mem.all_beads())) == len(ops)  # views agree with the log
    assert len(acked) > 100, "the writer hardly wrote; the test proves little"


def _has(mem: Memory, bead_id: str) -> bool:
    try:
        mem.get_bead(bead_id)
    except Exception:
        return False
    return True
