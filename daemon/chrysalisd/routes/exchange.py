"""Moving memory in and out: export and import as JSON Lines, sync with the remote now."""

from __future__ import annotations

import tempfile
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse, Response
from starlette.concurrency import run_in_threadpool

from ..bodies import ImportResult, SyncIn
from ..exchange import export_lines, import_lines
from .common import D

SPOOL_IN_MEMORY = 8 * 1024 * 1024  # an import body beyond this waits in a temporary file

router = APIRouter()


@router.get(
    "/v1/export",
    tags=["exchange"],
    response_class=PlainTextResponse,
    responses={200: {"content": {"application/x-ndjson": {}}}},
)
def export(d: D) -> Response:
    """Export every visible item as JSON Lines.

    A header, then persona, skills, nodes, edges,
    beads (one ``{"kind": ..., "item": {...}}`` per line)."""
    return Response(b"".join(export_lines(d.memory)), media_type="application/x-ndjson")


_NDJSON = {"schema": {"type": "string", "description": "JSON Lines made by GET /v1/export"}}


@router.post(
    "/v1/import",
    response_model=ImportResult,
    tags=["exchange"],
    responses={400: {}, 507: {}},
    openapi_extra={"requestBody": {"required": True, "content": {"application/x-ndjson": _NDJSON}}},
)
async def import_(d: D, request: Request) -> ImportResult:
    """Import JSON Lines made by ``GET /v1/export``, all or nothing.

    Every line is checked before
    anything is written (400 names the first bad line by its number in the body); then what
    is new is written in one transaction. Items already here are left alone, so importing
    the same file twice changes nothing. The body may be streamed (chunked), of any size."""
    # Spooled to a temporary file as it arrives: a large import is never one string here.
    with tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY) as spool:
        async for chunk in request.stream():
            spool.write(chunk)  # into the page cache: microseconds, fine on the event loop
        spool.seek(0)
        return ImportResult(**await run_in_threadpool(import_lines, d.memory, spool))


@router.post("/v1/sync", tags=["sync"], responses={409: {}})
async def sync_now(d: D, body: SyncIn | None = None) -> dict[str, Any]:
    """Sync with the remote now: push, then pull.

    Push our ops to the remote and pull the others' now, without waiting for the
    schedule. ``ok`` is false when a step failed; each step says what moved or why not.
    409 when no remote is configured."""
    body = body or SyncIn()
    return await run_in_threadpool(
        d.sync_now, body.push, body.pull, body.snapshot, body.decommission, body.repair_format
    )
