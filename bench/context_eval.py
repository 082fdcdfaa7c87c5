"""Evidence recall of `context` against retrieve(k=10), on both dev sets (no network, no LLM).

The memories are built as `longmemeval_eval.py` and `locomo_eval.py` build them (one per
question / conversation, one bead per turn). Per question: the gold turns found among the items
of ``context(question, token_budget=B)`` (beads only: a summary is no turn), and among the top
10 of ``retrieve(question, k=10, kinds=[bead])``; with the items and estimated tokens each
gives (retrieve's tokens: the sum of its items' ``tokens``; context's: its ``tokens``, the
text block with its citations).

    .venv/bin/python bench/context_eval.py [--set lme|locomo|both] [--budget 800]
        [--embedder SPEC] [--every N] [--const NAME=VALUE] [--json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import chrysalis.context  # noqa: F401 - its build module's constants are tried with --set
from chrysalis import Memory

HERE = Path(__file__).resolve().parent


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _questions(which: str, every: int) -> list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """(beads, [{question, gold bead ids, now}]) per memory."""
    out = []
    if which == "lme":
        lme = _load("longmemeval_eval")
        for q in json.loads(lme.DEFAULT_DATA.read_text())[::every]:
            rows, back = lme.haystack(q)
            ids = {turn: bead for bead, turn in back.items()}
            gold = [ids[t] for t in q["gold_turns"] if t in ids]
            out.append((rows, [{"q": q["question"], "gold": gold, "now": lme.asked_at(q)}]))
    else:
        locomo = _load("locomo_eval")
        for sample in json.loads(locomo.DEFAULT_DATA.read_text())[::every]:
            qs = [
                {"q": qa["question"], "gold": list(qa["evidence"]), "now": None}
                for qa in sample["qa"]
                if qa.get("category") != 5 and qa.get("evidence")
            ]
            out.append((locomo.turns(sample["conversation"]), qs))
    return out


def evaluate(which: str, budget: int, embedder: str, every: int) -> dict[str, Any]:
    rows_out: dict[str, list[float]] = {
        k: [] for k in ("ctx_recall", "ctx_items", "ctx_tokens", "ret_recall", "ret_items",
                        "ret_tokens", "ctx_ms", "empty")
    }  # fmt: skip
    for beads, questions in _questions(which, every):
        with (
            tempfile.TemporaryDirectory(prefix="ctx-") as tmp,
            Memory.open(Path(tmp) / "m", sync=False, embedder=embedder) as mem,
        ):
            mem.append_beads(beads)
            mem.wait_indexed(timeout=600)
            for q in questions:
                gold = set(q["gold"])
                if not gold:
                    continue
                t0 = time.perf_counter()
                ctx = mem.context(q["q"], token_budget=budget, now=q["now"])
                rows_out["ctx_ms"].append((time.perf_counter() - t0) * 1000)
                ids = {i.id for i in ctx.items}
                ids |= {d for i in ctx.items for d in [*i.duplicates, *i.joined]}
                rows_out["ctx_recall"].append(len(gold & ids) / len(gold))
                rows_out["ctx_items"].append(len(ctx.items))
                rows_out["ctx_tokens"].append(ctx.tokens)
                rows_out["empty"].append(float(not ctx.items))
                found = mem.retrieve(q["q"], k=10, filters={"kinds": ["bead"]}, now=q["now"])
                top = {i.id for i in found.items}
                rows_out["ret_recall"].append(len(gold & top) / len(gold))
                rows_out["ret_items"].append(len(found.items))
                rows_out["ret_tokens"].append(sum(i.tokens for i in found.items))
    mean = {k: round(statistics.fmean(v), 3) for k, v in rows_out.items() if v}
    mean["questions"] = len(rows_out["ctx_recall"])
    mean["ctx_ms_p95"] = round(sorted(rows_out["ctx_ms"])[int(0.95 * len(rows_out["ctx_ms"]))], 2)
    return mean


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="both", choices=["lme", "locomo", "both"])
    parser.add_argument("--budget", type=int, default=800)
    parser.add_argument("--embedder", default="deterministic")
    parser.add_argument("--every", type=int, default=1, help="only every Nth question/sample")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--quick", action="store_true", help="every 50th question, LongMemEval only"
    )
    parser.add_argument(
        "--const", dest="consts", action="append", default=[], metavar="NAME=VALUE",
        help="try another constant of chrysalis.context.build, e.g. RELATIVE_FLOOR=0.4",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.quick:
        args.set, args.every = "lme", max(args.every, 50)  # two memories: a smoke run
    sets = ["lme", "locomo"] if args.set == "both" else [args.set]
    data = {
        "lme": _load("longmemeval_eval").DEFAULT_DATA,
        "locomo": _load("locomo_eval").DEFAULT_DATA,
    }
    missing = [str(data[s]) for s in sets if not data[s].is_file()]
    if missing:  # the dev sets live beside the clone (../shared), never in the repo
        print(f"skipped: the dev sets are not here: {', '.join(missing)}", file=sys.stderr)
        return 77
    build = sys.modules["chrysalis.context.build"]
    for assignment in args.consts:
        name, _, value = assignment.partition("=")
        old = getattr(build, name)
        setattr(build, name, (value == "True") if isinstance(old, bool) else type(old)(value))
    out = {s: evaluate(s, args.budget, args.embedder, args.every) for s in sets}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    for name, m in out.items():
        print(f"{name} ({m['questions']} questions, embedder={args.embedder}):")
        print(f"  context({args.budget}): recall {m['ctx_recall']:.3f}, "
              f"{m['ctx_items']:.1f} items, {m['ctx_tokens']:.0f} tokens, "
              f"empty {m['empty']:.3f}, p95 {m['ctx_ms_p95']} ms")  # fmt: skip
        print(f"  retrieve(k=10): recall {m['ret_recall']:.3f}, {m['ret_items']:.1f} items, "
              f"{m['ret_tokens']:.0f} tokens")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
