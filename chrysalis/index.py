"""Derived indexes: FAISS vectors per embedding model, and BM25 keyword search (SQLite FTS5).

Both are derived from LMDB and disposable: each remembers the version vector of the op log it
reflects (its watermark), catches up from there, and is rebuilt from LMDB when its files are
missing or damaged. Items are named by a *key*, ``"<kind>:<id>"`` (bead, node, skill, persona).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .atomic import atomic_write
from .store import pack, unpack

log = logging.getLogger(__name__)

KINDS = ("bead", "node", "skill", "persona")


def item_key(kind: str, item_id: str) -> str:
    return f"{kind}:{item_id}"


def split_key(key: str) -> tuple[str, str]:
    kind, _, item_id = key.partition(":")
    return kind, item_id


# ---- keyword ---------------------------------------------------------------------------------

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
# Words too common to say anything on their own; FTS5 has no stop list of its own.
_STOP = """a an and are as at be but by did do does for from had has have he her him his how i
if in into is it its me my no not of on or our she so than that the their them then there these
they this to was we were what when where which who whom why will with would you your"""
STOP_WORDS = frozenset(_STOP.split())
SCHEMA = 2


def common_threshold(total: int) -> float:
    """Document frequency above which a query term is skipped: a fifth of the documents (never
    under 100: small memories rank everything); in a large one, 2 % or 1,000 documents,
    whichever is more (bounds the rows an OR query ranks: ~3 ms per 2,000 here)."""
    return max(100, min(0.2 * total, max(0.02 * total, 1000)))


def terms_of(text: str) -> set[str]:
    return {w.lower() for w in _TOKEN.findall(text)}


@dataclass
class KeywordHit:
    key: str
    score: float  # BM25, higher is better
    common: bool = False  # matched only words found nearly everywhere: newest first, unranked


class KeywordIndex:
    """BM25 keyword search over item text, in SQLite FTS5 (porter stemming, unicode61).

    Thread-safe (one connection behind a lock). Not durable on its own by design: it is
    rebuilt from LMDB, so it skips fsync (``synchronous=OFF``) and saves its watermark with the
    rows it describes, in the same SQLite transaction.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._db = self._open()
        self._total = int(self._db.execute("SELECT count(*) FROM items").fetchone()[0])

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=OFF")
            db.execute("PRAGMA secure_delete=ON")  # forgotten text is zeroed, not just unlinked
            db.executescript(
                """
                CREATE TABLE IF NOT EXISTS items(
                    rowid INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, kind TEXT NOT NULL,
                    session TEXT, role TEXT, ts REAL, importance REAL, tags TEXT);
                CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
                    text, tokenize='porter unicode61');
                CREATE TABLE IF NOT EXISTS df(term TEXT PRIMARY KEY, n INTEGER NOT NULL)
                    WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v BLOB);
                """
            )
            db.execute("SELECT count(*) FROM fts").fetchone()
            db.execute("PRAGMA quick_check").fetchone()
            version = db.execute("SELECT v FROM meta WHERE k='schema'").fetchone()
            if version is None and db.execute("SELECT count(*) FROM items").fetchone()[0]:
                raise sqlite3.DatabaseError("written by an older version")
            db.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('schema', ?)", (SCHEMA,))
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    @classmethod
    def open_or_reset(cls, path: Path) -> tuple[KeywordIndex, bool]:
        """Open the index; a damaged file is deleted and started afresh (returns reset=True)."""
        try:
            return cls(path), False
        except sqlite3.DatabaseError as exc:
            log.warning("keyword index %s is damaged (%s): rebuilding it", path, exc)
            return cls.reset(path), True

    @classmethod
    def reset(cls, path: Path) -> KeywordIndex:
        """Delete the index files and open an empty index."""
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(str(path) + suffix)
        return cls(path)

    def watermark(self) -> dict[str, int]:
        with self._lock:
            row = self._db.execute("SELECT v FROM meta WHERE k='watermark'").fetchone()
        return {} if row is None else dict(unpack(row[0]))

    def apply(
        self,
        upserts: Iterable[tuple[str, str, dict[str, Any]]],
        deletes: Iterable[str],
        watermark: dict[str, int],
    ) -> None:
        """Upsert ``(key, text, fields)`` rows, delete keys, and move the watermark: atomically."""
        with self._lock:
            db = self._db
            db.execute("BEGIN")
            try:
                erased = False
                plus: list[str] = []
                minus: list[str] = []
                for key in deletes:
                    row = db.execute("SELECT rowid FROM items WHERE key=?", (key,)).fetchone()
                    if row is not None:
                        old = db.execute("SELECT text FROM fts WHERE rowid=?", row).fetchone()
                        minus.extend(terms_of(old[0] if old else ""))
                        db.execute("DELETE FROM fts WHERE rowid=?", row)
                        db.execute("DELETE FROM items WHERE rowid=?", row)
                        erased = True
                for key, text, fields in upserts:
                    row = db.execute("SELECT rowid FROM items WHERE key=?", (key,)).fetchone()
                    tags = " ".join(fields.get("tags", ()))
                    values = (
                        split_key(key)[0], fields.get("session"), fields.get("role"),
                        fields.get("ts"), fields.get("importance"), tags,
                    )  # fmt: skip
                    if row is None:
                        cur = db.execute(
                            "INSERT INTO items(key, kind, session, role, ts, importance, tags) "
                            "VALUES (?,?,?,?,?,?,?)",
                            (key, *values),
                        )
                        rowid = cur.lastrowid
                    else:
                        rowid = row[0]
                        db.execute(
                            "UPDATE items SET kind=?, session=?, role=?, ts=?, importance=?, "
                            "tags=? WHERE rowid=?",
                            (*values, rowid),
                        )
                        old = db.execute("SELECT text FROM fts WHERE rowid=?", (rowid,)).fetchone()
                        minus.extend(terms_of(old[0] if old else ""))
                        db.execute("DELETE FROM fts WHERE rowid=?", (rowid,))
                    db.execute("INSERT INTO fts(rowid, text) VALUES (?, ?)", (rowid, text))
                    plus.extend(terms_of(text))
                db.executemany(
                    "INSERT INTO df(term, n) VALUES (?, 1) "
                    "ON CONFLICT(term) DO UPDATE SET n = n + 1",
                    ((t,) for t in plus),
                )
                db.executemany("UPDATE df SET n = n - 1 WHERE term = ?", ((t,) for t in minus))
                if minus:  # no trace of a forgotten text's words
                    db.execute("DELETE FROM df WHERE n <= 0")
                db.execute(
                    "INSERT OR REPLACE INTO meta(k, v) VALUES ('watermark', ?)", (pack(watermark),)
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            self._total = int(db.execute("SELECT count(*) FROM items").fetchone()[0])
            if erased:  # merge segments so deleted text is gone from the file, not just hidden
                db.execute("INSERT INTO fts(fts) VALUES ('optimize')")
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # and from the WAL

    @staticmethod
    def query_terms(query: str) -> list[str]:
        """The query's distinct words, stop words dropped (unless that leaves none)."""
        words = [w.lower() for w in _TOKEN.findall(query)]
        unique = list(dict.fromkeys(words))
        return [w for w in unique if w not in STOP_WORDS] or unique

    def _selective(self, terms: list[str]) -> list[str]:
        """Drop terms in too many documents (`common_threshold`): they add almost nothing to
        BM25 (tiny IDF), yet an OR query with one of them ranks nearly every row. May return
        nothing (every term is common)."""
        limit = common_threshold(self._total)
        kept = []
        for term in terms:
            row = self._db.execute("SELECT n FROM df WHERE term = ?", (term,)).fetchone()
            if row is None or row[0] <= limit:
                kept.append(term)
        return kept

    @staticmethod
    def match_expression(terms: Sequence[str]) -> str | None:
        """An FTS5 query that ORs the words (quoted: user text is never FTS syntax)."""
        return " OR ".join(f'"{w}"' for w in terms) or None

    def search(
        self,
        query: str,
        k: int,
        *,
        kinds: Sequence[str] | None = None,
        where: str = "",
        args: Sequence[Any] = (),
    ) -> list[KeywordHit]:
        """The ``k`` best items by BM25 for ``query`` (higher score is better)."""
        terms = self.query_terms(query)
        if not terms or k <= 0:
            return []
        filters, params = "", list[Any]()
        if kinds:
            filters += f" AND items.kind IN ({','.join('?' * len(kinds))})"
            params.extend(kinds)
        if where:
            filters += " AND " + where
            params.extend(args)
        with self._lock:
            selective = self._selective(terms)
            if selective:
                sql = (
                    "SELECT items.key, -bm25(fts) FROM fts JOIN items ON items.rowid = fts.rowid "
                    f"WHERE fts MATCH ?{filters} ORDER BY bm25(fts) LIMIT ?"
                )
                rows = self._db.execute(sql, [self.match_expression(selective), *params, k])
            else:
                # Only words found nearly everywhere: ranking would touch most rows and say
                # little. The newest documents holding all of them, by rowid, which FTS5 walks
                # backwards without sorting (in a subquery, so the join does not force a sort).
                sql = (
                    "SELECT items.key, 1.0 FROM (SELECT rowid AS r FROM fts WHERE fts MATCH ? "
                    f"ORDER BY rowid DESC LIMIT ?) JOIN items ON items.rowid = r WHERE 1{filters}"
                )
                expression = " AND ".join(f'"{w}"' for w in terms)
                depth = 4 * k if not filters else 100 * k  # filters apply after the inner LIMIT
                rows = self._db.execute(sql, [expression, depth, *params])
            found = rows.fetchall()[:k]
        return [KeywordHit(key, float(score), common=not selective) for key, score in found]

    @property
    def size(self) -> int:
        """Items indexed (as of the last apply); cheap."""
        return self._total

    def count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM items").fetchone()[0])

    def has_text(self, fragment: str) -> bool:
        """Whether any indexed text contains ``fragment`` (tests use it to check forget)."""
        with self._lock:
            row = self._db.execute(
                "SELECT 1 FROM fts WHERE text LIKE ? LIMIT 1", (f"%{fragment}%",)
            ).fetchone()
        return row is not None

    def close(self) -> None:
        with self._lock:
            self._db.close()


# ---- vectors ---------------------------------------------------------------------------------


@dataclass
class VectorHit:
    key: str
    score: float  # inner product of unit vectors: cosine similarity


class VectorIndex:
    """Vectors of one embedding model in FAISS, searchable by inner product (= cosine).

    Exact (``IndexFlatIP``) up to ``exact_limit`` vectors; past it, rebuilt as IVF
    (``IndexIVFFlat``, ``nprobe`` lists searched). IVF, unlike HNSW, supports ``remove_ids``,
    so a forgotten item leaves the index at once instead of waiting for a rebuild. Ids are
    assigned sequentially and kept with the index. Saved as ``<dir>/<name>-<gen>.faiss`` plus
    ``<dir>/<name>.meta`` (watermark, ids, the current file), the meta written last and
    atomically: a crash leaves the previous consistent pair.
    """

    def __init__(
        self,
        directory: Path,
        model: str,
        dims: int,
        *,
        exact_limit: int = 50_000,
        nprobe: int = 32,
    ) -> None:
        import faiss  # the library stays importable without touching FAISS until needed

        # One OpenMP thread: a single-query search on the exact index spread over 2 threads
        # stalls when the cores are busy (p50 7-15 ms instead of 0.6 ms, bench/peers.py); on
        # the IVF index one thread is as fast. Training gets slower, but it runs in the
        # background worker.
        faiss.omp_set_num_threads(1)
        self._faiss = faiss
        self.directory = directory
        self.model = model
        self.dims = dims
        self.exact_limit = exact_limit
        self.nprobe = nprobe
        self.name = re.sub(r"[^A-Za-z0-9._-]", "_", model)
        self._lock = threading.RLock()
        self._ids: dict[str, int] = {}
        self._keys: dict[int, str] = {}
        self._next_id = 1
        self._generation = 0
        self.watermark: dict[str, int] = {}
        self.dirty = 0
        self.removed = 0  # since the last save: a forgotten vector must leave the file soon
        self._index = self._new_flat()

    def _new_flat(self) -> Any:
        return self._faiss.IndexIDMap2(self._faiss.IndexFlatIP(self.dims))

    @property
    def kind(self) -> str:
        return "ivf" if self._is_ivf() else "exact"

    def _is_ivf(self) -> bool:
        return isinstance(self._index, self._faiss.IndexIVF)

    def __len__(self) -> int:
        return len(self._ids)

    # ---- changes -------------------------------------------------------------------------

    def upsert(self, keys: Sequence[str], vectors: np.ndarray) -> None:
        if not len(keys):
            return
        vectors = np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(keys), self.dims)
        with self._lock:
            self.remove(keys)
            ids = np.arange(self._next_id, self._next_id + len(keys), dtype=np.int64)
            self._next_id += len(keys)
            for key, i in zip(keys, ids.tolist(), strict=True):
                self._ids[key] = i
                self._keys[i] = key
            self._index.add_with_ids(vectors, ids)
            self.dirty += len(keys)
            if not self._is_ivf() and len(self._ids) > self.exact_limit:
                ids = np.asarray(sorted(self._keys), dtype=np.int64)
                flat = np.vstack([self._index.reconstruct(int(i)) for i in ids])
                self._index = self._build(flat, ids)

    def remove(self, keys: Iterable[str]) -> None:
        with self._lock:
            gone = [self._ids.pop(k) for k in keys if k in self._ids]
            self.removed += len(gone)
            if gone:
                for i in gone:
                    self._keys.pop(i, None)
                self._index.remove_ids(np.asarray(gone, dtype=np.int64))
                self.dirty += len(gone)

    def rebuild_from(self, keys: Sequence[str], vectors: np.ndarray) -> None:
        """Replace everything with these vectors (from LMDB): exact or IVF by size."""
        with self._lock:
            ids = np.arange(1, len(keys) + 1, dtype=np.int64)
            self._ids = {k: int(i) for k, i in zip(keys, ids.tolist(), strict=True)}
            self._keys = {i: k for k, i in self._ids.items()}
            self._next_id = len(keys) + 1
            matrix = np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(keys), self.dims)
            self._index = self._build(matrix, ids)
            self.dirty += 1

    def _build(self, vectors: np.ndarray, ids: np.ndarray) -> Any:
        faiss = self._faiss
        if len(ids) <= self.exact_limit:
            index = self._new_flat()
        else:
            # ~4·sqrt(n) lists, but at least 39 training points per list (FAISS's floor)
            nlist = int(max(8, min(4096, 4 * np.sqrt(len(ids)), len(ids) // 39)))
            quantizer = faiss.IndexFlatIP(self.dims)
            ivf = faiss.IndexIVFFlat(quantizer, self.dims, nlist, faiss.METRIC_INNER_PRODUCT)
            sample = vectors[np.random.default_rng(0).permutation(len(vectors))[: nlist * 64]]
            ivf.train(sample)
            ivf.nprobe = self.nprobe
            index = ivf  # IVF keeps ids itself and supports remove_ids
        if len(ids):
            index.add_with_ids(vectors, ids)
        return index

    # ---- queries -------------------------------------------------------------------------

    def search(
        self, vector: np.ndarray, k: int, *, allowed: set[str] | None = None
    ) -> list[VectorHit]:
        """The ``k`` nearest items; ``allowed`` restricts the answer to those keys."""
        with self._lock:
            n = len(self._ids)
            if n == 0 or k <= 0:
                return []
            fetch = min(n, k if allowed is None else max(k * 8, 256))
            query = np.ascontiguousarray(vector, dtype=np.float32).reshape(1, self.dims)
            scores, ids = self._index.search(query, fetch)
            out = []
            for score, i in zip(scores[0].tolist(), ids[0].tolist(), strict=True):
                key = self._keys.get(i)
                if key is None or (allowed is not None and key not in allowed):
                    continue
                out.append(VectorHit(key, float(score)))
                if len(out) == k:
                    break
            return out

    def has(self, key: str) -> bool:
        return key in self._ids

    # ---- persistence ---------------------------------------------------------------------

    @property
    def meta_path(self) -> Path:
        return self.directory / f"{self.name}.meta"

    def save(self) -> None:
        with self._lock:
            self.directory.mkdir(parents=True, exist_ok=True)
            old = self.directory / f"{self.name}-{self._generation}.faiss"
            self._generation += 1
            path = self.directory / f"{self.name}-{self._generation}.faiss"
            self._faiss.write_index(self._index, str(path))
            meta = {
                "model": self.model, "dims": self.dims, "file": path.name,
                "generation": self._generation, "next_id": self._next_id,
                "watermark": self.watermark, "ids": self._ids,
            }  # fmt: skip
            atomic_write(self.meta_path, pack(meta))
            with contextlib.suppress(FileNotFoundError):
                old.unlink()
            self.dirty = 0
            self.removed = 0

    def load(self) -> bool:
        """Load the saved index; False (and an empty index) when missing, damaged or stale."""
        try:
            meta = unpack(self.meta_path.read_bytes())
            if meta["model"] != self.model or meta["dims"] != self.dims:
                raise ValueError(f"saved for {meta['model']}/{meta['dims']}")
            index = self._faiss.read_index(str(self.directory / meta["file"]))
            if index.ntotal != len(meta["ids"]) or index.d != self.dims:
                raise ValueError("index and its meta disagree")
        except FileNotFoundError:
            return False
        except Exception as exc:
            log.warning("vector index for %s is damaged (%s): rebuilding it", self.model, exc)
            return False
        with self._lock:
            self._index = index
            self._ids = dict(meta["ids"])
            self._keys = {i: k for k, i in self._ids.items()}
            self._next_id = meta["next_id"]
            self._generation = meta["generation"]
            self.watermark = dict(meta["watermark"])
            if self._is_ivf():
                self._index.nprobe = self.nprobe
            self.dirty = 0
        return True
