"""`Client` and `AsyncClient`: the daemon's HTTP API over its Unix socket, one method per route.

Agents import this, not the storage engine::

    from chrysalis import Client
    with Client() as client:                       # $CHRYSALIS_SOCKET or the default path
        bead = client.remember("the user prefers tea", session_id="s1")
        for item in client.recall("what does the user drink?", k=5).items:
            print(item.score, item.text, item.provenance["origin_replica"])

Errors come back as the `chrysalis.errors` class the daemon named (`InvalidInput`,
`NotFound`, `Conflict`, ...); nothing listening on the socket raises `DaemonNotRunning` with a
hint. Both clients are safe to share between threads (sync) or tasks (async).
"""

from __future__ import annotations

import functools
import os
import select
import socket
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar
from urllib.parse import quote

import httpcore
import httpx

from .errors import ChrysalisError, DaemonNotRunning, InternalError, NotReady, error_class

if TYPE_CHECKING:
    from .models import Bead, Edge, Neighbor, Node, Persona, RetrievalResult, Skill

__all__ = ["AsyncClient", "Call", "Client", "Routes", "default_socket_path"]

T = TypeVar("T")
DEFAULT_TIMEOUT = 30.0


def default_socket_path() -> Path:
    """``$CHRYSALIS_SOCKET``, else ``$XDG_RUNTIME_DIR/chrysalis/chrysalis.sock``, else
    ``/tmp/chrysalis-$UID/chrysalis.sock``."""
    if env := os.environ.get("CHRYSALIS_SOCKET"):
        return Path(env).expanduser()
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) / "chrysalis" if runtime else Path(f"/tmp/chrysalis-{os.getuid()}")
    return base / "chrysalis.sock"


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request and how to read its answer (`Routes` makes them; both clients send them)."""

    method: str
    path: str
    parse: Callable[[httpx.Response], T]
    json: Any = None
    params: Mapping[str, Any] = field(default_factory=dict)
    content: bytes | None = None


def _json(r: httpx.Response) -> Any:
    return r.json()


def _nothing(r: httpx.Response) -> None:
    return None


# pydantic and the models are imported at the first answer that needs them, not with the
# client: the CLI prints raw JSON and starts ~80 ms faster without them.


def _model(name: str) -> Callable[[httpx.Response], Any]:
    def parse(r: httpx.Response) -> Any:
        from . import models

        return getattr(models, name).model_validate_json(r.content)

    return parse


def _list(name: str) -> Callable[[httpx.Response], Any]:
    return lambda r: _adapter(name).validate_json(r.content)


@functools.cache
def _adapter(name: str) -> Any:
    from pydantic import TypeAdapter

    from . import models

    return TypeAdapter(list[getattr(models, name)])  # type: ignore[arg-type,misc]


def _raw(r: httpx.Response) -> Any:
    """An answer as it came: decoded JSON, text, bytes, or None for 204."""
    if r.status_code == 204:
        return None
    kind = r.headers.get("content-type", "")
    if kind.startswith("application/json"):
        return r.json()
    return r.text if kind.startswith("text/") else r.content


def _seg(id: str) -> str:
    """An id as one path segment: whatever it holds, it cannot climb out of its route."""
    return quote(id, safe="")


def _drop_none(d: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def _ts(value: Any) -> Any:
    """A timestamp as JSON can carry it: a datetime as ISO 8601, anything else as given."""
    return value.isoformat() if isinstance(value, datetime) else value


def _error(r: httpx.Response) -> ChrysalisError:
    """The `ChrysalisError` an error answer names (its ``code``), with its message."""
    try:
        body = r.json()["error"]
        cls = error_class(str(body["code"]))
        return cls(str(body["message"]), details=body.get("details"))
    except (ValueError, KeyError, TypeError):
        cls = InternalError if r.status_code >= 500 else ChrysalisError
        return cls(f"daemon answered {r.status_code}: {r.text[:200]}")


def _bead_body(
    content: str,
    id: str | None,
    role: str,
    session_id: str | None,
    turn_id: str | None,
    ts: Any,
    importance: float,
    tags: Iterable[str],
    source: str | None,
    span_refs: Iterable[Any],
) -> dict[str, Any]:
    body = {
        "content": content, "id": id, "role": role, "session_id": session_id,
        "turn_id": turn_id, "ts": ts, "importance": importance, "tags": list(tags),
        "source": source,
        "span_refs": [s if isinstance(s, Mapping) else s.model_dump() for s in span_refs],
    }  # fmt: skip
    return _drop_none(body)


class Routes:
    """Each route as a `Call`: the one place that knows paths, bodies and answer types.

    ``client.raw(Routes.recall("tea", 5, None, "fusion", None))`` sends one and returns the
    answer as decoded JSON (what the CLI prints)."""

    ping: Call[bool] = Call("GET", "/_ping", lambda r: r.text == "OK")
    health: Call[dict[str, Any]] = Call("GET", "/v1/health", _json)
    status: Call[dict[str, Any]] = Call("GET", "/v1/status", _json)
    persona: Call[Persona] = Call("GET", "/v1/persona", _model("Persona"))
    skills: Call[list[Skill]] = Call("GET", "/v1/skills", _list("Skill"))
    export: Call[bytes] = Call("GET", "/v1/export", lambda r: r.content)
    doctor: Call[dict[str, Any]] = Call("GET", "/v1/doctor", _json)
    metrics: Call[str] = Call("GET", "/metrics", lambda r: r.text)

    @staticmethod
    def remember(body: dict[str, Any]) -> Call[Bead]:
        return Call("POST", "/v1/beads", _model("Bead"), json=body)

    @staticmethod
    def remember_many(beads: Iterable[Mapping[str, Any]]) -> Call[list[Bead]]:
        return Call("POST", "/v1/beads", _list("Bead"), json=[dict(b) for b in beads])

    @staticmethod
    def get_bead(id: str) -> Call[Bead]:
        return Call("GET", f"/v1/beads/{_seg(id)}", _model("Bead"))

    @staticmethod
    def last_beads(n: int, session_id: str | None) -> Call[list[Bead]]:
        params = _drop_none({"limit": n, "session_id": session_id})
        return Call("GET", "/v1/beads", _list("Bead"), params=params)

    @staticmethod
    def forget(id: str) -> Call[None]:
        return Call("DELETE", f"/v1/beads/{_seg(id)}", _nothing)

    @staticmethod
    def recall(
        query: str, k: int, token_budget: int | None, strategy: str, filters: Any
    ) -> Call[RetrievalResult]:
        body = _drop_none(
            {"query": query, "k": k, "token_budget": token_budget, "strategy": strategy,
             "filters": dict(filters) if filters else None}
        )  # fmt: skip
        return Call("POST", "/v1/retrieve", _model("RetrievalResult"), json=body)

    @staticmethod
    def add_node(
        id: str, type: str, name: str | None, labels: Iterable[str], metadata: Any
    ) -> Call[Node]:
        body = _drop_none(
            {"id": id, "type": type, "name": name, "labels": list(labels),
             "metadata": dict(metadata) if metadata else None}
        )  # fmt: skip
        return Call("POST", "/v1/kg/nodes", _model("Node"), json=body)

    @staticmethod
    def get_node(id: str) -> Call[Node]:
        return Call("GET", f"/v1/kg/nodes/{_seg(id)}", _model("Node"))

    @staticmethod
    def remove_node(id: str) -> Call[None]:
        return Call("DELETE", f"/v1/kg/nodes/{_seg(id)}", _nothing)

    @staticmethod
    def add_edge(
        source: str,
        target: str,
        predicate: str,
        id: str | None,
        weight: float,
        evidence: Iterable[str],
    ) -> Call[Edge]:
        body = _drop_none(
            {"source": source, "target": target, "predicate": predicate, "id": id,
             "weight": weight, "evidence": list(evidence)}
        )  # fmt: skip
        return Call("POST", "/v1/kg/edges", _model("Edge"), json=body)

    @staticmethod
    def add_fact(
        subject: str,
        predicate: str,
        object: str,
        type: str = "entity",
        weight: float = 1.0,
        evidence: Iterable[str] = (),
        valid_at: Any = None,
        invalid_at: Any = None,
    ) -> Call[Edge]:
        body = _drop_none(
            {"subject": subject, "predicate": predicate, "object": object, "type": type,
             "weight": weight, "evidence": list(evidence), "valid_at": _ts(valid_at),
             "invalid_at": _ts(invalid_at)}
        )  # fmt: skip
        return Call("POST", "/v1/kg/facts", _model("Edge"), json=body)

    @staticmethod
    def get_edge(id: str) -> Call[Edge]:
        return Call("GET", f"/v1/kg/edges/{_seg(id)}", _model("Edge"))

    @staticmethod
    def remove_edge(id: str) -> Call[None]:
        return Call("DELETE", f"/v1/kg/edges/{_seg(id)}", _nothing)

    @staticmethod
    def neighbors(node_id: str, depth: int) -> Call[list[Neighbor]]:
        path = f"/v1/kg/nodes/{_seg(node_id)}/neighbors"
        return Call("GET", path, _list("Neighbor"), params={"depth": depth})

    @staticmethod
    def put_persona(persona: Persona | Mapping[str, Any]) -> Call[Persona]:
        body = persona.model_dump() if hasattr(persona, "model_dump") else dict(persona)
        return Call("PUT", "/v1/persona", _model("Persona"), json=body)

    @staticmethod
    def update_persona(fields: Mapping[str, Any]) -> Call[Persona]:
        return Call("PATCH", "/v1/persona", _model("Persona"), json=dict(fields))

    @staticmethod
    def get_skill(id: str) -> Call[Skill]:
        return Call("GET", f"/v1/skills/{_seg(id)}", _model("Skill"))

    @staticmethod
    def put_skill(skill: Skill | Mapping[str, Any]) -> Call[Skill]:
        body = skill.model_dump() if hasattr(skill, "model_dump") else dict(skill)
        return Call(
            "PUT", f"/v1/skills/{_seg(str(body.get('id', '')))}", _model("Skill"), json=body
        )

    @staticmethod
    def delete_skill(id: str) -> Call[None]:
        return Call("DELETE", f"/v1/skills/{_seg(id)}", _nothing)

    @staticmethod
    def import_lines(lines: bytes) -> Call[dict[str, Any]]:
        return Call("POST", "/v1/import", _json, content=lines)

    @staticmethod
    def ingest(body: dict[str, Any]) -> Call[dict[str, Any]]:
        return Call("POST", "/v1/ingest", _json, json=body)

    @staticmethod
    def sync(
        push: bool = True,
        pull: bool = True,
        snapshot: bool = False,
        decommission: str | None = None,
    ) -> Call[dict[str, Any]]:
        body = {"push": push, "pull": pull, "snapshot": snapshot, "decommission": decommission}
        return Call("POST", "/v1/sync", _json, json=body)


def _ingest_body(
    path: str | None, text: str | None, source: str | None, kind: str | None, session: str | None
) -> dict[str, Any]:
    body = {"path": path, "text": text, "source": source, "kind": kind, "session_id": session}
    return {k: v for k, v in body.items() if v is not None}


def _persona_patch(
    name: str | None,
    description: str | None,
    goals: Iterable[str] | None,
    norms: Iterable[str] | None,
    skills: Iterable[str] | None,
    traits: Mapping[str, str | None] | None,
) -> dict[str, Any]:
    lists = {"goals": goals, "norms": norms, "skills": skills}
    body: dict[str, Any] = {k: list(v) for k, v in lists.items() if v is not None}
    if traits is not None:
        body["traits"] = dict(traits)
    return _drop_none({"name": name, "description": description}) | body


class _UnixBackend(httpcore.SyncBackend):
    """httpcore's blocking Unix-socket connect, closing the socket when the connect fails
    (httpcore's own leaves it to the garbage collector, with a ResourceWarning)."""

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.NetworkStream:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(timeout)
            sock.connect(path)
        except TimeoutError as exc:
            sock.close()
            raise httpcore.ConnectTimeout(str(exc)) from exc
        except OSError as exc:
            sock.close()
            raise httpcore.ConnectError(str(exc)) from exc
        return _UnixStream(sock)


class _UnixStream(httpcore.NetworkStream):
    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            self._sock.settimeout(timeout)
            return self._sock.recv(max_bytes)
        except TimeoutError as exc:
            raise httpcore.ReadTimeout(str(exc)) from exc
        except OSError as exc:
            raise httpcore.ReadError(str(exc)) from exc

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        try:
            self._sock.settimeout(timeout)
            self._sock.sendall(buffer)
        except TimeoutError as exc:
            raise httpcore.WriteTimeout(str(exc)) from exc
        except OSError as exc:
            raise httpcore.WriteError(str(exc)) from exc

    def close(self) -> None:
        self._sock.close()

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            # httpcore asks before reusing an idle keep-alive connection: readable means the
            # daemon closed it (an idle timeout, a restart), so a fresh one is opened
            return _readable(self._sock)
        return self._sock if info == "socket" else None


def _readable(sock: socket.socket) -> bool:
    if sock.fileno() < 0:
        return True
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0))


