"""Graph verbs in the library: node and edge ids, and a fact as one atomic write."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chrysalis import InvalidInput, Memory
from chrysalis.core.graph_ids import edge_id, node_id
from chrysalis.core.models import ID_PATTERN
from tests.conftest import exchange


def test_node_id_is_a_slug_of_the_name() -> None:
    assert node_id("Acme Corp") == "acme-corp"
    assert node_id("  Alice ") == "alice"
    assert node_id("Алиса").startswith("n-")  # nothing left of the slug: a hash
    assert node_id("Алиса") == node_id("Алиса") != node_id("Борис")


@given(st.text(min_size=1, max_size=200))
def test_every_name_makes_a_valid_node_id(name: str) -> None:
    import re

    assert re.fullmatch(ID_PATTERN, node_id(name))


def test_edge_id_names_the_fact_not_its_order() -> None:
    assert edge_id("a", "knows", "b") == edge_id("a", "knows", "b")
    assert edge_id("a", "knows", "b") != edge_id("b", "knows", "a")


def test_add_fact_makes_both_nodes_and_the_edge_in_one_op_batch(mem: Memory) -> None:
    edge = mem.add_fact("Alice", "works_at", "Acme Corp", evidence=["b1"])
    assert (edge.source, edge.target, edge.predicate) == ("alice", "acme-corp", "works_at")
    assert mem.get_node("alice").name == "Alice" and mem.get_node("acme-corp").type == "entity"
    assert mem.get_edge(edge.id).evidence == ["b1"]
    assert mem.store.commits == 1  # one write: nodes and edge together
    assert mem.version_vector() == {mem.replica_id: 3}


def test_the_same_fact_twice_and_on_two_laptops_is_one_edge(
    open_memory: Callable[..., Memory],
) -> None:
    a, b = open_memory("a"), open_memory("b")
    ea = a.add_fact("Alice", "prefers", "tea")
    assert a.add_fact("alice", "prefers", "Tea").id == ea.id
    eb = b.add_fact("Alice", "prefers", "tea")
    exchange(a, b)
    assert ea.id == eb.id
    assert [e.id for e in a.all_edges()] == [e.id for e in b.all_edges()] == [ea.id]
    assert a.state_digest() == b.state_digest()


def test_an_existing_node_keeps_its_type_and_name(mem: Memory) -> None:
    mem.add_node("alice", "person", name="Alice Smith")
    mem.add_fact("Alice", "knows", "Bob", type="person")
    assert mem.get_node("alice").name == "Alice Smith"
    assert mem.get_node("bob").type == "person"


@pytest.mark.parametrize(
    ("subject", "predicate", "object_", "message"),
    [
        ("", "knows", "Bob", "subject must be non-empty"),
        ("Alice", "knows", "   ", "object must be non-empty"),
        ("Alice", "", "Bob", "predicate"),
    ],
)
def test_a_bad_fact_writes_nothing(
    mem: Memory, subject: str, predicate: str, object_: str, message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        mem.add_fact(subject, predicate, object_)
    assert mem.version_vector() == {}


def test_a_fact_that_ends_before_it_starts_is_refused_and_writes_nothing(mem: Memory) -> None:
    # the zep-cloud mirror sent such an edge, Zep refused it (400), and every push after it
    # failed on the same batch: refused at the door instead
    with pytest.raises(InvalidInput, match=r"invalid_at \(1000.0\) is before valid_at \(2000.0\)"):
        mem.add_fact("Ada", "works_at", "Acme", valid_at=2000.0, invalid_at=1000.0)
    assert mem.version_vector() == {}
    mem.add_node("ada", "person")
    mem.add_node("acme", "org")
    before = mem.version_vector()
    with pytest.raises(InvalidInput, match="is before valid_at"):
        mem.add_edge("ada", "acme", "works_at", valid_at=2000.0, invalid_at=1000.0)
    assert mem.version_vector() == before
    assert mem.add_fact("Ada", "works_at", "Acme", valid_at=1000.0, invalid_at=1000.0).valid_at
