"""The bead views the add path keeps beside the op log: time, session, derived-from and blob
references. A bead's add puts its entries and a later winner or a forget takes them out, in the
same write transaction (`op_rules`, `erase`)."""

from __future__ import annotations

from typing import Any

from chrysalis.store.env import WriteContext
from chrysalis.store.keys import time_key


def index_bead(
    ctx: WriteContext, bead_id: str, winner: list[Any], data: dict[str, Any], put: bool
) -> None:
    """Add (``put``) or remove the bead's entries in the time, session and blob views."""
    hlc, replica, seq = winner
    txn, dbs = ctx.txn, ctx.dbs
    key = time_key(data["ts"], hlc, replica, seq)
    sess = data.get("session_id")
    blob = data.get("blob")
    tail = b"\0" + bead_id.encode()
    for evidence in data.get("derived_from") or ():
        if put:
            txn.put(evidence.encode() + tail, b"", db=dbs["bead_from"])
        else:
            txn.delete(evidence.encode() + tail, db=dbs["bead_from"])
    if put:
        txn.put(key, bead_id.encode(), db=dbs["bead_time"])
        if sess:
            txn.put(sess.encode() + b"\0" + key, bead_id.encode(), db=dbs["bead_sess"])
        if blob:
            txn.put(blob["sha256"].encode() + b"\0" + bead_id.encode(), b"", db=dbs["blobrefs"])
    else:
        txn.delete(key, db=dbs["bead_time"])
        if sess:
            txn.delete(sess.encode() + b"\0" + key, db=dbs["bead_sess"])
        if blob:
            txn.delete(blob["sha256"].encode() + b"\0" + bead_id.encode(), db=dbs["blobrefs"])
