"""Selecting beads by what they are (`chrysalis.forget.select`) and forgetting them in one commit."""

from __future__ import annotations

from pathlib import Path

import pytest

from chrysalis import Memory
from chrysalis.core.errors import InvalidInput, NotFound, SelectionChanged
from chrysalis.forget.select import Selector, preview
from chrysalis.ingest.files import ingest_path

T0 = 1_700_000_000.0


@pytest.fixture
def seeded(mem: Memory) -> Memory:
    rows = [
        ("a1", "the user prefers green tea", "s1", "user", ["pref"], 0),
        ("a2", "assistant suggests teas from Japan", "s1", "assistant", [], 10),
        ("a3", "deploys go out on Tuesdays", "ops", "note", ["process"], 20),
        ("a4", "green light for the deploy", "ops", "user", ["pref", "process"], 30),
        ("a5", "no session, about coffee", None, "user", [], 40),
    ]
    mem.append_beads(
        [
            {"id": i, "content": c, "session_id": s, "role": r, "tags": t, "ts": T0 + dt}
            for i, c, s, r, t, dt in rows
        ]
    )
    return mem


def ids(mem: Memory, **selector: object) -> list[str]:
    return mem.select_beads(selector).ids


def test_each_field_selects(seeded: Memory) -> None:
    assert ids(seeded, session_id="s1") == ["a1", "a2"]
    assert ids(seeded, tag="pref") == ["a1", "a4"]
    assert ids(seeded, role="user") == ["a1", "a4", "a5"]
    assert ids(seeded, after=T0 + 20) == ["a4", "a5"]  # strictly after
    assert ids(seeded, before=T0 + 20) == ["a1", "a2"]  # strictly before
    assert ids(seeded, after="2023-11-14T22:13:30+00:00") == ["a3", "a4", "a5"]  # ISO 8601
    assert ids(seeded, session_id="nobody") == []


def test_newest_walks_backwards_and_can_stop_at_the_limit(seeded: Memory) -> None:
    newest = seeded.select_beads({"role": "user"}, limit=2, newest=True)
    assert (newest.ids, newest.matched) == (["a5", "a4"], 3)  # newest first; all counted
    quick = seeded.select_beads({"role": "user"}, limit=2, newest=True, count_all=False)
    assert (quick.ids, quick.matched) == (["a5", "a4"], 2)  # stopped once it had two
    bounded = seeded.select_beads({"tag": "pref", "before": T0 + 30}, newest=True)
    assert bounded.ids == ["a1"]  # the time bounds hold walking backwards too
    in_session = seeded.select_beads({"session_id": "ops", "after": T0 + 20}, newest=True)
    assert in_session.ids == ["a4"]


def test_query_needs_every_word_stemmed_not_similarity(seeded: Memory) -> None:
    assert ids(seeded, query="tea") == ["a1", "a2"]  # "teas" too: stemmed
    assert ids(seeded, query="GREEN tea") == ["a1"]  # every word, any case
    assert ids(seeded, query="green") == ["a1", "a4"]
    assert ids(seeded, query="the green") == ["a1", "a4"]  # stop words count too
    assert ids(seeded, query="beverage") == []  # no semantic match, ever


def test_fields_combine_with_and(seeded: Memory) -> None:
    assert ids(seeded, session_id="ops", tag="pref") == ["a4"]
    assert ids(seeded, query="green", role="user", session_id="ops") == ["a4"]
    assert ids(seeded, tag="process", before=T0 + 25, after=T0 + 5) == ["a3"]
    assert ids(seeded, session_id="s1", role="note") == []


def test_an_empty_or_impossible_selector_is_refused(seeded: Memory) -> None:
    for bad in ({}, {"session_id": None}):
        with pytest.raises(InvalidInput, match="empty selector would forget every bead"):
            seeded.select_beads(bad)
        with pytest.raises(InvalidInput, match="empty selector"):
            seeded.forget_where(bad)
    with pytest.raises(InvalidInput, match="has no words"):
        seeded.select_beads({"query": "?!"})
    with pytest.raises(InvalidInput, match="after must be earlier than before"):
        seeded.select_beads({"after": T0 + 5, "before": T0})
    with pytest.raises(InvalidInput, match="selector"):
        seeded.select_beads({"colour": "red"})
    with pytest.raises(InvalidInput, match="role"):
        seeded.select_beads({"role": "robot"})
    assert len(list(seeded.all_beads())) == 5


def test_the_selection_is_bounded_and_counts_the_rest(mem: Memory) -> None:
    mem.append_beads([{"content": f"bulk {n}", "session_id": "bulk"} for n in range(30)])
    first = mem.select_beads({"session_id": "bulk"}, limit=10)
    assert len(first.ids) == 10 and first.matched == 30 and first.more
    assert first.ids == [b.id for b in mem.last_beads(30, "bulk")][:10]  # the oldest
    forgotten, sel = mem.forget_where(
        {"session_id": "bulk"}, expect=30, expect_digest=first.digest, limit=10
    )
    assert forgotten == first.ids and sel.more
    rest = mem.select_beads(Selector(session_id="bulk"))
    assert rest.matched == 20 and not rest.more
    assert rest.digest == sel.rest_digest  # what confirms the next batch
    with pytest.raises(InvalidInput, match="limit"):
        mem.select_beads({"session_id": "bulk"}, limit=10_001)


