"""The indexing worker: keeps the keyword and vector indexes caught up with the op log, and
makes the vectors nobody has made yet, off the write path.

Three cursors, each a version vector over the op log, each persisted with what it describes:

    keyword   in the tantivy index, with the rows        (all item kinds)
    embed     in LMDB meta ``embed:<model>``             which items this replica has embedded
    vectors   in the FAISS meta file, with the index     (embedding ops of the model)

An op only says *which* item changed; the worker reads the item's current state, so the order
ops arrive in does not matter. Vectors made here are embedding ops: they replicate, and a
laptop without the model still searches with them.

While the embedder changes (`chrysalis.search.switch`), the worker keeps a second pair of
embed cursor and vector index, the previous model's, which recall searches until the new
model's cover everything.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from chrysalis.core import vector_bytes
from chrysalis.core.backoff import Backoff
from chrysalis.core.clock import vv_dominates, vv_merge
from chrysalis.core.errors import ClosedError, EmbedderUnavailable, InsufficientStorage
from chrysalis.core.events import Change, Committed, events_of, item_key, keys_changed, split_key
from chrysalis.read.reader import Reader
from chrysalis.search import novelty, switch
from chrysalis.search.embed import Embedder
from chrysalis.search.keyword import KeywordIndex, remove_legacy
from chrysalis.search.vectors import VectorIndex

log = logging.getLogger(__name__)

BATCH_OPS = 2_000
EMBED_BATCH = 128
MAX_EMBED_CHARS = 8_000  # embedding models read a few hundred tokens; more only costs time
SAVE_EVERY_S = 300.0
SAVE_AFTER_CHANGES = 20_000


class IndexWrites(Protocol):
    """The two writes the indexer makes (`chrysalis.write.writer.Writer` has both)."""

    def put_embeddings(
        self, rows: Sequence[Mapping[str, Any]], *, skip_missing: bool = False
    ) -> list[Any]: ...

    def put_meta(self, name: str, value: Any) -> None: ...


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class Indexer:
    """Owns the derived indexes of one memory and the thread that keeps them current.

    Reads through the read side; writes only vectors and its embed cursor (`IndexWrites`).
    """

    def __init__(
        self,
        reader: Reader,
        writes: IndexWrites,
        embedder: Embedder | None,
        directory: Path,
        *,
        exact_limit: int = 50_000,
    ) -> None:
        self.reader = reader
        self.writes = writes
        self.embedder = embedder
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.exact_limit = exact_limit
        store_vv = reader.version_vector()
        remove_legacy(directory)
        self.keyword, _ = KeywordIndex.open_or_reset(directory / "keyword.tantivy")
        if not vv_dominates(store_vv, self.keyword.watermark()):
            # The index is ahead of the log (an older LMDB restored under a newer index, or
            # writes lost in a crash): its seqs will be reused by other ops. Start afresh.
            log.warning("keyword index is ahead of the op log: rebuilding it")
            self.keyword.close()
            self.keyword = KeywordIndex.reset(directory / "keyword.tantivy")
        self.vectors: VectorIndex | None = None
        self.last_error: str | None = None
        self.errors = 0
        self.skipped: set[str] = set()  # items the embedder refused while others passed
        self._progress = threading.Condition()
        self._keyword_lock = threading.Lock()
        self._wake = threading.Event()
        self._halt = threading.Event()
        self._stop = False
        self._embed_backoff = Backoff(first=1.0, cap=60.0)  # while the embedder is down
        self._disk_full = False  # paused by a full disk (logged once, not every retry)
        self._saved_at = time.monotonic()
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="chrysalis-search")
        # The model recall searches while this one takes over (`switch`): its embedder and
        # index, or None; ``switch_note`` says why recall cannot search it when it cannot.
        self.previous: tuple[Embedder, VectorIndex] | None = None
        self.switch_note: str | None = None
        self._previous_backoff = Backoff(first=1.0, cap=60.0)
        self.serving_record: Any = reader.get_meta(switch.SERVING)
        if embedder is not None:
            self._check_cursor(embedder, store_vv)
            if embedder.dims:
                self.vectors = self._load_vectors(embedder)
            rec = self.serving_record
            if isinstance(rec, dict) and rec.get("model") != embedder.model:
                self._open_previous(rec, store_vv)
            keep = {embedder.model} | ({self.previous[0].model} if self.previous else set())
            for model in switch.remove_other_indexes(directory / "faiss", keep):
                log.info("removed the vector index of %s: no longer searched", model)
        reader.on_commit(self._on_commit)
        self._thread = threading.Thread(target=self._run, name="chrysalis-indexer", daemon=True)
        self._thread.start()

    @property
    def embed_failures(self) -> int:
        """Consecutive failures of the embedder: it is down, not one bad text."""
        return self._embed_backoff.failures

    def _check_cursor(self, embedder: Embedder, store_vv: dict[str, int]) -> None:
        cursor = f"embed:{embedder.model}"
        if not vv_dominates(store_vv, self.reader.get_meta(cursor) or {}):
            self.writes.put_meta(cursor, {})  # re-check everything; stored hashes skip most

    def _load_vectors(self, embedder: Embedder) -> VectorIndex:
        vectors = VectorIndex(
            self.directory / "faiss", embedder.model, embedder.dims,
            exact_limit=self.exact_limit, stored=lambda keys: self._vectors_of(embedder, keys),
        )  # fmt: skip
        if not vectors.load() or not vv_dominates(self.reader.version_vector(), vectors.watermark):
            self._rebuild_vectors(embedder, vectors)
        return vectors

    def _open_previous(self, rec: dict[str, Any], store_vv: dict[str, int]) -> None:
        """Start (or resume) a switch from the recorded model: recall searches its vectors,
        with its embedder, until the configured one's cover everything."""
        assert self.embedder is not None
        old, why = switch.reopen(rec)
        if old is None:
            self.switch_note = (
                f"emb: switching embedder from {rec.get('model')} to {self.embedder.model}, "
                f"but {rec.get('model')} cannot embed queries here ({why}): searching the "
                f"vectors of {self.embedder.model} made so far"
            )
            log.warning("%s", self.switch_note)
            return
        self._check_cursor(old, store_vv)
        self.previous = (old, self._load_vectors(old))
        log.info(
            "switching embedder from %s to %s: recall searches %s until every item has a "
            "vector of %s", old.model, self.embedder.model, old.model, self.embedder.model,
        )  # fmt: skip

    def serving(self) -> tuple[Embedder | None, VectorIndex | None, str | None]:
        """What recall searches: the embedder for the query, its vector index (None until
        the embedder's dims are known), and a note for the answer (or None)."""
        previous = self.previous
        if previous is not None:
            return previous[0], previous[1], None
        return self.embedder, self.vectors, self.switch_note

    def vector_indexes(self) -> list[VectorIndex]:
        """Every vector index kept up to date: the configured model's, and during a switch
        the previous one's (both hold vectors a forget must take out)."""
        previous = self.previous
        out = [] if previous is None else [previous[1]]
        return out + ([] if self.vectors is None else [self.vectors])

    # ---- the worker ----------------------------------------------------------------------

    def _on_commit(self, committed: Committed) -> None:
        self._wake.set()

    def _run(self) -> None:
        while not self._stop:
            self._wake.wait(timeout=1.0)
            self._wake.clear()
            if self._stop:
                break
            try:
                while not self._stop and self.step():
                    pass
                if self._disk_full:
                    self._disk_full = False
                    log.info("indexing resumed: the disk has room again")
            except ClosedError:
                break
            except InsufficientStorage as exc:  # a pause: vectors wait for space, nothing lost
                self.last_error = exc.message
                if not self._disk_full:
                    self._disk_full = True
                    log.warning("indexing paused until the disk has room: %s", exc.message)
                self._halt.wait(5.0)
            except Exception as exc:  # the worker must outlive any one failure
                self.errors += 1
                self.last_error = str(exc)
                log.warning("indexing failed, retrying in 5 s: %s", exc)
                self._halt.wait(5.0)  # not cut short by commits or waiters
            with self._progress:
                self._progress.notify_all()
            self._maybe_save()

    def step(self) -> bool:
        """Do one batch of whatever is behind; True if there may be more.

        Keyword search is caught up first and between embedding chunks (it takes
        milliseconds; embedding may take seconds). Embedding waits out its backoff after a
        failure; vectors that arrived from other replicas are indexed meanwhile.
        """
        more = self._catch_up_keyword()
        if not more:
            self.keyword.commit_due()  # rows the keyword index holds back for a batch
        previous = self.previous
        if previous is not None and self._previous_backoff.ready(time.monotonic()):
            # New writes first, with the model recall searches: a switch changes no answer.
            try:
                more = self._embed_missing(previous[0]) or more
                self._previous_backoff.success()
            except EmbedderUnavailable as exc:
                self.errors += 1
                self.last_error = str(exc)
                delay = self._previous_backoff.failure(time.monotonic())
                log.warning("embedding with %s paused %.0f s: %s", previous[0].model, delay, exc)
        if self.embedder is not None and self._embed_backoff.ready(time.monotonic()):
            try:
                if self.vectors is None:  # dims unknown until the embedder first answers
                    self.embedder.embed_query("dimension probe")
                    self.vectors = self._load_vectors(self.embedder)
                more = self._embed_missing(self.embedder) or more
                self._embed_backoff.success()
            except EmbedderUnavailable as exc:
                self.errors += 1
                self.last_error = str(exc)
                delay = self._embed_backoff.failure(time.monotonic())
                log.warning("embedding paused %.0f s: %s", delay, exc)
        if previous is not None:
            more = self._catch_up_vectors(*previous) or more
        if self.embedder is not None and self.vectors is not None:
            more = self._catch_up_vectors(self.embedder, self.vectors) or more
            self._maybe_finish_switch(self.embedder, self.vectors)
        with self._progress:
            self._progress.notify_all()
        return more and not self._stop

    def _ops_after(self, watermark: dict[str, int]) -> list[dict[str, Any]]:
        return self.reader.ops_since(watermark, limit=BATCH_OPS)

    @staticmethod
    def _advance(watermark: dict[str, int], ops: list[dict[str, Any]]) -> dict[str, int]:
        return vv_merge(watermark, {op["replica"]: op["seq"] for op in ops})

    def _catch_up_keyword(self) -> bool:
        with self._keyword_lock:  # the worker and a waiting retrieve take turns
            try:
                return self._catch_up_keyword_locked()
            except (InsufficientStorage, ValueError, RuntimeError, OSError):
                # The index started over from its last commit with a new writer (its old one
                # may have died in an earlier full-disk moment, unseen until now): once more
                # from there; a disk still full fails again and says so.
                return self._catch_up_keyword_locked()

    def _catch_up_keyword_locked(self) -> bool:
        watermark = self.keyword.watermark()
        ops = self._ops_after(watermark)
        if not ops:
            return False
        texts, _ = keys_changed(ops)
        upserts, deletes = [], []
        for key in sorted(texts):
            found = self.reader.item_text(key)
            if found is None:
                deletes.append(key)
            else:
                upserts.append((key, found[0], found[1]))
        self.keyword.apply(upserts, deletes, self._advance(watermark, ops))
        return len(ops) >= BATCH_OPS

    def _maybe_finish_switch(self, embedder: Embedder, vectors: VectorIndex) -> None:
        """Record this embedder as the one recall uses once its vectors cover every item
        (at once when it already is the recorded model); recall then searches them, and the
        previous index goes."""
        new = switch.record(embedder)
        rec = self.serving_record
        if isinstance(rec, dict) and rec.get("model") == embedder.model and rec == new:
            return
        switching = isinstance(rec, dict) and rec.get("model") != embedder.model
        if switching and not self._covers(embedder, vectors, self.reader.version_vector()):
            return
        self.writes.put_meta(switch.SERVING, new)
        if switching:
            # a recall that took the previous index before this line finishes with it in memory
            self.previous, self.switch_note = None, None
            switch.remove_other_indexes(self.directory / "faiss", {embedder.model})
            self._maybe_save(force=True)  # a restart loads the new index, not rebuilds it
        self.serving_record = new  # last: status says "switched" once all of it is done
        if not switching:
            return
        log.info(
            "switched embedder from %s to %s: recall searches %s from now on",
            rec.get("model") if isinstance(rec, dict) else None, embedder.model, embedder.model,
        )  # fmt: skip

    def _covers(self, embedder: Embedder, vectors: VectorIndex, target: dict[str, int]) -> bool:
        embedded = self.reader.get_meta(f"embed:{embedder.model}") or {}
        return vv_dominates(embedded, target) and vv_dominates(vectors.watermark, target)

    def _embed_missing(self, embedder: Embedder) -> bool:
        cursor = f"embed:{embedder.model}"
        watermark = self.reader.get_meta(cursor) or {}
        ops = self._ops_after(watermark)
        if not ops:
            return False
        texts, _ = keys_changed(ops)
        todo: list[tuple[str, str]] = []
        for key in sorted(texts):
            found = self.reader.item_text(key)
            if found is None:
                continue
            text = found[0][:MAX_EMBED_CHARS]
            if self._stored_hash(embedder, key) != text_hash(text):
                todo.append((key, text))
        for start in range(0, len(todo), EMBED_BATCH):
            if self._stop:
                return False  # the cursor stays: the rest is done at the next start
            chunk = self._embed_chunk(embedder, todo[start : start + EMBED_BATCH])
            rows = []
            for key, text, vector in chunk:
                kind, item_id = split_key(key)
                rows.append({"item_kind": kind, "item_id": item_id, "model": embedder.model,
                             "vector": vector, "provider": embedder.provider,
                             "text_hash": text_hash(text)})  # fmt: skip
            self.writes.put_embeddings(rows, skip_missing=True)
            self._catch_up_keyword()
        self.writes.put_meta(cursor, self._advance(watermark, ops))
        return len(ops) >= BATCH_OPS

    def _embed_chunk(
        self, embedder: Embedder, chunk: list[tuple[str, str]]
    ) -> list[tuple[str, str, np.ndarray]]:
        """Vectors for a chunk. If the chunk fails, each text alone: a text the embedder
        refuses is skipped (and listed in `skipped`) when others pass; when every one fails
        the embedder is down and the error propagates (the cursor does not move)."""
        try:
            vectors = embedder.embed_documents([t for _, t in chunk])
            return [(k, t, v) for (k, t), v in zip(chunk, vectors, strict=True)]
        except EmbedderUnavailable:
            if len(chunk) == 1:
                raise
        out, last = [], None
        for key, text in chunk:
            try:
                out.append((key, text, embedder.embed_documents([text])[0]))
            except EmbedderUnavailable as exc:
                last = exc
                self.skipped.add(key)
        if not out and last is not None:
            raise last
        if last is not None:
            self.last_error = f"skipped {len(chunk) - len(out)} item(s): {last}"
            log.warning("embedding: %s", self.last_error)
        return out

    def _stored_hash(self, embedder: Embedder, key: str) -> str | None:
        rec = self.reader.embedding_record(*split_key(key), embedder.model, vector=False)
        return None if rec is None else str(rec["text_hash"])

    def _catch_up_vectors(self, embedder: Embedder, vectors: VectorIndex) -> bool:
        ops = self._ops_after(vectors.watermark)
        if not ops:
            return False
        _, keys = keys_changed(ops)
        # A change of an item's text alone (a node gaining evidence at every bead that names
        # it) leaves its stored vector as it was: an item indexed and still visible keeps
        # its entry. Re-adding it would count as a removal and write the whole index file.
        fresh = {e.key for op in ops for e in events_of(op) if e.change is not Change.CHANGED}
        keys -= {k for k in keys - fresh if vectors.has(k) and self.reader.item_text(k) is not None}
        found = self._stored_vectors(embedder, sorted(keys))
        present = [k for k in sorted(keys) if k in found]
        vectors.remove(k for k in keys if k not in found)
        if present:
            vectors.upsert(present, np.vstack([found[k] for k in present]))
        vectors.watermark = self._advance(vectors.watermark, ops)
        vectors.dirty += 1
        return len(ops) >= BATCH_OPS

    def _vectors_of(self, embedder: Embedder, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of ``keys`` under the model (what IVF search re-ranks by, for
        every query: ~90-190 of them, so the float16 ones are decoded in one numpy call)."""
        dims = embedder.dims
        found = self.reader.vector_bytes([split_key(k) for k in keys], embedder.model)
        half = [i for i, (d, raw) in found.items() if d == dims and len(raw) == 2 * dims]
        out: dict[str, np.ndarray] = {}
        if half:
            rows = np.frombuffer(b"".join(found[i][1] for i in half), dtype="<f2")
            matrix = rows.reshape(len(half), dims).astype(np.float32)
            out.update(zip((keys[i] for i in half), matrix, strict=True))
        for i, (d, raw) in found.items():
            if d == dims and len(raw) == 4 * dims:  # float32: stored so, or from before float16
                out[keys[i]] = vector_bytes.decode(raw, dims)
        return out

    def _stored_vectors(self, embedder: Embedder, keys: list[str]) -> dict[str, np.ndarray]:
        out = self._vectors_of(embedder, keys)
        # a removed node or skill keeps its vector in LMDB (it may come back): not in search
        return {k: v for k, v in out.items() if self.reader.item_text(k) is not None}

    def _rebuild_vectors(self, embedder: Embedder, vectors: VectorIndex) -> None:
        """The vector index afresh from LMDB's vectors of this model: the visible items
        listed at one snapshot, their vectors read a chunk at a time (`VectorIndex.rebuild`);
        what changed since the listing is caught up from its version vector."""
        model = embedder.model
        watermark, items = self.reader.model_vector_keys(model, embedder.dims)
        keys = [
            key
            for kind, item_id in items
            if self.reader.item_text(key := item_key(kind, item_id)) is not None
        ]
        vectors.rebuild(keys, lambda some: self._vectors_of(embedder, some))
        vectors.watermark = watermark
        log.info("vector index for %s rebuilt from LMDB: %d vectors", model, len(vectors))

    def _maybe_save(self, *, force: bool = False) -> None:
        """Write the vector indexes now and then, not after every batch: a 100k x 768 index
        is 300 MB, and what a save would have held is caught up from its watermark at start."""
        indexes = [v for v in self.vector_indexes() if v.dirty]
        if not indexes:
            return
        due = time.monotonic() - self._saved_at > SAVE_EVERY_S
        for vectors in indexes:
            # removed: forgotten vectors leave the file
            if not (force or due or vectors.removed or vectors.dirty > SAVE_AFTER_CHANGES):
                continue
            try:
                vectors.save()
            except Exception as exc:
                log.warning("could not save the vector index of %s: %s", vectors.model, exc)
        if due or force:
            self._saved_at = time.monotonic()

    # ---- waiting and closing ---------------------------------------------------------------

    def caught_up(self, target: dict[str, int]) -> bool:
        if not vv_dominates(self.keyword.watermark(), target):
            return False
        if self.embedder is None:
            return True
        if self.vectors is None:
            return False
        previous = self.previous
        if previous is not None and not self._covers(*previous, target):
            return False
        return self._covers(self.embedder, self.vectors, target)

    def importance(self, texts: Sequence[str]) -> list[float]:
        """The automatic importance of beads of these ``texts``, written in this order, from
        their novelty against what the keyword index holds (`novelty`). It does not wait
        for the index: what it holds trails the op log by the worker's lag (milliseconds
        when idle), and a bulk write counts its own earlier beads itself."""
        keyword = self.keyword
        terms = [keyword.content_terms(t[: novelty.MAX_CHARS]) for t in texts]
        scores = novelty.novelty(terms, keyword.doc_freq, keyword.size)
        return [novelty.importance(s) for s in scores]

    def wait_keyword(self, timeout: float) -> bool:
        """Bring keyword search up to every write made before the call, in the caller's
        thread if need be (it takes milliseconds; the worker may be busy embedding), so a
        recall right after a remember finds it. False when it did not finish in time."""
        target = self.reader.version_vector()
        deadline = time.monotonic() + timeout
        while not vv_dominates(self.keyword.watermark(), target):
            if time.monotonic() > deadline:
                return False
            self._catch_up_keyword()
        return True

    def settle_forgets(self, timeout: float) -> bool:
        """Bring both indexes up to every write made before the call as far as forgets are
        concerned, and write the vector index if vectors left it, so no index file holds
        forgotten content (`chrysalis.forget.scrub`). Embedding is not waited for. False if the
        indexes were still behind at ``timeout``."""
        deadline = time.monotonic() + timeout
        target = self.reader.version_vector()
        if not self.wait_keyword(timeout):
            return False
        while any(not vv_dominates(v.watermark, target) for v in self.vector_indexes()):
            if time.monotonic() > deadline:
                return False
            self._wake.set()
            with self._progress:
                self._progress.wait(0.05)
        if any(v.removed for v in self.vector_indexes()):
            self._maybe_save(force=True)
        return True

    def wait(self, timeout: float | None = None) -> None:
        """Block until every index reflects every op committed before the call (and the
        vectors made for them), the keyword rows committed too (not only in its overlay: a
        caller who waits wants the index settled, scored as it will stay). Raises
        `TimeoutError` naming the last indexing error."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            target = self.reader.version_vector()
            self._wake.set()
            with self._progress:
                while not self.caught_up(target):
                    if self.embed_failures >= 3 and self.last_error:
                        raise EmbedderUnavailable(f"indexing is stuck: {self.last_error}")
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        raise TimeoutError(
                            "indexes are not caught up"
                            + (f"; last error: {self.last_error}" if self.last_error else "")
                        )
                    self._progress.wait(timeout=0.05 if left is None else min(left, 0.05))
            if self.reader.version_vector() == target:  # no vectors were written meanwhile
                with self._keyword_lock:
                    self.keyword.commit()
                return

    def close(self) -> None:
        self._stop = True
        self._halt.set()
        self._wake.set()
        self._thread.join(timeout=30)
        self.pool.shutdown(wait=True)
        try:
            self._maybe_save(force=True)
        finally:
            self.keyword.close()
            self.reader.off_commit(self._on_commit)

    def status(self) -> dict[str, Any]:
        """Items per index, the embedder, errors, and ``behind``: ops each index has still
        to take in (0 everywhere when caught up)."""
        vectors = self.vectors
        embedder = self.embedder
        vv = self.reader.version_vector()

        def behind(watermark: dict[str, int]) -> int:
            return sum(max(0, seq - watermark.get(r, 0)) for r, seq in vv.items())

        lag = {"keyword": behind(self.keyword.watermark())}
        if embedder is not None:
            lag["embed"] = behind(self.reader.get_meta(f"embed:{embedder.model}") or {})
            lag["vectors"] = behind(vectors.watermark) if vectors is not None else sum(vv.values())
        return {
            "switch": self._switch_status(lag),
            "behind": lag,
            "keyword": {"items": self.keyword.count()},
            "vectors": None
            if vectors is None
            else {"model": vectors.model, "items": len(vectors), "kind": vectors.kind},
            "embedder": None
            if embedder is None
            else {"provider": embedder.provider, "model": embedder.model},
            "last_error": self.last_error,
            "errors": self.errors,
        }

    def _switch_status(self, lag: dict[str, int]) -> dict[str, Any] | None:
        """During a switch: from and to which model, what recall searches, and how far the
        new model has come: ``vectors`` of ``items`` (what the keyword index holds: every
        item with text), their ``percent`` (below 100 until it finishes), and the ops its
        cursors have still to take in."""
        rec, embedder = self.serving_record, self.embedder
        if embedder is None or not isinstance(rec, dict) or rec.get("model") == embedder.model:
            return None
        previous, vectors = self.previous, self.vectors
        done, items = 0 if vectors is None else len(vectors), self.keyword.count()
        return {
            "from": {"provider": rec.get("provider"), "model": rec.get("model")},
            "to": {"provider": embedder.provider, "model": embedder.model},
            "searching": (previous[0] if previous else embedder).model,
            "vectors": done,
            "items": items,
            "percent": min(99.9, round(100 * done / max(1, items), 1)),
            "ops_behind": max(lag.get("embed", 0), lag.get("vectors", 0)),
            "note": self.switch_note,
        }
