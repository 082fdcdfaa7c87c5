"""The knowledge graph: nodes, edges, facts (nodes and edge in one write), neighbors."""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from datetime import datetime
from typing import Annotated, Any
from weakref import WeakKeyDictionary

from fastapi import APIRouter, Header, Query
from fastapi.responses import Response

from chrysalis import Memory
from chrysalis.core.errors import NotFound
from chrysalis.core.models import Edge, Neighbor, Node
from chrysalis.read.drawing import GraphChanges

from ..bodies import EdgeIn, FactIn, NodeIn
from .common import D, PathId, json_answer, json_list

router = APIRouter()


@router.post("/v1/kg/nodes", status_code=201, response_model=Node, tags=["kg"])
def add_node(d: D, body: NodeIn) -> Response:
    """Add or replace a node."""
    node = d.memory.add_node(
        body.id, body.type, name=body.name, labels=body.labels, metadata=body.metadata
    )
    return json_answer(node, 201)


@router.get("/v1/kg/nodes/{id}", response_model=Node, tags=["kg"], responses={404: {}})
def get_node(d: D, id: PathId) -> Response:
    """One node by its id."""
    return json_answer(d.memory.get_node(id))


@router.delete("/v1/kg/nodes/{id}", status_code=204, tags=["kg"], responses={404: {}})
def remove_node(d: D, id: PathId) -> Response:
    """Remove a node by its id."""
    d.memory.remove_node(id)
    return Response(status_code=204)


@router.get(
    "/v1/kg/nodes/{id}/neighbors",
    response_model=list[Neighbor],
    tags=["kg"],
    responses={404: {}},
)
def neighbors(
    d: D,
    id: PathId,
    depth: Annotated[int, Query(ge=1, le=3)] = 1,
    as_of: Annotated[float | datetime | None, Query()] = None,
    include_invalid: bool = False,
) -> Response:
    """The nodes near a node, over the facts that hold.

    Nodes within ``depth`` hops, each with the edge taken and its direction, over the facts
    that hold now; ``as_of`` (ISO 8601 or epoch seconds): those that held then;
    ``include_invalid``: every fact, superseded or ended ones too."""
    found = d.memory.neighbors(id, depth=depth, as_of=as_of, include_invalid=include_invalid)
    return json_list(found)


@router.get("/v1/kg/nodes/{id}/edges", tags=["kg"], responses={404: {}})
def node_edges(
    d: D, id: PathId, limit: Annotated[int, Query(ge=1, le=1000)] = 200
) -> dict[str, Any]:
    """A node's facts, out and in.

    The node, its edges out and in (ended ones too, each ``invalid_at`` as resolved), at
    most ``limit`` of them, ``total`` how many it has, and ``names``: the name of each node
    at their other ends, by id. The inspector reads it when a node is chosen."""
    node = d.memory.get_node(id)
    edges, total = d.memory.edges_at(node.id, limit)
    names: dict[str, str | None] = {node.id: node.name}
    for e in edges:
        for end in (e.source, e.target):
            if end not in names:
                try:
                    names[end] = d.memory.get_node(end).name
                except NotFound:  # removed since the edges were read (another client)
                    names[end] = None
    return {
        "node": node.model_dump(mode="json"),
        "edges": [e.model_dump(mode="json") for e in edges],
        "total": total,
        "names": names,
    }


@router.post("/v1/kg/edges", status_code=201, response_model=Edge, tags=["kg"])
def add_edge(d: D, body: EdgeIn) -> Response:
    """Add or replace an edge between two existing nodes (404 when one is missing)."""
    edge = d.memory.add_edge(
        body.source, body.target, body.predicate, id=body.id, weight=body.weight,
        evidence=body.evidence, valid_at=body.valid_at, invalid_at=body.invalid_at,
    )  # fmt: skip
    return json_answer(edge, 201)


@router.post("/v1/kg/facts", status_code=201, response_model=Edge, tags=["kg"], responses={400: {}})
def add_fact(d: D, body: FactIn) -> Response:
    """Record a fact; the nodes it names are made as needed.

    Record ``subject -[predicate]-> object`` in one atomic write: the nodes missing
    (named by their text, so "Alice" in two facts is one node) and the edge (the same fact
    twice is one edge). Existing nodes keep their type and name. Answers the edge."""
    edge = d.memory.add_fact(
        body.subject, body.predicate, body.object, type=body.type, weight=body.weight,
        evidence=body.evidence, valid_at=body.valid_at, invalid_at=body.invalid_at,
    )  # fmt: skip
    return json_answer(edge, 201)


@router.get("/v1/kg/edges/{id}", response_model=Edge, tags=["kg"], responses={404: {}})
def get_edge(d: D, id: PathId) -> Response:
    """One edge by its id.

    Its ``metadata`` may say how it came to be: ``stated_by`` (who stated a derived fact),
    ``functional`` (the predicate holds one value at a time), and, when a later fact ended
    it, ``superseded_by`` (that fact's id) and ``stated_end`` (the end it had before, if
    any): a forget of the later fact's bead gives that end back.
    """
    return json_answer(d.memory.get_edge(id))


