"""One LMDB environment: the op log, every materialized view, and the meta.

Named databases (keys are bytes; ``\\0`` separates variable parts, ints are 8-byte big-endian):

    meta       name -> value            replica id, generation, format, cursors
    ops        replica\\0seq -> op       the op log (msgpack of the op's wire dict); it holds
                                        each replica's ops 1..n, so it *is* the version vector
    pending    replica\\0seq -> op       remote ops waiting for a gap to fill
    beads      id -> entry              sorted add dots [[hlc, replica, seq], ...] or "forgotten"
    bead_time  ts_us hlc replica\\0seq -> id          beads in time order
    bead_sess  session\\0 ts_us hlc replica\\0seq -> id
    nodes, edges, skills, persona       id -> record (see `chrysalis.crdt`)
    adj        node\\0edge -> b"o" | b"i"           edges by endpoint
    emb        kind\\0item\\0model -> record        embedding vectors as float32 bytes
    blobrefs   sha256\\0bead -> b""                 which live beads use a blob

Nothing is written per commit that can be derived: the version vector and the HLC come from
the op log at open (every named database a commit touches costs a page write and its share of
the fsync: measured +30 µs per commit each here for appends, +110 µs with random keys).

Writes are group-committed: callers queue a function; the caller at the front of the queue
runs every queued function in one write transaction, in its own thread, and each caller
returns only after that commit. A local write makes the op with the next seq and applies it in
the same transaction.
"""

from __future__ import annotations

import collections
import contextlib
import fcntl
import functools
import hashlib
import itertools
import logging
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lmdb
import msgpack

from . import crdt
from .atomic import atomic_write
from .clock import HLC
from .errors import ChrysalisError, ClosedError, DataDirLocked, DotConflict, NotFound, StoreError

log = logging.getLogger(__name__)

# lmdb's stubs type every value as ``bytes | memoryview``; we never open ``buffers=True``
# transactions, so values are bytes. Transactions are typed loosely rather than cast at
# every get.
Txn = Any

DB_NAMES = (
    "meta", "ops", "pending", "beads", "bead_time", "bead_sess",
    "nodes", "edges", "adj", "persona", "skills", "emb", "blobrefs",
)  # fmt: skip
STATE_DBS = ("beads", "nodes", "edges", "persona", "skills", "emb")  # what state_digest() hashes
RECORD_DBS = {"node": "nodes", "edge": "edges", "persona": "persona", "skill": "skills"}
PERSONA_KEY = b"persona"
FORMAT_VERSION = 1
MAX_BATCH = 1024
DEFAULT_MAP_SIZE = 1 << 30  # address space, not disk: the file grows as pages are used
SNAPSHOT_DBS = (
    "ops", "beads", "bead_time", "bead_sess", "nodes", "edges", "adj", "persona", "skills",
    "emb", "blobrefs",
)  # fmt: skip
GROW_AT = 0.75  # grow the map when it is this full, before a write can fail
GROUP_COMMIT_WAIT = 0.0002  # seconds a durable commit may wait for writers seen last time


def pack(value: Any) -> bytes:
    return msgpack.packb(value, use_bin_type=True)  # type: ignore[no-any-return]


def unpack(data: bytes) -> Any:
    return msgpack.unpackb(data, raw=False)


def u64(n: int) -> bytes:
    return n.to_bytes(8, "big")


def op_key(replica: str, seq: int) -> bytes:
    return replica.encode() + b"\0" + u64(seq)


def time_key(ts: float, hlc: int, replica: str, seq: int) -> bytes:
    return u64(round(ts * 1_000_000)) + u64(hlc) + op_key(replica, seq)


def emb_key(kind: str, item: str, model: str) -> bytes:
    return f"{kind}\0{item}\0{model}".encode()


def erased_data(data: dict[str, Any]) -> dict[str, Any]:
    """What a forgotten bead's add op keeps."""
    return {"id": data["id"], "ts": data["ts"], "erased": True}


def erased_embedding(data: dict[str, Any]) -> dict[str, Any]:
    """What an embedding op of a forgotten bead keeps."""
    return {"item_kind": data["item_kind"], "model": data["model"], "erased": True}


def same_op(stored: dict[str, Any], incoming: dict[str, Any]) -> bool:
    """Equal, or equal but for one side having had its content erased by a forget."""
    if stored == incoming:
        return True
    if stored["kind"] != incoming["kind"] or stored["kind"] not in ("bead.add", "embedding.put"):
        return False
    a, b = dict(stored), dict(incoming)
    da, db = a.pop("data"), b.pop("data")
    if a != b or not (da.get("erased") or db.get("erased")):
        return False
    keys = ("id", "ts") if stored["kind"] == "bead.add" else ("item_kind", "model")
    return all(da.get(k) == db.get(k) for k in keys)


