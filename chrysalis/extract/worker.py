"""The knowledge worker: extraction off the write path, and retraction after forgets.

A raw bead is recallable the moment `remember` returns; knowledge follows within a moment (the
rules) or minutes (a model). Two durable cursors in LMDB meta:

    knowledge:extracted   this replica's own op seq up to which its beads are extracted: only
                          a bead's origin replica extracts it, so a fleet never pays twice;
                          what it derives replicates as node and edge ops
    knowledge:forgets     a version vector over every replica's ops: each ``bead.forget``
                          seen retracts what was derived only from that bead (every replica
                          does, idempotently, so no forget waits for an offline origin)
    knowledge:sessions    sessions with turns newer than their summary: session -> the time
                          of its latest turn; one that has rested `summary_after` seconds
                          gets a new summary (`chrysalis.extract.summary`), written by the
                          replica whose turns it summarises

Each cursor is written in the commit that does its work (an extraction's ops, a
retraction's); past ops that needed nothing it is kept in memory and written every
`SAVE_EVERY_S` and at close, so a plain `remember` costs no extra commit. Both passes are
idempotent, so a crash before a save only redoes a little.

A failing extractor backs off (nothing is lost: the cursor waits); a budget caps model calls
and tokens per hour; `status()` shows progress, the budget and the last error.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from chrysalis.core.backoff import Backoff
from chrysalis.core.clock import vv_merge
from chrysalis.core.errors import ClosedError, ExtractorUnavailable, InsufficientStorage, NotFound
from chrysalis.core.models import Bead, OpKind, new_id
from chrysalis.extract import Extraction, Extractor
from chrysalis.extract.summary import MAX_BEADS, Summarizer, Summary
from chrysalis.read.reader import Reader

log = logging.getLogger(__name__)

BATCH_OPS = 256  # own ops read per step
BATCH_BEADS = 32  # beads extracted per commit (an entity gains at most this many per op)
EXTRACTED = "knowledge:extracted"
FORGETS = "knowledge:forgets"
SESSIONS = "knowledge:sessions"
SUMMARY_OF = "knowledge:summary:"  # + session: this replica's live summary of it
SUMMARISES = "knowledge:summarises:"  # + summary id: the session it summarises
SUMMARY_AFTER_S = 600.0  # a session rests this long before it is summarised
HOUR = 3600.0
SAVE_EVERY_S = 30.0
# While a backlog lasts, the worker rests as long as it worked (at most half a core): the
# extractor is Python and holds the GIL, and `remember` on another thread must not wait on it.
DUTY = 0.5
# While a recall or a context is being answered, the worker waits between beads (at most this
# long each time, so a steady stream of reads slows extraction without stopping it): a step
# of 32 beads holds the GIL ~50 ms, and a read that gives the GIL up for each LMDB, FAISS or
# tantivy call waits up to a switch interval (5 ms) to get it back each time. At 1M beads with
# a backlog, recall p95 in-process went from 5 ms to 55 ms while the worker ran.
YIELD_S = 0.25
# ... and for this long after one ends: the next question of an agent asking in turn comes
# within a few ms of the last answer, and would find the worker mid-step.
GRACE_S = 0.02
# Recalls and contexts computed at once in a process; more wait their turn. One interpreter
# lock runs them all: sixteen at once each take sixteen times as long and pass the lock among
# themselves every switch interval. Two keep the lock busy while the other is in FAISS, LMDB or
# tantivy (which let it go). The daemon under 32 clients at 100k beads, three A/B pairs: closed
# loop +12 to +26 % req/s, recall p95 -7 to -18 % (docs/benchmarks.md, "Reads at once").
READS_AT_ONCE = 2
_EDGE_OPS = frozenset({OpKind.EDGE_PUT, OpKind.EDGE_REMOVE})
_NODE_OPS = frozenset({OpKind.NODE_PUT, OpKind.NODE_REMOVE})


class KnowledgeWrites(Protocol):
    """The writes the worker makes (`chrysalis.write.knowledge.KnowledgeWriter` and a meta put)."""

    def learn(
        self,
        extractions: Sequence[Extraction],
        bead_times: Mapping[str, float],
        derived_by: str,
        cursor: Mapping[str, Any] | None = None,
    ) -> Any: ...

    def retract(self, bead_ids: Sequence[str], cursor: Mapping[str, Any] | None = None) -> Any: ...

    def summarize(
        self,
        summary_id: str,
        session_id: str,
        summary: Summary | None,
        derived_by: str,
        replaces: str | None = None,
        metas: Mapping[str, Any] | None = None,
    ) -> bool: ...

    def collect(self, edge_ids: Sequence[str], node_ids: Sequence[str]) -> Any: ...

    def rekey_due(self) -> bool: ...

    def rekey(self) -> Any: ...

    def put_meta(self, name: str, value: Any) -> None: ...


@dataclass(frozen=True)
class Budget:
    """Model calls and tokens allowed per hour (None: no limit)."""

    calls_per_hour: int | None = None
    tokens_per_hour: int | None = None


NO_BUDGET = Budget()


class Slots:
    """``n`` slots handed out first come, first served: one let go goes straight to the
    longest waiter (`threading.Semaphore` lets a newcomer barge in, and the tail waits)."""

    def __init__(self, n: int) -> None:
        self._free = n
        self._lock = threading.Lock()
        self._waiting: deque[threading.Event] = deque()

    def acquire(self) -> None:
        with self._lock:
            if self._free and not self._waiting:
                self._free -= 1
                return
            turn = threading.Event()
            self._waiting.append(turn)
        try:
            turn.wait()
        except BaseException:  # Ctrl-C in the main thread: no longer waiting, and holds none
            with self._lock:
                if turn.is_set():  # handed over just now (`set` is under the lock): pass it on
                    self._release_locked()
                else:
                    self._waiting.remove(turn)
            raise

    def release(self) -> None:
        with self._lock:
            self._release_locked()

    def _release_locked(self) -> None:
        if self._waiting:
            self._waiting.popleft().set()  # the slot passes on, never freed in between
        else:
            self._free += 1


class _Reading:
    """One thread's part in the reads: whether it holds a slot now."""

    __slots__ = ("held",)

    def __init__(self) -> None:
        self.held = False


