"""The merge rules of DESIGN §4 as pure functions over plain values. No I/O.

Every function here is commutative, associative and idempotent in the ops it folds in, so
replicas that applied the same ops hold the same state whatever the order they came in.

A *record* (KG node, KG edge, persona, skill) is a plain dict::

    {"p": {dot: hlc},                       # live add dots: present while non-empty
     "f": {field: [value, hlc, replica]},   # LWW registers, one per scalar field
     "s": {field: {element: {dot: hlc}}},   # add-wins sets: an element lives while it has a dot
     "x": [dot, ...],                       # dots a remove killed, record-wide
     "xe": {field: {element: [dot, ...]}},  # dots a put dropped from one element
     "xp": [dot, ...]}                      # presence dots a later put superseded

A dot is ``"replica:seq"``: the op that added. A remove lists the dots its writer observed, so
an add it did not see survives (add wins) and a later re-add, with a new dot, works. Killed
dots are remembered, so an add that arrives after the remove that saw it stays dead.

Beads are a grow-only set by id: the add with the smallest ``(hlc, replica, seq)`` is the one
every replica shows; ``forget`` turns the entry into `FORGOTTEN` for good.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Record = dict[str, Any]
Stamp = tuple[int, str]  # (hlc, replica): LWW order; ties only within one op
BeadDot = list[Any]  # [hlc, replica, seq]: bead order (a list: it round-trips msgpack)

FORGOTTEN = "forgotten"


def dot(replica: str, seq: int) -> str:
    return f"{replica}:{seq}"


def parse_dot(value: str) -> tuple[str, int]:
    replica, _, seq = value.rpartition(":")
    return replica, int(seq)


# ---- LWW ---------------------------------------------------------------------------------


def lww_wins(new: Stamp, old: Stamp) -> bool:
    """True when a write stamped ``new`` replaces one stamped ``old``."""
    return new > old


# ---- records: OR-set presence + LWW fields + add-wins sets -------------------------------


def new_record() -> Record:
    return {"p": {}, "f": {}, "s": {}, "x": [], "xe": {}}


def _kill(record: Record, dots: Iterable[str]) -> None:
    dead = set(record["x"])
    fresh = [d for d in dots if d not in dead]
    if not fresh:
        return
    dead.update(fresh)
    record["x"] = sorted(dead)
    for d in fresh:
        record["p"].pop(d, None)
    for field in list(record["s"]):
        elements = record["s"][field]
        for element in list(elements):
            live = elements[element]
            for d in fresh:
                live.pop(d, None)
            if not live:
                del elements[element]
        if not elements:
            del record["s"][field]


def apply_put(
    record: Record,
    *,
    op_dot: str,
    hlc: int,
    replica: str,
    set_fields: dict[str, Any],
    add: dict[str, list[str]],
    drop: dict[str, dict[str, list[str]]] | None = None,
    supersede: Iterable[str] = (),
) -> Record:
    """Fold a ``*.put`` op into ``record`` (mutated and returned).

    ``set_fields`` are LWW writes; ``add`` adds elements tagged with ``op_dot``; ``drop``
    kills, per element, the dots its writer observed (adds it did not see survive);
    ``supersede`` retires the presence dots its writer saw (this put's dot replaces them).
    """
    record.setdefault("xe", {})
    retired = set(supersede)
    if retired:
        record["xp"] = sorted(set(record.get("xp", ())) | retired)
        for d in retired:
            record["p"].pop(d, None)
    for name, elements in (drop or {}).items():
        for element, dots in elements.items():
            dead = record["xe"].setdefault(name, {}).setdefault(element, [])
            record["xe"][name][element] = sorted(set(dead) | set(dots))
            live = record["s"].get(name, {}).get(element)
            if live is not None:
                for d in dots:
                    live.pop(d, None)
                if not live:
                    del record["s"][name][element]
                    if not record["s"][name]:
                        del record["s"][name]
    alive = op_dot not in set(record["x"])
    if alive and op_dot not in set(record.get("xp", ())):
        record["p"][op_dot] = hlc
    fields = record["f"]
    for name, value in set_fields.items():
        old = fields.get(name)
        if old is None or lww_wins((hlc, replica), (old[1], old[2])):
            fields[name] = [value, hlc, replica]
    if alive:
        for name, values in add.items():
            dropped = record["xe"].get(name, {})
            for element in values:
                if op_dot not in dropped.get(element, ()):
                    record["s"].setdefault(name, {}).setdefault(element, {})[op_dot] = hlc
    return record


def apply_remove(record: Record, remove: Iterable[str]) -> Record:
    """Fold a ``*.remove`` op: the observed dots die; adds it did not observe survive."""
    _kill(record, remove)
    return record


def is_present(record: Record) -> bool:
    return bool(record["p"])


def observed_dots(record: Record) -> list[str]:
    """Every live dot: what a remove of the whole record must list."""
    dots = set(record["p"])
    for elements in record["s"].values():
        for live in elements.values():
            dots.update(live)
    return sorted(dots)


def set_values(record: Record, field: str) -> list[str]:
    """The live elements of a set field, in order of their first add, then by value."""
    elements = record["s"].get(field, {})
    return [e for _, e in sorted((min(live.values()), e) for e, live in elements.items())]


def set_diff(
    record: Record, field: str, wanted: Iterable[str]
) -> tuple[list[str], dict[str, list[str]]]:
    """What turns the set field into ``wanted``: (elements to add, {element: dots to drop})."""
    wanted_list = list(dict.fromkeys(wanted))
    elements = record["s"].get(field, {})
    to_add = [e for e in wanted_list if e not in elements]
    keep = set(wanted_list)
    to_drop = {e: sorted(live) for e, live in sorted(elements.items()) if e not in keep}
    return to_add, to_drop


def field_value(record: Record, field: str, default: Any = None) -> Any:
    entry = record["f"].get(field)
    return default if entry is None else entry[0]


def max_stamp(record: Record) -> int:
    """The highest HLC among the record's LWW fields (0 when none)."""
    return max((entry[1] for entry in record["f"].values()), default=0)


def canonical(value: Any) -> Any:
    """Sort every dict by key (and drop empty tombstone maps) so equal states pack equally."""
    if isinstance(value, dict):
        return {
            k: canonical(value[k])
            for k in sorted(value)
            if not (k in ("xe", "xp") and not value[k])
        }
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    return value


# ---- beads: grow-only set by id, forget erases -------------------------------------------


def bead_add(entry: list[BeadDot] | str | None, add: BeadDot) -> list[BeadDot] | str:
    """Fold a bead add into the entry for its id: the sorted adds, or `FORGOTTEN`."""
    if entry == FORGOTTEN:
        return FORGOTTEN
    dots: list[BeadDot] = [] if entry is None else [list(d) for d in entry]
    add = list(add)
    if add not in dots:
        dots.append(add)
        dots.sort()
    return dots


def bead_winner(entry: list[BeadDot]) -> BeadDot:
    """The add every replica shows: the smallest (hlc, replica, seq)."""
    return entry[0]


# ---- embeddings: by (item, model), LWW by (hlc, checksum, replica, seq) --------------------


def embedding_wins(new: tuple[int, str, str, int], old: tuple[int, str, str, int] | None) -> bool:
    """LWW by (hlc, checksum), ties (same millisecond, same vector) broken by the dot."""
    return old is None or new > old
