"""The Claude Code hook's answer time, the whole process as Claude Code runs it.

1. Daemon up: a daemon (deterministic embedder) on a memory of N beads; the hook command
   (``python -m chrysalisd hooks claude-code``) run R times with a UserPromptSubmit event on
   stdin, each a fresh process: wall time from spawn to exit. Its answer is checked to be
   context (``hookSpecificOutput``) that cites the note it should find.
2. Daemon down: the same with the socket pointing nowhere: exit 0, said on stderr; wall time.
3. For scale: ``python -c pass`` (the interpreter alone) and ``chrysalis --version`` (the
   full CLI's start-up), R times each.

Targets: p95 <= 150 ms with the daemon up; exit 0 within 1 s with it down. On a loaded
machine the interpreter alone can take most of that: the figures print it beside, and each
row's CPU time (user + system of the process), which load moves far less than wall time.

    .venv/bin/python bench/hook_bench.py [--runs 40] [--beads 2000] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from load_bench import Daemon

from chrysalis.client import Client

PROMPT = "Which pagination scheme does the vendor API use since v3?"
NOTE = "The vendor's v3 API pages orders with an opaque next_cursor token, 500 per page."


def event(prompt: str) -> bytes:
    return json.dumps({
        "session_id": "bench-session", "transcript_path": "", "cwd": "/home/dev/orchard",
        "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": prompt,
    }).encode()  # fmt: skip


def timed(
    argv: list[str], env: dict[str, str], stdin: bytes, runs: int
) -> tuple[list[tuple[float, float]], Any]:
    """(wall seconds, CPU seconds) of ``runs`` fresh processes, and the last one's result.
    CPU time (user + system) is what the process itself cost: on a loaded machine it moves
    far less than the wall time."""
    times, done = [], None
    for _ in range(runs):
        cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(argv, input=stdin, capture_output=True, env=env, check=False)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        used = after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime
        times.append((wall, used))
    return times, done


def figures(times: list[tuple[float, float]]) -> dict[str, float]:
    walls = sorted(t[0] for t in times)
    p95 = walls[min(len(walls) - 1, round(0.95 * (len(walls) - 1)))]
    return {"p50_ms": 1000 * statistics.median(walls), "p95_ms": 1000 * p95,
            "max_ms": 1000 * walls[-1],
            "cpu_p50_ms": 1000 * statistics.median(t[1] for t in times)}  # fmt: skip


def seed(socket: Path, beads: int) -> None:
    words = ["orchard", "cider", "pruning", "ladder", "harvest", "frost", "graft", "blossom"]
    with Client(socket, timeout=120) as client:
        rows = [
            {"content": f"note {i}: " + " ".join(words[(i + j) % 8] for j in range(9)),
             "session_id": f"s{i // 50}", "role": "user"}
            for i in range(beads)
        ]  # fmt: skip
        for start in range(0, beads, 1000):
            client.remember_many(rows[start : start + 1000])
        client.remember(NOTE, session_id="vendor-notes", id="vendor-paging-note")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--beads", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="3 runs on 200 beads")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    # --quick is the suite's smoke run (tests/test_import_histories.py): each run is a fresh
    # interpreter, so its CPU is the run count times a process start-up
    runs, beads = (3, 200) if args.quick else (args.runs, args.beads)
    hook = [sys.executable, "-m", "chrysalisd", "hooks", "claude-code"]
    out: dict[str, Any] = {"runs": runs, "beads": beads}
    with tempfile.TemporaryDirectory(prefix="chr-hook-") as tmp:
        daemon = Daemon(Path(tmp) / "data")
        try:
            daemon.wait_ready()
            seed(daemon.socket, beads)
            env = {**os.environ, "CHRYSALIS_SOCKET": str(daemon.socket)}
            warm = 1 if args.quick else 2  # runs that warm the page cache and the daemon
            timed(hook, env, event(PROMPT), warm)
            times, done = timed(hook, env, event(PROMPT), runs)
            answer = json.loads(done.stdout)["hookSpecificOutput"]
            out["up"] = figures(times)
            out["up"]["cites_the_note"] = "[vendor-paging-note, " in answer["additionalContext"]
            out["up"]["exit_codes"] = sorted({done.returncode})
        finally:
            daemon.close()
        env = {**os.environ, "CHRYSALIS_SOCKET": str(Path(tmp) / "nobody.sock")}
        times, done = timed(hook, env, event(PROMPT), runs)
        out["down"] = {**figures(times), "exit_code": done.returncode,
                       "said": done.stderr.decode().strip()[:120]}  # fmt: skip
    out["python_alone"] = figures(
        timed([sys.executable, "-c", "pass"], dict(os.environ), b"", runs)[0]
    )
    full = [sys.executable, "-m", "chrysalisd", "--version"]
    out["full_cli_start"] = figures(timed(full, dict(os.environ), b"", runs)[0])
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for name in ("up", "down", "python_alone", "full_cli_start"):
            f = out[name]
            print(f"{name:>15}: p50 {f['p50_ms']:6.1f} ms  p95 {f['p95_ms']:6.1f} ms  "
                  f"max {f['max_ms']:6.1f} ms  cpu p50 {f['cpu_p50_ms']:6.1f} ms")  # fmt: skip
        print(f"  up cites the note: {out['up']['cites_the_note']}; down: exit "
              f"{out['down']['exit_code']}, {out['down']['said']!r}")  # fmt: skip
    return out


if __name__ == "__main__":
    main()
