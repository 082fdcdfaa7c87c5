"""BM25 keyword search over item text, in tantivy (block-max WAND top-k).

Derived from LMDB and disposable: the index remembers the version vector of the op log it
reflects (its watermark, a document of its own committed with the rows it describes), catches
up from there, and is rebuilt from LMDB when its directory is missing or damaged. Items are
named by a *key*, ``"<kind>:<id>"`` (bead, node, skill, persona).

A forget must leave no file holding the text. A tantivy delete is a tombstone: the words stay
in the segment until a merge, which the Python binding cannot ask for. So a delete rewrites
the segments that held the deleted items: their other documents are added again from their
stored fields and deleted from the old segment, which, left with no live document, is dropped
at the commit and its files collected (`KeywordIndex.apply`).

A write that fails (a full disk: tantivy's worker thread dies on the I/O error and takes the
writer with it, for good) opens a new writer, puts the watermark back to the last commit and
drops the rows waiting for one: they are read again from the op log when the indexer retries.
On a disk with little room left, the failure is `InsufficientStorage` naming it.

A closed index leaves its directory alone: `KeywordIndex.close` waits for tantivy's merges,
drops the writer, the searcher and the index (whose meta-file watcher thread then ends), and
its reader never reloads by itself (a reload takes ``.tantivy-meta.lock``, creating the file:
in a directory being removed after the close, "Directory not empty").
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tantivy
from tantivy import Document, FieldType, Occur, Query

from chrysalis.core.errors import ChrysalisError, ClosedError, disk_full, out_of_space
from chrysalis.core.events import split_key
from chrysalis.core.models import Filters
from chrysalis.search.overlay import Pending
from chrysalis.store.keys import pack, unpack

log = logging.getLogger(__name__)

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_STOP = """a an and are as at be but by did do does for from had has have he her him his how i
if in into is it its me my no not of on or our she so than that the their them then there these
they this to was we were what when where which who whom why will with would you your"""
STOP_WORDS = frozenset(_STOP.split())
SCHEMA = 4  # 4: tantivy; 3 and before: SQLite FTS5 (keyword.sqlite)
META_KEY = "meta:index"  # the document holding the watermark and the schema version
ANALYZER = "chrysalis_en"  # words, lowercased, Porter-stemmed: tantivy's en_stem
COMMON = 0.2  # a query word in more than this share of the documents is dropped (measured)
# A commit fsyncs its files: rows wait for one until there are this many (a bulk write pays
# one commit per chunk; the overlay that serves waiting rows stays small) ...
COMMIT_ROWS = 64
COMMIT_SECONDS = 1.0  # ... or until the oldest waited this long (`commit_due`, each second)
HEAP = 20_000_000  # bytes; a larger arena only makes each commit slower (measured)
# A writer that died with less than this free on its disk died of the full disk: its error says
# only "An index writer was killed ... (io::Error most likely)", and a segment it flushes may
# take about its arena.
LOW_DISK = 2 * HEAP
LEGACY = "keyword.sqlite"


class DamagedIndex(Exception):
    """The index directory cannot be read as an index of this version."""


class _Closed:
    """Stands for the tantivy objects of a closed index: any use raises `ClosedError`."""

    def __getattr__(self, name: str) -> Any:
        raise ClosedError("keyword index is closed")


_CLOSED: Any = _Closed()


@dataclass
class KeywordHit:
    key: str
    score: float  # BM25, higher is better


def _analyzer() -> tantivy.TextAnalyzer:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def _schema() -> tantivy.Schema:
    b = tantivy.SchemaBuilder()
    b.add_text_field("key", stored=True, tokenizer_name="raw")
    b.add_text_field("kind", stored=True, tokenizer_name="raw")
    b.add_text_field("text", stored=True, tokenizer_name=ANALYZER, index_option="freq")
    for name in ("session", "role", "tags"):
        b.add_text_field(name, stored=True, tokenizer_name="raw", index_option="basic")
    for name in ("ts", "importance"):
        b.add_float_field(name, stored=True, indexed=True, fast=True)
    b.add_bytes_field("meta", stored=True)
    return b.build()


def remove_legacy(directory: Path) -> None:
    """Delete an older data dir's FTS5 files: no forgotten text may linger there."""
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            (directory / (LEGACY + suffix)).unlink()