class Foreground:
    """The reads in flight (recalls, contexts) that background work yields to: a read holds
    `busy` while it runs; the worker calls `wait_idle` between beads. A read's computation
    also holds one of ``at_once`` slots (`read`; 0: no limit)."""

    def __init__(self, grace: float = 0.0, at_once: int = 0) -> None:
        self._reads = 0
        self._idle = threading.Condition()
        self.grace = grace  # quiet this long after a read before background work resumes
        self._ended = float("-inf")  # monotonic time the last read ended
        self._slots = Slots(at_once) if at_once > 0 else None
        self._local = threading.local()

    def _mine(self) -> _Reading:
        mine: _Reading | None = getattr(self._local, "reading", None)
        if mine is None:
            mine = self._local.reading = _Reading()
        return mine

    @contextlib.contextmanager
    def read(self) -> Iterator[None]:
        """`busy`, and while the read computes, one of the slots (waiting for one, first come
        first served). A thread holds at most one: a read inside another on the same thread
        computes in its slot (it never waits on itself); one inside `waiting` takes one again.
        Whatever ends the read (an exception, Ctrl-C while it waits, a generator closed on
        another thread), the slot it took is let go once, and only it."""
        with self.busy():
            # This thread's record, kept: a generator suspended in here may be closed on
            # another thread, and the bookkeeping is still the opening thread's.
            mine = self._mine()
            slots = None if mine.held else self._slots
            if slots is not None:
                slots.acquire()  # raises holding none
                mine.held = True
            try:
                yield
            finally:
                if slots is not None and mine.held:
                    mine.held = False
                    slots.release()

    @contextlib.contextmanager
    def waiting(self) -> Iterator[None]:
        """Around a wait on something outside the process (a query embedded by Ollama): the
        slot this thread's read holds is let go meanwhile and taken back after (its turn
        again first come first served), so reads waiting on a server do not stall the rest.
        Outside a read, or inside another `waiting`, it lets nothing go. Interrupted while it
        takes the slot back, it raises holding none (and the read lets none go)."""
        mine = self._mine()
        slots = self._slots
        if slots is None or not mine.held:
            yield
            return
        mine.held = False
        slots.release()
        try:
            yield
        finally:
            slots.acquire()
            mine.held = True

    @contextlib.contextmanager
    def busy(self) -> Iterator[None]:
        with self._idle:
            self._reads += 1
        try:
            yield
        finally:
            with self._idle:
                self._reads -= 1
                if not self._reads:
                    self._ended = time.monotonic()
                    self._idle.notify_all()

    @property
    def reads(self) -> int:
        return self._reads

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no read is in flight and none ended within `grace` seconds (an agent
        asking one question after another leaves gaps of a few ms), at most ``timeout``
        seconds; True if so."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while True:
                now = time.monotonic()
                quiet = self._ended + self.grace - now
                if not self._reads and quiet <= 0:
                    return True
                if now >= deadline:
                    return False
                left = deadline - now
                self._idle.wait(left if self._reads else min(left, quiet))


