"""Are the rules' entities entities? Precision against hand labels, recall against hand lists.

The sample (fixed seeds, so the same every run): LoCoMo turns (named speakers, third-person
talk), LongMemEval turns (user and assistant), and this repository's own docs (README.md and
docs/*.md, chunked as `chrysalis ingest` chunks them). The rules extractor runs over each as
a bead, as the knowledge worker would run it.

- precision: of the distinct entities extracted from the sample that ``bench/data/
  entity_labels.tsv`` labels (``1``: an entity a person would call one; ``0``: junk), the
  share labelled 1. Entities the labels do not name are counted as ``unlabelled`` (a change
  to the rules or the docs makes new ones: label them).
- recall: over the turns ``bench/data/entity_recall.json`` lists (by id, with the entities a
  person finds in each, written by hand), the share of those entities extracted from that
  turn (case aside).
- with ``--ops``, the ops a fresh memory logs for an ingest of README.md and docs/ with the
  rules extractor on (nodes, edges and beads), as `chrysalis ingest docs/` would write them.

    .venv/bin/python bench/entity_precision.py [--quick] [--ops] [--json]
        [--show junk|missed|unlabelled]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from chrysalis.core.models import Bead
from chrysalis.extract.rules import RulesExtractor
from chrysalis.ingest.chunking import chunk, kind_of

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "eval"
LOCOMO = SHARED / "locomo" / "locomo-dev.json"
LME = SHARED / "longmemeval" / "lme-dev.json"
SKIPPED = 77  # the exit status that tells tests/test_benches.py its data is absent
LABELS = Path(__file__).resolve().parent / "data" / "entity_labels.tsv"
RECALL = Path(__file__).resolve().parent / "data" / "entity_recall.json"
# Sample sizes: (LoCoMo turns, LongMemEval user turns, assistant turns, doc chunks).
FULL = (300, 70, 8, 14)
QUICK = (80, 25, 3, 5)


def locomo_turns() -> Iterator[tuple[str, str, str | None, str]]:
    """(id, role, speaker, text) of every LoCoMo dev turn."""
    for sample in json.loads(LOCOMO.read_text()):
        conversation, n = sample["conversation"], 1
        while f"session_{n}" in conversation:
            for turn in conversation[f"session_{n}"]:
                tid = f"{sample['sample_id']}:{turn['dia_id']}"
                yield tid, "user", turn["speaker"], turn["text"]
            n += 1


def lme_turns() -> Iterator[tuple[str, str, str | None, str]]:
    seen: set[str] = set()
    for question in json.loads(LME.read_text()):
        for session in question["sessions"]:
            for turn in session["turns"]:
                if turn["id"] not in seen and turn["content"].strip():
                    seen.add(turn["id"])
                    yield turn["id"], turn["role"], None, turn["content"]


def doc_chunks() -> Iterator[tuple[str, str, str | None, str]]:
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text()
        for c in chunk(text, kind_of(path)):
            yield f"{path.relative_to(ROOT)}:{c.start_line}", "note", None, c.text


def sample(sizes: tuple[int, int, int, int]) -> list[tuple[str, str, str | None, str]]:
    """The turns and chunks the precision is measured on: seeded draws of `FULL`'s sizes, each
    cut to ``sizes`` (so the quick sample is part of the full one, and its labels serve)."""
    rng = random.Random(18)
    lme = list(lme_turns())
    parts = [
        rng.sample(list(locomo_turns()), FULL[0]),
        rng.sample([t for t in lme if t[1] == "user"], FULL[1]),
        rng.sample([t for t in lme if t[1] == "assistant"], FULL[2]),
        # By a hash of their text, not a draw: an edit elsewhere in the docs leaves these.
        sorted(doc_chunks(), key=lambda t: hashlib.blake2b(t[3].encode()).digest())[: FULL[3]],
    ]
    return [row for part, n in zip(parts, sizes, strict=True) for row in part[:n]]


def extract(rows: list[tuple[str, str, str | None, str]]) -> dict[str, list[tuple[str, str]]]:
    """Each row's id -> its entities (name, type)."""
    extractor = RulesExtractor()
    out = {}
    for tid, role, speaker, text in rows:
        bead = Bead(id="b", ts=1.0, role=role, content=text, source=speaker)  # type: ignore[arg-type]
        out[tid] = [(e.name, e.type) for e in extractor.extract_one(bead).entities]
    return out


