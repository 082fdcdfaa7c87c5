"""The local scrub: after a forget commits, no file of the data dir keeps the content.

What a forget erases in LMDB (`chrysalis.write.erase`) is gone from every live page at once, but
LMDB never overwrites a page in place: the old value stays on a freed page until the page is
reused, which may be never. The keyword index rewrites the segments that held deleted text
(their files go), the vector index is rewritten without the forgotten vectors, and blob files
are unlinked, each as it takes the forget in (`chrysalis.search.indexer`, `chrysalis.store.blobs`);
what is left is LMDB's file.

So a `DataDirScrubber` watches commits that erased content (each counts in the meta, durably with
the erasure) and, ``delay`` seconds after the first (forgets come in bursts: one scrub for all),
lets the indexes catch up and then replaces ``data.mdb`` by a compacting copy
(`Store.compact`): 0.14 s for 100,000 beads on this machine (docs/benchmarks.md), during which
writes wait and reads go on. It records what the scrub covered (``scrubbed``: the erasure
count and the version vector it reached), which receipts and heartbeats report.

A memory whose graph key is its data dir's own (no remote, no sync key) could test a guessed
name against the id a retracted entity left behind, with that key: a retraction that removed
an entity owes a new key (`Keys`, `KnowledgeWriter.rotate`), made just before the compaction,
so the old key's value is on no page of the new file. Forgets in one burst share one.

A crash between a forget and its scrub leaves the count ahead of ``scrubbed``: the scrub runs
at the next open. Closing a memory with a scrub due runs it before closing.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from chrysalis.core import crdt
from chrysalis.core.checks import check_id
from chrysalis.core.errors import ChrysalisError, Conflict, NotFound
from chrysalis.core.events import Committed, item_key
from chrysalis.forget import receipt
from chrysalis.store.env import Store, Txn
from chrysalis.store.keys import unpack
from chrysalis.store.oplog import version_vector
from chrysalis.write.erase import ERASURES_KEY, forget_record

if TYPE_CHECKING:
    from chrysalis.read.reader import Reader
    from chrysalis.search import Indexer

Place = receipt.Place

log = logging.getLogger(__name__)

SCRUBBED = "scrubbed"  # meta name: what the last scrub covered
INDEX_WAIT = 10.0  # seconds a scrub waits for the indexes to take the forget in


class Indexes(Protocol):
    def settle_forgets(self, timeout: float) -> bool: ...


class Keys(Protocol):
    """The graph key's rotation (`chrysalis.write.knowledge.KnowledgeWriter`)."""

    def rotation_due(self) -> bool: ...
    def rotate(self) -> Any: ...


class Worker(Protocol):
    """The knowledge worker, as a receipt reads it (`chrysalis.extract.worker`)."""

    last_error: str | None


class Held(Protocol):
    """What a receipt reads of a memory (`chrysalis.memory.Memory`)."""

    @property
    def replica_id(self) -> str: ...
    @property
    def store(self) -> Store: ...
    @property
    def indexer(self) -> Indexer: ...

    @property
    def knowledge(self) -> Worker: ...

    reader: Reader
    scrubber: DataDirScrubber


