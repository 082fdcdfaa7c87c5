"""Evidence recall@k on LoCoMo conversations (no network, no LLM).

As ../shared/eval/locomo/README.md defines it: each conversation goes into its own empty
memory, one bead per turn (id = dia_id, session = session_N, time = the session's date,
speaker as the source); for every question with category != 5 and evidence, retrieve the top
k beads; recall = |evidence ∩ top-k| / |evidence|, averaged over questions, for k = 5, 10, 25.

    .venv/bin/python bench/locomo_eval.py [--data PATH] [--strategy S] [--embedder SPEC]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from chrysalis import Memory

DEFAULT_DATA = (
    Path(__file__).resolve().parents[2] / "shared" / "eval" / "locomo" / "locomo-dev.json"
)
KS = (5, 10, 25)


def session_time(text: str) -> float:
    """'1:56 pm on 8 May, 2023' -> epoch seconds (UTC)."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").timestamp()


def turns(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    """One bead row per turn, in order."""
    rows = []
    n = 1
    while f"session_{n}" in conversation:
        start = session_time(conversation[f"session_{n}_date_time"])
        for i, turn in enumerate(conversation[f"session_{n}"]):
            text = turn["text"]
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            rows.append({
                "id": turn["dia_id"], "content": text, "source": turn["speaker"],
                "session_id": f"session_{n}", "ts": start + i, "role": "user",
            })  # fmt: skip
        n += 1
    return rows


def evaluate(
    data: list[dict[str, Any]],
    *,
    strategy: str,
    embedder: str,
    weights: dict[str, float] | None = None,
) -> dict[str, Any]:
    recalls: dict[int, list[float]] = {k: [] for k in KS}
    latencies = []
    for sample in data:
        with (
            tempfile.TemporaryDirectory(prefix="locomo-") as tmp,
            Memory.open(Path(tmp) / "m", sync=False, embedder=embedder) as mem,
        ):
            if weights:
                mem.weights = mem.weights.model_copy(update=weights)
            mem.append_beads(turns(sample["conversation"]))
            mem.wait_indexed(timeout=600)
            for qa in sample["qa"]:
                evidence = set(qa.get("evidence") or ())
                if qa.get("category") == 5 or not evidence:
                    continue
                t0 = time.perf_counter()
                result = mem.retrieve(
                    qa["question"], k=max(KS), strategy=strategy, filters={"kinds": ["bead"]}
                )
                latencies.append((time.perf_counter() - t0) * 1000)
                ranked = [item.id for item in result.items]
                for k in KS:
                    recalls[k].append(len(evidence & set(ranked[:k])) / len(evidence))
    return {
        "questions": len(recalls[KS[0]]),
        **{f"recall@{k}": round(statistics.fmean(v), 4) for k, v in recalls.items()},
        "retrieve_ms_p50": round(statistics.median(latencies), 2),
        "retrieve_ms_p95": round(sorted(latencies)[int(0.95 * len(latencies))], 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON file")
    parser.add_argument("--strategy", default="fusion", help="fusion, emb, keyword, kg or beads")
    parser.add_argument("--embedder", default="deterministic", help="embedder spec")
    parser.add_argument("--json", action="store_true", help="print JSON only")
    parser.add_argument(
        "--weights", type=json.loads, help="fusion weights, e.g. '{\"context\": 0.5}'"
    )
    args = parser.parse_args(argv)
    data = json.loads(args.data.read_text())
    t0 = time.perf_counter()
    figures = evaluate(data, strategy=args.strategy, embedder=args.embedder, weights=args.weights)
    figures["seconds"] = round(time.perf_counter() - t0, 1)
    if args.json:
        print(json.dumps(figures))
    else:
        print(f"LoCoMo evidence recall, {args.data.name}")
        print(f"  strategy={args.strategy} embedder={args.embedder}")
        for key, value in figures.items():
            print(f"  {key:<16} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
