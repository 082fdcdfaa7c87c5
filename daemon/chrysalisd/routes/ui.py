"""``POST /v1/ui``: open the memory inspector (`chrysalisd.inspector`) and get a sign-in."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

router = APIRouter()


@router.post("/v1/ui", tags=["meta"])
async def open_ui(request: Request) -> dict[str, Any]:
    """Open the memory inspector and answer a one-time sign-in for it.

    Open the inspector on 127.0.0.1 (once per daemon start; it accepts connections before
    this answers) and mint a sign-in token that works once, within ``expires_in`` seconds.
    Answers ``{"url", "signin", "token", "port", "expires_in"}``: ``url`` signs in when
    opened (``signin?token=...``); ``signin`` takes the token as a form POST. It is for the
    socket's user only, and never logged."""
    from ..inspector import TOKEN_TTL, InspectorServer

    state = request.app.state
    if getattr(state, "inspector", None) is None:
        state.inspector = InspectorServer(request.app)
    inspector: InspectorServer = state.inspector
    await inspector.start()
    token = inspector.app.mint()
    return {
        "url": inspector.app.url(token),
        "signin": inspector.app.signin,
        "token": token,
        "port": inspector.app.port,
        "expires_in": TOKEN_TTL,
    }