def _sync_transport(path: str) -> httpx.HTTPTransport:
    transport = httpx.HTTPTransport(uds=path)
    transport._pool = httpcore.ConnectionPool(uds=path, network_backend=_UnixBackend())
    return transport


class _Transport:
    """What both clients share: where the socket is, and how answers become values or errors."""

    def __init__(self, socket: str | Path | None, timeout: float) -> None:
        self.socket = Path(socket).expanduser() if socket is not None else default_socket_path()
        self.timeout = timeout

    def _not_running(self, exc: Exception) -> DaemonNotRunning:
        return DaemonNotRunning(
            f"no daemon at {self.socket}; start it with `chrysalis daemon`"
            + (f" (or set CHRYSALIS_SOCKET): {exc}" if str(exc) else "")
        )

    def _broke(self, exc: Exception) -> DaemonNotRunning:
        return DaemonNotRunning(
            f"the connection to the daemon at {self.socket} broke mid-request (it stopped or "
            f"restarted; the request may or may not have been applied): {exc}"
        )

    def _check_socket(self) -> None:
        if not self.socket.exists():  # the usual "not running": say so without a connect
            raise self._not_running(FileNotFoundError())

    def _timed_out(self) -> NotReady:
        return NotReady(f"the daemon at {self.socket} did not answer within {self.timeout:g} s")

    @staticmethod
    def _read(call: Call[T], r: httpx.Response) -> T:
        if r.status_code >= 400:
            raise _error(r)
        return call.parse(r)


