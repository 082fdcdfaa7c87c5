"""Context for an agent's next turn: the facts and evidence a question needs, cut where
relevance ends (`chrysalis.Memory.context`)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from chrysalis.core.models import Context

from ..bodies import ContextIn
from .common import D, M, json_answer

router = APIRouter()


@router.post("/v1/context", response_model=Context, tags=["retrieval"], responses={400: {}})
def context(d: D, m: M, body: ContextIn) -> Response:
    """What to put in the prompt to answer a question.

    ``text`` is a prompt-ready block citing ids; ``facts`` the facts that bear on the
    question (what held at the time it asks about first, each with since, until and
    evidence); ``items`` the beads and summaries given as evidence. Nothing below the
    relevance floor: a question nothing in memory bears on gets an empty context. The turn
    being answered, the session's latest ``recent`` turns and ``exclude`` are left out. With
    ``memories``, those memories are read instead, each fact and item naming its own."""
    ask = {
        "token_budget": body.token_budget, "session_id": body.session_id,
        "exclude": body.exclude, "now": body.now, "recent": body.recent,
    }  # fmt: skip
    if not body.memories:
        return json_answer(d.memory.context(body.query, **ask))  # type: ignore[arg-type]
    with m.in_use(body.memories) as hosts:
        first, *rest = hosts
        found = first.memory.context(
            body.query,
            memories={h.name: h.memory for h in rest},
            **ask,  # type: ignore[arg-type]
        )
    for fact in found.facts:
        fact.memory = fact.memory or first.name
    for item in found.items:
        item.memory = item.memory or first.name
    return json_answer(found)