def test_forget_where_checks_the_expected_beads(seeded: Memory) -> None:
    seen = seeded.select_beads({"session_id": "s1"})
    with pytest.raises(SelectionChanged, match="2 bead\\(s\\) match now, 1 were expected"):
        seeded.forget_where({"session_id": "s1"}, expect=1, expect_digest=seen.digest)
    with pytest.raises(InvalidInput, match="a count\\) alone cannot say which beads"):
        seeded.forget_where({"session_id": "s1"}, expect=2)
    assert ids(seeded, session_id="s1") == ["a1", "a2"]  # nothing forgotten
    forgotten, sel = seeded.forget_where({"session_id": "s1"}, expect=2, expect_digest=seen.digest)
    assert forgotten == ["a1", "a2"] and sel.matched == 2 and not sel.more
    with pytest.raises(NotFound, match="forgotten"):
        seeded.get_bead("a1")
    seeded.wait_indexed()
    assert ids(seeded, query="tea") == []  # the keyword index forgot them too
    empty = seeded.select_beads({"session_id": "s1"})
    assert seeded.forget_where({"session_id": "s1"}, expect_digest=empty.digest)[0] == []


def test_a_preview_digest_forgets_only_the_beads_it_saw(seeded: Memory) -> None:
    """Issue 28 C8: preview {a1, a4}; another client forgets a1 and writes a matching a6;
    the confirm with the preview's digest forgets nothing (the count is the same)."""
    seen = seeded.select_beads({"tag": "pref"})
    assert seen.ids == ["a1", "a4"]
    seeded.forget("a1")
    seeded.append_bead("a matching newcomer", id="a6", tags=["pref"], ts=T0 + 5)
    with pytest.raises(SelectionChanged, match="not the ones the preview showed"):
        seeded.forget_where({"tag": "pref"}, expect_digest=seen.digest)
    assert ids(seeded, tag="pref") == ["a6", "a4"]  # nothing forgotten, a6 least of all
    again = seeded.select_beads({"tag": "pref"})
    assert again.digest != seen.digest and again.matched == seen.matched
    assert seeded.forget_where({"tag": "pref"}, expect_digest=again.digest)[0] == ["a6", "a4"]


def test_forget_many_is_one_commit_and_idempotent(seeded: Memory) -> None:
    ops_before = seeded.stats()["ops"]
    assert seeded.writer.forget_many(["a1", "a3", "a1"]) == ["a1", "a3"]
    assert seeded.stats()["ops"] == ops_before + 2  # one bead.forget op each
    assert seeded.writer.forget_many(["a1", "a3"]) == []  # already forgotten: no-op
    with pytest.raises(NotFound, match="no bead 'nope'"):
        seeded.writer.forget_many(["a2", "nope"])
    seeded.get_bead("a2")  # all or nothing
    with pytest.raises(InvalidInput):
        seeded.writer.forget_many(["../bad"])
    with pytest.raises(InvalidInput, match="not one string"):
        seeded.writer.forget_many("a2")


def test_forget_many_replicates_as_plain_forget_ops(open_memory: object) -> None:
    from tests.conftest import exchange

    a: Memory = open_memory("a")  # type: ignore[operator]
    b: Memory = open_memory("b")  # type: ignore[operator]
    a.append_beads([{"id": f"x{n}", "content": f"x {n}", "session_id": "x"} for n in range(3)])
    exchange(a, b)
    a.forget_where({"session_id": "x"})
    exchange(a, b)
    assert b.select_beads({"session_id": "x"}).matched == 0
    assert a.state_digest() == b.state_digest()


def test_path_selects_a_file_or_everything_under_a_directory(mem: Memory, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "a.md").write_text("# A\n\nalpha text\n\n# B\n\nbeta text\n")
    (docs / "sub" / "c.md").write_text("# C\n\ngamma text\n")
    (tmp_path / "docs-other.md").write_text("# D\n\ndelta text\n")  # a prefix, not under docs/
    ingest_path(mem, docs)
    ingest_path(mem, tmp_path / "docs-other.md")
    mem.append_bead("not ingested", session_id="docs")
    a_md = mem.select_beads({"path": str(docs / "a.md")})
    assert a_md.matched == 2
    assert mem.select_beads({"path": str(docs)}).matched == 3
    assert mem.select_beads({"path": str(docs) + "/"}).matched == 3
    assert mem.select_beads({"path": str(docs / "sub" / ".." / "a.md")}).ids == a_md.ids
    link = tmp_path / "link"
    link.symlink_to(docs)
    assert mem.select_beads({"path": str(link / "a.md")}).ids == a_md.ids  # resolved as ingest
    assert mem.select_beads({"path": str(tmp_path / "nothing-here")}).matched == 0
    forgotten, _ = mem.forget_where({"path": str(docs / "a.md")})
    assert len(forgotten) == 2
    assert mem.select_beads({"path": str(tmp_path)}).matched == 2


def test_preview_shows_the_start_of_each_bead(seeded: Memory) -> None:
    seeded.append_bead("word " * 40, id="long", session_id="s1")
    shown = preview(seeded.reader, ["a1", "long"])
    assert shown[0] == {"id": "a1", "ts": T0, "session_id": "s1", "role": "user",
                        "preview": "the user prefers green tea"}  # fmt: skip
    assert len(shown[1]["preview"]) == 80 and shown[1]["preview"].endswith("…")
