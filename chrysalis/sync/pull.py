"""Pull: read the segments other replicas pushed past what we hold, verify and apply them in
order; a rejected segment stops only its replica (docs/sync-protocol.md §7)."""

from __future__ import annotations

import json
import logging
import secrets
import time
from typing import Any

from chrysalis.core.errors import (
    DotConflict,
    FormatTampered,
    InvalidInput,
    MemoryDropped,
    SegmentError,
    SyncKeyError,
)
from chrysalis.remotes import RemoteNotFound
from chrysalis.sync import drop, objects, protocol, snapshots
from chrysalis.sync.heartbeats import Heartbeats, missing_blobs
from chrysalis.sync.layout import CHANGED_KEY, FORMAT_KEY, OPS, SNAPSHOTS, parse_seg_key
from chrysalis.sync.remote_format import REPAIR
from chrysalis.sync.session import Outcome, Session

log = logging.getLogger(__name__)

# The ``changed`` marker is a hint, not a proof: anyone who can write to the bucket can put an
# old token back after each push. A full pull at least this often bounds what that can delay.
FULL_PULL_EVERY = 600.0


class Puller:
    """Pulls of one memory from one remote; the caller runs one at a time."""

    def __init__(self, session: Session, heartbeats: Heartbeats) -> None:
        self.s = session
        self.heartbeats = heartbeats
        self.peers: dict[str, dict[str, Any]] = {}  # the heartbeats the last full pull read
        # The heartbeats read last (a full pull, or an idle one once per heartbeat interval):
        # status shows when each peer was last seen from these; nothing else uses them.
        self.seen: dict[str, dict[str, Any]] = {}
        self._seen_at = 0.0
        self._marker_seen: bytes | None = None
        self._full_at = float("-inf")  # monotonic time of the last full pull
        self._gaps_told: dict[str, tuple[int, int]] = {}  # the holes our last heartbeat named
        # monotonic time of the last full pull that read every replica through (forget in the
        # remote deletes blobs only from a fresh, complete view: scrub.py)
        self.complete_at: float | None = None
        self._missing_told: list[str] = []  # the blobs our last heartbeat said we miss
        self._claimed: dict[str, int] = {}  # replica -> what it pushed, as far as we know

    def run(self, out: Outcome, *, force: bool) -> bool:
        """One pull (a full one unless nobody pushed since the last, or ``force``)."""
        s = self.s
        if s.health.dropped:  # not even a heartbeat goes back to a dropped memory's remote
            raise MemoryDropped(s.health.dropped)
        try:
            marker: bytes | None = s.remote.get(CHANGED_KEY)
        except RemoteNotFound:
            marker = None
        overdue = time.monotonic() - self._full_at > FULL_PULL_EVERY
        if not overdue and protocol.idle(marker, self._marker_seen, force=force):
            # Nothing new, but say we are alive, and see who else is, at most once per
            # heartbeat interval each: a PUT, and a LIST and a GET per replica.
            if self.heartbeats.due():
                self.heartbeats.beat()
            if protocol.heartbeat_due(time.monotonic(), self._seen_at, self.heartbeats.every):
                self.seen, self._seen_at = self.heartbeats.read_all(), time.monotonic()
            return True
        self._full_at = time.monotonic()
        drop.check(s)  # before the format: a drop deletes it (drop.py)
        self._check_format()
        s.health.missing_blobs.clear()  # each full pull finds again those still missing
        hbs = self.heartbeats.read_all()
        self._note_claims(hbs)
        segments: dict[str, list[tuple[int, str]]] = {}
        for obj in s.remote.list(OPS):
            parsed = parse_seg_key(obj.key)
            if parsed:
                segments.setdefault(parsed[0], []).append((parsed[1], obj.key))
        if s.local.is_empty() and hbs:
            snapshots.join(s, hbs, out)
        complete = True
        # Also a replica with no segment left (compaction keeps only the newest, and a bucket
        # writer may delete that): its heartbeat says what it pushed, so the hole is seen.
        for replica in sorted(segments.keys() | hbs.keys()):
            if replica == s.me:
                continue
            complete &= self._pull_replica(replica, sorted(segments.get(replica, ())), hbs, out)
        self._forget_settled_rejections(segments, hbs)
        self.peers = self.seen = hbs
        self._seen_at = self._full_at
        self._note_reported_gaps(hbs)
        told = {r: (g["from"], g["to"]) for r, g in s.health.gaps.items()}
        missing = missing_blobs(s)
        news = told != self._gaps_told or missing != self._missing_told
        # Ours deleted, unreadable (forged without the key), or saying we pushed less than we
        # did (an old one put back): peers cannot tell what we pushed, and an idle push never
        # looks. (One claiming more is push's to judge: it may be a clone's.)
        lost = s.me not in hbs or int(hbs[s.me].get("pushed", 0)) < s.pushed()
        # (beyond=False: a tombstone claiming more than we pushed is a forgery, as push says.)
        verdict = protocol.judge_own_heartbeat(hbs.get(s.me), s.me, s.pushed(), beyond=False)
        if isinstance(verdict, protocol.Retired):
            # Decommissioned while we run: a heartbeat of ours now would undo the tombstone
            # (beat() writes nothing once stopped; push raises).
            s.health.stopped, s.health.retired = verdict.why, True
        if out.ops or self.heartbeats.due() or news or lost:
            self.heartbeats.beat()
        if (told and told != self._gaps_told) or (missing and missing != self._missing_told):
            # A new hole: the marker makes every replica's next pull a full one, so the
            # origin reads our heartbeat (which names it) without waiting for a push.
            s.remote.put(CHANGED_KEY, secrets.token_hex(8).encode())
        self._gaps_told = told
        self._missing_told = missing
        if complete:
            self._marker_seen = marker  # else the next poll looks again
            self.complete_at = self._full_at
        return True

    def _note_claims(self, hbs: dict[str, dict[str, Any]]) -> None:
        """Remember what each replica's heartbeat says it pushed. A heartbeat deleted takes
        back nothing; with a key, neither does an older one put back (only its replica
        writes one, and its cursor only grows): else the hole past what it says would close
        while its ops are still missing. On a plaintext remote anyone writes heartbeats,
        higher or lower, so the one read counts (its replica puts its own back)."""
        keyed = self.s.key is not None
        for replica, hb in hbs.items():
            now = int(hb.get("pushed", 0))
            self._claimed[replica] = max(now, self._claimed.get(replica, 0)) if keyed else now

    def _forget_settled_rejections(
        self, segments: dict[str, list[tuple[int, str]]], hbs: dict[str, dict[str, Any]]
    ) -> None:
        """A rejected segment is reported while it is still listed and holds ops we lack:
        compacted away (a snapshot covered it) or made moot by a replacement, it is history.
        A rejected snapshot, while a heartbeat still announces it (its writer moved on)."""
        s = self.s
        announced = {info.get("key") for info in protocol.announced_snapshots(hbs)}
        for key in [k for k in s.health.rejected if k.startswith(SNAPSHOTS)]:
            if key not in announced:
                s.health.rejected.pop(key)
        vv = s.local.version_vector()
        for key in [k for k in s.health.rejected if k.startswith(OPS)]:
            parsed = parse_seg_key(key)
            if parsed is None:
                continue
            replica, first, _ = parsed
            firsts = sorted(f for f, _ in segments.get(replica, ()))
            if first not in firsts:
                s.health.rejected.pop(key)  # no longer in the remote
                continue
            i = firsts.index(first)
            pushed = int(hbs.get(replica, {}).get("pushed", 0) or 0)
            if protocol.held(firsts, i, vv.get(replica, 0), pushed):
                s.health.rejected.pop(key)  # every op it should hold is here by now

    def _check_format(self) -> None:
        """A full pull reads ``format.json`` again (one GET): deleted or rewritten since we
        opened it, we stop at once rather than at the next restart (§3)."""
        s = self.s
        try:
            now: Any = json.loads(s.remote.get(FORMAT_KEY))
        except RemoteNotFound:
            now = None
        except ValueError:
            now = "damaged"
        if now != s.format:
            what = "is missing" if now is None else "was rewritten"
            raise FormatTampered(
                f"{s.remote.url}: {FORMAT_KEY} {what} since this replica opened it: someone "
                f"wrote to the bucket. Run `{REPAIR}` to put back the one we know"
            )

    def _note_reported_gaps(self, hbs: dict[str, dict[str, Any]]) -> None:
        """Holes peers report in a run we push: our next push puts those ops again."""
        s = self.s
        ours = {r for r, _ in protocol.owned(s.me, s.local.lineage())}
        for r, hb in hbs.items():
            if r == s.me or not isinstance(hb.get("gaps"), dict):
                continue
            for replica, span in hb["gaps"].items():
                try:
                    start, end = int(span[0]), int(span[1])
                except (TypeError, ValueError, IndexError, KeyError):
                    continue
                if replica in ours:
                    s.health.republish.add((replica, start, end))
            for sha in hb.get("missing_blobs") or ():
                if isinstance(sha, str) and len(sha) == 64:
                    s.health.reput_blobs.add(sha)

    def _pull_replica(
        self,
        replica: str,
        segs: list[tuple[int, str]],
        hbs: dict[str, dict[str, Any]],
        out: Outcome,
    ) -> bool:
        """Apply ``replica``'s segments past what we hold; False if something is left."""
        s = self.s
        have = s.local.version_vector().get(replica, 0)
        firsts = [f for f, _ in segs]
        pushed = self._claimed.get(replica, 0)
        if protocol.up_to_date(firsts, pushed=pushed, have=have):
            # We hold all its heartbeat says it pushed: a hole we reported (a forged
            # heartbeat's tail, ops that came another way) is closed.
            s.health.gaps.pop(replica, None)
            return True
        for i in range(protocol.read_from(firsts, have), len(segs)):
            first, key = segs[i]
            hole = protocol.hole_before(first, have)
            if hole is not None and not self._fill(replica, hole, i == 0, hbs, out):
                return False
            have = max(have, s.local.version_vector().get(replica, 0))
            if protocol.held(firsts, i, have):
                continue  # every op in it is already here
            try:
                ops, size = objects.get_segment(s, key, replica, first)
                objects.fetch_blobs(s, ops, out)
                applied = s.local.apply(ops)
            except (SegmentError, SyncKeyError, InvalidInput, DotConflict) as exc:
                # Read again on the next full pull: its replica may replace it (§6 step 6).
                if s.health.rejected.get(key) != str(exc):
                    log.error("rejected %s: %s", key, exc)
                s.health.rejected[key] = str(exc)
                if isinstance(exc, SegmentError):
                    # Damaged, replayed or swapped: its ops are a hole like a deleted segment's
                    # (our heartbeat reports it; the origin reads it back and replaces it).
                    end = firsts[i + 1] - 1 if i + 1 < len(firsts) else max(pushed, first)
                    hole = (max(first, have + 1), end)
                    damaged = "in a segment that fails to verify; waiting for its replica"
                    why = damaged + " to replace it or for a snapshot that covers them"
                    if hole[0] <= hole[1] and self._fill(replica, hole, False, hbs, out, why):
                        s.health.rejected.pop(key, None)
                        have = max(have, s.local.version_vector().get(replica, 0))
                        continue
                return False
            except RemoteNotFound:
                # Compacted between list and get (the next pull sees why), or a blob its ops
                # name is missing (health says which; retried at the next pull).
                return False
            s.health.rejected.pop(key, None)
            out.objects += 1
            out.bytes += size
            out.ops += applied
            have = max(have, ops[-1]["seq"])
        # Its heartbeat says it pushed more than its segments hold: the newest were deleted.
        tail = protocol.hole_before(pushed + 1, have)
        if tail is not None and not self._fill(replica, tail, False, hbs, out):
            return False
        s.health.gaps.pop(replica, None)
        return True

    def _fill(
        self,
        replica: str,
        hole: tuple[int, int],
        oldest: bool,
        hbs: dict[str, dict[str, Any]],
        out: Outcome,
        why: str | None = None,
    ) -> bool:
        """Ops ``hole`` of ``replica`` are not in the remote: below its oldest segment they
        were compacted; between two segments one was deleted (or never landed). A snapshot
        that covers them fills them now; else the gap is kept (status, and our heartbeat,
        which tells the origin to put them again) and False says ``replica`` waits."""
        s = self.s
        if snapshots.fill(s, replica, hole[1], hbs, out):
            return True
        why = why or (
            "compacted and no snapshot covers them yet"
            if oldest
            else "missing from the remote (a segment was deleted); waiting for its replica "
            "to put them again or for a snapshot that covers them"
        )
        s.health.gaps[replica] = {"from": hole[0], "to": hole[1], "why": why}
        log.warning("ops %s:%d..%d are %s", replica, hole[0], hole[1], why)
        return False