class DataDirScrubber:
    """Compacts LMDB after erasures; one per memory."""

    def __init__(
        self,
        store: Store,
        indexes: Callable[[], Indexes | None],
        *,
        delay: float = 5.0,
        keys: Keys | None = None,
    ) -> None:
        self.store = store
        self.indexes = indexes
        self.keys = keys
        self.delay = delay
        self.last_error: str | None = None
        self._kick = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()  # one scrub at a time
        self._starting = threading.Lock()
        # told what each finished scrub covered (the daemon pushes the report at once: forget
        # receipts elsewhere wait for it)
        self.listeners: list[Callable[[dict[str, Any]], None]] = []
        store.listeners.append(self._on_commit)
        if self.due():
            self._start()

    # ---- state -----------------------------------------------------------------------------

    def erasures(self) -> int:
        with self.store.read() as txn:
            return _erasures(txn, self.store)

    def scrubbed(self) -> dict[str, Any]:
        """What the last scrub covered: ``erasure`` count, ``vv``, ``at``, ``seconds``."""
        return self.store.get_meta(SCRUBBED) or {"erasure": 0, "vv": {}}

    def rotation_due(self) -> bool:
        """A retraction owes the graph key's rotation, which the next scrub makes."""
        return self.keys is not None and self.keys.rotation_due()

    def due(self) -> bool:
        return self.erasures() > int(self.scrubbed()["erasure"]) or self.rotation_due()

    def status(self) -> dict[str, Any]:
        done = self.scrubbed()
        return {
            "due": self.erasures() > int(done["erasure"]) or self.rotation_due(),
            "last_at": done.get("at"),
            "last_seconds": done.get("seconds"),
            "error": self.last_error,
        }

    # ---- running ---------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        """Scrub now: indexes first (bounded wait), then LMDB. Returns the new ``scrubbed``."""
        with self._lock:
            started = time.monotonic()
            indexes = self.indexes()
            if indexes is not None and not indexes.settle_forgets(INDEX_WAIT):
                log.warning("scrub: the indexes are behind; they drop forgotten text later")
            if self.keys is not None and self.keys.rotation_due():
                self.keys.rotate()  # before the copy: the old key is on no page it holds

            def covered(txn: Txn) -> dict[str, Any]:
                return {
                    "erasure": _erasures(txn, self.store),
                    "vv": version_vector(txn, self.store.dbs["ops"]),
                }

            done = self.store.compact(covered)
            done["at"] = time.time()
            done["seconds"] = round(time.monotonic() - started, 4)
            self.store.put_meta(SCRUBBED, done)
            self.last_error = None
            log.info("scrub: LMDB compacted in %.3f s", done["seconds"])
        for listener in list(self.listeners):
            try:
                listener(dict(done))
            except Exception:  # a listener's failure is not the scrub's
                log.exception("scrub: a listener failed")
        return dict(done)

    def close(self) -> None:
        """Stop the worker; scrub first if one is due (the memory is closing)."""
        self._stop.set()
        self._kick.set()
        if self._thread is not None:
            self._thread.join(timeout=60)
        if self._on_commit in self.store.listeners:
            self.store.listeners.remove(self._on_commit)
        try:
            if self.due():
                self.run()
        except ChrysalisError as exc:
            log.warning("scrub at close failed: %s; it runs at the next open", exc)

    def _on_commit(self, committed: Committed) -> None:
        if committed.erasure:
            self._start()

    def _start(self) -> None:
        with self._starting:
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(
                    target=self._loop, name="chrysalis-scrub", daemon=True
                )
                self._thread.start()
        self._kick.set()

    def _loop(self) -> None:
        backoff = self.delay
        while not self._stop.is_set():
            self._kick.wait()
            self._kick.clear()
            if self._stop.wait(self.delay):  # let a burst of forgets gather
                return
            try:
                if self.due():
                    self.run()
                backoff = self.delay
            except ChrysalisError as exc:
                self.last_error = str(exc)
                log.warning("scrub failed: %s; retrying in %.0f s", exc, backoff)
                if self._stop.wait(backoff):
                    return
                backoff = min(backoff * 2, 600)
                self._kick.set()


def _erasures(txn: Txn, store: Store) -> int:
    raw = txn.get(ERASURES_KEY, db=store.dbs["meta"])
    return 0 if raw is None else int(unpack(raw))


# ---- this data dir's places in a forget receipt (chrysalis.forget.receipt) ---------------


