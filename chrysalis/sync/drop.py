"""Dropping a memory in its remote (docs/sync-protocol.md §16).

The laptop that drops a memory writes a **drop marker**, ``dropped/<format id>``, then deletes
every other object under the remote's prefix (format, heartbeats, segments, snapshots, blobs,
``changed``). The marker is a container object of kind DROP holding ``{id, by, at}``; with a
sync key it is sealed under that key (AES-GCM, the key name in its AAD), so only a holder of
the key can write one that reads.

Every other laptop of the memory learns of it on its next sync: before anything else (when it
opens the remote, before each push that sends something, again after that push, before each
full pull) it reads the marker of the format it recorded; a marker that reads stops its sync
for good (`MemoryDropped`; nothing is pushed back), and it deletes what it may still have put
there (its own heartbeat, segments and snapshots: a push that raced the drop). Its owner (the
daemon) then erases the copy. A marker that does not read (a bucket writer's forgery, with a
key) is reported (``tampered``) and ignored.

The name made again with the same remote starts empty: the emptied remote gets a new format
(a new id); the old laptops know the old id, whose marker stays, so they stop instead of
pushing their copy into the new memory (their cursors, kept per format id, would otherwise
start at 0 and push everything again).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from chrysalis.core.errors import MemoryDropped, SegmentError, SyncKeyError
from chrysalis.remotes import Remote, RemoteNotFound
from chrysalis.sync.layout import (
    DROPPED,
    FORMAT_KEY,
    dropped_key,
    heartbeat_key,
    segments_of,
    snapshots_of,
)
from chrysalis.sync.segment import Kind, decode, encode
from chrysalis.sync.session import Session, SyncHealth

log = logging.getLogger(__name__)

SWEEPS = 2  # a second listing deletes what a push racing the first one landed


def mark(s: Session) -> str:
    """Write the drop marker of the format ``s`` opened; its key."""
    key = dropped_key(s.fid)
    payload = {"id": s.fid, "by": s.me, "at": time.time()}
    s.remote.put(key, encode(Kind.DROP, payload, object_key=key, key=s.key))
    return key


def empty(remote: Remote) -> tuple[int, list[str]]:
    """Delete every object under the remote's prefix but the drop markers, ``format.json``
    last: a sweep cut short leaves the format beside its marker, and whoever opens it next
    with the key finishes the sweep (`Sync._connect`) instead of joining the dropped memory.
    Returns how many were deleted and the keys still there after the last sweep (none,
    unless a writer keeps writing)."""
    removed = 0
    for _ in range(SWEEPS):
        for obj in remote.list():
            if not obj.key.startswith(DROPPED) and obj.key != FORMAT_KEY:
                remote.delete(obj.key)
                removed += 1
    with contextlib.suppress(RemoteNotFound):
        remote.get(FORMAT_KEY)
        remote.delete(FORMAT_KEY)
        removed += 1
    left = [o.key for o in remote.list() if not o.key.startswith(DROPPED)]
    return removed, left


def read(
    remote: Remote, fmt: dict[str, Any], key: Callable[[], bytes | None], health: SyncHealth
) -> Any:
    """The drop marker of the memory the remote held under format ``fmt`` (``{id, by, at}``),
    or None when there is none, or it does not read under ``key()`` (asked only when there is
    a marker: a passphrase's scrypt is not free), or ``fmt`` is encrypted and ``key()`` gives
    none: then it is reported in ``health.tampered`` (a forgery, or another key's)."""
    name = dropped_key(str(fmt.get("id")))
    try:
        raw = remote.get(name)
    except RemoteNotFound:
        return None
    secret = key()
    if fmt.get("encryption") and secret is None:
        # An encrypted format's marker is sealed: without the key (none configured, or not
        # this format's) an unsealed one would decode, and anyone who writes to the bucket
        # could have us erase our copy. Opening the format then refuses, saying why.
        health.tampered[name] = "a drop marker of an encrypted memory, and no key here to read it"
        log.warning("%s: ignored", health.tampered[name])
        return None
    try:
        marker = decode(raw, kind=Kind.DROP, object_key=name, key=secret)
        if not isinstance(marker, dict) or marker.get("id") != fmt.get("id"):
            raise SegmentError(f"{name}: not the drop marker of format {fmt.get('id')}")
    except (SegmentError, SyncKeyError) as exc:
        health.tampered[name] = f"a drop marker that does not read, ignored: {exc}"
        log.warning("%s", health.tampered[name])
        return None
    return marker


def stop(s: Session | None, remote: Remote, marker: dict[str, Any], health: SyncHealth) -> None:
    """Sync of this memory stops for good: say why, delete what we may have put in the remote
    since the drop (``s``: the session bound to the dropped format, when there is one), and
    raise `MemoryDropped`."""
    why = (
        f"memory dropped by replica {marker.get('by')} at {time.ctime(marker.get('at') or 0)} "
        f"(marker {dropped_key(str(marker.get('id')))} in {remote.url}): this copy is to be "
        "erased, nothing is pushed back"
    )
    health.dropped = health.stopped = why
    if s is not None:
        try:
            leave(s)
        except Exception as exc:  # best effort: the dropping laptop's sweep took the rest
            log.warning("%s: cleaning our objects after the drop: %s", remote.url, exc)
    raise MemoryDropped(why)


def leave(s: Session) -> int:
    """Delete this replica's own objects (heartbeat, segments, snapshots); how many."""
    keys = [o.key for o in s.remote.list(segments_of(s.me))]
    keys += [o.key for o in s.remote.list(snapshots_of(s.me))]
    keys.append(heartbeat_key(s.me))
    for key in keys:
        s.remote.delete(key)  # a missing key is not an error
    return len(keys)


def check(s: Session) -> None:
    """Raise `MemoryDropped` (after `stop`) if the memory was dropped: sticky once seen."""
    if s.health.dropped:
        raise MemoryDropped(s.health.dropped)
    marker = read(s.remote, s.format, lambda: s.key, s.health)
    if marker is not None:
        stop(s, s.remote, marker, s.health)
