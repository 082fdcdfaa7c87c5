"""Compaction: delete segments of ours (and of decommissioned ids) that every live replica
holds and a snapshot covers; never by age (docs/sync-protocol.md §11)."""

from __future__ import annotations

from typing import Any

from . import protocol
from .heartbeats import Heartbeats
from .layout import parse_seg_key, segments_of
from .session import Session


def compact(s: Session, heartbeats: Heartbeats) -> dict[str, Any]:
    """Delete what no replica needs any more; returns how many segments went."""
    floors = protocol.compaction_floors(heartbeats.read_all(), s.me)
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