class KeywordIndex:
    """BM25 keyword search over item text, in a tantivy index directory.

    Thread-safe: one writer behind a lock; searches read the searcher of the last commit.
    Not durable on its own by design (it is rebuilt from LMDB): its watermark is a document
    committed with the rows it describes, so it never claims ops whose rows are not in.

    The contract, checked by ``tests/contracts/test_keyword_index.py`` in each state a row
    can be in (waiting for a commit, committed, reopened from disk):

    - After ``apply`` returns, ``search`` finds an upserted row by any of its words
      (case-insensitive, stemmed: "tea" finds "teas"), best first, at most ``k``; an upsert
      of a key replaces its text and fields (its old words no longer find it); `has` and
      `count` agree. The same rows rank the same whether they wait or are committed.
    - Filters on bead fields narrow beads and pass every other kind; ``kinds`` narrows all.
      `match_all` gives every bead holding all the words, unranked.
    - After ``apply`` deletes a key, nothing finds it, `has` is False, and no file of the
      index holds its text (`has_text`); the other rows stay as they were.
    - ``apply`` is idempotent; after `close` and a new open, the rows, the deletes and the
      watermark are as they were.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._schema = _schema()
        self._analyzer = _analyzer()
        path.mkdir(parents=True, exist_ok=True)
        try:
            self._index = tantivy.Index(self._schema, path=str(path), reuse=True)
            # The binding's reader reloads on its own, from a thread that polls meta.json,
            # a moment after each commit, the last one at `close` too: it then creates
            # .tantivy-meta.lock in a directory that may be going away. We reload ourselves.
            self._index.config_reader(reload_policy="manual")
            self._index.register_tokenizer(ANALYZER, _analyzer())
            self._writer: Any = self._index.writer(heap_size=HEAP, num_threads=1)
            self._index.reload()
            self._searcher = self._index.searcher()
            meta = self._meta()
        except (ValueError, RuntimeError) as exc:  # what the binding raises for a bad index
            if "LockBusy" in str(exc):  # another writer holds it: busy, not damaged
                raise RuntimeError(f"keyword index {path} is open elsewhere: {exc}") from exc
            raise DamagedIndex(str(exc)) from exc
        self._writer.garbage_collect_files()  # a crash may have left a dropped segment's files
        if meta is None and self._searcher.num_docs:
            raise DamagedIndex("documents without a watermark")
        if meta is not None and meta.get("schema") != SCHEMA:
            raise DamagedIndex("written by another version")
        self._watermark: dict[str, int] = dict(meta["watermark"]) if meta else {}
        self._saved = dict(self._watermark)  # the watermark of the last commit
        self._unsaved = False  # the watermark moved past what the last commit saved
        self._avg_len = float(meta.get("avg_len", 0.0)) if meta else 0.0
        self._total = self._count()
        self._pending = Pending()  # written since the last commit (overlay.py)

    @classmethod
    def open_or_reset(cls, path: Path) -> tuple[KeywordIndex, bool]:
        """Open the index; a damaged one is deleted and started afresh (returns reset=True)."""
        try:
            return cls(path), False
        except (DamagedIndex, OSError) as exc:
            log.warning("keyword index %s is damaged (%s): rebuilding it", path, exc)
            return cls.reset(path), True

    @classmethod
    def reset(cls, path: Path) -> KeywordIndex:
        """Delete the index directory and open an empty index."""
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
        return cls(path)

    def _meta(self) -> dict[str, Any] | None:
        hits = self._searcher.search(self._term("key", META_KEY), 1, count=False).hits
        if not hits:
            return None
        return dict(unpack(bytes(self._searcher.doc(hits[0][1]).get_first("meta") or b"")))

    def _count(self) -> int:
        return int(self._searcher.num_docs) - self._live(self._term("key", META_KEY))

    def watermark(self) -> dict[str, int]:
        return dict(self._watermark)

    # ---- writing -------------------------------------------------------------------------

    def apply(
        self,
        upserts: Iterable[tuple[str, str, dict[str, Any]]],
        deletes: Iterable[str],
        watermark: dict[str, int],
    ) -> None:
        """Upsert ``(key, text, fields)`` rows, delete keys, and move the watermark.
        Idempotent (an upsert deletes the key, then adds it). Searchable when this returns.

        Rows are committed in batches (`COMMIT_ROWS`, or once the oldest waited
        `COMMIT_SECONDS`: `commit_due`; and at `close`): a tantivy commit fsyncs its files, tens of
        milliseconds a recall right after a remember would wait. Until then search finds them
        in `Pending`. A delete of text a commit holds commits at once, with what waits, and
        when this returns no file of the index holds the text (see the module). Lost in a
        crash, the rows not committed are read again from the op log (the saved watermark is
        that of the last commit)."""
        rows, deletes = list(upserts), list(deletes)
        with self._lock:
            self._writing(lambda: self._apply(rows, deletes, watermark))

    def _apply(
        self,
        rows: list[tuple[str, str, dict[str, Any]]],
        deletes: list[str],
        watermark: dict[str, int],
    ) -> None:
        if any(k in self._pending for k in deletes):
            self._commit()  # a forget of a pending row: let it land, then erase it
        gone = [k for k in deletes if self._holds(k)]
        if gone:
            self._erase(rows, deletes, gone, watermark)
            return
        now = time.monotonic()
        added = []
        counted = self._total + len(self._pending)  # rows in the mean so far
        for key, text, fields in rows:
            self._writer.delete_documents_by_term("key", key)
            self._writer.add_document(self._document(key, text, fields))
            stems = self._analyzer.analyze(text)
            added.append((key, stems, dict(fields)))
            # a running mean over every row, as tantivy's own (the overlay scores with it):
            # the count moves with each row, not only at commits
            counted += 1
            self._avg_len += (len(stems) - self._avg_len) / counted
        if added:
            self._pending = self._pending.with_rows(added, now)
        self._watermark, self._unsaved = dict(watermark), True
        started = self._pending.since
        if len(self._pending) >= COMMIT_ROWS or (
            started is not None and now - started >= COMMIT_SECONDS
        ):
            self._commit()

    def _writing(self, work: Callable[[], None]) -> None:
        """Run ``work`` (writer calls, under the lock). If it fails, start over from the
        last commit (see the module) and raise: `InsufficientStorage` when the disk is (nearly)
        full, else the failure itself. No frame on the way may hold the writer in a local
        variable: the dead writer keeps the index's lock until the last reference goes."""
        try:
            if self._writer is None:
                self._writer = self._index.writer(heap_size=HEAP, num_threads=1)
            work()
            return
        except ChrysalisError:
            raise
        except (ValueError, RuntimeError, OSError) as exc:
            log.warning(
                "keyword index: a write failed, starting over from the last commit: %s", exc
            )
            error: BaseException = exc
            if out_of_space(exc) or self._free() < LOW_DISK:
                error = disk_full(self.path)
        self._restart()
        raise error

    def _free(self) -> int:
        try:
            st = os.statvfs(self.path)
        except OSError:
            return 0
        return st.f_bavail * st.f_frsize

    def _restart(self) -> None:
        """A new writer; the watermark back to the last commit, the rows waiting dropped."""
        self._writer = None  # the dead one goes first: it holds the lock
        self._watermark, self._unsaved = dict(self._saved), False
        self._pending = Pending()
        try:
            self._writer = self._index.writer(heap_size=HEAP, num_threads=1)
        except (ValueError, RuntimeError) as exc:  # tried again at the next write
            log.warning("keyword index: cannot open a new writer yet: %s", exc)
        with contextlib.suppress(ValueError, RuntimeError, OSError):
            self._refresh()

    def commit(self) -> None:
        """Commit the rows that wait (`apply` batches them), if any."""
        with self._lock:
            if self._unsaved:
                self._writing(self._commit)

    def commit_due(self) -> None:
        """Commit the rows that wait if the oldest waited `COMMIT_SECONDS` (the indexing
        worker calls this each time it wakes, at least once a second)."""
        with self._lock:
            since = self._pending.since
            if since is not None and time.monotonic() - since >= COMMIT_SECONDS:
                self._writing(self._commit)

    def _commit(self) -> None:
        """Commit what the writer holds with the watermark, and search it there (a failure
        is `_writing`'s to clean up)."""
        self._save_watermark(self._watermark)
        self._unsaved = False
        self._refresh()
        self._pending = Pending()  # after the new searcher: a search never misses a row

    def _erase(
        self,
        rows: list[tuple[str, str, dict[str, Any]]],
        deletes: list[str],
        gone: list[str],
        watermark: dict[str, int],
    ) -> None:
        """Delete ``gone`` (held by committed segments) so that no file keeps their text:
        rewrite the segments that held them, commit with everything else, collect files."""
        if self._pending:
            self._commit()  # settling merges ends the writer: what it holds must be in first
        self._settle_merges()  # a merge under way would carry the tombstones along
        rewrite = self._segments_of(gone)
        for key in deletes:
            self._writer.delete_documents_by_term("key", key)
        for key, text, fields in rows:
            self._writer.delete_documents_by_term("key", key)
            self._writer.add_document(self._document(key, text, fields))
        if rewrite:  # pending rows are in the writer already: never add their old copy
            skip = {k for k, _, _ in rows} | set(deletes) | set(self._pending.items)
            self._rewrite(rewrite, skip)
        self._save_watermark(watermark)
        self._watermark, self._unsaved = dict(watermark), False
        self._refresh()
        self._pending = Pending()
        self._drop_tombstones(gone)

    def _save_watermark(self, watermark: dict[str, int]) -> None:
        """Replace the meta document and commit (with whatever else the writer holds)."""
        self._writer.delete_documents_by_term("key", META_KEY)
        meta = {"schema": SCHEMA, "watermark": dict(watermark), "avg_len": self._avg_len}
        self._writer.add_document(Document(key=META_KEY, kind="meta", meta=pack(meta)))
        self._writer.commit()
        self._saved = dict(watermark)

    def _document(self, key: str, text: str, fields: dict[str, Any]) -> Document:
        doc = Document(key=key, kind=split_key(key)[0], text=text)
        for name in ("session", "role"):
            if fields.get(name) is not None:
                doc.add_text(name, str(fields[name]))
        for tag in fields.get("tags", ()):
            doc.add_text("tags", str(tag))
        for name in ("ts", "importance"):
            if fields.get(name) is not None:
                doc.add_float(name, float(fields[name]))
        return doc

    def _refresh(self) -> None:
        self._index.reload()
        self._searcher = self._index.searcher()
        self._total = self._count()

    def _settle_merges(self) -> None:
        """Let merges under way finish (it ends the writer, dropping what it holds
        uncommitted: callers commit first), then open a new writer."""
        self._writer.wait_merging_threads()
        self._writer = self._index.writer(heap_size=HEAP, num_threads=1)
        self._refresh()

    def _holds(self, key: str) -> bool:
        """Whether any segment holds a document of ``key``, deleted ones included."""
        return int(self._searcher.doc_freq("key", key)) > 0

    def _segments_of(self, keys: Sequence[str]) -> set[int]:
        query = Query.term_set_query(self._schema, "key", list(keys))
        hits = self._searcher.search(query, max(1, 4 * len(keys)), count=False).hits
        return {addr.segment_ord for _, addr in hits}

    def _rewrite(self, segments: set[int] | None, skip: set[str]) -> None:
        """Add again every live document of ``segments`` (all when None) but those in
        ``skip``, and delete them where they were: the old segments are left with no live
        document and are dropped at the commit."""
        searcher = self._searcher
        every = searcher.search(Query.all_query(), max(1, searcher.num_docs), count=False).hits
        docs = []
        for _, addr in every:
            if segments is None or addr.segment_ord in segments:
                doc = searcher.doc(addr)
                key = doc.get_first("key")
                if key != META_KEY and key not in skip:
                    docs.append((key, doc))
        if not docs:
            return
        keys = [k for k, _ in docs]
        self._writer.delete_documents_by_query(Query.term_set_query(self._schema, "key", keys))
        for _, doc in docs:
            self._writer.add_document(doc)

    def _drop_tombstones(self, gone: Sequence[str]) -> None:
        """Check that the deleted keys left every segment; if not (an older version of one
        lay in a segment we did not rewrite), rewrite them all. Then collect the files."""
        for _ in range(3):
            if not any(self._holds(k) for k in gone):
                break
            self._settle_merges()
            try:
                self._rewrite(None, set())
                self._writer.commit()
            except BaseException:
                self._writer.rollback()
                raise
            self._refresh()
        else:
            log.warning("keyword index: deleted text is still in a segment")
        self._writer.garbage_collect_files()

    # ---- reading -------------------------------------------------------------------------

    @staticmethod
    def query_terms(query: str) -> list[str]:
        """The query's distinct words, stop words dropped (unless that leaves none)."""
        words = [w.lower() for w in _TOKEN.findall(query)]
        unique = list(dict.fromkeys(words))
        return [w for w in unique if w not in STOP_WORDS] or unique

    @staticmethod
    def all_words(query: str) -> list[str]:
        """Every distinct word of ``query``, lowercased: stop words are kept (a forget by query
        must mean every word it was given)."""
        return list(dict.fromkeys(w.lower() for w in _TOKEN.findall(query)))

    def content_terms(self, text: str) -> list[str]:
        """The distinct terms the index would hold for ``text``'s words, stop words dropped
        (`novelty`)."""
        words = [w for w in _TOKEN.findall(text.lower()) if w not in STOP_WORDS]
        return list(dict.fromkeys(self._analyzer.analyze(" ".join(words)))) if words else []

    def doc_freq(self, term: str) -> int:
        """How many items hold ``term``: committed, and waiting for the next commit."""
        pending = self._pending.holding  # replaced, never changed: read without the lock
        return int(self._searcher.doc_freq("text", term)) + pending[term]

    def _stems(self, words: Sequence[str]) -> list[str]:
        """The terms the index holds for ``words`` (as its analyzer makes them)."""
        return list(dict.fromkeys(t for w in words for t in self._analyzer.analyze(w)))

    def _selective(self, stems: list[str]) -> list[str]:
        """Drop terms in over `COMMON` of the documents (unless that leaves none). Not for
        speed (block-max WAND skips what cannot reach the top k) but for ranking: tantivy's
        IDF stays positive for such words where FTS5's fell to zero, and the words that carry
        the question then weigh less (LoCoMo fusion recall@10 0.710 with them, 0.721
        without; docs/benchmarks.md). A lookup in the term dictionary per term."""
        total = self._total
        if total < 20:
            return stems
        searcher = self._searcher
        kept = [s for s in stems if searcher.doc_freq("text", s) <= COMMON * total]
        return kept or stems

    def _term(self, field: str, value: Any) -> Query:
        return Query.term_query(self._schema, field, value)

    def _words_query(self, stems: Sequence[str], occur: Occur) -> Query:
        return Query.boolean_query([(occur, self._term("text", s)) for s in stems])

    def search(self, query: str, k: int, filters: Filters | None = None) -> list[KeywordHit]:
        """The ``k`` best items by BM25 for ``query`` (higher score is better) among those
        that pass ``filters``: bead fields apply to beads, ``kinds`` to every item."""
        stems = self._selective(self._stems(self.query_terms(query)))
        if not stems or k <= 0:
            return []
        q = self._words_query(stems, Occur.Should)
        conditions = self._filter_queries(filters or Filters())
        if conditions:  # scored by the words only: the conditions add nothing
            zero = [(Occur.Must, Query.const_score_query(c, 0.0)) for c in conditions]
            q = Query.boolean_query([(Occur.Must, q), *zero])
        searcher, pending = self._searcher, self._pending
        hits = searcher.search(q, k + len(pending), count=False).hits
        found = [(_key(searcher, addr), float(s)) for s, addr in hits]
        if pending:  # a pending row hides its committed version; its new one is scored here
            found = [(key, s) for key, s in found if key not in pending]
            found += pending.search(
                stems, filters or Filters(), lambda t: int(searcher.doc_freq("text", t)),
                int(searcher.num_docs), self._avg_len,
            )  # fmt: skip
            found.sort(key=lambda h: -h[1])
        return [KeywordHit(key, score) for key, score in found[:k]]

    def _filter_queries(self, f: Filters) -> list[Query]:
        """One query per condition of ``f``: bead conditions pass every other kind."""
        bead: list[Query] = []
        if f.session_id is not None:
            bead.append(self._term("session", f.session_id))
        if f.role is not None:
            bead.append(self._term("role", f.role))
        for name, low, high in (("ts", f.since, f.until), ("importance", f.min_importance, None)):
            if low is not None or high is not None:
                bead.append(Query.range_query(self._schema, name, FieldType.Float, low, high))
        if f.tags:
            bead.append(Query.term_set_query(self._schema, "tags", list(f.tags)))
        out = []
        if bead:
            not_bead = Query.boolean_query(
                [(Occur.Must, Query.all_query()), (Occur.MustNot, self._term("kind", "bead"))]
            )
            out = [Query.boolean_query([(Occur.Should, not_bead), (Occur.Should, c)]) for c in bead]
        if f.kinds:
            out.append(Query.term_set_query(self._schema, "kind", list(f.kinds)))
        return out

    def match_all(self, query: str) -> list[str]:
        """The keys of every bead whose indexed text holds every word of ``query`` (as the
        index holds it: case-insensitive, stemmed, so "tea" finds "teas"), unranked and
        unbounded: what a forget by query selects, predictably, where `search` ranks the best k."""
        stems = self._stems(self.all_words(query))
        if not stems:
            return []
        q = Query.boolean_query(
            [(Occur.Must, self._words_query(stems, Occur.Must)),
             (Occur.Must, self._term("kind", "bead"))]
        )  # fmt: skip
        searcher, pending = self._searcher, self._pending
        hits = searcher.search(q, max(1, searcher.num_docs), count=False).hits
        keys = [key for _, addr in hits if (key := _key(searcher, addr)) not in pending]
        return keys + pending.holding_all(stems)

    @property
    def size(self) -> int:
        """Items indexed, roughly (pending rows may replace committed ones); cheap."""
        return self._total + len(self._pending)

    def count(self) -> int:
        return self.size

    def has(self, key: str) -> bool:
        """Whether item ``key`` (``bead:<id>``) is indexed."""
        return key in self._pending or self._live(self._term("key", key)) > 0

    def has_text(self, fragment: str) -> bool:
        """Whether the index still holds ``fragment`` anywhere: in a live item's text, in
        the bytes of any of its files, or as words a deleted document still holds (a word
        whose term counts more documents than search finds). Tests use it to check forget."""
        raw = fragment.encode()
        with self._lock:
            if any(raw in data for data in _file_bytes(self.path)):
                return True
            stems = self._stems(self.all_words(fragment))
            if not stems:
                return False
            if self._pending.holding_all(stems):
                return True
            searcher = self._searcher
            q = self._words_query(stems, Occur.Must)
            for _, addr in searcher.search(q, max(1, searcher.num_docs), count=False).hits:
                if fragment.lower() in str(searcher.doc(addr).get_first("text")).lower():
                    return True
            return all(
                searcher.doc_freq("text", s) > self._live(self._term("text", s)) for s in stems
            )

    def _live(self, query: Query) -> int:
        """Live documents matching ``query``."""
        found: Any = self._searcher.search(query, 1, count=True)
        return int(found.count)

    def close(self) -> None:
        """Save a watermark that moved in memory only, and end the writer. A commit that
        fails here (its writer died: a full disk) is logged, not raised: the index is derived,
        and at the next open it catches up from the last watermark it saved.

        When this returns, nothing of tantivy's touches the directory: merges under way
        have finished, and the writer, the searcher and the index are dropped (the index's
        meta-file watcher thread ends with it). Any later use raises `ClosedError`."""
        with self._lock:
            if self._writer is _CLOSED:
                return
            if self._unsaved:
                try:
                    self._writing(self._commit)
                except (ChrysalisError, ValueError, RuntimeError, OSError) as exc:
                    log.warning("keyword index: the last commit failed (%s); it catches up "
                                "from the op log when it is opened again", exc)  # fmt: skip
            if self._writer is not None:
                with contextlib.suppress(Exception):  # a dead writer has no merges to wait for
                    self._writer.wait_merging_threads()
            # the last references: the Rust objects go now, not at some garbage collection
            self._writer = self._searcher = self._index = _CLOSED


def _file_bytes(directory: Path) -> Iterator[bytes]:
    """The bytes of each file in ``directory``; one a merge removed meanwhile is skipped."""
    for path in directory.iterdir():
        with contextlib.suppress(FileNotFoundError, IsADirectoryError):
            yield path.read_bytes()


def _key(searcher: tantivy.Searcher, addr: tantivy.DocAddress) -> str:
    return str(searcher.doc(addr).get_first("key"))
