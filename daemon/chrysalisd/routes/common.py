"""What every route module shares: the daemon as a dependency, the id path parameter, and
answers serialized straight from the models (no re-validation on the way out)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Path, Request
from fastapi.responses import Response
from pydantic import BaseModel

from ..config import DEFAULT_MEMORY
from ..memories import Memories
from ..state import Daemon


async def _memories(request: Request) -> Memories:
    memories: Memories = request.app.state.memories
    return memories


async def _daemon(request: Request) -> Daemon:
    """The memory the path names (``/v1/m/<name>/...``, which the guard holds in use for
    the request; default without the prefix)."""
    state = request.scope.get("state", {})
    if "host" in state:
        host: Daemon = state["host"]
        return host
    memories: Memories = request.app.state.memories
    return memories.get(state.get("memory", DEFAULT_MEMORY))


D = Annotated[Daemon, Depends(_daemon)]
M = Annotated[Memories, Depends(_memories)]
PathId = Annotated[str, Path(description="an item id", max_length=256)]
JSON = "application/json"


def json_answer(model: BaseModel, status: int = 200) -> Response:
    return Response(model.model_dump_json(), status_code=status, media_type=JSON)


def json_list(models: list[Any], status: int = 200) -> Response:
    body = b"[" + b",".join(m.__pydantic_serializer__.to_json(m) for m in models) + b"]"
    return Response(body, status_code=status, media_type=JSON)
