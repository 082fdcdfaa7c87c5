"""Forget in the remote: after a forget, no object in the remote keeps the content
(docs/sync-protocol.md §15).

`chrysalis.write.erase.erase_bead` records, in the commit that erases them, the ops whose copies in
the remote still hold the content and the blobs no live bead here uses any more (the ``scrub``
database: the to-do). After each push and pull, `RemoteScrubber.run` works through it, per remote:

- **segments**: each segment holding such an op is rewritten in erased form under the same name
  (same seqs, our erased copies in place of the content) by the one replica allowed to: its own
  replica, or for a decommissioned one the live replica with the smallest id (one cleaner);
  readers accept an erased copy of an op they hold (`keys.same_op`), and an erased add they
  lack is a forget. An offline replica's segments wait for it (or its decommission);
- **snapshots**: we publish a fresh snapshot of our erased state and delete every older one of
  ours (a newer snapshot of ours covers more); the cleaner deletes a decommissioned replica's
  snapshots that ours covers;
- **blobs**: a blob no live bead here names, after a complete pull at most `FRESH` old, is
  deleted when last put more than `protocol.BLOB_GRACE` ago (pushers put a blob again before
  each segment naming it, then check it is still there).

`places` answers where the content of given ops and blobs still is (the forget receipt).
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from chrysalis.core.errors import SegmentError, SyncKeyError
from chrysalis.remotes import RemoteError, RemoteNotFound, RemoteUnavailable
from chrysalis.sync import objects, protocol, snapshots
from chrysalis.sync.heartbeats import Heartbeats
from chrysalis.sync.layout import (
    SNAPSHOTS,
    blob_key,
    parse_seg_key,
    segments_of,
    snapshot_of,
    snapshots_of,
)
from chrysalis.sync.session import Outcome, Session

log = logging.getLogger(__name__)

FRESH = 300.0  # blobs are deleted only from a complete pull at most this old (seconds)
SEGMENT, SNAPSHOT, BLOB = "segment", "snapshot", "blob"  # the stages of a to-do entry
Dot = tuple[str, int]
T = TypeVar("T")


class RemoteScrubber:
    """The remote's to-do after forgets, for one remote; the caller runs one at a time."""

    def __init__(self, session: Session, heartbeats: Heartbeats, grace: float) -> None:
        self.s = session
        self.heartbeats = heartbeats
        self.grace = grace
        # sha -> when (our clock) its grace ends, as last seen: runs do not wake up for it before
        self._not_before: dict[str, float] = {}

    # ---- what is left (no request) -----------------------------------------------------------

    def pending(self, peers: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """What is left to do in this remote, from the to-do and ``peers`` (the heartbeats the
        last full pull read): ``rewrites`` (ops whose segment we rewrite), ``waiting_on``
        (replica -> ops of its segments only it may rewrite), ``blob_deletions``,
        ``snapshot`` (ours still to replace)."""
        s, fid = self.s, self.s.fid
        ops, blobs = s.local.scrub_todo()
        mine, waiting = 0, defaultdict[str, int](int)
        for (r, _seq), done in ops.items():
            if SEGMENT in done.get(fid, ()):
                continue
            w = protocol.rewriter(r, peers)
            if w == s.me:
                mine += 1
            else:
                waiting[str(w)] += 1
        return {
            "rewrites": mine,
            "waiting_on": dict(sorted(waiting.items())),
            "blob_deletions": sum(BLOB not in d.get(fid, ()) for d in blobs.values()),
            "snapshot": any(
                SNAPSHOT not in d.get(fid, ()) for d in [*ops.values(), *blobs.values()]
            ),
        }

    def due(self, peers: dict[str, dict[str, Any]], complete_at: float | None) -> bool:
        """Is there work this replica can do now? (No request.) Blobs count only after a
        fresh complete pull, and not before their grace ends."""
        p = self.pending(peers)
        if p["rewrites"] or p["snapshot"]:
            return True
        if p["blob_deletions"] and _fresh(complete_at):
            now = time.time()
            _, blobs = self.s.local.scrub_todo()
            fid = self.s.fid
            if any(
                BLOB not in d.get(fid, ())
                and (self._not_before.get(sha, 0.0) <= now or self.s.local.blob_in_use(sha))
                for sha, d in blobs.items()
            ):
                return True
        return bool(self._retired(peers)) and any(self.s.local.scrub_todo())

    # ---- one run -----------------------------------------------------------------------------

    def run(self, out: Outcome, *, complete_at: float | None) -> dict[str, Any]:
        """Rewrite segments, replace snapshots, delete blobs, as far as we may now.
        ``complete_at``: monotonic time of our last complete full pull (blobs wait for one
        at most `FRESH` old). Returns what was done."""
        s, fid = self.s, self.s.fid
        ops, blobs = s.local.scrub_todo()
        hbs = self.heartbeats.read_all()
        done: dict[str, Any] = {"rewritten": 0, "snapshot": None, "blobs_deleted": 0}
        took = done["seconds"] = {"segments": 0.0, "snapshots": 0.0, "blobs": 0.0}
        t = time.perf_counter()
        todo: dict[str, list[int]] = defaultdict(list)
        for (r, seq), d in ops.items():
            if SEGMENT not in d.get(fid, ()) and protocol.rewriter(r, hbs) == s.me:
                todo[r].append(seq)
        for r, seqs in sorted(todo.items()):
            finished, rewritten = self._rewrite(r, sorted(seqs), out)
            s.local.scrub_done(fid, SEGMENT, [(r, q) for q in finished])
            done["rewritten"] += rewritten
        took["segments"], t = time.perf_counter() - t, time.perf_counter()
        left_ops = [d for d, v in ops.items() if SNAPSHOT not in v.get(fid, ())]
        left_blobs = [sha for sha, v in blobs.items() if SNAPSHOT not in v.get(fid, ())]
        if left_ops or left_blobs:
            done["snapshot"] = self._snapshots()
            s.local.scrub_done(fid, SNAPSHOT, left_ops, left_blobs)
        if ops or blobs:  # content a forget erased may be in a retired replica's snapshot
            done["retired_snapshots_deleted"] = self._retired_snapshots(hbs)
        took["snapshots"], t = time.perf_counter() - t, time.perf_counter()
        shas = [sha for sha, d in blobs.items() if BLOB not in d.get(fid, ())]
        if shas and _fresh(complete_at):
            gone, deleted = self._blobs(shas)
            s.local.scrub_done(fid, BLOB, blobs=gone)
            done["blobs_deleted"] = deleted
        took["blobs"] = time.perf_counter() - t
        return done

    def _rewrite(self, replica: str, seqs: list[int], out: Outcome) -> tuple[list[int], int]:
        """Rewrite ``replica``'s segments holding ``seqs`` in erased form; returns the seqs
        no segment holds in content any more, and how many segments were rewritten."""
        s = self.s
        segs = sorted(
            p[1:] for o in s.remote.list(segments_of(replica)) if (p := parse_seg_key(o.key))
        )
        firsts = [f for f, _ in segs]
        limit = s.pushed(replica) if replica == s.me else None
        finished: list[int] = []
        groups: dict[int, list[int]] = defaultdict(list)
        for seq in seqs:
            if limit is not None and seq > limit:
                continue  # not pushed yet: it goes out erased
            i = protocol.segment_index(firsts, seq)
            if i is None:
                finished.append(seq)  # below the oldest segment: compacted
            else:
                groups[i].append(seq)
        rewritten = 0
        for i, group in sorted(groups.items()):
            first, key = segs[i]
            try:
                theirs, _ = objects.get_segment(s, key, replica, first)
            except RemoteNotFound:
                finished += group  # compacted since the listing
                continue
            except (SegmentError, SyncKeyError) as exc:
                log.warning("%s: not rewritten, it does not verify (%s)", key, exc)
                continue  # its owner replaces a foreign object (§6); we look again next run
            ours = s.local.ops_after(replica, first - 1, len(theirs))
            new = protocol.erase_in(theirs, {op["seq"]: op for op in ours}, s.local.same_op)
            if new is not None:
                out.bytes += objects.overwrite_segment(s, replica, new)
                out.objects += 1
                rewritten += 1
            held = {op["seq"]: op for op in new or theirs}
            finished += [q for q in group if q not in held or held[q]["data"].get("erased")]
        return finished, rewritten

    def _snapshots(self) -> dict[str, Any] | None:
        """Replace our snapshots (if we have any here) by one of our erased state."""
        s = self.s
        if not s.remote.list(snapshots_of(s.me)):
            return None  # none of ours can hold the content
        return snapshots.publish(s, self.heartbeats, force=True, keep=1)

    def _retired(self, hbs: dict[str, dict[str, Any]]) -> list[str]:
        """The decommissioned replicas we clean up after whose snapshot is still announced."""
        return [
            r
            for r, hb in sorted(hbs.items())
            if hb.get("decommissioned")
            and hb.get("snapshot")
            and protocol.rewriter(r, hbs) == self.s.me
        ]

    def _retired_snapshots(self, hbs: dict[str, dict[str, Any]]) -> int:
        """As the cleaner, delete the snapshots of decommissioned replicas once a live
        announced snapshot covers what they hold (publishing ours if none does); their
        tombstone then announces none. Returns how many were deleted."""
        s = self.s
        deleted = 0
        for r in self._retired(hbs):
            hb = hbs[r]
            held = (hb.get("snapshot") or {}).get("vv") or {}
            live = [
                i
                for q, h in hbs.items()
                if not h.get("decommissioned")
                and q != s.me
                and isinstance(i := h.get("snapshot"), dict)
            ]
            mine = s.local.last_snapshot(s.fid)
            if not any(
                protocol.covers(i.get("vv") or {}, held) for i in [*live, *([mine] if mine else [])]
            ):
                mine = snapshots.publish(s, self.heartbeats, force=True, keep=1)
                if not protocol.covers(mine.get("vv") or {}, held):
                    continue  # we do not hold all it holds yet: a later run
            listed = [o.key for o in s.remote.list(snapshots_of(r))]
            for key in protocol.snapshots_to_delete(listed, keep=0):  # manifests first
                s.remote.delete(key)
                deleted += 1
            self.heartbeats.rewrite_other(r, {**hb, "snapshot": None})
        return deleted

    def _blobs(self, shas: list[str]) -> tuple[list[str], int]:
        """Delete the unreferenced blobs last put over `grace` ago; returns the shas settled
        (deleted, already gone, or in use here) and how many were deleted."""
        s = self.s
        gone: list[str] = []
        deleted = 0
        now = time.time()
        for sha in shas:
            if s.local.blob_in_use(sha):
                gone.append(sha)  # a live bead uses the same content: it stays, rightly
                continue
            key = blob_key(sha)
            found = [o for o in s.remote.list(key) if o.key == key]
            if not found:
                gone.append(sha)
            elif protocol.blob_deletable(found[0].mtime, now, self.grace):
                s.remote.delete(key)
                gone.append(sha)
                deleted += 1
            else:
                self._not_before[sha] = (found[0].mtime or now) + self.grace
        return gone, deleted


def _fresh(complete_at: float | None) -> bool:
    """Was our last complete full pull at most `FRESH` ago?"""
    return complete_at is not None and time.monotonic() - complete_at < FRESH


# ---- where the content still is (the forget receipt) --------------------------------------------


def places(
    s: Session,
    hbs: dict[str, dict[str, Any]],
    ops: Sequence[Dot],
    blobs: Sequence[str],
    forget: Dot | None = None,
) -> dict[str, Any]:
    """Per place in the remote, whether the content of ``ops`` and ``blobs`` is still there.
    See `chrysalis.sync.Sync.remote_places`."""
    p = _Probe()
    out: dict[str, Any] = {"segments": {}, "snapshots": {}, "blobs": {}}
    by_replica: dict[str, list[int]] = defaultdict(list)
    for r, seq in ops:
        by_replica[r].append(int(seq))
    for r, seqs in sorted(by_replica.items()):
        out["segments"].update(_segment_places(s, p, hbs, r, seqs))
    out["snapshots"] = _snapshot_places(s, p, hbs, ops, forget)
    for sha in blobs:
        key = blob_key(sha)
        if s.local.blob_in_use(sha):
            out["blobs"][key] = {
                "state": "in use by a live bead",
                "why": "the same content is in a bead that was not forgotten",
            }
            continue
        try:
            there = any(o.key == key for o in p.call(s.remote.list, key))
        except RemoteError as exc:
            out["blobs"][key] = {"state": "unknown", "why": f"the remote did not answer ({exc})"}
            continue
        out["blobs"][key] = {"state": "remains", "why": _BLOB_WHY} if there else {"state": "gone"}
    return out


_BLOB_WHY = (
    "no live bead names it: any replica deletes it after a complete pull, once it was last "
    "put over an hour ago (a push may be naming the same content)"
)


def _who(replica: str, hbs: dict[str, dict[str, Any]], me: str) -> str:
    w = protocol.rewriter(replica, hbs)
    if w is None:
        return f"pending: {replica} is decommissioned and no live replica is known to clean up"
    if w == me:
        return "pending on this replica's next sync"
    if w != replica:
        return f"pending on replica {w}, which cleans up after decommissioned {replica}"
    return (
        f"pending on replica {replica}, which writes this segment (if it will not come back, "
        f"run `chrysalis sync --decommission {replica}` on another laptop)"
    )


class _Probe:
    """The remote calls of one receipt: after the first *unavailable*, the rest are not tried
    (each would wait out the remote's timeout), so a receipt takes about one timeout."""

    def __init__(self) -> None:
        self.down: str | None = None

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        if self.down is not None:
            raise RemoteUnavailable(self.down)
        try:
            return fn(*args)
        except RemoteUnavailable as exc:
            self.down = str(exc)
            raise


def unknown(ops: Sequence[Dot], blobs: Sequence[str], why: str) -> dict[str, Any]:
    """A receipt when the remote cannot be opened at all: every place ``unknown``."""
    state = {"state": "unknown", "why": why}
    return {
        "segments": {segments_of(r): state for r in sorted({r for r, _ in ops})},
        "snapshots": {SNAPSHOTS: state},
        "blobs": {blob_key(sha): state for sha in blobs},
    }


def _segment_places(
    s: Session, p: _Probe, hbs: dict[str, dict[str, Any]], replica: str, seqs: list[int]
) -> dict[str, Any]:
    try:
        listed = p.call(s.remote.list, segments_of(replica))
    except RemoteError as exc:
        return {
            segments_of(replica): {"state": "unknown", "why": f"the remote did not answer ({exc})"}
        }
    segs = sorted(q[1:] for o in listed if (q := parse_seg_key(o.key)))
    firsts = [f for f, _ in segs]
    groups: dict[int, list[int]] = defaultdict(list)
    for seq in seqs:
        i = protocol.segment_index(firsts, seq)
        if i is not None:  # below the oldest segment: compacted, nothing to name
            groups[i].append(seq)
    out: dict[str, Any] = {}
    for i, group in sorted(groups.items()):
        first, key = segs[i]
        try:
            theirs, _ = p.call(objects.get_segment, s, key, replica, first)
        except RemoteNotFound:
            continue  # compacted since the listing
        except (SegmentError, SyncKeyError) as exc:
            out[key] = {
                "state": "unknown",
                "why": f"it does not verify ({exc}); {_who(replica, hbs, s.me)}",
            }
            continue
        except RemoteError as exc:
            out[key] = {"state": "unknown", "why": f"the remote did not answer ({exc})"}
            continue
        held = {op["seq"]: op for op in theirs}
        content = [q for q in group if q in held and not held[q]["data"].get("erased")]
        if content:
            out[key] = {"state": "remains", "why": _who(replica, hbs, s.me)}
        elif any(q in held for q in group):
            out[key] = {"state": "gone", "why": "rewritten in erased form"}
    return out


def _snapshot_places(
    s: Session, p: _Probe, hbs: dict[str, dict[str, Any]], ops: Sequence[Dot], forget: Dot | None
) -> dict[str, Any]:
    """Snapshots that may hold the content: each one whose version vector holds one of the ops
    but not the forget (unannounced ones: their vector is not known without reading them)."""
    try:
        # a snapshot's parts hold what its manifest does: one entry per snapshot
        keys = sorted({snapshot_of(o.key) for o in p.call(s.remote.list, SNAPSHOTS)})
    except RemoteError as exc:
        return {SNAPSHOTS: {"state": "unknown", "why": f"the remote did not answer ({exc})"}}
    announced = {
        str(hb["snapshot"].get("key")): (r, hb["snapshot"].get("vv") or {})
        for r, hb in hbs.items()
        if isinstance(hb.get("snapshot"), dict)
    }
    out: dict[str, Any] = {}
    for key in keys:
        owner = key[len(SNAPSHOTS) :].rsplit("-", 1)[0]
        why = f"pending on replica {owner}, which replaces its snapshots after a forget"
        if protocol.rewriter(owner, hbs) != owner:
            why = _who(owner, hbs, s.me).replace("segment", "snapshot")
        if key not in announced:
            out[key] = {"state": "remains", "why": "an older snapshot; " + why}
            continue
        vv = announced[key][1]
        if not any(int(vv.get(r, 0)) >= seq for r, seq in ops):
            continue  # made before any of the ops: never held them
        if forget is not None and int(vv.get(forget[0], 0)) >= forget[1]:
            out[key] = {"state": "gone", "why": "made after the forget: it holds erased copies"}
        else:
            out[key] = {"state": "remains", "why": why}
    return out
