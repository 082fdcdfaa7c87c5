"""One-value facts end when a later one starts: the write side of `chrysalis.core.validity`.

On a *functional* predicate (one value at a time; which ones is the memory's one list,
``functional``, by default `validity.DEFAULT_FUNCTIONAL`) a fact with another object written
later gives the earlier fact its ``invalid_at``, as an op, so the end shows in the log, in the
inspector and in mirrors. Extracted facts (`chrysalis.write.knowledge`) and hand-written ones
(`chrysalis.write.writer.Writer.add_fact`) both go through `supersede`, so "Alice works_at Globex"
ends "Alice works_at Acme" whoever wrote either.

A fact takes part when its edge's metadata says ``functional`` (set at write time from the
list then in force): changing the list later neither ends nor revives old facts.

An end set here is marked as such in the ended fact's metadata: ``superseded_by`` names the
fact whose start it is, ``stated_end`` keeps the end it had before (when it had one). When
that later fact is removed (a forget retracts what its bead supported), `unsupersede` gives
the earlier fact its own end back and resolves the group again: a forgotten bead's fact
leaves no end, and no time of its own, on the facts it had ended.
"""

from __future__ import annotations

from typing import Any, Protocol

from chrysalis.core import crdt
from chrysalis.core.validity import Span, enders, resolve
from chrysalis.store.env import WriteContext
from chrysalis.write.entity_moves import record_scalars

__all__ = ["PutOp", "supersede", "unsupersede"]

SUPERSEDED_BY = "superseded_by"  # metadata: the fact whose start is this one's end
STATED_END = "stated_end"  # metadata: the end this fact had before it was superseded


class PutOp(Protocol):
    """`chrysalis.write.writer.Writer.put_op`: one put op on a record in the open write."""

    def __call__(
        self,
        ctx: WriteContext,
        collection: str,
        id: str,
        record: crdt.Record,
        scalars: dict[str, Any],
        sets: dict[str, list[str]],
    ) -> None: ...


def supersede(ctx: WriteContext, put_op: PutOp, source: str, predicate: str) -> list[str]:
    """Give each functional fact of (``source``, ``predicate``) the end a later fact with
    another object sets (`validity.resolve`), where its stored end differs; answers the ids
    of the edges given a new ``invalid_at``. Idempotent: a second call writes nothing."""
    group = _group(ctx, source, predicate)
    spans = [
        Span(
            eid,
            crdt.field_value(r, "target"),
            crdt.field_value(r, "valid_at"),
            crdt.field_value(r, "invalid_at"),
        )
        for eid, r in group.items()
    ]
    ends, by = resolve(spans), enders(spans)
    changed = []
    for eid, end in ends.items():
        record = group[eid]
        stored = crdt.field_value(record, "invalid_at")
        if end == stored:
            continue
        metadata = dict(crdt.field_value(record, "metadata", {}))
        if SUPERSEDED_BY not in metadata and stored is not None:
            metadata[STATED_END] = stored  # its own end, given back by `unsupersede`
        metadata[SUPERSEDED_BY] = by[eid]  # an end moves only ever earlier: to a later start
        scalars = {**record_scalars("edge", record), "invalid_at": end, "metadata": metadata}
        evidence = crdt.set_values(record, "evidence")
        put_op(ctx, "edge", eid, record, scalars, {"evidence": evidence})
        changed.append(eid)
    return changed


def unsupersede(
    ctx: WriteContext, put_op: PutOp, source: str, predicate: str, removed: set[str]
) -> list[str]:
    """After the facts ``removed`` were taken out of (``source``, ``predicate``)'s group,
    give each fact they had ended its own end back (``stated_end``, or none), then resolve
    the group again (`supersede`): the next fact that remains ends it, if any. Answers the
    ids of the edges written."""
    changed = []
    for eid, record in _group(ctx, source, predicate).items():
        metadata = dict(crdt.field_value(record, "metadata", {}))
        if metadata.get(SUPERSEDED_BY) not in removed:
            continue
        metadata.pop(SUPERSEDED_BY)
        end = metadata.pop(STATED_END, None)
        scalars = {**record_scalars("edge", record), "invalid_at": end, "metadata": metadata}
        evidence = crdt.set_values(record, "evidence")
        put_op(ctx, "edge", eid, record, scalars, {"evidence": evidence})
        changed.append(eid)
    if changed:
        changed += [e for e in supersede(ctx, put_op, source, predicate) if e not in changed]
    return changed


def _group(ctx: WriteContext, source: str, predicate: str) -> dict[str, crdt.Record]:
    """The present functional facts of (``source``, ``predicate``), by id."""
    group: dict[str, crdt.Record] = {}
    prefix = source.encode() + b"\0"
    with ctx.txn.cursor(db=ctx.dbs["adj"]) as cur:
        if cur.set_range(prefix):
            for k, v in cur:
                if not k.startswith(prefix):
                    break
                if v != b"o":
                    continue
                eid = k[len(prefix) :].decode()
                record = ctx.get("edges", eid.encode())
                if (
                    record is not None
                    and crdt.is_present(record)
                    and crdt.field_value(record, "predicate") == predicate
                    and crdt.field_value(record, "metadata", {}).get("functional")
                ):
                    group[eid] = record
    return group
