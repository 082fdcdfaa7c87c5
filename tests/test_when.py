"""Time named in a query (search/when.py), read against when it is asked (``now``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from chrysalis import InvalidInput, Memory
from chrysalis.search.when import DAY, closeness, window

# Tuesday 30 May 2023, 23:51 UTC
NOW = datetime(2023, 5, 30, 23, 51, tzinfo=UTC).timestamp()


def _day(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def _covers(span: tuple[float, float] | None, *days: str) -> bool:
    assert span is not None
    return all(span[0] <= _day(d) + DAY / 2 <= span[1] for d in days)


@pytest.mark.parametrize(
    ("query", "inside", "outside"),
    [
        ("what cocktail did I try last weekend?", ["2023-05-27", "2023-05-28"], ["2023-05-20"]),
        ("where did I eat yesterday?", ["2023-05-29"], ["2023-05-27", "2023-05-31"]),
        ("what did I read two weeks ago?", ["2023-05-16"], ["2023-05-29", "2023-05-01"]),
        ("what did I buy 3 days ago?", ["2023-05-27"], ["2023-05-20"]),
        ("which shoes did I clean last month?", ["2023-04-02", "2023-04-29"], ["2023-03-10"]),
        ("the games I played in the past 10 days", ["2023-05-22"], ["2023-05-10"]),
        ("who did I meet last Friday?", ["2023-05-26"], ["2023-05-19", "2023-05-30"]),
        ("what did I do last week?", ["2023-05-22", "2023-05-28"], ["2023-05-14"]),
    ],
)
def test_a_named_span_is_read_against_now(
    query: str, inside: list[str], outside: list[str]
) -> None:
    span = window(query, NOW)
    assert _covers(span, *inside)
    assert span is not None
    assert not any(span[0] <= _day(d) + DAY / 2 <= span[1] for d in outside)


@pytest.mark.parametrize(
    "query", ["what did I cook recently?", "when did I visit Lisbon?", "weekly plans", "ago"]
)
def test_no_span_is_read_into_a_query_that_names_none(query: str) -> None:
    assert window(query, NOW) is None


def test_closeness_is_one_inside_and_falls_off_outside() -> None:
    span = (_day("2023-05-22"), _day("2023-05-29"))
    assert closeness(_day("2023-05-25"), span) == 1.0
    assert 0 < closeness(_day("2023-05-20"), span) < 1.0
    assert closeness(_day("2023-04-01"), span) == 0.0


def test_retrieve_prefers_the_turn_from_the_named_span(open_memory: Callable[..., Memory]) -> None:
    mem = open_memory(embedder="deterministic")
    mem.append_beads([
        {"id": "old", "content": "I tried a negroni cocktail", "session_id": "a",
         "ts": _day("2023-04-01")},
        {"id": "recent", "content": "I tried a margarita cocktail", "session_id": "b",
         "ts": _day("2023-05-27")},
        {"id": "newer", "content": "I tried a mojito cocktail", "session_id": "c",
         "ts": _day("2023-05-30")},
    ])  # fmt: skip
    mem.wait_indexed(timeout=30)
    asked = datetime(2023, 5, 30, 23, 51, tzinfo=UTC)
    items = mem.retrieve("which cocktail did I try last weekend?", k=3, now=asked).items
    assert items[0].id == "recent" and items[0].signals["time"] == 1.0
    assert "time" not in next(i for i in items if i.id == "old").signals
    # epoch seconds work too; a naive datetime is UTC
    assert mem.retrieve("cocktail last weekend", k=1, now=NOW).items[0].id == "recent"
    naive = asked.replace(tzinfo=None)
    assert mem.retrieve("cocktail last weekend", k=1, now=naive).items[0].id == "recent"
    # asked a month later, "last weekend" is another weekend: no turn gets the signal
    later = mem.retrieve("cocktail last weekend", k=3, now=NOW + 30 * DAY).items
    assert all("time" not in i.signals for i in later)
    with pytest.raises(InvalidInput, match="now must be"):
        mem.retrieve("cocktail", now="yesterday")  # type: ignore[arg-type]
