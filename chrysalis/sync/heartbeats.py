"""Heartbeats: each replica's ``replicas/<replica>.json`` says who it is, what it pushed and
exactly which ops it holds (that gates compaction); decommission rewrites another's
(docs/sync-protocol.md §9)."""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any

from ..errors import InvalidInput
from ..remotes import RemoteNotFound
from . import protocol
from .layout import REPLICAS, heartbeat_key, is_heartbeat_key
from .remote_format import FORMAT
from .session import Session

log = logging.getLogger(__name__)


class Heartbeats:
    """Ours written, everyone's read. Thread-safe."""

    def __init__(self, session: Session, host: str) -> None:
        self.s = session
        self.host = host
        self._lock = threading.Lock()
        self._last = 0.0  # monotonic time of our last heartbeat

    def beat(self) -> None:
        """Publish ours."""
        s = self.s
        with self._lock:
            hb = {
                "replica": s.me,
                "host": self.host,
                "generation": s.local.generation,
                "lineage": [g["replica"] for g in s.local.lineage()],
                "pushed": s.pushed(),
                "vv": s.local.version_vector(),
                "snapshot": s.local.last_snapshot(s.fid),
                # Holes we cannot read past: their replica puts them again (§7, §6 step 9).
                "gaps": {r: [g["from"], g["to"]] for r, g in sorted(s.health.gaps.items())},
                "time": time.time(),
                "format": FORMAT,
            }
            s.remote.put(heartbeat_key(s.me), json.dumps(hb).encode())
            self._last = time.monotonic()

    def due(self) -> bool:
        """Has an idle hour passed since ours was last written (by this process)?"""
        return protocol.heartbeat_due(time.monotonic(), self._last)

    def own(self) -> Any:
        """Ours as the remote has it; None if there is none or it is damaged (this push
        rewrites it)."""
        try:
            return json.loads(self.s.remote.get(heartbeat_key(self.s.me)))
        except (RemoteNotFound, ValueError):
            return None

    def read_all(self) -> dict[str, dict[str, Any]]:
        """Every replica's heartbeat (unreadable ones are skipped and logged)."""
        out = {}
        for obj in self.s.remote.list(REPLICAS):
            if not is_heartbeat_key(obj.key):
                continue
            try:
                hb = json.loads(self.s.remote.get(obj.key))
                out[str(hb["replica"])] = hb
            except RemoteNotFound:
                continue
            except (ValueError, KeyError, TypeError):
                log.warning("skipping unreadable heartbeat %s", obj.key)
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
        s.remote.put(heartbeat_key(replica), json.dumps(tomb).encode())
        return {"replica": replica, "decommissioned": True}
