"""Background jobs on an apscheduler ``AsyncIOScheduler``, each reporting into ``/v1/status``.

A job is a plain blocking function run on a worker thread (it may touch LMDB or the network);
at most one run of a job at a time, missed runs coalesce, and runs are spread by a jitter of a
tenth of the interval. What a job returns is kept as its ``last_result``; what it raises as
``last_error``, and the next run comes sooner: after 2, 4, 8... seconds (with jitter), capped
at ``retry_max``, then back on the schedule after a success.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from apscheduler.schedulers.asyncio import AsyncIOScheduler

log = logging.getLogger("chrysalisd.jobs")


@dataclass
class JobState:
    name: str
    interval: float
    func: Callable[[], Any]
    runs: int = 0
    failures: int = 0
    consecutive_failures: int = 0
    last_started: float | None = None
    last_ok: float | None = None
    last_error: str | None = None
    last_duration_ms: float | None = None
    last_result: Any = None
    running: bool = False


class Jobs:
    def __init__(self, retry_max: float = 600.0) -> None:
        self.scheduler = AsyncIOScheduler(timezone=UTC)
        self.jobs: dict[str, JobState] = {}
        self.retry_max = retry_max

    def add(self, name: str, func: Callable[[], Any], every: float, *, first: float = 0.0) -> None:
        """Run ``func`` every ``every`` seconds, the first time ``first`` seconds after start."""
        state = JobState(name, every, func)
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

    def poke(self, name: str) -> None:
        """Run a job soon (from any thread), e.g. a push once enough ops wait."""
        if self.scheduler.running and name in self.jobs and not self.jobs[name].running:
            self.scheduler.modify_job(name, next_run_time=datetime.now(UTC))

    def retry_delay(self, state: JobState) -> float:
        """2, 4, 8... seconds after consecutive failures, capped, with ±25 % jitter."""
        base = min(self.retry_max, 2.0 ** min(state.consecutive_failures, 30))
        return base * random.uniform(0.75, 1.25)

    async def run_now(self, name: str) -> JobState:
        """Run a job at once (outside its schedule) and wait for it."""
        state = self.jobs[name]
        await self._run(state)
        return state

    async def _run(self, state: JobState) -> None:
        state.running = True
        state.last_started = time.time()
        started = time.perf_counter()
        try:
            state.last_result = await asyncio.to_thread(state.func)
        except Exception as exc:
            state.failures += 1
            state.consecutive_failures += 1
            state.last_error = f"{type(exc).__name__}: {exc}"
            log.warning("job %s failed: %s", state.name, state.last_error)
            if self.scheduler.running and self.scheduler.get_job(state.name):
                retry = datetime.fromtimestamp(time.time() + self.retry_delay(state), UTC)
                self.scheduler.modify_job(state.name, next_run_time=retry)
        else:
            state.last_ok = time.time()
            state.consecutive_failures = 0
            state.last_error = None
        finally:
            state.runs += 1
            state.running = False
            state.last_duration_ms = round((time.perf_counter() - started) * 1000, 3)

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
