"""Replication through a `Remote`: push our ops, pull the others', converge by the CRDT rules.

The remote's layout (layout.py names every key; docs/sync-protocol.md has every detail):

    format.json                          format, id, created_at, encryption (salt, key check)
    replicas/<replica>.json              heartbeat: host, generation, pushed, vv, snapshot, gaps,
                                         time (JSON; sealed like a segment with a sync key)
    ops/<replica>/<first:016x>.seg       consecutive ops of one replica, written once
    snapshots/<replica>-<hlc:016x>.snap  the replicated databases + their version vector
    blobs/<sha256>                       large bead content, content-addressed
    changed                              a token rewritten after each push; idle pulls GET it
    dropped/<format id>                  the memory was dropped: what a drop leaves (drop.py)

A replica writes only its own keys (and ``changed``; after a forget, a decommissioned
replica's keys are rewritten erased by one live cleaner, and unused blobs deleted). Push
sends blobs, then each segment by a create-only put, and moves its cursor (in LMDB) only after
the remote confirmed. A segment's
name is its first seq, so a retried push after a crash meets its own earlier object under the
same name: the same ops mean it landed; other ops mean another copy of this data dir pushed
first (a clone), and push stops. Pull reads segments past what we hold, verifies each (checksum,
authentication, replica and seq run), and applies it; a rejected segment stops only its replica.

The bucket is not trusted (docs/sync-protocol.md §14): a hole in a replica's run is a gap in
status that its origin fills by putting the ops again (or a snapshot fills); a foreign object
under our next segment name is replaced; heartbeat claims our own durable state contradicts are
ignored; compaction trusts only a snapshot it read back; format.json is never made anew on a
remote that holds data (`Sync.repair_format` puts it back). Each of these shows in status.

The modules:

    engine.py         `Sync`, the coordinator: opens the format once, runs each step, keeps status
    protocol.py       the decisions, as pure functions (segment cutting, clone verdicts, gaps,
                      which snapshot, the compaction floor)
    layout.py         every key name in the remote
    local.py          `Local`: everything sync needs from the memory and its store
    remote_format.py  format.json: create (on an empty remote only), read, check the key, repair
    session.py        `Session` (memory + opened remote), `Outcome`, `SyncHealth`
    objects.py        segments and blobs: encode, create-only put, read and verify
    heartbeats.py     replicas/<r>.json: ours written, everyone's read; decommission
    push.py, pull.py, snapshots.py, compaction.py    the four runs
    drop.py           dropping a memory: its marker, the sweep, the check every laptop makes
    scrub.py          forget in the remote: the to-do forget fills, worked through after each
                      push (segments rewritten erased, snapshots replaced, unused blobs
                      deleted), and `Sync.remote_places` for the forget receipt
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from chrysalis.core.errors import (  # re-exported: they live in errors.py
    CloneDetected,
    Decommissioned,
)

if TYPE_CHECKING:
    from chrysalis.sync.engine import Sync
    from chrysalis.sync.layout import seg_key
    from chrysalis.sync.local import APPLY_BATCH
    from chrysalis.sync.protocol import (
        HEARTBEAT_EVERY,
        KEEP_SNAPSHOTS,
        SEGMENT_BYTES,
        SEGMENT_OPS,
    )
    from chrysalis.sync.remote_format import FORMAT
    from chrysalis.sync.session import Outcome

# Loaded on first use (PEP 562): a replica without a remote reads a constant or two of
# `protocol` and `segment` and never the engine (~30 ms of every daemon's start).
_LAZY = {
    "Sync": "chrysalis.sync.engine",
    "seg_key": "chrysalis.sync.layout",
    "APPLY_BATCH": "chrysalis.sync.local",
    "HEARTBEAT_EVERY": "chrysalis.sync.protocol",
    "KEEP_SNAPSHOTS": "chrysalis.sync.protocol",
    "SEGMENT_BYTES": "chrysalis.sync.protocol",
    "SEGMENT_OPS": "chrysalis.sync.protocol",
    "FORMAT": "chrysalis.sync.remote_format",
    "Outcome": "chrysalis.sync.session",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'chrysalis.sync' has no attribute {name!r}")


__all__ = [
    "APPLY_BATCH",
    "FORMAT",
    "HEARTBEAT_EVERY",
    "KEEP_SNAPSHOTS",
    "SEGMENT_BYTES",
    "SEGMENT_OPS",
    "CloneDetected",
    "Decommissioned",
    "Outcome",
    "Sync",
    "seg_key",
]