def _part(row: tuple[str, str, str | None, str]) -> str:
    tid, role = row[0], row[1]
    if role == "note":
        return "docs"
    return "locomo" if tid.startswith("conv-") else f"lme {role}"


def read_labels() -> dict[str, int]:
    """name (lower case) -> 1 (an entity) or 0 (junk); ``#`` lines are comments."""
    labels: dict[str, int] = {}
    for line in LABELS.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        label, _, name = line.partition("\t")
        labels[name.strip().lower()] = int(label)
    return labels


def precision(found: dict[str, list[tuple[str, str]]], labels: dict[str, int]) -> dict[str, Any]:
    names = {name.lower(): (name, type) for ents in found.values() for name, type in ents}
    labelled = {n: labels[n] for n in names if n in labels}
    junk = sorted(names[n][0] for n, v in labelled.items() if v == 0)
    unlabelled = sorted(f"{names[n][1]}\t{names[n][0]}" for n in names if n not in labels)
    good = sum(labelled.values())
    return {
        "entities": len(names),
        "labelled": len(labelled),
        "precision": round(good / len(labelled), 3) if labelled else None,
        "junk": junk,
        "unlabelled": unlabelled,
    }


def recall() -> dict[str, Any]:
    wanted = json.loads(RECALL.read_text())
    turns = {t[0]: t for t in [*locomo_turns(), *lme_turns()] if t[0] in wanted}
    missing = sorted(set(wanted) - set(turns))
    if missing:
        raise SystemExit(f"recall turns not in the dev sets: {', '.join(missing)}")
    found = extract([turns[t] for t in wanted])
    listed = hit = 0
    missed = []
    for tid, names in wanted.items():
        got = {n.lower() for n, _ in found[tid]}
        for name in names:
            listed += 1
            if name.lower() in got:
                hit += 1
            else:
                missed.append(f"{tid}\t{name}")
    return {
        "turns": len(wanted),
        "listed": listed,
        "recall": round(hit / listed, 3) if listed else None,
        "missed": missed,
    }


def ops() -> dict[str, Any]:
    """Ops a fresh memory logs for README.md and docs/ ingested with the rules extractor."""
    from chrysalis import Memory
    from chrysalis.ingest.files import ingest_path

    with (
        tempfile.TemporaryDirectory(prefix="entity-ops-") as tmp,
        Memory.open(
            Path(tmp) / "m", sync=False, embedder=None, extractor="rules", summary_after=None
        ) as mem,
    ):
        for path in (ROOT / "README.md", ROOT / "docs"):
            ingest_path(mem, path)
        mem.wait_learned(timeout=600)
        stats = mem.stats()
    return {k: stats[k] for k in ("beads", "nodes", "edges", "ops")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller sample")
    parser.add_argument("--ops", action="store_true", help="also count a docs ingest's ops")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--show", choices=("junk", "missed", "unlabelled"), action="append")
    args = parser.parse_args(argv)
    missing = [str(path) for path in (LOCOMO, LME) if not path.is_file()]
    if missing:  # the dev sets live beside the clone (../shared), never in the repo
        print(f"skipped: the dev sets are not here: {', '.join(missing)}", file=sys.stderr)
        return SKIPPED
    rows = sample(QUICK if args.quick else FULL)
    found = extract(rows)
    labels = read_labels()
    out: dict[str, Any] = {"sample": len(rows), **precision(found, labels), **recall()}
    # Where the junk comes from: the same figure per part of the sample.
    kinds = {row[0]: _part(row) for row in rows}
    out["by_part"] = {
        part: {
            k: precision({t: e for t, e in found.items() if kinds[t] == part}, labels)[k]
            for k in ("entities", "precision")
        }
        for part in ("locomo", "lme user", "lme assistant", "docs")
    }
    if args.ops:
        out["ops"] = ops()
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print(
        f"sample {out['sample']} turns and chunks: {out['entities']} entities, "
        f"{out['labelled']} labelled, precision {out['precision']}, "
        f"{len(out['unlabelled'])} unlabelled"
    )
    print(
        "by part:",
        ", ".join(f"{k} {v['precision']} of {v['entities']}" for k, v in out["by_part"].items()),
    )
    print(f"recall over {out['turns']} turns: {out['recall']} of {out['listed']} listed")
    if "ops" in out:
        print("docs ingest:", ", ".join(f"{k} {v}" for k, v in out["ops"].items()))
    for what in args.show or ():
        print(f"-- {what}:", *out[what], sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
