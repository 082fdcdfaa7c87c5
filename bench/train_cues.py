"""Train the learned second opinion on attribute wording (`chrysalis.extract.learned`).

Examples come from the families of wordings in `bench/changing_facts.py` that the rules were
built from (`TRAIN`): each statement of a change, its value found by the product's own value
finders (`chrysalis.extract.values`), is a positive for its attribute; every value of a type
in the everyday chatter (a friend's home, a trip, a drink tried once), and a statement's
other values (a first guess corrected), is a negative. The families kept out of the rules'
making (`KEPT_OUT`) are never read here: they measure it.

    .venv/bin/python bench/train_cues.py             # leave-one-family-out figures
    .venv/bin/python bench/train_cues.py --write     # and write chrysalis/extract/learned_cues.json
    .venv/bin/python bench/train_cues.py --quick     # two families left out, small (the suite)

Each attribute's threshold is picked the same way (`thresholds`): the lowest score at which
chatter of the family left out is taken for a statement at most 2 % of the time.

Per attribute a logistic regression (numpy, full-batch gradient descent, L2), balanced so
that statements and chatter weigh the same; a feature must occur in at least `MIN_COUNT`
examples. Deterministic for a given numpy.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parent.parent), str(Path(__file__).resolve().parent)]

import changing_facts as cf  # noqa: E402

from chrysalis.extract import learned  # noqa: E402
from chrysalis.extract.mood import Reading  # noqa: E402
from chrysalis.extract.typed import addressed  # noqa: E402
from chrysalis.extract.values import _values  # noqa: E402

# The families the rules were read from, and those nobody tuning the product has read.
TRAIN = ["old", "new", "held", "held2", "held3", "held4", "held5", "held6", "held7", "held9",
         "held11", "held12", "held13", "held15", "held16", "held17", "held18", "held21",
         "held22"]  # fmt: skip
KEPT_OUT = ["held8", "held10", "held14", "held19", "held20"]
ATTRS = {"home": "lives_in", "employer": "works_at", "drink": "drinks", "car": "drives",
         "partner": "partner"}  # fmt: skip
FILL = {"city": "home", "org": "employer", "drink": "drink", "car": "car", "partner": "partner"}
MIN_COUNT = 2
OUT = Path(__file__).resolve().parent.parent / "chrysalis" / "extract" / "learned_cues.json"

Example = tuple[str, frozenset[str], int]  # (predicate, features, label)


def _family(name: str) -> tuple[dict[str, list[str]], list[str]]:
    if name == "old":
        return cf.SAY, cf.CHATTER
    if name == "new":
        return cf.SAY_NEW, cf.CHATTER_NEW
    say, _, _, chatter = cf.HELD_OUT[name]
    return say, chatter


def _label(text: str, positive: dict[str, str]) -> list[Example]:
    """Every value of each type the product finds in ``text``: positive when it is the
    statement's value of that attribute (``positive``: predicate -> value), else negative."""
    assistant = text.startswith("A: ")
    if assistant:
        text = addressed(text[3:])
    reading = Reading(text)
    out: list[Example] = []
    for start, end in reading.sentences():
        sentence = reading.plain[start:end]
        for pred in ATTRS.values():
            for v in _values(pred, sentence):
                label = int(positive.get(pred, "").lower() == v.text.lower())
                out.append((pred, frozenset(learned.features(sentence, v.start, v.end)), label))
    return out


def examples(families: list[str], rng: random.Random, n: int) -> list[Example]:
    out: list[Example] = []
    for name in families:
        say, chatter = _family(name)
        for attr, templates in say.items():
            pool = cf.POOLS[attr]
            for template in templates:
                for _ in range(n):
                    x, y = rng.sample(pool, 2)
                    text = template.format(x=x, y=y, xl=x.lower(), d="2025-03-14")
                    out += _label(text, {ATTRS[attr]: x})
        for line in chatter:
            for _ in range(n):
                fill = {k: rng.choice(cf.POOLS[a]) for k, a in FILL.items()}
                fill |= {k + "l": v.lower() for k, v in list(fill.items())}
                out += _label(line.format(**fill), {})
    return out


