"""A forget receipt from the daemon: this data dir's places (`chrysalis.scrub`), then every
other replica and the remote (`chrysalis.sync`), then the mirror (`chrysalis.mirrors`).

Each source that cannot answer now (the remote unreachable, say) becomes an ``unknown``
place naming why, never a failed receipt: a receipt is most wanted when something is down.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from chrysalis import receipt, scrub
from chrysalis.errors import ChrysalisError
from chrysalis.receipt import ForgetReceipt, Place, State

if TYPE_CHECKING:
    from .state import Daemon


def forget_receipt(d: Daemon, bead_id: str) -> ForgetReceipt:
    memory = d.memory
    record = scrub.record_of(memory, bead_id)
    places = scrub.local_places(memory, bead_id, record)
    if d.sync is not None:
        try:
            heartbeats = d.sync.heartbeats()
            places += receipt.replica_places(
                record.get("by"), heartbeats, memory.replica_id, time.time()
            )
        except ChrysalisError as exc:
            places.append(
                Place(place="replica", name="other replicas", state="unknown",
                      why=f"their heartbeats cannot be read now: {exc}")
            )  # fmt: skip
        places += remote_places(d, record)
    if d.mirror is not None:
        state, why = d.mirror.forget_state(bead_id)
        places.append(
            Place.model_validate(
                {"place": "zep", "name": d.mirror.kind, "state": state, "why": why}
            )
        )
    return receipt.receipt(memory.replica_id, bead_id, record, places)


GONE_WHY = {
    "segments": "rewritten in erased form, or compacted away",
    "snapshots": "taken after the forget: it holds the erased form",
    "blobs": "deleted",
}
STATES: dict[str, State] = {"gone": "gone", "remains": "pending", "in use by a live bead": "in use"}


def remote_places(d: Daemon, record: Mapping[str, Any]) -> list[Place]:
    """The remote's segments, snapshots and blobs (`Sync.remote_places`) as places."""
    assert d.sync is not None
    ops = [(str(r), int(s)) for r, s in [*record.get("adds", ()), *record.get("vectors", ())]]
    by = record.get("by")
    found = d.sync.remote_places(
        ops, list(record.get("blobs", ())), (str(by[0]), int(by[1])) if by else None
    )
    places = []
    for group in ("segments", "snapshots", "blobs"):
        for key, where in sorted(found.get(group, {}).items()):
            state: State = STATES.get(where["state"], "unknown")
            why = where.get("why") or GONE_WHY[group]
            places.append(Place(place="remote", name=key, state=state, why=why))
    return places
