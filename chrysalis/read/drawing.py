"""The knowledge graph as a picture needs it: nodes by degree, edges as index pairs.

`read_drawing` reads every node and edge record once, in one transaction, without building
`Node`/`Edge` models (the inspector's old route did, and three record reads per edge: 2.4 s
at 5,000 entities). It keeps only what a drawing uses: each node's id, name, type and
degree, each edge's two ends (as positions in the node list) and when it held. The facts
behind a node (predicates, evidence) are read when the person asks for that node.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chrysalis.core import crdt
from chrysalis.core.events import Committed
from chrysalis.core.validity import Span, resolve
from chrysalis.store.env import Store
from chrysalis.store.keys import unpack


@dataclass(frozen=True, slots=True)
class Drawing:
    """Up to a limit of nodes, the most connected first, and the edges between them.

    Nodes are columns of one length: ``ids``, ``names`` (None when a node has none),
    ``types`` (positions in ``type_names``) and ``degree`` (visible edges at the node, in the
    whole graph). Edges are columns too: ``sources`` and ``targets`` are positions in the node
    columns; ``valid_at`` and ``invalid_at`` are epoch seconds or None, ``invalid_at`` as
    resolved against the later facts of a functional predicate (as `GraphReads.all_edges`
    says it). ``nodes_total`` and ``edges_total`` count what the graph holds (visible edges:
    both ends present), so a reader knows what was left out."""

    ids: list[str]
    names: list[str | None]
    types: list[int]
    type_names: list[str]
    degree: list[int]
    sources: list[int]
    targets: list[int]
    valid_at: list[float | None]
    invalid_at: list[float | None]
    nodes_total: int
    edges_total: int

    def as_json(self) -> dict[str, Any]:
        """The wire shape of ``GET /v1/kg/graph/draw`` (docs/api.md)."""
        return {
            "nodes": {"id": self.ids, "name": self.names, "type": self.types,
                      "degree": self.degree},
            "types": self.type_names,
            "edges": {"source": self.sources, "target": self.targets,
                      "valid_at": self.valid_at, "invalid_at": self.invalid_at},
            "nodes_total": self.nodes_total,
            "edges_total": self.edges_total,
        }  # fmt: skip


class GraphChanges:
    """Counts the commits that changed nodes or edges, as a listener of ``store``: while
    `version` stays the same, so does every drawing. Beads and vectors written meanwhile (an
    agent at work, the indexer after it) leave it alone; a commit that says nothing of its
    ops (a snapshot loaded) counts. `version` names this counter too (a random token), so
    it never repeats across restarts. ``listeners`` are called after each counted commit,
    in the committing thread (they must not block)."""

    def __init__(self, store: Store) -> None:
        self._token = secrets.token_hex(8)
        self._count = 0
        self._lock = threading.Lock()
        self.listeners: list[Callable[[], None]] = []
        store.listeners.append(self._seen)

    @property
    def version(self) -> str:
        return f"{self._token}.{self._count}"

    def _seen(self, committed: Committed) -> None:
        if not committed.ops or any(
            str(op["kind"]).startswith(("node.", "edge.")) for op in committed.ops
        ):
            with self._lock:
                self._count += 1
            for listener in self.listeners:
                listener()


def read_drawing(store: Store, limit: int, max_edges: int) -> Drawing:
    """The graph to draw: the ``limit`` nodes of highest degree (ties by id) and at most
    ``max_edges`` of the visible edges between them, those among the most connected nodes
    first. Reads the whole graph once; holds no model objects."""
    dbs = store.dbs
    with store.read() as txn:
        nodes: dict[str, tuple[str | None, str]] = {}
        for key, raw in txn.cursor(db=dbs["nodes"]):
            record = unpack(raw)
            if crdt.is_present(record):
                # a derived node's name is a set element (as `graph.node_of` reads it)
                name = crdt.field_value(record, "name") or next(
                    iter(crdt.set_values(record, "names")), None
                )
                nodes[key.decode()] = (name, crdt.field_value(record, "type"))
        edges: list[tuple[str, str, Any, Any]] = []  # (source, target, valid_at, invalid_at)
        functional: dict[tuple[str, str], list[tuple[int, Span]]] = {}
        for key, raw in txn.cursor(db=dbs["edges"]):
            record = unpack(raw)
            if not crdt.is_present(record):
                continue
            source = crdt.field_value(record, "source")
            target = crdt.field_value(record, "target")
            valid_at = crdt.field_value(record, "valid_at")
            invalid_at = crdt.field_value(record, "invalid_at")
            if crdt.field_value(record, "metadata", {}).get("functional"):
                # its end may come from a later fact with another object, as in
                # `GraphReads.effective_end`; the group counts edges whose ends are gone too
                group = functional.setdefault((source, crdt.field_value(record, "predicate")), [])
                position = len(edges) if source in nodes and target in nodes else -1
                group.append((position, Span(key.decode(), target, valid_at, invalid_at)))
            if source in nodes and target in nodes:
                edges.append((source, target, valid_at, invalid_at))
    for group in functional.values():
        ends = resolve(span for _, span in group)
        for position, span in group:
            if position >= 0:
                source, target, valid_at, _ = edges[position]
                edges[position] = (source, target, valid_at, ends[span.id])

    degree: dict[str, int] = dict.fromkeys(nodes, 0)
    for source, target, _, _ in edges:
        degree[source] += 1
        degree[target] += 1
    kept = sorted(nodes, key=lambda n: (-degree[n], n))[:limit]
    rank = {node: i for i, node in enumerate(kept)}
    between = [e for e in edges if e[0] in rank and e[1] in rank]
    if len(between) > max_edges:
        # the edges among the most connected nodes are the picture's skeleton: keep those
        between.sort(key=lambda e: max(rank[e[0]], rank[e[1]]))
        between = between[:max_edges]
    type_names: list[str] = []
    type_index: dict[str, int] = {}
    types = []
    for node in kept:
        kind = nodes[node][1]
        if kind not in type_index:
            type_index[kind] = len(type_names)
            type_names.append(kind)
        types.append(type_index[kind])
    return Drawing(
        ids=kept,
        names=[nodes[n][0] for n in kept],
        types=types,
        type_names=type_names,
        degree=[degree[n] for n in kept],
        sources=[rank[e[0]] for e in between],
        targets=[rank[e[1]] for e in between],
        valid_at=[e[2] for e in between],
        invalid_at=[e[3] for e in between],
        nodes_total=len(nodes),
        edges_total=len(edges),
    )
