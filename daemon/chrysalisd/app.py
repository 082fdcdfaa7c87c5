"""The daemon's HTTP API (DESIGN §9): routes, request models, one error shape, the guard.

Every answer carries ``Chrysalis-Version``; every error is
``{"error": {"code": "...", "message": "...", "details": ...}}`` with the status its class
names (its `status`). Handlers are plain functions run on the server's thread pool: the memory is
thread-safe and concurrent writers share group commits.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    RootModel,
    ValidationError,
    model_validator,
)
from pydantic import Tag as UnionTag
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

import chrysalis
from chrysalis import errors
from chrysalis.models import (
    MAX_LIST_ITEMS,
    MAX_SHORT_CHARS,
    Bead,
    Content,
    Edge,
    Filters,
    Id,
    Neighbor,
    Node,
    Persona,
    RetrievalResult,
    Role,
    Score,
    ShortText,
    Skill,
    SpanRef,
    Strategy,
    Tag,
    Text,
    Timestamp,
)

from .exchange import export_lines, import_lines
from .state import Daemon, Metrics

log = logging.getLogger("chrysalisd.http")

VERSION = chrysalis.__version__


def status_of(exc: errors.ChrysalisError) -> int:
    """The HTTP status of a Chrysalis error: each class names its own (`chrysalis.errors`)."""
    return exc.status


def error_response(
    status: int, code: str, message: str, details: Any = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    body = {"error": {"code": code, "message": message, "details": details}}
    return JSONResponse(body, status_code=status, headers=headers)


# ---- request bodies ------------------------------------------------------------------------


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class BeadIn(_In):
    """A bead to append. Without ``id`` one is generated; without ``ts``, now."""

    content: Content
    id: Id | None = None
    role: Role = "user"
    session_id: Id | None = None
    turn_id: Id | None = None
    ts: Timestamp | None = None
    importance: Annotated[float, Field(ge=0.0, le=1.0)] = 0.5
    tags: Annotated[list[Tag], Field(max_length=MAX_LIST_ITEMS)] = []
    source: ShortText | None = None
    span_refs: Annotated[list[SpanRef], Field(max_length=MAX_LIST_ITEMS)] = []


class BeadsIn(
    RootModel[
        Annotated[
            Annotated[BeadIn, UnionTag("one")]
            | Annotated[Annotated[list[BeadIn], Field(max_length=10_000)], UnionTag("many")],
            Discriminator(lambda v: "many" if isinstance(v, list) else "one"),
        ]
    ]
):
    """One bead (an object) or a batch (an array)."""


class RetrieveIn(_In):
    query: Annotated[Text, Field(min_length=1)]
    k: Annotated[int, Field(ge=1, le=1000)] = 10
    token_budget: Annotated[int, Field(ge=1, le=10_000_000)] | None = None
    strategy: Strategy = "fusion"
    filters: Filters | None = None


class IngestIn(_In):
    """Exactly one of ``path`` (a file or directory the daemon reads, absolute) or ``text``."""

    path: Annotated[str, Field(min_length=1, max_length=4096)] | None = None
    text: str | None = None
    source: Annotated[str, Field(min_length=1, max_length=512)] | None = None
    kind: Literal["markdown", "python", "code", "text"] | None = None
    session_id: Id | None = None

    @model_validator(mode="after")
    def one_input(self) -> IngestIn:
        if (self.path is None) == (self.text is None):
            raise ValueError("give exactly one of path or text")
        if self.path is not None and not self.path.startswith("/"):
            raise ValueError("path must be absolute (the daemon's working directory is not yours)")
        return self


class EdgeIn(_In):
    """An edge between existing nodes; without ``id`` it is named by the triple."""

    source: Id
    target: Id
    predicate: Annotated[str, Field(min_length=1, max_length=128)]
    id: Id | None = None
    weight: Score = 1.0
    evidence: Annotated[list[Id], Field(max_length=MAX_LIST_ITEMS)] = []
    valid_at: Timestamp | None = None
    invalid_at: Timestamp | None = None


NodeName = Annotated[str, Field(min_length=1, max_length=MAX_SHORT_CHARS)]


class FactIn(_In):
    """``subject -[predicate]-> object``: the nodes are named by their text (`chrysalis.graph`),
    made with ``type`` when missing, and the edge by the triple; all in one write."""

    subject: NodeName
    predicate: Annotated[str, Field(min_length=1, max_length=128)]
    object: NodeName
    type: Annotated[str, Field(min_length=1, max_length=64)] = "entity"
    weight: Score = 1.0
    evidence: Annotated[list[Id], Field(max_length=MAX_LIST_ITEMS)] = []
    valid_at: Timestamp | None = None
    invalid_at: Timestamp | None = None


class SkillIn(_In):
    """A skill; its id is the path's (a body ``id``, if given, must agree)."""

    id: Id | None = None
    name: ShortText
    description: Text = ""
    signature: Text = ""
    examples: Annotated[list[Text], Field(max_length=MAX_LIST_ITEMS)] = []
    tags: Annotated[list[Tag], Field(max_length=MAX_LIST_ITEMS)] = []


