"""Push: send the ops of ours the remote lacks, one create-only segment at a time, moving our
cursor only after the remote confirmed (docs/sync-protocol.md §6)."""

from __future__ import annotations

import logging
import secrets
from typing import NoReturn

from chrysalis.core.errors import CloneDetected, Decommissioned, SegmentError, SyncKeyError
from chrysalis.remotes import RemoteNotFound, RemoteUnavailable
from chrysalis.store.faults import fault as _fault
from chrysalis.sync import drop, objects, protocol
from chrysalis.sync.heartbeats import Heartbeats
from chrysalis.sync.layout import CHANGED_KEY, heartbeat_key, parse_seg_key, segments_of
from chrysalis.sync.session import Outcome, Session

log = logging.getLogger(__name__)


class Pusher:
    """Pushes of one memory to one remote; the caller runs one at a time."""

    def __init__(self, session: Session, heartbeats: Heartbeats, segment_ops: int) -> None:
        self.s = session
        self.heartbeats = heartbeats
        self.segment_ops = segment_ops
        self._identity_checked = False  # our heartbeat read once since start

    def run(self, out: Outcome) -> bool:
        """One push; says whether it spoke to the remote."""
        s = self.s
        s.local.scrub_if_due()
        unannounced = s.announced() < s.pushed()
        scrubbed = self.heartbeats.scrub_unreported()
        idle = not (
            unannounced or scrubbed or s.health.republish or s.health.reput_blobs or self._waiting()
        )
        if self._identity_checked and idle:
            return False  # nothing to send: an idle push costs no request
        drop.check(s)  # a dropped memory pushes nothing back (drop.py)
        self._check_identity()
        self._identity_checked = True
        for replica, upto in self._owned():
            self._push_replica(replica, upto, out)
        self._republish(out)
        objects.reput_blobs(s, out)
        if out.objects:
            drop.check(s)  # dropped while we pushed: what we put goes (drop.stop)
        if out.objects or s.announced() < s.pushed() or scrubbed:
            # Segments others have not been told of: also those of an earlier push that failed
            # (or was killed) after its segments and before this point; or a local scrub.
            _fault("before-heartbeat")
            self.heartbeats.beat()
            s.remote.put(CHANGED_KEY, secrets.token_hex(8).encode())
            s.local.set_announced(s.fid, s.pushed())
        return True

    def _owned(self) -> list[tuple[str, int | None]]:
        return protocol.owned(self.s.me, self.s.local.lineage())

    def _waiting(self) -> bool:
        """Are there ops of ours the remote has not confirmed? (No request.)"""
        owned = self._owned()
        last = self.s.local.last_seqs([r for r, _ in owned])
        return any(protocol.unpushed(last[r], upto, self.s.pushed(r)) for r, upto in owned)

    def _check_identity(self) -> None:
        """Stop if we were decommissioned or a clone pushed as us."""
        s = self.s
        if s.health.stopped:
            raise (Decommissioned if s.health.retired else CloneDetected)(s.health.stopped)
        own = self.heartbeats.own()
        beyond = True
        if own is not None and int(own.get("pushed", 0)) > s.pushed():
            # Only a segment of ours past our cursor makes the claim a clone's.
            beyond = any(
                p[1] > s.pushed()
                for o in s.remote.list(segments_of(s.me))
                if (p := parse_seg_key(o.key))
            )
        verdict = protocol.judge_own_heartbeat(own, s.me, s.pushed(), beyond=beyond)
        if isinstance(verdict, protocol.Forged):
            s.health.tampered[heartbeat_key(s.me)] = verdict.detail
            log.warning("%s: %s", heartbeat_key(s.me), verdict.detail)
        if isinstance(verdict, protocol.Retired):
            s.health.stopped, s.health.retired = verdict.why, True
            raise Decommissioned(verdict.why)
        if isinstance(verdict, protocol.Clone):
            self._clone(verdict.detail)

    def _clone(self, detail: str) -> NoReturn:
        why = protocol.clone_message(detail, self.s.me)
        self.s.health.stopped = why
        raise CloneDetected(why)

    def _push_replica(self, replica: str, upto: int | None, out: Outcome) -> None:
        s = self.s
        cursor = s.pushed(replica)
        while True:
            ops = protocol.cut_segment(
                s.local.ops_after(replica, cursor, self.segment_ops),
                upto=upto,
                size=s.local.op_size,
                max_ops=self.segment_ops,
            )
            if not ops:
                return
            objects.push_blobs(s, ops, out)
            key, written = objects.put_segment(s, replica, ops)
            objects.recheck_blobs(s, ops, out)
            if written is not None:
                last = ops[-1]["seq"]
                out.objects += 1
                out.bytes += written
            else:
                last = self._landed(key, replica, ops, own=upto is None)
            _fault("after-segment-put")
            s.local.set_pushed(s.fid, replica, last)
            out.ops += last - cursor
            cursor = last

    def _reclaim(self, key: str, replica: str, ops: list[objects.Op], exc: Exception) -> int:
        """Our segment's name holds an object that is not a segment of ours at all: it fails
        to verify (a replayed old segment, a forgery, another key's object). A clone of this
        data dir would have written a valid segment of our ops there, so this is tampering by
        someone who can write to the bucket: report it and put ours over it."""
        s = self.s
        objects.overwrite_segment(s, replica, ops)
        s.health.tampered[key] = (
            f"held an object that is not a segment of ours ({exc}); replaced it with ours"
        )
        log.warning("%s: %s; replaced it with ours", key, exc)
        return int(ops[-1]["seq"])

    def _republish(self, out: Outcome) -> None:
        """Put again the ops of ours peers found missing between two of our segments (a
        segment deleted by someone who can write to the bucket), from the ops we still hold;
        what we no longer hold a snapshot fills on their side (§7)."""
        s = self.s
        for replica, start, end in sorted(s.health.republish):
            s.health.republish.discard((replica, start, end))
            firsts = sorted(
                p[1] for o in s.remote.list(segments_of(replica)) if (p := parse_seg_key(o.key))
            )
            span = protocol.republish_range(firsts, (start, end), s.pushed(replica))
            if span is None:  # a segment starts there: read it back, replace it if damaged
                span = protocol.recheck_range(firsts, (start, end), s.pushed(replica))
            if span is None:
                continue
            cursor = span[0] - 1
            while cursor < span[1]:
                ops = protocol.cut_segment(
                    s.local.ops_after(replica, cursor, self.segment_ops),
                    upto=span[1],
                    size=s.local.op_size,
                    max_ops=self.segment_ops,
                )
                if not ops or ops[0]["seq"] != cursor + 1:
                    break  # we no longer hold them: a snapshot has to fill the hole
                key, written = objects.put_segment(s, replica, ops)
                if written is None:
                    was = s.health.tampered.get(key)
                    self._landed(key, replica, ops, own=replica == s.me)
                    if s.health.tampered.get(key) != was:  # replaced: peers must look again
                        out.objects += 1
                else:
                    out.objects += 1
                    out.bytes += written
                    s.health.tampered[key] = (
                        f"was missing from the remote (deleted); put again ops "
                        f"{replica}:{ops[0]['seq']}..{ops[-1]['seq']}"
                    )
                    log.warning("%s was missing: put again", key)
                cursor = ops[-1]["seq"]

    def _landed(self, key: str, replica: str, ops: list[objects.Op], *, own: bool) -> int:
        """Our segment's name is taken: by our own earlier put or by a clone. Returns the
        last seq it holds."""
        try:
            theirs, _ = objects.get_segment(self.s, key, replica, ops[0]["seq"])
        except (SegmentError, SyncKeyError) as exc:
            return self._reclaim(key, replica, ops, exc)
        except RemoteNotFound:  # deleted since our put: put it again next time round
            raise RemoteUnavailable(f"{key} vanished while push read it back") from None
        verdict = protocol.judge_taken(
            key, replica, ops, theirs, own=own, same=self.s.local.same_op
        )
        if isinstance(verdict, protocol.Clone):
            self._clone(verdict.detail)
        return verdict.last
