"""One LMDB environment (layout in `chrysalis.store.keys`), its single writer, and the meta.

Nothing is written per commit that can be derived: the version vector and the HLC come from
the op log at open (every named database a commit touches costs a page write and its share of
the fsync: measured +30 µs per commit each here for appends, +110 µs with random keys).

Writes are group-committed: callers queue a function; the caller at the front of the queue
runs every queued function in one write transaction, in its own thread, and each caller
returns only after that commit. What a function may do in the transaction is the write side's
business (`chrysalis.write.op_rules` applies ops, `chrysalis.write.writer` makes them); the
store only runs the transaction, grows the map, and tells its listeners what each commit applied.

Every write passes the free-space floor first (`min_free_bytes`): below it, `write` raises
`InsufficientStorage` before queuing, so a refused write is never acknowledged, reads go on,
and writes resume by themselves when space returns; a commit LMDB fails for want of space
(ENOSPC, or the EIO a full disk gives) raises the same.

The data dir's lock and identity live in `chrysalis.store.datadir`, its blobs in
`chrysalis.store.blobs`.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import hashlib
import itertools
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lmdb

from chrysalis.core.clock import HLC
from chrysalis.core.errors import (
    ChrysalisError,
    ClosedError,
    InsufficientStorage,
    StoreError,
    disk_full,
    out_of_space,
)
from chrysalis.core.events import Committed
from chrysalis.store import oplog
from chrysalis.store.atomic import sync_path
from chrysalis.store.blobs import BlobStore
from chrysalis.store.datadir import DataDirLock, init_meta
from chrysalis.store.decoded import DecodedCache
from chrysalis.store.keys import DB_NAMES, SNAPSHOT_DBS, STATE_DBS, op_key, pack, u64, unpack
from chrysalis.store.repack import COMPACT_DIR, compact

log = logging.getLogger(__name__)

# lmdb's stubs type every value as ``bytes | memoryview``; we never open ``buffers=True``
# transactions, so values are bytes. Transactions are typed loosely rather than cast at
# every get.
Txn = Any

MAX_BATCH = 1024
DEFAULT_MAP_SIZE = 1 << 30  # address space, not disk: the file grows as pages are used
GROW_AT = 0.75  # grow the map when it is this full, before a write can fail
GROUP_COMMIT_WAIT = 0.0002  # seconds a durable commit may wait for writers seen last time
DISK_CHECK_EVERY = 0.5  # seconds a free-space figure is trusted while far from the floor


_EIO_WORDS = os.strerror(errno.EIO).lower()


def _out_of_space(exc: BaseException) -> bool:
    """Whether LMDB failed for want of disk space: ENOSPC or EDQUOT, or the EIO a full disk
    gives. lmdb's C binding raises a bare `lmdb.Error` whose only argument is the message
    ("mdb_txn_commit: Input/output error"), so the message counts as much as the code."""
    if isinstance(exc, lmdb.DiskError) or out_of_space(exc):
        return True
    code = exc.args[1] if isinstance(exc, lmdb.Error) and len(exc.args) > 1 else None
    if isinstance(exc, OSError):
        code = exc.errno
    return code == errno.EIO or (isinstance(exc, lmdb.Error) and _EIO_WORDS in str(exc).lower())


def digest_of(dbs: Mapping[str, Iterable[tuple[bytes, bytes]]]) -> str:
    """The state digest of ``{name: key-ordered (key, value) pairs}`` for each of STATE_DBS."""
    d = StateDigest()
    for name in STATE_DBS:
        d.feed(name, dbs.get(name, ()))
    return d.hexdigest()


class StateDigest:
    """`digest_of`, fed a database's pairs at a time as a snapshot streams them (databases in
    the order of STATE_DBS, each in key order; names outside STATE_DBS are skipped)."""

    def __init__(self) -> None:
        self._h = hashlib.blake2b(digest_size=16)
        self._next = 0  # index in STATE_DBS of the first database not yet started

    def feed(self, name: str, pairs: Iterable[tuple[bytes, bytes]]) -> None:
        """Hash ``pairs`` of database ``name``; raises ValueError if ``name`` comes before a
        database already fed (the order the digest fixes)."""
        if name not in STATE_DBS:
            return
        at = STATE_DBS.index(name)
        if at < self._next - 1:
            raise ValueError(f"database {name!r} comes after {STATE_DBS[self._next - 1]!r}")
        self._start(at)
        update = self._h.update
        for k, v in pairs:
            update(u64(len(k)))
            update(k)
            update(u64(len(v)))
            update(v)

    def _start(self, upto: int) -> None:
        while self._next <= upto:
            self._h.update(STATE_DBS[self._next].encode() + b"\0")
            self._next += 1

    def hexdigest(self) -> str:
        self._start(len(STATE_DBS) - 1)
        return self._h.hexdigest()


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
    atomic: bool = False
    maintenance: bool = False  # run alone, outside any transaction (`Store.compact`)
    wake: threading.Event = field(default_factory=threading.Event)
    finished: bool = False
    result: Any = None
    error: BaseException | None = None


class _Rollback(Exception):
    """An atomic write function failed: its transaction is aborted, nothing is committed."""


class WriteContext:
    """What a write function sees: the open write transaction, the databases, and what the
    commit will tell (`committed`) and do once durable (`after_commit`)."""

    def __init__(self, store: Store, txn: Txn) -> None:
        self.store = store
        self.txn = txn
        self.dbs = store.dbs
        self.after_commit: list[Callable[[], None]] = []
        self.committed = Committed()

    def get(self, db: str, key: bytes) -> Any:
        raw = self.txn.get(key, db=self.dbs[db])
        return None if raw is None else unpack(raw)

    def put_meta(self, name: str, value: Any) -> None:
        """Set (or, with None, delete) a named meta value in this commit."""
        key = b"m:" + name.encode()
        if value is None:
            self.txn.delete(key, db=self.dbs["meta"])
        else:
            self.txn.put(key, pack(value), db=self.dbs["meta"])


class Store:
    """The LMDB environment, its single writer, and the meta."""

    def __init__(
        self,
        path: Path,
        *,
        sync: bool = True,
        map_size: int = DEFAULT_MAP_SIZE,
        replica_id: str | None = None,
        min_free_bytes: int = 0,
    ) -> None:
        self.path = path
        self.sync = sync
        self.min_free_bytes = min_free_bytes  # writes are refused below it (0: never)
        self._disk: tuple[float, int] | None = None  # (monotonic time, free bytes) last seen
        try:  # a new data dir is its user's alone (an existing one keeps its mode)
            path.mkdir(mode=0o700, parents=True)
            path.chmod(0o700)  # mkdir's mode passes through the umask
        except FileExistsError:
            pass
        self._lock = DataDirLock(path)
        # A compaction that a crash interrupted left a copy holding what it was erasing.
        shutil.rmtree(path / "lmdb" / COMPACT_DIR, ignore_errors=True)
        try:
            self.env = self._open_env(map_size)
        except lmdb.Error as exc:
            self._lock.release()
            raise StoreError(f"cannot open LMDB in {path}: {exc}") from exc
        self.dbs = {name: self.env.open_db(name.encode()) for name in DB_NAMES}
        self.blobs = BlobStore(path / "blobs", disk=path)
        self.decoded = DecodedCache()
        self.blob_lock = threading.Lock()
        self._resize = _ResizeLock()
        self._closed = False
        self._closing = False
        try:
            # LMDB maps at least the file; a compacted file over ``map_size`` fills its map
            # to the last page, and the first write below (every open writes) was MapFull.
            self._grow_if_needed()
            with self.env.begin(write=True) as txn:
                self.replica_id: str = init_meta(
                    txn, self.dbs["meta"], self.dbs["ops"], path, replica_id
                )
        except BaseException:
            self.env.close()
            self._lock.release()
            raise
        with self.read() as txn:
            last = oplog.last_ops(txn, self.dbs["ops"])
        self.seq = last.get(self.replica_id, (0, 0))[0]  # this replica's last op
        # Above every stamp in the log (monotonic across restarts, even if the wall clock
        # stepped back while we were down), each folded in through the drift clamp.
        self.clock = HLC()
        for _, hlc in last.values():
            self.clock.observe(hlc)
        self._mu = threading.Lock()
        self._idle = threading.Condition(self._mu)  # the queue emptied
        self._arrived = threading.Condition(self._mu)  # a writer joined the queue
        self._writers: collections.deque[_Request] = collections.deque()
        self._in_txn = threading.local()  # .ctx: the WriteContext a write function runs in
        self._expected = 1
        self.commits = 0
        self.listeners: list[Callable[[Committed], None]] = []

    def _open_env(self, map_size: int) -> Any:
        return lmdb.open(
            str(self.path / "lmdb"), subdir=True, map_size=map_size, max_dbs=len(DB_NAMES) + 2,
            sync=self.sync, metasync=self.sync, readahead=False, max_readers=256,
        )  # fmt: skip

    # ---- meta ------------------------------------------------------------------------------

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
                ctx.put_meta(name, value)

        self.write(write)

    # ---- free space --------------------------------------------------------------------------

    def free_bytes(self) -> int:
        """Bytes free to us on the disk holding the data dir, measured now."""
        st = os.statvfs(self.path)
        free = st.f_bavail * st.f_frsize
        self._disk = (time.monotonic(), free)
        return free

    def check_space(self) -> None:
        """Raise `InsufficientStorage` when the disk holding the data dir is below the floor.

        Cheap enough for every write: the figure is measured at most every
        `DISK_CHECK_EVERY` seconds, and before every write while it is within twice the floor.
        """
        floor = self.min_free_bytes
        if floor <= 0:
            return
        seen = self._disk
        if seen is None or seen[1] < 2 * floor or time.monotonic() - seen[0] > DISK_CHECK_EVERY:
            free = self.free_bytes()
        else:
            free = seen[1]
        if free < floor:
            raise self._disk_full(free)

    def _disk_full(self, free: int | None = None) -> InsufficientStorage:
        """`errors.disk_full` for the data dir (``free`` as the caller measured it)."""
        return disk_full(self.path, floor=self.min_free_bytes, free=free)

    # ---- transactions ------------------------------------------------------------------------

    @contextlib.contextmanager
    def read(self) -> Iterator[Txn]:
        with self._resize.shared():
            if self._closed:  # checked under the lock that close() takes to close the env
                raise ClosedError("memory is closed")
            with self.env.begin(buffers=False) as txn:
                yield txn

    def write(
        self, fn: Callable[[WriteContext], Any], *, atomic: bool = False, maintenance: bool = False
    ) -> Any:
        """Run ``fn`` in a write transaction shared with other callers; return after commit.

        ``fn`` may raise a `ChrysalisError` before its first write: that caller gets the
        error and the rest of the batch commits. Any other failure fails the whole batch.
        With ``atomic``, ``fn`` runs in a transaction of its own, and if it raises, nothing
        it wrote is committed: ``fn`` may then write as it checks (an import).

        Called from inside a write function (a verb that another verb calls), ``fn`` runs at
        once in the enclosing transaction and commits with it.

        Group commit without a writer thread (LevelDB's scheme): callers queue up; the one
        at the front leads, commits everything queued in one transaction in its own thread,
        then hands the lead to the next. A lone writer thus never waits for a thread switch,
        and writers arriving during a commit share the next one.

        Raises `InsufficientStorage` (nothing queued) when the disk is below the floor.
        """
        ctx = getattr(self._in_txn, "ctx", None)
        if ctx is not None:
            if maintenance:
                raise StoreError("compaction cannot run inside a write transaction")
            return fn(ctx)
        self.check_space()
        request = _Request(fn, atomic, maintenance)
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

    def compact(self, before_swap: Callable[[Txn], Any] | None = None) -> Any:
        """Replace ``data.mdb`` by a compacting copy (`chrysalis.store.repack`); returns what
        ``before_swap`` returned for the state the copy holds."""
        return compact(self, before_swap)

    def failed(self, exc: BaseException) -> ChrysalisError:
        """The error to raise for a failure of LMDB or the disk outside a transaction."""
        if _out_of_space(exc):
            return self._disk_full()
        return exc if isinstance(exc, ChrysalisError) else StoreError(f"LMDB failed: {exc!r}")

    def swap_file(self, new: Path) -> None:
        """Close LMDB, rename ``new`` over ``data.mdb`` and open it again, while no reader
        or writer is inside (call it from a ``maintenance`` write). The handles in ``dbs``
        are replaced in place: look them up inside a transaction, never keep one across."""
        with self._resize.exclusive():
            size = self.env.info()["map_size"]
            self.env.close()
            try:
                os.replace(new, self.path / "lmdb" / "data.mdb")
                sync_path(self.path / "lmdb")
            finally:
                self.env = self._open_env(size)
                self.dbs.update({n: self.env.open_db(n.encode()) for n in DB_NAMES})

    def _take_batch(self) -> list[_Request]:
        """The leader's batch: everything queued up to an atomic write, which commits alone
        (called with the mutex held).

        When the last batch had more writers than are queued now, the others are probably on
        their way (validating); a durable commit costs far more than this short wait.
        """
        if self._writers[0].atomic or self._writers[0].maintenance:
            return [self._writers[0]]
        if self.sync and len(self._writers) < self._expected:
            deadline = time.monotonic() + GROUP_COMMIT_WAIT
            while len(self._writers) < self._expected:
                left = deadline - time.monotonic()
                if left <= 0 or not self._arrived.wait(left):
                    break
        batch = list(itertools.takewhile(
            lambda r: not (r.atomic or r.maintenance), itertools.islice(self._writers, MAX_BATCH)
        ))  # fmt: skip
        self._expected = len(batch)
        return batch

    def _commit_batch(self, batch: list[_Request]) -> None:
        if batch[0].maintenance:
            req = batch[0]
            try:
                req.result = req.fn(None)  # type: ignore[arg-type]
            except BaseException as exc:
                if isinstance(exc, ChrysalisError):
                    req.error = exc
                elif _out_of_space(exc):  # a compacting copy that did not fit
                    req.error = self._disk_full()
                else:
                    req.error = StoreError(repr(exc))
            return
        for _attempt in range(16):
            self._grow_if_needed()
            committed_seq, after = self.seq, []
            committed = Committed()
            try:
                with self.env.begin(write=True) as txn:
                    ctx = WriteContext(self, txn)
                    self._in_txn.ctx = ctx
                    try:
                        for req in batch:
                            req.result, req.error = None, None
                            try:
                                req.result = req.fn(ctx)
                            except ChrysalisError as exc:
                                req.error = exc
                                if req.atomic:
                                    raise _Rollback from None
                    finally:
                        self._in_txn.ctx = None
                    after, committed = ctx.after_commit, ctx.committed
            except _Rollback:
                self.seq = committed_seq  # the transaction was aborted; the caller has its error
                break
            except lmdb.MapFullError:
                self.seq = committed_seq
                self._grow()
                continue
            except BaseException as exc:
                self.seq = committed_seq
                error: ChrysalisError
                if isinstance(exc, ChrysalisError):
                    error = exc
                elif _out_of_space(exc):
                    log.warning("write transaction failed for want of disk space: %s", exc)
                    error = self._disk_full()
                else:
                    error = StoreError(f"write failed: {exc!r}")
                if not isinstance(error, InsufficientStorage):
                    log.exception("write transaction failed")
                for req in batch:
                    req.error = error
                break
            self.commits += 1
            for action in after:
                try:
                    action()
                except Exception:
                    log.exception("post-commit action failed")
            if committed.ops:
                for listener in self.listeners:
                    try:
                        listener(committed)
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

    # ---- blobs that live beads use ---------------------------------------------------------

    def delete_blob_if_unused(self, sha: str) -> None:
        """After a commit, in a fresh read: an append committed meanwhile may use the blob."""
        with self.blob_lock, self.read() as txn:
            if not self.blob_in_use(txn, sha):
                self.blobs.delete(sha)

    def ensure_blob(self, sha: str, data: bytes) -> None:
        """After an append's commit: its blob is there, even if a forget deleted it between
        the append's put and its commit."""
        with self.blob_lock:
            if not self.blobs.has(sha):
                self.blobs.put(data)

    def blob_in_use(self, txn: Txn, sha: str) -> bool:
        prefix = sha.encode() + b"\0"
        with txn.cursor(db=self.dbs["blobrefs"]) as cur:
            return bool(cur.set_range(prefix)) and cur.key().startswith(prefix)

    # ---- the log and the whole state -----------------------------------------------------------

    def op_data(self, txn: Txn, replica: str, seq: int) -> dict[str, Any]:
        raw = txn.get(op_key(replica, seq), db=self.dbs["ops"])
        if raw is None:
            raise StoreError(f"op {replica}:{seq} missing from the log")
        return unpack(raw)["data"]  # type: ignore[no-any-return]

    def version_vector(self, txn: Txn) -> dict[str, int]:
        """``{replica: highest contiguous seq applied}``, read off the op log."""
        return oplog.version_vector(txn, self.dbs["ops"])

    def last_seq(self, txn: Txn, replica: str) -> int:
        """The highest seq of ``replica`` in the op log (0 if none)."""
        return oplog.last_seq(txn, self.dbs["ops"], replica)

    def ops_since(self, txn: Txn, vv: dict[str, int]) -> Iterator[dict[str, Any]]:
        """The ops the holder of ``vv`` lacks, per replica in seq order."""
        return oplog.ops_since(txn, self.dbs["ops"], vv)

    def ops_range(self, txn: Txn, replica: str, after: int, limit: int) -> list[dict[str, Any]]:
        """Up to ``limit`` of ``replica``'s logged ops after seq ``after``, in seq order."""
        return oplog.ops_range(txn, self.dbs["ops"], replica, after, limit)

    def state_digest(self, txn: Txn) -> str:
        """A hash of the materialized state: equal on replicas that applied the same ops."""
        return digest_of({name: txn.cursor(db=self.dbs[name]) for name in STATE_DBS})

    def dump(self, txn: Txn) -> dict[str, list[tuple[bytes, bytes]]]:
        """Every replicated database, raw: the op log and the views (not meta, not pending)."""
        return {name: list(txn.cursor(db=self.dbs[name])) for name in SNAPSHOT_DBS}

    def is_empty(self) -> bool:
        with self.read() as txn:
            return not any(txn.stat(self.dbs[name])["entries"] for name in SNAPSHOT_DBS)

    def load(self, dbs: dict[str, list[tuple[bytes, bytes]]]) -> None:
        """Fill an empty store from `dump` output (a snapshot): far faster than replaying ops.

        Raises `StoreError` (writing nothing) if the store already holds ops or views.
        """
        self.load_parts(lambda: ((n, dbs.get(n, ())) for n in SNAPSHOT_DBS))

    def load_parts(
        self, parts: Callable[[], Iterable[tuple[str, Iterable[tuple[bytes, bytes]]]]], *,
        reserve: int = 0,
    ) -> None:  # fmt: skip
        """Fill an empty store from a stream of ``(database, key-ordered pairs)``, databases in
        SNAPSHOT_DBS order (one may come in several slices), all in ONE write transaction: a
        failure, or a crash, leaves the store empty. ``parts()`` is called for a fresh stream
        (again if the map had to grow mid-way); it may raise a `ChrysalisError` (a part that
        fails to verify) to abort. ``reserve``: the bytes the pairs hold, so the map is grown
        once up front instead of mid-way.

        Raises `StoreError` (writing nothing) if the store already holds ops or views, or if
        a slice's keys are not in order after what came before them.
        """
        self._reserve(reserve)

        def fill(ctx: WriteContext) -> None:
            for name in SNAPSHOT_DBS:
                if ctx.txn.stat(ctx.dbs[name])["entries"]:
                    raise StoreError("a snapshot loads only into an empty data dir")
            for name, pairs in parts():
                if name not in SNAPSHOT_DBS:
                    raise StoreError(f"a snapshot holds no database {name!r}")
                with ctx.txn.cursor(db=ctx.dbs[name]) as cur:
                    given, added = cur.putmulti(pairs, append=True)
                if given != added:  # append refuses a key not after the last one
                    raise StoreError(f"snapshot database {name!r}: keys out of order")
            for _, hlc in oplog.last_ops(ctx.txn, ctx.dbs["ops"]).values():
                self.clock.observe(hlc)
            ctx.after_commit.append(self._notify_all)

        self.write(fill, atomic=True)

    def _reserve(self, extra: int) -> None:
        """Grow the map now so that ``extra`` more bytes (B-tree overhead included) fit;
        `StoreError` (the map untouched) if the disk has not ``extra`` bytes free: the size
        comes from a snapshot's manifest, and a map grown to a forged one fails in LMDB."""
        if extra <= 0:
            return
        free = self.free_bytes()
        if extra > free:
            raise StoreError(f"a snapshot of {extra:,} bytes does not fit: {free:,} bytes free")
        info = self.env.info()
        used = (info["last_pgno"] + 1) * self.env.stat()["psize"]
        want = int((used + 2 * extra) / GROW_AT)
        if want > info["map_size"]:
            with self._resize.exclusive():
                self.env.set_mapsize(want)
            log.info("LMDB map grown to %d MiB for a snapshot", want >> 20)

    def _notify_all(self) -> None:
        everything = Committed()
        for listener in self.listeners:
            listener(everything)
