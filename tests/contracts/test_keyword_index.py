"""The keyword index contract (chrysalis/search/keyword.py `KeywordIndex`), in every state a
row can be in: ``pending`` (applied, waiting for a commit: searched in the overlay),
``committed`` (in tantivy's segments), ``reopened`` (committed, closed and opened again).
Repair, legacy files and concurrency are in tests/test_keyword.py.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chrysalis.core.models import Filters
from chrysalis.search import KeywordIndex

Row = tuple[str, str, dict[str, Any]]
SECRET = "QUOKKAZEBRA987"
WORDS = "green tea parser slow alice drinks morning vault code toml file reads coffee the a of"

ROWS: list[Row] = [
    ("bead:tea", "Alice drinks green teas every morning", {"session": "s1", "role": "user",
     "ts": 10.0, "importance": 0.9, "tags": ["food"]}),
    ("bead:code", "the parser reads TOML files slowly", {"session": "s2", "role": "assistant",
     "ts": 20.0, "importance": 0.1, "tags": []}),
    ("bead:both", "green tea helps when the parser is slow", {"session": "s1", "role": "user",
     "ts": 30.0, "importance": 0.5, "tags": ["food", "work"]}),
    ("node:tea", "green tea", {}),
    ("bead:secret", f"the vault code is {SECRET} today", {"session": "s3", "role": "user",
     "ts": 40.0, "importance": 0.2, "tags": []}),
]  # fmt: skip


def keys(hits: list[Any]) -> list[str]:
    return [h.key for h in hits]


def index_bytes(path: Path) -> bytes:
    out = []
    for p in path.rglob("*"):
        with contextlib.suppress(FileNotFoundError, IsADirectoryError):
            out.append(p.read_bytes())
    return b"".join(out)


class Index:
    """A `KeywordIndex` whose every `apply` leaves the rows in one state."""

    def __init__(self, path: Path, state: str) -> None:
        self.path, self.state = path, state
        self.kw = KeywordIndex(path)

    def apply(self, rows: list[Row], deletes: list[str], watermark: dict[str, int]) -> None:
        self.kw.apply(rows, deletes, watermark)
        if self.state == "committed":
            self.kw.commit()
        elif self.state == "reopened":
            self.reopen()

    def reopen(self) -> None:
        self.kw.close()
        self.kw = KeywordIndex(self.path)


@pytest.fixture(params=["pending", "committed", "reopened"])
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Index]:
    ix = Index(tmp_path / "kw", request.param)
    ix.apply(ROWS, [], {"a": len(ROWS)})
    assert len(ix.kw._pending) == (len(ROWS) if ix.state == "pending" else 0)  # as named
    yield ix
    ix.kw.close()


def test_search_finds_rows_by_their_words_best_first(index: Index) -> None:
    kw = index.kw
    assert set(keys(kw.search("green tea", 10))) == {"bead:tea", "bead:both", "node:tea"}
    assert keys(kw.search("TEAS", 10)) == keys(kw.search("tea", 10))  # case and stem
    hits = kw.search("green tea parser", 2)
    assert len(hits) == 2 and hits[0].score >= hits[1].score > 0
    assert keys(hits)[0] == "bead:both"  # the only row holding all three words
    assert kw.search("nothing holds this", 5) == [] and kw.search("tea", 0) == []
    assert kw.has("bead:tea") and not kw.has("bead:nope") and kw.count() == len(ROWS)


def test_an_upsert_replaces_text_and_fields(index: Index) -> None:
    index.apply([("bead:tea", "Alice drinks black coffee", {"session": "s9"})], [], {"a": 6})
    kw = index.kw
    assert "bead:tea" not in keys(kw.search("green teas morning", 10))
    assert keys(kw.search("coffee", 10)) == ["bead:tea"]
    assert keys(kw.search("coffee", 10, Filters(session_id="s9"))) == ["bead:tea"]
    assert keys(kw.search("coffee", 10, Filters(session_id="s1"))) == []
    assert kw.count() == len(ROWS)


def test_filters_narrow_beads_and_pass_other_kinds(index: Index) -> None:
    kw = index.kw
    assert set(keys(kw.search("tea", 10, Filters(session_id="s1")))) == {
        "bead:tea", "bead:both", "node:tea"}  # fmt: skip
    assert set(keys(kw.search("tea", 10, Filters(tags=["work"])))) == {"bead:both", "node:tea"}
    assert keys(kw.search("tea", 10, Filters(since=25.0, kinds=["bead"]))) == ["bead:both"]
    assert keys(kw.search("tea", 10, Filters(min_importance=0.8, kinds=["bead"]))) == ["bead:tea"]
    assert keys(kw.search("parser", 10, Filters(role="assistant", kinds=["bead"]))) == ["bead:code"]
    assert keys(kw.search("tea", 10, Filters(kinds=["node"]))) == ["node:tea"]
    assert sorted(kw.match_all("green tea")) == ["bead:both", "bead:tea"]  # beads only
    assert kw.match_all("green coffee") == []


def test_a_delete_leaves_no_trace_and_the_rest_stays(index: Index) -> None:
    assert index.kw.has_text(SECRET)
    index.apply([], ["bead:secret"], {"a": 6})
    kw = index.kw
    assert kw.search(SECRET, 10) == [] and kw.match_all("vault code") == []
    assert not kw.has("bead:secret") and not kw.has_text(SECRET) and not kw.has_text("vault")
    assert SECRET.encode() not in index_bytes(index.path)
    assert kw.count() == len(ROWS) - 1
    assert set(keys(kw.search("green tea", 10))) == {"bead:tea", "bead:both", "node:tea"}


def test_apply_is_idempotent_and_a_reopen_keeps_everything(index: Index) -> None:
    index.apply(ROWS, [], {"a": 5})  # again, as after a crash before the caller saw it
    index.apply([], ["bead:code", "bead:code"], {"a": 6})
    before = {q: keys(index.kw.search(q, 10)) for q in ("green tea", "parser", SECRET)}
    index.reopen()
    kw = index.kw
    assert kw.watermark() == {"a": 6} and kw.count() == len(ROWS) - 1
    assert {q: keys(kw.search(q, 10)) for q in before} == before
    assert not kw.has("bead:code") and kw.has("bead:tea")


def test_the_same_rows_score_the_same_waiting_or_committed(tmp_path: Path) -> None:
    """A row just written (scored in the overlay) and the same row committed (scored by
    tantivy) get the same BM25 score, within 2 %, among hundreds committed before it."""
    rng = random.Random(3)
    words = WORDS.split()

    def text() -> str:
        return " ".join(rng.choice(words) for _ in range(rng.randint(3, 12)))

    old = [(f"bead:b{i}", text(), {}) for i in range(300)]
    new = [(f"bead:n{i}", text(), {}) for i in range(5)]
    waiting, committed = KeywordIndex(tmp_path / "w"), KeywordIndex(tmp_path / "c")
    try:
        for kw in (waiting, committed):
            for start in range(0, 300, 100):  # as the indexer writes: in batches
                kw.apply(old[start : start + 100], [], {"a": start + 100})
                kw.commit()
            kw.apply(new, [], {"a": 305})
        committed.commit()
        for query in ("green tea", "parser slow", "alice coffee", "vault code"):
            w = {h.key: h.score for h in waiting.search(query, 400)}
            c = {h.key: h.score for h in committed.search(query, 400)}
            assert w.keys() == c.keys(), query
            for key, _, _ in new:
                if key in c:
                    assert w[key] == pytest.approx(c[key], rel=0.02), (query, key)
    finally:
        waiting.close()
        committed.close()
