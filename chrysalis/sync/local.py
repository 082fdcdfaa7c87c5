"""The local side of sync: the one place the sync package touches the core (Memory, Store).

Sync needs these from the core, and nothing else:

- ``memory.store.replica_id`` (str), ``memory.store.generation`` (int)
- ``memory.store.get_meta(name) -> Any`` and ``memory.store.put_meta(name, value)``: small
  durable values (``lineage``, our cursors per remote)
- the read side, ``memory.reader``: ``last_seqs(replicas) -> dict[str, int]``,
  ``ops_range(replica, after, limit) -> list[op]`` (ops of ``replica`` after seq ``after``, in
  order, at most ``limit``), ``dump_unless(unchanged) -> (vv, dbs | None, digest | None)``
  (the replicated databases and their digest, read in one transaction) and
  ``dump_stream(unchanged)`` (the same, streamed from one open read transaction)
- ``memory.store.clock.now() -> int`` (an HLC)
- ``memory.store.is_empty() -> bool``, ``memory.store.load(dbs)`` (a snapshot written whole)
  and ``memory.store.load_parts(parts, reserve=)`` (one streamed, in one transaction)
- ``memory.store.blobs``: ``has(sha) -> bool``, ``get(sha) -> bytes`` (raises a
  ``ChrysalisError`` if absent), ``put(data) -> sha``
- ``memory.version_vector() -> dict[str, int]`` and ``memory.apply_ops(ops) -> ApplyResult``
  (``.applied``; raises ``InvalidInput`` / ``DotConflict``, applying nothing)
- ``memory.reader.log_op(replica, seq)`` (one op as logged, erased or not),
  ``memory.store.blob_in_use(txn, sha)``, and the ``scrub`` database forget fills (the remote's
  to-do: ``keys.SCRUB_OP`` / ``keys.SCRUB_BLOB`` keys), read and marked here
- from ``chrysalis.store.keys``: ``pack`` / ``unpack`` (the op encoding), ``same_op`` (equal but for
  erasure); from ``chrysalis.store.env``: ``digest_of(dbs)`` (the state digest of dumped pairs)
  and ``StateDigest`` (the same, fed as pairs stream);
  the key layout of the dumped ``ops`` (``<replica>\\0<seq>``) and ``blobrefs``
  (``<sha>\\0...``) databases.

A reshaped core only needs this file edited.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from chrysalis.store.env import StateDigest, digest_of
from chrysalis.store.keys import SCRUB_BLOB, SCRUB_OP, pack, same_op, unpack

if TYPE_CHECKING:
    from chrysalis.memory import Memory

Op = dict[str, Any]
Dump = dict[str, list[tuple[bytes, bytes]]]
Pairs = Iterable[tuple[bytes, bytes]]

APPLY_BATCH = 4096  # ops per apply_ops call


class Local:
    """One memory, as sync sees it. ``fid`` arguments are the remote's id (``format.json``):
    cursors are kept per remote, so a recreated bucket gets every op pushed again."""

    def __init__(self, memory: Memory) -> None:
        self._memory = memory
        self._store = memory.store

    # ---- the local scrub (chrysalis.forget.scrub) ---------------------------------------------

    def scrub_if_due(self) -> None:
        """Scrub now if a forget is waiting for it, so the heartbeat a push writes next can
        say it is done here (a forget receipt reads it)."""
        if self._memory.scrubber.due():
            self._memory.scrubber.run()

    def scrubbed_vv(self) -> dict[str, int]:
        """The version vector the last local scrub covered: every forget in it left our files."""
        return dict(self._memory.scrubber.scrubbed()["vv"])

    # ---- who we are ------------------------------------------------------------------------------

    @property
    def replica_id(self) -> str:
        return self._store.replica_id

    @property
    def generation(self) -> int:
        return self._store.generation

    def lineage(self) -> list[dict[str, Any]]:
        """The ids this data dir was before a new generation: ``[{replica, upto}]``."""
        return self._store.get_meta("lineage") or []

    # ---- our cursors (durable, per remote) -------------------------------------------------------

    def pushed(self, fid: str, replica: str) -> int:
        """The last seq of ``replica`` this remote confirmed."""
        return int(self._store.get_meta(f"sync:{fid}:pushed:{replica}") or 0)

    def set_pushed(self, fid: str, replica: str, seq: int) -> None:
        self._store.put_meta(f"sync:{fid}:pushed:{replica}", seq)

    def announced(self, fid: str) -> int:
        """Our cursor as of the last ``changed`` marker we wrote."""
        return int(self._store.get_meta(f"sync:{fid}:announced") or 0)

    def set_announced(self, fid: str, seq: int) -> None:
        self._store.put_meta(f"sync:{fid}:announced", seq)

    def last_snapshot(self, fid: str) -> dict[str, Any] | None:
        """``{key, vv, bytes}`` of our latest snapshot in this remote, or None."""
        return self._store.get_meta(f"sync:{fid}:snapshot")  # type: ignore[no-any-return]

    def set_last_snapshot(self, fid: str, info: dict[str, Any]) -> None:
        self._store.put_meta(f"sync:{fid}:snapshot", info)

    def known_format(self, url: str) -> dict[str, Any] | None:
        """The ``format.json`` we last opened at remote ``url`` (to repair it), or None."""
        return self._store.get_meta(f"sync:format:{url}")  # type: ignore[no-any-return]

    def set_known_format(self, url: str, fmt: dict[str, Any]) -> None:
        if self.known_format(url) != fmt:
            self._store.put_meta(f"sync:format:{url}", fmt)

    # ---- the op log ------------------------------------------------------------------------------

    def version_vector(self) -> dict[str, int]:
        return self._memory.version_vector()

    def last_seqs(self, replicas: list[str]) -> dict[str, int]:
        """The last seq we hold of each of ``replicas`` (read together)."""
        return self._memory.reader.last_seqs(replicas)

    def ops_after(self, replica: str, after: int, limit: int) -> list[Op]:
        """``replica``'s ops after seq ``after``, in order, at most ``limit``."""
        return self._memory.reader.ops_range(replica, after, limit)

    def apply(self, ops: list[Op]) -> int:
        """Apply remote ops (validated, idempotent); returns how many were new. Raises
        ``InvalidInput`` or ``DotConflict`` for a batch it refuses whole."""
        applied = 0
        for i in range(0, len(ops), APPLY_BATCH):
            applied += int(self._memory.apply_ops(ops[i : i + APPLY_BATCH]).applied)
        return applied

    @staticmethod
    def op_size(op: Op) -> int:
        """An op's encoded size in bytes (what a segment's byte cap counts)."""
        return len(pack(op))

    @staticmethod
    def same_op(ours: Op, theirs: Op) -> bool:
        """Equal, or equal but for one side's content erased by a forget."""
        return same_op(ours, theirs)

    # ---- snapshots -------------------------------------------------------------------------------

    def dump_unless(
        self, unchanged: Callable[[dict[str, int]], bool]
    ) -> tuple[dict[str, int], Dump | None, str | None]:
        """``(vv, dbs, digest)`` of the replicated databases, read in one transaction; when
        ``unchanged(vv)`` is true, ``(vv, None, None)`` without dumping."""
        return self._memory.reader.dump_unless(unchanged)

    @contextlib.contextmanager
    def dump_stream(
        self, unchanged: Callable[[dict[str, int]], bool]
    ) -> Iterator[tuple[dict[str, int], Iterator[tuple[str, Pairs]] | None]]:
        """``(vv, stream)``: the replicated databases as ``(name, key-ordered pairs)``, read
        lazily from one read transaction held while the caller is inside; ``(vv, None)`` when
        ``unchanged(vv)`` is true."""
        with self._memory.reader.dump_stream(unchanged) as got:
            yield got

    @staticmethod
    def state_digest() -> StateDigest:
        """A state digest to feed pairs as they stream (equal to `digest_of` of them all)."""
        return StateDigest()

    def load_parts(self, parts: Callable[[], Iterable[tuple[str, Pairs]]], reserve: int) -> None:
        """Write a streamed snapshot into an empty store in one transaction (nothing if
        ``parts()`` raises); ``reserve``: the bytes its pairs hold."""
        self._store.load_parts(parts, reserve=reserve)

    def hlc_now(self) -> int:
        return self._store.clock.now()

    def is_empty(self) -> bool:
        """No ops and no views: a data dir that may start from a snapshot."""
        return self._store.is_empty()

    @staticmethod
    def digest_of(dbs: Dump) -> str:
        return digest_of(dbs)

    def load(self, dbs: Dump) -> None:
        """Write a snapshot's pairs as they are (an empty store only)."""
        self._store.load(dbs)

    @staticmethod
    def ops_in(dbs: dict[str, Any], replica: str) -> list[Op]:
        """``replica``'s ops in a snapshot's ``ops`` pairs."""
        prefix = replica.encode() + b"\0"
        return [unpack(bytes(v)) for k, v in dbs.get("ops", ()) if bytes(k).startswith(prefix)]

    @staticmethod
    def blobs_in(dbs: Dump) -> list[str]:
        """The blobs a snapshot's live beads use (its ``blobrefs`` pairs name them), sorted."""
        return sorted({k.split(b"\0", 1)[0].decode() for k, _ in dbs.get("blobrefs", ())})

    # ---- blobs -----------------------------------------------------------------------------------

    def has_blob(self, sha: str) -> bool:
        return self._store.blobs.has(sha)

    def get_blob(self, sha: str) -> bytes:
        """Raises a ``ChrysalisError`` when the blob is gone (forgotten)."""
        return self._store.blobs.get(sha)

    def put_blob(self, data: bytes) -> str:
        """Store content; returns its sha256."""
        return self._store.blobs.put(data)

    def blob_in_use(self, sha: str) -> bool:
        """Does a live bead here name the blob? (The ``blobrefs`` view.)"""
        with self._store.read() as txn:
            return self._store.blob_in_use(txn, sha)

    # ---- the remote's to-do after a forget (scrub.py) --------------------------------------------

    def log_op(self, replica: str, seq: int) -> Op | None:
        """One op as logged here (a forgotten bead's erased), or None."""
        return self._memory.reader.log_op(replica, seq)

    def scrub_todo(self) -> tuple[dict[tuple[str, int], dict[str, Any]], dict[str, dict[str, Any]]]:
        """``(ops, blobs)``: the op dots a forget erased here and the blobs it left unused, each
        with what is done per remote id (``{fid: [stage, ...]}``)."""
        ops: dict[tuple[str, int], dict[str, Any]] = {}
        blobs: dict[str, dict[str, Any]] = {}
        with self._store.read() as txn, txn.cursor(db=self._store.dbs["scrub"]) as cur:
            for k, v in cur:
                if k.startswith(SCRUB_OP):
                    replica, seq = k[len(SCRUB_OP) :].split(b"\0", 1)
                    ops[(replica.decode(), int.from_bytes(seq, "big"))] = unpack(v)
                elif k.startswith(SCRUB_BLOB):
                    blobs[k[len(SCRUB_BLOB) :].decode()] = unpack(v)
        return ops, blobs

    def scrub_done(
        self, fid: str, stage: str, ops: Sequence[tuple[str, int]] = (), blobs: Sequence[str] = ()
    ) -> None:
        """Record ``stage`` done in remote ``fid`` for these to-do entries (one commit)."""
        keys = [SCRUB_OP + r.encode() + b"\0" + seq.to_bytes(8, "big") for r, seq in ops]
        keys += [SCRUB_BLOB + sha.encode() for sha in blobs]
        if not keys:
            return

        def write(ctx: Any) -> None:
            db = ctx.dbs["scrub"]  # looked up in the transaction: a compaction reopens them
            for k in keys:
                raw = ctx.txn.get(k, db=db)
                if raw is None:
                    continue
                done = unpack(raw)
                if stage not in done.setdefault(fid, []):
                    done[fid].append(stage)
                    ctx.txn.put(k, pack(done), db=db)

        self._store.write(write)
