"""The read side: every query of the store, in read transactions, decoded into models.

`Reader` is what the search package, the mirrors, ingest and `Memory` read through; nothing
outside this module and the write side touches LMDB databases by name.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from chrysalis.core import crdt, vector_bytes
from chrysalis.core.checks import check_id
from chrysalis.core.errors import InvalidInput, NotFound
from chrysalis.core.events import Committed
from chrysalis.core.models import Bead, BlobRef, Embedding, Persona, Skill, SpanRef
from chrysalis.read import mentions
from chrysalis.read.graph import GraphReads, record_origin
from chrysalis.store.env import Store, Txn
from chrysalis.store.keys import (
    RECORD_DBS,
    SNAPSHOT_DBS,
    emb_key,
    op_key,
    record_key,
    time_key,
    u64,
    unpack,
)

Pairs = Iterable[tuple[bytes, bytes]]
_BEAD_FIELD_COUNT = len(Bead.model_fields)
_set_attr = object.__setattr__


class Reader(GraphReads):
    """Reads of one store. Thread-safe; each call sees every write committed before it."""

    def __init__(self, store: Store) -> None:
        self.store = store

    @property
    def replica_id(self) -> str:
        return self.store.replica_id

    def get_meta(self, name: str) -> Any:
        return self.store.get_meta(name)

    def metas(self, prefix: str) -> dict[str, Any]:
        """Every named meta value whose name starts with ``prefix``, by name."""
        start, found = b"m:" + prefix.encode(), {}
        with self.store.read() as txn:
            cursor = txn.cursor(db=self.store.dbs["meta"])
            if cursor.set_range(start):
                for key, raw in cursor:
                    if not key.startswith(start):
                        break
                    found[key[2:].decode()] = unpack(raw)
        return found

    def on_commit(self, listener: Callable[[Committed], None]) -> None:
        """Call ``listener`` after each durable commit, with what it applied."""
        self.store.listeners.append(listener)

    def off_commit(self, listener: Callable[[Committed], None]) -> None:
        if listener in self.store.listeners:
            self.store.listeners.remove(listener)

    # ---- beads -------------------------------------------------------------------------------

    def bead(self, data: dict[str, Any]) -> Bead:
        """A Bead from stored op data (validated when it was written)."""
        blob = data.get("blob")
        spans = data.get("span_refs")
        if blob is None and not spans and len(data) == _BEAD_FIELD_COUNT:
            # The hot path of last_beads: every field present. Copies, so that a caller
            # mutating a bead's lists cannot reach the decoded cache.
            return _trusted(Bead, {**data, "tags": list(data["tags"]), "span_refs": []})
        values = {**data, "tags": list(data.get("tags") or ())}
        if blob is not None:
            values["content"] = self.store.blobs.get(blob["sha256"]).decode()
            values["blob"] = BlobRef.model_construct(**blob)
        values["span_refs"] = [SpanRef.model_construct(**s) for s in spans or ()]
        return Bead.model_construct(**values)

    def bead_entry(
        self, txn: Txn, bead_id: str, epoch: int | None = None
    ) -> tuple[Any, dict[str, Any] | None]:
        """The bead's view entry and, when it is visible, the winning add's data. With
        ``epoch`` (the decoded cache's, taken before ``txn`` was opened), the data comes
        through that cache: do not mutate it."""
        raw = txn.get(bead_id.encode(), db=self.store.dbs["beads"])
        entry = None if raw is None else unpack(raw)
        if not isinstance(entry, list):
            return entry, None
        _, replica, seq = entry[0]
        if epoch is None:
            return entry, self.store.op_data(txn, replica, seq)
        cache, okey = self.store.decoded, op_key(replica, seq)
        if (data := cache.get(okey)) is None:
            data = self.store.op_data(txn, replica, seq)
            cache.put(okey, data, epoch)
        return entry, data

    def get_bead(self, id: str) -> Bead:
        """The bead with this id; `NotFound` when unknown or forgotten."""
        check_id(id, "bead")
        with self.store.read() as txn:
            entry, data = self.bead_entry(txn, id)
        if data is None:
            raise NotFound(f"no bead {id!r}" + (" (forgotten)" if entry else ""))
        return self.bead(data)

    def bead_states(self, ids: Sequence[str]) -> dict[str, str]:
        """Each id's state here: "live", "forgotten" or "absent"."""
        out: dict[str, str] = {}
        with self.store.read() as txn:
            db = self.store.dbs["beads"]
            for bead_id in ids:
                raw = txn.get(bead_id.encode(), db=db)
                if raw is None:
                    out[bead_id] = "absent"
                else:
                    out[bead_id] = "forgotten" if unpack(raw) == crdt.FORGOTTEN else "live"
        return out

    def mentions_of(self, ids: Sequence[str]) -> dict[str, list[tuple[str, str, bool]]]:
        """The typed values each of ``ids`` names, with their verdicts
        (`chrysalis.read.mentions.of_beads`), read in one transaction."""
        with self.store.read() as txn:
            return mentions.of_beads(txn, self.store.dbs["mentions"], ids)

    def latest_mentions(
        self, predicate: str, at: float, n: int = 1
    ) -> list[tuple[float, str, str]]:
        """The latest statements of ``predicate``'s value made at or before ``at``
        (`chrysalis.read.mentions.latest`)."""
        with self.store.read() as txn:
            return mentions.latest(txn, self.store.dbs["mentions"], predicate, at, n)

    def blob_users(self, sha256: str, limit: int = 10) -> list[str]:
        """Live beads whose content is blob ``sha256`` (at most ``limit``)."""
        return self._prefixed("blobrefs", sha256, limit)

    def summaries_citing(self, bead_id: str, limit: int = 100) -> list[str]:
        """Live summaries (beads with ``derived_from``) that stand on bead ``bead_id``."""
        return self._prefixed("bead_from", bead_id, limit)

    def _prefixed(self, db: str, first: str, limit: int) -> list[str]:
        prefix = first.encode() + b"\0"
        with self.store.read() as txn, txn.cursor(db=self.store.dbs[db]) as cur:
            if not cur.set_range(prefix):
                return []
            users: list[str] = []
            for k in cur.iternext(values=False):
                if not k.startswith(prefix) or len(users) >= limit:
                    break
                users.append(k[len(prefix) :].decode())
            return users

    def last_beads(self, n: int, session_id: str | None = None) -> list[Bead]:
        """The ``n`` latest beads (of one session, if given), oldest first."""
        return [self.bead(d) for d in self._last_datas(n, session_id)]

    def last_bead_ids(self, n: int, session_id: str | None = None) -> list[str]:
        """The ids of `last_beads` (the same beads, the same order), without making the
        beads: every fused recall asks for the latest 50 and needs only their ids."""
        return [d["id"] for d in self._last_datas(n, session_id)]

    def _last_datas(self, n: int, session_id: str | None) -> list[dict[str, Any]]:
        if not isinstance(n, int) or n < 0:
            raise InvalidInput("n must be a non-negative int")
        if session_id is not None:
            check_id(session_id, "session")
        store, cache = self.store, self.store.decoded
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
        return datas

    def adjacent_beads(self, bead_id: str, n: int = 1) -> list[tuple[str, int]]:
        """Up to ``n`` beads before and ``n`` after this one in its session's order, as
        ``(id, offset)`` with offset -1, -2, ... before and 1, 2, ... after."""
        check_id(bead_id, "bead")
        epoch = self.store.decoded.epoch  # taken before the transaction (`DecodedCache`)
        with self.store.read() as txn:
            _, around = self._beside(txn, bead_id, n, epoch)
        return [(other, offset) for other, offset, _ in around]

    def _beside(
        self, txn: Txn, bead_id: str, n: int, epoch: int | None = None
    ) -> tuple[dict[str, Any] | None, list[tuple[str, int, bytes]]]:
        """The bead's add data (None when not visible) and its neighbours in its session as
        ``(id, offset, op key)``: the session index's key ends with the op key of the add it
        shows, so a neighbour's data is read without its entry in ``beads``."""
        store = self.store
        entry, data = self.bead_entry(txn, bead_id, epoch)
        if data is None or not data.get("session_id"):
            return data, []
        hlc, replica, seq = entry[0]
        prefix = data["session_id"].encode() + b"\0"
        key = prefix + time_key(data["ts"], hlc, replica, seq)
        skip = len(prefix) + 16  # the time key's ts and hlc, then the op key
        out: list[tuple[str, int, bytes]] = []
        with txn.cursor(db=store.dbs["bead_sess"]) as cur:
            for step, sign in ((cur.prev, -1), (cur.next, 1)):
                if not cur.set_key(key):
                    return data, out
                for distance in range(1, n + 1):
                    if not step() or not cur.key().startswith(prefix):
                        break
                    out.append((cur.value().decode(), sign * distance, cur.key()[skip:]))
        return data, out

    def windows(
        self, ids: Sequence[str], n: int
    ) -> dict[str, tuple[int, list[tuple[str, int, int]]]]:
        """For each bead of ``ids`` that has a session: its length in words and up to ``n``
        neighbours either side as ``(id, offset, words)``; one read transaction."""
        out: dict[str, tuple[int, list[tuple[str, int, int]]]] = {}
        words: dict[str, int] = {}
        store, cache = self.store, self.store.decoded
        ops = store.dbs["ops"]

        def length(txn: Txn, bead_id: str, okey: bytes) -> int:
            # A neighbour's data straight from its op (`_beside`): no ``beads`` read.
            if (count := words.get(bead_id)) is None:
                if (data := cache.get(okey)) is None:
                    data = unpack(txn.get(okey, db=ops))["data"]
                    cache.put(okey, data, epoch)
                count = words[bead_id] = len(str(data.get("content", "")).split())
            return count

        # Through the decoded cache: a recall reads these beads again to describe them.
        epoch = cache.epoch
        with store.read() as txn:
            for bead_id in ids:
                data, around = self._beside(txn, bead_id, n, epoch)
                if around:
                    assert data is not None  # a bead with neighbours is visible
                    if (own := words.get(bead_id)) is None:
                        own = words[bead_id] = len(str(data.get("content", "")).split())
                    out[bead_id] = (
                        own,
                        [
                            (other, offset, length(txn, other, okey))
                            for other, offset, okey in around
                        ],
                    )
        return out

    def all_beads(self) -> Iterator[Bead]:
        """Every visible bead in time order."""
        store = self.store
        with store.read() as txn:
            datas = [
                unpack(txn.get(k[16:], db=store.dbs["ops"]))["data"]
                for k in txn.cursor(db=store.dbs["bead_time"]).iternext(keys=True, values=False)
            ]
        return (self.bead(d) for d in datas)

    def sessions(self) -> list[str]:
        """The distinct session ids of visible beads (a cursor jump per session)."""
        out = []
        with self.store.read() as txn, txn.cursor(db=self.store.dbs["bead_sess"]) as cur:
            found = cur.first()
            while found:
                session = cur.key().split(b"\0", 1)[0]
                out.append(session.decode())
                found = cur.set_range(session + b"\x01")
        return out

    def scan_beads(
        self,
        keep: Callable[[str, dict[str, Any]], bool],
        *,
        limit: int,
        session_id: str | None = None,
        after: float | None = None,
        before: float | None = None,
        newest: bool = False,
        count_all: bool = True,
    ) -> tuple[list[str], int]:
        """The visible beads (of one session, if given) for which ``keep(id, data)`` is true,
        read in one transaction: the first ``limit`` ids in time order (``newest``: the last
        ``limit``, newest first), and how many matched in all (``count_all=False``: the walk
        stops at ``limit``, and the count is of those found). ``after`` and ``before`` (epoch
        seconds) only bound the walk; ``keep`` gets each bead's stored data and decides
        exactly (`chrysalis.forget.select`)."""
        store, cache = self.store, self.store.decoded
        prefix = b"" if session_id is None else session_id.encode() + b"\0"
        name = "bead_time" if session_id is None else "bead_sess"
        start = prefix + (u64(round(after * 1_000_000)) if after is not None else b"")
        stop = prefix + (u64(round(before * 1_000_000) + 1) if before is not None else b"\xff" * 9)
        ids: list[str] = []
        total, skip, epoch = 0, len(prefix) + 16, cache.epoch
        with store.read() as txn, txn.cursor(db=store.dbs[name]) as cur:
            if newest:  # from just before ``stop``, backwards
                found = cur.prev() if cur.set_range(stop) else cur.last()
            else:
                found = cur.set_range(start)
            while found:
                key = cur.key()
                if not key.startswith(prefix) or not start <= key < stop:
                    break
                okey, bead_id = key[skip:], cur.value().decode()
                data = cache.get(okey)
                if data is None:
                    data = unpack(txn.get(okey, db=store.dbs["ops"]))["data"]
                    cache.put(okey, data, epoch)
                if keep(bead_id, data):
                    total += 1
                    if len(ids) < limit:
                        ids.append(bead_id)
                    if not count_all and len(ids) >= limit:
                        break
                found = cur.prev() if newest else cur.next()
        return ids, total

    def session_stats(self) -> list[dict[str, Any]]:
        """Each session of visible beads with its bead count and its first and last bead's
        time (epoch seconds), the most recently active first. One pass over the session
        index's keys; no bead is decoded."""
        stats: dict[bytes, list[int]] = {}
        with self.store.read() as txn, txn.cursor(db=self.store.dbs["bead_sess"]) as cur:
            for key in cur.iternext(values=False):
                session, _, rest = key.partition(b"\0")
                ts = int.from_bytes(rest[:8], "big")
                seen = stats.get(session)
                if seen is None:
                    stats[session] = [1, ts, ts]
                else:
                    seen[0] += 1
                    seen[2] = ts
        rows = [
            {"session_id": s.decode(), "beads": n, "first_ts": first / 1e6, "last_ts": last / 1e6}
            for s, (n, first, last) in stats.items()
        ]
        return sorted(rows, key=lambda r: -r["last_ts"])

    @staticmethod
    def bead_origin(stamp: tuple[int, str, int]) -> dict[str, Any]:
        hlc, replica, seq = stamp
        return {"origin_replica": replica, "op": f"{replica}:{seq}", "hlc": hlc}

    def origin(self, kind: str, item_id: str) -> dict[str, Any]:
        """Where an item comes from: the replica and op that made what is shown."""
        store = self.store
        with store.read() as txn:
            if kind == "bead":
                raw = txn.get(item_id.encode(), db=store.dbs["beads"])
                entry = None if raw is None else unpack(raw)
                if not isinstance(entry, list):
                    return {}
                return self.bead_origin(entry[0])
            raw = txn.get(record_key(kind, item_id), db=store.dbs[RECORD_DBS[kind]])
        return {} if raw is None else record_origin(unpack(raw))

    def beads_with_origin(self, ids: Sequence[str]) -> dict[str, tuple[Bead, tuple[int, str, int]]]:
        """The visible beads among ``ids``, each with the ``(hlc, replica, seq)`` of the add
        shown (`bead_origin` makes it what `origin` gives), read in one transaction."""
        store, cache = self.store, self.store.decoded
        found: dict[str, tuple[dict[str, Any], tuple[int, str, int]]] = {}
        epoch = cache.epoch
        with store.read() as txn:
            db = store.dbs["beads"]
            for bead_id in ids:
                raw = txn.get(bead_id.encode(), db=db)
                entry = None if raw is None else unpack(raw)
                if not isinstance(entry, list):
                    continue
                hlc, replica, seq = entry[0]
                okey = op_key(replica, seq)
                data = cache.get(okey)
                if data is None:
                    data = store.op_data(txn, replica, seq)
                    cache.put(okey, data, epoch)
                found[bead_id] = (data, (hlc, replica, seq))
        return {bead_id: (self.bead(data), stamp) for bead_id, (data, stamp) in found.items()}

    # ---- records: graph, persona, skills -------------------------------------------------------

    def get_persona(self) -> Persona:
        record = self.record("persona", "persona")
        return persona_of(record) if record is not None else Persona()

    def get_skill(self, id: str) -> Skill:
        check_id(id, "skill")
        record = self.record("skill", id)
        if record is None or not crdt.is_present(record):
            raise NotFound(f"no skill {id!r}")
        return skill_of(id, record)

    def list_skills(self) -> list[Skill]:
        return [skill_of(k, r) for k, r in self.records("skill") if crdt.is_present(r)]

    # ---- embeddings ----------------------------------------------------------------------------

    def _with_vector(self, txn: Txn, rec: dict[str, Any]) -> dict[str, Any]:
        """A view record with its ``vector``, read from the op that put it (`rules.embedding_put`
        keeps it there only); a record written before that holds it itself."""
        if "vector" in rec:
            return rec
        raw = txn.get(op_key(*crdt.parse_dot(rec["dot"])), db=self.store.dbs["ops"])
        return {**rec, "vector": unpack(raw)["data"]["vector"]}

    def embedding_record(
        self, kind: str, item_id: str, model: str, *, vector: bool = True
    ) -> dict[str, Any] | None:
        """The live stored vector record of an item under a model, its ``vector`` included
        unless ``vector`` is false (None if none or erased)."""
        with self.store.read() as txn:
            raw = txn.get(emb_key(kind, item_id, model), db=self.store.dbs["emb"])
            rec = None if raw is None else unpack(raw)
            if rec is None or rec.get("erased"):
                return None
            return self._with_vector(txn, rec) if vector else rec

    def embedding_records(self, keys: Sequence[tuple[str, str]], model: str) -> dict[int, Any]:
        """``{position: record}`` of the live vector records of ``(kind, id)`` items."""
        out = {}
        with self.store.read() as txn:
            for i, (kind, item_id) in enumerate(keys):
                raw = txn.get(emb_key(kind, item_id, model), db=self.store.dbs["emb"])
                rec = None if raw is None else unpack(raw)
                if rec is not None and not rec.get("erased"):
                    out[i] = self._with_vector(txn, rec)
        return out

    def vector_bytes(
        self, keys: Sequence[tuple[str, str]], model: str
    ) -> dict[int, tuple[int, bytes]]:
        """``{position: (dims, stored bytes)}`` of the live vectors of ``(kind, id)`` items
        under a model (`chrysalis.core.vector_bytes` tells the width by length), read in one
        transaction. What an IVF re-rank reads on every query: no record is made."""
        out: dict[int, tuple[int, bytes]] = {}
        store = self.store
        emb, ops = store.dbs["emb"], store.dbs["ops"]
        with store.read() as txn:
            for i, (kind, item_id) in enumerate(keys):
                raw = txn.get(emb_key(kind, item_id, model), db=emb)
                if raw is None:
                    continue
                rec = unpack(raw)
                if rec.get("erased"):
                    continue
                vector = rec.get("vector")  # a record written before vectors moved to ops
                if vector is None:
                    op = unpack(txn.get(op_key(*crdt.parse_dot(rec["dot"])), db=ops))
                    vector = op["data"]["vector"]
                out[i] = (rec["dims"], vector)
        return out

    def model_vector_keys(
        self, model: str, dims: int
    ) -> tuple[dict[str, int], list[tuple[str, str]]]:
        """The version vector and the ``(kind, id)`` of every live vector of one model and
        ``dims``, at one snapshot (an index rebuild lists them, then reads the vectors a
        chunk at a time: what changes in between is caught up from the version vector)."""
        out = []
        with self.store.read() as txn:
            watermark = self.store.version_vector(txn)
            for k, v in txn.cursor(db=self.store.dbs["emb"]):
                kind, item_id, rec_model = k.decode().split("\0")
                if rec_model != model:
                    continue
                rec = unpack(v)
                if not rec.get("erased") and rec["dims"] == dims:
                    out.append((kind, item_id))
        return watermark, out

    def get_embedding(self, item_kind: str, item_id: str, model: str) -> Embedding:
        """The stored vector; `NotFound` when none (or its item was forgotten)."""
        check_id(item_id, item_kind)
        rec = self.embedding_record(item_kind, item_id, model)
        if rec is None:
            raise NotFound(f"no {model!r} embedding for {item_kind} {item_id!r}")
        fields = {k: rec[k] for k in ("model", "dims", "provider", "text_hash", "created_at")}
        # the public vector is float32 whatever the op stored (`chrysalis.core.vector_bytes`)
        fields["vector"] = vector_bytes.decode(rec["vector"], rec["dims"]).astype("<f4").tobytes()
        return Embedding.model_construct(item_kind=item_kind, item_id=item_id, **fields)  # type: ignore[arg-type]

    # ---- what the search indexes hold ----------------------------------------------------------

    def item_text(self, key: str) -> tuple[str, dict[str, Any]] | None:
        """The text an item is indexed under, and its filter fields; None when not visible."""
        kind, _, item_id = key.partition(":")
        try:
            if kind == "bead":
                b = self.get_bead(item_id)
                text = f"{b.source}: {b.content}" if b.source else b.content
                fields = {"session": b.session_id, "role": b.role, "ts": b.ts,
                          "importance": b.importance, "tags": b.tags}  # fmt: skip
                return text, fields
            if kind == "node":
                n = self.get_node(item_id)
                return " ".join([n.name or n.id, n.type, *n.labels]), {}
            if kind == "skill":
                s = self.get_skill(item_id)
                return " ".join([s.name, s.description, s.signature, *s.examples, *s.tags]), {}
            if kind == "persona":
                p = self.get_persona()
                text = " ".join([p.name, p.description, *p.goals, *p.norms]).strip()
                return (text, {}) if text else None
        except NotFound:
            return None
        return None

    # ---- the log ---------------------------------------------------------------------------------

    def version_vector(self) -> dict[str, int]:
        """``{replica_id: highest contiguous seq applied}``."""
        with self.store.read() as txn:
            return self.store.version_vector(txn)

    def ops_since(self, version_vector: Mapping[str, int], limit: int | None = None) -> list[Any]:
        """The ops a replica at ``version_vector`` lacks (at most ``limit``), as wire dicts."""
        for replica, seq in version_vector.items():
            if not isinstance(replica, str) or not isinstance(seq, int) or seq < 0:
                raise InvalidInput(f"invalid version vector entry {replica!r}: {seq!r}")
        out = []
        with self.store.read() as txn:
            for op in self.store.ops_since(txn, dict(version_vector)):
                out.append(op)
                if limit is not None and len(out) >= limit:
                    break
        return out

    def ops_range(self, replica: str, after: int, limit: int) -> list[dict[str, Any]]:
        """Up to ``limit`` of ``replica``'s logged ops after seq ``after``, in seq order."""
        with self.store.read() as txn:
            return self.store.ops_range(txn, replica, after, limit)

    def last_seqs(self, replicas: Sequence[str]) -> dict[str, int]:
        """The last seq held of each of ``replicas``, read in one transaction."""
        with self.store.read() as txn:
            return {r: self.store.last_seq(txn, r) for r in replicas}

    def dump_unless(
        self, unchanged: Callable[[dict[str, int]], bool]
    ) -> tuple[dict[str, int], dict[str, list[tuple[bytes, bytes]]] | None, str | None]:
        """``(vv, dbs, digest)`` of the replicated databases read in one transaction (a
        snapshot); when ``unchanged(vv)`` is true, ``(vv, None, None)`` without dumping."""
        with self.store.read() as txn:
            vv = self.store.version_vector(txn)
            if unchanged(vv):
                return vv, None, None
            return vv, self.store.dump(txn), self.store.state_digest(txn)

    @contextlib.contextmanager
    def dump_stream(
        self, unchanged: Callable[[dict[str, int]], bool]
    ) -> Iterator[tuple[dict[str, int], Iterator[tuple[str, Pairs]] | None]]:
        """``(vv, stream)`` of the replicated databases at one read transaction, held open
        while the caller consumes ``stream`` (``(name, key-ordered pairs)`` in SNAPSHOT_DBS
        order, each read lazily): a snapshot written part by part, never held whole. When
        ``unchanged(vv)`` is true, ``(vv, None)``."""
        with self.store.read() as txn:
            vv = self.store.version_vector(txn)
            if unchanged(vv):
                yield vv, None
                return
            dbs = self.store.dbs
            yield vv, ((name, txn.cursor(db=dbs[name])) for name in SNAPSHOT_DBS)

    def log_op(self, replica: str, seq: int) -> dict[str, Any] | None:
        """One op as this replica logs it (erased content stays erased), or None."""
        with self.store.read() as txn:
            raw = txn.get(op_key(replica, seq), db=self.store.dbs["ops"])
        return None if raw is None else unpack(raw)

    def pending_ops(self) -> int:
        """How many remote ops wait for a gap to fill."""
        with self.store.read() as txn:
            return int(txn.stat(self.store.dbs["pending"])["entries"])

    def state_digest(self) -> str:
        """A hash of the materialized state; equal on replicas that applied the same ops."""
        with self.store.read() as txn:
            return self.store.state_digest(txn)

    def stats(self) -> dict[str, int]:
        """Counts of what the store holds (entries per view, ops, pending)."""
        with self.store.read() as txn:
            return {name: int(txn.stat(db)["entries"]) for name, db in self.store.dbs.items()}


# ---- decoding records into models ----------------------------------------------------------


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


def persona_of(r: crdt.Record) -> Persona:
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


def skill_of(id: str, r: crdt.Record) -> Skill:
    return Skill.model_construct(
        id=id,
        name=crdt.field_value(r, "name", ""),
        description=crdt.field_value(r, "description", ""),
        signature=crdt.field_value(r, "signature", ""),
        examples=crdt.set_values(r, "examples"),
        tags=crdt.set_values(r, "tags"),
    )
