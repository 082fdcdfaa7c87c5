"""The HTTP API's routes, one module per area; `ROUTERS` in the order the app mounts them."""

from __future__ import annotations

from fastapi import APIRouter

from . import beads, context, exchange, kg, memories, meta, persona, receipts, ui

ROUTERS: tuple[APIRouter, ...] = (
    meta.router,
    beads.router,
    context.router,
    receipts.router,
    kg.router,
    persona.router,
    exchange.router,
    memories.router,
    ui.router,
)

__all__ = ["ROUTERS"]
