"""Background jobs on an apscheduler ``AsyncIOScheduler``, each reporting into ``/v1/status``.

A job is a plain blocking function run on a worker thread (it may touch LMDB or the network);
at most one run of a job at a time, missed runs coalesce, and runs are spread by a jitter of a
tenth of the interval. What a job returns is kept as its ``last_result``; what it raises as
``last_error``, and the next run comes sooner: after 2, 4, 8... seconds (±25 % jitter), never
more than ``retry_max`` (a `chrysalis.core.backoff.Backoff` per job), then back on the schedule
after a success.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from chrysalis.core.backoff import Backoff

log = logging.getLogger("chrysalisd.jobs")


@dataclass
class JobState:
    name: str
    interval: float
    func: Callable[[], Any]
    backoff: Backoff = field(default_factory=Backoff)
    runs: int = 0
    failures: int = 0
    last_started: float | None = None
    last_ok: float | None = None
    last_error: str | None = None
    last_duration_ms: float | None = None
    last_result: Any = None
    running: bool = False
    again_in: float | None = None  # asked for `soon` while it ran: that long after it ends

    @property
    def consecutive_failures(self) -> int:
        return self.backoff.failures


class Jobs:
    def __init__(self, retry_max: float = 600.0) -> None:
        self.scheduler = AsyncIOScheduler(timezone=UTC)
        self.jobs: dict[str, JobState] = {}
        self.retry_max = retry_max

    def add(self, name: str, func: Callable[[], Any], every: float, *, first: float = 0.0) -> None:
        """Run ``func`` every ``every`` seconds, the first time ``first`` seconds after start."""
        state = JobState(name, every, func, Backoff(first=2.0, cap=self.retry_max, jitter=0.25))
        self.jobs[name] = state
        self.scheduler.add_job(
            self._run,
            "interval",
            seconds=every,
            args=[state],
            id=name,
            name=name,
            max_instances=1,
            coalesce=True,
            misfire_grace_time=None,
            jitter=every / 10,
            next_run_time=datetime.fromtimestamp(time.time() + first, UTC),
        )

    def start(self) -> None:
        self.scheduler.start()

    def shutdown(self) -> None:
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)

    def remove(self, name: str) -> None:
        self.jobs.pop(name, None)
        if self.scheduler.running and self.scheduler.get_job(name):
            self.scheduler.remove_job(name)

    def poke(self, name: str) -> None:
        """Run a job soon (from any thread), e.g. a push once enough ops wait."""
        if self.scheduler.running and name in self.jobs and not self.jobs[name].running:
            self.scheduler.modify_job(name, next_run_time=datetime.now(UTC))

    def soon(self, name: str, delay: float) -> None:
        """Run a job within ``delay`` seconds (from any thread), unless a run is due sooner;
        asked while it runs, ``delay`` after that run ends. Asked again and again (a write
        after each write), it still runs once per ``delay`` at most: the first ask sets the
        time and later ones cannot put it later."""
        state = self.jobs.get(name)
        if state is None or not self.scheduler.running:
            return
        if state.running:
            state.again_in = delay if state.again_in is None else min(state.again_in, delay)
            return
        self._no_later_than(name, time.time() + delay)

    def _no_later_than(self, name: str, at: float) -> None:
        job = self.scheduler.get_job(name)
        if job is None:
            return
        when = datetime.fromtimestamp(at, UTC)
        if job.next_run_time is None or job.next_run_time > when:
            self.scheduler.modify_job(name, next_run_time=when)

    async def _run(self, state: JobState) -> None:
        state.running = True
        if self.jobs.get(state.name) is not state:  # removed while this run was due
            state.running = False
            return
        state.last_started = time.time()
        started = time.perf_counter()
        try:
            state.last_result = await asyncio.to_thread(state.func)
        except Exception as exc:
            state.failures += 1
            state.last_error = f"{type(exc).__name__}: {exc}"
            log.warning("job %s failed: %s", state.name, state.last_error)
            now = time.time()
            delay = state.backoff.failure(now)
            if self.scheduler.running and self.scheduler.get_job(state.name):
                retry = datetime.fromtimestamp(now + delay, UTC)
                self.scheduler.modify_job(state.name, next_run_time=retry)
        else:
            state.last_ok = time.time()
            state.backoff.success()
            state.last_error = None
        finally:
            state.runs += 1
            state.running = False
            state.last_duration_ms = round((time.perf_counter() - started) * 1000, 3)
            again, state.again_in = state.again_in, None
            if again is not None and self.scheduler.running:
                self._no_later_than(state.name, time.time() + again)

    def status(self) -> list[dict[str, Any]]:
        out = []
        for name, s in self.jobs.items():
            job = self.scheduler.get_job(name) if self.scheduler.running else None
            next_run = getattr(job, "next_run_time", None)
            out.append(
                {
                    "name": name,
                    "every_s": s.interval,
                    "running": s.running,
                    "runs": s.runs,
                    "failures": s.failures,
                    "consecutive_failures": s.consecutive_failures,
                    "last_started": _iso(s.last_started),
                    "last_ok": _iso(s.last_ok),
                    "last_error": s.last_error,
                    "last_duration_ms": s.last_duration_ms,
                    "last_result": s.last_result,
                    "next_run": next_run.isoformat() if next_run else None,
                }
            )
        return out


def _iso(ts: float | None) -> str | None:
    return None if ts is None else datetime.fromtimestamp(ts, UTC).isoformat()


class JobGroup:
    """One memory's jobs in the daemon's shared scheduler (`Jobs`). A named memory's job
    names carry its name (``team/push``); default's have none, as before there were several."""

    def __init__(self, jobs: Jobs, memory: str, default: bool) -> None:
        self.all = jobs
        self.prefix = "" if default else f"{memory}/"

    def add(self, name: str, func: Callable[[], Any], every: float, *, first: float = 0.0) -> None:
        self.all.add(self.prefix + name, func, every, first=first)

    def poke(self, name: str) -> None:
        self.all.poke(self.prefix + name)

    def soon(self, name: str, delay: float) -> None:
        self.all.soon(self.prefix + name, delay)

    def status(self) -> list[dict[str, Any]]:
        return [j for j in self.all.status() if self._mine(j["name"])]

    def remove_all(self, wait: bool = False) -> None:
        """Stop this memory's jobs (it is being dropped); with ``wait``, return once the runs
        under way have finished (each is bounded by its own timeouts; logged every 30 s)."""
        mine = [s for n, s in self.all.jobs.items() if self._mine(n)]
        for state in mine:
            self.all.remove(state.name)
        next_log = time.monotonic() + 30.0
        while wait and any(s.running for s in mine):
            if time.monotonic() > next_log:
                busy = ", ".join(s.name for s in mine if s.running)
                log.warning("waiting for %s to finish before the memory closes", busy)
                next_log += 30.0
            time.sleep(0.05)

    def _mine(self, name: str) -> bool:
        return name.startswith(self.prefix) if self.prefix else "/" not in name
