"""`AsyncClient`: the daemon's API for asyncio, the same methods as `chrysalis.client.Client`,
awaitable (imported from `chrysalis.client` or `chrysalis`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar, Unpack

import httpx

from chrysalis.client.routes import (
    Call,
    Routes,
    bead_body,
    ingest_body,
    persona_patch,
    selector_body,
)
from chrysalis.client.transport import DEFAULT_TIMEOUT, ClientBase, async_transport
from chrysalis.core.vocab import BeadFields

if TYPE_CHECKING:
    from chrysalis.core.models import (
        Bead,
        Context,
        Edge,
        Neighbor,
        Node,
        Persona,
        RetrievalResult,
        Skill,
    )
    from chrysalis.forget.receipt import ForgetReceipt

T = TypeVar("T")


class AsyncClient(ClientBase):
    """The daemon's API for asyncio; the same methods as `Client`, awaitable."""

    def __init__(
        self,
        socket: str | Path | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        memory: str | None = None,
    ):
        super().__init__(socket, timeout, memory)
        self._http = httpx.AsyncClient(
            transport=async_transport(str(self.socket)),
            base_url="http://chrysalis",
            timeout=timeout,
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object | TracebackType) -> None:
        await self.aclose()

    async def _do(self, call: Call[T]) -> T:
        self._check_socket()
        try:
            r = await self._http.request(
                call.method,
                self._path(call.path),
                json=call.json,
                params=call.params,
                content=call.content,
            )
        except (httpx.ConnectError, httpx.RemoteProtocolError) as exc:
            raise self._not_running(exc) from exc
        except httpx.TimeoutException as exc:
            raise self._timed_out() from exc
        except httpx.TransportError as exc:  # reset or closed mid-request: it stopped
            raise self._broke(exc) from exc
        return self._read(call, r)

    async def send(self, call: Call[T]) -> T:
        """Send ``call`` and return its answer as ``call.parse`` reads it."""
        return await self._do(call)

    async def ping(self) -> bool:
        return await self._do(Routes.ping)

    async def health(self) -> dict[str, Any]:
        return await self._do(Routes.health)

    async def status(self) -> dict[str, Any]:
        return await self._do(Routes.status)

    async def memories(self) -> list[dict[str, Any]]:
        answer: dict[str, Any] = await self._do(Routes.memories)
        return list(answer["memories"])

    async def create_memory(self, name: str, **settings: Any) -> dict[str, Any]:
        return await self._do(Routes.create_memory(name, settings))

    async def drop_memory(self, name: str) -> dict[str, Any]:
        return await self._do(Routes.drop_memory(name))

    async def remember(
        self,
        content: str,
        **fields: Unpack[BeadFields],
    ) -> Bead:
        return await self._do(Routes.remember(bead_body(content, **fields)))

    async def remember_many(self, beads: Iterable[Mapping[str, Any]]) -> list[Bead]:
        return await self._do(Routes.remember_many(beads))

    async def get_bead(self, id: str) -> Bead:
        return await self._do(Routes.get_bead(id))

    async def last_beads(
        self,
        n: int = 50,
        *,
        session_id: str | None = None,
        tag: str | None = None,
        role: str | None = None,
        path: str | None = None,
        query: str | None = None,
        after: datetime | float | None = None,
        before: datetime | float | None = None,
    ) -> list[Bead]:
        filters = {"tag": tag, "role": role, "path": path, "query": query,
                   "after": after, "before": before}  # fmt: skip
        return await self._do(Routes.last_beads(n, session_id, filters))

    async def sessions(self) -> list[dict[str, Any]]:
        return await self._do(Routes.sessions)

    async def forget_receipt(self, id: str) -> ForgetReceipt:
        return await self._do(Routes.forget_receipt(id))

    async def forget(self, id: str) -> None:
        return await self._do(Routes.forget(id))

    async def forget_where(
        self,
        *,
        session_id: str | None = None,
        path: str | None = None,
        tag: str | None = None,
        query: str | None = None,
        before: Any = None,
        after: Any = None,
        role: str | None = None,
        dry_run: bool = True,
        expect: int | None = None,
        expect_digest: str | None = None,
    ) -> dict[str, Any]:
        selector = selector_body(session_id, path, tag, query, before, after, role)
        return await self._do(Routes.forget_where(selector, dry_run, expect, expect_digest))

    async def recall(
        self,
        query: str,
        *,
        k: int = 10,
        token_budget: int | None = None,
        strategy: str = "fusion",
        filters: Mapping[str, Any] | None = None,
        now: datetime | float | None = None,
        as_of: datetime | float | None = None,
        memories: Iterable[str] = (),
        min_score: float | None = None,
    ) -> RetrievalResult:
        return await self._do(
            Routes.recall(
                query, k, token_budget, strategy, filters, now, as_of, memories, min_score
            )
        )

    async def context(
        self,
        query: str,
        *,
        token_budget: int = 800,
        session_id: str | None = None,
        exclude: Iterable[str] = (),
        now: datetime | float | None = None,
        memories: Iterable[str] = (),
        recent: int | None = None,
    ) -> Context:
        return await self._do(
            Routes.context(query, token_budget, session_id, exclude, now, memories, recent)
        )

    async def add_node(
        self,
        id: str,
        type: str,
        *,
        name: str | None = None,
        labels: Iterable[str] = (),
        metadata: Mapping[str, Any] | None = None,
    ) -> Node:
        return await self._do(Routes.add_node(id, type, name, labels, metadata))

    async def get_node(self, id: str) -> Node:
        return await self._do(Routes.get_node(id))

    async def remove_node(self, id: str) -> None:
        return await self._do(Routes.remove_node(id))

    async def add_edge(
        self,
        source: str,
        target: str,
        predicate: str,
        *,
        id: str | None = None,
        weight: float = 1.0,
        evidence: Iterable[str] = (),
    ) -> Edge:
        return await self._do(Routes.add_edge(source, target, predicate, id, weight, evidence))

    async def add_fact(
        self,
        subject: str,
        predicate: str,
        object: str,
        *,
        type: str = "entity",
        weight: float = 1.0,
        evidence: Iterable[str] = (),
        valid_at: Any = None,
        invalid_at: Any = None,
    ) -> Edge:
        return await self._do(
            Routes.add_fact(
                subject, predicate, object, type, weight, evidence, valid_at, invalid_at
            )
        )

    async def get_edge(self, id: str) -> Edge:
        return await self._do(Routes.get_edge(id))

    async def remove_edge(self, id: str) -> None:
        return await self._do(Routes.remove_edge(id))

    async def neighbors(
        self,
        node_id: str,
        *,
        depth: int = 1,
        as_of: datetime | float | None = None,
        include_invalid: bool = False,
    ) -> list[Neighbor]:
        return await self._do(Routes.neighbors(node_id, depth, as_of, include_invalid))

    async def get_persona(self) -> Persona:
        return await self._do(Routes.persona)

    async def put_persona(self, persona: Persona | Mapping[str, Any]) -> Persona:
        return await self._do(Routes.put_persona(persona))

    async def update_persona(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        goals: Iterable[str] | None = None,
        norms: Iterable[str] | None = None,
        skills: Iterable[str] | None = None,
        traits: Mapping[str, str | None] | None = None,
    ) -> Persona:
        return await self._do(
            Routes.update_persona(persona_patch(name, description, goals, norms, skills, traits))
        )

    async def list_skills(self) -> list[Skill]:
        return await self._do(Routes.skills)

    async def get_skill(self, id: str) -> Skill:
        return await self._do(Routes.get_skill(id))

    async def put_skill(self, skill: Skill | Mapping[str, Any]) -> Skill:
        return await self._do(Routes.put_skill(skill))

    async def delete_skill(self, id: str) -> None:
        return await self._do(Routes.delete_skill(id))

    async def export(self) -> bytes:
        return await self._do(Routes.export)

    async def import_lines(self, lines: bytes) -> dict[str, Any]:
        return await self._do(Routes.import_lines(lines))

    async def ingest(
        self,
        *,
        path: str | None = None,
        text: str | None = None,
        source: str | None = None,
        kind: str | None = None,
        session_id: str | None = None,
    ) -> dict[str, Any]:
        return await self._do(Routes.ingest(ingest_body(path, text, source, kind, session_id)))

    async def sync(
        self,
        *,
        push: bool = True,
        pull: bool = True,
        snapshot: bool = False,
        decommission: str | None = None,
        repair_format: bool = False,
    ) -> dict[str, Any]:
        return await self._do(Routes.sync(push, pull, snapshot, decommission, repair_format))

    async def metrics(self) -> str:
        return await self._do(Routes.metrics)

    async def doctor(self) -> dict[str, Any]:
        return await self._do(Routes.doctor)
