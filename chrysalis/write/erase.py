"""Forget: erasing a bead's content from this data dir, wherever the core put it.

A ``bead.forget`` op (made here or pulled) and an erased copy of an op (pulled from a replica
that forgot first) both end in `erase_bead`, which in the one write transaction:

- erases the payload of every add op of the bead in the log (they keep id and ts:
  `keys.erased_data`), and of every embedding op of it (`keys.erased_embedding`);
- takes the bead out of the time, session and blob-reference views, and marks it forgotten
  (ids are never reused);
- marks its vectors erased in the ``emb`` view;
- drops decoded copies from the read cache, and after the commit deletes its blob file unless
  another live bead uses the same content.

What lies outside LMDB follows from the `events.Change.ERASED` event the commit carries: the
keyword and vector indexes delete the item (`search.indexer`), the mirrors take it out of Zep
(`mirrors`), and sync pushes the forget op and serves erased copies of the ops
(`keys.same_op` accepts them). docs/architecture.md draws the whole path.
"""

from __future__ import annotations

import functools
import time
from typing import Any

from chrysalis.core import crdt
from chrysalis.store import keys
from chrysalis.store.env import WriteContext
from chrysalis.store.keys import erased_data, erased_embedding, op_key, pack, unpack
from chrysalis.write.views import index_bead

ERASURES_KEY = b"m:erasures"  # in meta: how many transactions erased content


def retracted(record: crdt.Record) -> bool:
    """A derived record (an extractor's) that no longer exists: a forget retracted it."""
    return not crdt.is_present(record) and crdt.field_value(record, "derived_by") is not None


def erased_put(data: dict[str, Any]) -> dict[str, Any]:
    """What a retracted derived node's put keeps: its scalars (type, extractor) and dots,
    not the sets it added (the name, as written, and the evidence)."""
    return {**{k: v for k, v in data.items() if k != "add"}, "erased": True}


def erase_node_puts(ctx: WriteContext, record: crdt.Record) -> None:
    """Erase the log's copies of every put of a retracted derived node (idempotent)."""
    for d in sorted({*record["x"], *record.get("xp", ())}):
        erase_node_put(ctx, *crdt.parse_dot(d))


def erase_node_put(ctx: WriteContext, replica: str, seq: int) -> None:
    txn, ops, k = ctx.txn, ctx.dbs["ops"], op_key(replica, seq)
    raw = txn.get(k, db=ops)
    if raw is None:
        return
    logged = unpack(raw)
    if logged["kind"] != "node.put" or logged["data"].get("erased"):
        return
    note_erasure(ctx)
    logged["data"] = erased_put(logged["data"])
    txn.put(k, pack(logged), db=ops)
    txn.put(keys.SCRUB_OP + k, pack({}), db=ctx.dbs["scrub"], overwrite=False)


def note_erasure(ctx: WriteContext) -> int:
    """Count this transaction as one that erased content (once per transaction): the local
    scrub (`chrysalis.forget.scrub`) compacts LMDB until its count reaches this one. Durable with
    the erasure itself, so a crash before the scrub still leaves it due."""
    if not ctx.committed.erasure:
        meta = ctx.dbs["meta"]
        raw = ctx.txn.get(ERASURES_KEY, db=meta)
        ctx.committed.erasure = (0 if raw is None else unpack(raw)) + 1
        ctx.txn.put(ERASURES_KEY, pack(ctx.committed.erasure), db=meta)
    return ctx.committed.erasure


def forget_record(txn: Any, dbs: dict[str, Any], bead_id: str) -> dict[str, Any] | None:
    """What this replica erased of a forgotten bead, and when (for its receipt)."""
    raw = txn.get(bead_id.encode(), db=dbs["forgets"])
    return None if raw is None else dict(unpack(raw))


def _pushed_anywhere(txn: Any, dbs: dict[str, Any], replica: str) -> int:
    """The highest seq of ``replica`` any remote confirmed (`chrysalis.sync.local` keeps one
    cursor per remote, ``sync:FID:pushed:REPLICA``); 0 when none did."""
    prefix, suffix = b"m:sync:", f":pushed:{replica}".encode()
    best = 0
    with txn.cursor(db=dbs["meta"]) as cur:
        if cur.set_range(prefix):
            for k, v in cur:
                if not k.startswith(prefix):
                    break
                if k.endswith(suffix):
                    best = max(best, int(unpack(v)))
    return best