def digest_of(dbs: Mapping[str, Iterable[tuple[bytes, bytes]]]) -> str:
    """The state digest of ``{name: key-ordered (key, value) pairs}`` for each of STATE_DBS."""
    h = hashlib.blake2b(digest_size=16)
    for name in STATE_DBS:
        h.update(name.encode() + b"\0")
        for k, v in dbs.get(name, ()):
            h.update(u64(len(k)))
            h.update(k)
            h.update(u64(len(v)))
            h.update(v)
    return h.hexdigest()


class _ResizeLock:
    """Readers share it; growing the map takes it alone (no transaction may be open then)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._resizing = False

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        with self._cond:
            while self._resizing:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if not self._readers:
                    self._cond.notify_all()

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._cond:
            self._resizing = True
            while self._readers:
                self._cond.wait()
        try:
            yield
        finally:
            with self._cond:
                self._resizing = False
                self._cond.notify_all()


@dataclass
class _Request:
    fn: Callable[[WriteContext], Any]
    wake: threading.Event = field(default_factory=threading.Event)
    finished: bool = False
    result: Any = None
    error: BaseException | None = None


@dataclass
class ApplyResult:
    """What `Store.apply_remote` did with a batch of remote ops."""

    applied: int = 0
    duplicates: int = 0
    pending: int = 0


class _Lock:
    """An exclusive lock on the data dir: across processes (flock) and within this one."""

    _held: set[str] = set()
    _guard = threading.Lock()

    def __init__(self, path: Path) -> None:
        self.key = str(path.resolve())
        with self._guard:
            if self.key in self._held:
                raise DataDirLocked(f"data dir {path} is already open in this process")
            self._held.add(self.key)
        self.fd = os.open(path / "LOCK", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            other = os.pread(self.fd, 32, 0).decode(errors="replace").strip() or "?"
            os.close(self.fd)
            with self._guard:
                self._held.discard(self.key)
            raise DataDirLocked(
                f"data dir {path} is in use by another process (pid {other}); "
                "one memory is opened by one process at a time (the daemon, if it is running)"
            ) from None
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, str(os.getpid()).encode(), 0)

    def release(self) -> None:
        with contextlib.suppress(OSError):
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
        with self._guard:
            self._held.discard(self.key)


class DecodedCache:
    """Decoded op data of recently read beads, keyed by op key: ``last_beads`` reads the same
    few dozen beads on every agent turn, and decoding is most of its cost.

    Safe because an op's data changes only when a forget erases it: the writer calls
    `invalidate` after such a commit, and a reader may `put` only if no invalidation
    happened since it took `epoch` before opening its transaction.
    """

    def __init__(self, capacity: int = 8192) -> None:
        self.capacity = capacity
        self.epoch = 0
        self._data: dict[bytes, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def get(self, key: bytes) -> dict[str, Any] | None:
        return self._data.get(key)

    def put(self, key: bytes, data: dict[str, Any], epoch: int) -> None:
        with self._lock:
            if epoch != self.epoch:
                return
            if len(self._data) >= self.capacity:
                self._data.pop(next(iter(self._data)))
            self._data[key] = data

    def invalidate(self, keys: list[bytes]) -> None:
        with self._lock:
            self.epoch += 1
            for key in keys:
                self._data.pop(key, None)


class BlobStore:
    """Content-addressed files beside LMDB: ``blobs/<sha[:2]>/<sha>``, written tmp+fsync+rename."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def path(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256

    def put(self, data: bytes) -> str:
        sha = hashlib.sha256(data).hexdigest()
        final = self.path(sha)
        if final.exists():
            return sha
        final.parent.mkdir(exist_ok=True)
        atomic_write(final, data)
        return sha

    def get(self, sha256: str) -> bytes:
        try:
            data = self.path(sha256).read_bytes()
        except FileNotFoundError:
            raise NotFound(
                f"blob {sha256} is not here (not yet fetched from the remote?)"
            ) from None
        if hashlib.sha256(data).hexdigest() != sha256:
            raise StoreError(f"blob {sha256} is damaged: its content does not match its name")
        return data

    def has(self, sha256: str) -> bool:
        return self.path(sha256).exists()

    def delete(self, sha256: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path(sha256).unlink()


class WriteContext:
    """What a write function sees: the open write transaction and the means to make ops."""

    def __init__(self, store: Store, txn: Txn) -> None:
        self.store = store
        self.txn = txn
        self.after_commit: list[Callable[[], None]] = []

    def get(self, db: str, key: bytes) -> Any:
        raw = self.txn.get(key, db=self.store.dbs[db])
        return None if raw is None else unpack(raw)

    def local_op(
        self, kind: str, target: str, data: dict[str, Any], *, hlc: int | None = None
    ) -> dict[str, Any]:
        """Make the next op of this replica, log it and apply it; returns the op."""
        store = self.store
        seq = store._seq + 1
        op = {
            "replica": store.replica_id,
            "seq": seq,
            "hlc": store.clock.now() if hlc is None else hlc,
            "kind": kind,
            "target": target,
            "data": data,
        }
        logged = store._apply(self, op)
        self.txn.put(op_key(store.replica_id, seq), pack(logged), db=store.dbs["ops"])
        store._seq = seq  # the version vector entry is written once, at the end of the batch
        return op


class Store:
    """The LMDB environment, its single writer, and the rules that apply ops to views."""

    def __init__(
        self,
        path: Path,
        *,
        sync: bool = True,
        map_size: int = DEFAULT_MAP_SIZE,
        replica_id: str | None = None,
    ) -> None:
        self.path = path
        self.sync = sync
        path.mkdir(parents=True, exist_ok=True)
        self._lock = _Lock(path)
        try:
            self.env = lmdb.open(
                str(path / "lmdb"), subdir=True, map_size=map_size, max_dbs=len(DB_NAMES) + 2,
                sync=sync, metasync=sync, readahead=False, max_readers=256,
            )  # fmt: skip
        except lmdb.Error as exc:
            self._lock.release()
            raise StoreError(f"cannot open LMDB in {path}: {exc}") from exc
        self.dbs = {name: self.env.open_db(name.encode()) for name in DB_NAMES}
        self.blobs = BlobStore(path / "blobs")
        self.decoded = DecodedCache()
        self.blob_lock = threading.Lock()
        self._resize = _ResizeLock()
        self._closed = False
        self._closing = False
        try:
            self._init_meta(replica_id)
        except BaseException:
            self.env.close()
            self._lock.release()
            raise
        with self.read() as txn:
            last = self._last_ops(txn)
        self._seq = last.get(self.replica_id, (0, 0))[0]
        # Above every stamp in the log (monotonic across restarts, even if the wall clock
        # stepped back while we were down), each folded in through the drift clamp.
        self.clock = HLC()
        for _, hlc in last.values():
            self.clock.observe(hlc)
        self._mu = threading.Lock()
        self._idle = threading.Condition(self._mu)  # the queue emptied
        self._arrived = threading.Condition(self._mu)  # a writer joined the queue
        self._writers: collections.deque[_Request] = collections.deque()
        self._expected = 1
        self.commits = 0
        self.listeners: list[Callable[[list[dict[str, Any]]], None]] = []
        self._applied: list[dict[str, Any]] = []

    # ---- meta ------------------------------------------------------------------------------

    def _init_meta(self, replica_id: str | None) -> None:
        with self.env.begin(write=True) as begun:
            txn: Txn = begun
            meta = self.dbs["meta"]
            existing = txn.get(b"replica_id", db=meta)
            if existing is None:
                txn.put(b"replica_id", (replica_id or secrets.token_hex(8)).encode(), db=meta)
                txn.put(b"generation", u64(1), db=meta)
                txn.put(b"format", u64(FORMAT_VERSION), db=meta)
                txn.put(b"created_at", pack(time.time()), db=meta)
            elif replica_id is not None and existing.decode() != replica_id:
                raise DataDirLocked(
                    f"data dir {self.path} belongs to replica {existing.decode()}, not {replica_id}"
                )
            fmt = int.from_bytes(txn.get(b"format", db=meta), "big")
            if fmt != FORMAT_VERSION:
                raise StoreError(
                    f"data dir {self.path} has format {fmt}; this build reads {FORMAT_VERSION}"
                )
            here = u64(os.stat(self.path / "lmdb" / "data.mdb").st_ino)
            seen = txn.get(b"fingerprint", db=meta)
            if seen is not None and seen != here and replica_id is None:
                self._new_generation(txn, "the data dir was copied or restored")
            txn.put(b"fingerprint", here, db=meta)
            self.replica_id: str = txn.get(b"replica_id", db=meta).decode()

    def _new_generation(self, txn: Txn, why: str) -> None:
        """Write from now on under a fresh replica id (generation + 1).

        A copied or restored data dir must not go on writing under the id it shares with its
        original: two writers would make different ops with the same dots. The old id's ops
        stay in the log like any other replica's; ``lineage`` remembers up to which seq this
        copy holds them, so sync can still publish those (identical on both copies).
        """
        meta = self.dbs["meta"]
        old = txn.get(b"replica_id", db=meta).decode()
        upto = self._last_seq(txn, old)
        raw = txn.get(b"m:lineage", db=meta)
        lineage = [] if raw is None else unpack(raw)
        lineage.append({"replica": old, "upto": upto, "at": time.time(), "why": why})
        new = secrets.token_hex(8)
        txn.put(b"m:lineage", pack(lineage), db=meta)
        txn.put(b"replica_id", new.encode(), db=meta)
        txn.put(
            b"generation", u64(int.from_bytes(txn.get(b"generation", db=meta), "big") + 1), db=meta
        )
        log.warning("%s: replica %s continues as %s (new generation)", why, old, new)

    def new_generation(self, why: str) -> str:
        """Start a new generation now (see `_new_generation`); returns the new replica id."""

        def switch(ctx: WriteContext) -> None:
            self._new_generation(ctx.txn, why)
            self.replica_id = ctx.txn.get(b"replica_id", db=self.dbs["meta"]).decode()
            self._seq = 0

        self.write(switch)
        return self.replica_id

    def _meta_int(self, key: bytes) -> int:
        with self.read() as txn:
            raw = txn.get(key, db=self.dbs["meta"])
        return 0 if raw is None else int.from_bytes(raw, "big")

    @property
    def generation(self) -> int:
        return self._meta_int(b"generation")

    def get_meta(self, name: str) -> Any:
        with self.read() as txn:
            raw = txn.get(b"m:" + name.encode(), db=self.dbs["meta"])
        return None if raw is None else unpack(raw)

    def put_meta(self, name: str, value: Any) -> None:
        """Durably set a named meta value (cursors and the like)."""
        self.put_metas({name: value})

    def put_metas(self, values: dict[str, Any]) -> None:
        """Durably set several meta values in one commit; a value of None deletes its name."""

        def write(ctx: WriteContext) -> None:
            for name, value in values.items():
                key = b"m:" + name.encode()
                if value is None:
                    ctx.txn.delete(key, db=self.dbs["meta"])
                else:
                    ctx.txn.put(key, pack(value), db=self.dbs["meta"])

        self.write(write)

    # ---- transactions ------------------------------------------------------------------------

    @contextlib.contextmanager
    def read(self) -> Iterator[Txn]:
        with self._resize.shared():
            if self._closed:  # checked under the lock that close() takes to close the env
                raise ClosedError("memory is closed")
            with self.env.begin(buffers=False) as txn:
                yield txn

    def write(self, fn: Callable[[WriteContext], Any]) -> Any:
        """Run ``fn`` in a write transaction shared with other callers; return after commit.

        ``fn`` may raise a `ChrysalisError` before its first write: that caller gets the
        error and the rest of the batch commits. Any other failure fails the whole batch.

        Group commit without a writer thread (LevelDB's scheme): callers queue up; the one
        at the front leads, commits everything queued in one transaction in its own thread,
        then hands the lead to the next. A lone writer thus never waits for a thread switch,
        and writers arriving during a commit share the next one.
        """
        request = _Request(fn)
        with self._mu:
            if self._closing:
                raise ClosedError("memory is closed")
            self._writers.append(request)
            self._arrived.notify()
        while True:
            with self._mu:
                if request.finished:
                    break
                if request is self._writers[0]:
                    batch = self._take_batch()
                    break
                request.wake.clear()
            request.wake.wait()  # woken when done, or when it reaches the front
        if not request.finished:
            try:
                self._commit_batch(batch)
            finally:
                with self._mu:
                    for _ in batch:
                        done = self._writers.popleft()
                        done.finished = True
                        done.wake.set()
                    if self._writers:
                        self._writers[0].wake.set()  # the next leader
                    else:
                        self._idle.notify_all()
        if request.error is not None:
            raise request.error
        return request.result

    def _take_batch(self) -> list[_Request]:
        """The leader's batch: everything queued (called with the mutex held).

        When the last batch had more writers than are queued now, the others are probably on
        their way (validating); a durable commit costs far more than this short wait.
        """
        if self.sync and len(self._writers) < self._expected:
            deadline = time.monotonic() + GROUP_COMMIT_WAIT
            while len(self._writers) < self._expected:
                left = deadline - time.monotonic()
                if left <= 0 or not self._arrived.wait(left):
                    break
        batch = list(itertools.islice(self._writers, MAX_BATCH))
        self._expected = len(batch)
        return batch

    def _commit_batch(self, batch: list[_Request]) -> None:
        for _attempt in range(16):
            self._grow_if_needed()
            committed_seq, after = self._seq, []
            self._applied = []
            try:
                with self.env.begin(write=True) as txn:
                    ctx = WriteContext(self, txn)
                    for req in batch:
                        req.result, req.error = None, None
                        try:
                            req.result = req.fn(ctx)
                        except ChrysalisError as exc:
                            req.error = exc
                    after = ctx.after_commit
            except lmdb.MapFullError:
                self._seq = committed_seq
                self._grow()
                continue
            except BaseException as exc:
                self._seq = committed_seq
                log.exception("write transaction failed")
                error = (
                    exc if isinstance(exc, ChrysalisError) else StoreError(f"write failed: {exc!r}")
                )
                for req in batch:
                    req.error = error
                break
            self.commits += 1
            for action in after:
                try:
                    action()
                except Exception:
                    log.exception("post-commit action failed")
            if self._applied:
                for listener in self.listeners:
                    try:
                        listener(self._applied)
                    except Exception:
                        log.exception("commit listener failed")
            break
        else:
            for req in batch:
                req.error = StoreError("write failed: the LMDB map could not grow enough")

    def _grow_if_needed(self) -> None:
        info = self.env.info()
        used = (info["last_pgno"] + 1) * self.env.stat()["psize"]
        if used > GROW_AT * info["map_size"]:
            self._grow()

    def _grow(self) -> None:
        with self._resize.exclusive():
            size = self.env.info()["map_size"]
            self.env.set_mapsize(size * 2)
            log.info("LMDB map grown from %d to %d MiB", size >> 20, (size * 2) >> 20)

    def close(self) -> None:
        with self._mu:
            if self._closing:
                return
            self._closing = True  # no new writers; those queued finish first
            while self._writers:
                self._idle.wait()
        with self._resize.exclusive():
            self._closed = True  # no new readers
            self.env.close()
        self._lock.release()

    # ---- applying ops (local and remote alike) -----------------------------------------------

    def _apply(self, ctx: WriteContext, op: dict[str, Any]) -> dict[str, Any]:
        """Apply one op to the views; returns the op as it is to be logged."""
        kind = op["kind"]
        collection, _, verb = kind.partition(".")
        if kind == "bead.add":
            logged = self._apply_bead_add(ctx, op)
        elif kind == "bead.forget":
            self._forget(ctx, op["target"])
            logged = op
        elif kind == "embedding.put":
            logged = self._apply_embedding(ctx, op)
        elif collection in RECORD_DBS:
            self._apply_record(ctx, collection, verb, op)
            logged = op
        else:  # validated before we get here; a new kind needs a rule
            raise StoreError(f"no rule for op kind {kind!r}")
        self._applied.append(op)
        return logged

    def _bead_index_put(
        self,
        txn: Txn,
        bead_id: str,
        winner: list[Any],
        data: dict[str, Any],
        put: bool,
    ) -> None:
        hlc, replica, seq = winner
        key = time_key(data["ts"], hlc, replica, seq)
        sess = data.get("session_id")
        blob = data.get("blob")
        if put:
            txn.put(key, bead_id.encode(), db=self.dbs["bead_time"])
            if sess:
                txn.put(sess.encode() + b"\0" + key, bead_id.encode(), db=self.dbs["bead_sess"])
            if blob:
                txn.put(
                    blob["sha256"].encode() + b"\0" + bead_id.encode(), b"", db=self.dbs["blobrefs"]
                )
        else:
            txn.delete(key, db=self.dbs["bead_time"])
            if sess:
                txn.delete(sess.encode() + b"\0" + key, db=self.dbs["bead_sess"])
            if blob:
                txn.delete(
                    blob["sha256"].encode() + b"\0" + bead_id.encode(), db=self.dbs["blobrefs"]
                )

    def op_data(self, txn: Txn, replica: str, seq: int) -> dict[str, Any]:
        raw = txn.get(op_key(replica, seq), db=self.dbs["ops"])
        if raw is None:
            raise StoreError(f"op {replica}:{seq} missing from the log")
        return unpack(raw)["data"]  # type: ignore[no-any-return]

    def _apply_bead_add(self, ctx: WriteContext, op: dict[str, Any]) -> dict[str, Any]:
        txn, bead_id, data = ctx.txn, op["target"], op["data"]
        key = bead_id.encode()
        raw = txn.get(key, db=self.dbs["beads"])
        entry = None if raw is None else unpack(raw)
        if data.get("erased"):
            # An erased add means a forget exists upstream: forget now, converge when it comes.
            self._forget(ctx, bead_id)
            return op
        if entry == crdt.FORGOTTEN:
            return {**op, "data": erased_data(data)}
        add = [op["hlc"], op["replica"], op["seq"]]
        new = crdt.bead_add(entry, add)
        assert isinstance(new, list)
        old_winner = crdt.bead_winner(entry) if entry else None
        if crdt.bead_winner(new) != old_winner:
            if old_winner is not None:
                old_data = self.op_data(txn, old_winner[1], old_winner[2])
                self._bead_index_put(txn, bead_id, old_winner, old_data, put=False)
            self._bead_index_put(txn, bead_id, crdt.bead_winner(new), data, put=True)
        txn.put(key, pack(new), db=self.dbs["beads"])
        return op

    def _forget(self, ctx: WriteContext, bead_id: str) -> None:
        txn, key = ctx.txn, bead_id.encode()
        raw = txn.get(key, db=self.dbs["beads"])
        entry = None if raw is None else unpack(raw)
        if entry == crdt.FORGOTTEN:
            return
        blobs: set[str] = set()
        erased = [op_key(replica, seq) for _hlc, replica, seq in entry or ()]
        if erased:
            self.decoded.invalidate(erased)  # now, so no reader caches the content again...
            ctx.after_commit.append(lambda: self.decoded.invalidate(erased))  # ...nor before
        for i, (hlc, replica, seq) in enumerate(entry or ()):
            k = op_key(replica, seq)
            logged = unpack(txn.get(k, db=self.dbs["ops"]))
            data = logged["data"]
            if i == 0:  # the winner is the one in the indexes
                self._bead_index_put(txn, bead_id, [hlc, replica, seq], data, put=False)
            if data.get("blob"):
                blobs.add(data["blob"]["sha256"])
            logged["data"] = erased_data(data)
            txn.put(k, pack(logged), db=self.dbs["ops"])
        txn.put(key, pack(crdt.FORGOTTEN), db=self.dbs["beads"])
        # Vectors are derived from the content: they go too, from the views and the log.
        emb = self.dbs["emb"]
        prefix = f"bead\0{bead_id}\0".encode()
        with txn.cursor(db=emb) as cur:
            doomed = []
            if cur.set_range(prefix):
                for k, v in cur:
                    if not k.startswith(prefix):
                        break
                    doomed.append((k, unpack(v)))
        for k, rec in doomed:
            for d in rec.get("dots", ()):
                ok = op_key(*crdt.parse_dot(d))
                logged = unpack(txn.get(ok, db=self.dbs["ops"]))
                if not logged["data"].get("erased"):
                    logged["data"] = erased_embedding(logged["data"])
                    txn.put(ok, pack(logged), db=self.dbs["ops"])
            txn.put(k, pack({"dots": rec.get("dots", []), "erased": True}), db=emb)
        for sha in blobs:
            ctx.after_commit.append(functools.partial(self._delete_blob_if_unused, sha))

    def _delete_blob_if_unused(self, sha: str) -> None:
        """After a commit, in a fresh read: an append committed meanwhile may use the blob."""
        with self.blob_lock, self.read() as txn:
            if not self._blob_in_use(txn, sha):
                self.blobs.delete(sha)

    def ensure_blob(self, sha: str, data: bytes) -> None:
        """After an append's commit: its blob is there, even if a forget deleted it between
        the append's put and its commit."""
        with self.blob_lock:
            if not self.blobs.has(sha):
                self.blobs.put(data)

    def _blob_in_use(self, txn: Txn, sha: str) -> bool:
        prefix = sha.encode() + b"\0"
        with txn.cursor(db=self.dbs["blobrefs"]) as cur:
            return bool(cur.set_range(prefix)) and cur.key().startswith(prefix)

    def _apply_embedding(self, ctx: WriteContext, op: dict[str, Any]) -> dict[str, Any]:
        txn, data = ctx.txn, op["data"]
        kind, item = data["item_kind"], op["target"]
        if data.get("erased") and kind == "bead":
            self._forget(ctx, item)  # an erased vector means its bead was forgotten upstream
        key = emb_key(kind, item, data["model"])
        raw = txn.get(key, db=self.dbs["emb"])
        old = None if raw is None else unpack(raw)
        this = crdt.dot(op["replica"], op["seq"])
        dots = sorted({*(old or {}).get("dots", ()), this})  # every op, so forget finds them all
        forgotten = kind == "bead" and txn.get(item.encode(), db=self.dbs["beads"]) == pack(
            crdt.FORGOTTEN
        )
        if data.get("erased") or forgotten or (old is not None and old.get("erased")):
            txn.put(key, pack({"dots": dots, "erased": True}), db=self.dbs["emb"])
            return {**op, "data": erased_embedding(data)}
        stamp = (op["hlc"], data["checksum"], op["replica"], op["seq"])
        if old is None or crdt.embedding_wins(
            stamp, (old["hlc"], old["checksum"], *crdt.parse_dot(old["dot"]))
        ):
            rec = {k: v for k, v in data.items() if k != "item_kind"}
            rec.update(hlc=op["hlc"], dot=this, dots=dots)
        else:
            rec = {**old, "dots": dots}
        txn.put(key, pack(crdt.canonical(rec)), db=self.dbs["emb"])
        return op

    def _apply_record(
        self, ctx: WriteContext, collection: str, verb: str, op: dict[str, Any]
    ) -> None:
        txn, db = ctx.txn, self.dbs[RECORD_DBS[collection]]
        key = PERSONA_KEY if collection == "persona" else op["target"].encode()
        raw = txn.get(key, db=db)
        record = crdt.new_record() if raw is None else unpack(raw)
        data = op["data"]
        before = self._endpoints(record) if collection == "edge" else None
        if verb == "put":
            set_fields = dict(data.get("set", {}))
            traits = set_fields.pop("traits", None) or {}
            for name, value in traits.items():
                set_fields[f"traits/{name}"] = value
            crdt.apply_put(
                record,
                op_dot=crdt.dot(op["replica"], op["seq"]),
                hlc=op["hlc"],
                replica=op["replica"],
                set_fields=set_fields,
                add={k: v for k, v in data.get("add", {}).items() if v},
                drop={k: v for k, v in data.get("drop", {}).items() if v},
                supersede=data.get("supersede", ()),
            )
        else:
            crdt.apply_remove(record, data.get("remove", ()))
        if collection == "edge":
            after = self._endpoints(record)
            if after != before:
                self._update_adjacency(txn, op["target"], before, after)
        txn.put(key, pack(crdt.canonical(record)), db=db)

    @staticmethod
    def _endpoints(record: crdt.Record) -> tuple[str, str] | None:
        src, dst = crdt.field_value(record, "source"), crdt.field_value(record, "target")
        return None if src is None else (src, dst)

    def _update_adjacency(
        self,
        txn: Txn,
        edge_id: str,
        before: tuple[str, str] | None,
        after: tuple[str, str] | None,
    ) -> None:
        adj, eid = self.dbs["adj"], edge_id.encode()
        if before:
            txn.delete(before[0].encode() + b"\0" + eid, db=adj)
            txn.delete(before[1].encode() + b"\0" + eid, db=adj)
        if after:
            txn.put(after[1].encode() + b"\0" + eid, b"i", db=adj)
            txn.put(after[0].encode() + b"\0" + eid, b"o", db=adj)  # a self-loop reads as "out"

    # ---- remote ops -----------------------------------------------------------------------

    def apply_remote(self, ctx: WriteContext, ops: list[dict[str, Any]]) -> ApplyResult:
        """Apply validated remote ops: idempotent, any order; a gap waits in `pending`.

        Raises `DotConflict` (before writing anything) when a dot we hold arrives with other
        content, or when ops claim to be ours beyond what we wrote.
        """
        txn, result = ctx.txn, ApplyResult()
        ops_db, pending_db = self.dbs["ops"], self.dbs["pending"]
        vv = self.version_vector(txn)
        fresh: dict[tuple[str, int], dict[str, Any]] = {}
        erased_logged: list[dict[str, Any]] = []  # erased copies of ops we hold in full
        erased_pending: list[dict[str, Any]] = []
        for op in ops:  # check everything first: a conflict must leave state untouched
            replica, seq = op["replica"], op["seq"]
            k = op_key(replica, seq)
            logged = seq <= vv.get(replica, 0)
            if logged:
                stored = unpack(txn.get(k, db=ops_db))
            elif replica == self.replica_id:
                raise DotConflict(
                    f"op {replica}:{seq} claims to be ours but we wrote only up to {self._seq}: "
                    "another copy of this data dir is writing (cloned or restored?)"
                )
            else:
                raw = txn.get(k, db=pending_db)
                stored = fresh.get((replica, seq)) or (None if raw is None else unpack(raw))
            if stored is not None and not same_op(stored, op):
                raise DotConflict(
                    f"op {replica}:{seq} arrived with content different from the one we hold: "
                    f"two data dirs share replica id {replica} (cloned or restored?)"
                )
            if stored is None:
                fresh[(replica, seq)] = op
                continue
            result.duplicates += 1
            if op["data"].get("erased") and not stored["data"].get("erased"):
                # The copy we hold still has content a forget erased upstream: erase ours.
                if logged:
                    erased_logged.append(op)
                elif (replica, seq) in fresh:
                    fresh[(replica, seq)] = op
                else:
                    erased_pending.append(op)
        for op in erased_pending:
            txn.put(op_key(op["replica"], op["seq"]), pack(op), db=pending_db)
        for op in erased_logged:
            kind = op["data"].get("item_kind", "bead")
            if kind == "bead":  # an erased bead or bead vector: the bead was forgotten
                self._forget(ctx, op["target"])
        by_replica: dict[str, list[dict[str, Any]]] = {}
        for (replica, _seq), op in sorted(fresh.items()):
            by_replica.setdefault(replica, []).append(op)
        for replica, batch in by_replica.items():
            # Apply in seq order, taking the next op from this batch or from pending; what
            # is left after a gap waits in pending.
            seq, i = vv.get(replica, 0), 0
            while True:
                k = op_key(replica, seq + 1)
                if i < len(batch) and batch[i]["seq"] == seq + 1:
                    op, i = batch[i], i + 1
                else:
                    raw = txn.get(k, db=pending_db)
                    if raw is None:
                        break
                    op = unpack(raw)
                    txn.delete(k, db=pending_db)
                self.clock.observe(op["hlc"])
                txn.put(k, pack(self._apply(ctx, op)), db=ops_db)
                seq += 1
                result.applied += 1
            for op in batch[i:]:
                if op["seq"] > seq:
                    txn.put(op_key(replica, op["seq"]), pack(op), db=pending_db)
        result.pending = int(txn.stat(pending_db)["entries"])
        return result

    # ---- reads ----------------------------------------------------------------------------

    def version_vector(self, txn: Txn) -> dict[str, int]:
        """``{replica: highest contiguous seq applied}``, read off the op log."""
        return {replica: seq for replica, (seq, _) in self._last_ops(txn).items()}

    def _last_ops(self, txn: Txn) -> dict[str, tuple[int, int]]:
        """``{replica: (seq, hlc)}`` of each replica's last logged op: a few cursor moves
        per replica, jumping from one replica's range to the next."""
        out: dict[str, tuple[int, int]] = {}
        with txn.cursor(db=self.dbs["ops"]) as cur:
            found = cur.first()
            while found:
                prefix = cur.key()[:-8]  # replica + b"\0"
                found = cur.set_range(prefix[:-1] + b"\x01")  # the next replica's first op
                if found:
                    cur.prev()
                else:
                    cur.last()
                key, value = cur.item()
                out[prefix[:-1].decode()] = (int.from_bytes(key[-8:], "big"), unpack(value)["hlc"])
                if found:
                    found = cur.next()
        return out

    def _last_seq(self, txn: Txn, replica: str) -> int:
        """The highest seq of ``replica`` in the op log (0 if none)."""
        prefix = replica.encode() + b"\0"
        with txn.cursor(db=self.dbs["ops"]) as cur:
            found = cur.set_range(replica.encode() + b"\x01")
            if not (cur.prev() if found else cur.last()):
                return 0
            key = cur.key()
        if key.startswith(prefix) and len(key) == len(prefix) + 8:
            return int.from_bytes(key[-8:], "big")
        return 0

    def ops_since(self, txn: Txn, vv: dict[str, int]) -> Iterator[dict[str, Any]]:
        """The ops the holder of ``vv`` lacks, per replica in seq order."""
        ops_db = self.dbs["ops"]
        for replica, seq in sorted(self.version_vector(txn).items()):
            have = vv.get(replica, 0)
            if seq <= have:
                continue
            prefix = replica.encode() + b"\0"
            with txn.cursor(db=ops_db) as cur:
                if not cur.set_range(op_key(replica, have + 1)):
                    continue
                for k, v in cur:
                    if not k.startswith(prefix) or len(k) != len(prefix) + 8:
                        break
                    yield unpack(v)

    def state_digest(self, txn: Txn) -> str:
        """A hash of the materialized state: equal on replicas that applied the same ops."""
        return digest_of({name: txn.cursor(db=self.dbs[name]) for name in STATE_DBS})

    def sessions(self, txn: Txn) -> list[str]:
        """The distinct session ids of visible beads (a cursor jump per session)."""
        out = []
        with txn.cursor(db=self.dbs["bead_sess"]) as cur:
            found = cur.first()
            while found:
                session = cur.key().split(b"\0", 1)[0]
                out.append(session.decode())
                found = cur.set_range(session + b"\x01")
        return out

    def ops_range(self, txn: Txn, replica: str, after: int, limit: int) -> list[dict[str, Any]]:
        """Up to ``limit`` of ``replica``'s logged ops after seq ``after``, in seq order."""
        prefix, out = replica.encode() + b"\0", list[dict[str, Any]]()
        with txn.cursor(db=self.dbs["ops"]) as cur:
            if cur.set_range(op_key(replica, after + 1)):
                for k, v in cur:
                    if not k.startswith(prefix) or len(k) != len(prefix) + 8 or len(out) >= limit:
                        break
                    out.append(unpack(v))
        return out

    def dump(self, txn: Txn) -> dict[str, list[tuple[bytes, bytes]]]:
        """Every replicated database, raw: the op log and the views (not meta, not pending)."""
        return {name: list(txn.cursor(db=self.dbs[name])) for name in SNAPSHOT_DBS}

    def _notify_all(self) -> None:
        for listener in self.listeners:
            listener([])

    def is_empty(self) -> bool:
        with self.read() as txn:
            return not any(txn.stat(self.dbs[name])["entries"] for name in SNAPSHOT_DBS)

    def load(self, dbs: dict[str, list[tuple[bytes, bytes]]]) -> None:
        """Fill an empty store from `dump` output (a snapshot): far faster than replaying ops.

        Raises `StoreError` (writing nothing) if the store already holds ops or views.
        """

        def fill(ctx: WriteContext) -> None:
            for name in SNAPSHOT_DBS:
                if ctx.txn.stat(self.dbs[name])["entries"]:
                    raise StoreError("a snapshot loads only into an empty data dir")
            for name in SNAPSHOT_DBS:
                db = self.dbs[name]
                with ctx.txn.cursor(db=db) as cur:
                    cur.putmulti(dbs.get(name, ()), append=True)
            for _, hlc in self._last_ops(ctx.txn).values():
                self.clock.observe(hlc)
            ctx.after_commit.append(self._notify_all)

        self.write(fill)
