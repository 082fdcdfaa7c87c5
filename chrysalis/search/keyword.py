"""BM25 keyword search over item text, in SQLite FTS5.

Derived from LMDB and disposable: the index remembers the version vector of the op log it
reflects (its watermark), catches up from there, and is rebuilt from LMDB when its file is
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

from ..events import split_key
from ..keys import pack, unpack
from ..models import Filters

log = logging.getLogger(__name__)

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
# Words too common to say anything on their own; FTS5 has no stop list of its own.
_STOP = """a an and are as at be but by did do does for from had has have he her him his how i
if in into is it its me my no not of on or our she so than that the their them then there these
they this to was we were what when where which who whom why will with would you your"""
STOP_WORDS = frozenset(_STOP.split())
SCHEMA = 3  # 3: document frequencies from fts5vocab, no table of our own


def common_threshold(total: int) -> float:
    """Document frequency above which a query term is skipped: a fifth of the documents (never
    under 100: small memories rank everything); in a large one, 2 % or 1,000 documents,
    whichever is more (bounds the rows an OR query ranks: ~3 ms per 2,000 here)."""
    return max(100, min(0.2 * total, max(0.02 * total, 1000)))


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
        self._df: dict[str, tuple[int, int]] = {}  # stem -> (documents, total when counted)
        self._scratch = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self._scratch.executescript(
            "CREATE VIRTUAL TABLE q USING fts5(text, tokenize='porter unicode61');"
            "CREATE VIRTUAL TABLE qv USING fts5vocab(q, 'instance');"
        )

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
                CREATE VIRTUAL TABLE IF NOT EXISTS vocab USING fts5vocab(fts, 'row');
                CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v BLOB);
                """
            )
            db.execute("SELECT count(*) FROM fts").fetchone()
            db.execute("PRAGMA quick_check").fetchone()
            version = db.execute("SELECT v FROM meta WHERE k='schema'").fetchone()
            filled = db.execute("SELECT count(*) FROM items").fetchone()[0]
            if filled and (version is None or version[0] != SCHEMA):
                raise sqlite3.DatabaseError("written by another version")
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
                for key in deletes:
                    row = db.execute("SELECT rowid FROM items WHERE key=?", (key,)).fetchone()
                    if row is not None:
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
                        db.execute("DELETE FROM fts WHERE rowid=?", (rowid,))
                    db.execute("INSERT INTO fts(rowid, text) VALUES (?, ?)", (rowid, text))
                db.execute(
                    "INSERT OR REPLACE INTO meta(k, v) VALUES ('watermark', ?)", (pack(watermark),)
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            self._total = int(db.execute("SELECT count(*) FROM items").fetchone()[0])
            if erased:
                self._df.clear()  # no count of a forgotten text's words survives it
                # merge segments so deleted text is gone from the file, not just hidden
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
        if self._total < 100:
            return terms  # nothing is common yet: skip the lookups
        stems = self._stems(terms)
        return [t for t in terms if self._doc_count(stems.get(t, t)) <= limit]

    def _stems(self, terms: list[str]) -> dict[str, str]:
        """Each term as FTS5's tokenizer indexes it (porter stemming), read back from a
        scratch FTS5 table with the same tokenizer: exactly what a MATCH of it looks up."""
        db = self._scratch
        db.execute("BEGIN")
        try:
            db.executemany("INSERT INTO q(rowid, text) VALUES (?, ?)", enumerate(terms))
            rows = db.execute("SELECT doc, term FROM qv").fetchall()
        finally:
            db.execute("ROLLBACK")
        return {terms[doc]: term for doc, term in rows}

    def _doc_count(self, stem: str) -> int:
        """Documents holding ``stem``, from fts5vocab. Counting walks the term's doclist
        (~1 ms for one in 40 % of 100k rows), so counts are kept until the index grows or
        shrinks by 5 %: a frequency that coarse is all the common-word cut needs."""
        cached = self._df.get(stem)
        if cached is not None and abs(self._total - cached[1]) <= 0.05 * cached[1]:
            return cached[0]
        row = self._db.execute("SELECT doc FROM vocab WHERE term = ?", (stem,)).fetchone()
        n = 0 if row is None else int(row[0])
        if len(self._df) > 50_000:
            self._df.clear()
        self._df[stem] = (n, self._total)
        return n

    @staticmethod
    def match_expression(terms: Sequence[str]) -> str | None:
        """An FTS5 query that ORs the words (quoted: user text is never FTS syntax)."""
        return " OR ".join(f'"{w}"' for w in terms) or None

    def search(self, query: str, k: int, filters: Filters | None = None) -> list[KeywordHit]:
        """The ``k`` best items by BM25 for ``query`` (higher score is better) among those
        that pass ``filters``: bead fields apply to beads, ``kinds`` to every item."""
        terms = self.query_terms(query)
        if not terms or k <= 0:
            return []
        filters_sql, params = _filter_sql(filters or Filters())
        with self._lock:
            selective = self._selective(terms)
            if selective:
                sql = (
                    "SELECT items.key, -bm25(fts) FROM fts JOIN items ON items.rowid = fts.rowid "
                    f"WHERE fts MATCH ?{filters_sql} ORDER BY bm25(fts) LIMIT ?"
                )
                rows = self._db.execute(sql, [self.match_expression(selective), *params, k])
            else:
                # Only words found nearly everywhere: ranking would touch most rows and say
                # little. The newest documents holding all of them, by rowid, which FTS5 walks
                # backwards without sorting (in a subquery, so the join does not force a sort).
                sql = (
                    "SELECT items.key, 1.0 FROM (SELECT rowid AS r FROM fts WHERE fts MATCH ? "
                    "ORDER BY rowid DESC LIMIT ?) JOIN items ON items.rowid = r "
                    f"WHERE 1{filters_sql}"
                )
                expression = " AND ".join(f'"{w}"' for w in terms)
                depth = 4 * k if not filters_sql else 100 * k  # filters apply after the LIMIT
                rows = self._db.execute(sql, [expression, depth, *params])
            found = rows.fetchall()[:k]
        return [KeywordHit(key, float(score), common=not selective) for key, score in found]

    @staticmethod
    def all_words(query: str) -> list[str]:
        """Every distinct word of ``query``, lowercased: stop words are kept (a forget by query
        must mean every word it was given)."""
        return list(dict.fromkeys(w.lower() for w in _TOKEN.findall(query)))

    def match_all(self, query: str) -> list[str]:
        """The keys of every bead whose indexed text holds every word of ``query`` (as FTS5
        indexes it: case-insensitive, stemmed, so "tea" finds "teas"), unranked and unbounded:
        what a forget by query selects, predictably, where `search` ranks the best k."""
        words = self.all_words(query)
        if not words:
            return []
        sql = (
            "SELECT items.key FROM fts JOIN items ON items.rowid = fts.rowid "
            "WHERE fts MATCH ? AND items.kind = 'bead'"
        )
        expression = " AND ".join(f'"{w}"' for w in words)  # quoted: never FTS syntax
        with self._lock:
            return [key for (key,) in self._db.execute(sql, (expression,)).fetchall()]

    @property
    def size(self) -> int:
        """Items indexed (as of the last apply); cheap."""
        return self._total

    def count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM items").fetchone()[0])

    def has(self, key: str) -> bool:
        """Whether item ``key`` (``bead:<id>``) is indexed."""
        with self._lock:
            row = self._db.execute("SELECT 1 FROM items WHERE key=?", (key,)).fetchone()
        return row is not None

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
            self._scratch.close()


_BEAD_FILTERS = (
    ("items.session = ?", "session_id"),
    ("items.role = ?", "role"),
    ("items.ts >= ?", "since"),
    ("items.ts <= ?", "until"),
    ("items.importance >= ?", "min_importance"),
)


def _filter_sql(f: Filters) -> tuple[str, list[Any]]:
    """The SQL conditions (each starting with AND) and their parameters for ``f``: bead
    filters go into the query, so the top k are the top k among what passes them."""
    where: list[str] = []
    args: list[Any] = []
    for clause, name in _BEAD_FILTERS:
        value = getattr(f, name)
        if value is not None:
            where.append(f"(items.kind != 'bead' OR {clause})")
            args.append(value)
    if f.tags:
        tag_match = " OR ".join("(' ' || items.tags || ' ') LIKE ?" for _ in f.tags)
        where.append(f"(items.kind != 'bead' OR {tag_match})")
        args.extend(f"% {t} %" for t in f.tags)
    if f.kinds:
        where.append(f"items.kind IN ({','.join('?' * len(f.kinds))})")
        args.extend(f.kinds)
    return "".join(f" AND {w}" for w in where), args