def note_forget_op(ctx: WriteContext, bead_id: str, op: dict[str, Any]) -> None:
    """Remember which op forgot the bead: replicas that applied it have forgotten it too."""
    record = forget_record(ctx.txn, ctx.dbs, bead_id) or {"erasure": 0, "at": time.time()}
    if not record.get("by"):
        record["by"] = [op["replica"], op["seq"]]
        ctx.txn.put(bead_id.encode(), pack(record), db=ctx.dbs["forgets"])


def erase_bead(ctx: WriteContext, bead_id: str) -> None:
    """Erase the bead's content from the log and the views (idempotent)."""
    txn, dbs, key = ctx.txn, ctx.dbs, bead_id.encode()
    raw = txn.get(key, db=dbs["beads"])
    entry = None if raw is None else unpack(raw)
    if entry == crdt.FORGOTTEN:
        return
    record: dict[str, Any] = {
        "erasure": note_erasure(ctx),
        "at": time.time(),
        "adds": [[r, s] for _h, r, s in entry or ()],
        "vectors": [],
        "blobs": [],
    }
    store = ctx.store
    blobs: set[str] = set()
    erased = [op_key(replica, seq) for _hlc, replica, seq in entry or ()]
    if erased:
        store.decoded.invalidate(erased)  # now, so no reader caches the content again...
        ctx.after_commit.append(lambda: store.decoded.invalidate(erased))  # ...nor before
    for i, (hlc, replica, seq) in enumerate(entry or ()):
        k = op_key(replica, seq)
        logged = unpack(txn.get(k, db=dbs["ops"]))
        data = logged["data"]
        if i == 0:  # the winner is the one in the views
            index_bead(ctx, bead_id, [hlc, replica, seq], data, put=False)
        if data.get("blob"):
            blobs.add(data["blob"]["sha256"])
        logged["data"] = erased_data(data)
        txn.put(k, pack(logged), db=dbs["ops"])
    txn.put(key, pack(crdt.FORGOTTEN), db=dbs["beads"])
    # Vectors are derived from the content: they go too, from the views and the log.
    emb = dbs["emb"]
    prefix = f"bead\0{bead_id}\0".encode()
    with txn.cursor(db=emb) as cur:
        doomed = []
        if cur.set_range(prefix):
            for k, v in cur:
                if not k.startswith(prefix):
                    break
                doomed.append((k, unpack(v)))
    for k, rec in doomed:
        for d in rec.get("dots", ()):
            record["vectors"].append(list(crdt.parse_dot(d)))
            ok = op_key(*crdt.parse_dot(d))
            logged = unpack(txn.get(ok, db=dbs["ops"]))
            if not logged["data"].get("erased"):
                logged["data"] = erased_embedding(logged["data"])
                txn.put(ok, pack(logged), db=dbs["ops"])
        txn.put(k, pack({"dots": rec.get("dots", []), "erased": True}), db=emb)
    record["blobs"] = sorted(blobs)
    me = ctx.store.replica_id
    adds = record["adds"]
    # Whether its content never left this laptop: every add is ours and above what any remote
    # confirmed. Then no other laptop can hold it (the receipt says so instead of "pending").
    record["unpushed"] = bool(adds) and all(
        r == me and int(s) > _pushed_anywhere(txn, dbs, me) for r, s in adds
    )
    txn.put(key, pack(record), db=dbs["forgets"])
    # The remote's to-do (sync/scrub.py): the ops whose copies there still hold the content,
    # and the blobs no live bead here uses any more.
    scrub = dbs["scrub"]
    for k in erased + [
        op_key(*crdt.parse_dot(d)) for _, rec in doomed for d in rec.get("dots", ())
    ]:
        txn.put(keys.SCRUB_OP + k, pack({}), db=scrub, overwrite=False)
    for sha in blobs:
        if not store.blob_in_use(txn, sha):
            txn.put(keys.SCRUB_BLOB + sha.encode(), pack({}), db=scrub, overwrite=False)
        ctx.after_commit.append(functools.partial(store.delete_blob_if_unused, sha))
