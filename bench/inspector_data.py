"""A memory the size the inspector must stay readable and fast at, built through the library
in a few commits (not one HTTP call per bead): ``beads`` beads over about six months in
sessions of a few dozen turns, some in Markdown, some chunks of ingested files with their
lines; and a knowledge graph of ``nodes`` entities in teams (people, projects, places, tools)
with facts between them, each citing the bead it came from, some of them ended.

Used by bench/inspector_bench.py and tests/test_inspector_scale.py. Deterministic for a seed.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from chrysalis import Memory
from chrysalis.extract import Entity, Extraction, Fact

DAY = 86_400.0
FIRST = ["Ana", "Bram", "Chidi", "Dora", "Emeka", "Freya", "Goran", "Hana", "Ivo", "Jun",
         "Kasia", "Lior", "Mina", "Nils", "Oona", "Pavel", "Quinn", "Rosa", "Sami", "Tove",
         "Uma", "Viktor", "Wren", "Xiu", "Yara", "Zeno"]  # fmt: skip
LAST = ["Abara", "Brandt", "Castillo", "Dahl", "Eze", "Fischer", "Grieg", "Hoang", "Ibsen",
        "Jovanovic", "Kowal", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov", "Quist",
        "Rossi", "Silva", "Tanaka"]  # fmt: skip
PLACES = ["Lisbon", "Tromsø", "Lagos", "Osaka", "Porto", "Gdańsk", "Quito", "Bergen", "Hanoi",
          "Tbilisi", "Cork", "Lyon", "Accra", "Busan", "Turku", "Split"]  # fmt: skip
WORDS = ["heron", "quartz", "lantern", "cobalt", "meadow", "falcon", "juniper", "ember",
         "harbour", "saffron", "glacier", "willow", "orbit", "tundra", "cinder",
         "maple"]  # fmt: skip
TOOLS = ["Postgres", "Redis", "Terraform", "Kafka", "Grafana", "Nginx", "SQLite", "Airflow",
         "Vault", "Prometheus", "Celery", "Ansible"]  # fmt: skip
PREDICATES = ["works on", "reports to", "lives in", "maintains", "reviewed", "met", "uses",
              "depends on", "owns", "mentors"]  # fmt: skip


def _markdown(rng: random.Random, who: str, project: str, tool: str) -> str:
    """A turn written in Markdown, as an assistant or a note-taker would."""
    shape = rng.randrange(4)
    if shape == 0:
        return (
            f"## Plan for {project}\n\n- move the **{tool}** config into the repo\n"
            f"- ask {who} to review the `deploy.sh` change\n- see "
            f"[the runbook](https://example.org/{project.lower().replace(' ', '-')})\n"
        )
    if shape == 1:
        return (
            f"{who} said the *{tool}* upgrade is done.\n\n```\n{tool.lower()} --version\n"
            f"# 4.{rng.randrange(20)}.{rng.randrange(9)}\n```\n"
        )
    if shape == 2:
        return f"> {who}: the {project} demo is on Thursday\n\n1. slides\n2. a dry run first\n"
    return f"Notes on **{project}**: `{tool}` stays; {who} owns the migration."


def _turn(rng: random.Random, who: str, project: str, place: str, tool: str) -> str:
    forms = [
        f"{who} moved the {project} standup to ten, because of the {place} office hours",
        f"we agreed that {project} keeps {tool} until the audit is over",
        f"{who} is flying to {place} next week for the {project} workshop",
        f"remind me to send {who} the {tool} credentials checklist (no secrets in chat)",
        f"the {project} budget doubled after the review with {who}",
        f"{who} prefers tea to coffee and hates morning meetings",
    ]
    return rng.choice(forms)


def build(path: Path, beads: int = 10_000, nodes: int = 5_000, seed: int = 7) -> dict[str, Any]:
    """Fill a fresh memory at ``path``; returns what it wrote (counts and a few ids)."""
    rng = random.Random(seed)
    teams = max(1, nodes // 40)
    names: list[tuple[str, str, int]] = []  # (name, type, team)
    seen: set[str] = set()
    while len(names) < nodes:
        team = len(names) % teams
        kind = rng.choices(["person", "thing", "place", "org"], [6, 2, 1, 1])[0]
        if kind == "person":
            name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
            if name in seen:
                name += f" {len(names)}"
        elif kind == "thing":
            name = f"Project {rng.choice(WORDS).title()} {len(names)}"
        elif kind == "place":
            name = f"{rng.choice(PLACES)} office {len(names)}"
        else:
            name = f"{rng.choice(TOOLS)} guild {len(names)}"
        seen.add(name)
        names.append((name, kind, team))
    by_team: dict[int, list[tuple[str, str, int]]] = {}
    for n in names:
        by_team.setdefault(n[2], []).append(n)

    now = 1_760_000_000.0
    start = now - 180 * DAY
    rows: list[dict[str, Any]] = []
    session, left, ts = 0, 0, start
    for i in range(beads):
        if left == 0:
            session, left = session + 1, rng.randrange(10, 60)
            ts += rng.uniform(0.2, 2.0) * DAY * 180 / max(1, beads / 35)
        left -= 1
        ts += rng.uniform(20, 400)
        team = by_team[rng.randrange(teams)]
        who, project, place = rng.choice(team)[0], rng.choice(team)[0], rng.choice(PLACES)
        tool = rng.choice(TOOLS)
        row: dict[str, Any] = {
            "id": f"b{i:05d}", "ts": ts, "session_id": f"s{session:04d}",
            "role": rng.choice(["user", "assistant"]),
        }  # fmt: skip
        if i % 9 == 0:
            row["content"] = _markdown(rng, who, project, tool)
        elif i % 13 == 0:
            first = rng.randrange(1, 400)
            row.update(
                role="tool", source=f"/home/me/notes/{project.split()[0].lower()}.md",
                span_refs=[{"path": f"/home/me/notes/{project.split()[0].lower()}.md",
                            "start_line": first, "end_line": first + rng.randrange(0, 30)}],
                content=f"# {project}\n\n{_turn(rng, who, project, place, tool)}\n",
            )  # fmt: skip
        else:
            row["content"] = _turn(rng, who, project, place, tool)
        rows.append(row)

    with Memory.open(path, sync=False, embedder="deterministic", extractor="none") as m:
        for k in range(0, len(rows), 2_000):
            m.append_beads(rows[k : k + 2_000])
        times = {r["id"]: r["ts"] for r in rows}
        extractions = []
        for i, (name, kind, team) in enumerate(names):
            bead = rows[rng.randrange(len(rows))]["id"]
            mates = by_team[team]
            facts = []
            for _ in range(rng.choice([1, 1, 2])):
                other = rng.choice(mates) if rng.random() < 0.9 else rng.choice(names)
                if other[0] == name:
                    continue
                ended = rng.random() < 0.1
                facts.append(
                    Fact(
                        name, rng.choice(PREDICATES), other[0], kind, other[1],
                        valid_at=times[bead] - 30 * DAY if ended else None,
                        invalid_at=times[bead] - DAY if ended else None,
                    )
                )  # fmt: skip
            extractions.append(Extraction(bead, (Entity(name, kind),), tuple(facts)))
            if len(extractions) == 1_000 or i == len(names) - 1:
                m.knowledge_writer.learn(extractions, times, "rules/1")
                extractions = []
        m.wait_indexed(timeout=600)
        stats = m.stats()
    return {"beads": beads, "nodes": nodes, "stats": stats, "first": rows[0]["id"],
            "last": rows[-1]["id"]}  # fmt: skip


if __name__ == "__main__":
    import argparse
    import shutil
    import tempfile
    import time

    ap = argparse.ArgumentParser(description="Build an inspector-sized memory and say how long.")
    ap.add_argument("beads", type=int, nargs="?", default=10_000)
    ap.add_argument("nodes", type=int, nargs="?", default=5_000)
    ap.add_argument("--quick", action="store_true", help="200 beads and 100 entities")
    args = ap.parse_args()
    beads, nodes = (200, 100) if args.quick else (args.beads, args.nodes)
    where = Path(tempfile.mkdtemp())
    try:
        t0 = time.perf_counter()
        out = build(where / "m", beads, nodes)
        print(out, f"{time.perf_counter() - t0:.1f} s")
    finally:
        shutil.rmtree(where, ignore_errors=True)
