"""``POST /v1/ui``: open the memory inspector (`chrysalisd.inspector`) and get its address."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

router = APIRouter()


@router.post("/v1/ui", tags=["meta"])
async def open_ui(request: Request) -> dict[str, Any]:
    """Open the memory inspector and answer its address.

    Open the inspector on 127.0.0.1 (once per daemon start; later calls answer the same
    address) and answer ``{"url", "port"}``. The URL carries this start's token: it is for the
    socket's user only, and never logged."""
    from ..inspector import InspectorServer

    state = request.app.state
    if getattr(state, "inspector", None) is None:
        state.inspector = InspectorServer(request.app)
        state.inspector.start()
    inspector: InspectorServer = state.inspector
    return {"url": inspector.app.url, "port": inspector.app.port}
