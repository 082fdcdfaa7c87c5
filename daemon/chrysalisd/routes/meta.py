"""The daemon's own routes: liveness, status, metrics and the doctor's checks."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response
from fastapi.responses import PlainTextResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

import chrysalis

from ..bodies import HealthAnswer
from .common import D, M

VERSION = chrysalis.__version__
router = APIRouter()


@router.get("/_ping", response_class=PlainTextResponse, tags=["meta"])
async def ping() -> str:
    """Answers ``OK`` while the daemon serves."""
    return "OK"


@router.get("/v1/health", response_model=HealthAnswer, tags=["meta"])
async def health(d: D) -> HealthAnswer:
    """The daemon's version and this memory's replica id."""
    return HealthAnswer(status="ok", version=VERSION, replica_id=d.memory.replica_id)


@router.get("/v1/status", tags=["meta"])
def status(d: D, m: M) -> dict[str, Any]:
    """The memory's state: counts, indexes, knowledge, jobs and sync.

    The memory's name, replica_id, state_digest, counts, index state, embedder, knowledge
    (the extractor, ops behind, what it derived and retracted, its budget and last error), jobs
    and sync state; ``memories`` names every memory the daemon serves."""
    return {**d.status(), "memories": m.names()}


@router.get("/metrics", response_class=PlainTextResponse, tags=["meta"])
def metrics(d: D) -> Response:
    """Prometheus text exposition: requests, latency, store and index figures."""
    return Response(generate_latest(d.metrics.registry), media_type=CONTENT_TYPE_LATEST)


@router.get("/v1/doctor", tags=["status"])
def doctor(d: D) -> dict[str, Any]:
    """Run the daemon's checks, each with advice.

    Checks with advice: the data dir, the indexes against LMDB, the embedder (Ollama),
    the remote (reachable, writable, format, clock skew), sync and the Zep mirror. Each
    is ``{check, status: ok|warn|error, detail, fix}``; ``ok`` is false on any error."""
    from ..doctor import daemon_checks

    checks = daemon_checks(d)
    return {"ok": all(c["status"] != "error" for c in checks), "checks": checks}
