"""Every key name in the remote, in one place (docs/sync-protocol.md §2).

    format.json                          format, id, created_at, encryption (salt, key check)
    replicas/<replica>.json              heartbeat: host, generation, pushed, vv, snapshot, time
    ops/<replica>/<first:016x>.seg       consecutive ops of one replica, written once
    snapshots/<replica>-<hlc:016x>.snap  a snapshot's manifest: version vector, digest, parts
    snapshots/<replica>-<hlc:016x>.<n:06x>.part   its parts, each a bounded slice of the
                                         replicated databases, written before the manifest
    blobs/<sha256>                       large bead content, content-addressed
    changed                              a token rewritten after each push; idle pulls GET it
    dropped/<format id>                  the memory under that format was dropped (drop.py)

Numbers are lowercase hex zero-padded to 16 digits, so a listing sorts them as numbers.
"""

from __future__ import annotations

import contextlib

FORMAT_KEY = "format.json"
CHANGED_KEY = "changed"
REPLICAS = "replicas/"  # prefix of every heartbeat
OPS = "ops/"  # prefix of every segment
SNAPSHOTS = "snapshots/"  # prefix of every snapshot
DROPPED = "dropped/"  # prefix of every drop marker: the one thing a drop leaves


def dropped_key(format_id: str) -> str:
    """The marker saying the memory the remote held under format ``format_id`` was dropped."""
    return f"{DROPPED}{format_id}"


def heartbeat_key(replica: str) -> str:
    return f"{REPLICAS}{replica}.json"


def is_heartbeat_key(key: str) -> bool:
    return key.endswith(".json")


def segments_of(replica: str) -> str:
    """The prefix every segment of ``replica`` starts with."""
    return f"{OPS}{replica}/"


def seg_key(replica: str, first: int) -> str:
    return f"{segments_of(replica)}{first:016x}.seg"


def parse_seg_key(key: str) -> tuple[str, int, str] | None:
    """``(replica, first, key)`` for a segment's key; None for any other key."""
    parts = key.split("/")
    if len(parts) != 3 or parts[0] != OPS[:-1] or not parts[2].endswith(".seg"):
        return None
    with contextlib.suppress(ValueError):
        return parts[1], int(parts[2][:-4], 16), key
    return None


def snapshots_of(replica: str) -> str:
    """The prefix every snapshot of ``replica`` starts with."""
    return f"{SNAPSHOTS}{replica}-"


def snapshot_key(replica: str, hlc: int) -> str:
    return f"{snapshots_of(replica)}{hlc:016x}.snap"


SNAP, PART = ".snap", ".part"


def is_snapshot_key(key: str) -> bool:
    """A snapshot's manifest (the object heartbeats announce), not one of its parts."""
    return key.endswith(SNAP)


def snapshot_part_key(snapshot: str, n: int) -> str:
    """The key of part ``n`` of snapshot ``snapshot`` (a manifest key). It sorts before the
    manifest, so "a newer snapshot" is never one's own part."""
    return f"{snapshot[: -len(SNAP)]}.{n:06x}{PART}"


def snapshot_of(key: str) -> str:
    """The manifest key a snapshot part belongs to (a manifest key is its own)."""
    if key.endswith(PART):
        stem = key[: -len(PART)].rpartition(".")[0]
        return stem + SNAP
    return key


def blob_key(sha256: str) -> str:
    return f"blobs/{sha256}"
