"""Segments and blobs in the remote, in the container format (segment.py) under the remote's
key: written create-only, verified when read (docs/sync-protocol.md §4, §6, §7)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from chrysalis.core.errors import ChrysalisError, SegmentError
from chrysalis.remotes import RemoteNotFound
from chrysalis.sync import protocol
from chrysalis.sync.layout import blob_key, seg_key
from chrysalis.sync.segment import Kind, decode, encode
from chrysalis.sync.session import Outcome, Session

Op = dict[str, Any]


def put_segment(s: Session, replica: str, ops: Sequence[Op]) -> tuple[str, int | None]:
    """Create ``replica``'s segment of ``ops`` under its name; returns the key and the bytes
    written, or None for the bytes when the name was taken (nothing written)."""
    key = seg_key(replica, ops[0]["seq"])
    data = encode(Kind.SEGMENT, protocol.segment_payload(replica, ops), object_key=key, key=s.key)
    return key, (len(data) if s.remote.put_if_absent(key, data) else None)


def overwrite_segment(s: Session, replica: str, ops: Sequence[Op]) -> int:
    """Put ``replica``'s segment of ``ops`` under its name over whatever is there (a foreign
    object, push.py decided); returns the bytes written."""
    key = seg_key(replica, ops[0]["seq"])
    data = encode(Kind.SEGMENT, protocol.segment_payload(replica, ops), object_key=key, key=s.key)
    s.remote.put(key, data)
    return len(data)


def get_segment(s: Session, key: str, replica: str, first: int) -> tuple[list[Op], int]:
    """The ops of segment ``key`` and its size. Raises RemoteNotFound, SegmentError (damaged,
    forged, not ``replica``'s consecutive ops from ``first``) or SyncKeyError."""
    data = s.remote.get(key)
    return verify_segment(s, key, data, replica, first), len(data)


def verify_segment(s: Session, key: str, data: bytes, replica: str, first: int) -> list[Op]:
    payload = decode(data, kind=Kind.SEGMENT, object_key=key, key=s.key)
    return protocol.check_segment(payload, key, replica, first)


def push_blobs(s: Session, ops: Iterable[Op], out: Outcome) -> None:
    """Put the blobs ``ops`` name (before the segment naming them). Always a put, never
    create-only: the same content may already be there, unreferenced and about to be deleted
    by a replica that forgot it; a put makes its mtime fresh, and deleters spare a blob put
    within `protocol.BLOB_GRACE` (§15)."""
    for op in ops:
        blob = protocol.op_blob(op)
        if not blob:
            continue
        sha = blob["sha256"]
        try:
            raw = s.local.get_blob(sha)
        except ChrysalisError:
            continue  # forgotten meanwhile: the op we send is about to be erased too
        key = blob_key(sha)
        data = encode(Kind.BLOB, raw, object_key=key, key=s.key)
        s.remote.put(key, data)
        out.objects += 1
        out.bytes += len(data)


def recheck_blobs(s: Session, ops: Iterable[Op], out: Outcome) -> None:
    """After the segment naming them landed: put again any blob of ``ops`` that is gone (a
    deleter's decision from before our put reached the store after it; §15)."""
    for op in ops:
        blob = protocol.op_blob(op)
        if not blob:
            continue
        key = blob_key(blob["sha256"])
        if any(o.key == key for o in s.remote.list(key)):
            continue
        try:
            raw = s.local.get_blob(blob["sha256"])
        except ChrysalisError:
            continue  # forgotten meanwhile
        data = encode(Kind.BLOB, raw, object_key=key, key=s.key)
        s.remote.put(key, data)
        s.health.tampered[key] = "was deleted right after our push named it; put it again"
        out.objects += 1
        out.bytes += len(data)


def reput_blobs(s: Session, out: Outcome) -> None:
    """Put again the blobs peers report missing (their heartbeats' ``missing_blobs``) that a
    live bead here uses: a deletion raced the push that named them (§15)."""
    for sha in sorted(s.health.reput_blobs):
        s.health.reput_blobs.discard(sha)
        key = blob_key(sha)
        if not s.local.blob_in_use(sha) or any(o.key == key for o in s.remote.list(key)):
            continue
        try:
            raw = s.local.get_blob(sha)
        except ChrysalisError:
            continue
        data = encode(Kind.BLOB, raw, object_key=key, key=s.key)
        s.remote.put(key, data)
        s.health.tampered[key] = "a peer missed it though a live bead names it; put it again"
        out.objects += 1
        out.bytes += len(data)


def fetch_blobs(s: Session, ops: Iterable[Op], out: Outcome) -> None:
    """Fetch the blobs ``ops`` name that we lack, each checked against its sha256."""
    for op in ops:
        blob = protocol.op_blob(op)
        if not blob or not isinstance(blob, dict) or s.local.has_blob(blob.get("sha256", "")):
            continue
        fetch_blob(s, blob["sha256"], out)


def fetch_blob(s: Session, sha: str, out: Outcome) -> None:
    """Fetch one blob. Raises RemoteNotFound when the remote lacks it (recorded in health:
    the caller retries at its next pull, while the bead's origin puts it again)."""
    key = blob_key(sha)
    try:
        data = s.remote.get(key)
    except RemoteNotFound:
        s.health.missing_blobs[key] = (
            "a live bead names it but the remote lacks it; retried at each pull until the "
            "replica that pushed the bead puts it again"
        )
        raise
    s.health.missing_blobs.pop(key, None)
    raw = decode(data, kind=Kind.BLOB, object_key=key, key=s.key)
    if not isinstance(raw, bytes) or s.local.put_blob(raw) != sha:
        raise SegmentError(f"{key}: content does not match its name")
    out.objects += 1
    out.bytes += len(data)
