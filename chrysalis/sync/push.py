"""Push: send the ops of ours the remote lacks, one create-only segment at a time, moving our
cursor only after the remote confirmed (docs/sync-protocol.md §6)."""

from __future__ import annotations

import secrets
from typing import NoReturn

from ..errors import CloneDetected, Decommissioned
from ..faults import fault as _fault
from . import objects, protocol
from .heartbeats import Heartbeats
from .layout import CHANGED_KEY
from .session import Outcome, Session


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
        unannounced = s.announced() < s.pushed()
        if self._identity_checked and not unannounced and not self._waiting():
            return False  # nothing to send: an idle push costs no request
        self._check_identity()
        self._identity_checked = True
        for replica, upto in self._owned():
            self._push_replica(replica, upto, out)
        if out.objects or s.announced() < s.pushed():
            # Segments others have not been told of: also those of an earlier push that failed
            # (or was killed) after its segments and before this point.
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
            raise CloneDetected(s.health.stopped)
        verdict = protocol.judge_own_heartbeat(self.heartbeats.own(), s.me, s.pushed())
        if isinstance(verdict, protocol.Retired):
            s.health.stopped = verdict.why
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

    def _landed(self, key: str, replica: str, ops: list[objects.Op], *, own: bool) -> int:
        """Our segment's name is taken: by our own earlier put or by a clone. Returns the
        last seq it holds."""
        theirs, _ = objects.get_segment(self.s, key, replica, ops[0]["seq"])
        verdict = protocol.judge_taken(
            key, replica, ops, theirs, own=own, same=self.s.local.same_op
        )
        if isinstance(verdict, protocol.Clone):
            self._clone(verdict.detail)
        return verdict.last