class NodeIn(Node):
    """A node to add or replace."""

    model_config = ConfigDict(defer_build=False)  # FastAPI builds bodies eagerly


class PersonaIn(Persona):
    """The whole persona; fields left out take their defaults."""

    model_config = ConfigDict(defer_build=False)


def _no_defaults(schema: dict[str, Any]) -> None:
    # A field left out of a patch keeps its value: the schema shows no default.
    for prop in schema.get("properties", {}).values():
        prop.pop("default", None)


class PersonaPatch(_In):
    """The persona fields to change; those left out keep their value. A list given replaces
    the list (additions made concurrently on other laptops are kept); ``traits`` merge key by
    key, and a trait set to null is deleted."""

    model_config = ConfigDict(json_schema_extra=_no_defaults)

    # Only the fields sent are applied (`exclude_unset`): these defaults are never written.
    name: ShortText = ""
    description: Text = ""
    goals: Annotated[list[Text], Field(max_length=MAX_LIST_ITEMS)] = []
    norms: Annotated[list[Text], Field(max_length=MAX_LIST_ITEMS)] = []
    skills: Annotated[list[Id], Field(max_length=MAX_LIST_ITEMS)] = []
    traits: Annotated[dict[Tag, ShortText | None], Field(max_length=MAX_LIST_ITEMS)] = {}


class Health(BaseModel):
    status: Literal["ok"]
    version: str
    replica_id: str


class SyncIn(BaseModel):
    """What to do now: push, then pull (both by default), then a snapshot if asked."""

    model_config = ConfigDict(extra="forbid")
    push: bool = True
    pull: bool = True
    snapshot: bool = False
    decommission: Id | None = Field(
        None, description="a replica id of a laptop that will not come back"
    )


class ImportResult(BaseModel):
    added: dict[str, int]
    unchanged: dict[str, int]
    forgotten: int = Field(description="beads left out because they were forgotten here")


# ---- the guard: origin, body size, version header, metrics ---------------------------------

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
DRAIN_LIMIT = 1024**3  # past this an oversized body is not read to the end; the socket closes


