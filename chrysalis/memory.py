"""`Memory`: the embedded API, a thin façade over the core's rooms.

    write side   `chrysalis.write`   every verb that changes the memory (`Writer`, `op_rules`)
    read side    `chrysalis.read`    every query of the store (`Reader`)
    search       `chrysalis.search`  keyword and vector indexes, their worker, fusion
    storage      `chrysalis.store`   LMDB, group commit, meta (`Store`; `datadir`, `blobs`)
    forget       `chrysalis.forget`  selectors, the local scrub, receipts

`Memory` wires them together for one data dir and delegates; it holds no logic of its own
beyond opening, closing and starting the search worker on first use.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self, Unpack

from pydantic import BaseModel

from chrysalis.context import DEFAULT_BUDGET, RECENT, Source
from chrysalis.context import build as build_context
from chrysalis.core.errors import ClosedError
from chrysalis.core.graph_ids import GRAPH_KEY_BYTES, EntityNames, graph_key
from chrysalis.core.models import (
    Bead,
    Context,
    Edge,
    Embedding,
    Filters,
    Neighbor,
    Node,
    Persona,
    RetrievalResult,
    Skill,
)
from chrysalis.core.validity import DEFAULT_FUNCTIONAL, epoch
from chrysalis.core.vocab import BeadFields, bead_row
from chrysalis.extract import Extractor, make_extractor
from chrysalis.extract.worker import NO_BUDGET, SUMMARY_AFTER_S, Budget, KnowledgeWorker
from chrysalis.forget.receipt import ForgetReceipt, receipt
from chrysalis.forget.scrub import DataDirScrubber, local_places, record_of
from chrysalis.forget.select import MAX_SELECT, Selection, Selector, forget_where, select_beads
from chrysalis.read.drawing import Drawing, read_drawing
from chrysalis.read.reader import Reader
from chrysalis.search import Indexer, Retriever, Weights
from chrysalis.search.embed import Embedder, make_embedder
from chrysalis.secrets.scan import Finding, Policy
from chrysalis.store.env import DEFAULT_MAP_SIZE, Store
from chrysalis.write.knowledge import GRAPH_KEY, KnowledgeWriter
from chrysalis.write.op_rules import ApplyResult
from chrysalis.write.writer import DEFAULT_BLOB_THRESHOLD, Writer

FORMAT_META = "sync:format:"  # + remote url: its format.json, as `sync.local` records it


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
        scrub_delay: float = 5.0,
        secrets: Policy = "redact",
        extractor: str | Extractor | None = None,
        functional: Iterable[str] = DEFAULT_FUNCTIONAL,
        extract_budget: Budget = NO_BUDGET,
        summary_after: float | None = SUMMARY_AFTER_S,
        graph_secret: bytes | str | None = None,
    ) -> None:
        self._store = store
        self.reader = Reader(store)
        self.writer = Writer(
            store, self.reader, blob_threshold=blob_threshold, secrets=secrets,
            functional=functional,
        )  # fmt: skip
        self.writer.importance = lambda texts: self.indexer.importance(texts)
        self._indexer: Indexer | None = None
        self._indexer_lock = threading.Lock()
        self._closed = False
        self._exact_limit = exact_limit
        self.weights = Weights()
        self.embedder = None if embedder is None else make_embedder(embedder)
        if self.embedder is not None:
            self.indexer  # noqa: B018 - vectors are made in the background from the start
        self.entities, fresh = self._entity_names(graph_secret)
        self.reader.entities = self.entities
        self.writer.entities = self.entities
        self.knowledge_writer = KnowledgeWriter(self.writer, self.entities)
        self.knowledge_writer.unsaved_key = fresh
        self.scrubber = DataDirScrubber(
            store, lambda: self._indexer, delay=scrub_delay, keys=self.knowledge_writer
        )
        self.knowledge = KnowledgeWorker(
            self.reader, self.knowledge_writer, make_extractor(extractor),
            budget=extract_budget, summary_after=summary_after,
        )  # fmt: skip

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
        min_free_bytes: int = 0,
        scrub_delay: float = 5.0,
        secrets: Policy = "redact",
        extractor: str | Extractor | None = None,
        functional: Iterable[str] = DEFAULT_FUNCTIONAL,
        extract_budget: Budget = NO_BUDGET,
        summary_after: float | None = SUMMARY_AFTER_S,
        graph_secret: bytes | str | None = None,
    ) -> Memory:
        """Open the memory in ``path``, creating it if missing.

        ``embedder`` (``"auto"``, ``"deterministic"``, ``"ollama[:MODEL]"``, ``"minilm"``,
        ``"sentence-transformers:PATH"`` or an `Embedder`) turns on vectors: a background
        worker embeds every item and keeps a FAISS index per model. Without one, retrieval
        uses keywords, recency, importance and the graph. Raises `DataDirLocked` when another
        process (or Memory) has the data dir open.

        With ``min_free_bytes``, every write (the verbs, pulled ops, the indexer's vectors)
        raises `InsufficientStorage` while the disk holding ``path`` has less free; reads go
        on (`Store.check_space`).

        ``secrets`` says what happens to a credential (an API key, a token, a private key, a
        password in a URL) in a bead's text: ``"redact"`` replaces it with
        ``[REDACTED:<kind>]`` before anything is stored, ``"refuse"`` raises `SecretRefused`
        and stores nothing, ``"off"`` stores it as given (`chrysalis.secrets.scan`).

        ``extractor`` (``"rules"``, ``"ollama[:MODEL]"``, ``"none"`` or an `Extractor`) turns
        on knowledge: a background worker derives entities and facts from the beads this
        replica writes (`chrysalis.extract`). ``functional`` names the predicates that hold one
        value at a time (a new one supersedes the old, whether extracted or written with
        `add_fact`: `chrysalis.write.supersede`); ``extract_budget`` caps model calls
        and tokens per hour. A session that rests ``summary_after`` seconds gets a summary bead
        (tag ``summary``; None: no summaries).

        ``graph_secret`` (the sync key, as `chrysalis.sync.Sync` reads it) keys the ids of
        the entities extracted here (`graph.EntityNames`), so that every replica sharing the
        secret names an entity alike and no one without it can test a name against an id;
        without one, the memory keys them with a key of its own, kept in the data dir, until
        a `Sync` gives it the shared one (`use_graph_secret`).
        """
        store = Store(
            Path(path).expanduser(), sync=sync, map_size=map_size, replica_id=replica_id,
            min_free_bytes=min_free_bytes,
        )  # fmt: skip
        try:
            return cls(
                store, blob_threshold=blob_threshold, embedder=embedder, exact_limit=exact_limit,
                scrub_delay=scrub_delay, secrets=secrets, extractor=extractor,
                functional=functional, extract_budget=extract_budget,
                summary_after=summary_after, graph_secret=graph_secret,
            )  # fmt: skip
        except BaseException:
            store.close()
            raise

    def _entity_names(self, secret: bytes | str | None) -> tuple[EntityNames, bytes | None]:
        """The memory's entity naming, and the key when it is new (kept by the first write
        that names an entity, `KnowledgeWriter`)."""
        if secret is not None:
            return EntityNames(graph_key(secret), shared=True), None
        own = self.reader.get_meta(GRAPH_KEY)
        if isinstance(own, bytes) and len(own) == GRAPH_KEY_BYTES:
            # The kept key is a plaintext remote's (derived from its format id) or random.
            remote = any(
                isinstance(fmt, dict) and graph_key(f"format:{fmt.get('id')}".encode()) == own
                for fmt in self.reader.metas(FORMAT_META).values()
            )
            return EntityNames(own, shared=False, own=not remote), None
        own = os.urandom(GRAPH_KEY_BYTES)
        return EntityNames(own, shared=False, own=True), own

    def use_graph_secret(self, secret: bytes | str, *, keep: bool) -> None:
        """Name extracted entities with the graph key ``secret`` gives from now on (the
        sync key; or a plaintext remote's format id, which every replica there reads). With
        ``keep``, the key is kept in the data dir (it is no secret: the remote shows its
        source to anyone); without, any key kept there is dropped, so the data dir holds no
        key. When the key changed, the knowledge worker moves the entities named under the
        old one (`KnowledgeWriter.rekey`)."""
        key = graph_key(secret)
        self.entities.use(key, shared=not keep)
        if keep:
            if self.reader.get_meta(GRAPH_KEY) != key:
                self.writer.put_meta(GRAPH_KEY, key)
        elif self.reader.get_meta(GRAPH_KEY) is not None:
            self.writer.put_meta(GRAPH_KEY, None)

    def entity_id(self, name: str) -> str:
        """The id an extracted entity named ``name`` has in this memory (`graph.EntityNames`)."""
        return self.entities.id(name)

    @property
    def indexer(self) -> Indexer:
        """The derived indexes and their worker, started on first use."""
        with self._indexer_lock:
            if self._closed:
                raise ClosedError("memory is closed")
            if self._indexer is None:
                self._indexer = Indexer(
                    self.reader,
                    self.writer,
                    self.embedder,
                    self._store.path / "index",
                    exact_limit=self._exact_limit,
                )
            return self._indexer

    def wait_learned(self, timeout: float | None = None) -> bool:
        """Block until knowledge reflects every write made before the call: beads extracted,
        forgotten ones retracted (tests, benches). False on timeout."""
        return self.knowledge.wait(timeout)

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

    @property
    def blob_threshold(self) -> int:
        return self.writer.blob_threshold

    def close(self) -> None:
        self.knowledge.close()
        self.scrubber.close()  # a scrub due runs now, with the indexes still open
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

    def append_bead(self, content: str, **fields: Unpack[BeadFields]) -> Bead:
        """Append one bead; returns it (``.id`` generated when not given; without
        ``importance``, one from how new its words are to the memory: `chrysalis.write.intake`).

        Adding the same id again with the same fields is a no-op that returns the stored bead;
        with other fields it raises `Conflict`. Raises `InvalidInput` and writes nothing when
        a field is bad. A credential in the text is handled by the ``secrets`` policy (see
        `open`): by default the stored bead holds ``[REDACTED:<kind>]`` in its place.
        """
        return self.writer.append_beads([bead_row(content, fields)])[0]

    def append_beads(self, rows: Iterable[Mapping[str, Any] | Bead]) -> list[Bead]:
        """Append many beads in one commit; all or nothing. Rows are dicts of append_bead's
        fields, or `Bead`s."""
        return self.writer.append_beads(rows)

    def append_beads_with_findings(
        self, rows: Iterable[Mapping[str, Any] | Bead]
    ) -> tuple[list[Bead], list[list[Finding]]]:
        """`append_beads`, and per bead the secrets redacted from it (kind, field, where the
        marker is; never the secret)."""
        return self.writer.append_beads_with_findings(rows)

    def get_bead(self, id: str) -> Bead:
        """The bead with this id; `NotFound` when unknown or forgotten."""
        return self.reader.get_bead(id)

    def last_beads(self, n: int, session_id: str | None = None) -> list[Bead]:
        """The ``n`` latest beads (of one session, if given), oldest first."""
        return self.reader.last_beads(n, session_id)

    def adjacent_beads(self, bead_id: str, n: int = 1) -> list[tuple[str, int]]:
        """Up to ``n`` beads before and ``n`` after this one in its session's order."""
        return self.reader.adjacent_beads(bead_id, n)

    def all_beads(self) -> Iterator[Bead]:
        """Every visible bead in time order."""
        return self.reader.all_beads()

    def sessions(self) -> list[str]:
        """The distinct session ids of visible beads."""
        return self.reader.sessions()

    def session_stats(self) -> list[dict[str, Any]]:
        """Each session with its bead count, first and last bead time (epoch seconds), the
        most recently active first."""
        return self.reader.session_stats()

    def origin(self, kind: str, item_id: str) -> dict[str, Any]:
        """Where an item comes from: the replica and op that made what is shown."""
        return self.reader.origin(kind, item_id)

    def forget(self, bead_id: str) -> None:
        """Erase a bead's content here (views, indexes, op payload, blob) and on every replica.

        The op stays in the log as a tombstone. Forgetting twice is a no-op; a bead this
        replica never saw raises `NotFound`. `chrysalis.write.erase` owns what it erases, and
        `chrysalis.forget.scrub` takes it off the disk's freed pages within ``scrub_delay`` seconds.
        """
        self.writer.forget(bead_id)

    def forget_receipt(self, bead_id: str) -> ForgetReceipt:
        """Where forgotten bead ``bead_id`` is gone from this data dir and where it may remain
        (`chrysalis.forget.receipt`); a `Replica`'s adds the other replicas, the remote and Zep."""
        record = record_of(self, bead_id)
        return receipt(self.replica_id, bead_id, record, local_places(self, bead_id, record))

    def select_beads(
        self,
        selector: Selector | Mapping[str, Any],
        *,
        limit: int = MAX_SELECT,
        newest: bool = False,
        count_all: bool = True,
    ) -> Selection:
        """The live beads a selector matches (session_id, path, tag, query, before, after,
        role; all given must hold): the first ``limit`` ids, oldest first (``newest``: the
        last ``limit``, newest first), and the count of all (``count_all=False``: only of
        those found; the walk stops at ``limit``). An empty selector raises `InvalidInput`.
        See `chrysalis.forget.select`."""
        keyword = self._keyword_for(selector)
        return select_beads(
            self.reader, selector, keyword, limit=limit, newest=newest, count_all=count_all
        )

    def forget_where(
        self,
        selector: Selector | Mapping[str, Any],
        *,
        expect: int | None = None,
        expect_digest: str | None = None,
        limit: int = MAX_SELECT,
    ) -> tuple[list[str], Selection]:
        """Forget what `select_beads` matches (at most ``limit``, in one commit); the ids
        forgotten and the selection. With ``expect_digest`` (a `select_beads`'s ``digest``,
        what the dry run saw), a match of other beads (or, with ``expect``, of another count)
        raises `SelectionChanged` and forgets nothing; ``expect`` alone raises `InvalidInput`
        (`chrysalis.forget.select.forget_where`)."""
        indexer = self._keyword_for(selector)
        return forget_where(
            self.reader, self.writer, selector, indexer, expect=expect,
            expect_digest=expect_digest, limit=limit,
        )  # fmt: skip

    def _keyword_for(self, selector: Selector | Mapping[str, Any]) -> Indexer | None:
        query = selector.query if isinstance(selector, Selector) else selector.get("query")
        return self.indexer if query is not None else None

    def _retriever(self) -> Retriever:
        """A `Retriever` over this memory; a remote embedder's wait gives up the read's slot."""
        return Retriever(
            self.reader, self.indexer, self.embedder, self.weights,
            self.knowledge.foreground.waiting,
        )  # fmt: skip

    def retrieve(
        self,
        query: str,
        k: int = 10,
        token_budget: int | None = None,
        strategy: str = "fusion",
        filters: Filters | Mapping[str, Any] | None = None,
        query_vector: Any = None,
        now: float | datetime | None = None,
        as_of: float | datetime | None = None,
        min_score: float | None = None,
    ) -> RetrievalResult:
        """Fused retrieval with provenance: see `chrysalis.search.fusion`.

        Items are beads, nodes, edges, skills and the persona; each has ``signals`` (why it
        matched) and ``provenance`` (origin replica and op, source, edges walked).
        ``query_vector`` replaces embedding the query (it must match the index's dims).
        ``now`` (a datetime or epoch seconds; the clock by default) is when the query is
        asked: a span it names ("last weekend", "two weeks ago") is read against it.
        ``as_of`` walks the facts that held then (world time); by default, those that hold
        now (a superseded fact is not walked). ``min_score`` leaves out items scoring under
        it (a relevance floor: fewer than ``k`` rather than padding).
        """
        retriever = self._retriever()
        # The extraction thread waits meanwhile; at most `READS_AT_ONCE` reads compute at once.
        with self.knowledge.foreground.read():
            return retriever.retrieve(
                query, k=k, token_budget=token_budget, strategy=strategy, filters=filters,
                query_vector=query_vector, now=now, as_of=as_of, min_score=min_score,
            )  # fmt: skip

    def context(
        self,
        query: str,
        *,
        token_budget: int = DEFAULT_BUDGET,
        session_id: str | None = None,
        exclude: Iterable[str] = (),
        now: float | datetime | None = None,
        memories: Mapping[str, Memory] | None = None,
        recent: int = RECENT,
    ) -> Context:
        """What an agent should put in its prompt to answer ``query``: the facts that bear on
        it as of the time it is about (``now``, or the time it names), then the beads and
        summaries that are evidence, each cited, within ``token_budget`` (estimated tokens)
        and nothing below the relevance floor: with nothing relevant, an empty context. Left
        out: ``exclude`` (ids), the turn being answered, ``session_id``'s latest ``recent``
        turns. ``memories`` (name to `Memory`) are read too. See `chrysalis.context`."""
        sources = [
            Source(name, m.reader, m._retriever())
            for name, m in [(None, self), *(memories or {}).items()]
        ]
        # The extraction threads wait meanwhile (the process's one `Foreground`: every
        # memory's), and at most `READS_AT_ONCE` reads compute at once.
        with self.knowledge.foreground.read():
            return build_context(
                sources, query, token_budget=token_budget, session_id=session_id,
                exclude=exclude, now=now, recent=recent,
            )  # fmt: skip

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
        return self.writer.add_node(id, type, name=name, labels=labels, metadata=metadata)

    def get_node(self, id: str) -> Node:
        return self.reader.get_node(id)

    def remove_node(self, id: str) -> None:
        """Remove a node; its edges are hidden, not lost (they return if the node is re-added)."""
        self.writer.remove_node(id)

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

        Without ``id`` the edge is named by (source, predicate, target) (`graph_ids.edge_id`), so
        the same fact added twice, here or on another laptop, is one edge.
        """
        return self.writer.add_edge(
            source, target, predicate, id=id, weight=weight, evidence=evidence,
            valid_at=valid_at, invalid_at=invalid_at,
        )  # fmt: skip

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
        """Record ``subject -[predicate]-> object`` in one atomic write: both nodes (named by
        `graph_ids.node_id` of their text, made with ``type`` when missing) and the edge."""
        return self.writer.add_fact(
            subject, predicate, object, type=type, weight=weight, evidence=evidence,
            valid_at=valid_at, invalid_at=invalid_at,
        )  # fmt: skip

    def get_edge(self, id: str) -> Edge:
        """A visible edge: present, with both its nodes present."""
        return self.reader.get_edge(id)

    def remove_edge(self, id: str) -> None:
        self.writer.remove_edge(id)

    def neighbors(
        self,
        node_id: str,
        depth: int = 1,
        *,
        as_of: float | datetime | None = None,
        include_invalid: bool = False,
    ) -> list[Neighbor]:
        """Nodes within ``depth`` hops (edges either way), nearest first, each reached once,
        over the facts that hold now (or at ``as_of``); ``include_invalid`` walks every fact,
        superseded or ended ones too."""
        at = None if as_of is None else epoch(as_of, "as_of")
        return self.reader.neighbors(node_id, depth, as_of=at, include_invalid=include_invalid)

    def all_nodes(self) -> list[Node]:
        return self.reader.all_nodes()

    def all_edges(
        self, *, as_of: float | datetime | None = None, include_invalid: bool | None = None
    ) -> list[Edge]:
        """Every visible edge (with ``as_of``, or with ``include_invalid=False``, only the
        facts that hold then, or now); each with its ``invalid_at`` as resolved.
        ``include_invalid=True`` with ``as_of`` shows every edge."""
        at = None if as_of is None else epoch(as_of, "as_of")
        return self.reader.all_edges(as_of=at, include_invalid=include_invalid)

    def graph_drawing(self, limit: int = 500, max_edges: int = 20_000) -> Drawing:
        """The graph as a picture needs it (`chrysalis.read.drawing`): the ``limit`` most
        connected nodes, at most ``max_edges`` edges between them as index pairs, each
        edge's validity as `all_edges` resolves it. Every fact, ended ones too. It changes
        only when a commit applies node or edge ops (`chrysalis.read.drawing.GraphChanges`
        counts them)."""
        return read_drawing(self._store, limit, max_edges)

    def edges_at(self, node_id: str, limit: int = 500) -> tuple[list[Edge], int]:
        """A node's facts, out and in, ended ones too: at most ``limit`` edges and how many
        there are in all. `NotFound` when there is no such node."""
        return self.reader.edges_at(node_id, limit)

    # ---- persona and skills ---------------------------------------------------------------------

    def get_persona(self) -> Persona:
        return self.reader.get_persona()

    def put_persona(self, persona: Persona | Mapping[str, Any]) -> Persona:
        """Replace the persona: every field takes the given value."""
        return self.writer.put_persona(persona)

    def update_persona(self, **fields: Any) -> Persona:
        """Set only the given fields; list fields (goals, norms, skills) take the given list,
        and concurrent additions on other laptops are kept. ``traits`` merges key by key
        (a value of None deletes a trait)."""
        return self.writer.update_persona(**fields)

    def put_skill(self, skill: Skill | Mapping[str, Any]) -> Skill:
        """Add or replace a skill (add-wins against a concurrent delete)."""
        return self.writer.put_skill(skill)

    def get_skill(self, id: str) -> Skill:
        return self.reader.get_skill(id)

    def list_skills(self) -> list[Skill]:
        return self.reader.list_skills()

    def delete_skill(self, id: str) -> None:
        self.writer.delete_skill(id)

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
        return self.writer.put_embeddings([row])[0]

    def put_embeddings(
        self, rows: Sequence[Mapping[str, Any]], *, skip_missing: bool = False
    ) -> list[Embedding]:
        """Store many vectors in one commit (rows have `put_embedding`'s arguments); with
        ``skip_missing``, rows for beads that are gone are dropped instead of failing."""
        return self.writer.put_embeddings(rows, skip_missing=skip_missing)

    def get_embedding(self, item_kind: str, item_id: str, model: str) -> Embedding:
        """The stored vector; `NotFound` when none (or its item was forgotten)."""
        return self.reader.get_embedding(item_kind, item_id, model)

    # ---- replication ---------------------------------------------------------------------------

    def version_vector(self) -> dict[str, int]:
        """``{replica_id: highest contiguous seq applied}``."""
        return self.reader.version_vector()

    def ops_since(self, version_vector: Mapping[str, int]) -> list[dict[str, Any]]:
        """The ops a replica at ``version_vector`` lacks, as wire dicts (see `models.Op`)."""
        return self.reader.ops_since(version_vector)

    def apply_ops(self, ops: Iterable[Mapping[str, Any] | BaseModel]) -> ApplyResult:
        """Apply remote ops: idempotent, in any order; an op after a gap waits for the gap.

        The batch is validated whole first: `InvalidInput` for a malformed op, `DotConflict`
        for a dot we hold with other content; either way nothing is applied.
        """
        return self.writer.apply_ops(ops)

    def pending_ops(self) -> int:
        """How many remote ops wait for a gap to fill."""
        return self.reader.pending_ops()

    def state_digest(self) -> str:
        """A hash of the materialized state; equal on replicas that applied the same ops."""
        return self.reader.state_digest()

    def log_op(self, replica: str, seq: int) -> dict[str, Any] | None:
        """One op as this replica logs it (erased content stays erased), or None."""
        return self.reader.log_op(replica, seq)

    def stats(self) -> dict[str, int]:
        """Counts of what the store holds (entries per view, ops, pending)."""
        return self.reader.stats()
