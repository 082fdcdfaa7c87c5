"""Conversation-aware evidence (search/evidence.py): who said it, sessions that matter, and
context that leans on short turns only; each rule alone, then through retrieve()."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

import pytest

from chrysalis import Memory
from chrysalis.search.evidence import (
    asks_about_assistant,
    attribution,
    lean_on_neighbours,
    session_evidence,
)


def _bead(id: str, role: str = "user", source: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(id=id, role=role, source=source)


@pytest.mark.parametrize(
    ("query", "about"),
    [
        ("Can you remind me of the vegan eatery you recommended last time?", True),
        ("You mentioned a few apps; which was the free one?", True),
        ("Going back to our previous conversation about music theory: which book?", True),
        ("What was in your last answer about tariffs?", True),
        ("Which garage did you recommend?", True),
        ("Can you suggest some accessories for my phone?", False),  # a request, not a memory
        ("How many years older is my grandma than me?", False),
    ],
)
def test_a_question_about_the_assistants_words_is_told_apart(query: str, about: bool) -> None:
    assert asks_about_assistant(query) is about


def test_in_a_chat_the_assistants_echo_counts_for_less_unless_asked_about() -> None:
    beads = [_bead("u", "user"), _bead("a", "assistant")]
    assert attribution("where did I park the car?", beads, 0.5) == {"u": 1.0, "a": 0.5}
    assert attribution("which garage did you recommend?", beads, 0.5) == {}
    assert attribution("where did I park the car?", beads, 1.0) == {}  # switched off
    # one speaker: nothing to tell apart
    assert attribution("where did I park?", [_bead("u1"), _bead("u2")], 0.5) == {}


def test_a_named_speaker_is_preferred_over_the_others() -> None:
    beads = [_bead("m", source="Melanie"), _bead("c", source="Caroline"), _bead("x")]
    assert attribution("What has Melanie painted?", beads, 0.5) == {
        "m": 1.0, "c": 0.5, "x": 0.5,
    }  # fmt: skip
    # both named: the question cannot tell them apart
    assert attribution("What did Melanie tell Caroline?", beads[:2], 0.5) == {}
    # a name is a whole word of the query, case aside; a multi-word source needs every word
    assert attribution("what has melanie's sister said?", beads, 0.5)["m"] == 1.0
    assert attribution("what did Mel say?", beads, 0.5) == {}
    two = [_bead("a", source="Ada Lovelace"), _bead("b", source="Ada Byron")]
    assert attribution("What did Ada say?", two, 0.5) == {}
    assert attribution("What did Ada Lovelace say?", two, 0.5) == {"a": 1.0, "b": 0.5}


def test_session_evidence_grows_with_repeated_hits_in_a_session() -> None:
    hits = {
        "a1": ("s1", 1.0), "a2": ("s1", 0.8),  # two strong hits
        "b1": ("s2", 1.0),  # one
        "c1": ("s3", 0.2), "n": (None, 1.0), "z": ("s4", 0.0),
    }  # fmt: skip
    got = session_evidence(hits)
    assert got["a1"] == got["a2"] == 1.0
    assert got["b1"] == pytest.approx(1.0 / 1.4)
    assert got["c1"] == pytest.approx(0.2 / 1.4)
    assert "n" not in got and "z" not in got
    assert session_evidence({}) == {}


def test_only_short_turns_lean_on_their_neighbours() -> None:
    assert lean_on_neighbours([12, 20, 9], 50) == 1.0
    assert lean_on_neighbours([40, 400, 60], 50) == pytest.approx(50 / (500 / 3))
    assert lean_on_neighbours([], 50) == 1.0


# ---- through retrieve() ----------------------------------------------------------------------


def _chat(
    open_memory: Callable[..., Memory],
    rows: list[tuple[str, str, str | None, str]],
    name: str = "m",
) -> Memory:
    mem = open_memory(name, embedder="deterministic")
    mem.append_beads(
        [{"id": f"b{i}", "session_id": s, "role": r, "source": src, "content": c,
          "ts": 1_700_000_000.0 + 60 * i}
         for i, (s, r, src, c) in enumerate(rows)]
    )  # fmt: skip
    mem.wait_indexed(timeout=30)
    return mem


LONG_ECHO = (
    "Great question about your espresso machine descaling! Descaling an espresso machine "
    "matters because limescale builds up in the boiler. " + "Here is more general advice. " * 30
)


def test_the_users_own_words_beat_an_assistants_long_echo(
    open_memory: Callable[..., Memory],
) -> None:
    mem = _chat(
        open_memory,
        [
            ("s1", "user", None, "I descaled my espresso machine with citric acid on Sunday."),
            ("s1", "assistant", None, LONG_ECHO),
            ("s2", "user", None, "What should I cook tonight?"),
            ("s2", "assistant", None, "How about a risotto?"),
        ],
    )
    items = mem.retrieve("when did I descale the espresso machine?", k=2).items
    assert items[0].id == "b0"
    echo = next(i for i in items if i.id == "b1")
    assert echo.signals["attribution"] == 0.5
    # asked about the assistant's words, it is not discounted
    asked = mem.retrieve("what did you say about descaling the espresso machine?", k=2).items
    assert "attribution" not in next(i for i in asked if i.id == "b1").signals
    # switched off, the long echo wins on keywords alone
    mem.weights = mem.weights.model_copy(update={"attribution": 1.0})
    plain = mem.retrieve("when did I descale the espresso machine?", k=2).items
    assert "attribution" not in plain[0].signals


def test_a_named_speakers_turns_come_first(open_memory: Callable[..., Memory]) -> None:
    mem = _chat(
        open_memory,
        [
            ("s1", "user", "Caroline", "Melanie, is that painting yours? The painting is lovely!"),
            ("s1", "user", "Melanie", "Yes, I painted a lake at sunrise."),
            ("s1", "user", "Caroline", "I love painting too, mostly portraits."),
        ],
    )
    items = mem.retrieve("What has Melanie painted?", k=3).items
    assert items[0].id == "b1"
    assert {i.id: i.signals.get("attribution") for i in items} == {
        "b0": 0.5, "b1": 1.0, "b2": 0.5,
    }  # fmt: skip


def test_long_turns_lend_their_neighbours_less_context(
    open_memory: Callable[..., Memory],
) -> None:
    short = _chat(
        open_memory,
        [("s1", "user", None, "Guess where I went?"), ("s1", "user", None, "The aquarium!")],
    )
    long_turn = "The aquarium was wonderful, " + "we saw many other fish there. " * 40
    long = _chat(
        open_memory,
        [("s1", "user", None, "Guess where I went? " + long_turn),
         ("s1", "user", None, "More of the same. " * 40)],
        name="long",
    )  # fmt: skip
    lent_short = next(i for i in short.retrieve("aquarium", k=2).items if i.id == "b0")
    lent_long = next(i for i in long.retrieve("aquarium", k=2).items if i.id == "b1")
    assert lent_short.signals["context"] > 2 * lent_long.signals.get("context", 0.0)


def test_session_evidence_is_a_signal_of_fused_items(open_memory: Callable[..., Memory]) -> None:
    mem = _chat(
        open_memory,
        [
            ("s1", "user", None, "Our boat trip: the boat leaves at nine."),
            ("s1", "user", None, "The boat trip needs life jackets."),
            ("s2", "user", None, "A boat on a poster."),
        ],
    )
    by_id = {i.id: i for i in mem.retrieve("boat trip", k=3).items}
    assert by_id["b0"].signals["session"] == 1.0
    assert by_id["b2"].signals["session"] < by_id["b1"].signals["session"]
