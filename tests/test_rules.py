"""Each CRDT rule's hard case, between real replicas (separate data dirs)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from chrysalis import Memory, NotFound
from chrysalis.core.clock import hlc_pack

from .conftest import exchange


@pytest.fixture
def pair(open_memory: Callable[..., Memory]) -> tuple[Memory, Memory]:
    return open_memory("a", replica_id="laptop-a"), open_memory("b", replica_id="laptop-b")


def test_concurrent_add_and_remove_add_wins(pair: tuple[Memory, Memory]) -> None:
    a, b = pair
    a.add_node("n", "topic", name="first")
    exchange(a, b)
    b.remove_node("n")  # B saw only A's first add
    a.add_node("n", "topic", name="second")  # concurrently, A adds again
    exchange(a, b)
    for m in (a, b):
        assert m.get_node("n").name == "second"
    assert a.state_digest() == b.state_digest()


def test_concurrent_edge_add_and_remove_add_wins(pair: tuple[Memory, Memory]) -> None:
    a, b = pair
    for n in ("x", "y"):
        a.add_node(n, "thing")
    e = a.add_edge("x", "y", "rel", id="e1")
    exchange(a, b)
    b.remove_edge(e.id)
    a.add_edge("x", "y", "rel", id="e1", weight=2.0)
    exchange(a, b)
    assert a.get_edge("e1").weight == b.get_edge("e1").weight == 2.0
    assert a.state_digest() == b.state_digest()


def test_remove_then_re_add(pair: tuple[Memory, Memory]) -> None:
    a, b = pair
    a.add_node("n", "topic", labels=["old"])
    a.remove_node("n")
    exchange(a, b)
    with pytest.raises(NotFound):
        b.get_node("n")
    b.add_node("n", "topic", labels=["new"])
    exchange(a, b)
    assert a.get_node("n").labels == b.get_node("n").labels == ["new"]
    assert a.state_digest() == b.state_digest()


def test_remove_arriving_before_the_add_it_saw(open_memory: Callable[..., Memory]) -> None:
    a, b, c = (open_memory(n, replica_id=n) for n in ("a", "b", "c"))
    a.add_node("n", "topic")
    exchange(a, b)
    b.remove_node("n")
    c.apply_ops(b.ops_since({"a": 1}))  # C hears B's remove before A's add
    c.apply_ops(a.ops_since({}))
    with pytest.raises(NotFound):
        c.get_node("n")
    exchange(a, b, c)
    assert a.state_digest() == b.state_digest() == c.state_digest()


def test_edge_whose_node_is_removed_is_hidden_not_lost(pair: tuple[Memory, Memory]) -> None:
    a, b = pair
    a.add_node("x", "thing")
    a.add_node("y", "thing")
    a.add_edge("x", "y", "rel", id="e1")
    exchange(a, b)
    b.remove_node("y")
    exchange(a, b)
    assert a.all_edges() == [] and a.neighbors("x") == []
    a.add_node("y", "thing")
    exchange(a, b)
    assert [e.id for e in b.all_edges()] == ["e1"]


def skewed(mem: Memory, offset_ms: int) -> None:
    """Shift a replica's wall clock (the writer thread reads it through the HLC)."""
    import time

    mem.store.clock._wall_ms = lambda: time.time_ns() // 1_000_000 + offset_ms


def test_lww_under_skewed_clocks_the_write_that_saw_the_other_wins(
    pair: tuple[Memory, Memory],
) -> None:
    a, b = pair
    skewed(a, 10 * 60 * 1000)  # A's clock runs 10 minutes fast
    a.update_persona(name="from A (fast clock)")
    exchange(a, b)
    b.update_persona(name="from B, after seeing A")  # B's wall clock is behind A's stamp
    exchange(a, b)
    assert a.get_persona().name == b.get_persona().name == "from B, after seeing A"


def test_lww_the_write_that_saw_the_other_wins_even_past_the_clamp(
    pair: tuple[Memory, Memory],
) -> None:
    a, b = pair
    skewed(a, 365 * 24 * 3600 * 1000)  # a year fast: beyond max drift, B clamps on receipt
    a.update_persona(description="from the future")
    exchange(a, b)
    assert b.store.clock.clamped >= 1
    b.update_persona(description="seen and replaced")
    exchange(a, b)
    assert a.get_persona().description == b.get_persona().description == "seen and replaced"


def test_lww_concurrent_writes_pick_one_winner_everywhere(pair: tuple[Memory, Memory]) -> None:
    a, b = pair
    a.update_persona(name="A")
    b.update_persona(name="B")
    exchange(a, b)
    assert a.get_persona().name == b.get_persona().name
    assert a.state_digest() == b.state_digest()