def train(data: list[Example], epochs: int = 400) -> dict[str, Any]:
    """Per predicate, a balanced L2 logistic regression over the features seen `MIN_COUNT`
    times; returns the model as `chrysalis.extract.learned` reads it."""
    counts = Counter(f for _, feats, _ in data for f in feats)
    vocab = sorted(f for f, c in counts.items() if c >= MIN_COUNT)
    index = {f: i for i, f in enumerate(vocab)}
    model: dict[str, Any] = {}
    for pred in ATTRS.values():
        rows = [(feats, label) for p, feats, label in data if p == pred]
        x = np.zeros((len(rows), len(vocab)), np.float64)
        y = np.array([label for _, label in rows], np.float64)
        for r, (feats, _) in enumerate(rows):
            for f in feats:
                if f in index:
                    x[r, index[f]] = 1.0
        pos = max(y.mean(), 1e-3)
        weight = np.where(y == 1, 0.5 / pos, 0.5 / max(1 - pos, 1e-3))
        w = np.zeros(len(vocab))
        b = 0.0
        for _ in range(epochs):
            p = 1.0 / (1.0 + np.exp(-(x @ w + b)))
            g = (p - y) * weight
            w -= 0.5 * (x.T @ g / len(y) + 1e-3 * w)
            b -= 0.5 * float(g.mean())
        model[pred] = {
            "bias": round(b, 4),
            "weights": {
                f: round(float(v), 4) for f, v in zip(vocab, w, strict=True) if abs(v) >= 0.01
            },
        }
    return model


def score(model: dict[str, Any], pred: str, feats: frozenset[str]) -> float:
    m = model[pred]
    z = m["bias"] + sum(m["weights"].get(f, 0.0) for f in feats)
    return float(1.0 / (1.0 + np.exp(-z)))


# The scores an attribute's threshold is picked from, and the share of chatter values it may
# take for statements when each training family is left out in turn.
GRID = (0.8, 0.85, 0.9, 0.93, 0.95, 0.97, 0.98, 0.99)
MAX_CHATTER = 0.02


def left_out_scores(n: int, families: list[str]) -> list[tuple[str, str, float, int]]:
    """(family, predicate, score, label) of every example of each of ``families``, scored
    by a model trained on the other training families."""
    rows = []
    for name in families:
        model = train(examples([f for f in TRAIN if f != name], random.Random(1), n))
        for pred, feats, label in examples([name], random.Random(2), n):
            rows.append((name, pred, score(model, pred, feats), label))
    return rows


def thresholds(rows: list[tuple[str, str, float, int]]) -> dict[str, float | None]:
    """Per predicate, the lowest score of `GRID` at which the left-out families' chatter is
    taken for a statement at most `MAX_CHATTER` of the time (None: at none)."""
    out: dict[str, float | None] = {}
    for pred in ATTRS.values():
        chatter = [s for _, p, s, label in rows if p == pred and not label]
        out[pred] = next(
            (t for t in GRID if sum(s >= t for s in chatter) <= MAX_CHATTER * len(chatter)), None
        )
    return out


def figures(rows: list[tuple[str, str, float, int]], mins: dict[str, float | None]) -> dict:
    """Recall of statements and the share of chatter taken, at the thresholds ``mins``."""
    out: dict[str, dict[str, float]] = {}
    for key, pick in (("family", 0), ("predicate", 1)):
        for name in sorted({r[pick] for r in rows}):
            mine = [r for r in rows if r[pick] == name]
            took = [r[3] for r in mine if mins[r[1]] is not None and r[2] >= mins[r[1]]]
            pos = sum(r[3] for r in mine)
            out[f"{key} {name}"] = {
                "recall": round(sum(took) / max(1, pos), 3),
                "chatter_taken": round((len(took) - sum(took)) / max(1, len(mine) - pos), 3),
            }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two families left out, small")
    parser.add_argument("--write", action="store_true", help=f"write {OUT.name}")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.quick and args.write:
        parser.error("--write needs every family left out in turn: not with --quick")
    n = 1 if args.quick else 3
    rows = left_out_scores(n, TRAIN[-2:] if args.quick else TRAIN)
    mins = thresholds(rows)
    report: dict[str, Any] = {"thresholds": mins, "left_out": figures(rows, mins)}
    if args.write:
        model = train(examples(TRAIN, random.Random(1), n))
        for pred, m in model.items():
            m["min"] = mins[pred]
        digest = hashlib.sha256(json.dumps(model, sort_keys=True).encode()).hexdigest()[:12]
        OUT.write_text(
            json.dumps({"version": f"learned/{digest}", "trained_on": TRAIN,
                        "attributes": model}, sort_keys=True, indent=0) + "\n",
            "utf-8",
        )  # fmt: skip
        report["written"] = str(OUT)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print("learned cues: each training family left out in turn")
    print("  thresholds: " + ", ".join(f"{p} {t}" for p, t in mins.items()))
    for name, m in report["left_out"].items():
        print(f"  {name:18s} recall {m['recall']:.3f}  chatter taken {m['chatter_taken']:.3f}")
    if args.write:
        print(f"written: {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