class Client(_Transport):
    """The daemon's API, blocking. ``Client(socket=None, timeout=30.0)``."""

    def __init__(self, socket: str | Path | None = None, *, timeout: float = DEFAULT_TIMEOUT):
        super().__init__(socket, timeout)
        self._http = httpx.Client(
            transport=_sync_transport(str(self.socket)),
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
                call.method, call.path, json=call.json, params=call.params, content=call.content
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
        return self._do(replace(call, parse=_raw))

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

    def remember(
        self,
        content: str,
        *,
        id: str | None = None,
        role: str = "user",
        session_id: str | None = None,
        turn_id: str | None = None,
        ts: Any = None,
        importance: float = 0.5,
        tags: Iterable[str] = (),
        source: str | None = None,
        span_refs: Iterable[Any] = (),
    ) -> Bead:
        """Append one bead; returns it with its id. The same id and fields again is a no-op."""
        return self._do(
            Routes.remember(
                _bead_body(
                    content, id, role, session_id, turn_id, ts, importance, tags, source, span_refs
                )
            )
        )

    def remember_many(self, beads: Iterable[Mapping[str, Any]]) -> list[Bead]:
        """Append many beads in one commit, all or nothing."""
        return self._do(Routes.remember_many(beads))

    def get_bead(self, id: str) -> Bead:
        return self._do(Routes.get_bead(id))

    def last_beads(self, n: int = 50, *, session_id: str | None = None) -> list[Bead]:
        """The newest ``n`` beads (of one session), oldest first."""
        return self._do(Routes.last_beads(n, session_id))

    def forget(self, id: str) -> None:
        """Erase a bead here and, through sync, on every replica."""
        return self._do(Routes.forget(id))

    def recall(
        self,
        query: str,
        *,
        k: int = 10,
        token_budget: int | None = None,
        strategy: str = "fusion",
        filters: Mapping[str, Any] | None = None,
    ) -> RetrievalResult:
        """Fused retrieval: items with ``signals`` (why they matched) and ``provenance``."""
        return self._do(Routes.recall(query, k, token_budget, strategy, filters))

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

    def neighbors(self, node_id: str, *, depth: int = 1) -> list[Neighbor]:
        """Nodes within ``depth`` hops, with the edge taken."""
        return self._do(Routes.neighbors(node_id, depth))

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
            Routes.update_persona(_persona_patch(name, description, goals, norms, skills, traits))
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

    def import_lines(self, lines: bytes) -> dict[str, Any]:
        """Load `export` output; items already here are skipped (idempotent)."""
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
        return self._do(Routes.ingest(_ingest_body(path, text, source, kind, session_id)))

    def sync(
        self,
        *,
        push: bool = True,
        pull: bool = True,
        snapshot: bool = False,
        decommission: str | None = None,
    ) -> dict[str, Any]:
        """Push to the remote and pull from it now (and publish a snapshot if asked; retire a
        laptop's replica id if asked); what moved, per remote and mirror."""
        return self._do(Routes.sync(push, pull, snapshot, decommission))

    def metrics(self) -> str:
        """Prometheus text exposition."""
        return self._do(Routes.metrics)

    def doctor(self) -> dict[str, Any]:
        """The daemon's checks, each with what to do about a problem."""
        return self._do(Routes.doctor)


class AsyncClient(_Transport):
    """The daemon's API for asyncio; the same methods as `Client`, awaitable."""

    def __init__(self, socket: str | Path | None = None, *, timeout: float = DEFAULT_TIMEOUT):
        super().__init__(socket, timeout)
        self._http = httpx.AsyncClient(
            transport=httpx.AsyncHTTPTransport(uds=str(self.socket)),
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
                call.method, call.path, json=call.json, params=call.params, content=call.content
            )
        except (httpx.ConnectError, httpx.RemoteProtocolError) as exc:
            raise self._not_running(exc) from exc
        except httpx.TimeoutException as exc:
            raise self._timed_out() from exc
        except httpx.TransportError as exc:  # reset or closed mid-request: it stopped
            raise self._broke(exc) from exc
        return self._read(call, r)

    async def ping(self) -> bool:
        return await self._do(Routes.ping)

    async def health(self) -> dict[str, Any]:
        return await self._do(Routes.health)

    async def status(self) -> dict[str, Any]:
        return await self._do(Routes.status)

    async def remember(
        self,
        content: str,
        *,
        id: str | None = None,
        role: str = "user",
        session_id: str | None = None,
        turn_id: str | None = None,
        ts: Any = None,
        importance: float = 0.5,
        tags: Iterable[str] = (),
        source: str | None = None,
        span_refs: Iterable[Any] = (),
    ) -> Bead:
        return await self._do(
            Routes.remember(
                _bead_body(
                    content, id, role, session_id, turn_id, ts, importance, tags, source, span_refs
                )
            )
        )

    async def remember_many(self, beads: Iterable[Mapping[str, Any]]) -> list[Bead]:
        return await self._do(Routes.remember_many(beads))

    async def get_bead(self, id: str) -> Bead:
        return await self._do(Routes.get_bead(id))

    async def last_beads(self, n: int = 50, *, session_id: str | None = None) -> list[Bead]:
        return await self._do(Routes.last_beads(n, session_id))

    async def forget(self, id: str) -> None:
        return await self._do(Routes.forget(id))

    async def recall(
        self,
        query: str,
        *,
        k: int = 10,
        token_budget: int | None = None,
        strategy: str = "fusion",
        filters: Mapping[str, Any] | None = None,
    ) -> RetrievalResult:
        return await self._do(Routes.recall(query, k, token_budget, strategy, filters))

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

    async def neighbors(self, node_id: str, *, depth: int = 1) -> list[Neighbor]:
        return await self._do(Routes.neighbors(node_id, depth))

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
            Routes.update_persona(_persona_patch(name, description, goals, norms, skills, traits))
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
        return await self._do(Routes.ingest(_ingest_body(path, text, source, kind, session_id)))

    async def sync(
        self,
        *,
        push: bool = True,
        pull: bool = True,
        snapshot: bool = False,
        decommission: str | None = None,
    ) -> dict[str, Any]:
        return await self._do(Routes.sync(push, pull, snapshot, decommission))

    async def metrics(self) -> str:
        return await self._do(Routes.metrics)

    async def doctor(self) -> dict[str, Any]:
        return await self._do(Routes.doctor)