def test_two_laptops_adding_different_goals_keep_both(pair: tuple[Memory, Memory]) -> None:
    a, b = pair
    a.update_persona(goals=["ship v1"])
    exchange(a, b)
    a.update_persona(goals=[*a.get_persona().goals, "write docs"])
    b.update_persona(goals=[*b.get_persona().goals, "fix bugs"])
    exchange(a, b)
    assert (
        sorted(a.get_persona().goals)
        == sorted(b.get_persona().goals)
        == ["fix bugs", "ship v1", "write docs"]
    )
    # and a drop removes only what its writer saw
    b.update_persona(goals=["ship v1"])
    a.update_persona(goals=[*a.get_persona().goals, "rest"])
    exchange(a, b)
    assert sorted(a.get_persona().goals) == sorted(b.get_persona().goals) == ["rest", "ship v1"]


def test_forget_of_a_bead_another_replica_has_not_seen(open_memory: Callable[..., Memory]) -> None:
    a, b, c = (open_memory(n, replica_id=n) for n in ("a", "b", "c"))
    bead = a.append_bead("the launch code is 0000", session_id="s")
    exchange(a, b)
    b.forget(bead.id)
    c.apply_ops(b.ops_since({"a": 1}))  # C gets the forget first...
    c.apply_ops(a.ops_since({}))  # ...then the original add, full content
    exchange(a, b, c)
    for m in (a, b, c):
        with pytest.raises(NotFound):
            m.get_bead(bead.id)
        assert m.last_beads(10) == []
        add = m.log_op("a", 1)
        assert add is not None and add["data"] == {"id": bead.id, "ts": bead.ts, "erased": True}
    assert a.state_digest() == b.state_digest() == c.state_digest()


def test_same_bead_id_on_two_laptops_converges_to_one(pair: tuple[Memory, Memory]) -> None:
    a, b = pair
    a.append_bead("version A", id="shared", ts=10.0)
    b.append_bead("version B", id="shared", ts=20.0)
    exchange(a, b)
    assert a.get_bead("shared") == b.get_bead("shared")
    assert [x.id for x in a.last_beads(10)] == ["shared"]
    assert a.state_digest() == b.state_digest()


def test_hlc_observe_orders_later_local_writes_after_remote(pair: tuple[Memory, Memory]) -> None:
    a, b = pair
    skewed(a, 60_000)
    a.append_bead("from A")
    exchange(a, b)
    b.append_bead("from B")
    op_a, op_b = a.log_op("laptop-a", 1), b.log_op("laptop-b", 1)
    assert op_a is not None and op_b is not None
    assert op_b["hlc"] > op_a["hlc"] > hlc_pack(0)


def test_a_drop_arriving_before_the_add_it_saw(open_memory: Callable[..., Memory]) -> None:
    a, b, c = (open_memory(n, replica_id=n) for n in ("a", "b", "c"))
    a.update_persona(goals=["old goal"])
    exchange(a, b)
    b.update_persona(goals=["new goal"])  # drops "old goal", having seen A's add
    c.apply_ops(b.ops_since({"a": 1}))  # C hears B's drop first
    c.apply_ops(a.ops_since({}))
    assert c.get_persona().goals == ["new goal"]
    exchange(a, b, c)
    assert a.state_digest() == b.state_digest() == c.state_digest()


# ---- the rule table and the events it emits ----------------------------------------------------


def test_every_op_kind_has_a_rule_and_matches_the_op_union() -> None:
    import typing

    from chrysalis.core.models import Op, OpKind
    from chrysalis.write.op_rules import RULES

    union = typing.get_args(typing.get_args(Op)[0])
    kinds = {typing.get_args(cls.model_fields["kind"].annotation)[0] for cls in union}
    assert kinds == {k.value for k in OpKind}
    assert set(RULES) == set(OpKind), f"no rule for {set(OpKind) - set(RULES)}"


def test_events_name_the_items_each_op_touched(mem: Memory) -> None:
    from chrysalis.core.events import Change, Committed, ItemEvent

    told: list[Committed] = []
    mem.reader.on_commit(told.append)
    bead = mem.append_bead("hello there", id="b1")
    mem.add_fact("Alice", "knows", "Bob")
    mem.put_embedding("bead", "b1", "m", [1.0, 0.0], provider="t", text_hash="0" * 64)
    mem.forget(bead.id)
    events = [c.events for c in told]
    assert events[0] == [ItemEvent("bead", "b1", Change.CHANGED)]
    assert [e.kind for e in events[1]] == ["node", "node", "edge"]
    assert events[2] == [ItemEvent("bead", "b1", Change.VECTOR)]
    assert events[3] == [ItemEvent("bead", "b1", Change.ERASED)]
    assert told[0].local_ops == 1 and told[0].local_bytes == len("hello there")
