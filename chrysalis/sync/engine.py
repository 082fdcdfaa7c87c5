"""`Sync`: push, pull, snapshot and compact one memory against one remote.

A thin coordinator: it opens the remote's format once, then hands each run to its module
(push.py, pull.py, snapshots.py, compaction.py, heartbeats.py) and keeps the health status.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chrysalis.core.errors import ChrysalisError, FormatTampered, MemoryDropped
from chrysalis.remotes import Remote, open_remote
from chrysalis.sync import compaction, drop, protocol, scrub, snapshots
from chrysalis.sync.heartbeats import Heartbeats
from chrysalis.sync.local import Local
from chrysalis.sync.protocol import SEGMENT_OPS
from chrysalis.sync.pull import Puller
from chrysalis.sync.push import Pusher
from chrysalis.sync.remote_format import data_key, open_format, repair_format
from chrysalis.sync.scrub import RemoteScrubber
from chrysalis.sync.segment import read_key_file
from chrysalis.sync.session import Outcome, Session, SyncHealth

if TYPE_CHECKING:
    from chrysalis.memory import Memory

log = logging.getLogger(__name__)


@dataclass
class _Open:
    """The parts bound to the remote once its format is read."""

    session: Session
    heartbeats: Heartbeats
    pusher: Pusher
    puller: Puller
    scrubber: RemoteScrubber


class Sync:
    """Push and pull one memory against one remote. Thread-safe: a push and a pull may run at
    once; two pushes (or two pulls) take turns."""

    def __init__(
        self,
        memory: Memory,
        remote: Remote | str,
        *,
        key_file: str | os.PathLike[str] | None = None,
        host: str | None = None,
        segment_ops: int = SEGMENT_OPS,
        blob_grace: float = protocol.BLOB_GRACE,
        heartbeat_every: float = protocol.HEARTBEAT_EVERY,
    ) -> None:
        self.memory = memory
        self.local = Local(memory)
        self.remote = open_remote(remote) if isinstance(remote, str) else remote
        self._secret = None if key_file is None else read_key_file(key_file)
        self.key: bytes | None = None
        self.host = host or socket.gethostname()
        self.segment_ops = segment_ops
        self.blob_grace = blob_grace  # an unused blob put more recently than this stays
        self._heartbeat_every = heartbeat_every
        self.last_scrub: dict[str, Any] | None = None
        self.format: dict[str, Any] | None = None
        self.health = SyncHealth()
        self._push_lock = threading.Lock()
        self._pull_lock = threading.Lock()
        self._open_lock = threading.Lock()
        self._scrub_lock = threading.Lock()  # scrub and compaction: never on one segment at once
        self._bound: _Open | None = None
        # Called (from the run that found out) when the memory was dropped by another of its
        # laptops: its owner erases this copy (the daemon does; see drop.py).
        self.on_dropped: Callable[[], None] | None = None
        # The memory's replicas must name extracted entities alike (`graph.EntityNames`):
        # under the sync key when there is one (never stored), else under the plaintext
        # remote's format id, known here once we have opened it.
        if self._secret is not None:
            memory.use_graph_secret(self._secret, keep=False)
        elif (known := self.local.known_format(self.remote.url)) is not None:
            self._use_format_key(known)

    # ---- the remote's format -------------------------------------------------------------------

    def _connect(self) -> _Open:
        """Read (or create) ``format.json`` and settle the key, once; fail closed on any
        mismatch (remote_format.py). `MemoryDropped` when the memory this data dir synced
        there was dropped (drop.py): checked first, since the drop deleted its format and
        the name may have been made again there under a new one."""
        with self._open_lock:
            if self._bound is None:
                url = self.remote.url
                known = self.local.known_format(url)
                if known is not None:
                    self._check_dropped(known)
                fmt, key = open_format(self.remote, self._secret, self.local.replica_id, known)
                if known is None and drop.read(self.remote, fmt, lambda: key, self.health):
                    # A drop cut short left its format: finish it, and make the memory anew
                    # rather than join the dropped one.
                    drop.empty(self.remote)
                    fmt, key = open_format(self.remote, self._secret, self.local.replica_id)
                self.local.set_known_format(url, fmt)
                s = Session(self.remote, self.local, fmt, key, self.health)
                hb = Heartbeats(s, self.host, self._heartbeat_every)
                self._bound = _Open(
                    s,
                    hb,
                    Pusher(s, hb, self.segment_ops),
                    Puller(s, hb),
                    RemoteScrubber(s, hb, self.blob_grace),
                )
                self.format, self.key = fmt, key
                if key is None:
                    self._use_format_key(fmt)
            return self._bound

    def _check_dropped(self, known: dict[str, Any]) -> None:
        """Raise `MemoryDropped` if the remote holds the drop marker of ``known`` (the format
        this data dir recorded), after deleting what we may have put there since."""
        if self.health.dropped:
            raise MemoryDropped(self.health.dropped)

        def key() -> bytes | None:
            try:
                return data_key(self.remote.url, known, self._secret)
            except ChrysalisError:  # not our key: the marker cannot be read, open_format says why
                return None

        marker = drop.read(self.remote, known, key, self.health)
        if marker is not None:
            s = Session(self.remote, self.local, known, key(), self.health)
            drop.stop(s, self.remote, marker, self.health)

    def _use_format_key(self, fmt: dict[str, Any]) -> None:
        if self._secret is None and fmt.get("id"):
            self.memory.use_graph_secret(f"format:{fmt['id']}".encode(), keep=True)

    def _open(self) -> dict[str, Any]:
        """``format.json`` as read (see `_connect`)."""
        return self._connect().session.format

    def pushed(self, replica: str | None = None) -> int:
        """The last seq of ``replica`` (ours by default) this remote confirmed."""
        return self._connect().session.pushed(replica)

    @property
    def peers(self) -> dict[str, dict[str, Any]]:
        """The heartbeats the last full pull read."""
        return {} if self._bound is None else self._bound.puller.peers

    # ---- runs ------------------------------------------------------------------------------------

    def push(self) -> dict[str, Any]:
        """Send our ops the remote lacks; returns what moved. Then, if a forget left work in
        this remote (`scrub`), do it."""
        done = self._run("push", self._push_lock, lambda b, out: b.pusher.run(out))
        self._scrub_if_due()
        return done

    def pull(self, *, force: bool = False) -> dict[str, Any]:
        """Apply the ops other replicas pushed that we lack; returns what moved.

        When nobody pushed since the last pull (the ``changed`` marker is as we saw it), this
        costs one small GET, unless ``force``.
        """
        return self._run("pull", self._pull_lock, lambda b, out: b.puller.run(out, force=force))

    def _run(
        self, what: str, lock: threading.Lock, step: Callable[[_Open, Outcome], bool]
    ) -> dict[str, Any]:
        """One push or pull: its outcome kept for status, errors counted; ``step`` says
        whether it spoke to the remote (only that resets the error count)."""
        with lock:
            out = Outcome(at=time.time())
            try:
                with self._watching_drop():
                    spoke = step(self._connect(), out)
            except Exception as exc:
                if isinstance(exc, FormatTampered):
                    self._bound = None  # open the format again next time (and refuse there)
                out.ok = False
                out.error = f"{type(exc).__name__}: {exc}"
                self.health.last_error = out.error
                self.health.consecutive_errors += 1
                setattr(self.health, f"last_{what}", out)
                raise
            out.ok = True
            setattr(self.health, f"last_{what}", out)
            if spoke:
                self.health.consecutive_errors = 0
            if out.ops:
                log.info(
                    "%s: %d ops in %d objects, %s", what, out.ops, out.objects, self.remote.url
                )
            return out.as_dict()

    @contextlib.contextmanager
    def _watching_drop(self) -> Iterator[None]:
        """Tell `on_dropped` when the memory turns out to be dropped (it erases the copy)."""
        try:
            yield
        except MemoryDropped:
            if self.on_dropped is not None:
                self.on_dropped()
            raise

    def snapshot(self) -> dict[str, Any]:
        """Publish the replicated databases as one object, so a new laptop starts fast.

        Pushes first (the snapshot's blobs and our ops must be in the remote before it); does
        nothing if nothing changed since our last snapshot.
        """
        self.push()
        b = self._connect()
        return snapshots.publish(b.session, b.heartbeats)

    def compact(self) -> dict[str, Any]:
        """Delete segments every live replica holds and a snapshot covers (never by age)."""
        with self._watching_drop():
            b = self._connect()
            with self._scrub_lock:  # a rewrite must not put back a segment compaction deleted
                drop.check(b.session)
                return compaction.compact(b.session, b.heartbeats)

    # ---- forget in the remote (scrub.py) ---------------------------------------------------------

    def scrub(self) -> dict[str, Any]:
        """Do what forgets left in this remote, as far as this replica may: rewrite the
        segments it writes in erased form, replace its snapshots, delete unused blobs (after a
        complete pull at most `scrub.FRESH` old). Returns ``{rewritten, snapshot,
        blobs_deleted}``. Runs after each push when there is work; also callable alone."""
        with self._watching_drop():
            b = self._connect()
            with self._push_lock, self._scrub_lock:
                drop.check(b.session)  # a rewrite would put a dropped memory's segment back
                out = Outcome(at=time.time())
                done = b.scrubber.run(out, complete_at=b.puller.complete_at)
        self.health.scrub_error = None
        self.last_scrub = {**done, "at": out.at, "objects": out.objects, "bytes": out.bytes}
        return done

    def _scrub_if_due(self) -> None:
        b = self._bound
        if b is None or not b.scrubber.due(b.puller.peers, b.puller.complete_at):
            return
        try:
            self.scrub()
        except ChrysalisError as exc:  # retried after the next push; status shows it
            self.health.scrub_error = f"{type(exc).__name__}: {exc}"
            log.warning("forget in %s: %s", self.remote.url, self.health.scrub_error)

    def remote_places(
        self,
        ops: list[tuple[str, int]],
        blobs: list[str],
        forget: tuple[str, int] | None = None,
    ) -> dict[str, Any]:
        """Where the content of ``ops`` (dots ``(replica, seq)``) and ``blobs`` (sha256) still
        is in this remote, for a forget receipt. ``forget``: the forget op's dot (a snapshot
        whose version vector holds it holds erased copies). Returns::

            {"segments": {key: {"state": "gone" | "remains" | "unknown", "why"}},
             "snapshots": {key: {"state": "gone" | "remains" | "unknown", "why"}},
             "blobs": {key: {"state": "gone" | "remains" | "in use by a live bead"
                                       | "unknown", "why"}}}

        ``why`` names who must act (e.g. "pending on replica X, which writes this segment").
        A segment compacted away is not listed (nothing holds the op). Each remote call is
        bounded by the remote's timeout, and after the first that finds it unreachable the
        rest are not tried: every place not yet read is "unknown"."""
        try:
            b = self._connect()
        except ChrysalisError as exc:
            return scrub.unknown(ops, blobs, f"the remote cannot be opened ({exc})")
        try:
            hbs = b.heartbeats.read_all()
        except ChrysalisError:
            hbs = dict(b.puller.peers)
        return scrub.places(b.session, hbs, ops, blobs, forget)

    def repair_format(self) -> dict[str, Any]:
        """Put back the remote's ``format.json`` as this data dir last opened it, when it was
        deleted or rewritten (status and errors say so): our key must open it and the remote's
        segments must read under it. Returns ``{"repaired": bool, "id"}``."""
        with self._open_lock:
            done = repair_format(
                self.remote, self._secret, self.local.known_format(self.remote.url)
            )
            self._bound = None  # open it again, as repaired
        return done

    def decommission(self, replica: str) -> dict[str, Any]:
        """Retire a laptop that will not come back: it stops gating compaction."""
        return self._connect().heartbeats.decommission(replica)

    def drop(self) -> dict[str, Any]:
        """Drop this memory in the remote (drop.py): write its drop marker, then delete every
        other object under the remote's prefix; sync stops for good here. Returns ``{"url",
        "marker", "objects_removed", "left", "ok", "peers"}``: ``left``, the keys still
        there (a writer racing the sweep); ``peers``, the heartbeats read before (the other
        laptops, which erase their copy when they next sync). Raises (nothing written) when
        the remote cannot be opened or the marker cannot be written; `MemoryDropped` when
        another laptop dropped it first. After the marker, a failed sweep is in the result
        (``ok`` false, ``error``): the drop stands, and the next to open the remote with the
        key finishes the sweep."""
        b = self._connect()
        with self._push_lock, self._pull_lock, self._scrub_lock:
            s = b.session
            drop.check(s)
            peers = b.heartbeats.read_all()
            marker = drop.mark(s)
            s.health.dropped = s.health.stopped = f"memory dropped here ({marker})"
            done: dict[str, Any] = {"url": self.remote.url, "marker": marker, "peers": peers}
            try:
                done["objects_removed"], done["left"] = drop.empty(self.remote)
                done["ok"] = not done["left"]
            except ChrysalisError as exc:
                done.update(ok=False, objects_removed=None, left=None, error=f"{exc}")
        log.info("%s: memory dropped, %s objects removed", self.remote.url, done["objects_removed"])
        return done

    @property
    def heartbeat_every(self) -> float:
        """How often (seconds) a pull that finds nothing new still writes our heartbeat and
        reads the others', so an idle laptop shows as alive: the daemon sets its pull
        interval (default `protocol.HEARTBEAT_EVERY`, an hour)."""
        return self._heartbeat_every

    @heartbeat_every.setter
    def heartbeat_every(self, seconds: float) -> None:
        self._heartbeat_every = seconds
        if self._bound is not None:
            self._bound.heartbeats.every = seconds

    def heartbeat(self) -> None:
        """Publish who we are and exactly which ops we hold (gates compaction)."""
        self._connect().heartbeats.beat()

    def heartbeats(self) -> dict[str, dict[str, Any]]:
        """Every replica's heartbeat (unreadable ones are skipped and logged)."""
        return self._connect().heartbeats.read_all()

    # ---- status ----------------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        me = self.local.replica_id
        vv = self.local.version_vector()
        # Our cursor is kept in LMDB under the remote's id, so it is known without asking the
        # remote (before the first run, or while it cannot be reached); never opened from
        # this data dir, the remote holds none of our ops yet.
        known = self.format or self.local.known_format(self.remote.url)
        try:
            pushed = self.local.pushed(str(known["id"]), me) if known else 0
        except ChrysalisError:
            pushed = None
        h = self.health
        return {
            "url": self.remote.url,
            "encrypted": self.key is not None,
            "replica": me,
            "pushed": pushed,
            "pending_ops": None if pushed is None else max(0, vv.get(me, 0) - pushed),
            "reached": known is not None,  # ever opened from this data dir
            "last_push": h.last_push.as_dict(),
            "last_pull": h.last_pull.as_dict(),
            "last_error": h.last_error,
            "consecutive_errors": h.consecutive_errors,
            "stopped": h.stopped,
            "dropped": h.dropped,
            "rejected": [{"key": k, "error": v} for k, v in sorted(h.rejected.items())],
            "gaps": {r: dict(g) for r, g in sorted(h.gaps.items())},
            "tampered": [{"key": k, "what": v} for k, v in sorted(h.tampered.items())],
            "peers": protocol.peer_rows(self._seen(), me, vv),
            "requests": dict(self.remote.requests),
            "forget": self._forget_status(),
        }

    def _seen(self) -> dict[str, dict[str, Any]]:
        """The heartbeats read last (a full pull's, or an idle pull's fresher read)."""
        return {} if self._bound is None else self._bound.puller.seen

    def _forget_status(self) -> dict[str, Any] | None:
        """What forgets left to do in this remote (no request), or None before it opened."""
        b = self._bound
        if b is None:
            return None
        return {
            **b.scrubber.pending(b.puller.peers),
            "missing_blobs": dict(sorted(self.health.missing_blobs.items())),
            "last": self.last_scrub,
            "last_error": self.health.scrub_error,
        }

    def close(self) -> None:
        self.remote.close()
