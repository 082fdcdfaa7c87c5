"""Export and import as JSON Lines: ``{"kind": ..., "item": {...}}`` per line.

The first line is a header (``{"kind": "header", "format": "chrysalis-export", "version": 1,
...}``); then the persona, skills, nodes, edges and beads, in that order (an edge's nodes come
before it). Import reads the input a line at a time, checks every line before it writes
anything, then writes what is new in one transaction (all or nothing, whatever the size); it
leaves alone what is already here, so importing the same file twice changes nothing.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from pydantic import BaseModel, ValidationError

from chrysalis import Memory
from chrysalis.core.errors import (
    ChrysalisError,
    Conflict,
    InvalidInput,
    NotFound,
    PayloadTooLarge,
    SecretRefused,
    from_pydantic,
)
from chrysalis.core.models import Bead, Edge, Node, Persona, Skill
from chrysalis.write.writer import gc_paused

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


MAX_LINE_BYTES = 64 * 1024 * 1024  # one item; a line longer than this is no export line


@dataclass
class Staged:
    """Every item of an import, validated, with the line it came from."""

    items: list[tuple[int, str, Any]] = field(default_factory=list)
    lines: int = 0


def parse_lines(source: bytes | IO[bytes]) -> Staged:
    """Every line read (one at a time) and validated, or `InvalidInput` naming the first bad
    one by its line number in the whole input."""
    stream = io.BytesIO(source) if isinstance(source, bytes) else source
    staged = Staged()
    n = 0
    while raw := stream.readline(MAX_LINE_BYTES + 1):
        n += 1
        if len(raw) > MAX_LINE_BYTES:
            raise PayloadTooLarge(f"line {n}: over {MAX_LINE_BYTES} bytes")
        if not raw.strip():
            continue
        item = _parse_line(n, raw)
        if item is not None:
            staged.items.append((n, *item))
    staged.lines = n
    return staged


def _parse_line(n: int, raw: bytes) -> tuple[str, Any] | None:
    try:
        obj = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        cut = "" if raw.endswith(b"\n") else " (the line ends without a newline: was the file cut?)"
        raise InvalidInput(f"line {n}: not JSON: {exc}{cut}") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("kind"), str):
        raise InvalidInput(f'line {n}: expected {{"kind": ..., "item": {{...}}}}')
    kind = obj["kind"]
    if kind == "header":
        if obj.get("format") != FORMAT or obj.get("version") != FORMAT_VERSION:
            raise InvalidInput(
                f"line {n}: not a {FORMAT} version {FORMAT_VERSION} file "
                f"(format {obj.get('format')!r}, version {obj.get('version')!r})"
            )
        return None
    if kind not in KINDS:
        raise InvalidInput(f"line {n}: unknown kind {kind!r}; known: {', '.join(KINDS)}")
    try:
        return kind, KINDS[kind].model_validate(obj.get("item"))
    except ValidationError as exc:
        err = from_pydantic(exc, kind)
        raise type(err)(f"line {n}: {err.message}", details=err.details) from None


def import_lines(memory: Memory, source: bytes | IO[bytes]) -> dict[str, Any]:
    """Apply export lines, all or nothing; returns counts ``added``/``unchanged`` per kind
    and ``forgotten``.

    Every line is read and validated first (`InvalidInput` names the first bad one by its
    line number), then what is new is written in one transaction: if anything fails (a bead
    whose id exists here with other content is a `Conflict`, an edge whose node is nowhere is
    `NotFound`, a full disk is `InsufficientStorage`), nothing is written. A bead forgotten
    here stays forgotten.

    Beads pass the memory's secrets policy first (``redacted`` counts the secrets replaced;
    under ``refuse`` one raises `SecretRefused` naming its line, and nothing is imported);
    a bead is compared with what is stored as it would be stored, so importing a file that
    holds a secret twice changes nothing. Nodes, edges, persona and skills are not scanned.
    """
    # Staging 200,000 items makes millions of small objects and no cycles: each GC pass
    # would rescan them all (measured: 40 % of the parse).
    with gc_paused():
        return _import(memory, parse_lines(source))


def _import(memory: Memory, staged: Staged) -> dict[str, Any]:
    added = dict.fromkeys(KINDS, 0)
    unchanged = dict.fromkeys(KINDS, 0)
    forgotten = redacted = 0
    new_beads: list[Bead] = []
    puts: list[tuple[int, str, Any]] = []
    for n, kind, item in staged.items:
        if kind == "bead":
            try:
                item, found = memory.writer.scan(item)
            except SecretRefused as exc:
                raise SecretRefused(f"line {n}: {exc.message}", details=exc.details) from None
            redacted += len(found)
            try:
                stored = memory.get_bead(item.id)
            except NotFound as exc:
                if "forgotten" in str(exc):
                    forgotten += 1
                else:
                    new_beads.append(item)
                continue
            if found:  # its blob ref, if any, is remade from the redacted text: not compared
                stored, item = (b.model_copy(update={"blob": None}) for b in (stored, item))
            if stored != item:
                raise Conflict(
                    f"line {n}: bead {item.id!r} exists here with other content; nothing imported"
                )
            unchanged["bead"] += 1
        elif _same(kind, _current(memory, kind, item), item):
            unchanged[kind] += 1
        else:
            puts.append((n, kind, item))
            added[kind] += 1

    def write(ctx: Any) -> None:  # the verbs below join this one transaction
        for n, kind, item in puts:
            try:
                _put(memory, kind, item)
            except ChrysalisError as exc:
                raise type(exc)(f"line {n}: {exc.message}; nothing imported") from None
        if new_beads:
            memory.append_beads(new_beads)

    if puts or new_beads:
        memory.store.write(write, atomic=True)
    added["bead"] = len(new_beads)
    return {"added": added, "unchanged": unchanged, "forgotten": forgotten, "redacted": redacted}


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


# What `_put` cannot write (the verbs take no such argument), left out of the comparison: a
# second import of the same file is then unchanged even when the knowledge worker derived
# these items here too (it keeps a person-written item's derived_by None).
UNWRITTEN = {"node": {"evidence", "derived_by"}, "edge": {"derived_by", "metadata"}}


def _same(kind: str, current: BaseModel | None, item: BaseModel) -> bool:
    if current is None or kind not in UNWRITTEN:
        return current == item
    skip = UNWRITTEN[kind]
    return current.model_dump(exclude=skip) == item.model_dump(exclude=skip)


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
