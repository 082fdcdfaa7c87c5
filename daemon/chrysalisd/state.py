"""`Daemon`: what one running daemon holds (settings, memory, jobs, metrics) and reports."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

import chrysalis
from chrysalis import Memory, Replica
from chrysalis.core.errors import Conflict, InsufficientStorage
from chrysalis.core.events import Committed
from chrysalis.forget.receipt import ForgetReceipt
from chrysalis.mirrors import Mirror

from .config import DEFAULT_MEMORY, Settings
from .jobs import JobGroup, Jobs

if TYPE_CHECKING:
    from chrysalis.sync import Sync

log = logging.getLogger("chrysalisd")


class Metrics:
    """Request counters and latency for ``GET /metrics``, in a prometheus_client registry of
    the daemon's own (never the process-global one, so two daemons in a process or a test never
    share counts). `render` is the Prometheus text of everything registered on it."""

    BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self._requests = Counter(
            "chrysalis_http_requests",  # exposed as chrysalis_http_requests_total
            "HTTP requests answered.",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self._seconds = Histogram(
            "chrysalis_http_request_seconds",
            "Time to answer, in the daemon.",
            ["method", "route"],
            buckets=self.BUCKETS,
            registry=self.registry,
        )

    def observe(self, method: str, route: str, status: int, elapsed: float) -> None:
        self._requests.labels(method, route, str(status)).inc()
        self._seconds.labels(method, route).observe(elapsed)

    @property
    def requests(self) -> dict[tuple[str, str, int], int]:
        """Requests answered so far, by method, route and status."""
        return {
            (s.labels["method"], s.labels["route"], int(s.labels["status"])): int(s.value)
            for family in self._requests.collect()
            for s in family.samples
            if s.name.endswith("_total")
        }

    def render(self) -> list[str]:
        """The lines of the Prometheus text exposition (what ``GET /metrics`` answers)."""
        return generate_latest(self.registry).decode().splitlines()


class Figures(Collector):
    """Each memory's store and index figures as gauges labelled by its name, read when
    ``/metrics`` is scraped. ``hosts`` holds the memories in use while they are read (a drop
    waits for that)."""

    def __init__(self, hosts: Callable[[], AbstractContextManager[list[Daemon]]]) -> None:
        self.hosts = hosts

    def collect(self) -> Iterator[Metric]:
        with self.hosts() as hosts:
            families = self._families(hosts)
        yield from families

    def _families(self, hosts: list[Daemon]) -> list[Metric]:

        def family(name: str, help: str, *labels: str) -> GaugeMetricFamily:
            return GaugeMetricFamily(name, help, labels=["memory", *labels])

        counts = {name: family(f"chrysalis_{name}", text) for name, text in _COUNT_HELP.items()}
        behind = family("chrysalis_index_behind_ops", "Ops an index has still to take in.", "index")
        k_behind = family(
            "chrysalis_knowledge_behind_ops", "This replica's ops the extractor has still to read."
        )
        derived = family(
            "chrysalis_knowledge_derived",
            "Knowledge items written by the extractor since the daemon started.",
            "kind",
        )
        retracted = family(
            "chrysalis_knowledge_retracted",
            "Derived items removed since the daemon started: all their evidence was forgotten.",
            "kind",
        )
        for host in hosts:
            m = host.name
            for name, value in host.counts().items():
                counts[name].add_metric([m], value)
            for index, n in host.memory.indexer.status()["behind"].items():
                behind.add_metric([m, index], n)
            knowledge = host.memory.knowledge.status()
            k_behind.add_metric([m], knowledge["ops_behind"])
            for kind, n in knowledge["derived"].items():
                derived.add_metric([m, kind], n)
            for kind, n in knowledge["retracted"].items():
                retracted.add_metric([m, kind], n)
        return [*counts.values(), behind, k_behind, derived, retracted]


_COUNT_HELP = {
    "beads": "Visible beads (forgotten ones leave this count).",
    "node_records": "Node records, tombstones included.",
    "edge_records": "Edge records, tombstones included.",
    "skill_records": "Skill records, tombstones included.",
    "embeddings": "Stored embeddings.",
    "ops": "Ops in the op log (this replica's and the ones pulled).",
    "pending_ops": "Remote ops waiting for a gap in the log to fill.",
}


class Daemon:
    """One memory as the daemon serves it: its `Replica` (the memory, its remote and mirror;
    sync, forget receipts and assisted recall are the replica's) with what the daemon adds:
    settings, the jobs that schedule it, metrics, and who is using it. The daemon holds one
    per memory (`memories.Memories`); routes get the one their path names."""

    def __init__(
        self,
        settings: Settings,
        memory: Memory | Replica,
        jobs: Jobs | JobGroup | None = None,
        name: str = DEFAULT_MEMORY,
        metrics: Metrics | None = None,
    ) -> None:
        self.settings = settings
        self.replica = memory if isinstance(memory, Replica) else Replica(memory)
        self.replica.weak_below = settings.zep_weak_score
        self.replica.budget_s = settings.zep_budget_ms / 1000
        self.replica.on_push = self._pushing
        memory = self.memory = self.replica.memory
        self.name = name
        self.jobs = (
            jobs if isinstance(jobs, JobGroup)
            else JobGroup(jobs or Jobs(), name, name == DEFAULT_MEMORY)
        )  # fmt: skip
        if metrics is None:  # a lone memory (tests): its own registry, with its figures
            metrics = Metrics()
            metrics.registry.register(Figures(lambda: contextlib.nullcontext([self])))
        self.metrics = metrics
        self.started = time.time()
        self._users = 0  # requests and readers in the memory now (`use`): a drop waits for them
        self._idle = threading.Condition()
        self._changes = 0
        self._digest: tuple[int, str] = (-1, "")
        # What erases this copy once another laptop dropped the memory (`Memories`); called
        # once, in a thread of its own (it waits for this memory's jobs and requests).
        self.when_dropped: Callable[[Daemon], None] | None = None
        self._drop_heard = False
        self._paused: set[str] = set()  # jobs paused by a full disk (logged once)
        self._unpushed = [0, 0]  # local ops and content bytes since the last push started
        memory.store.listeners.append(self._changed)
        # Every write path (routes, pulls, ingest, import, the indexer) passes the store's
        # free-space floor: below it writes answer 507 and reads go on.
        memory.store.min_free_bytes = settings.min_free_disk_bytes

    def use(self) -> None:
        """One more request is in this memory until its `done`."""
        with self._idle:
            self._users += 1

    def done(self) -> None:
        with self._idle:
            self._users -= 1
            if self._users == 0:
                self._idle.notify_all()

    def wait_unused(self, timeout: float) -> bool:
        """Wait until no request is in this memory; False if ``timeout`` passed first."""
        with self._idle:
            return self._idle.wait_for(lambda: self._users == 0, timeout)

    def _changed(self, committed: Committed) -> None:
        self._changes += 1
        if self.sync is None:
            return
        self._unpushed[0] += committed.local_ops
        self._unpushed[1] += committed.local_bytes
        s = self.settings
        if self._unpushed[0] >= s.push_after_ops or self._unpushed[1] >= s.push_after_bytes:
            self._unpushed = [0, 0]
            self.jobs.poke("push")
        elif committed.local_ops and s.push_after_write:
            # A write reaches the remote seconds later, not at the next push_interval: the
            # other laptops see it at their next pull (debounced: one push per few seconds).
            self.jobs.soon("push", s.push_after_write)

    # ---- sync ----------------------------------------------------------------------------------

    @property
    def sync(self) -> Sync | None:
        """The replica's sync engine (None: no remote)."""
        return self.replica.engine

    @property
    def mirror(self) -> Mirror | None:
        return self.replica.mirror

    def attach_sync(self, sync: Sync) -> None:
        """Push, pull, snapshot and compact the replica's remote ``sync`` (it becomes the
        replica's engine, if it was not) on the configured schedule."""
        self.replica.engine = sync
        sync.on_dropped = self._dropped_elsewhere
        s = self.settings
        # Each pull, even one that finds nothing, writes our heartbeat and reads the others'
        # (a live idle laptop shows as just seen): a run comes every 0.9 to 1.1 intervals
        # (the jobs' jitter), so "due" after three quarters of one is once a run.
        sync.heartbeat_every = s.pull_interval * 0.75
        add, pausing = self.jobs.add, self._pausing
        # The first push comes one `push_interval` after start, like every other: a daemon
        # told to push hourly does not push two seconds in (writes push sooner through
        # `push_after_ops` / `push_after_bytes`; `chrysalis sync` pushes at once).
        add("push", pausing("push", self.replica.push), s.push_interval, first=s.push_interval)
        add("pull", pausing("pull", sync.pull), s.pull_interval, first=1.0)
        # A finished scrub's report rides on a push: send it now, not at the next interval.
        self.memory.scrubber.listeners.append(lambda _done: self.jobs.poke("push"))
        add(
            "snapshot",
            pausing("snapshot", sync.snapshot),
            s.snapshot_interval,
            first=s.snapshot_interval,
        )
        add("compact", pausing("compact", sync.compact), s.compact_interval,
            first=s.compact_interval)  # fmt: skip

    def _dropped_elsewhere(self) -> None:
        """Another laptop dropped this memory (its remote holds the drop marker): sync has
        stopped for good; erase this copy, once, off the thread that found out."""
        with self._idle:
            if self._drop_heard:
                return
            self._drop_heard = True
        assert self.sync is not None
        log.warning("memory %s: %s", self.name, self.sync.health.dropped)
        if self.when_dropped is not None:
            threading.Thread(
                target=self.when_dropped, args=(self,), name=f"erase-{self.name}", daemon=True
            ).start()

    def attach_mirror(self, mirror: Mirror) -> None:
        """Push to the replica's ``mirror`` (it becomes the replica's, if it was not) and
        pull its facts on the configured schedule."""
        self.replica.mirror = mirror
        s = self.settings
        push, pull = f"{mirror.kind}-push", f"{mirror.kind}-pull"
        every = s.zep_push_interval  # the first push too, as for the remote (`attach_sync`)
        self.jobs.add(push, self._pausing(push, mirror.push), every, first=every)
        self.jobs.add(pull, self._pausing(pull, mirror.pull), s.zep_pull_interval, first=10.0)

    def _pausing(self, name: str, run: Callable[[], Any]) -> Callable[[], Any]:
        """``run`` as a job that pauses while the disk is full: `InsufficientStorage` is
        logged once, answers ``{"paused": ...}`` as the job's result, and the job tries
        again on its schedule (when space returns, it goes on where it stopped)."""

        def job() -> Any:
            try:
                result = run()
            except InsufficientStorage as exc:
                if name not in self._paused:
                    self._paused.add(name)
                    log.warning("job %s paused: %s", name, exc.message)
                return {"ok": False, "paused": exc.code, "error": exc.message}
            if name in self._paused:
                self._paused.discard(name)
                log.info("job %s resumed: the disk has room again", name)
            return result

        return job

    def retrieve(self, query: str, **kw: Any) -> Any:
        """Local retrieval, with the mirror's hits when the local ones are weak
        (`Replica.retrieve`, with the configured ``zep_weak_score`` and ``zep_budget_ms``)."""
        return self.replica.retrieve(query, **kw)

    def _pushing(self) -> None:
        self._unpushed = [0, 0]  # a push starts: what it sends no longer counts as unpushed

    def sync_now(
        self,
        push: bool = True,
        pull: bool = True,
        snapshot: bool = False,
        decommission: str | None = None,
        repair_format: bool = False,
    ) -> dict[str, Any]:
        """`Replica.sync` (push, then pull, at once), with the daemon's words for what is
        missing: ``decommission`` and ``repair_format`` need a remote, and a sync needs a
        remote or a mirror."""
        if repair_format and self.sync is None:
            raise Conflict(
                "repairing format.json needs a remote: start the daemon with --remote URL"
            )
        if decommission is not None and self.sync is None:
            raise Conflict("decommission needs a remote: start the daemon with --remote URL")
        if self.sync is None and self.mirror is None:
            raise Conflict(
                "no remote configured: start the daemon with --remote URL (or CHRYSALIS_REMOTE)"
            )
        return self.replica.sync(push, pull, snapshot, decommission, repair_format)

    def forget_receipt(self, bead_id: str) -> ForgetReceipt:
        """Every place's receipt for a forgotten bead (`Replica.forget_receipt`)."""
        return self.replica.forget_receipt(bead_id)

    def state_digest(self) -> str:
        """The memory's digest, recomputed only after a commit (it reads every record)."""
        seen = self._changes
        if self._digest[0] != seen:
            self._digest = (seen, self.memory.state_digest())
        return self._digest[1]

    def counts(self) -> dict[str, int]:
        stats = self.memory.stats()
        return {
            "beads": stats["bead_time"],  # visible beads (forgotten ones leave this view)
            "node_records": stats["nodes"],  # records keep their tombstones
            "edge_records": stats["edges"],
            "skill_records": stats["skills"],
            "embeddings": stats["emb"],
            "ops": stats["ops"],
            "pending_ops": stats["pending"],
        }

    def check_disk(self) -> dict[str, int]:
        """The disk job: free space where the data lives; fails (`InsufficientStorage`) below
        the configured floor, where writes are refused."""
        store = self.memory.store
        free = store.free_bytes()
        if free < store.min_free_bytes:
            store.check_space()  # raises, with the figure just measured
        return {"free_bytes": free}

    def status(self) -> dict[str, Any]:
        index = self.memory.indexer.status()
        return {
            "version": chrysalis.__version__,
            "memory": self.name,
            "replica_id": self.memory.replica_id,
            "pid": os.getpid(),
            "data_dir": str(self.memory.path),
            "socket": str(self.settings.socket),
            "uptime_s": round(time.time() - self.started, 3),
            "state_digest": self.state_digest(),
            "version_vector": self.memory.version_vector(),
            "counts": self.counts(),
            "embedder": index.pop("embedder"),
            "index": index,
            "scrub": self.memory.scrubber.status(),
            "knowledge": self.memory.knowledge.status(),
            "jobs": self.jobs.status(),
            "sync": self.replica.status(),
        }

    def metrics_lines(self) -> list[str]:
        """``GET /metrics``: request figures, then the counts and index lag read now."""
        return self.metrics.render()
