"""`chrysalis.core.validity`: when a fact holds, and how a later fact on a functional predicate ends
an earlier one, the same on every replica whatever order they learned them in."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

import pytest

from chrysalis.core.errors import InvalidInput
from chrysalis.core.validity import Span, epoch, holds, resolve


def test_a_later_fact_ends_an_earlier_one_with_another_object() -> None:
    lisbon = Span("e1", "lisbon", 1000.0, None)
    porto = Span("e2", "porto", 2000.0, None)
    assert resolve([lisbon, porto]) == {"e1": 2000.0, "e2": None}


def test_the_order_facts_arrive_in_does_not_matter() -> None:
    spans = [
        Span("e1", "lisbon", 1000.0, None),
        Span("e2", "porto", 2000.0, None),
        Span("e3", "paris", 3000.0, 2500.0),  # it says itself when it ended
        Span("e4", "rome", None, None),  # no stated start: sorts first
    ]
    expected = {"e4": 1000.0, "e1": 2000.0, "e2": 3000.0, "e3": 2500.0}
    for order in itertools.permutations(spans):
        assert resolve(order) == expected


def test_a_stated_end_earlier_than_the_next_start_is_kept() -> None:
    assert resolve([Span("a", "x", 10.0, 15.0), Span("b", "y", 20.0, None)])["a"] == 15.0


def test_ties_break_by_id_so_every_replica_agrees() -> None:
    ends = resolve([Span("b", "y", 5.0, None), Span("a", "x", 5.0, None)])
    assert ends == {"a": 5.0, "b": None}  # "a" sorts first and ends where "b" starts


@pytest.mark.parametrize(
    ("valid_at", "invalid_at", "at", "expected"),
    [
        (None, None, 0.0, True),
        (10.0, None, 9.0, False),
        (10.0, None, 10.0, True),
        (10.0, 20.0, 19.9, True),
        (10.0, 20.0, 20.0, False),
    ],
)
def test_holds(valid_at: float | None, invalid_at: float | None, at: float, expected: bool) -> None:
    assert holds(valid_at, invalid_at, at) is expected


def test_epoch_takes_datetimes_and_seconds_and_names_bad_input() -> None:
    assert epoch(datetime(2024, 1, 1, tzinfo=UTC), "as_of") == 1704067200.0
    assert epoch(datetime(2024, 1, 1), "as_of") == 1704067200.0  # naive is UTC
    assert epoch(5, "as_of") == 5.0
    for bad in (True, "yesterday", float("nan")):
        with pytest.raises(InvalidInput, match="as_of must be"):
            epoch(bad, "as_of")  # type: ignore[arg-type]