# One per process: a daemon serving several memories has one GIL for all their workers.
FOREGROUND = Foreground(grace=GRACE_S, at_once=READS_AT_ONCE)


class KnowledgeWorker:
    """Owns the extraction and retraction thread of one memory."""

    def __init__(
        self,
        reader: Reader,
        writes: KnowledgeWrites,
        extractor: Extractor | None,
        *,
        budget: Budget = NO_BUDGET,
        summary_after: float | None = SUMMARY_AFTER_S,
        clock: Any = time.monotonic,
        wall: Any = time.time,
        foreground: Foreground = FOREGROUND,
    ) -> None:
        self.reader = reader
        self.writes = writes
        self.extractor = extractor
        self.budget = budget
        self.clock = clock
        self.wall = wall
        self.summarizer = extractor if isinstance(extractor, Summarizer) else None
        self.summary_after = None if self.summarizer is None else summary_after
        self.summaries = 0  # summaries written since start
        self.extracted = 0  # beads extracted since start
        self.derived = {"nodes": 0, "edges": 0, "superseded": 0}
        self.retracted = {"nodes": 0, "edges": 0, "summaries": 0}
        self.last_error: str | None = None
        self.paused_until = 0.0
        self._spent: deque[tuple[float, int, int]] = deque()  # (when, calls, tokens)
        self._hour = [0, 0]  # the calls and tokens in _spent: no sum over it per step
        self._backoff = Backoff(first=1.0, cap=300.0)
        self.foreground = foreground
        self._wake = threading.Event()
        self._progress = threading.Condition()
        self._stop = False
        self._rest = threading.Event()  # set at close: no rest then
        self._extracted_at: int = reader.get_meta(EXTRACTED) or 0
        self._forgets_seen: dict[str, int] = reader.get_meta(FORGETS) or {}
        self._sessions: dict[str, float] = reader.get_meta(SESSIONS) or {}
        self._saved = self._cursors()
        self._saved_at = clock()
        reader.on_commit(self._on_commit)
        self._thread = threading.Thread(target=self._run, name="chrysalis-knowledge", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop = True
        self._wake.set()
        self._rest.set()
        self.reader.off_commit(self._on_commit)
        self._thread.join(timeout=30)
        if not self._thread.is_alive():
            with contextlib.suppress(ClosedError, InsufficientStorage):
                self._save()

    def _cursors(self) -> dict[str, Any]:
        return {
            EXTRACTED: self._extracted_at,
            FORGETS: dict(self._forgets_seen),
            SESSIONS: dict(self._sessions),
        }

    def _save(self, force: bool = True) -> None:
        """Write the cursors that moved past ops needing nothing (see the module's doc)."""
        now = self._cursors()
        if now == self._saved or (not force and self.clock() - self._saved_at < SAVE_EVERY_S):
            return
        for name, value in now.items():
            self.writes.put_meta(name, value)
        self._saved, self._saved_at = now, self.clock()

    def _on_commit(self, committed: Any) -> None:
        self._wake.set()

    # ---- the loop ------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop:
            self._wake.wait(timeout=1.0)
            self._wake.clear()
            try:
                while not self._stop:
                    t0 = time.monotonic()
                    if not self.step():
                        break
                    worked = time.monotonic() - t0
                    self._rest.wait(worked * (1 - DUTY) / DUTY)
            except ClosedError:
                break
            except InsufficientStorage as exc:
                self.last_error = exc.message
                self._wake.wait(5.0)
            except Exception as exc:  # the worker outlives any one failure
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.warning("knowledge worker failed, retrying in 5 s: %s", self.last_error)
                self._wake.wait(5.0)
            with self._progress:
                self._progress.notify_all()
            with contextlib.suppress(Exception):
                self._save(force=False)

    def step(self) -> bool:
        """A move to a new graph key if one is due, one batch of retraction, then of
        extraction; True if there may be more."""
        if self.writes.rekey_due():
            self.writes.rekey()  # before anything is named under the new key
        more = self._retract_forgotten()
        extracting = False
        if self.extractor is not None and self._may_extract():
            extracting = self._extract_next()
        if not extracting and self._due() and self._may_extract():  # the turns first
            extracting = self._summarize_next()
        more = more or extracting
        with self._progress:
            self._progress.notify_all()
        return more and not self._stop

    def wait(self, timeout: float | None = None) -> bool:
        """Block until everything committed before the call is extracted and retracted (or
        the extractor is paused). True when caught up."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._progress:
            while not self._caught_up():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._wake.set()
                self._progress.wait(0.05 if left is None else min(0.05, left))
        return True

    def _caught_up(self) -> bool:
        # The cursors first, then the log: the worker's own ops (a retraction's) land after
        # the step that wrote them, and must be seen too before this says caught up.
        seen, extracted = self._forgets_seen, self._extracted_at
        if self.writes.rekey_due():
            return False
        vv = self.reader.version_vector()
        if any(seq > seen.get(r, 0) for r, seq in vv.items()):
            return False
        if self.extractor is None or self.paused_until > self.clock():
            return True
        return extracted >= vv.get(self.reader.replica_id, 0) and not self._due()

    # ---- retraction ----------------------------------------------------------------------

    def _retract_forgotten(self) -> bool:
        ops = self.reader.ops_since(self._forgets_seen, limit=2_000)
        if not ops:
            return False
        seen = vv_merge(self._forgets_seen, {op["replica"]: op["seq"] for op in ops})
        forgotten = [op["target"] for op in ops if op["kind"] == OpKind.BEAD_FORGET]
        if forgotten:
            done = self.writes.retract(forgotten, cursor={FORGETS: seen})
            self.retracted["nodes"] += len(done.nodes)
            self.retracted["edges"] += len(done.edges)
            self.retracted["summaries"] += len(done.summaries)
            for bead_id in forgotten:  # a summary of ours is gone: write the session's again
                session = self.reader.get_meta(SUMMARISES + bead_id)
                if session is not None:
                    self._sessions[session] = 0.0
        # A merge can leave a derived item with no evidence that no forget names (a trim
        # here, a removal there): the items these ops touch are looked at again.
        edges = [op["target"] for op in ops if op["kind"] in _EDGE_OPS]
        nodes = [op["target"] for op in ops if op["kind"] in _NODE_OPS]
        if edges or nodes:
            done = self.writes.collect(edges, nodes)
            self.retracted["nodes"] += len(done.nodes)
            self.retracted["edges"] += len(done.edges)
        self._forgets_seen = seen
        return len(ops) >= 2_000

    # ---- extraction ----------------------------------------------------------------------

    def _may_extract(self) -> bool:
        now = self.clock()
        if now < self.paused_until:
            return False
        while self._spent and self._spent[0][0] <= now - HOUR:
            _, calls, tokens = self._spent.popleft()
            self._hour[0] -= calls
            self._hour[1] -= tokens
        calls, tokens = self._hour
        b = self.budget
        if (b.calls_per_hour is not None and calls >= b.calls_per_hour) or (
            b.tokens_per_hour is not None and tokens >= b.tokens_per_hour
        ):
            self.paused_until = self._spent[0][0] + HOUR
            self.last_error = "paused: the hourly extraction budget is spent"
            return False
        return True

    def _spend(self, calls: int, tokens: int) -> None:
        self._spent.append((self.clock(), calls, tokens))
        self._hour[0] += calls
        self._hour[1] += tokens

    def _extract_next(self) -> bool:
        assert self.extractor is not None
        me = self.reader.replica_id
        cursor = self._extracted_at
        ops = self.reader.ops_range(me, cursor, BATCH_OPS)
        if not ops:
            return False
        beads: list[Bead] = []
        last = cursor
        for op in ops:
            if op["kind"] == OpKind.BEAD_ADD:
                with contextlib.suppress(NotFound):  # forgotten since: nothing to learn
                    bead = self.reader.get_bead(op["target"])
                    if bead.derived_by is None:  # a summary holds no news
                        beads.append(bead)
            last = op["seq"]
            if len(beads) >= BATCH_BEADS:
                break
        if self.summary_after is not None:
            for bead in beads:
                if bead.session_id is not None and bead.role != "system":
                    at = self._sessions.get(bead.session_id, bead.ts)
                    self._sessions[bead.session_id] = max(at, bead.ts)
        if beads:
            try:
                extractions = []
                for bead in beads:  # one at a time: a read waiting meanwhile goes first
                    self.foreground.wait_idle(YIELD_S)
                    extractions += self.extractor.extract([bead])
                self._backoff.success()
            except ExtractorUnavailable as exc:
                delay = self._backoff.failure(self.clock())
                self.paused_until = self.clock() + delay
                self.last_error = str(exc)
                log.warning("extraction paused %.0f s: %s", delay, exc)
                return False
            calls = sum(e.calls for e in extractions)
            self._spend(calls, sum(e.tokens for e in extractions))
            self.foreground.wait_idle(YIELD_S)
            learned = self.writes.learn(
                extractions,
                {b.id: b.ts for b in beads},
                self.extractor.version,
                cursor={EXTRACTED: last, SESSIONS: dict(self._sessions)},
            )
            self.extracted += learned.beads
            self.derived["nodes"] += learned.nodes
            self.derived["edges"] += learned.edges
            self.derived["superseded"] += len(learned.superseded)
            self.last_error = None
        self._extracted_at = last
        return True

    # ---- summaries -----------------------------------------------------------------------

    def _due(self) -> list[str]:
        """Sessions that rested long enough since their latest turn, oldest first."""
        if self.summary_after is None or not self._sessions:
            return []
        until = self.wall() - self.summary_after
        due = [s for s, at in self._sessions.items() if at <= until]
        return sorted(due, key=self._sessions.__getitem__)

    def _summarize_next(self) -> bool:
        """Summarise the session that has waited longest (see the module's doc)."""
        assert self.summarizer is not None
        session = self._due()[0]
        me = self.reader.replica_id
        latest = self.reader.last_beads(2 * MAX_BEADS, session_id=session)
        origins = self.reader.beads_with_origin([b.id for b in latest if b.derived_by is None])
        beads = [bead for bead, (_, replica, _) in origins.values() if replica == me]
        beads.sort(key=lambda b: b.ts)
        try:
            summary = self.summarizer.summarize(session, beads)
            self._backoff.success()
        except ExtractorUnavailable as exc:
            delay = self._backoff.failure(self.clock())
            self.paused_until = self.clock() + delay
            self.last_error = str(exc)
            log.warning("summaries paused %.0f s: %s", delay, exc)
            return False
        old = self.reader.get_meta(SUMMARY_OF + session)
        sessions = {s: at for s, at in self._sessions.items() if s != session}
        summary_id = new_id()
        metas: dict[str, Any] = {SESSIONS: sessions, SUMMARY_OF + session: None}
        if summary is not None:  # else too few turns (are left): none of ours stays
            self._spend(summary.calls, summary.tokens)
            metas[SUMMARY_OF + session] = summary_id
            metas[SUMMARISES + summary_id] = session
        if old is not None:
            metas[SUMMARISES + old] = None
        version = self.summarizer.summary_version
        if self.writes.summarize(summary_id, session, summary, version, old, metas):
            self._sessions = sessions
            self.summaries += summary is not None
        return True

    def status(self) -> dict[str, Any]:
        """Progress for `status`: the extractor, beads behind, what was derived, the budget."""
        me = self.reader.replica_id
        cursor = self._extracted_at
        head = self.reader.version_vector().get(me, 0)
        hour = [(c, t) for when, c, t in self._spent if when > self.clock() - HOUR]
        return {
            "extractor": None if self.extractor is None else self.extractor.version,
            "ops_behind": max(0, head - cursor) if self.extractor is not None else 0,
            "extracted": self.extracted,
            "derived": dict(self.derived),
            "retracted": dict(self.retracted),
            "summaries": {"written": self.summaries, "sessions_waiting": len(self._sessions)},
            "last_hour": {"calls": sum(c for c, _ in hour), "tokens": sum(t for _, t in hour)},
            "budget": {
                "calls_per_hour": self.budget.calls_per_hour,
                "tokens_per_hour": self.budget.tokens_per_hour,
            },
            "paused_for_s": round(max(0.0, self.paused_until - self.clock()), 1),
            "last_error": self.last_error,
        }
