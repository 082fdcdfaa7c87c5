"""Does automatic importance pick out evidence? LoCoMo dev turns, evidence against the rest.

    cd bench && ../.venv/bin/python importance_auc.py
    cd bench && ../.venv/bin/python importance_auc.py --quick   # one conversation (the suite's)

Each conversation is written to a fresh memory the way `locomo_eval` writes it (one batch, no
importance given), so every turn is judged by `chrysalis.search.novelty`. Prints the mean
importance of the turns some question cites as evidence and of the others, and the AUC: the
chance that an evidence turn is judged more important than another turn (0.5: no signal).
Exits 77 (skipped) when the dev set is not there.
"""

from __future__ import annotations

import argparse
import bisect
import json
import statistics
import sys
import tempfile
from pathlib import Path

from locomo_eval import DEFAULT_DATA, turns

from chrysalis.memory import Memory


def auc(positives: list[float], negatives: list[float]) -> float:
    ordered = sorted(negatives)
    wins = 0.0
    for x in positives:
        below, upto = bisect.bisect_left(ordered, x), bisect.bisect_right(ordered, x)
        wins += below + 0.5 * (upto - below)
    return wins / (len(positives) * len(ordered))


SKIPPED = 77  # the exit status that tells tests/test_benches.py its data is absent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one conversation (the suite's)")
    args = parser.parse_args(argv)
    if not Path(DEFAULT_DATA).exists():
        print(f"skipped: {DEFAULT_DATA} is not there (LoCoMo dev)", file=sys.stderr)
        return SKIPPED
    data = json.loads(Path(DEFAULT_DATA).read_text())
    if args.quick:
        data = data[:1]
    evidence_scores: list[float] = []
    other_scores: list[float] = []
    for sample in data:
        evidence = {
            turn
            for qa in sample["qa"]
            if qa.get("category") != 5
            for turn in qa.get("evidence") or ()
        }
        with tempfile.TemporaryDirectory() as tmp, Memory.open(Path(tmp) / "m", sync=False) as mem:
            for bead in mem.append_beads(turns(sample["conversation"])):
                (evidence_scores if bead.id in evidence else other_scores).append(bead.importance)
    print(f"evidence turns {len(evidence_scores)}: mean importance "
          f"{statistics.fmean(evidence_scores):.3f}")  # fmt: skip
    print(
        f"other turns    {len(other_scores)}: mean importance {statistics.fmean(other_scores):.3f}"
    )
    print(f"AUC            {auc(evidence_scores, other_scores):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
