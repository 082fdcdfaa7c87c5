"""The graph key's rotation's cost (issue 28 C9): a memory without a sync key whose forgets
retract entities has its own graph key replaced at the next scrub, every live entity and the
facts naming one moved to their ids under the new key. This builds a memory whose rules
extractor finds N entities (and a fact for every tenth), forgets K beads that each were an
entity's only evidence (one scrub window), then runs the scrub: what the forgets and what
the one rotation added to the op log, and how long the rotation and the compaction took.

    .venv/bin/python bench/graph_rotate_bench.py [--entities 1000] [--forgets 10] [--json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from chrysalis import Memory

FIRST = [
    "Abel", "Bram", "Cato", "Dara", "Edda", "Finn", "Gero", "Hale", "Ivo", "Jory",
    "Kell", "Lior", "Mads", "Nell", "Odo", "Pim", "Quin", "Rune", "Sten", "Tova",
    "Ugo", "Vida", "Wren", "Xavi", "Yara", "Zeno", "Ansel", "Britt", "Corin", "Dagny",
    "Elio", "Fenna", "Gisli", "Hedda", "Ines", "Joris", "Kaja", "Lasse", "Mira", "Nils",
]  # fmt: skip
LAST = [
    "Aberg", "Brandt", "Castell", "Dorn", "Eklund", "Falk", "Grahn", "Holm", "Isberg",
    "Jarl", "Kvist", "Lind", "Moberg", "Norell", "Ost", "Palm", "Qvarn", "Rask", "Sund",
    "Tell", "Uhr", "Vik", "Wall", "Ygg", "Zorn",
]  # fmt: skip


def ops(mem: Memory) -> int:
    return sum(mem.version_vector().values())


def run(entities: int, forgets: int) -> dict[str, Any]:
    pairs = itertools.islice(itertools.product(FIRST, LAST), entities)
    names = [f"{first} {last}" for first, last in pairs]
    assert len(names) == entities, f"at most {len(FIRST) * len(LAST)} entities"
    with tempfile.TemporaryDirectory() as tmp:
        mem = Memory.open(Path(tmp) / "m", sync=False, extractor="rules", scrub_delay=3600)
        try:
            beads = []
            for i, name in enumerate(names):
                text = f"I work at {name}." if i % 10 == 0 else f"Yesterday {name} called."
                beads.append(mem.append_bead(text).id)
            assert mem.wait_learned(300)
            mem.scrubber.run()
            live = [n for n in mem.all_nodes() if n.derived_by is not None]
            edges = list(mem.all_edges())
            start = ops(mem)
            for bead_id in beads[1 : 1 + forgets]:  # each its entity's only evidence
                mem.forget(bead_id)
            assert mem.wait_learned(60)
            after_forgets = ops(mem)
            assert mem.knowledge_writer.rotation_due()
            t0 = time.perf_counter()
            mem.knowledge_writer.rotate()
            rotate_s = time.perf_counter() - t0
            after_rotation = ops(mem)
            t0 = time.perf_counter()
            mem.scrubber.run()
            scrub_s = time.perf_counter() - t0
            assert not mem.scrubber.due()
            left = [n for n in mem.all_nodes() if n.derived_by is not None]
            return {
                "entities": len(live),
                "facts": len(edges),
                "forgets": forgets,
                "ops_before": start,
                "ops_by_forgets": after_forgets - start,
                "ops_by_rotation": after_rotation - after_forgets,
                "ops_per_live_item": round(
                    (after_rotation - after_forgets) / (len(left) + len(list(mem.all_edges()))), 2
                ),
                "rotation_s": round(rotate_s, 3),
                "compaction_s": round(scrub_s, 3),
                "data_mdb_bytes": (Path(tmp) / "m" / "lmdb" / "data.mdb").stat().st_size,
            }
        finally:
            mem.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--entities", type=int, default=1000)
    p.add_argument("--forgets", type=int, default=10)
    p.add_argument("--json", action="store_true")
    p.add_argument("--quick", action="store_true", help="50 entities, 2 forgets (the suite)")
    a = p.parse_args()
    row = run(50, 2) if a.quick else run(a.entities, a.forgets)
    if a.json:
        json.dump(row, sys.stdout)
        print()
        return
    for k, v in row.items():
        print(f"{k:>18}  {v}")


if __name__ == "__main__":
    main()
