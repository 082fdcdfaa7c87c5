"""Automatic importance: a bead written without one gets its novelty against the memory
(`chrysalis.search.novelty`, `chrysalis.write.intake`), decided at its origin and carried in its op."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from chrysalis import Memory
from chrysalis.core.errors import Conflict
from chrysalis.search import KeywordIndex, novelty

from .conftest import exchange

FAMILIAR = "the deploy pipeline runs on the staging cluster"


def test_novelty_counts_what_is_held_and_what_came_before_in_the_batch() -> None:
    held = {"deploy": 10, "cluster": 5}
    scores = novelty.novelty(
        [["deploy"], ["zebracorn"], ["zebracorn"], [], ["deploy", "zebracorn"]],
        lambda w: held.get(w, 0),
        total=10,
    )
    assert scores[0] == 0.0  # every item holds it
    assert scores[1] == 1.0  # no item holds it
    assert 0.0 < scores[2] < 1.0  # the bead before it does
    assert scores[3] == 0.0  # no content words at all
    assert scores[4] == pytest.approx((0.0 + scores[2]) / 2, abs=0.05)
    assert novelty.novelty([["anything"]], lambda w: 0, total=0) == [1.0]  # an empty memory
    assert [novelty.importance(s) for s in (0.0, 0.5, 1.0)] == [0.1, 0.5, 0.9]


def test_familiar_words_weigh_less_than_new_ones(mem: Memory) -> None:
    mem.append_beads([{"content": f"{FAMILIAR}, run {i}"} for i in range(30)])
    mem.wait_indexed(timeout=30)
    familiar = mem.append_bead("the deploy pipeline on the staging cluster again")
    new = mem.append_bead("Quokkaplex adopted a zebracorn in Reykjavik")
    empty = mem.append_bead("it is what it is")  # stop words only: nothing to be new
    chosen = mem.append_bead("the deploy pipeline, once more", importance=0.95)
    assert familiar.importance < 0.3, familiar.importance
    assert new.importance == novelty.CEILING
    assert empty.importance == novelty.FLOOR
    assert chosen.importance == 0.95  # given: kept as given
    assert mem.get_bead(new.id).importance == new.importance  # stored, not recomputed


def test_a_bulk_write_counts_its_own_earlier_beads(mem: Memory) -> None:
    beads = mem.append_beads([{"content": "Luna the cat sleeps on the piano"}] * 6)
    # The memory was empty; every repeat holds nothing the batch had not said before it.
    assert [b.importance for b in beads] == [novelty.CEILING] + [novelty.FLOOR] * 5


def test_a_retry_without_importance_is_the_same_bead(mem: Memory) -> None:
    first = mem.append_bead("the quokkaplex release is on Friday", id="r1")
    mem.wait_indexed(timeout=30)  # the memory now holds it: judged again, it would be less new
    again = mem.append_bead("the quokkaplex release is on Friday", id="r1")
    assert again.importance == first.importance
    with pytest.raises(Conflict):  # a different importance, said so, is another bead
        mem.append_bead("the quokkaplex release is on Friday", id="r1", importance=0.2)


def test_every_replica_holds_the_origins_judgment(open_memory: Callable[..., Memory]) -> None:
    a, b = open_memory("a"), open_memory("b")
    b.append_beads([{"content": f"Quokkaplex notes, day {i}"} for i in range(20)])
    b.wait_indexed(timeout=30)
    bead = a.append_bead("Quokkaplex shipped the zebracorn")  # new to a, familiar to b
    exchange(a, b)
    assert bead.importance == novelty.CEILING
    assert b.get_bead(bead.id).importance == bead.importance
    assert a.state_digest() == b.state_digest()


def test_document_frequency_counts_rows_waiting_for_a_commit(tmp_path: Path) -> None:
    index = KeywordIndex(tmp_path / "kw")
    try:
        index.apply([("bead:a", "quokka garden", {}), ("bead:b", "quokka tea", {})], [], {"r": 2})
        assert index.doc_freq("quokka") == 2  # both wait in the overlay
        index.apply([("bead:b", "plain tea", {})], [], {"r": 3})  # b again, without the word
        assert (index.doc_freq("quokka"), index.doc_freq("tea")) == (1, 1)
        assert index.content_terms("The Quokkas and the gardens") == ["quokka", "garden"]
    finally:
        index.close()
