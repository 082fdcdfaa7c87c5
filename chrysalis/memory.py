"""`Memory`: the embedded API, and the daemon's only way into the store."""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import re
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import numpy as np
from pydantic import BaseModel, TypeAdapter, ValidationError

from . import crdt
from .embed import Embedder, make_embedder
from .errors import ClosedError, Conflict, InvalidInput, NotFound, from_pydantic
from .graph import edge_id, node_id
from .indexer import Indexer
from .models import (
    BEADS,
    ID_PATTERN,
    OPS,
    Bead,
    BlobRef,
    Edge,
    EdgePutData,
    Embedding,
    Filters,
    Neighbor,
    Node,
    NodePutData,
    Persona,
    PersonaPutData,
    PersonaScalars,
    RetrievalResult,
    Skill,
    SkillPutData,
    SpanRef,
    new_id,
    now,
)
from .retrieve import Retriever, Weights
from .store import (
    DEFAULT_MAP_SIZE,
    PERSONA_KEY,
    ApplyResult,
    Store,
    WriteContext,
    emb_key,
    op_key,
    time_key,
    unpack,
)

DEFAULT_BLOB_THRESHOLD = 64 * 1024
_BEAD_FIELDS = (
    "id",
    "role",
    "content",
    "source",
    "session_id",
    "turn_id",
    "importance",
    "tags",
    "span_refs",
    "ts",
)
_PERSONA_SCALARS = ("id", "name", "description")
_PERSONA_SETS = ("goals", "norms", "skills")
_SKILL_SCALARS = ("name", "description", "signature")
_SKILL_SETS = ("examples", "tags")


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic GC around bulk work.

    Validating and applying thousands of ops allocates millions of small containers; each
    young-generation pass then rescans them, which measured as half the cost of apply_ops.
    Nothing here makes reference cycles, so postponing collection is safe.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _validate(model: Any, value: Any, what: str) -> Any:
    try:
        if isinstance(model, TypeAdapter):
            return model.validate_python(value)
        return model.model_validate(value)
    except ValidationError as exc:
        raise from_pydantic(exc, what) from None


_ID = re.compile(ID_PATTERN)


def _check_id(value: Any, what: str) -> str:
    """Ids reach LMDB keys: a bad one is the caller's error, never a store failure."""
    if not isinstance(value, str) or not _ID.match(value):
        raise InvalidInput(f"invalid {what} id {str(value)[:80]!r}: ids match {ID_PATTERN}")
    return value


