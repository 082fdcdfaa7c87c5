"""One-value facts end when a later one starts: the write side of `chrysalis.core.validity`.

On a *functional* predicate (one value at a time; which ones is the memory's one list,
``functional``, by default `validity.DEFAULT_FUNCTIONAL`) a fact with another object written
later gives the earlier fact its ``invalid_at``, as an op, so the end shows in the log, in the
inspector and in mirrors. Extracted facts (`chrysalis.write.knowledge`) and hand-written ones
(`chrysalis.write.writer.Writer.add_fact`) both go through `supersede`, so "Alice works_at Globex"
ends "Alice works_at Acme" whoever wrote either.

A fact takes part when its edge's metadata says ``functional`` (set at write time from the
list then in force): changing the list later neither ends nor revives old facts.
"""

from __future__ import annotations

from typing import Any, Protocol

from chrysalis.core import crdt
from chrysalis.core.validity import Span, resolve
from chrysalis.store.env import WriteContext
from chrysalis.write.entity_moves import record_scalars

__all__ = ["PutOp", "supersede"]


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
    ends = resolve(
        Span(
            eid,
            crdt.field_value(r, "target"),
            crdt.field_value(r, "valid_at"),
            crdt.field_value(r, "invalid_at"),
        )
        for eid, r in group.items()
    )
    changed = []
    for eid, end in ends.items():
        record = group[eid]
        if end == crdt.field_value(record, "invalid_at"):
            continue
        scalars = {**record_scalars("edge", record), "invalid_at": end}
        evidence = crdt.set_values(record, "evidence")
        put_op(ctx, "edge", eid, record, scalars, {"evidence": evidence})
        changed.append(eid)
    return changed
