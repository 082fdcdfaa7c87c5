"""`Client`: the daemon's HTTP API over its Unix socket, one method per route.

Agents import this, not the storage engine::

    from chrysalis import Client
    with Client() as client:                       # $CHRYSALIS_SOCKET or the default path
        bead = client.remember("the user prefers tea", session_id="s1")
        for item in client.recall("what does the user drink?", k=5).items:
            print(item.score, item.text, item.provenance["origin_replica"])

Errors come back as the `chrysalis.core.errors` class the daemon named (`InvalidInput`,
`NotFound`, `Conflict`, ...); nothing listening on the socket raises `DaemonNotRunning` with a
hint. Both clients are safe to share between threads (sync) or tasks (async).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
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
    raw_answer,
    selector_body,
)
from chrysalis.client.transport import (
    DEFAULT_TIMEOUT,
    ClientBase,
    default_socket_path,
    sync_transport,
)
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

__all__ = ["Call", "Client", "Routes", "default_socket_path"]

T = TypeVar("T")


class Client(ClientBase):
    """The daemon's API, blocking. ``Client(socket=None, timeout=30.0, memory=None)``: with
    ``memory``, every call goes to that named memory (default otherwise)."""

    def __init__(
        self,
        socket: str | Path | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        memory: str | None = None,
    ):
        super().__init__(socket, timeout, memory)
        self._http = httpx.Client(
            transport=sync_transport(str(self.socket)),
            base_url="http://chrysalis",
            timeout=timeout,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object | TracebackType) -> None:
        self.close()

    def _do(self, call: Call[T]) -> T:
        self._check_socket()
        try:
            r = self._http.request(
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

    def raw(self, call: Call[Any]) -> Any:
        """Send ``call`` and return the answer undecoded by models: JSON, text or bytes."""
        return self._do(replace(call, parse=raw_answer))

    def send(self, call: Call[T]) -> T:
        """Send ``call`` and return its answer as ``call.parse`` reads it."""
        return self._do(call)

    # ---- the routes (AsyncClient has the same, awaitable) ----------------------------------

    def ping(self) -> bool:
        """True when a daemon answers on the socket."""
        return self._do(Routes.ping)

    def health(self) -> dict[str, Any]:
        """Liveness: 200 and the version while the daemon serves."""
        return self._do(Routes.health)

    def status(self) -> dict[str, Any]:
        """replica_id, state_digest, counts, index state, embedder, jobs, sync state."""
        return self._do(Routes.status)

    def memories(self) -> list[dict[str, Any]]:
        """Every memory the daemon serves (name, data dir, replica id, remote, beads)."""
        answer: dict[str, Any] = self._do(Routes.memories)
        return list(answer["memories"])

    def create_memory(self, name: str, **settings: Any) -> dict[str, Any]:
        """A new named memory with settings of its own (remote, sync_key_file, ...)."""
        return self._do(Routes.create_memory(name, settings))

    def drop_memory(self, name: str) -> dict[str, Any]:
        """Forget all of memory ``name`` (here, on its remote, on its other laptops) and
        delete it; the receipt says what was done where."""
        return self._do(Routes.drop_memory(name))

    def remember(
        self,
        content: str,
        **fields: Unpack[BeadFields],
    ) -> Bead:
        """Append one bead; returns it with its id. The same id and fields again is a no-op.
        Without ``importance`` the daemon judges one from how new its words are."""
        return self._do(Routes.remember(bead_body(content, **fields)))

    def remember_many(self, beads: Iterable[Mapping[str, Any]]) -> list[Bead]:
        """Append many beads in one commit, all or nothing."""
        return self._do(Routes.remember_many(beads))

    def get_bead(self, id: str) -> Bead:
        return self._do(Routes.get_bead(id))

    def last_beads(
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
        """The newest ``n`` beads, oldest first; of one session, with a tag, of a role, from
        an ingested path (a file or a directory), holding every word of ``query``, stamped
        after / before a time: every filter given must hold."""
        filters = {"tag": tag, "role": role, "path": path, "query": query,
                   "after": after, "before": before}  # fmt: skip
        return self._do(Routes.last_beads(n, session_id, filters))

    def sessions(self) -> list[dict[str, Any]]:
        """Each session: ``session_id``, ``beads``, ``first_ts`` and ``last_ts`` (epoch
        seconds), the most recently active first."""
        return self._do(Routes.sessions)

    def forget_receipt(self, id: str) -> ForgetReceipt:
        """Where forgotten bead ``id`` is gone, and where it may remain (`forget.receipt`)."""
        return self._do(Routes.forget_receipt(id))

    def forget(self, id: str) -> None:
        """Erase a bead here and, through sync, on every replica."""
        return self._do(Routes.forget(id))

    def forget_where(
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
        """Forget beads by what they are (every field given must hold; an empty selector
        raises `InvalidInput`). A dry run by default: ``{matched, more, beads, expect_digest}``
        (the first 50 beads), nothing changed. With ``dry_run=False``: ``{forgotten, ids,
        matched, more, expect_digest}`` (at most 10,000 per call; ``expect_digest``: of the
        rest). ``expect_digest`` (the dry run's) makes a match of other beads raise
        `SelectionChanged` and forget nothing; ``expect`` (a count) may go with it, and alone
        raises `InvalidInput`."""
        selector = selector_body(session_id, path, tag, query, before, after, role)
        return self._do(Routes.forget_where(selector, dry_run, expect, expect_digest))

    def recall(
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
        """Fused retrieval: items with ``signals`` (why they matched) and ``provenance``;
        ``now`` is when the query is asked (the daemon's clock by default); ``as_of`` walks
        the facts that held then (those that hold now by default). With ``memories``, one
        ranking over those named memories, each item's provenance naming its own.
        ``min_score`` leaves out items scoring under it (a relevance floor)."""
        return self._do(
            Routes.recall(
                query, k, token_budget, strategy, filters, now, as_of, memories, min_score
            )
        )

    def context(
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
        """What to put in the prompt to answer ``query`` (`chrysalis.Memory.context`):
        ``text`` (a block citing ids), ``facts`` (what held at the time the question is
        about first, with since, until and evidence), ``items`` (beads and summaries), within
        ``token_budget``; empty when nothing in memory bears on it. ``session_id``'s latest
        ``recent`` turns (6 by default), the turn being answered and ``exclude`` are left
        out; with ``memories``, those named memories are read instead."""
        return self._do(
            Routes.context(query, token_budget, session_id, exclude, now, memories, recent)
        )

    def add_node(
        self,
        id: str,
        type: str,
        *,
        name: str | None = None,
        labels: Iterable[str] = (),
        metadata: Mapping[str, Any] | None = None,
    ) -> Node:
        """Add or replace a node."""
        return self._do(Routes.add_node(id, type, name, labels, metadata))

    def get_node(self, id: str) -> Node:
        return self._do(Routes.get_node(id))

    def remove_node(self, id: str) -> None:
        return self._do(Routes.remove_node(id))

    def add_edge(
        self,
        source: str,
        target: str,
        predicate: str,
        *,
        id: str | None = None,
        weight: float = 1.0,
        evidence: Iterable[str] = (),
    ) -> Edge:
        """An edge between existing nodes; without ``id`` it is named by the triple."""
        return self._do(Routes.add_edge(source, target, predicate, id, weight, evidence))

    def add_fact(
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
        """Record ``subject -[predicate]-> object`` in one atomic write: the nodes missing
        (named by their text, made with ``type``) and the edge. The same fact twice is one
        edge. Returns the edge."""
        return self._do(
            Routes.add_fact(
                subject, predicate, object, type, weight, evidence, valid_at, invalid_at
            )
        )

    def get_edge(self, id: str) -> Edge:
        return self._do(Routes.get_edge(id))

    def remove_edge(self, id: str) -> None:
        return self._do(Routes.remove_edge(id))

    def neighbors(
        self,
        node_id: str,
        *,
        depth: int = 1,
        as_of: datetime | float | None = None,
        include_invalid: bool = False,
    ) -> list[Neighbor]:
        """Nodes within ``depth`` hops, with the edge taken, over the facts that hold now
        (or at ``as_of``; every fact with ``include_invalid``)."""
        return self._do(Routes.neighbors(node_id, depth, as_of, include_invalid))

    def get_persona(self) -> Persona:
        return self._do(Routes.persona)

    def put_persona(self, persona: Persona | Mapping[str, Any]) -> Persona:
        """Replace the persona."""
        return self._do(Routes.put_persona(persona))

    def update_persona(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        goals: Iterable[str] | None = None,
        norms: Iterable[str] | None = None,
        skills: Iterable[str] | None = None,
        traits: Mapping[str, str | None] | None = None,
    ) -> Persona:
        """Change only the fields given (None: unchanged), in one write; concurrent changes
        to other fields survive. A list replaces the list; ``traits`` merge key by key and a
        trait set to None is deleted. Returns the persona."""
        return self._do(
            Routes.update_persona(persona_patch(name, description, goals, norms, skills, traits))
        )

    def list_skills(self) -> list[Skill]:
        return self._do(Routes.skills)

    def get_skill(self, id: str) -> Skill:
        return self._do(Routes.get_skill(id))

    def put_skill(self, skill: Skill | Mapping[str, Any]) -> Skill:
        """Add or replace a skill (by its id)."""
        return self._do(Routes.put_skill(skill))

    def delete_skill(self, id: str) -> None:
        return self._do(Routes.delete_skill(id))

    def export(self) -> bytes:
        """Everything visible as JSON Lines: a header line, then one item per line."""
        return self._do(Routes.export)

    def import_lines(self, lines: bytes | Iterable[bytes]) -> dict[str, Any]:
        """Load `export` output, all or nothing; items already here are skipped (idempotent).
        ``lines`` may be an iterable of byte chunks (a file read piecewise): it is streamed."""
        return self._do(Routes.import_lines(lines))

    def ingest(
        self,
        *,
        path: str | None = None,
        text: str | None = None,
        source: str | None = None,
        kind: str | None = None,
        session_id: str | None = None,
    ) -> dict[str, Any]:
        """Chunk a file, a directory (an absolute path the daemon reads) or ``text`` into
        beads with span refs; unchanged input changes nothing."""
        return self._do(Routes.ingest(ingest_body(path, text, source, kind, session_id)))

    def sync(
        self,
        *,
        push: bool = True,
        pull: bool = True,
        snapshot: bool = False,
        decommission: str | None = None,
        repair_format: bool = False,
    ) -> dict[str, Any]:
        """Push to the remote and pull from it now (and publish a snapshot if asked; retire a
        laptop's replica id if asked; first put back a deleted or rewritten ``format.json`` if
        asked); what moved, per remote and mirror."""
        return self._do(Routes.sync(push, pull, snapshot, decommission, repair_format))

    def metrics(self) -> str:
        """Prometheus text exposition."""
        return self._do(Routes.metrics)

    def doctor(self) -> dict[str, Any]:
        """The daemon's checks, each with what to do about a problem."""
        return self._do(Routes.doctor)
