"""The write side's rules: one per op kind (`RULES`), each applying an op to the views in the
open write transaction and returning the op as it is to be logged.

Local and remote ops take the same path: `local_op` makes this replica's next op and applies
it; `apply_remote` checks a batch of other replicas' ops, applies what is next in seq order
and parks what follows a gap in ``pending``. Every applied op is recorded in the commit's
`events.Committed`, which the store hands to its listeners once the commit is durable.
`tests/test_rules.py` fails when an op kind has no rule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chrysalis.core import crdt
from chrysalis.core.errors import DotConflict
from chrysalis.core.models import OpKind
from chrysalis.store import oplog
from chrysalis.store.env import WriteContext
from chrysalis.store.keys import (
    RECORD_DBS,
    emb_key,
    erased_data,
    erased_embedding,
    op_key,
    pack,
    record_key,
    same_op,
    unpack,
)
from chrysalis.store.oplog import version_vector
from chrysalis.write.erase import (
    erase_bead,
    erase_node_put,
    erase_node_puts,
    erased_put,
    note_erasure,
    note_forget_op,
    retracted,
)
from chrysalis.write.views import index_bead

Rule = Callable[[WriteContext, dict[str, Any]], dict[str, Any]]


@dataclass
class ApplyResult:
    """What `apply_remote` did with a batch of remote ops."""

    applied: int = 0
    duplicates: int = 0
    pending: int = 0


# ---- the rules -------------------------------------------------------------------------------


def bead_add(ctx: WriteContext, op: dict[str, Any]) -> dict[str, Any]:
    """Grow-only set by id; the earliest add (by its dot) is the one shown and indexed."""
    txn, bead_id, data = ctx.txn, op["target"], op["data"]
    key = bead_id.encode()
    raw = txn.get(key, db=ctx.dbs["beads"])
    entry = None if raw is None else unpack(raw)
    if data.get("erased"):
        # An erased add means a forget exists upstream: forget now, converge when it comes.
        erase_bead(ctx, bead_id)
        return op
    if entry == crdt.FORGOTTEN:
        return {**op, "data": erased_data(data)}
    add = [op["hlc"], op["replica"], op["seq"]]
    new = crdt.bead_add(entry, add)
    assert isinstance(new, list)
    old_winner = crdt.bead_winner(entry) if entry else None
    if crdt.bead_winner(new) != old_winner:
        if old_winner is not None:
            old_data = ctx.store.op_data(ctx.txn, old_winner[1], old_winner[2])
            index_bead(ctx, bead_id, old_winner, old_data, put=False)
        index_bead(ctx, bead_id, crdt.bead_winner(new), data, put=True)
    txn.put(key, pack(new), db=ctx.dbs["beads"])
    return op


def bead_forget(ctx: WriteContext, op: dict[str, Any]) -> dict[str, Any]:
    erase_bead(ctx, op["target"])
    note_forget_op(ctx, op["target"], op)
    return op


def embedding_put(ctx: WriteContext, op: dict[str, Any]) -> dict[str, Any]:
    """LWW per (item, model) by (hlc, checksum); a forgotten bead's vectors stay erased.

    The view record names the winning op (``dot``) and holds no vector: the vector is stored
    once, in that op, which the log keeps for sync anyway (`Reader.embedding_record` reads it
    from there; a 768-dim vector is an LMDB overflow page, so a second copy doubled the file).
    """
    txn, data, emb = ctx.txn, op["data"], ctx.dbs["emb"]
    kind, item = data["item_kind"], op["target"]
    if data.get("erased") and kind == "bead":
        erase_bead(ctx, item)  # an erased vector means its bead was forgotten upstream
    key = emb_key(kind, item, data["model"])
    raw = txn.get(key, db=emb)
    old = None if raw is None else unpack(raw)
    this = crdt.dot(op["replica"], op["seq"])
    dots = sorted({*(old or {}).get("dots", ()), this})  # every op, so forget finds them all
    forgotten = kind == "bead" and txn.get(item.encode(), db=ctx.dbs["beads"]) == pack(
        crdt.FORGOTTEN
    )
    if data.get("erased") or forgotten or (old is not None and old.get("erased")):
        txn.put(key, pack({"dots": dots, "erased": True}), db=emb)
        return {**op, "data": erased_embedding(data)}
    stamp = (op["hlc"], data["checksum"], op["replica"], op["seq"])
    if old is None or crdt.embedding_wins(
        stamp, (old["hlc"], old["checksum"], *crdt.parse_dot(old["dot"]))
    ):
        rec = {k: v for k, v in data.items() if k not in ("item_kind", "vector")}
        rec.update(hlc=op["hlc"], dot=this, dots=dots)
    else:
        rec = {**old, "dots": dots}
    txn.put(key, pack(crdt.canonical(rec)), db=emb)
    return op


def record_put(ctx: WriteContext, op: dict[str, Any]) -> dict[str, Any]:
    """Node, edge, persona, skill: LWW fields and add-wins sets (`crdt.apply_put`)."""
    collection = op["kind"].partition(".")[0]  # no OpKind built per op
    data = op["data"]
    set_fields = dict(data.get("set", {}))
    traits = set_fields.pop("traits", None) or {}
    for name, value in traits.items():
        set_fields[f"traits/{name}"] = value

    def put(record: crdt.Record) -> None:
        crdt.apply_put(
            record,
            op_dot=crdt.dot(op["replica"], op["seq"]),
            hlc=op["hlc"],
            replica=op["replica"],
            set_fields=set_fields,
            add={k: v for k, v in data.get("add", {}).items() if v},
            drop={k: v for k, v in data.get("drop", {}).items() if v},
            supersede=data.get("supersede", ()),
        )

    record = _update_record(ctx, collection, op["target"], put)
    if collection == "node" and retracted(record):  # it came after the remove that saw it
        erase_node_puts(ctx, record)
        return {**op, "data": erased_put(data)}
    return op


def record_remove(ctx: WriteContext, op: dict[str, Any]) -> dict[str, Any]:
    """An observed remove: the add dots it saw go; a concurrent add wins."""
    collection = op["kind"].partition(".")[0]  # no OpKind built per op
    remove = op["data"].get("remove", ())

    def drop(record: crdt.Record) -> None:
        crdt.apply_remove(record, remove)

    record = _update_record(ctx, collection, op["target"], drop)
    if collection == "node" and retracted(record):
        erase_node_puts(ctx, record)
    return op


RULES: dict[OpKind, Rule] = {
    OpKind.BEAD_ADD: bead_add,
    OpKind.BEAD_FORGET: bead_forget,
    OpKind.NODE_PUT: record_put,
    OpKind.NODE_REMOVE: record_remove,
    OpKind.EDGE_PUT: record_put,
    OpKind.EDGE_REMOVE: record_remove,
    OpKind.PERSONA_PUT: record_put,
    OpKind.SKILL_PUT: record_put,
    OpKind.SKILL_REMOVE: record_remove,
    OpKind.EMBEDDING_PUT: embedding_put,
}


def _update_record(
    ctx: WriteContext, collection: str, target: str, change: Callable[[crdt.Record], None]
) -> crdt.Record:
    txn, db = ctx.txn, ctx.dbs[RECORD_DBS[collection]]
    key = record_key(collection, target)
    raw = txn.get(key, db=db)
    record = crdt.new_record() if raw is None else unpack(raw)
    before = _endpoints(record) if collection == "edge" else None
    change(record)
    if collection == "edge":
        after = _endpoints(record)
        if after != before:
            _update_adjacency(ctx, target, before, after)
    txn.put(key, pack(crdt.canonical(record)), db=db)
    return record


def _endpoints(record: crdt.Record) -> tuple[str, str] | None:
    src, dst = crdt.field_value(record, "source"), crdt.field_value(record, "target")
    return None if src is None else (src, dst)


def _update_adjacency(
    ctx: WriteContext, edge_id: str, before: tuple[str, str] | None, after: tuple[str, str] | None
) -> None:
    txn, adj, eid = ctx.txn, ctx.dbs["adj"], edge_id.encode()
    if before:
        txn.delete(before[0].encode() + b"\0" + eid, db=adj)
        txn.delete(before[1].encode() + b"\0" + eid, db=adj)
    if after:
        txn.put(after[1].encode() + b"\0" + eid, b"i", db=adj)
        txn.put(after[0].encode() + b"\0" + eid, b"o", db=adj)  # a self-loop reads as "out"


# ---- applying ops ------------------------------------------------------------------------------


def apply(ctx: WriteContext, op: dict[str, Any], *, local: bool) -> dict[str, Any]:
    """Apply one op to the views by its kind's rule; returns the op as it is to be logged."""
    logged = RULES[op["kind"]](ctx, op)  # an OpKind is its str: no conversion per op
    ctx.committed.add(op, local)
    return logged


