"""Export and import as JSON Lines: ``{"kind": ..., "item": {...}}`` per line.

The first line is a header (``{"kind": "header", "format": "chrysalis-export", "version": 1,
...}``); then the persona, skills, nodes, edges and beads, in that order (an edge's nodes come
before it). Import checks every line before it writes anything and leaves alone what is
already here, so importing the same file twice changes nothing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ValidationError

from chrysalis import Memory
from chrysalis.errors import Conflict, InvalidInput, NotFound, from_pydantic
from chrysalis.models import Bead, Edge, Node, Persona, Skill

FORMAT = "chrysalis-export"
FORMAT_VERSION = 1
KINDS: dict[str, type[BaseModel]] = {
    "persona": Persona,
    "skill": Skill,
    "node": Node,
    "edge": Edge,
    "bead": Bead,
}


def _line(kind: str, item: BaseModel) -> bytes:
    return b'{"kind":"%s","item":%s}\n' % (kind.encode(), item.model_dump_json().encode())


def export_lines(memory: Memory) -> Iterator[bytes]:
    header = {
        "kind": "header", "format": FORMAT, "version": FORMAT_VERSION,
        "replica_id": memory.replica_id, "exported_at": time.time(),
    }  # fmt: skip
    yield json.dumps(header).encode() + b"\n"
    yield _line("persona", memory.get_persona())
    for skill in memory.list_skills():
        yield _line("skill", skill)
    for node in memory.all_nodes():
        yield _line("node", node)
    for edge in memory.all_edges():
        yield _line("edge", edge)
    for bead in memory.all_beads():
        yield _line("bead", bead)


def parse_lines(body: bytes) -> list[tuple[str, Any]]:
    """Every line validated, or `InvalidInput` naming the first bad one."""
    items: list[tuple[str, Any]] = []
    for n, raw in enumerate(body.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise InvalidInput(f"line {n}: not JSON: {exc}") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("kind"), str):
            raise InvalidInput(f'line {n}: expected {{"kind": ..., "item": {{...}}}}')
        kind = obj["kind"]
        if kind == "header":
            if obj.get("format") != FORMAT or obj.get("version") != FORMAT_VERSION:
                raise InvalidInput(
                    f"line {n}: not a {FORMAT} version {FORMAT_VERSION} file "
                    f"(format {obj.get('format')!r}, version {obj.get('version')!r})"
                )
            continue
        if kind not in KINDS:
            raise InvalidInput(f"line {n}: unknown kind {kind!r}; known: {', '.join(KINDS)}")
        try:
            items.append((kind, KINDS[kind].model_validate(obj.get("item"))))
        except ValidationError as exc:
            err = from_pydantic(exc, kind)
            raise type(err)(f"line {n}: {err.message}", details=err.details) from None
    return items


def import_lines(memory: Memory, body: bytes) -> dict[str, Any]:
    """Apply export lines; returns counts ``added``/``unchanged`` per kind and ``forgotten``.

    A bead whose id exists here with other content raises `Conflict` before anything is
    written; a bead forgotten here stays forgotten.
    """
    items = parse_lines(body)
    added = dict.fromkeys(KINDS, 0)
    unchanged = dict.fromkeys(KINDS, 0)
    forgotten = 0
    new_beads: list[Bead] = []
    for kind, item in items:  # check beads first: they are the part that can conflict
        if kind != "bead":
            continue
        try:
            stored = memory.get_bead(item.id)
        except NotFound as exc:
            if "forgotten" in str(exc):
                forgotten += 1
            else:
                new_beads.append(item)
            continue
        if stored != item:
            raise Conflict(f"bead {item.id!r} exists here with other content; nothing imported")
        unchanged["bead"] += 1
    for kind, item in items:
        if kind == "bead":
            continue
        if _current(memory, kind, item) == item:
            unchanged[kind] += 1
            continue
        _put(memory, kind, item)
        added[kind] += 1
    if new_beads:
        memory.append_beads(new_beads)
        added["bead"] += len(new_beads)
    return {"added": added, "unchanged": unchanged, "forgotten": forgotten}


def _current(memory: Memory, kind: str, item: Any) -> BaseModel | None:
    try:
        if kind == "persona":
            return memory.get_persona()
        if kind == "skill":
            return memory.get_skill(item.id)
        if kind == "node":
            return memory.get_node(item.id)
        return memory.get_edge(item.id)
    except NotFound:
        return None


def _put(memory: Memory, kind: str, item: Any) -> None:
    if kind == "persona":
        memory.put_persona(item)
    elif kind == "skill":
        memory.put_skill(item)
    elif kind == "node":
        memory.add_node(
            item.id, item.type, name=item.name, labels=item.labels, metadata=item.metadata
        )
    else:
        memory.add_edge(
            item.source, item.target, item.predicate, id=item.id, weight=item.weight,
            evidence=item.evidence, valid_at=item.valid_at, invalid_at=item.invalid_at,
        )  # fmt: skip
