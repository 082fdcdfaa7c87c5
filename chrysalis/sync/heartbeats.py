"""Heartbeats: each replica's ``replicas/<replica>.json`` says who it is, what it pushed and
exactly which ops it holds (that gates compaction); decommission rewrites another's
(docs/sync-protocol.md §9)."""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from typing import Any

from chrysalis.core.errors import InvalidInput, SegmentError, SyncKeyError
from chrysalis.remotes import RemoteNotFound
from chrysalis.sync import protocol
from chrysalis.sync.layout import CHANGED_KEY, REPLICAS, heartbeat_key, is_heartbeat_key
from chrysalis.sync.remote_format import FORMAT
from chrysalis.sync.segment import MAGIC, Kind, decode, encode
from chrysalis.sync.session import Session

log = logging.getLogger(__name__)


def missing_blobs(s: Session) -> list[str]:
    """The sha256 of the blobs we found missing (health), sorted."""
    return sorted(k.rsplit("/", 1)[-1] for k in s.health.missing_blobs)


class Heartbeats:
    """Ours written, everyone's read. Thread-safe."""

    def __init__(
        self, session: Session, host: str, every: float = protocol.HEARTBEAT_EVERY
    ) -> None:
        self.s = session
        self.host = host
        self.every = every  # an idle replica's heartbeat is rewritten this often (seconds)
        self._lock = threading.Lock()
        self._last = 0.0  # monotonic time of our last heartbeat
        self._scrubbed: dict[str, int] | None = None  # the scrub our last heartbeat reported
        self.unreadable: list[str] = []  # the keys the last read_all could not read

    def beat(self) -> None:
        """Publish ours; nothing once push stopped (retired, or a clone's copy: what it
        would say is not this replica id's to say)."""
        s = self.s
        if s.health.stopped:
            return
        with self._lock:
            hb = self._ours()
            s.remote.put(heartbeat_key(s.me), self._seal(heartbeat_key(s.me), hb))
            self._last = time.monotonic()
            self._scrubbed = hb["scrubbed"]

    def _ours(self) -> dict[str, Any]:
        s = self.s
        return {
            "replica": s.me,
            "host": self.host,
            "generation": s.local.generation,
            "lineage": [g["replica"] for g in s.local.lineage()],
            "pushed": s.pushed(),
            "vv": s.local.version_vector(),
            # What our last local scrub covered: forgets in it left every file of ours.
            "scrubbed": s.local.scrubbed_vv(),
            "snapshot": s.local.last_snapshot(s.fid),
            # Holes we cannot read past: their replica puts them again (§7, §6 step 9).
            "gaps": {r: [g["from"], g["to"]] for r, g in sorted(s.health.gaps.items())},
            # Blobs a live bead names that the remote lacks: whoever holds one puts it again.
            "missing_blobs": missing_blobs(s),
            "time": time.time(),
            "format": FORMAT,
        }

    def scrub_unreported(self) -> bool:
        """Has a local scrub finished since our last heartbeat (forget receipts wait for it)?"""
        return self.s.local.scrubbed_vv() != (self._scrubbed or {})

    def due(self) -> bool:
        """Has ``every`` passed since ours was last written (by this process)?"""
        return protocol.heartbeat_due(time.monotonic(), self._last, self.every)

    def own(self) -> Any:
        """Ours as the remote has it; None if there is none, it is damaged, or (with a sync
        key) it fails authentication: a bucket writer's (reported; this push rewrites it)."""
        key = heartbeat_key(self.s.me)
        try:
            return self._open(key, self.s.remote.get(key))
        except RemoteNotFound:
            return None
        except (SegmentError, SyncKeyError, ValueError, KeyError, TypeError) as exc:
            self._forged(key, exc)
            return None

    def read_all(self) -> dict[str, dict[str, Any]]:
        """Every replica's heartbeat (unreadable ones are skipped and logged)."""
        out = {}
        unreadable = []
        for obj in self.s.remote.list(REPLICAS):
            if not is_heartbeat_key(obj.key):
                continue
            try:
                hb = self._open(obj.key, self.s.remote.get(obj.key))
                out[str(hb["replica"])] = hb
            except RemoteNotFound:
                continue
            except (SegmentError, SyncKeyError, ValueError, KeyError, TypeError) as exc:
                self._forged(obj.key, exc)
                unreadable.append(obj.key)
        self.unreadable = unreadable
        return out

    def decommission(self, replica: str) -> dict[str, Any]:
        """Retire a laptop that will not come back: it stops gating compaction."""
        s = self.s
        if replica == s.me:
            raise InvalidInput("a replica cannot decommission itself; run this on another laptop")
        hbs = self.read_all()
        if replica not in hbs:
            raise InvalidInput(f"no replica {replica!r} in {s.remote.url}")
        tomb = protocol.tombstone(hbs[replica], by=s.me, at=time.time())
        self.rewrite_other(replica, tomb)
        # Every replica's next poll is a full one: the retired one, if it still runs, stops
        # before an idle heartbeat of its own would write over the tombstone.
        s.remote.put(CHANGED_KEY, secrets.token_hex(8).encode())
        return {"replica": replica, "decommissioned": True}

    def rewrite_other(self, replica: str, hb: dict[str, Any]) -> None:
        """Write another replica's heartbeat: only a decommission, and the cleaner of a
        decommissioned one (scrub.py: it no longer announces a deleted snapshot)."""
        self.s.remote.put(heartbeat_key(replica), self._seal(heartbeat_key(replica), hb))

    def _seal(self, key: str, hb: dict[str, Any]) -> bytes:
        """A heartbeat's bytes: JSON on a plaintext remote; with a sync key, a container
        object (segment.py) bound to its key, so only a key holder can write one."""
        if self.s.key is None:
            return json.dumps(hb).encode()
        return encode(Kind.HEARTBEAT, hb, object_key=key, key=self.s.key)

    def _open(self, key: str, raw: bytes) -> dict[str, Any]:
        """The heartbeat under ``key``; raises SegmentError if it cannot be trusted (with a
        key: not sealed, or failing authentication) or names another replica than its key."""
        if self.s.key is None:
            if raw[:4] == MAGIC:
                raise SegmentError(f"{key}: a sealed heartbeat on a plaintext remote")
            hb = json.loads(raw)
        elif raw[:4] != MAGIC:
            raise SegmentError(f"{key}: not sealed under the sync key (a plaintext heartbeat)")
        else:
            hb = decode(raw, kind=Kind.HEARTBEAT, object_key=key, key=self.s.key)
        if not isinstance(hb, dict) or heartbeat_key(str(hb["replica"])) != key:
            raise SegmentError(f"{key}: not the heartbeat of the replica its name says")
        if flaw := protocol.heartbeat_flaw(hb):
            raise SegmentError(f"{key}: {flaw}")
        return hb

    def _forged(self, key: str, exc: Exception) -> None:
        why = f"unreadable or not authentic ({exc}); ignored, and compaction waits"
        if self.s.health.tampered.get(key) != why:
            log.warning("heartbeat %s: %s", key, why)
        self.s.health.tampered[key] = why