class Guard:
    """Pure ASGI middleware in front of every route.

    - ``Origin`` or ``Referer`` present: 403. A browser page must never reach the memory
      (DNS rebinding, a local web page); agents and curl send neither.
    - Bodies over ``max_body`` bytes: 413, read to the end and dropped so the client gets the
      answer instead of a broken pipe (up to `DRAIN_LIMIT`).
    - ``Chrysalis-Version`` on every answer; each request counted in `Metrics`.
    """

    def __init__(self, app: ASGIApp, max_body: int, metrics: Metrics) -> None:
        self.app = app
        self.max_body = max_body
        self.metrics = metrics
        self.version_header = (b"chrysalis-version", VERSION.encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_versioned(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", []), self.version_header]
            await send(message)

        try:
            await self._guarded(scope, receive, send_versioned)
        finally:
            route = scope.get("route")
            name = getattr(route, "path", None) or "unmatched"
            self.metrics.observe(scope["method"], name, status, time.perf_counter() - started)

    async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope["headers"])
        if b"origin" in headers or b"referer" in headers:
            which = "Origin" if b"origin" in headers else "Referer"
            await self._refuse(
                scope, receive, send, 403, "forbidden",
                f"requests carrying {which} are refused: the memory is not for web pages",
            )  # fmt: skip
            return
        if scope["method"] in ("POST", "PUT", "PATCH") and scope["path"] != "/v1/import":
            # Every body here is JSON, whatever the client labelled it (`curl -d` says
            # form-urlencoded): parse it as JSON so a mistake is reported as one.
            scope["headers"] = [(k, v) for k, v in scope["headers"] if k != b"content-type"] + [
                (b"content-type", b"application/json")
            ]
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body:
            await self._too_large(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            more = message.get("more_body", False)
            if size > self.max_body:
                await self._too_large(scope, receive, send, more=more)
                return
            chunks.append(chunk)
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _too_large(
        self, scope: Scope, receive: Receive, send: Send, *, more: bool = True
    ) -> None:
        await self._refuse(
            scope, receive, send, 413, "too_large",
            f"request body over the limit of {self.max_body} bytes (max_body_bytes)",
            more=more,
        )  # fmt: skip

    async def _refuse(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        status: int,
        code: str,
        message: str,
        *,
        more: bool = True,
    ) -> None:
        """Answer with an error after reading what is left of the body (``more``)."""
        drained = 0
        while more and drained <= DRAIN_LIMIT:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                return
            drained += len(msg.get("body", b""))
            more = msg.get("more_body", False)
        await error_response(status, code, message)(scope, receive, send)


# ---- the application -----------------------------------------------------------------------


async def _daemon(request: Request) -> Daemon:
    daemon: Daemon = request.app.state.daemon
    return daemon


D = Annotated[Daemon, Depends(_daemon)]
PathId = Annotated[str, Path(description="an item id", max_length=256)]
JSON = "application/json"


def _json(model: BaseModel, status: int = 200) -> Response:
    return Response(model.model_dump_json(), status_code=status, media_type=JSON)


def _json_list(models: list[Any], status: int = 200) -> Response:
    body = b"[" + b",".join(m.__pydantic_serializer__.to_json(m) for m in models) + b"]"
    return Response(body, status_code=status, media_type=JSON)


def create_app(daemon: Daemon | None = None) -> FastAPI:
    """The ASGI app serving ``daemon`` (None: only to render the OpenAPI document)."""
    app = FastAPI(
        title="Chrysalis daemon",
        version=VERSION,
        summary="Local-first agent memory over a Unix socket.",
        redirect_slashes=False,
        docs_url=None,
        redoc_url=None,
    )
    app.state.daemon = daemon
    _add_error_handlers(app)
    max_body = daemon.settings.max_body_bytes if daemon else 32 * 1024 * 1024
    counters = daemon.metrics if daemon else Metrics()
    app.add_middleware(Guard, max_body=max_body, metrics=counters)

    @app.get("/_ping", response_class=PlainTextResponse, tags=["meta"])
    async def ping() -> str:
        """Answers ``OK`` while the daemon serves."""
        return "OK"

    @app.get("/v1/health", response_model=Health, tags=["meta"])
    async def health(d: D) -> Health:
        return Health(status="ok", version=VERSION, replica_id=d.memory.replica_id)

    @app.get("/v1/status", tags=["meta"])
    def status(d: D) -> dict[str, Any]:
        """replica_id, state_digest, counts, index state, embedder, jobs and sync state."""
        return d.status()

    @app.get("/metrics", response_class=PlainTextResponse, tags=["meta"])
    def metrics(d: D) -> str:
        """Prometheus text exposition: requests, latency, store and index figures."""
        return "\n".join(d.metrics_lines()) + "\n"

    # ---- beads ----

    @app.post(
        "/v1/beads",
        status_code=201,
        response_model=Bead | list[Bead],
        tags=["beads"],
        responses={400: {}, 409: {}, 413: {}},
    )
    def append_beads(d: D, body: BeadsIn) -> Response:
        """Append a bead (an object) or many in one commit (an array); returns what was stored.

        The same id with the same fields again is a no-op; with other fields, 409.
        """
        if isinstance(body.root, list):
            rows = [b.model_dump(exclude_none=True) for b in body.root]
            return _json_list(d.memory.append_beads(rows), 201)
        return _json(d.memory.append_bead(**body.root.model_dump(exclude_none=True)), 201)

    @app.get("/v1/beads", response_model=list[Bead], tags=["beads"])
    def last_beads(
        d: D,
        limit: Annotated[int, Query(ge=1, le=1000)] = 50,
        session_id: Annotated[str | None, Query(max_length=256)] = None,
    ) -> Response:
        """The newest ``limit`` beads (of one session), oldest first."""
        return _json_list(d.memory.last_beads(limit, session_id=session_id))

    @app.get("/v1/beads/{id}", response_model=Bead, tags=["beads"], responses={404: {}})
    def get_bead(d: D, id: PathId) -> Response:
        return _json(d.memory.get_bead(id))

    @app.delete("/v1/beads/{id}", status_code=204, tags=["beads"], responses={404: {}})
    def forget(d: D, id: PathId) -> Response:
        """Forget a bead: its content leaves this replica and, through sync, every other."""
        d.memory.forget(id)
        return Response(status_code=204)

    # ---- retrieval ----

    @app.post("/v1/retrieve", response_model=RetrievalResult, tags=["retrieval"])
    def retrieve(d: D, body: RetrieveIn) -> Response:
        """Fused retrieval: recent beads, vector and keyword hits, graph expansion; each
        item says why it matched (``signals``) and where it came from (``provenance``)."""
        result = d.retrieve(
            body.query,
            k=body.k,
            token_budget=body.token_budget,
            strategy=body.strategy,
            filters=body.filters,
        )
        return _json(result)

    # ---- knowledge graph ----

    @app.post("/v1/kg/nodes", status_code=201, response_model=Node, tags=["kg"])
    def add_node(d: D, body: NodeIn) -> Response:
        """Add or replace a node."""
        node = d.memory.add_node(
            body.id, body.type, name=body.name, labels=body.labels, metadata=body.metadata
        )
        return _json(node, 201)

    @app.get("/v1/kg/nodes/{id}", response_model=Node, tags=["kg"], responses={404: {}})
    def get_node(d: D, id: PathId) -> Response:
        return _json(d.memory.get_node(id))

    @app.delete("/v1/kg/nodes/{id}", status_code=204, tags=["kg"], responses={404: {}})
    def remove_node(d: D, id: PathId) -> Response:
        d.memory.remove_node(id)
        return Response(status_code=204)

    @app.get(
        "/v1/kg/nodes/{id}/neighbors",
        response_model=list[Neighbor],
        tags=["kg"],
        responses={404: {}},
    )
    def neighbors(d: D, id: PathId, depth: Annotated[int, Query(ge=1, le=3)] = 1) -> Response:
        """Nodes within ``depth`` hops, each with the edge taken and its direction."""
        return _json_list(d.memory.neighbors(id, depth=depth))

    @app.post("/v1/kg/edges", status_code=201, response_model=Edge, tags=["kg"])
    def add_edge(d: D, body: EdgeIn) -> Response:
        """Add or replace an edge between two existing nodes (404 when one is missing)."""
        edge = d.memory.add_edge(
            body.source, body.target, body.predicate, id=body.id, weight=body.weight,
            evidence=body.evidence, valid_at=body.valid_at, invalid_at=body.invalid_at,
        )  # fmt: skip
        return _json(edge, 201)

    @app.post(
        "/v1/kg/facts", status_code=201, response_model=Edge, tags=["kg"], responses={400: {}}
    )
    def add_fact(d: D, body: FactIn) -> Response:
        """Record ``subject -[predicate]-> object`` in one atomic write: the nodes missing
        (named by their text, so "Alice" in two facts is one node) and the edge (the same fact
        twice is one edge). Existing nodes keep their type and name. Answers the edge."""
        edge = d.memory.add_fact(
            body.subject, body.predicate, body.object, type=body.type, weight=body.weight,
            evidence=body.evidence, valid_at=body.valid_at, invalid_at=body.invalid_at,
        )  # fmt: skip
        return _json(edge, 201)

    @app.get("/v1/kg/edges/{id}", response_model=Edge, tags=["kg"], responses={404: {}})
    def get_edge(d: D, id: PathId) -> Response:
        return _json(d.memory.get_edge(id))

    @app.delete("/v1/kg/edges/{id}", status_code=204, tags=["kg"], responses={404: {}})
    def remove_edge(d: D, id: PathId) -> Response:
        d.memory.remove_edge(id)
        return Response(status_code=204)

    # ---- persona and skills ----

    @app.get("/v1/persona", response_model=Persona, tags=["persona"])
    def get_persona(d: D) -> Response:
        return _json(d.memory.get_persona())

    @app.put("/v1/persona", response_model=Persona, tags=["persona"])
    def put_persona(d: D, body: PersonaIn) -> Response:
        """Replace the persona (fields left out take their defaults)."""
        return _json(d.memory.put_persona(body))

    @app.patch("/v1/persona", response_model=Persona, tags=["persona"], responses={400: {}})
    def update_persona(d: D, body: PersonaPatch) -> Response:
        """Change only the fields given, in one write, so concurrent changes to other fields
        (here or on other laptops) are kept; an empty object changes nothing."""
        fields = body.model_dump(exclude_unset=True)
        if not fields:
            return _json(d.memory.get_persona())
        return _json(d.memory.update_persona(**fields))

    @app.get("/v1/skills", response_model=list[Skill], tags=["skills"])
    def list_skills(d: D) -> Response:
        return _json_list(d.memory.list_skills())

    @app.get("/v1/skills/{id}", response_model=Skill, tags=["skills"], responses={404: {}})
    def get_skill(d: D, id: PathId) -> Response:
        return _json(d.memory.get_skill(id))

    @app.put("/v1/skills/{id}", response_model=Skill, tags=["skills"])
    def put_skill(d: D, id: PathId, body: SkillIn) -> Response:
        """Add or replace the skill ``id``."""
        if body.id is not None and body.id != id:
            raise errors.InvalidInput(f"body id {body.id!r} differs from the path's {id!r}")
        return _json(d.memory.put_skill({**body.model_dump(), "id": id}))

    @app.delete("/v1/skills/{id}", status_code=204, tags=["skills"], responses={404: {}})
    def delete_skill(d: D, id: PathId) -> Response:
        d.memory.delete_skill(id)
        return Response(status_code=204)

    # ---- export and import ----

    @app.get(
        "/v1/export",
        tags=["exchange"],
        response_class=PlainTextResponse,
        responses={200: {"content": {"application/x-ndjson": {}}}},
    )
    def export(d: D) -> Response:
        """Every visible item as JSON Lines: a header, then persona, skills, nodes, edges,
        beads (one ``{"kind": ..., "item": {...}}`` per line)."""
        return Response(b"".join(export_lines(d.memory)), media_type="application/x-ndjson")

    @app.post("/v1/import", response_model=ImportResult, tags=["exchange"])
    async def import_(d: D, request: Request) -> ImportResult:
        """Load JSON Lines made by ``/v1/export``. Every line is checked before anything is
        written (400 names the first bad line); items already here are left alone, so
        importing the same file twice changes nothing."""
        body = await request.body()
        return ImportResult(**await run_in_threadpool(import_lines, d.memory, body))

    # ---- doctor ----

    @app.get("/v1/doctor", tags=["status"])
    def doctor(d: D) -> dict[str, Any]:
        """Checks with advice: the data dir, the indexes against LMDB, the embedder (Ollama),
        the remote (reachable, writable, format, clock skew), sync and the Zep mirror. Each
        is ``{check, status: ok|warn|error, detail, fix}``; ``ok`` is false on any error."""
        from .doctor import daemon_checks

        checks = daemon_checks(d)
        return {"ok": all(c["status"] != "error" for c in checks), "checks": checks}

    # ---- ingest ----

    @app.post("/v1/ingest", tags=["beads"], responses={400: {}, 404: {}})
    def ingest(d: D, body: IngestIn) -> dict[str, Any]:
        """Files (text, Markdown, source code) or text as beads, chunked on natural boundaries
        (headings, paragraphs, functions), each with a span ref (path, lines). Unchanged input
        changes nothing; a changed file replaces its old chunks; under a directory, binary
        files are skipped and files gone since the last ingest are forgotten."""
        from chrysalis.ingest import ingest_path, ingest_text

        skipped: list[dict[str, str]] = []
        if body.path is not None:
            results = ingest_path(
                d.memory, body.path, kind=body.kind, session_id=body.session_id,
                on_skip=lambda p, why: skipped.append({"path": str(p), "why": why}),
            )  # fmt: skip
        else:
            assert body.text is not None
            results = [
                ingest_text(
                    d.memory, body.text, source=body.source or "stdin", kind=body.kind,
                    session_id=body.session_id,
                )
            ]  # fmt: skip
        files = [
            {k: v for k, v in dataclasses.asdict(r).items() if k != "bead_ids"} for r in results
        ]
        totals = {k: sum(f[k] for f in files) for k in ("chunks", "added", "unchanged", "removed")}
        return {"files": files, "skipped_files": skipped, **totals}

    # ---- sync ----

    @app.post("/v1/sync", tags=["sync"], responses={409: {}})
    async def sync_now(d: D, body: SyncIn | None = None) -> dict[str, Any]:
        """Push our ops to the remote and pull the others' now, without waiting for the
        schedule. ``ok`` is false when a step failed; each step says what moved or why not.
        409 when no remote is configured."""
        body = body or SyncIn()
        return await run_in_threadpool(
            d.sync_now, body.push, body.pull, body.snapshot, body.decommission
        )

    return app


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(errors.ChrysalisError)
    async def chrysalis_error(request: Request, exc: errors.ChrysalisError) -> Response:
        status = status_of(exc)
        if status >= 500:
            log.error("%s %s failed: %s", request.method, request.url.path, exc)
        return error_response(status, exc.code, exc.message, exc.details)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> Response:
        return _validation_error(exc.errors())

    @app.exception_handler(ValidationError)
    async def invalid_model(request: Request, exc: ValidationError) -> Response:
        return _validation_error(exc.errors(include_url=False))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        if exc.status_code == 404:
            message = f"no route {request.method} {request.url.path}"
            return error_response(404, "not_found", message)
        if exc.status_code == 405:
            message = f"{request.method} is not allowed on {request.url.path}"
            return error_response(405, "method_not_allowed", message)
        if exc.status_code == 400:  # FastAPI: a body it could not decode (not UTF-8, say)
            return error_response(400, "invalid", f"request body cannot be read: {exc.detail}")
        return error_response(exc.status_code, "http_error", str(exc.detail))

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception) -> Response:
        log.exception("%s %s failed", request.method, request.url.path)
        message = f"internal error ({type(exc).__name__}); the daemon log has the details"
        return error_response(500, "internal", message)


_TOO_LONG = {"string_too_long", "too_long", "bytes_too_long"}


def _validation_error(problems: Any) -> Response:
    details = []
    parts = []
    too_large = False
    for err in problems:
        loc = [str(p) for p in err.get("loc", ())]
        if loc[:1] == ["body"] and loc[1:2] in (["one"], ["many"]):
            del loc[1]  # the union's tag for a bead or a batch; not a field
        where = ".".join(loc) or "body"
        msg = err.get("msg", "invalid")
        kind = err.get("type", "")
        if kind == "json_invalid":
            ctx = err.get("ctx") or {}
            where = "body"
            at = f" at character {loc[1]}" if len(loc) > 1 else ""
            msg = f"malformed JSON{at}: {ctx.get('error', msg)}"
        if kind == "string_unicode":
            msg = "text contains a lone surrogate (not valid Unicode)"
        too_large |= kind in _TOO_LONG
        parts.append(f"{where}: {msg}")
        details.append({"loc": loc, "msg": msg, "type": kind})
    status, code = (413, "too_large") if too_large else (400, "invalid")
    message = "invalid request: " + "; ".join(parts[:5]) + ("; ..." if len(parts) > 5 else "")
    return error_response(status, code, message, json.loads(json.dumps(details, default=str)))