def record_of(memory: Held, bead_id: str) -> dict[str, Any]:
    """What this replica erased of ``bead_id``. Raises NotFound (never seen here) or
    Conflict (it is live); InvalidInput for a malformed id."""
    check_id(bead_id, "bead")
    state = memory.reader.bead_states([bead_id])[bead_id]
    if state == "absent":
        raise NotFound(f"bead {bead_id} is unknown here: nothing to report")
    if state == "live":
        raise Conflict(f"bead {bead_id} is not forgotten: forget it first")
    store = memory.store
    with store.read() as txn:
        record = forget_record(txn, store.dbs, bead_id)
    # Forgotten before this replica joined (a snapshot brought only the tombstone).
    return record or {"erasure": 0, "at": None, "adds": [], "vectors": [], "blobs": []}


def local_places(memory: Held, bead_id: str, record: Mapping[str, Any]) -> list[Place]:
    """This replica's files."""
    me = f"{memory.replica_id} (here)"
    scrub = memory.scrubber
    done = scrub.scrubbed()
    places = []
    if scrub.rotation_due():
        why = (
            "the key its entities' ids were made with is replaced and erased at the scrub, "
            f"due within {scrub.delay:.0f} s"
        )
        if scrub.last_error:
            why += f" (the last one failed: {scrub.last_error})"
        places.append(Place(place="local", name=f"{me}: lmdb", state="pending", why=why))
    elif int(record.get("erasure", 0)) <= int(done["erasure"]):
        why = "erased from the op log and views"
        if done.get("at"):
            why += f"; the file was compacted {receipt.ago(done['at'])}"
        places.append(Place(place="local", name=f"{me}: lmdb", state="gone", why=why))
    else:
        why = (
            "erased from every live page; pages LMDB freed still hold it until the scrub, "
            f"due within {scrub.delay:.0f} s"
        )
        if scrub.last_error:
            why += f" (the last one failed: {scrub.last_error})"
        places.append(Place(place="local", name=f"{me}: lmdb", state="pending", why=why))
    key = item_key("bead", bead_id)
    indexer = memory.indexer
    if indexer.keyword.has(key):
        places.append(
            Place(place="local", name=f"{me}: keyword index", state="pending",
                  why="the indexer has not taken the forget in yet")
        )  # fmt: skip
    else:
        places.append(
            Place(place="local", name=f"{me}: keyword index", state="gone",
                  why="deleted, the segments that held it rewritten and their files removed")
        )  # fmt: skip
    indexes = indexer.vector_indexes()  # two while the embedder changes
    for vectors in indexes:
        if vectors.has(key):
            state: receipt.State = "pending"
            why = "the indexer has not taken the forget in yet"
        elif vectors.removed:
            state, why = "pending", "removed; the index file is rewritten at its next save"
        else:
            state, why = "gone", "removed, and the index file rewritten without it"
        name = f"{me}: vector index" + (f" ({vectors.model})" if len(indexes) > 1 else "")
        places.append(Place(place="local", name=name, state=state, why=why))
    for sha in record.get("blobs", ()):
        name = f"{me}: blobs/{sha[:12]}…"
        if not memory.store.blobs.has(sha):
            places.append(Place(place="local", name=name, state="gone", why="file deleted"))
        elif users := memory.reader.blob_users(sha):
            why = f"the same bytes are the content of live bead {users[0]}"
            places.append(Place(place="local", name=name, state="in use", why=why))
        else:
            why = "the file is deleted after the commit; it was not (see the daemon log)"
            places.append(Place(place="local", name=name, state="pending", why=why))
    citing = citing_items(memory.reader, bead_id)
    places.append(receipt.knowledge_place(me, citing, memory.knowledge.last_error))
    return places


def citing_items(reader: Reader, bead_id: str) -> list[str]:
    """``node:<id>`` / ``edge:<id>`` / ``summary:<id>`` of the present nodes and edges whose
    evidence names ``bead_id`` (a scan of the records: receipts are rare) and of the live
    summaries made from it."""
    return [
        f"{collection}:{item_id}"
        for collection in ("node", "edge")
        for item_id, record in reader.records(collection)
        if crdt.is_present(record) and bead_id in crdt.set_values(record, "evidence")
    ] + [f"summary:{item_id}" for item_id in reader.summaries_citing(bead_id)]