@router.delete("/v1/kg/edges/{id}", status_code=204, tags=["kg"], responses={404: {}})
def remove_edge(d: D, id: PathId) -> Response:
    """Remove an edge by its id."""
    d.memory.remove_edge(id)
    return Response(status_code=204)


@router.get("/v1/kg/graph", tags=["kg"])
def graph(d: D, limit: Annotated[int, Query(ge=1, le=5000)] = 500) -> dict[str, Any]:
    """The knowledge graph to draw: the most connected nodes and their edges.

    The graph to draw: up to ``limit`` nodes (the most connected first) and every edge
    between them, facts that stopped holding included (``valid_at``, ``invalid_at`` say
    when each held). ``truncated`` says whether nodes were left out."""
    nodes = d.memory.all_nodes()
    edges = d.memory.all_edges(include_invalid=True)
    degree: Counter[str] = Counter()
    for e in edges:
        degree[e.source] += 1
        degree[e.target] += 1
    nodes.sort(key=lambda n: (-degree[n.id], n.id))
    kept = nodes[:limit]
    ids = {n.id for n in kept}
    return {
        "nodes": [n.model_dump(mode="json") for n in kept],
        "edges": [e.model_dump(mode="json") for e in edges if e.source in ids and e.target in ids],
        "truncated": len(nodes) > limit,
    }


MAX_DRAWN_NODES = 5_000
MAX_DRAWN_EDGES = 50_000


class _Drawn:
    """One memory's drawings as sent, by (limit, max_edges): (etag, JSON bytes), and the
    count of its graph's changes that names them. A lock per memory: a burst of draws
    computes once, and one memory's draw waits for no other. Every drawing goes when the
    graph changes (a forget must not leave an entity's name in one, in any shape)."""

    def __init__(self, memory: Memory) -> None:
        self.lock = threading.Lock()
        self.answers: dict[tuple[int, int], tuple[str, bytes]] = {}
        self.changes = GraphChanges(memory.store)
        self.changes.listeners.append(self._changed)

    def _changed(self) -> None:
        # in the committing thread: a new dict, no lock (a draw may hold it for a while);
        # a draw that read before the change puts its answer in the old dict, or in the new
        # one under the old version's tag, which the next draw drops (`graph_draw`)
        self.answers = {}


# Dropped with their memory (a memory re-created under the same name is a new object).
_drawn: WeakKeyDictionary[Memory, _Drawn] = WeakKeyDictionary()
_drawn_lock = threading.Lock()


@router.get(
    "/v1/kg/graph/draw",
    tags=["kg"],
    responses={304: {"description": "unchanged since the ETag given in If-None-Match"}},
)
def graph_draw(
    d: D,
    limit: Annotated[int, Query(ge=1, le=MAX_DRAWN_NODES)] = 500,
    max_edges: Annotated[int, Query(ge=0, le=MAX_DRAWN_EDGES)] = 20_000,
    if_none_match: Annotated[str | None, Header(max_length=200)] = None,
) -> Response:
    """The knowledge graph as a drawing needs it, compact and cached.

    Columns, not objects: ``nodes`` (``id``, ``name``, ``type`` as a position in ``types``,
    ``degree``), the ``limit`` most connected first; ``edges`` (``source`` and ``target`` as
    positions in the node columns, ``valid_at``, ``invalid_at``), at most ``max_edges`` of
    those between the nodes kept, facts that stopped holding included; ``nodes_total`` and
    ``edges_total`` say what the graph holds. The answer carries an ``ETag`` naming the
    graph's version: sent back in ``If-None-Match`` while no node or edge changed, it gets a
    304 and no body. Made once per version (beads and vectors written meanwhile leave it)."""
    memory = d.memory
    with _drawn_lock:
        drawn = _drawn.get(memory)
        if drawn is None:
            drawn = _drawn[memory] = _Drawn(memory)  # counting from here, before any read
    # read before the graph is: a drawing is never older than the version it is sent as
    version = f"{memory.replica_id} {drawn.changes.version} {limit} {max_edges}"
    etag = '"' + hashlib.blake2b(version.encode(), digest_size=12).hexdigest() + '"'
    headers = {"etag": etag}
    if if_none_match is not None and etag in (t.strip() for t in if_none_match.split(",")):
        return Response(status_code=304, headers=headers)
    with drawn.lock:
        answers = drawn.answers
        cached = answers.get((limit, max_edges))
        if cached is None or cached[0] != etag:
            drawing = memory.graph_drawing(limit=limit, max_edges=max_edges)
            body = json.dumps(drawing.as_json(), separators=(",", ":"), ensure_ascii=False)
            # one answer per shape asked, the page asks one: a few at most; an answer of an
            # older version (another shape's, kept since) may name what was forgotten
            if len(answers) >= 4 or cached is not None:
                answers.clear()
            cached = answers[(limit, max_edges)] = (etag, body.encode())
    return Response(cached[1], media_type="application/json", headers=headers)
