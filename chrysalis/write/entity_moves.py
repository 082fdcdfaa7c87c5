"""Moving extracted entities to new ids. An entity's id is its name keyed with the memory's
graph key (`graph.EntityNames`); when the key changes (a sync key or a remote arrives, or the
data dir's own key is rotated after a forget, DESIGN §14), every derived node moves to its id
under the new key, and every fact naming it to the same fact between the new ends.

The moves are ordinary ops (a put at the new id, a remove of the old), deterministic for a
given key, so replicas moving at the same time converge.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chrysalis.core import crdt
from chrysalis.core.graph_ids import edge_id
from chrysalis.store.env import WriteContext
from chrysalis.store.keys import unpack

__all__ = ["move_entities", "record_scalars"]


# ``Writer.put_op``: (ctx, collection, id, record, scalars, sets)
PutOp = Callable[[WriteContext, str, str, crdt.Record, dict[str, Any], dict[str, list[str]]], None]


def record_scalars(collection: str, record: crdt.Record) -> dict[str, Any]:
    """A node's or an edge's scalar fields as its put op carries them."""
    fields = (
        ("type", "name", "derived_by")
        if collection == "node"
        else ("source", "target", "predicate", "weight", "valid_at", "invalid_at", "derived_by")
    )
    out = {f: crdt.field_value(record, f) for f in fields}
    out["metadata"] = crdt.field_value(record, "metadata", {})
    if collection == "edge" and out["weight"] is None:
        out["weight"] = 1.0
    return out


def move_entities(
    ctx: WriteContext,
    id_of: Callable[[str], str],
    put_op: PutOp,
    remove: Callable[[str, str, crdt.Record], None],
) -> None:
    """Move every present derived node whose id is not ``id_of`` its name (merging names,
    evidence and labels with a node already there), and every present edge naming a moved
    node to the same fact between the new ends; then ``remove`` the old ones. A person's node
    keeps the id they gave it."""
    moved: dict[str, tuple[str, crdt.Record]] = {}
    with ctx.txn.cursor(db=ctx.dbs["nodes"]) as cur:
        for k, v in cur:
            record = unpack(v)
            names = crdt.set_values(record, "names")
            if not names or not crdt.is_present(record):
                continue
            if crdt.field_value(record, "derived_by") is None:
                continue  # a person's node keeps the id they gave it
            want = id_of(sorted(names)[0])  # all its names share one normal form
            if want != k.decode():
                moved[k.decode()] = (want, record)
    if not moved:
        return
    for new, record in moved.values():
        there = ctx.get("nodes", new.encode())
        target = there or crdt.new_record()
        live = there is not None and crdt.is_present(there)
        scalars = record_scalars("node", there if live else record)
        sets = {
            field: sorted(
                set(crdt.set_values(record, field))
                | set(crdt.set_values(target, field) if live else ())
            )
            for field in ("names", "evidence", "labels")
        }
        put_op(ctx, "node", new, target, scalars, sets)
    ends = {old: new for old, (new, _) in moved.items()}
    with ctx.txn.cursor(db=ctx.dbs["edges"]) as cur:
        facts = [(k.decode(), unpack(v)) for k, v in cur]
    for eid, record in facts:
        source = crdt.field_value(record, "source")
        target_id = crdt.field_value(record, "target")
        if not crdt.is_present(record) or not ({source, target_id} & ends.keys()):
            continue
        scalars = {**record_scalars("edge", record)}
        scalars["source"] = ends.get(source, source)
        scalars["target"] = ends.get(target_id, target_id)
        new_eid = edge_id(scalars["source"], scalars["predicate"], scalars["target"])
        there = ctx.get("edges", new_eid.encode())
        edge = there or crdt.new_record()
        evidence = set(crdt.set_values(record, "evidence"))
        if there is not None and crdt.is_present(there):
            evidence |= set(crdt.set_values(there, "evidence"))
        put_op(ctx, "edge", new_eid, edge, scalars, {"evidence": sorted(evidence)})
        remove("edge", eid, record)
    for old, (_, record) in moved.items():
        remove("node", old, record)
