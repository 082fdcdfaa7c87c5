"""Named memories: list, create, show and drop them (`chrysalisd.memories`). Every other route
is addressable per memory as ``/v1/m/<name>/...``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path
from fastapi.responses import JSONResponse

from ..bodies import MemoryIn
from .common import M

router = APIRouter()
Name = Annotated[str, Path(description="a memory's name", max_length=64)]


@router.get("/v1/memories", tags=["memories"])
def list_memories(m: M) -> dict[str, Any]:
    """The memories this daemon serves.

    Every memory this daemon serves, default first: its data dir, replica id, remote,
    whether it is encrypted, its Zep server and how many beads it holds."""
    return {"memories": [m.describe(name) for name in m.names()]}


@router.post("/v1/memories", status_code=201, tags=["memories"], responses={400: {}, 409: {}})
def create_memory(m: M, body: MemoryIn) -> JSONResponse:
    """Create a named memory with settings of its own.

    A new memory with settings of its own (remote, sync_key_file, zep_*, extractor,
    intervals; never inherited: where it syncs is its own), kept in its data dir; 409 when
    the name is taken."""
    m.create(body.name, body.settings)
    return JSONResponse(m.describe(body.name), status_code=201)


@router.get("/v1/memories/{name}", tags=["memories"], responses={404: {}})
def show_memory(m: M, name: Name) -> dict[str, Any]:
    """One memory: its data dir, replica id, remote, Zep and bead count."""
    return m.describe(name)


@router.delete(
    "/v1/memories/{name}", tags=["memories"], responses={400: {}, 404: {}, 409: {}, 503: {}}
)
def drop_memory(m: M, name: Name) -> dict[str, Any]:
    """Drop a memory: erase all it holds, everywhere, and delete it.

    Erase every item kind of the memory (beads, facts, nodes, persona, skills, vectors,
    derived items, the op history) everywhere: in its remote, a drop marker (sealed with the
    sync key) and then every other object under the remote's prefix is deleted; here, the
    memory is closed and its data dir deleted; each other laptop reads the marker at its next
    sync and erases its copy, pushing nothing back. A memory made again with the same name and
    remote starts empty. It waits for the requests still in the memory (409 if they run on
    past 30 s: nothing dropped); 503 when the remote cannot take the drop or its Zep mirror
    does not answer (nothing dropped). Its Zep mirror deletes every session this laptop sent
    to (each other laptop does the same when it erases its copy). The receipt: ``erased``
    (the counts); ``remote`` (``url``, ``marker``, ``objects_removed``, ``left``, ``ok``);
    ``replicas`` (each other laptop, ``pending`` until its next sync); ``zep`` (``state``:
    gone, or marked / kept naming what Zep keeps, and ``why``; ``sessions`` deleted);
    ``data_dir``. The default memory cannot be dropped."""
    return m.drop(name)
