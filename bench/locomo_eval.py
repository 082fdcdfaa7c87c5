"""Evidence recall@k on LoCoMo conversations (no network, no LLM).

As ../shared/eval/locomo/README.md defines it: each conversation goes into its own empty
memory, one bead per turn (id = dia_id, session = session_N, time = the session's date,
speaker as the source); for every question with category != 5 and evidence, retrieve the top
k beads; recall = |evidence ∩ top-k| / |evidence|, averaged over questions, for k = 5, 10, 25.

    .venv/bin/python bench/locomo_eval.py [--data PATH] [--strategy S] [--embedder SPEC]
        [--weights JSON] [--ablations] [--json]

``--ablations`` runs longmemeval_eval's list of configurations (fusion, each signal alone,
fusion without each) on the same memories, with a table per question category.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from chrysalis import Memory

DEFAULT_DATA = (
    Path(__file__).resolve().parents[2] / "shared" / "eval" / "locomo" / "locomo-dev.json"
)
KS = (5, 10, 25)
SKIPPED = 77  # the exit status that tells tests/test_benches.py its data is absent


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


CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def evaluate(
    data: list[dict[str, Any]],
    *,
    strategy: str = "fusion",
    embedder: str,
    extractor: str | None = None,
    summary_after: float | None = 600.0,
    weights: dict[str, float] | None = None,
    configs: Sequence[tuple[str, str, dict[str, float]]] | None = None,
) -> dict[str, Any]:
    """Recall@k of one configuration (``strategy`` and ``weights``), or of every one of
    ``configs`` on the same memories (each conversation indexed once); with ``configs``, the
    figures per configuration, overall and per question category."""
    runs = list(configs or [("fusion", strategy, dict(weights or {}))])
    recalls: dict[str, dict[str, dict[int, list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: {k: [] for k in KS})
    )
    latencies: dict[str, list[float]] = defaultdict(list)
    for sample in data:
        with (
            tempfile.TemporaryDirectory(prefix="locomo-") as tmp,
            Memory.open(
                Path(tmp) / "m",
                sync=False,
                embedder=embedder,
                extractor=extractor,
                summary_after=summary_after,
            ) as mem,
        ):
            mem.append_beads(turns(sample["conversation"]))
            mem.wait_indexed(timeout=600)
            mem.wait_learned(timeout=600)
            defaults = mem.weights
            for name, run_strategy, overrides in runs:
                if run_strategy == "bm25":
                    continue  # the LoCoMo README's reference is quoted, not rerun
                mem.weights = defaults.model_copy(update=overrides)
                for qa in sample["qa"]:
                    evidence = set(qa.get("evidence") or ())
                    if qa.get("category") == 5 or not evidence:
                        continue
                    t0 = time.perf_counter()
                    result = mem.retrieve(
                        qa["question"], k=max(KS), strategy=run_strategy,
                        filters={"kinds": ["bead"]},
                    )  # fmt: skip
                    latencies[name].append((time.perf_counter() - t0) * 1000)
                    ranked = [item.id for item in result.items]
                    category = CATEGORIES.get(qa.get("category"), str(qa.get("category")))
                    for group in ("all", category):
                        for k in KS:
                            recalls[name][group][k].append(
                                len(evidence & set(ranked[:k])) / len(evidence)
                            )
    out = {name: _figures(recalls[name], latencies[name]) for name in recalls}
    return out if configs else out["fusion"]


def _figures(groups: dict[str, dict[int, list[float]]], latencies: list[float]) -> dict[str, Any]:
    def means(recalls: dict[int, list[float]]) -> dict[str, Any]:
        return {
            "questions": len(recalls[KS[0]]),
            **{f"recall@{k}": round(statistics.fmean(v), 4) for k, v in recalls.items()},
        }

    return {
        **means(groups["all"]),
        "by_category": {c: means(groups[c]) for c in sorted(groups) if c != "all"},
        "retrieve_ms_p50": round(statistics.median(latencies), 2),
        "retrieve_ms_p95": round(sorted(latencies)[int(0.95 * len(latencies))], 2),
    }


def print_ablations(figures: dict[str, Any]) -> None:
    print("| configuration | recall@5 | recall@10 | recall@25 | p50 ms |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, f in figures.items():
        print(
            f"| {name} | {f['recall@5']:.3f} | {f['recall@10']:.3f} | {f['recall@25']:.3f} "
            f"| {f['retrieve_ms_p50']} |"
        )
    print()
    names = list(figures)[:3]
    print("| category | n | " + " | ".join(f"{n} recall@10" for n in names) + " |")
    print("| --- | ---: |" + " ---: |" * len(names))
    for category, first in figures[names[0]]["by_category"].items():
        cells = " | ".join(f"{figures[n]['by_category'][category]['recall@10']:.3f}" for n in names)
        print(f"| {category} | {first['questions']} | {cells} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON file")
    parser.add_argument("--strategy", default="fusion", help="fusion, emb, keyword, kg or beads")
    parser.add_argument("--embedder", default="deterministic", help="embedder spec")
    parser.add_argument("--json", action="store_true", help="print JSON only")
    parser.add_argument("--extractor", help="knowledge extractor: rules, ollama[:MODEL]")
    parser.add_argument(
        "--no-summaries", action="store_true", help="no session summaries (with --extractor)"
    )
    parser.add_argument(
        "--weights", type=json.loads, help="fusion weights, e.g. '{\"context\": 0.5}'"
    )
    parser.add_argument(
        "--ablations", action="store_true",
        help="fusion, each signal alone and fusion without each (longmemeval_eval's list)",
    )  # fmt: skip
    parser.add_argument(
        "--quick", action="store_true", help="the first conversation's first 40 questions"
    )
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"skipped: {args.data} is not there (LoCoMo dev)", file=sys.stderr)
        return SKIPPED
    data = json.loads(args.data.read_text())
    if args.quick:
        data = [{**data[0], "qa": data[0]["qa"][:40]}]
    t0 = time.perf_counter()
    if args.ablations:
        from longmemeval_eval import ABLATIONS

        figures = evaluate(
            data,
            embedder=args.embedder,
            extractor=args.extractor,
            configs=ABLATIONS,
            summary_after=None if args.no_summaries else 600.0,
        )
        if args.json:
            print(json.dumps(figures))
        else:
            print(f"LoCoMo evidence recall, {args.data.name}, embedder={args.embedder}, "
                  f"extractor={args.extractor}, "
                  f"{time.perf_counter() - t0:.0f} s")  # fmt: skip
            print_ablations(figures)
        return 0
    figures = evaluate(
        data, strategy=args.strategy, embedder=args.embedder, extractor=args.extractor,
        summary_after=None if args.no_summaries else 600.0,
        weights=args.weights,
    )  # fmt: skip
    figures["seconds"] = round(time.perf_counter() - t0, 1)
    if args.json:
        print(json.dumps(figures))
    else:
        print(f"LoCoMo evidence recall, {args.data.name}")
        print(f"  strategy={args.strategy} embedder={args.embedder}")
        for key, value in figures.items():
            if key == "by_category":
                for category, f in value.items():
                    print(f"  {category:<16} recall@10 {f['recall@10']} (n={f['questions']})")
            else:
                print(f"  {key:<16} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
