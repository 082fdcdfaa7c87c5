"""Reads of records (the graph, persona, skills) and bounded walks of the graph: the part of
`chrysalis.read.reader.Reader` that knows nodes and edges."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chrysalis.core import crdt
from chrysalis.core.checks import check_id
from chrysalis.core.errors import InvalidInput, NotFound
from chrysalis.core.graph_ids import EntityNames, node_id
from chrysalis.core.models import Edge, Neighbor, Node
from chrysalis.core.validity import Span, holds, resolve
from chrysalis.store.env import Store, Txn
from chrysalis.store.keys import RECORD_DBS, record_key, unpack

COUNT_CAP = 16_384  # adjacency entries a walk counts at most at a hub (its degree)


@dataclass(frozen=True, slots=True)
class Step:
    """One neighbour a bounded walk reached: the node, the edge taken, how far out."""

    node: str
    edge: str
    weight: float
    evidence: list[str]
    depth: int


class GraphReads:
    """Record and graph reads, mixed into `chrysalis.read.reader.Reader`."""

    store: Store
    entities: EntityNames | None = None  # the memory's entity naming (`Memory` sets it)

    def record(self, collection: str, id: str) -> crdt.Record | None:
        store = self.store
        with store.read() as txn:
            raw = txn.get(record_key(collection, id), db=store.dbs[RECORD_DBS[collection]])
        return None if raw is None else unpack(raw)

    def records(self, collection: str) -> list[tuple[str, crdt.Record]]:
        store = self.store
        with store.read() as txn:
            db = store.dbs[RECORD_DBS[collection]]
            return [(k.decode(), unpack(v)) for k, v in txn.cursor(db=db)]

    def resolve_node(self, id: str) -> str:
        """``id``; or when no node has it, the node a fact named so (`graph_ids.node_id`:
        ``get_node("Acme Corp")`` finds ``acme-corp``), or the extracted entity of that name
        (`graph.derived_node_id`: ``get_node("Lisbon")`` finds the place)."""
        candidates = [id, node_id(id)]
        if self.entities is not None:
            candidates.append(self.entities.id(id))
        for candidate in candidates:
            record = self.record("node", candidate)
            if record is not None and crdt.is_present(record):
                return candidate
        return id

    def get_node(self, id: str) -> Node:
        check_id(id, "node")
        id = self.resolve_node(id)
        record = self.record("node", id)
        if record is None or not crdt.is_present(record):
            raise NotFound(f"no node {id!r}")
        return node_of(id, record)

    def all_nodes(self) -> list[Node]:
        return [node_of(k, r) for k, r in self.records("node") if crdt.is_present(r)]

    def get_edge(self, id: str) -> Edge:
        """A visible edge: present, with both its nodes present."""
        check_id(id, "edge")
        with self.store.read() as txn:
            edge = self.visible_edge(txn, id)
        if edge is None:
            raise NotFound(f"no edge {id!r}")
        return edge

    def visible_edge(self, txn: Txn, id: str) -> Edge | None:
        """An edge with both its nodes present, its ``invalid_at`` as resolved against the
        facts that supersede it (`chrysalis.core.validity`)."""
        dbs = self.store.dbs
        raw = txn.get(id.encode(), db=dbs["edges"])
        if raw is None:
            return None
        record = unpack(raw)
        if not crdt.is_present(record):
            return None
        for side in ("source", "target"):
            node_raw = txn.get(crdt.field_value(record, side).encode(), db=dbs["nodes"])
            if node_raw is None or not crdt.is_present(unpack(node_raw)):
                return None
        edge = edge_of(id, record)
        end = self.effective_end(txn, id, record)
        if end != edge.invalid_at:
            edge = edge.model_copy(update={"invalid_at": end})
        return edge

    def effective_end(self, txn: Txn, id: str, record: crdt.Record) -> float | None:
        """When the fact stops holding: its stated ``invalid_at`` or, on a functional
        predicate, the start of a later fact with another object, whichever is first."""
        stated: float | None = crdt.field_value(record, "invalid_at")
        if not crdt.field_value(record, "metadata", {}).get("functional"):
            return stated
        source = crdt.field_value(record, "source")
        predicate = crdt.field_value(record, "predicate")
        group = []
        for eid, direction in self._adjacent(txn, source):
            if direction != b"o":
                continue
            raw = txn.get(eid.encode(), db=self.store.dbs["edges"])
            other = None if raw is None else unpack(raw)
            if (
                other is not None
                and crdt.is_present(other)
                and crdt.field_value(other, "predicate") == predicate
                and crdt.field_value(other, "metadata", {}).get("functional")
            ):
                group.append(
                    Span(
                        eid,
                        crdt.field_value(other, "target"),
                        crdt.field_value(other, "valid_at"),
                        crdt.field_value(other, "invalid_at"),
                    )
                )
        return resolve(group).get(id, stated)

    def facts_of(self, node_id: str) -> list[tuple[Edge, Node]]:
        """Every visible edge out of ``node_id`` (ended ones too) with its target node, each
        ``invalid_at`` as resolved (`effective_end`), in one transaction that reads each edge
        once; [] when the node is absent."""
        dbs = self.store.dbs
        out: list[tuple[Edge, Node, crdt.Record]] = []
        with self.store.read() as txn:
            raw = txn.get(node_id.encode(), db=dbs["nodes"])
            if raw is None or not crdt.is_present(unpack(raw)):
                return []
            for eid, direction in self._adjacent(txn, node_id):
                if direction != b"o":
                    continue
                raw = txn.get(eid.encode(), db=dbs["edges"])
                record = None if raw is None else unpack(raw)
                if record is None or not crdt.is_present(record):
                    continue
                target = crdt.field_value(record, "target")
                node_raw = txn.get(target.encode(), db=dbs["nodes"])
                node = None if node_raw is None else unpack(node_raw)
                if node is None or not crdt.is_present(node):
                    continue
                out.append((edge_of(eid, record), node_of(target, node), record))
        groups: dict[str, list[Span]] = {}
        for edge, _, record in out:
            if crdt.field_value(record, "metadata", {}).get("functional"):
                span = Span(edge.id, edge.target, edge.valid_at, edge.invalid_at)
                groups.setdefault(edge.predicate, []).append(span)
        ends = {eid: end for group in groups.values() for eid, end in resolve(group).items()}
        return [
            (e.model_copy(update={"invalid_at": ends[e.id]}) if e.id in ends else e, n)
            for e, n, _ in out
        ]

    def edges_at(self, node_id: str, limit: int) -> tuple[list[Edge], int]:
        """The visible edges at a node, out and in, ended ones too (each ``invalid_at`` as
        resolved), at most ``limit`` of them in adjacency order, and how many it has in all.
        `NotFound` when the node is absent."""
        check_id(node_id, "node")
        node_id = self.resolve_node(node_id)
        out: list[Edge] = []
        total = 0
        with self.store.read() as txn:
            raw = txn.get(node_id.encode(), db=self.store.dbs["nodes"])
            if raw is None or not crdt.is_present(unpack(raw)):
                raise NotFound(f"no node {node_id!r}")
            seen = set()
            for edge_id, _ in self._adjacent(txn, node_id):
                if edge_id in seen:
                    continue  # a self-loop is adjacent both ways
                seen.add(edge_id)
                edge = self.visible_edge(txn, edge_id)
                if edge is None:
                    continue
                total += 1
                if len(out) < limit:
                    out.append(edge)
        return out, total

    def all_edges(
        self, as_of: float | None = None, include_invalid: bool | None = None
    ) -> list[Edge]:
        """Every visible edge; with ``as_of``, those that hold at that time; with
        ``include_invalid=False``, none that stopped holding (before ``as_of``, or now).
        ``include_invalid`` defaults to True without ``as_of`` and False with it."""
        if include_invalid is None:
            include_invalid = as_of is None
        store = self.store
        with store.read() as txn:
            ids = [
                k.decode()
                for k in txn.cursor(db=store.dbs["edges"]).iternext(keys=True, values=False)
            ]
            edges = [e for e in (self.visible_edge(txn, i) for i in ids) if e is not None]
        return [e for e in edges if shown(e, as_of, include_invalid)]

    def neighbors(
        self,
        node_id: str,
        depth: int = 1,
        as_of: float | None = None,
        include_invalid: bool = False,
    ) -> list[Neighbor]:
        """Nodes within ``depth`` hops (edges either way), nearest first, each reached once,
        over the facts that hold (at ``as_of``, or now; every fact with
        ``include_invalid``)."""
        check_id(node_id, "node")
        if not isinstance(depth, int) or not 1 <= depth <= 4:
            raise InvalidInput("depth must be an int from 1 to 4")
        node_id = self.resolve_node(node_id)
        dbs = self.store.dbs
        out: list[Neighbor] = []
        with self.store.read() as txn:
            start = txn.get(node_id.encode(), db=dbs["nodes"])
            if start is None or not crdt.is_present(unpack(start)):
                raise NotFound(f"no node {node_id!r}")
            seen_nodes, seen_edges = {node_id}, set()
            frontier = [node_id]
            for level in range(1, depth + 1):
                next_frontier = []
                for current in frontier:
                    for edge_id, direction in self._adjacent(txn, current):
                        if edge_id in seen_edges:
                            continue
                        edge = self.visible_edge(txn, edge_id)
                        if edge is None or not shown(edge, as_of, include_invalid):
                            continue
                        seen_edges.add(edge_id)
                        other = edge.target if edge.source == current else edge.source
                        if other in seen_nodes:
                            continue
                        seen_nodes.add(other)
                        node = node_of(other, unpack(txn.get(other.encode(), db=dbs["nodes"])))
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

    def _adjacent(self, txn: Txn, node_id: str) -> list[tuple[str, bytes]]:
        prefix = node_id.encode() + b"\0"
        hits = []
        with txn.cursor(db=self.store.dbs["adj"]) as cur:
            if cur.set_range(prefix):
                for k, v in cur:
                    if not k.startswith(prefix):
                        break
                    hits.append((k[len(prefix) :].decode(), v))
        return hits

    def graph_items(
        self, node_ids: list[str], edge_ids: list[str]
    ) -> tuple[dict[str, tuple[Node, Any]], dict[str, tuple[Edge, Node, Node, Any]]]:
        """The present nodes and visible edges (with both their nodes) among these ids, read
        in one transaction, each with its record (for `record_origin`)."""
        dbs = self.store.dbs
        nodes: dict[str, tuple[Node, Any]] = {}
        edges: dict[str, tuple[Edge, Node, Node, Any]] = {}
        if not node_ids and not edge_ids:  # a recall of beads only: no transaction to open
            return nodes, edges
        with self.store.read() as txn:

            def node(node_id: str) -> tuple[Node, Any] | None:
                raw = txn.get(node_id.encode(), db=dbs["nodes"])
                record = None if raw is None else unpack(raw)
                if record is None or not crdt.is_present(record):
                    return None
                return node_of(node_id, record), record

            for node_id in node_ids:
                if (found := node(node_id)) is not None:
                    nodes[node_id] = found
            for edge_id in edge_ids:
                raw = txn.get(edge_id.encode(), db=dbs["edges"])
                record = None if raw is None else unpack(raw)
                if record is None or not crdt.is_present(record):
                    continue
                ends = [node(crdt.field_value(record, end)) for end in ("source", "target")]
                if ends[0] is not None and ends[1] is not None:
                    edges[edge_id] = (edge_of(edge_id, record), ends[0][0], ends[1][0], record)
        return nodes, edges

    def walk(
        self,
        seeds: list[str],
        limit: int,
        reads: int = 256,
        two_hops: Callable[[str, int], bool] | None = None,
        as_of: float | None = None,
    ) -> dict[str, tuple[int, list[Step]]]:
        """Bounded neighbourhoods of several nodes, read in one transaction: for each seed
        present, ``(degree, steps)``, where degree is its number of neighbours (as
        `neighbors` counts them at depth 1) and steps are at most ``limit`` of them, heaviest
        edge first; depth 2 fills what depth 1 leaves of ``limit``, if ``two_hops(seed,
        degree)`` (when given) says so. At most ``reads`` edges are read per seed: past that
        (a hub), the degree counts the hub's adjacency entries and the heaviest of the edges
        read are taken. Facts that do not hold (at ``as_of``, or ended by now) are not
        walked."""
        out: dict[str, tuple[int, list[Step]]] = {}
        if not seeds:  # no node among a recall's hits: no transaction to open
            return out
        with self.store.read() as txn:
            walk = _Walk(self, txn, as_of)
            for seed in seeds:
                if seed in out or not walk.visible(seed):
                    continue
                walk.start(seed, reads)
                first, count = walk.level([seed], count=True)
                degree = len(first) if count <= reads else count
                chosen = sorted(first, key=lambda h: -h[2])[:limit]
                depth = [1] * len(chosen)
                deeper = two_hops is None or two_hops(seed, degree)
                if len(chosen) < limit and walk.budget > 0 and deeper:  # every neighbour chosen
                    second, _ = walk.level([h[0] for h in first])  # in `neighbors`' order
                    second.sort(key=lambda h: -h[2])
                    second = second[: limit - len(chosen)]
                    chosen += second
                    depth += [2] * len(second)
                steps = [
                    Step(node, edge, weight, crdt.set_values(record, "evidence"), d)
                    for (node, edge, weight, record), d in zip(chosen, depth, strict=True)
                ]
                out[seed] = (degree, steps)
        return out

    def _adjacent_ids(
        self, txn: Txn, node_id: str, limit: int, count_all: bool
    ) -> tuple[list[str], int]:
        """The first ``limit`` edge ids at a node, and how many there are (with
        ``count_all``, up to `COUNT_CAP`: past it, a neighbour's share is negligible anyway;
        else at most ``limit`` + 1)."""
        prefix = node_id.encode() + b"\0"
        ids: list[str] = []
        count = 0
        with txn.cursor(db=self.store.dbs["adj"]) as cur:
            if cur.set_range(prefix):
                for k in cur.iternext(values=False):
                    if not k.startswith(prefix):
                        break
                    if count < limit:
                        ids.append(k[len(prefix) :].decode())
                    elif not count_all or count >= COUNT_CAP:
                        break
                    count += 1
        return ids, count


_Hop = tuple[str, str, float, Any]  # (node reached, edge taken, its weight, its record)


class _Walk:
    """One transaction's bounded breadth-first walk (`GraphReads.walk`), remembering which
    nodes and edges are visible across seeds."""

    def __init__(self, reads: GraphReads, txn: Txn, as_of: float | None = None) -> None:
        self.reads, self.txn, self.dbs = reads, txn, reads.store.dbs
        self.as_of = as_of
        self.now = time.time()
        self.present: dict[str, bool] = {}
        self.edges: dict[str, tuple[str, str, float, Any] | None] = {}
        self.seen_nodes: set[str] = set()
        self.seen_edges: set[str] = set()
        self.budget = 0

    def start(self, seed: str, reads: int) -> None:
        self.seen_nodes, self.seen_edges, self.budget = {seed}, set(), reads

    def visible(self, node: str) -> bool:
        if node not in self.present:
            raw = self.txn.get(node.encode(), db=self.dbs["nodes"])
            self.present[node] = raw is not None and crdt.is_present(unpack(raw))
        return self.present[node]

    def edge(self, edge_id: str) -> tuple[str, str, float, Any] | None:
        """(source, target, weight, record) of a visible edge (both its nodes present)."""
        if edge_id not in self.edges:
            raw = self.txn.get(edge_id.encode(), db=self.dbs["edges"])
            record = None if raw is None else unpack(raw)
            found = None
            if record is not None and crdt.is_present(record):
                source = crdt.field_value(record, "source")
                target = crdt.field_value(record, "target")
                if self.visible(source) and self.visible(target) and self.holds(edge_id, record):
                    found = (source, target, crdt.field_value(record, "weight", 1.0), record)
            self.edges[edge_id] = found
        return self.edges[edge_id]

    def holds(self, edge_id: str, record: crdt.Record) -> bool:
        end = self.reads.effective_end(self.txn, edge_id, record)
        if self.as_of is None:
            return end is None or end > self.now
        return holds(crdt.field_value(record, "valid_at"), end, self.as_of)

    def level(self, nodes: list[str], count: bool = False) -> tuple[list[_Hop], int]:
        """The nodes one hop further not reached yet, in adjacency order (as `neighbors`
        walks), and (with ``count``) how many adjacency entries the nodes have in all."""
        hops: list[_Hop] = []
        total = 0
        for current in nodes:
            adjacent, entries = self.reads._adjacent_ids(self.txn, current, self.budget, count)
            self.budget -= len(adjacent)
            total += entries
            for edge_id in adjacent:
                if edge_id in self.seen_edges:
                    continue
                found = self.edge(edge_id)
                if found is None:
                    continue
                self.seen_edges.add(edge_id)
                source, target, weight, record = found
                other = target if source == current else source
                if other in self.seen_nodes:
                    continue
                self.seen_nodes.add(other)
                hops.append((other, edge_id, weight, record))
        return hops, total


def shown(edge: Edge, as_of: float | None, include_invalid: bool) -> bool:
    """Whether ``edge`` is shown: every edge with ``include_invalid`` and no ``as_of``; with
    ``as_of``, those that hold then; else those not ended by now."""
    if as_of is not None:
        return include_invalid or holds(edge.valid_at, edge.invalid_at, as_of)
    return include_invalid or edge.invalid_at is None or edge.invalid_at > time.time()


def record_origin(record: crdt.Record) -> dict[str, Any]:
    """Where a record comes from: the replica and op of its latest presence stamp."""
    stamps = [(hlc, dot) for dot, hlc in record["p"].items()]
    if not stamps:
        return {}
    hlc, dot = max(stamps)
    return {"origin_replica": crdt.parse_dot(dot)[0], "op": dot, "hlc": hlc}


def node_of(id: str, r: crdt.Record) -> Node:
    return Node.model_construct(
        id=id,
        type=crdt.field_value(r, "type"),
        # A derived node's name is a set element, so a retraction leaves none behind.
        name=crdt.field_value(r, "name") or next(iter(crdt.set_values(r, "names")), None),
        labels=crdt.set_values(r, "labels"),
        metadata=crdt.field_value(r, "metadata", {}),
        evidence=crdt.set_values(r, "evidence"),
        derived_by=crdt.field_value(r, "derived_by"),
    )


def edge_of(id: str, r: crdt.Record) -> Edge:
    return Edge.model_construct(
        id=id,
        source=crdt.field_value(r, "source"),
        target=crdt.field_value(r, "target"),
        predicate=crdt.field_value(r, "predicate"),
        weight=crdt.field_value(r, "weight", 1.0),
        evidence=crdt.set_values(r, "evidence"),
        valid_at=crdt.field_value(r, "valid_at"),
        invalid_at=crdt.field_value(r, "invalid_at"),
        derived_by=crdt.field_value(r, "derived_by"),
        metadata=crdt.field_value(r, "metadata", {}),
    )