def local_op(
    ctx: WriteContext, kind: OpKind, target: str, data: dict[str, Any], *, hlc: int | None = None
) -> dict[str, Any]:
    """Make the next op of this replica, apply it and log it; returns the op."""
    store = ctx.store
    seq = store.seq + 1
    op = {
        "replica": store.replica_id,
        "seq": seq,
        "hlc": store.clock.now() if hlc is None else hlc,
        "kind": kind.value,
        "target": target,
        "data": data,
    }
    logged = apply(ctx, op, local=True)
    oplog.log(ctx.txn, ctx.dbs["ops"], op_key(store.replica_id, seq), pack(logged))
    store.seq = seq  # the version vector entry is written once, at the end of the batch
    return op


def apply_remote(ctx: WriteContext, ops: list[dict[str, Any]]) -> ApplyResult:
    """Apply validated remote ops: idempotent, any order; a gap waits in ``pending``.

    Raises `DotConflict` (before writing anything) when a dot we hold arrives with other
    content, or when ops claim to be ours beyond what we wrote.
    """
    txn, result, store = ctx.txn, ApplyResult(), ctx.store
    ops_db, pending_db = ctx.dbs["ops"], ctx.dbs["pending"]
    vv = version_vector(txn, ops_db)
    fresh: dict[tuple[str, int], dict[str, Any]] = {}
    erased_logged: list[dict[str, Any]] = []  # erased copies of ops we hold in full
    erased_pending: list[dict[str, Any]] = []
    for op in ops:  # check everything first: a conflict must leave state untouched
        replica, seq = op["replica"], op["seq"]
        k = op_key(replica, seq)
        logged = seq <= vv.get(replica, 0)
        if logged:
            stored = unpack(txn.get(k, db=ops_db))
        elif replica == store.replica_id:
            raise DotConflict(
                f"op {replica}:{seq} claims to be ours but we wrote only up to {store.seq}: "
                "another copy of this data dir is writing (cloned or restored?)"
            )
        else:
            raw = txn.get(k, db=pending_db)
            stored = fresh.get((replica, seq)) or (None if raw is None else unpack(raw))
        if stored is not None and not same_op(stored, op):
            raise DotConflict(
                f"op {replica}:{seq} arrived with content different from the one we hold: "
                f"two data dirs share replica id {replica} (cloned or restored?)"
            )
        if stored is None:
            fresh[(replica, seq)] = op
            continue
        result.duplicates += 1
        if op["data"].get("erased") and not stored["data"].get("erased"):
            # The copy we hold still has content a forget erased upstream: erase ours.
            if logged:
                erased_logged.append(op)
            elif (replica, seq) in fresh:
                fresh[(replica, seq)] = op
            else:
                erased_pending.append(op)
    for op in erased_pending:
        note_erasure(ctx)  # the content stays on the page this put frees
        txn.put(op_key(op["replica"], op["seq"]), pack(op), db=pending_db)
    for op in erased_logged:
        if op["kind"] == "node.put":  # a retracted node: its remove comes (or came) too
            erase_node_put(ctx, op["replica"], op["seq"])
        elif op["data"].get("item_kind", "bead") == "bead":  # an erased bead or bead vector
            erase_bead(ctx, op["target"])
    by_replica: dict[str, list[dict[str, Any]]] = {}
    for (replica, _seq), op in sorted(fresh.items()):
        by_replica.setdefault(replica, []).append(op)
    for replica, batch in by_replica.items():
        # Apply in seq order, taking the next op from this batch or from pending; what is
        # left after a gap waits in pending.
        seq, i = vv.get(replica, 0), 0
        while True:
            k = op_key(replica, seq + 1)
            if i < len(batch) and batch[i]["seq"] == seq + 1:
                op, i = batch[i], i + 1
            else:
                raw = txn.get(k, db=pending_db)
                if raw is None:
                    break
                op = unpack(raw)
                txn.delete(k, db=pending_db)
            store.clock.observe(op["hlc"])
            oplog.log(txn, ops_db, k, pack(apply(ctx, op, local=False)))
            seq += 1
            result.applied += 1
        for op in batch[i:]:
            if op["seq"] > seq:
                txn.put(op_key(replica, op["seq"]), pack(op), db=pending_db)
    result.pending = int(txn.stat(pending_db)["entries"])
    return result
