"""The typed-mention timeline: which beads name a value of a typed attribute, and when.

The knowledge worker writes it with each bead's extraction (`chrysalis.write.knowledge`) in
the ``mentions`` database; a context reads it for a question about what holds, so that a
statement retrieval missed, or the relevance floor cut, is still found, and a bead that only
names a value (a friend's job, a trip, an ad) is not taken for the user's own statement.

    b"b" bead_id                     -> [ts, [[predicate, value, own], ...]]   per bead
    b"t" predicate \\0 ts_us bead_id  -> value     the ``own`` ones, in time order

It is local and derived: written by the replica that extracts a bead (its origin), taken
out when the bead is forgotten (`drop`, run by the worker's retraction), never replicated or
snapshotted; a memory whose beads were extracted elsewhere has facts but no timeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chrysalis.store.keys import pack, u64, unpack

__all__ = ["BEAD", "TIME", "drop", "latest", "of_beads", "put"]

BEAD = b"b"
TIME = b"t"
MAX_LATEST = 8  # timeline entries read back from a moment at most


def _bead_key(bead_id: str) -> bytes:
    return BEAD + bead_id.encode()


def _time_key(predicate: str, ts: float, bead_id: str) -> bytes:
    return TIME + predicate.encode() + b"\0" + u64(_micros(ts)) + bead_id.encode()


def _micros(ts: float) -> int:
    return max(0, round(ts * 1_000_000))


def put(txn: Any, db: Any, bead_id: str, ts: float, mentions: Sequence[Any]) -> None:
    """Record ``mentions`` (`chrysalis.extract.Mention`) of bead ``bead_id`` said at ``ts``,
    replacing what an earlier extraction of it recorded."""
    drop(txn, db, [bead_id])
    if not mentions:
        return
    rows = [[m.predicate, m.value, bool(m.own)] for m in mentions]
    txn.put(_bead_key(bead_id), pack([ts, rows]), db=db)
    for predicate, value, own in rows:
        if own:
            txn.put(_time_key(predicate, ts, bead_id), pack(value), db=db)


def drop(txn: Any, db: Any, bead_ids: Sequence[str]) -> None:
    """Take ``bead_ids`` out of the timeline (a forget). Idempotent."""
    for bead_id in bead_ids:
        raw = txn.get(_bead_key(bead_id), db=db)
        if raw is None:
            continue
        ts, rows = unpack(raw)
        for predicate, _, own in rows:
            if own:
                txn.delete(_time_key(predicate, ts, bead_id), db=db)
        txn.delete(_bead_key(bead_id), db=db)


def of_beads(txn: Any, db: Any, bead_ids: Sequence[str]) -> dict[str, list[tuple[str, str, bool]]]:
    """``bead id -> [(predicate, value, own), ...]`` for those of ``bead_ids`` that name a
    typed value (point reads)."""
    out: dict[str, list[tuple[str, str, bool]]] = {}
    for bead_id in bead_ids:
        raw = txn.get(_bead_key(bead_id), db=db)
        if raw is not None:
            out[bead_id] = [(p, v, bool(o)) for p, v, o in unpack(raw)[1]]
    return out


def latest(
    txn: Any, db: Any, predicate: str, at: float, n: int = 1
) -> list[tuple[float, str, str]]:
    """The ``n`` (at most `MAX_LATEST`) latest ``own`` mentions of ``predicate`` said at or
    before ``at``, latest first: ``(ts, bead id, value)``. One cursor walk back from ``at``."""
    prefix = TIME + predicate.encode() + b"\0"
    out: list[tuple[float, str, str]] = []
    with txn.cursor(db=db) as cur:
        # The first key past ``at`` (or past the predicate's keys), then step back.
        found = cur.prev() if cur.set_range(prefix + u64(_micros(at) + 1)) else cur.last()
        while found and len(out) < min(n, MAX_LATEST):
            key = cur.key()
            if not key.startswith(prefix):
                break
            rest = key[len(prefix) :]
            ts = int.from_bytes(rest[:8], "big") / 1_000_000
            out.append((ts, rest[8:].decode(), unpack(cur.value())))
            found = cur.prev()
    return out
