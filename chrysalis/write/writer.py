"""The write side: every verb that changes the memory, as ops made in one write transaction.

Each verb validates its input first (`errors.InvalidInput`, nothing written), then queues a
function on the store's group commit that checks what it must against the current state and
makes its ops with `rules.local_op`. `apply_ops` takes other replicas' ops through
`rules.apply_remote`. A verb returns after its commit is durable.

Beads pass `secrets_scan` before their op is made (the ``secrets`` policy: redact, refuse or
off), so no credential reaches the op log, a blob, the remote or a mirror. Ops pulled from
other replicas are not scanned again: their origin scanned them.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel

from chrysalis.core import crdt, vector_bytes
from chrysalis.core.checks import check_id, validate
from chrysalis.core.errors import Conflict, InvalidInput, NotFound
from chrysalis.core.graph_ids import EntityNames, edge_id, node_id, same_name
from chrysalis.core.models import (
    BEADS,
    OPS,
    Bead,
    BlobRef,
    Edge,
    EdgePutData,
    Embedding,
    Node,
    NodePutData,
    OpKind,
    Persona,
    PersonaPutData,
    PersonaScalars,
    Skill,
    SkillPutData,
    now,
)
from chrysalis.core.validity import DEFAULT_FUNCTIONAL
from chrysalis.read.reader import Reader, persona_of
from chrysalis.secrets.scan import POLICIES, Finding, Policy, scan_item
from chrysalis.store.env import Store, WriteContext
from chrysalis.store.keys import PERSONA_KEY, RECORD_DBS
from chrysalis.write.intake import Importance, prepare_rows, same_bead, scan_row
from chrysalis.write.op_rules import ApplyResult, apply_remote, local_op
from chrysalis.write.supersede import supersede

DEFAULT_BLOB_THRESHOLD = 64 * 1024
_PERSONA_SCALARS = ("id", "name", "description")
_PERSONA_SETS = ("goals", "norms", "skills")
_SKILL_SCALARS = ("name", "description", "signature")
_SKILL_SETS = ("examples", "tags")
_PUT_DATA = {
    "node": NodePutData, "edge": EdgePutData, "persona": PersonaPutData, "skill": SkillPutData,
}  # fmt: skip


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
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


class Writer:
    """The verbs that change one store. Thread-safe; concurrent callers share commits."""

    def __init__(
        self,
        store: Store,
        reader: Reader,
        *,
        blob_threshold: int = DEFAULT_BLOB_THRESHOLD,
        secrets: Policy = "redact",
        functional: Iterable[str] = DEFAULT_FUNCTIONAL,
    ) -> None:
        if secrets not in POLICIES:
            raise InvalidInput(f"secrets must be one of {', '.join(POLICIES)}, not {secrets!r}")
        self.store = store
        self.reader = reader
        self.blob_threshold = blob_threshold
        self.secrets: Policy = secrets
        # The predicates holding one value at a time, for hand-written and extracted facts
        # alike (the knowledge writer reads this one list).
        self.functional = frozenset(functional)
        # Judges a bead written without an importance (`chrysalis.write.intake`); Memory sets it.
        self.importance: Importance | None = None
        # The memory's entity naming: a fact naming what an extractor already found is
        # written on that entity's node (`add_fact`); Memory sets it.
        self.entities: EntityNames | None = None

    def put_meta(self, name: str, value: Any) -> None:
        """Durably set a named meta value (cursors and the like)."""
        self.store.put_meta(name, value)

    def append_beads(self, rows: Iterable[Mapping[str, Any] | Bead]) -> list[Bead]:
        """Append many beads in one commit; all or nothing. Rows are dicts of append_bead's
        fields, or `Bead`s."""
        return self.append_beads_with_findings(rows)[0]

    def append_beads_with_findings(
        self, rows: Iterable[Mapping[str, Any] | Bead]
    ) -> tuple[list[Bead], list[list[Finding]]]:
        """`append_beads`, and per bead the secrets redacted from it (`secrets_scan.Finding`:
        kind, field, offsets of the marker; never the secret). Under the ``refuse`` policy a
        bead holding one raises `SecretRefused` and nothing is written."""
        rows = list(rows)
        if len(rows) < 64:
            return self._append_beads(rows)
        with gc_paused():
            return self._append_beads(rows)

    def scan(self, row: Mapping[str, Any] | Bead) -> tuple[Any, list[Finding]]:
        """A bead row (a dict or a `Bead`) under the secrets policy: the row with secrets
        redacted (of the same type) and what was redacted; `SecretRefused` under
        ``refuse``. The append verbs call it; import calls it first to compare what it would
        store with what is stored."""
        return scan_row(row, self.secrets)

    def scan_item(self, kind: str, row: Mapping[str, Any]) -> dict[str, Any]:
        """A node, edge, fact, persona or skill row under the secrets policy
        (`secrets_scan.scan_item`): the row redacted; `SecretRefused` under ``refuse``."""
        return scan_item(kind, row, self.secrets)[0]

    def _append_beads(
        self, rows: list[Mapping[str, Any] | Bead]
    ) -> tuple[list[Bead], list[list[Finding]]]:
        scanned = [self.scan(row) for row in rows]
        findings = [found for _, found in scanned]
        prepared, judged = prepare_rows([row for row, _ in scanned], now(), self.importance)
        beads: list[Bead] = validate(BEADS, prepared, "bead")
        datas: list[dict[str, Any]] = BEADS.dump_python(beads)
        raws: dict[str, bytes] = {}
        for data in datas:
            if data["blob"] is None and len(data["content"]) * 4 > self.blob_threshold:
                raw = data["content"].encode()
                if len(raw) > self.blob_threshold:
                    self.store.check_space()  # the blob file is written before the commit
                    sha = self.store.blobs.put(raw)
                    raws[sha] = raw
                    data["content"], data["blob"] = "", {"sha256": sha, "size": len(raw)}

        def write(ctx: WriteContext) -> list[bool]:
            fresh: list[bool] = []
            seen: dict[str, dict[str, Any]] = {}
            # Check all first: a conflict writes nothing.
            for data, auto in zip(datas, judged, strict=True):
                entry = ctx.get("beads", data["id"].encode())
                prior = seen.get(data["id"])
                if entry == crdt.FORGOTTEN:
                    raise Conflict(f"bead {data['id']!r} was forgotten; ids are never reused")
                if entry is not None:
                    _, replica, seq = entry[0]
                    prior = self.store.op_data(ctx.txn, replica, seq)
                if prior is not None and not same_bead(prior, data, judged=auto):
                    raise Conflict(f"bead {data['id']!r} exists with different content")
                fresh.append(prior is None)
                seen[data["id"]] = data
            for data, new in zip(datas, fresh, strict=True):
                if new:
                    local_op(ctx, OpKind.BEAD_ADD, data["id"], data)
                    blob = data["blob"]
                    if blob is not None and blob["sha256"] in raws:
                        # A forget may delete the shared file between our put and our commit.
                        sha = blob["sha256"]
                        ctx.after_commit.append(
                            functools.partial(self.store.ensure_blob, sha, raws[sha])
                        )
            return fresh

        fresh = self.store.write(write)
        out = []
        for bead, data, new in zip(beads, datas, fresh, strict=True):
            if new:
                if data["blob"] is not None and bead.blob is None:
                    bead = bead.model_copy(update={"blob": BlobRef(**data["blob"])})
                out.append(bead)
            else:
                out.append(self.reader.get_bead(bead.id))
        return out, findings

    def forget(self, bead_id: str) -> None:
        """Erase a bead's content here (views, indexes, op payload, blob) and on every replica.

        The op stays in the log as a tombstone. Forgetting twice is a no-op; a bead this
        replica never saw raises `NotFound`.
        """
        check_id(bead_id, "bead")
        self.forget_many([bead_id])

    def forget_many(self, bead_ids: Sequence[str]) -> list[str]:
        """Forget many beads in one commit, each with its own ``bead.forget`` op (as `forget`
        makes); returns the ids that were live and are forgotten now.

        Ids already forgotten are skipped (idempotent); an id this replica never saw raises
        `NotFound` and nothing is forgotten.
        """
        if isinstance(bead_ids, str):
            raise InvalidInput("bead_ids must be a list of ids, not one string")
        ids = list(dict.fromkeys(bead_ids))
        for bead_id in ids:
            check_id(bead_id, "bead")

        def write(ctx: WriteContext) -> list[str]:
            live = []
            for bead_id in ids:  # check all first: an unknown id forgets nothing
                entry = ctx.get("beads", bead_id.encode())
                if entry is None:
                    raise NotFound(f"no bead {bead_id!r}")
                if entry != crdt.FORGOTTEN:
                    live.append(bead_id)
            for bead_id in live:
                local_op(ctx, OpKind.BEAD_FORGET, bead_id, {})
            return live

        if not ids:
            return []
        return self.store.write(write)  # type: ignore[no-any-return]

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
        row = {
            "id": id, "type": type, "name": name, "labels": list(labels),
            "metadata": dict(metadata or {}),
        }  # fmt: skip
        node = validate(Node, self.scan_item("node", row), "node")
        # A person's or an agent's write makes the node theirs (derived_by None): a forget
        # never takes it back, even where an extractor once derived it (DESIGN §13).
        scalars = {"type": node.type, "name": node.name, "metadata": node.metadata}
        scalars["derived_by"] = None
        self._put_record("node", node.id, scalars, {"labels": node.labels})
        return node  # type: ignore[no-any-return]

    def remove_node(self, id: str) -> None:
        """Remove a node; its edges are hidden, not lost (they return if the node is re-added)."""
        check_id(id, "node")
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
        given = {
            "source": source, "target": target, "predicate": predicate, "weight": weight,
            "evidence": list(evidence), "valid_at": valid_at, "invalid_at": invalid_at,
            **({} if id is None else {"id": id}),
        }  # fmt: skip
        row = self.scan_item("edge", given)  # before the id is derived from its ends
        if id is None:
            row["id"] = edge_id(row["source"], row["predicate"], row["target"])
        edge = validate(Edge, row, "edge")
        _check_span(edge)
        scalars = edge.model_dump(
            include={"source", "target", "predicate", "weight", "valid_at", "invalid_at"}
        )
        scalars["derived_by"] = None  # theirs, as in add_node

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
        by `graph_ids.node_id` of their text, made with ``type`` when missing) and the edge.
        A name an extractor already made a node of, and no node has that id, names that
        node (`Writer.entities`): "Alice" written by hand and "Alice" extracted are one node
        whichever came first (the extractor, too, writes on a person's node of the name).

        The same fact twice, here or on another laptop, is one edge. Raises `InvalidInput`
        and writes nothing when a part is bad.

        On a one-value predicate (in ``functional``) the fact supersedes the subject's
        earlier ones with another object, as an extracted fact does (`chrysalis.write.supersede`):
        they end when it starts. Its start is ``valid_at``, else the time it is written
        (kept when it is restated while it holds), so a later ``add_fact`` is the later fact.
        """
        for what, text in (("subject", subject), ("object", object)):
            if not isinstance(text, str) or not text.strip():
                raise InvalidInput(f"invalid fact: {what} must be non-empty text")
        # Before a node id or an edge id is derived from them.
        given = {"subject": subject, "predicate": predicate, "object": object}
        scanned = self.scan_item("fact", {**given, "evidence": list(evidence)})
        subject, predicate, object = scanned["subject"], scanned["predicate"], scanned["object"]
        evidence = scanned["evidence"]
        ends = [
            validate(Node, {"id": node_id(t), "type": type, "name": t}, "node")
            for t in (subject, object)
        ]
        edge = validate(
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
        _check_span(edge)
        scalars: dict[str, Any] = edge.model_dump(
            include={"source", "target", "predicate", "weight", "valid_at", "invalid_at"}
        )
        scalars["derived_by"] = None  # theirs, as in add_node
        functional = predicate in self.functional
        if functional:
            scalars["metadata"] = {"functional": True}
        written = time.time()

        def write(ctx: WriteContext) -> Edge:
            ids = [self._node_named(ctx, n.id, n.name or n.id) for n in ends]
            nodes, fact = ends, edge
            if ids != [n.id for n in ends]:
                nodes = [n.model_copy(update={"id": i}) for n, i in zip(ends, ids, strict=True)]
                eid = edge_id(ids[0], predicate, ids[1])
                fact = edge.model_copy(update={"id": eid, "source": ids[0], "target": ids[1]})
            return write_fact(ctx, nodes, fact)

        def write_fact(ctx: WriteContext, ends: list[Node], edge: Edge) -> Edge:
            scalars.update(source=edge.source, target=edge.target)
            for node in ends:
                record = ctx.get("nodes", node.id.encode())
                if record is None or not crdt.is_present(record):
                    made: dict[str, Any] = {"type": node.type, "name": node.name}
                    made.update(metadata={}, derived_by=None)
                    self.put_op(ctx, "node", node.id, record or crdt.new_record(), made, {})
            record = ctx.get("edges", edge.id.encode())
            fields = dict(scalars)
            ended = fields["invalid_at"] is not None and fields["invalid_at"] < written
            if functional and fields["valid_at"] is None and not ended:
                # Superseding needs an order: restated while it holds, it has held since
                # its first statement; else it starts now (as an extracted fact starts at
                # its bead's time, unless it ended before that: its start stays unknown).
                holds = (
                    record is not None
                    and crdt.is_present(record)
                    and crdt.field_value(record, "invalid_at") is None
                )
                start = crdt.field_value(record, "valid_at") if holds else None
                fields["valid_at"] = written if start is None else start
                _check_span(edge.model_copy(update={"valid_at": fields["valid_at"]}))
            record = record or crdt.new_record()
            self.put_op(ctx, "edge", edge.id, record, fields, {"evidence": edge.evidence})
            if functional:
                supersede(ctx, self.put_op, edge.source, predicate)
            update = {"valid_at": fields["valid_at"], "metadata": fields.get("metadata", {})}
            written_edge: Edge = edge.model_copy(update=update)
            return written_edge

        return self.store.write(write)  # type: ignore[no-any-return]

    def _node_named(self, ctx: WriteContext, slug: str, name: str) -> str:
        """The id a hand-written fact's end takes: ``slug`` when a node has it or no
        extracted node has the name; else the extracted node's (keyed) id. The keyed id
        hashes the slug, which drops letters outside ASCII: the node must bear this very
        name (`graph_ids.same_name`), or "Jörgen" would land on the extracted "Jürgen"."""
        if self.entities is None or _present(ctx.get("nodes", slug.encode())):
            return slug
        keyed = self.entities.id(name)
        record = ctx.get("nodes", keyed.encode())
        if record is None or not crdt.is_present(record):
            return slug
        names = [crdt.field_value(record, "name"), *crdt.set_values(record, "names")]
        return keyed if any(same_name(n, name) for n in names) else slug

    def remove_edge(self, id: str) -> None:
        check_id(id, "edge")
        self._remove_record("edge", id)

    def put_persona(self, persona: Persona | Mapping[str, Any]) -> Persona:
        """Replace the persona: every field takes the given value."""
        row = persona.model_dump() if isinstance(persona, Persona) else dict(persona)
        p = validate(Persona, self.scan_item("persona", row), "persona")
        return self._write_persona(p.model_dump(), replace_traits=True)

    def update_persona(self, **fields: Any) -> Persona:
        """Set only the given fields; list fields (goals, norms, skills) take the given list,
        and concurrent additions on other laptops are kept. ``traits`` merges key by key
        (a value of None deletes a trait)."""
        unknown = set(fields) - set(Persona.model_fields)
        if unknown:
            raise InvalidInput(f"unknown persona field(s): {', '.join(sorted(unknown))}")
        fields = self.scan_item("persona", fields)
        # Only the given fields are checked: after a merge the persona may hold more goals
        # than one write may send, and that must not block editing its name.
        traits = fields.get("traits")
        validate(Persona, {k: v for k, v in fields.items() if k != "traits"}, "persona")
        if traits is not None:
            validate(PersonaScalars, {"traits": traits}, "persona")
        if not fields:
            return self.reader.get_persona()  # nothing to set: no op
        return self._write_persona(fields, replace_traits=False)

    def _write_persona(self, fields: Mapping[str, Any], *, replace_traits: bool) -> Persona:
        def write(ctx: WriteContext) -> None:
            record = ctx.get("persona", PERSONA_KEY) or crdt.new_record()
            scalars: dict[str, Any] = {k: fields[k] for k in _PERSONA_SCALARS if k in fields}
            if "traits" in fields:
                traits = dict(fields["traits"])
                if replace_traits:
                    current = persona_of(record).traits
                    traits.update({k: None for k in current if k not in traits})
                scalars["traits"] = traits
            sets = {k: list(fields[k]) for k in _PERSONA_SETS if k in fields}
            self.put_op(ctx, "persona", "persona", record, scalars, sets)

        self.store.write(write)
        return self.reader.get_persona()

    def put_skill(self, skill: Skill | Mapping[str, Any]) -> Skill:
        """Add or replace a skill (add-wins against a concurrent delete)."""
        row = skill.model_dump() if isinstance(skill, Skill) else dict(skill)
        s: Skill = validate(Skill, self.scan_item("skill", row), "skill")
        data = s.model_dump()
        self._put_record(
            "skill", s.id, {k: data[k] for k in _SKILL_SCALARS}, {k: data[k] for k in _SKILL_SETS}
        )
        return s

    def delete_skill(self, id: str) -> None:
        check_id(id, "skill")
        self._remove_record("skill", id)

    def put_op(
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
        validate(_PUT_DATA[collection], data, collection)
        # A write that saw a value must beat it, however skewed the clocks that stamped it.
        try:
            hlc = self.store.clock.after(crdt.max_stamp(record))
        except OverflowError:
            raise Conflict(
                f"{collection} {id!r} holds a value stamped at the end of time; it cannot be "
                "overwritten (a replica with a broken clock wrote it)"
            ) from None
        local_op(ctx, OpKind(f"{collection}.put"), id, data, hlc=hlc)

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
            record = ctx.get(RECORD_DBS[collection], id.encode()) or crdt.new_record()
            self.put_op(ctx, collection, id, record, scalars, sets)

        self.store.write(write)

    def _remove_record(self, collection: str, id: str) -> None:
        def write(ctx: WriteContext) -> None:
            record = ctx.get(RECORD_DBS[collection], id.encode())
            if record is None or not crdt.is_present(record):
                raise NotFound(f"no {collection} {id!r}")
            local_op(
                ctx, OpKind(f"{collection}.remove"), id, {"remove": crdt.observed_dots(record)}
            )

        self.store.write(write)

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
            emb = validate(
                Embedding,
                {**fields, "dims": int(array.size), "vector": raw, "created_at": now()},
                "embedding",
            )
            data = emb.model_dump(exclude={"item_id"})
            data["vector"] = stored = vector_bytes.encode(array)  # float16 when it keeps it
            data["checksum"] = hashlib.sha256(stored).hexdigest()
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
                    local_op(ctx, OpKind.EMBEDDING_PUT, emb.item_id, data)
            return keep

        kept = self.store.write(write)
        return [e for e, k in zip(embs, kept, strict=True) if k]

    def apply_ops(self, ops: Iterable[Mapping[str, Any] | BaseModel]) -> ApplyResult:
        """Apply remote ops: idempotent, in any order; an op after a gap waits for the gap.

        The batch is validated whole first: `InvalidInput` for a malformed op, `DotConflict`
        for a dot we hold with other content; either way nothing is applied.
        """
        with gc_paused():
            return self._apply_ops(ops)

    def _apply_ops(self, ops: Iterable[Mapping[str, Any] | BaseModel]) -> ApplyResult:
        items = [o.model_dump() if isinstance(o, BaseModel) else o for o in ops]
        canon = OPS.dump_python(validate(OPS, items, "op"), exclude_unset=True)
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
        return self.store.write(lambda ctx: apply_remote(ctx, canon))  # type: ignore[no-any-return]


def _check_span(edge: Edge) -> None:
    """A fact never ends before it starts (`InvalidInput`): such an edge holds at no time, and
    a mirror (Zep) refuses it, which would stop every push after it."""
    if (
        edge.valid_at is not None
        and edge.invalid_at is not None
        and edge.invalid_at < edge.valid_at
    ):
        raise InvalidInput(
            f"invalid edge: invalid_at ({edge.invalid_at}) is before valid_at ({edge.valid_at})"
        )


def _present(record: crdt.Record | None) -> bool:
    return record is not None and crdt.is_present(record)
