"""Hand-written facts supersede on one-value predicates, as extracted ones do (`chrysalis.write.supersede`):
through the library here; through the HTTP route and the CLI in test_daemon_facts_persona."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from chrysalis import Memory
from chrysalis.core.errors import InvalidInput
from chrysalis.core.validity import DEFAULT_FUNCTIONAL


def current(mem: Memory, subject: str, predicate: str) -> set[str]:
    """The objects of (subject, predicate) that hold now."""
    return {
        mem.get_node(e.target).name or e.target
        for e in mem.all_edges(include_invalid=False)
        if e.source == subject and e.predicate == predicate
    }


def test_a_new_employer_ends_the_old_one_and_history_keeps_both(mem: Memory) -> None:
    first = mem.add_fact("Priya", "works_at", "Northwind")
    second = mem.add_fact("Priya", "works_at", "Contoso Labs")
    assert current(mem, "priya", "works_at") == {"Contoso Labs"}
    ended = mem.get_edge(first.id)
    assert ended.invalid_at == second.valid_at is not None
    assert ended.metadata == {"functional": True}
    # The end is an op of its own (it shows in the log and in mirrors), not only a read.
    everything = {e.id: e for e in mem.all_edges(include_invalid=True)}
    assert set(everything) == {first.id, second.id}
    assert mem.all_edges(as_of=first.valid_at)[0].id == first.id


def test_moving_back_makes_the_first_city_current_again(mem: Memory) -> None:
    mem.add_fact("Tomasz", "lives_in", "Gdansk")
    mem.add_fact("Tomasz", "lives_in", "Rotterdam")
    mem.add_fact("Tomasz", "lives_in", "Gdansk")
    assert current(mem, "tomasz", "lives_in") == {"Gdansk"}


def test_restating_the_current_value_keeps_its_start_and_ends_nothing(mem: Memory) -> None:
    first = mem.add_fact("Ines", "married_to", "Rafael")
    again = mem.add_fact("Ines", "married_to", "Rafael")
    assert again.id == first.id and again.valid_at == first.valid_at
    assert mem.get_edge(first.id).invalid_at is None


def test_many_valued_predicates_and_other_subjects_are_left_alone(mem: Memory) -> None:
    mem.add_fact("Priya", "likes", "climbing")
    mem.add_fact("Priya", "likes", "chess")
    mem.add_fact("Priya", "works_at", "Northwind")
    mem.add_fact("Jonas", "works_at", "Initech")
    assert current(mem, "priya", "likes") == {"climbing", "chess"}
    assert current(mem, "priya", "works_at") == {"Northwind"}
    assert current(mem, "jonas", "works_at") == {"Initech"}
    assert "likes" not in DEFAULT_FUNCTIONAL
    assert mem.get_edge(mem.add_fact("Priya", "likes", "chess").id).metadata == {}


def test_stated_times_decide_which_is_later_not_the_order_of_writing(mem: Memory) -> None:
    # Recorded today, the older job goes in after the newer one: it must not end it.
    new = mem.add_fact("Olu", "works_at", "Umbrella", valid_at=1_700_000_000)
    old = mem.add_fact("Olu", "works_at", "Hooli", valid_at=1_600_000_000)
    assert mem.get_edge(old.id).invalid_at == 1_700_000_000
    assert mem.get_edge(new.id).invalid_at is None
    # Ended before it is written: its start stays unknown, and it ends nothing.
    past = mem.add_fact("Olu", "lives_in", "Lagos", invalid_at=1_500_000_000)
    assert past.valid_at is None and past.invalid_at == 1_500_000_000


def test_the_list_is_the_memorys_one_list(open_memory: Callable[..., Memory]) -> None:
    mem = open_memory("custom", functional=["drinks"])
    mem.add_fact("Kai", "drinks", "espresso")
    mem.add_fact("Kai", "drinks", "matcha")
    mem.add_fact("Kai", "works_at", "Acme")
    mem.add_fact("Kai", "works_at", "Globex")
    assert current(mem, "kai", "drinks") == {"matcha"}
    assert current(mem, "kai", "works_at") == {"Acme", "Globex"}
    assert mem.knowledge_writer.functional is mem.writer.functional


def test_a_bad_span_is_refused_and_writes_nothing(mem: Memory) -> None:
    held = mem.add_fact("Lea", "works_at", "Acme")
    before = mem.state_digest()
    with pytest.raises(InvalidInput, match=r"invalid_at .* is before valid_at"):
        mem.add_fact("Lea", "works_at", "Globex", valid_at=1_700_000_000, invalid_at=1_600_000_000)
    assert mem.state_digest() == before
    assert mem.get_edge(held.id).invalid_at is None


def test_a_hand_written_fact_and_an_extracted_one_agree_on_their_own_subjects(
    open_memory: Callable[..., Memory],
) -> None:
    """Both kinds end the earlier value of their own subject node; the extractor's node
    (a keyed id) and the hand-written one (the name's slug) are different nodes by design."""
    mem = open_memory("both", extractor="rules")
    mem.append_bead("I work at Initech.", source="Sam", ts=1_600_000_000)
    mem.append_bead("I now work at Hooli.", source="Sam", ts=1_700_000_000)
    assert mem.wait_learned(timeout=30)
    extracted = [e for e in mem.all_edges(include_invalid=False) if e.predicate == "works_at"]
    assert [mem.get_node(e.target).name for e in extracted] == ["Hooli"]
    mem.add_fact("Sam", "works_at", "Initech")
    mem.add_fact("Sam", "works_at", "Hooli")
    assert current(mem, "sam", "works_at") == {"Hooli"}
