"""Compaction: delete segments of ours (and of decommissioned ids) that every live replica
holds and a snapshot covers; never by age (docs/sync-protocol.md §11).

Nothing a heartbeat claims is taken alone: the snapshot that covers what is deleted is read
back and verified here, a heartbeat that claims more of our ops than we ever wrote gates
compaction as if it held none, and an unreadable heartbeat stops compaction (its replica may
be live)."""

from __future__ import annotations

import logging
from typing import Any

from chrysalis.core.errors import SegmentError, SyncKeyError
from chrysalis.remotes import RemoteNotFound
from chrysalis.sync import protocol, snapshots
from chrysalis.sync.heartbeats import Heartbeats
from chrysalis.sync.layout import heartbeat_key, parse_seg_key, segments_of
from chrysalis.sync.session import Session

log = logging.getLogger(__name__)


def compact(s: Session, heartbeats: Heartbeats) -> dict[str, Any]:
    """Delete what no replica needs any more; returns how many segments went."""
    hbs = heartbeats.read_all()
    if heartbeats.unreadable:
        return {"deleted": 0, "why": f"unreadable heartbeats: {', '.join(heartbeats.unreadable)}"}
    written = s.local.last_seqs([s.me])[s.me]
    for r in protocol.implausible_claims(hbs, s.me, written):
        s.health.tampered[heartbeat_key(r)] = (
            f"claims {r} applied {hbs[r]['vv'][s.me]} of our ops, but we wrote {written}: "
            "not written by that replica; it gates compaction as if it held none of ours"
        )
        log.warning("%s", s.health.tampered[heartbeat_key(r)])
        hbs[r] = {**hbs[r], "vv": {}}
    floors = protocol.compaction_floors(hbs, s.me, covered=_verified_cover(s, hbs))
    if floors is None:
        return {"deleted": 0, "why": "no heartbeat of ours yet"}
    deleted = 0
    for replica, floor in floors.items():
        listed = s.remote.list(segments_of(replica))
        segs = sorted((p[1], p[2]) for o in listed if (p := parse_seg_key(o.key)))
        for key in protocol.compactable(segs, floor):
            s.remote.delete(key)
            deleted += 1
    return {"deleted": deleted}


def _verified_cover(s: Session, hbs: dict[str, dict[str, Any]]) -> dict[str, int]:
    """The version vector of the most complete announced snapshot that reads back whole (it
    decodes, authenticates with a key, and its state matches its digest); {} if none does."""
    for info in protocol.announced_snapshots(hbs):
        try:
            payload = snapshots.read_verified(s, info["key"])
            return {str(r): int(seq) for r, seq in payload["vv"].items()}
        except (SegmentError, SyncKeyError, RemoteNotFound, KeyError, TypeError, ValueError) as exc:
            snapshots.unreadable(s, str(info.get("key")), exc)
    return {}
