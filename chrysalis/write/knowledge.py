"""The write side of knowledge (DESIGN §13): what extractors found becomes node and edge ops
with their evidence, contradictions supersede, and a forget retracts what only it supported.

Every derived node and edge lists its evidence beads (an add-wins set) and the extractor that
derived it (``derived_by``). An entity's evidence is the beads that mention it: the mention
links live on the node, not as an edge per bead (an edge needs a node at each end, and a node
per bead would double the op log). Items a person or an agent wrote (``derived_by`` None) are
never retracted by a forget; their evidence only loses the forgotten bead.

An entity's id is a keyed hash of its name (`graph.EntityNames`); when the memory's graph key
changes (it learned the key its replicas share, or the data dir predates keyed ids), `rekey`
moves every derived node made under another key to its id under this one, with the facts
that name it, as ordinary ops. A memory whose key is its data dir's own (no remote, no sync
key) has that key replaced after a forget retracts an entity (`rotate`, run by the scrub):
the old key, which could test a guessed name against the retracted entity's id, is erased.
"""

from __future__ import annotations

import itertools
import os
import time
from collections import defaultdict
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from chrysalis.core import crdt
from chrysalis.core.graph_ids import (
    GRAPH_KEY_BYTES,
    EntityNames,
    derived_node_id,
    edge_id,
    key_fingerprint,
    node_id,
    same_name,
)
from chrysalis.core.models import Bead, OpKind
from chrysalis.extract import Extraction
from chrysalis.extract.summary import TAG as SUMMARY_TAG
from chrysalis.extract.summary import Summary
from chrysalis.read import mentions as timeline
from chrysalis.secrets.scan import Policy, redact_extraction, scan_bead
from chrysalis.store.env import WriteContext
from chrysalis.store.keys import RECORD_DBS, unpack
from chrysalis.write.entity_moves import move_entities
from chrysalis.write.entity_moves import record_scalars as _scalars
from chrysalis.write.op_rules import local_op
from chrysalis.write.supersede import supersede, unsupersede

if TYPE_CHECKING:
    from chrysalis.write.writer import Writer

MAX_NAME = 512
KEYED = "graph:keyed"  # meta: the fingerprint of the graph key the derived nodes were made with
GRAPH_KEY = "graph:key"  # meta: the graph key, while it is the data dir's own (no sync key)
ROTATE = "graph:rotate"  # meta: a retraction left ids under the data dir's own key: replace it


@dataclass
class Learned:
    """What one batch of extractions wrote."""

    beads: int = 0  # beads whose extraction was written (live ones)
    nodes: int = 0  # node ops
    edges: int = 0  # edge ops
    superseded: list[str] = field(default_factory=list)  # fact edges given an invalid_at


@dataclass
class Retracted:
    """What a forget took back: derived items removed, and items that only lost evidence."""

    nodes: list[str] = field(default_factory=list)
    edges: list[str] = field(default_factory=list)
    trimmed: list[str] = field(default_factory=list)  # "node:<id>" / "edge:<id>" kept
    summaries: list[str] = field(default_factory=list)  # summary beads forgotten with them


@dataclass
class _NodePlan:
    name: str
    type: str
    evidence: set[str] = field(default_factory=set)


@dataclass
class _EdgePlan:
    source: str
    target: str
    predicate: str
    valid_at: float | None
    invalid_at: float | None
    metadata: dict[str, Any]
    evidence: set[str] = field(default_factory=set)