class Memory:
    """One agent memory in one data dir. Thread-safe; one process at a time per data dir.

    Writes are durable when they return (unless opened with ``sync=False``, for tests):
    concurrent writers share commits. Reads see every write that returned before them.
    """

    def __init__(
        self,
        store: Store,
        *,
        blob_threshold: int = DEFAULT_BLOB_THRESHOLD,
        embedder: str | Embedder | None = None,
        exact_limit: int = 50_000,
    ) -> None:
        self._store = store
        self.blob_threshold = blob_threshold
        self._indexer: Indexer | None = None
        self._indexer_lock = threading.Lock()
        self._closed = False
        self._exact_limit = exact_limit
        self.weights = Weights()
        self.embedder = None if embedder is None else make_embedder(embedder)
        if self.embedder is not None:
            self.indexer  # noqa: B018 - vectors are made in the background from the start

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        sync: bool = True,
        map_size: int = DEFAULT_MAP_SIZE,
        blob_threshold: int = DEFAULT_BLOB_THRESHOLD,
        replica_id: str | None = None,
        embedder: str | Embedder | None = None,
        exact_limit: int = 50_000,
    ) -> Memory:
        """Open the memory in ``path``, creating it if missing.

        ``embedder`` (``"auto"``, ``"deterministic"``, ``"ollama[:MODEL]"``,
        ``"sentence-transformers:PATH"`` or an `Embedder`) turns on vectors: a background
        worker embeds every item and keeps a FAISS index per model. Without one, retrieval
        uses keywords, recency, importance and the graph. Raises `DataDirLocked` when another
        process (or Memory) has the data dir open.
        """
        store = Store(Path(path).expanduser(), sync=sync, map_size=map_size, replica_id=replica_id)
        try:
            return cls(
                store, blob_threshold=blob_threshold, embedder=embedder, exact_limit=exact_limit
            )
        except BaseException:
            store.close()
            raise

    @property
    def indexer(self) -> Indexer:
        """The derived indexes and their worker, started on first use."""
        with self._indexer_lock:
            if self._closed:
                raise ClosedError("memory is closed")
            if self._indexer is None:
                self._indexer = Indexer(
                    self, self.embedder, self._store.path / "index", exact_limit=self._exact_limit
                )
            return self._indexer

    def wait_indexed(self, timeout: float | None = None) -> None:
        """Block until every index reflects every write made before the call (tests, benches)."""
        self.indexer.wait(timeout)

    @property
    def replica_id(self) -> str:
        return self._store.replica_id

    @property
    def path(self) -> Path:
        return self._store.path

    @property
    def store(self) -> Store:
        return self._store

    def close(self) -> None:
        with self._indexer_lock:
            self._closed = True
            indexer, self._indexer = self._indexer, None
        if indexer is not None:
            indexer.close()
        self._store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object | TracebackType) -> None:
        self.close()

    # ---- beads -------------------------------------------------------------------------------

    def append_bead(
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
        """Append one bead; returns it (``.id`` generated when not given).

        Adding the same id again with the same fields is a no-op that returns the stored bead;
        with other fields it raises `Conflict`. Raises `InvalidInput` and writes nothing when
        a field is bad.
        """
        row = {
            "id": id, "content": content, "role": role, "session_id": session_id,
            "turn_id": turn_id, "ts": ts, "importance": importance, "tags": list(tags),
            "source": source, "span_refs": list(span_refs),
        }  # fmt: skip
        return self.append_beads([row])[0]

    def append_beads(self, rows: Iterable[Mapping[str, Any] | Bead]) -> list[Bead]:
        """Append many beads in one commit; all or nothing. Rows are dicts of append_bead's
        fields, or `Bead`s."""
        rows = list(rows)
        if len(rows) < 64:
            return self._append_beads(rows)
        with _gc_paused():
            return self._append_beads(rows)

    def _append_beads(self, rows: list[Mapping[str, Any] | Bead]) -> list[Bead]:
        stamp = now()
        prepared: list[Any] = []
        for row in rows:
            if isinstance(row, Bead):
                prepared.append(row)
                continue
            if not isinstance(row, Mapping):
                raise InvalidInput(f"a bead row must be a dict or a Bead, not {type(row).__name__}")
            item = dict(row)
            if item.get("id") is None:
                item["id"] = new_id()
            if item.get("ts") is None:
                item["ts"] = stamp
            if "tags" in item and isinstance(item["tags"], tuple):
                item["tags"] = list(item["tags"])
            prepared.append(item)
        beads: list[Bead] = _validate(BEADS, prepared, "bead")
        datas: list[dict[str, Any]] = BEADS.dump_python(beads)
        raws: dict[str, bytes] = {}
        for data in datas:
            if data["blob"] is None and len(data["content"]) * 4 > self.blob_threshold:
                raw = data["content"].encode()
                if len(raw) > self.blob_threshold:
                    sha = self._store.blobs.put(raw)
                    raws[sha] = raw
                    data["content"], data["blob"] = "", {"sha256": sha, "size": len(raw)}

        def write(ctx: WriteContext) -> list[bool]:
            fresh: list[bool] = []
            seen: dict[str, dict[str, Any]] = {}
            for data in datas:  # check all first: a conflict writes nothing
                entry = ctx.get("beads", data["id"].encode())
                prior = seen.get(data["id"])
                if entry == crdt.FORGOTTEN:
                    raise Conflict(f"bead {data['id']!r} was forgotten; ids are never reused")
                if entry is not None:
                    _, replica, seq = entry[0]
                    prior = self._store.op_data(ctx.txn, replica, seq)
                if prior is not None and not _same_bead(prior, data):
                    raise Conflict(f"bead {data['id']!r} exists with different content")
                fresh.append(prior is None)
                seen[data["id"]] = data
            for data, new in zip(datas, fresh, strict=True):
                if new:
                    ctx.local_op("bead.add", data["id"], data)
                    blob = data["blob"]
                    if blob is not None and blob["sha256"] in raws:
                        # A forget may delete the shared file between our put and our commit.
                        sha = blob["sha256"]
                        ctx.after_commit.append(
                            functools.partial(self._store.ensure_blob, sha, raws[sha])
                        )
            return fresh

        fresh = self._store.write(write)
        out = []
        for bead, data, new in zip(beads, datas, fresh, strict=True):
            if new:
                if data["blob"] is not None and bead.blob is None:
                    bead = bead.model_copy(update={"blob": BlobRef(**data["blob"])})
                out.append(bead)
            else:
                out.append(self.get_bead(bead.id))
        return out

    def _bead(self, data: dict[str, Any]) -> Bead:
        """A Bead from stored op data (validated when it was written)."""
        blob = data.get("blob")
        spans = data.get("span_refs")
        if blob is None and not spans and len(data) == _BEAD_FIELD_COUNT:
            # The hot path of last_beads: every field present. Copies, so that a caller
            # mutating a bead's lists cannot reach the decoded cache.
            return _trusted(Bead, {**data, "tags": list(data["tags"]), "span_refs": []})
        values = {**data, "tags": list(data.get("tags") or ())}
        if blob is not None:
            values["content"] = self._store.blobs.get(blob["sha256"]).decode()
            values["blob"] = BlobRef.model_construct(**blob)
        values["span_refs"] = [SpanRef.model_construct(**s) for s in spans or ()]
        return Bead.model_construct(**values)

    def _bead_entry(self, txn: Any, bead_id: str) -> tuple[Any, dict[str, Any] | None]:
        """The bead's view entry and, when it is visible, the winning add's data."""
        raw = txn.get(bead_id.encode(), db=self._store.dbs["beads"])
        entry = None if raw is None else unpack(raw)
        if not isinstance(entry, list):
            return entry, None
        _, replica, seq = entry[0]
        return entry, self._store.op_data(txn, replica, seq)

    def get_bead(self, id: str) -> Bead:
        """The bead with this id; `NotFound` when unknown or forgotten."""
        _check_id(id, "bead")
        with self._store.read() as txn:
            entry, data = self._bead_entry(txn, id)
        if data is None:
            raise NotFound(f"no bead {id!r}" + (" (forgotten)" if entry else ""))
        return self._bead(data)

    def last_beads(self, n: int, session_id: str | None = None) -> list[Bead]:
        """The ``n`` latest beads (of one session, if given), oldest first."""
        if not isinstance(n, int) or n < 0:
            raise InvalidInput("n must be a non-negative int")
        if session_id is not None:
            _check_id(session_id, "session")
        store, cache = self._store, self._store.decoded
        datas: list[dict[str, Any]] = []
        epoch = cache.epoch
        with store.read() as txn:
            if session_id is None:
                db, prefix = store.dbs["bead_time"], b""
            else:
                db, prefix = store.dbs["bead_sess"], session_id.encode() + b"\0"
            ops_db, skip = store.dbs["ops"], len(prefix) + 16
            with txn.cursor(db=db) as cur:
                if prefix:  # position just past the session's last key, then step back
                    found = cur.prev() if cur.set_range(prefix + b"\xff" * 9) else cur.last()
                else:
                    found = cur.last()
                while found and len(datas) < n:
                    key = cur.key()
                    if not key.startswith(prefix):
                        break
                    okey = key[skip:]
                    data = cache.get(okey)
                    if data is None:
                        data = unpack(txn.get(okey, db=ops_db))["data"]
                        cache.put(okey, data, epoch)
                    datas.append(data)
                    found = cur.prev()
        datas.reverse()
        return [self._bead(d) for d in datas]

    def adjacent_beads(self, bead_id: str, n: int = 1) -> list[tuple[str, int]]:
        """Up to ``n`` beads before and ``n`` after this one in its session's order, as
        ``(id, offset)`` with offset -1, -2, ... before and 1, 2, ... after."""
        _check_id(bead_id, "bead")
        store = self._store
        with store.read() as txn:
            entry, data = self._bead_entry(txn, bead_id)
            if data is None or not data.get("session_id"):
                return []
            hlc, replica, seq = entry[0]
            prefix = data["session_id"].encode() + b"\0"
            key = prefix + time_key(data["ts"], hlc, replica, seq)
            out: list[tuple[str, int]] = []
            with txn.cursor(db=store.dbs["bead_sess"]) as cur:
                for step, sign in ((cur.prev, -1), (cur.next, 1)):
                    if not cur.set_key(key):
                        return out
                    for distance in range(1, n + 1):
                        if not step() or not cur.key().startswith(prefix):
                            break
                        out.append((cur.value().decode(), sign * distance))
        return out

    def origin(self, kind: str, item_id: str) -> dict[str, Any]:
        """Where an item comes from: the replica and op that made what is shown."""
        store = self._store
        with store.read() as txn:
            if kind == "bead":
                raw = txn.get(item_id.encode(), db=store.dbs["beads"])
                entry = None if raw is None else unpack(raw)
                if not isinstance(entry, list):
                    return {}
                hlc, replica, seq = entry[0]
                return {"origin_replica": replica, "op": f"{replica}:{seq}", "hlc": hlc}
            key = PERSONA_KEY if kind == "persona" else item_id.encode()
            raw = txn.get(key, db=store.dbs[_DB[kind]])
        if raw is None:
            return {}
        record = unpack(raw)
        stamps = [(hlc, dot) for dot, hlc in record["p"].items()]
        if not stamps:
            return {}
        hlc, dot = max(stamps)
        return {"origin_replica": crdt.parse_dot(dot)[0], "op": dot, "hlc": hlc}

    def retrieve(
        self,
        query: str,
        k: int = 10,
        token_budget: int | None = None,
        strategy: str = "fusion",
        filters: Filters | Mapping[str, Any] | None = None,
        query_vector: Any = None,
    ) -> RetrievalResult:
        """Fused retrieval with provenance: see `chrysalis.retrieve`.

        Items are beads, nodes, edges, skills and the persona; each has ``signals`` (why it
        matched) and ``provenance`` (origin replica and op, source, edges walked).
        ``query_vector`` replaces embedding the query (it must match the index's dims).
        """
        return Retriever(self, self.weights).retrieve(
            query,
            k=k,
            token_budget=token_budget,
            strategy=strategy,
            filters=filters,
            query_vector=query_vector,
        )

    def all_beads(self) -> Iterator[Bead]:
        """Every visible bead in time order."""
        store = self._store
        with store.read() as txn:
            datas = [
                unpack(txn.get(k[16:], db=store.dbs["ops"]))["data"]
                for k in txn.cursor(db=store.dbs["bead_time"]).iternext(keys=True, values=False)
            ]
        return (self._bead(d) for d in datas)

    def forget(self, bead_id: str) -> None:
        """Erase a bead's content here (views, indexes, op payload, blob) and on every replica.

        The op stays in the log as a tombstone. Forgetting twice is a no-op; a bead this
        replica never saw raises `NotFound`.
        """

        _check_id(bead_id, "bead")

        def write(ctx: WriteContext) -> None:
            entry = ctx.get("beads", bead_id.encode())
            if entry is None:
                raise NotFound(f"no bead {bead_id!r}")
            if entry != crdt.FORGOTTEN:
                ctx.local_op("bead.forget", bead_id, {})

        self._store.write(write)

    # ---- knowledge graph -----------------------------------------------------------------------

    def add_node(
        self,
        id: str,
        type: str,
        *,
        name: str | None = None,
        labels: Iterable[str] = (),
        metadata: Mapping[str, Any] | None = None,
    ) -> Node:
        """Add or replace a node (add-wins against a concurrent remove)."""
        node = _validate(
            Node,
            {
                "id": id,
                "type": type,
                "name": name,
                "labels": list(labels),
                "metadata": dict(metadata or {}),
            },
            "node",
        )
        scalars = {"type": node.type, "name": node.name, "metadata": node.metadata}
        self._put_record("node", node.id, scalars, {"labels": node.labels})
        return node  # type: ignore[no-any-return]

    def get_node(self, id: str) -> Node:
        _check_id(id, "node")
        record = self._record("node", id)
        if record is None or not crdt.is_present(record):
            raise NotFound(f"no node {id!r}")
        return _node(id, record)

    def remove_node(self, id: str) -> None:
        """Remove a node; its edges are hidden, not lost (they return if the node is re-added)."""
        _check_id(id, "node")
        self._remove_record("node", id)

    def add_edge(
        self,
        source: str,
        target: str,
        predicate: str,
        *,
        id: str | None = None,
        weight: float = 1.0,
        evidence: Iterable[str] = (),
        valid_at: Any = None,
        invalid_at: Any = None,
    ) -> Edge:
        """Add or replace an edge between two existing nodes (`NotFound` otherwise).

        Without ``id`` the edge is named by (source, predicate, target), so the same fact
        added twice, here or on another laptop, is one edge.
        """
        edge = _validate(
            Edge,
            {
                "id": id if id is not None else edge_id(source, predicate, target),
                "source": source,
                "target": target,
                "predicate": predicate,
                "weight": weight,
                "evidence": list(evidence),
                "valid_at": valid_at,
                "invalid_at": invalid_at,
            },
            "edge",
        )
        scalars = edge.model_dump(
            include={"source", "target", "predicate", "weight", "valid_at", "invalid_at"}
        )

        def check(ctx: WriteContext) -> None:
            for end in (edge.source, edge.target):
                rec = ctx.get("nodes", end.encode())
                if rec is None or not crdt.is_present(rec):
                    raise NotFound(f"no node {end!r}: add it before an edge that names it")

        self._put_record("edge", edge.id, scalars, {"evidence": edge.evidence}, check=check)
        return edge  # type: ignore[no-any-return]

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
        """Record ``subject -[predicate]-> object`` in one atomic write: the two nodes (named
        by `graph.node_id` of their text, made with ``type`` when missing) and the edge.

        The same fact twice, here or on another laptop, is one edge. Raises `InvalidInput`
        and writes nothing when a part is bad.
        """
        for what, text in (("subject", subject), ("object", object)):
            if not isinstance(text, str) or not text.strip():
                raise InvalidInput(f"invalid fact: {what} must be non-empty text")
        ends = [
            _validate(Node, {"id": node_id(t), "type": type, "name": t}, "node")
            for t in (subject, object)
        ]
        edge = _validate(
            Edge,
            {
                "id": edge_id(ends[0].id, predicate, ends[1].id),
                "source": ends[0].id,
                "target": ends[1].id,
                "predicate": predicate,
                "weight": weight,
                "evidence": list(evidence),
                "valid_at": valid_at,
                "invalid_at": invalid_at,
            },
            "fact",
        )
        scalars = edge.model_dump(
            include={"source", "target", "predicate", "weight", "valid_at", "invalid_at"}
        )

        def write(ctx: WriteContext) -> None:
            for node in ends:
                record = ctx.get("nodes", node.id.encode())
                if record is None or not crdt.is_present(record):
                    fields = {"type": node.type, "name": node.name, "metadata": {}}
                    self._put_op(ctx, "node", node.id, record or crdt.new_record(), fields, {})
            record = ctx.get("edges", edge.id.encode()) or crdt.new_record()
            self._put_op(ctx, "edge", edge.id, record, scalars, {"evidence": edge.evidence})

        self._store.write(write)
        return edge  # type: ignore[no-any-return]

    def get_edge(self, id: str) -> Edge:
        """A visible edge: present, with both its nodes present."""
        _check_id(id, "edge")
        store = self._store
        with store.read() as txn:
            edge = self._visible_edge(txn, id)
        if edge is None:
            raise NotFound(f"no edge {id!r}")
        return edge

    def remove_edge(self, id: str) -> None:
        _check_id(id, "edge")
        self._remove_record("edge", id)

    def _visible_edge(self, txn: Any, id: str) -> Edge | None:
        dbs = self._store.dbs
        raw = txn.get(id.encode(), db=dbs["edges"])
        if raw is None:
            return None
        record = unpack(raw)
        if not crdt.is_present(record):
            return None
        for end in ("source", "target"):
            node_raw = txn.get(crdt.field_value(record, end).encode(), db=dbs["nodes"])
            if node_raw is None or not crdt.is_present(unpack(node_raw)):
                return None
        return _edge(id, record)

    def neighbors(self, node_id: str, depth: int = 1) -> list[Neighbor]:
        """Nodes within ``depth`` hops (edges either way), nearest first, each reached once."""
        _check_id(node_id, "node")
        if not isinstance(depth, int) or not 1 <= depth <= 4:
            raise InvalidInput("depth must be an int from 1 to 4")
        store = self._store
        out: list[Neighbor] = []
        with store.read() as txn:
            start = txn.get(node_id.encode(), db=store.dbs["nodes"])
            if start is None or not crdt.is_present(unpack(start)):
                raise NotFound(f"no node {node_id!r}")
            seen_nodes, seen_edges = {node_id}, set()
            frontier = [node_id]
            for level in range(1, depth + 1):
                next_frontier = []
                for current in frontier:
                    prefix = current.encode() + b"\0"
                    with txn.cursor(db=store.dbs["adj"]) as cur:
                        hits = []
                        if cur.set_range(prefix):
                            for k, v in cur:
                                if not k.startswith(prefix):
                                    break
                                hits.append((k[len(prefix) :].decode(), v))
                    for edge_id, direction in hits:
                        if edge_id in seen_edges:
                            continue
                        edge = self._visible_edge(txn, edge_id)
                        if edge is None:
                            continue
                        seen_edges.add(edge_id)
                        other = edge.target if edge.source == current else edge.source
                        if other in seen_nodes:
                            continue
                        seen_nodes.add(other)
                        node = _node(other, unpack(txn.get(other.encode(), db=store.dbs["nodes"])))
                        out.append(
                            Neighbor(
                                node=node,
                                edge=edge,
                                depth=level,
                                direction="out" if direction == b"o" else "in",
                            )
                        )
                        next_frontier.append(other)
                frontier = next_frontier
        return out

    def all_nodes(self) -> list[Node]:
        return [_node(k, r) for k, r in self._records("node") if crdt.is_present(r)]

    def all_edges(self) -> list[Edge]:
        store = self._store
        with store.read() as txn:
            ids = [
                k.decode()
                for k in txn.cursor(db=store.dbs["edges"]).iternext(keys=True, values=False)
            ]
            return [e for e in (self._visible_edge(txn, i) for i in ids) if e is not None]

    # ---- persona and skills ---------------------------------------------------------------------

    def get_persona(self) -> Persona:
        record = self._record("persona", "persona")
        return _persona(record) if record is not None else Persona()

    def put_persona(self, persona: Persona | Mapping[str, Any]) -> Persona:
        """Replace the persona: every field takes the given value."""
        p = (
            persona
            if isinstance(persona, Persona)
            else _validate(Persona, dict(persona), "persona")
        )
        return self._write_persona(p.model_dump(), replace_traits=True)

    def update_persona(self, **fields: Any) -> Persona:
        """Set only the given fields; list fields (goals, norms, skills) take the given list,
        and concurrent additions on other laptops are kept. ``traits`` merges key by key
        (a value of None deletes a trait)."""
        unknown = set(fields) - set(Persona.model_fields)
        if unknown:
            raise InvalidInput(f"unknown persona field(s): {', '.join(sorted(unknown))}")
        # Only the given fields are checked: after a merge the persona may hold more goals
        # than one write may send, and that must not block editing its name.
        traits = fields.get("traits")
        _validate(Persona, {k: v for k, v in fields.items() if k != "traits"}, "persona")
        if traits is not None:
            _validate(PersonaScalars, {"traits": traits}, "persona")
        return self._write_persona(fields, replace_traits=False)

    def _write_persona(self, fields: Mapping[str, Any], *, replace_traits: bool) -> Persona:
        def write(ctx: WriteContext) -> None:
            record = ctx.get("persona", PERSONA_KEY) or crdt.new_record()
            scalars: dict[str, Any] = {k: fields[k] for k in _PERSONA_SCALARS if k in fields}
            if "traits" in fields:
                traits = dict(fields["traits"])
                if replace_traits:
                    current = _persona(record).traits
                    traits.update({k: None for k in current if k not in traits})
                scalars["traits"] = traits
            sets = {k: list(fields[k]) for k in _PERSONA_SETS if k in fields}
            self._put_op(ctx, "persona", "persona", record, scalars, sets)

        self._store.write(write)
        return self.get_persona()

    def put_skill(self, skill: Skill | Mapping[str, Any]) -> Skill:
        """Add or replace a skill (add-wins against a concurrent delete)."""
        s = skill if isinstance(skill, Skill) else _validate(Skill, dict(skill), "skill")
        data = s.model_dump()
        self._put_record(
            "skill", s.id, {k: data[k] for k in _SKILL_SCALARS}, {k: data[k] for k in _SKILL_SETS}
        )
        return s

    def get_skill(self, id: str) -> Skill:
        _check_id(id, "skill")
        record = self._record("skill", id)
        if record is None or not crdt.is_present(record):
            raise NotFound(f"no skill {id!r}")
        return _skill(id, record)

    def list_skills(self) -> list[Skill]:
        return [_skill(k, r) for k, r in self._records("skill") if crdt.is_present(r)]

    def delete_skill(self, id: str) -> None:
        _check_id(id, "skill")
        self._remove_record("skill", id)

    # ---- records: the shared put/remove path --------------------------------------------------

    def _record(self, collection: str, id: str) -> crdt.Record | None:
        store = self._store
        key = PERSONA_KEY if collection == "persona" else id.encode()
        with store.read() as txn:
            raw = txn.get(key, db=store.dbs[_DB[collection]])
        return None if raw is None else unpack(raw)

    def _records(self, collection: str) -> list[tuple[str, crdt.Record]]:
        store = self._store
        with store.read() as txn:
            return [(k.decode(), unpack(v)) for k, v in txn.cursor(db=store.dbs[_DB[collection]])]

    def _put_op(
        self,
        ctx: WriteContext,
        collection: str,
        id: str,
        record: crdt.Record,
        scalars: dict[str, Any],
        sets: dict[str, list[str]],
    ) -> None:
        add: dict[str, list[str]] = {}
        drop: dict[str, dict[str, list[str]]] = {}
        for name, wanted in sets.items():
            to_add, to_drop = crdt.set_diff(record, name, wanted)
            if to_add:
                add[name] = to_add
            if to_drop:
                drop[name] = to_drop
        data: dict[str, Any] = {"set": scalars}
        if add:
            data["add"] = add
        if drop:
            data["drop"] = drop
        if record["p"]:
            data["supersede"] = sorted(record["p"])
        # What we log, every peer must accept: check it against the op schema first.
        _validate(_PUT_DATA[collection], data, collection)
        # A write that saw a value must beat it, however skewed the clocks that stamped it.
        try:
            hlc = self._store.clock.after(crdt.max_stamp(record))
        except OverflowError:
            raise Conflict(
                f"{collection} {id!r} holds a value stamped at the end of time; it cannot be "
                "overwritten (a replica with a broken clock wrote it)"
            ) from None
        ctx.local_op(f"{collection}.put", id, data, hlc=hlc)

    def _put_record(
        self,
        collection: str,
        id: str,
        scalars: dict[str, Any],
        sets: dict[str, list[str]],
        *,
        check: Any = None,
    ) -> None:
        def write(ctx: WriteContext) -> None:
            if check is not None:
                check(ctx)
            record = ctx.get(_DB[collection], id.encode()) or crdt.new_record()
            self._put_op(ctx, collection, id, record, scalars, sets)

        self._store.write(write)

    def _remove_record(self, collection: str, id: str) -> None:
        def write(ctx: WriteContext) -> None:
            record = ctx.get(_DB[collection], id.encode())
            if record is None or not crdt.is_present(record):
                raise NotFound(f"no {collection} {id!r}")
            ctx.local_op(f"{collection}.remove", id, {"remove": crdt.observed_dots(record)})

        self._store.write(write)

    # ---- embeddings (written by the indexing worker; they replicate like everything else) -----

    def put_embedding(
        self,
        item_kind: str,
        item_id: str,
        model: str,
        vector: Any,
        *,
        provider: str,
        text_hash: str,
    ) -> Embedding:
        """Store the vector of one item under one embedding model (LWW per item and model).

        ``vector`` is a sequence of floats or a numpy array; it is stored as float32. A
        vector for a bead that is unknown or forgotten raises `NotFound`.
        """
        row = {"item_kind": item_kind, "item_id": item_id, "model": model, "vector": vector,
               "provider": provider, "text_hash": text_hash}  # fmt: skip
        return self.put_embeddings([row])[0]

    def put_embeddings(
        self, rows: Sequence[Mapping[str, Any]], *, skip_missing: bool = False
    ) -> list[Embedding]:
        """Store many vectors in one commit (rows have `put_embedding`'s arguments).

        With ``skip_missing``, rows for beads that are gone (forgotten meanwhile) are dropped
        instead of failing the call: what the indexing worker wants.
        """
        embs, datas = [], []
        for row in rows:
            try:
                array = np.asarray(row["vector"], dtype="<f4").reshape(-1)
            except (TypeError, ValueError, KeyError) as exc:
                raise InvalidInput(f"invalid embedding: vector: {exc}") from None
            if not np.isfinite(array).all():
                raise InvalidInput("invalid embedding: vector: must be finite numbers")
            raw = array.tobytes()
            names = ("item_kind", "item_id", "model", "provider", "text_hash")
            fields = {k: row.get(k) for k in names}
            emb = _validate(
                Embedding,
                {**fields, "dims": int(array.size), "vector": raw, "created_at": now()},
                "embedding",
            )
            data = emb.model_dump(exclude={"item_id"})
            data["checksum"] = hashlib.sha256(raw).hexdigest()
            embs.append(emb)
            datas.append(data)

        def write(ctx: WriteContext) -> list[bool]:
            keep = []
            for emb in embs:
                entry = ctx.get("beads", emb.item_id.encode()) if emb.item_kind == "bead" else []
                live = isinstance(entry, list)
                if not live and not skip_missing:
                    raise NotFound(f"no bead {emb.item_id!r} to embed")
                keep.append(live)
            for emb, data, live in zip(embs, datas, keep, strict=True):
                if live:
                    ctx.local_op("embedding.put", emb.item_id, data)
            return keep

        kept = self._store.write(write)
        return [e for e, k in zip(embs, kept, strict=True) if k]

    def get_embedding(self, item_kind: str, item_id: str, model: str) -> Embedding:
        """The stored vector; `NotFound` when none (or its item was forgotten)."""
        _check_id(item_id, item_kind)
        store = self._store
        with store.read() as txn:
            raw = txn.get(emb_key(item_kind, item_id, model), db=store.dbs["emb"])
        rec = None if raw is None else unpack(raw)
        if rec is None or rec.get("erased"):
            raise NotFound(f"no {model!r} embedding for {item_kind} {item_id!r}")
        fields = {
            k: rec[k] for k in ("model", "dims", "provider", "text_hash", "vector", "created_at")
        }
        return Embedding.model_construct(item_kind=item_kind, item_id=item_id, **fields)  # type: ignore[arg-type]

    # ---- replication ---------------------------------------------------------------------------

    def version_vector(self) -> dict[str, int]:
        """``{replica_id: highest contiguous seq applied}``."""
        with self._store.read() as txn:
            return self._store.version_vector(txn)

    def ops_since(self, version_vector: Mapping[str, int]) -> list[dict[str, Any]]:
        """The ops a replica at ``version_vector`` lacks, as wire dicts (see `models.Op`)."""
        for replica, seq in version_vector.items():
            if not isinstance(replica, str) or not isinstance(seq, int) or seq < 0:
                raise InvalidInput(f"invalid version vector entry {replica!r}: {seq!r}")
        with self._store.read() as txn:
            return list(self._store.ops_since(txn, dict(version_vector)))

    def apply_ops(self, ops: Iterable[Mapping[str, Any] | BaseModel]) -> ApplyResult:
        """Apply remote ops: idempotent, in any order; an op after a gap waits for the gap.

        The batch is validated whole first: `InvalidInput` for a malformed op, `DotConflict`
        for a dot we hold with other content; either way nothing is applied.
        """
        with _gc_paused():
            return self._apply_ops(ops)

    def _apply_ops(self, ops: Iterable[Mapping[str, Any] | BaseModel]) -> ApplyResult:
        items = [o.model_dump() if isinstance(o, BaseModel) else o for o in ops]
        canon = OPS.dump_python(_validate(OPS, items, "op"), exclude_unset=True)
        for op in canon:
            kind, data, target = op["kind"], op["data"], op["target"]
            if kind == "bead.add" and data["id"] != target:
                raise InvalidInput(
                    f"invalid op {op['replica']}:{op['seq']}: "
                    f"target {target!r} is not the bead id {data['id']!r}"
                )
            if kind == "persona.put" and target != "persona":
                raise InvalidInput(
                    f"invalid op {op['replica']}:{op['seq']}: persona ops target 'persona'"
                )
        if not canon:
            return ApplyResult()
        return self._store.write(lambda ctx: self._store.apply_remote(ctx, canon))  # type: ignore[no-any-return]

    def pending_ops(self) -> int:
        """How many remote ops wait for a gap to fill."""
        with self._store.read() as txn:
            return int(txn.stat(self._store.dbs["pending"])["entries"])

    def state_digest(self) -> str:
        """A hash of the materialized state; equal on replicas that applied the same ops."""
        with self._store.read() as txn:
            return self._store.state_digest(txn)

    def log_op(self, replica: str, seq: int) -> dict[str, Any] | None:
        """One op as this replica logs it (erased content stays erased), or None."""
        with self._store.read() as txn:
            raw = txn.get(op_key(replica, seq), db=self._store.dbs["ops"])
        return None if raw is None else unpack(raw)

    def stats(self) -> dict[str, int]:
        """Counts of what the store holds (entries per view, ops, pending)."""
        store = self._store
        with store.read() as txn:
            return {name: int(txn.stat(db)["entries"]) for name, db in store.dbs.items()}


_DB = {"node": "nodes", "edge": "edges", "persona": "persona", "skill": "skills"}
_PUT_DATA = {
    "node": NodePutData,
    "edge": EdgePutData,
    "persona": PersonaPutData,
    "skill": SkillPutData,
}
_BEAD_FIELD_COUNT = len(Bead.model_fields)
_set_attr = object.__setattr__


def _trusted(cls: type[Bead], values: dict[str, Any]) -> Bead:
    """`model_construct` without its per-field bookkeeping, for complete, stored values.

    `test_trusted_construction_matches_validation` pins it to what validation gives.
    """
    obj = cls.__new__(cls)
    _set_attr(obj, "__dict__", values)
    _set_attr(obj, "__pydantic_fields_set__", set(values))
    _set_attr(obj, "__pydantic_extra__", None)
    _set_attr(obj, "__pydantic_private__", None)
    return obj


_BEAD_DEFAULTS = {
    name: (f.default_factory() if f.default_factory else f.default)  # type: ignore[call-arg]
    for name, f in Bead.model_fields.items()
    if not f.is_required()
}


def _same_bead(stored: dict[str, Any], new: dict[str, Any]) -> bool:
    """Same add, ts aside (a retried append without ts gets a new one); a remote op may
    leave defaults out."""
    return all(
        stored.get(k, _BEAD_DEFAULTS.get(k)) == new.get(k, _BEAD_DEFAULTS.get(k))
        for k in (*_BEAD_FIELDS, "blob")
        if k != "ts"
    )


def _node(id: str, r: crdt.Record) -> Node:
    return Node.model_construct(
        id=id,
        type=crdt.field_value(r, "type"),
        name=crdt.field_value(r, "name"),
        labels=crdt.set_values(r, "labels"),
        metadata=crdt.field_value(r, "metadata", {}),
    )


def _edge(id: str, r: crdt.Record) -> Edge:
    return Edge.model_construct(
        id=id,
        source=crdt.field_value(r, "source"),
        target=crdt.field_value(r, "target"),
        predicate=crdt.field_value(r, "predicate"),
        weight=crdt.field_value(r, "weight", 1.0),
        evidence=crdt.set_values(r, "evidence"),
        valid_at=crdt.field_value(r, "valid_at"),
        invalid_at=crdt.field_value(r, "invalid_at"),
    )


def _persona(r: crdt.Record) -> Persona:
    traits = {
        name.partition("/")[2]: entry[0]
        for name, entry in sorted(r["f"].items())
        if name.startswith("traits/") and entry[0] is not None
    }
    return Persona.model_construct(
        id=crdt.field_value(r, "id", "default"),
        name=crdt.field_value(r, "name", ""),
        description=crdt.field_value(r, "description", ""),
        goals=crdt.set_values(r, "goals"),
        norms=crdt.set_values(r, "norms"),
        skills=crdt.set_values(r, "skills"),
        traits=traits,
    )


def _skill(id: str, r: crdt.Record) -> Skill:
    return Skill.model_construct(
        id=id,
        name=crdt.field_value(r, "name", ""),
        description=crdt.field_value(r, "description", ""),
        signature=crdt.field_value(r, "signature", ""),
        examples=crdt.set_values(r, "examples"),
        tags=crdt.set_values(r, "tags"),
    )
