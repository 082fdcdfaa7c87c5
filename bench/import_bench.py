"""Importing a large ChatGPT export: time and memory, first and second time.

A synthetic ``conversations.json`` of about --mb megabytes is written (conversations of 10 to
40 messages with varied text, an edited prompt making a second branch in one conversation of
four, tool calls, hidden system messages), then ``chrysalis import --from chatgpt`` runs as a
subprocess against a fresh daemon (deterministic embedder, durable writes), twice:

- wall time of each import, the command's peak RSS (``ru_maxrss`` of the child), the
  daemon's peak RSS (``VmHWM``) after both;
- the summary each prints: the first adds every kept turn, the second adds none.

    .venv/bin/python bench/import_bench.py [--mb 50] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from load_bench import Daemon

TOPICS = [
    "the sourdough starter", "a trip to Porto", "the quarterly budget", "a React state bug",
    "the garden irrigation", "a cover letter", "the Postgres vacuum settings", "a birthday menu",
    "the bike gears", "a lease renewal", "the Kafka consumer lag", "a piano practice plan",
]  # fmt: skip
WORDS = [
    "answer",
    "because",
    "maybe",
    "should",
    "would",
    "could",
    "first",
    "then",
    "later",
    "before",
    "after",
    "across",
    "under",
    "over",
    "window",
    "kernel",
    "recipe",
    "invoice",
    "branch",
    "commit",
    "oven",
    "flour",
    "sugar",
    "hydrate",
    "ferment",
    "schedule",
    "train",
    "station",
    "museum",
    "ticket",
]


def message(rng: random.Random, mid: str, role: str, t: float, text: str, **kw: Any) -> Any:
    return {
        "id": mid, "author": {"role": role, "name": kw.get("name"), "metadata": {}},
        "create_time": t, "update_time": None,
        "content": kw.get("content") or {"content_type": "text", "parts": [text]},
        "status": "finished_successfully", "end_turn": role == "assistant", "weight": 1.0,
        "metadata": kw.get("meta", {}), "recipient": kw.get("recipient", "all"),
    }  # fmt: skip


def conversation(rng: random.Random, n: int) -> dict[str, Any]:
    conv_id = f"{n:08x}-bench-4000-8000-{rng.getrandbits(48):012x}"
    t = 1_650_000_000.0 + n * 3600
    topic = rng.choice(TOPICS)
    mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None,
                                        "children": []}}  # fmt: skip

    def add(mid: str, parent: str, msg: Any) -> None:
        mapping[mid] = {"id": mid, "message": msg, "parent": parent, "children": []}
        mapping[parent]["children"].append(mid)

    sys_id = f"{conv_id}-sys"
    add(sys_id, "root", message(rng, sys_id, "system", t, "",
                                meta={"is_visually_hidden_from_conversation": True}))  # fmt: skip
    parent = sys_id
    for i in range(rng.randint(10, 40)):
        role = "user" if i % 2 == 0 else "assistant"
        words = " ".join(rng.choices(WORDS, k=rng.randint(20, 160)))
        text = f"About {topic}: {words}."
        mid = f"{conv_id}-{i}"
        if role == "user" and i == 2 and n % 4 == 0:  # an edited prompt: a dead branch
            dead = f"{mid}-draft"
            add(dead, parent, message(rng, dead, role, t, "an earlier draft " + words))
        if role == "assistant" and i % 10 == 5:  # a tool call and its output
            call, out = f"{mid}-call", f"{mid}-out"
            add(call, parent, message(rng, call, "assistant", t,
                "", content={"content_type": "code", "language": "python",
                             "text": "print(sum(range(10)))"}, recipient="python"))  # fmt: skip
            add(out, call, message(rng, out, "tool", t, "", name="python",
                content={"content_type": "execution_output", "text": "45"}))  # fmt: skip
            parent = out
        add(mid, parent, message(rng, mid, role, t, text))
        parent, t = mid, t + rng.uniform(5, 90)
    return {"title": f"{topic} #{n}", "create_time": 1_650_000_000.0 + n * 3600,
            "update_time": t, "mapping": mapping, "current_node": parent,
            "conversation_id": conv_id, "id": conv_id, "moderation_results": [],
            "gizmo_id": None, "default_model_slug": "gpt-4o"}  # fmt: skip


def write_export(path: Path, mb: float, seed: int = 3) -> int:
    """A conversations.json of about ``mb`` megabytes; returns how many conversations."""
    rng = random.Random(seed)
    target, size, n = mb * 1_000_000, 0, 0
    with path.open("w") as f:
        f.write("[")
        while size < target:
            text = json.dumps(conversation(rng, n), ensure_ascii=False)
            f.write(("," if n else "") + text)
            size, n = size + len(text), n + 1
        f.write("]")
    return n


def run_import(socket: Path, path: Path) -> tuple[dict[str, Any], float, float]:
    """(the summary, wall seconds, the command's peak RSS in MB)."""
    env = {**os.environ, "CHRYSALIS_SOCKET": str(socket)}
    argv = [sys.executable, "-m", "chrysalisd", "import", "--from", "chatgpt", str(path), "--json"]
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, env=env, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(done.stderr.decode())
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the largest child
    return json.loads(done.stdout), seconds, peak


def vm_hwm(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=50.0)
    parser.add_argument("--quick", action="store_true", help="a 1 MB export")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    mb = 1.0 if args.quick else args.mb
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="chr-import-") as tmp:
        export = Path(tmp) / "conversations.json"
        out["conversations"] = write_export(export, mb)
        out["mb"] = round(export.stat().st_size / 1e6, 1)
        daemon = Daemon(Path(tmp) / "data")
        try:
            daemon.wait_ready()
            first, out["first_s"], out["cli_peak_mb"] = run_import(daemon.socket, export)
            again, out["second_s"], _ = run_import(daemon.socket, export)
            out["daemon_peak_mb"] = vm_hwm(daemon.proc.pid)
        finally:
            daemon.close()
    out["turns"], out["added"] = first["turns"], first["added"]
    out["second_added"], out["second_unchanged"] = again["added"], again["unchanged"]
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"{out['mb']} MB, {out['conversations']} conversations, {out['turns']} turns kept")
        print(f"  first import  {out['first_s']:7.1f} s  ({out['added']} added)")
        print(f"  second import {out['second_s']:7.1f} s  ({out['second_added']} added, "
              f"{out['second_unchanged']} unchanged)")  # fmt: skip
        print(f"  peak RSS: command {out['cli_peak_mb']:.0f} MB, daemon "
              f"{out['daemon_peak_mb']:.0f} MB")  # fmt: skip
    return out


if __name__ == "__main__":
    main()
