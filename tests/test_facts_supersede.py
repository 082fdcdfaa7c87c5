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
    assert ended.metadata == {"functional": True, "superseded_by": second.id}
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


def named(mem: Memory, name: str) -> list[str]:
    """The ids of the present nodes named ``name``."""
    return [n.id for n in mem.all_nodes() if n.name == name]


def holding(mem: Memory, predicate: str) -> dict[str, set[str]]:
    """Subject node id -> the objects of ``predicate`` that hold now."""
    out: dict[str, set[str]] = {}
    for e in mem.all_edges(include_invalid=False):
        if e.predicate == predicate:
            out.setdefault(e.source, set()).add(mem.get_node(e.target).name or e.target)
    return out


def test_a_hand_written_name_and_an_extracted_one_are_one_node_written_by_hand_first(
    open_memory: Callable[..., Memory],
) -> None:
    """The extractor writes on the person's node of the name (its slug id), so the speaker's
    extracted fact and the hand-written one share a subject, and the later one supersedes."""
    mem = open_memory("hand-first", extractor="rules")
    mem.add_fact("Sam", "works_at", "Initech", valid_at=1_500_000_000)
    mem.append_bead("I now work at Hooli.", source="Sam", ts=1_600_000_000)
    mem.append_bead("Hooli hired Sam's cousin Dev too.", source="Sam", ts=1_600_000_100)
    assert mem.wait_learned(timeout=30)
    assert named(mem, "Sam") == ["sam"]
    assert named(mem, "Hooli") and len(named(mem, "Hooli")) == 1
    assert holding(mem, "works_at") == {"sam": {"Hooli"}}  # Initech ended by the bead
    # And back: a later hand-written value ends the extracted one.
    mem.add_fact("Sam", "works_at", "Globex", valid_at=1_700_000_000)
    assert holding(mem, "works_at") == {"sam": {"Globex"}}


def test_a_hand_written_name_and_an_extracted_one_are_one_node_extracted_first(
    open_memory: Callable[..., Memory],
) -> None:
    """A hand-written fact naming what an extractor found is written on that node (its keyed
    id): one node, one group of facts, each superseding the other in time order."""
    mem = open_memory("extracted-first", extractor="rules")
    mem.append_bead("I work at Initech.", source="Sam", ts=1_500_000_000)
    assert mem.wait_learned(timeout=30)
    [sam] = named(mem, "Sam")
    [initech] = named(mem, "Initech")
    assert sam.startswith("n-")  # the extractor's keyed id
    mem.add_fact("Sam", "works_at", "Hooli", valid_at=1_600_000_000)
    assert named(mem, "Sam") == [sam] and named(mem, "Initech") == [initech]
    assert holding(mem, "works_at") == {sam: {"Hooli"}}
    # The object side too: a hand-written fact naming the extracted Initech reuses it.
    mem.add_fact("Ada", "works_at", "Initech", valid_at=1_600_000_000)
    assert named(mem, "Initech") == [initech]
    assert holding(mem, "works_at")["ada"] == {"Initech"}
    # A later statement in a bead ends the hand-written value.
    mem.append_bead("These days I work at Globex.", source="Sam", ts=1_700_000_000)
    assert mem.wait_learned(timeout=30)
    assert holding(mem, "works_at")[sam] == {"Globex"}


def test_names_that_only_look_alike_stay_apart(open_memory: Callable[..., Memory]) -> None:
    """Only the same name (its normal form) is the same node: "Sam" and "Samantha", a name
    with odd characters, and a quoted name give nodes of their own."""
    mem = open_memory("apart", extractor="rules")
    mem.append_bead("I work at Initech.", source="Sam", ts=1_500_000_000)
    assert mem.wait_learned(timeout=30)
    mem.add_fact("Samantha", "works_at", "Initech")
    mem.add_fact('Sam "the boss" \u200b', "works_at", "Initech")
    sams = {n.name for n in mem.all_nodes() if (n.name or "").startswith("Sam")}
    assert len(named(mem, "Sam")) == 1 and len(sams) == 3