class KnowledgeWriter:
    """Writes extractions and retractions through a `chrysalis.write.writer.Writer`'s store."""

    def __init__(self, writer: Writer, entities: EntityNames) -> None:
        self.writer = writer
        self.functional = writer.functional  # the memory's one list (`chrysalis.write.supersede`)
        self.entities = entities
        self.unsaved_key: bytes | None = None  # a key of our own, kept with the first write
        self._keyed: str | None = writer.store.get_meta(KEYED)
        self._keyed_saved = self._keyed
        if self._keyed is None and not self._any_derived_node():
            self._keyed = entities.fingerprint  # nothing named yet: nothing to move

    def put_meta(self, name: str, value: Any) -> None:
        """Durably set a meta value (the worker's cursors)."""
        self.writer.put_meta(name, value)

    # ---- learning --------------------------------------------------------------------------

    def learn(
        self,
        extractions: Sequence[Extraction],
        bead_times: Mapping[str, float],
        derived_by: str,
        cursor: Mapping[str, Any] | None = None,
    ) -> Learned:
        """Write a batch of extractions in one commit, with the ``cursor`` meta values that
        say it is done. Beads forgotten since they were read are skipped (their knowledge
        would outlive them)."""
        extractions = [redact_extraction(ex, self.writer.secrets) for ex in extractions]

        def write(ctx: WriteContext) -> Learned:
            _put_metas(ctx, cursor)
            self._save_key(ctx)
            learned = Learned()
            nodes: dict[str, _NodePlan] = {}
            edges: dict[str, _EdgePlan] = {}
            for ex in extractions:
                entry = ctx.get("beads", ex.bead_id.encode())
                if entry is None or entry == crdt.FORGOTTEN:
                    continue
                learned.beads += 1
                timeline.put(
                    ctx.txn, ctx.dbs["mentions"], ex.bead_id, bead_times[ex.bead_id], ex.mentions
                )
                for entity in ex.entities:
                    self._plan_node(ctx, nodes, entity.name, entity.type, ex.bead_id)
                for fact in ex.facts:
                    s = self._plan_node(ctx, nodes, fact.subject, fact.subject_type, ex.bead_id)
                    o = self._plan_node(ctx, nodes, fact.object, fact.object_type, ex.bead_id)
                    if s is None or o is None or s == o:
                        continue
                    eid = edge_id(s, fact.predicate, o)
                    plan = edges.get(eid)
                    valid_at = fact.valid_at
                    if valid_at is None and (
                        fact.invalid_at is None or fact.invalid_at >= bead_times[ex.bead_id]
                    ):  # its start is unknown; the bead's time, unless it ended before that
                        valid_at = bead_times[ex.bead_id]
                    if plan is None:
                        metadata: dict[str, Any] = {"stated_by": fact.stated_by}
                        if fact.predicate in self.functional:
                            metadata["functional"] = True
                        plan = edges[eid] = _EdgePlan(
                            s, o, fact.predicate, valid_at, fact.invalid_at, metadata
                        )
                    elif valid_at is not None and (
                        plan.valid_at is None or valid_at < plan.valid_at
                    ):
                        plan.valid_at = valid_at
                    plan.evidence.add(ex.bead_id)
            for nid, node in nodes.items():
                self._write_node(ctx, nid, node, derived_by)
                learned.nodes += 1
            for eid, plan in edges.items():
                self._write_edge(ctx, eid, plan, derived_by)
                learned.edges += 1
                if plan.metadata.get("functional"):
                    learned.superseded += supersede(
                        ctx, self.writer.put_op, plan.source, plan.predicate
                    )
            return learned

        learned: Learned = self.writer.store.write(write)
        self._key_saved()
        return learned

    def _plan_node(
        self, ctx: WriteContext, nodes: dict[str, _NodePlan], name: str, type: str, bead: str
    ) -> str | None:
        """The node ``name`` is written on: a person's node of that name (a hand-written
        fact's, id `graph_ids.node_id`) when there is one, else the keyed id
        (`EntityNames.id`); so "Alice" extracted and "Alice" hand-written are one node.
        Only a node whose own name is this one (`graph_ids.same_name`): the slug drops
        letters outside ASCII ("Möller" and "Müller" share one), and a node written without
        a name must take no words from a bead (a forget would leave them on it)."""
        name = " ".join(name.split())[:MAX_NAME]
        if not name:
            return None
        slug = node_id(name)
        theirs = ctx.get("nodes", slug.encode())
        if (
            theirs is not None
            and crdt.is_present(theirs)
            and crdt.field_value(theirs, "derived_by") is None
            and same_name(crdt.field_value(theirs, "name"), name)
        ):
            nid = slug
        else:
            nid = self.entities.id(name)
        plan = nodes.setdefault(nid, _NodePlan(name, type[:64] or "entity"))
        plan.evidence.add(bead)
        return nid

    def _write_node(self, ctx: WriteContext, nid: str, plan: _NodePlan, derived_by: str) -> None:
        record = ctx.get("nodes", nid.encode())
        if record is not None and crdt.is_present(record):
            scalars = _scalars("node", record)
        else:
            record = record or crdt.new_record()
            scalars = {"type": plan.type, "metadata": {}, "derived_by": derived_by}
        have = set(crdt.set_values(record, "evidence"))
        if plan.evidence <= have and crdt.is_present(record):
            return  # nothing new: no op
        names = crdt.set_values(record, "names")
        sets = {
            "labels": crdt.set_values(record, "labels"),
            "evidence": sorted(plan.evidence | have),
        }
        if crdt.field_value(record, "name") is None:  # a name only added, never dropped
            sets["names"] = names if names else [plan.name]
        self.writer.put_op(ctx, "node", nid, record, scalars, sets)

    def _write_edge(self, ctx: WriteContext, eid: str, plan: _EdgePlan, derived_by: str) -> None:
        record = ctx.get("edges", eid.encode())
        present = record is not None and crdt.is_present(record)
        record = record or crdt.new_record()
        have = set(crdt.set_values(record, "evidence"))
        stored_invalid = crdt.field_value(record, "invalid_at") if present else None
        if present and stored_invalid is None and plan.evidence <= have:
            return  # the fact holds already and names these beads
        if present and stored_invalid is None:
            # Restated while it holds: it has held since the first statement.
            old = crdt.field_value(record, "valid_at")
            valid_at = plan.valid_at if old is None else min(old, plan.valid_at or old)
        else:
            valid_at = plan.valid_at  # new, or stated again after it ended: it holds anew
        scalars = {
            "source": plan.source,
            "target": plan.target,
            "predicate": plan.predicate,
            "weight": crdt.field_value(record, "weight", 1.0) if present else 1.0,
            "valid_at": valid_at,
            "invalid_at": plan.invalid_at,
            "derived_by": crdt.field_value(record, "derived_by") if present else derived_by,
            "metadata": plan.metadata,
        }
        sets = {"evidence": sorted(plan.evidence | have)}
        self.writer.put_op(ctx, "edge", eid, record, scalars, sets)

    # ---- the graph key ---------------------------------------------------------------------

    def rekey_due(self) -> bool:
        """The graph key changed since the derived nodes were last named under it (or they
        were named before ids were keyed)."""
        return self._keyed != self.entities.fingerprint

    def _any_derived_node(self) -> bool:
        store = self.writer.store
        with store.read() as txn, txn.cursor(db=store.dbs["nodes"]) as cur:
            for v in cur.iternext(keys=False):
                record = unpack(v)
                if crdt.is_present(record) and crdt.field_value(record, "derived_by") is not None:
                    return True
        return False

    def _save_key(self, ctx: WriteContext) -> None:
        """Keep the key and its fingerprint in meta with the first write naming an entity:
        a key nothing was named with need not outlive the process (and costs no commit)."""
        entities = self.entities
        if self.unsaved_key is not None and self.unsaved_key == entities.key:
            ctx.put_meta(GRAPH_KEY, self.unsaved_key)
        if self._keyed_saved != entities.fingerprint:
            ctx.put_meta(KEYED, entities.fingerprint)

    def _key_saved(self) -> None:
        self.unsaved_key = None
        self._keyed_saved = self.entities.fingerprint

    def rekey(self) -> Retracted:
        """Move every present derived node whose id is not its name's under the current key
        to that id (merging names, evidence and labels with a node already there), and every
        present edge naming a moved node to the same fact between the new ends; then remove
        the old ones (their puts lose the name as any retracted node's do). One commit, with
        the key's fingerprint in meta. Every replica under the same key computes the same new
        ids, so concurrent moves merge. Answers what was removed (``nodes``, ``edges``)."""
        entities = self.entities
        under: list[str] = []

        def write(ctx: WriteContext) -> Retracted:
            # The key as the transaction sees it: a rotation commits before or after, whole.
            under[:] = [entities.fingerprint]
            self._save_key(ctx)
            ctx.put_meta(KEYED, under[0])
            return self._move(ctx, entities.id)

        done: Retracted = self.writer.store.write(write)
        self._keyed = under[0]
        self._key_saved()
        return done

    def rotation_due(self) -> bool:
        """A retraction left entity ids under the data dir's own key (`rotate` is owed)."""
        return self.writer.store.get_meta(ROTATE) is not None

    def rotate(self) -> Retracted | None:
        """Replace the data dir's own graph key after a retraction (`ROTATE` set): a new
        random key, every live derived node and the facts naming it moved to their ids under
        it (as `rekey`), the new key in meta over the old one, in one commit of its own. The
        old key is then in no live page; the scrub that runs this compacts the file after,
        so it is in no page at all, and the retracted entities' ids (kept as tombstones) are
        under a key that exists nowhere. Many forgets before one scrub cost one rotation.

        A memory whose key is not its own (a sync key, a remote's format) only has the flag
        cleared: its key is held elsewhere too, and replacing it here would part it from its
        replicas (DESIGN §14, limits). None when nothing was owed or the key is not its own."""
        entities = self.entities
        key = os.urandom(GRAPH_KEY_BYTES)
        fingerprint = key_fingerprint(key)

        def write(ctx: WriteContext) -> Retracted | None:
            if ctx.get("meta", b"m:" + ROTATE.encode()) is None:
                return None
            ctx.put_meta(ROTATE, None)
            if not entities.own:
                return None
            out = self._move(ctx, lambda name: derived_node_id(name, key))
            ctx.put_meta(GRAPH_KEY, key)  # over the old key: on no live page from this commit
            ctx.put_meta(KEYED, fingerprint)
            # Named under the new key only from this commit on: a batch before it is moved by
            # it, one after it names under the new key (both run in the store's one writer).
            ctx.after_commit.append(self._rotated(entities.key, key, fingerprint))
            return out

        done: Retracted | None = self.writer.store.write(write, atomic=True)
        return done

    def _rotated(self, old: bytes, key: bytes, fingerprint: str) -> Callable[[], None]:
        def switch() -> None:
            if self.entities.replace(old, key):
                self._keyed = self._keyed_saved = fingerprint
            # else a shared key came meanwhile (`Memory.use_graph_secret`, which keeps or
            # drops the meta itself): `rekey` moves the nodes from this key to it.

        return switch

    def _owe_rotation(self, ctx: WriteContext, out: Retracted) -> None:
        """A retraction that removed an entity, under the data dir's own key, owes a rotation."""
        if out.nodes and self.entities.own:
            ctx.put_meta(ROTATE, True)

    def _move(self, ctx: WriteContext, id_of: Callable[[str], str]) -> Retracted:
        """Move every present derived node whose id is not ``id_of`` its name, and the
        present edges naming one (`entity_moves.move_entities`); answers what was removed."""
        out = Retracted()

        def remove(collection: str, item_id: str, record: crdt.Record) -> None:
            self._remove(ctx, collection, item_id, record, out)

        move_entities(ctx, id_of, self.writer.put_op, remove)
        return out

    # ---- summaries -------------------------------------------------------------------------

    def summarize(
        self,
        summary_id: str,
        session_id: str,
        summary: Summary | None,
        derived_by: str,
        replaces: str | None = None,
        metas: Mapping[str, Any] | None = None,
    ) -> bool:
        """Write a session summary as bead ``summary_id`` (in the session, at its last turn's
        time, tagged ``summary``) and forget the summary it ``replaces``, in one commit with
        the ``metas`` values; with ``summary`` None, only that forget and the metas. When a
        bead it stands on was forgotten since it was read (the summary could hold its words),
        writes only the forget and returns False."""
        data = None
        if summary is not None:
            data = self._summary_bead(summary_id, session_id, summary, derived_by)
            # Its turns may predate the scan; derived, so redacted even under "refuse".
            policy: Policy = "off" if self.writer.secrets == "off" else "redact"
            data = scan_bead(data, policy)[0]

        def write(ctx: WriteContext) -> bool:
            if replaces is not None and _live(ctx, replaces):
                local_op(ctx, OpKind.BEAD_FORGET, replaces, {})
            if summary is not None and not all(_live(ctx, b) for b in summary.evidence):
                return False
            _put_metas(ctx, metas)
            if data is not None:
                local_op(ctx, OpKind.BEAD_ADD, summary_id, data)
            return True

        return self.writer.store.write(write)  # type: ignore[no-any-return]

    def _summary_bead(
        self, summary_id: str, session_id: str, summary: Summary, derived_by: str
    ) -> dict[str, Any]:
        times = []
        with self.writer.store.read() as txn:
            ctx = WriteContext(self.writer.store, txn)
            for bead_id in summary.evidence:
                entry = ctx.get("beads", bead_id.encode())
                if entry is not None and entry != crdt.FORGOTTEN:
                    _, replica, seq = entry[0]
                    times.append(self.writer.store.op_data(txn, replica, seq)["ts"])
        bead = Bead(
            id=summary_id, ts=max(times, default=time.time()), role="note",
            content=summary.text, session_id=session_id, tags=[SUMMARY_TAG],
            derived_from=list(summary.evidence), derived_by=derived_by, span_refs=[],
        )  # fmt: skip
        return bead.model_dump()

    # ---- retracting ------------------------------------------------------------------------

    def retract(
        self, bead_ids: Iterable[str], cursor: Mapping[str, Any] | None = None
    ) -> Retracted:
        """Take the forgotten ``bead_ids`` out of every node's and edge's evidence and out of
        the typed-mention timeline (`chrysalis.read.mentions`), in one commit with the
        ``cursor`` meta values; remove the derived items left with no evidence (edges first,
        then nodes no remaining edge names). Idempotent: a second call finds nothing to do."""
        gone = set(bead_ids)

        def write(ctx: WriteContext) -> Retracted:
            _put_metas(ctx, cursor)
            out = Retracted()
            timeline.drop(ctx.txn, ctx.dbs["mentions"], sorted(gone))
            for bead_id in sorted(gone):  # a summary goes with any bead it stands on
                for summary_id in _summaries_citing(ctx, bead_id):
                    if _live(ctx, summary_id):
                        local_op(ctx, OpKind.BEAD_FORGET, summary_id, {})
                        out.summaries.append(summary_id)
            citing = self._citing(ctx, gone)
            removed: list[tuple[str, crdt.Record]] = []
            for collection in ("edge", "node"):
                if collection == "node":  # the facts the removed ones had ended, first
                    self._revive(ctx, removed)
                for item_id, record in citing[collection]:
                    evidence = crdt.set_values(record, "evidence")
                    left = [b for b in evidence if b not in gone]
                    if self._orphan(ctx, collection, item_id, record, left):
                        self._remove(ctx, collection, item_id, record, out)
                        removed.append((item_id, record))
                        continue
                    scalars = _scalars(collection, record)
                    sets = {"evidence": left}
                    if collection == "node":
                        sets["labels"] = crdt.set_values(record, "labels")
                    self.writer.put_op(ctx, collection, item_id, record, scalars, sets)
                    out.trimmed.append(f"{collection}:{item_id}")
            self._owe_rotation(ctx, out)
            return out

        return self.writer.store.write(write)  # type: ignore[no-any-return]

    def collect(self, edge_ids: Iterable[str], node_ids: Iterable[str]) -> Retracted:
        """Remove the derived items among these (and the ends of these edges) that a merge
        left with no evidence: a replica that trimmed a fact's evidence to a bead another
        replica forgot and removed it by, concurrently, ends with the fact present and its
        evidence empty, and no forget left to process names it. Every replica runs this on
        the node and edge ops it applies, so the orphan goes wherever it shows. Reads first:
        no commit when there is nothing to remove."""
        edges, nodes = list(dict.fromkeys(edge_ids)), set(node_ids)
        if not edges and not nodes:
            return Retracted()

        def orphans(ctx: WriteContext) -> list[tuple[str, str, crdt.Record]]:
            found = []
            ends = set(nodes)
            for eid in edges:
                record = ctx.get("edges", eid.encode())
                if record is None:
                    continue
                ends.update(crdt.field_value(record, side) or "" for side in ("source", "target"))
                if crdt.is_present(record) and self._orphan(ctx, "edge", eid, record):
                    found.append(("edge", eid, record))
            removed = {eid for _, eid, _ in found}
            for nid in sorted(ends - {""}):
                record = ctx.get("nodes", nid.encode())
                if (
                    record is not None
                    and crdt.is_present(record)
                    and self._orphan(ctx, "node", nid, record, skip=removed)
                ):
                    found.append(("node", nid, record))
            return found

        with self.writer.store.read() as txn:
            if not orphans(WriteContext(self.writer.store, txn)):  # a read-only look
                return Retracted()

        def write(ctx: WriteContext) -> Retracted:
            out = Retracted()
            found = orphans(ctx)
            for collection, item_id, record in found:
                self._remove(ctx, collection, item_id, record, out)
            self._revive(ctx, [(i, r) for c, i, r in found if c == "edge"])
            self._owe_rotation(ctx, out)
            return out

        return self.writer.store.write(write)  # type: ignore[no-any-return]

    def _orphan(
        self,
        ctx: WriteContext,
        collection: str,
        item_id: str,
        record: crdt.Record,
        evidence: list[str] | None = None,
        skip: Container[str] = (),
    ) -> bool:
        """A derived item with no evidence (``evidence``, or the record's), and for a node
        no present edge naming it (but those in ``skip``, removed in the same commit)."""
        if crdt.field_value(record, "derived_by") is None:
            return False
        if crdt.set_values(record, "evidence") if evidence is None else evidence:
            return False
        return collection == "edge" or not self._linked(ctx, item_id, skip)

    def _revive(self, ctx: WriteContext, edges: Sequence[tuple[str, crdt.Record]]) -> None:
        """The facts these removed functional edges had ended get their own ends back
        (`supersede.unsupersede`): a forgotten bead ends no fact, a person's neither."""
        groups: dict[tuple[str, str], set[str]] = defaultdict(set)
        for eid, record in edges:
            if crdt.field_value(record, "metadata", {}).get("functional"):
                source = crdt.field_value(record, "source")
                groups[(source, crdt.field_value(record, "predicate"))].add(eid)
        for (source, predicate), removed in groups.items():
            unsupersede(ctx, self.writer.put_op, source, predicate, removed)

    @staticmethod
    def _remove(
        ctx: WriteContext, collection: str, item_id: str, record: crdt.Record, out: Retracted
    ) -> None:
        local_op(
            ctx, OpKind(f"{collection}.remove"), item_id, {"remove": crdt.observed_dots(record)}
        )
        (out.edges if collection == "edge" else out.nodes).append(item_id)

    @staticmethod
    def _citing(ctx: WriteContext, beads: set[str]) -> dict[str, list[tuple[str, crdt.Record]]]:
        """Present nodes and edges whose evidence names any of ``beads`` (a scan: forgets are
        rare, and the scan reads records only, no beads)."""
        out: dict[str, list[tuple[str, crdt.Record]]] = defaultdict(list)
        for collection in ("edge", "node"):
            with ctx.txn.cursor(db=ctx.dbs[RECORD_DBS[collection]]) as cur:
                for k, v in cur:
                    record = unpack(v)
                    if not crdt.is_present(record):
                        continue
                    if beads.intersection(crdt.set_values(record, "evidence")):
                        out[collection].append((k.decode(), record))
        return out

    @staticmethod
    def _linked(ctx: WriteContext, nid: str, skip: Container[str] = ()) -> bool:
        """Whether a present edge (not in ``skip``) still names node ``nid`` (then it stays)."""
        prefix = nid.encode() + b"\0"
        with ctx.txn.cursor(db=ctx.dbs["adj"]) as cur:
            if cur.set_range(prefix):
                for k in cur.iternext(values=False):
                    if not k.startswith(prefix):
                        break
                    if k[len(prefix) :].decode() in skip:
                        continue
                    record = ctx.get("edges", k[len(prefix) :])
                    if record is not None and crdt.is_present(record):
                        return True
        return False


def _live(ctx: WriteContext, bead_id: str) -> bool:
    entry = ctx.get("beads", bead_id.encode())
    return entry is not None and entry != crdt.FORGOTTEN


def _summaries_citing(ctx: WriteContext, bead_id: str) -> list[str]:
    prefix = bead_id.encode() + b"\0"
    with ctx.txn.cursor(db=ctx.dbs["bead_from"]) as cur:
        if not cur.set_range(prefix):
            return []
        return [
            k[len(prefix) :].decode()
            for k in itertools.takewhile(lambda k: k.startswith(prefix), cur.iternext(values=False))
        ]


def _put_metas(ctx: WriteContext, values: Mapping[str, Any] | None) -> None:
    for name, value in (values or {}).items():
        ctx.put_meta(name, value)
