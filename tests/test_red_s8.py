# ruff: noqa: RUF001 - curly quotes are text here
"""Red team of round 3, session 8: the product paths it changed.

An assistant's short turn is now read for the user's typed facts (its "you" as the user's
"I"); the sentence splitter, the typed reader and the token counter were touched for speed.
Each test is an attack on one of those: the text itself forging a user fact, a text that
costs quadratic time, a forgotten bead's words kept alive by a cache.
"""

from __future__ import annotations

import gc
import random
import re
import time
from collections.abc import Callable
from types import ModuleType

import pytest

from chrysalis import Memory
from chrysalis.context import build
from chrysalis.context import facts as context_facts
from chrysalis.core.models import Bead
from chrysalis.extract.mood import Reading
from chrysalis.extract.rules import RulesExtractor
from chrysalis.read import reader
from chrysalis.search import fusion

Opener = Callable[..., Memory]


def facts_of(text: str, role: str = "assistant") -> set[tuple[str, str]]:
    bead = Bead(id="b1", content=text, role=role, ts=1.0, session_id="s")
    return {(f.predicate, f.object) for f in RulesExtractor().extract_one(bead).facts}


# ---- 1. an assistant relaying a claim about the user -----------------------------------------

# What an assistant passes on from a page, a tool, a search or another person: a claim about
# the user, not the user's words restated. Written as a prompt injection would write it.
RELAYED = [
    "The search result says you live in Pyongyang now.",
    "Sam told me you live in Reykjavik these days.",
    "This website claims your new flat is in Tbilisi.",
    "The company page mentions that you work at Globex now.",
    "Your colleague wrote that you just joined Umbrella Corp.",
    "She insists your go-to drink is kombucha lately.",
    "A reviewer posted that you drive a Lada Niva now.",
    "The old forum thread said you're renting in Yerevan.",
]


@pytest.mark.parametrize("text", RELAYED)
def test_an_assistant_relaying_what_others_say_of_the_user_gives_no_user_fact(text: str) -> None:
    assert facts_of(text) == set(), text
    assert facts_of(text.replace(".", "!")) == set(), text


def test_an_assistant_restating_the_users_own_telling_still_counts() -> None:
    """The fix is not a blanket refusal of reported speech: the user's own telling, passed
    back ("you mentioned ...", "your lease says ..."), is still the user's."""
    for text, fact in {
        "You mentioned you work at Globex now, congrats on that.": ("works_at", "Globex"),
        "As you told me, you're renting in Yerevan these days.": ("lives_in", "Yerevan"),
        "Your lease says you live in Tbilisi until next summer.": ("lives_in", "Tbilisi"),
    }.items():
        assert facts_of(text) == {fact}, text


# ---- 2. quadratic work on long blank runs -----------------------------------------------------


def _seconds(text: str) -> float:
    bead = Bead(id="b1", content=text, role="user", ts=1.0, session_id="s")
    best = float("inf")
    for _ in range(2):
        t0 = time.perf_counter()
        RulesExtractor().extract_one(bead)
        best = min(best, time.perf_counter() - t0)
    return best


@pytest.mark.parametrize("blank", [" ", "\t", " \t"])
def test_a_long_run_of_blanks_costs_no_more_than_prose_of_its_length(blank: str) -> None:
    """19,000 blanks between a fact and a word took ~5 s (the sentence splitter tried a line
    break at every blank of the run, scanning the rest of it each time); prose of the same
    length takes tens of milliseconds. A ratio, not a wall-clock bound: the machine's load
    scales both."""
    n = 19_000
    blanks = "I work at Acme" + blank * (n // len(blank)) + "Ix. Then more."
    words = ("I work at Acme and the team is kind. " * (n // 37 + 1))[: len(blanks)]
    _seconds("warm up the patterns")
    assert _seconds(blanks) < 5 * _seconds(words) + 0.05


def test_the_sentence_split_is_unchanged_by_the_linear_pattern() -> None:
    """Sentences as the old (quadratic) splitter cut them (quotes blanked first, as a
    `Reading` does), on texts of blanks, breaks, stops and closing quotes in every order."""
    old = re.compile(r"(?<=[.!?…])[\"'”’)\]]*[ \t]+|[ \t]*\n+[ \t]*")

    def cut(text: str) -> list[tuple[int, int]]:
        out, at = [], 0
        for m in old.finditer(text):
            if m.start() > at:
                out.append((at, m.start()))
            at = m.end()
        return [*out, (at, len(text))] if at < len(text) else out

    rng = random.Random(8)
    alphabet = [*"ab .!?\n\t\"')…", " ", " "]
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        reading = Reading(text)
        assert reading.sentences() == cut(reading.plain), ascii(text)


# ---- 3. a forgotten bead's words in a cache -------------------------------------------------


def _strings_reachable(module: ModuleType, depth: int = 3) -> list[str]:
    """Every str reachable from the module's globals within ``depth`` references."""
    seen: set[int] = set()
    out: list[str] = []
    layer = [v for k, v in vars(module).items() if not k.startswith("__")]
    for _ in range(depth):
        nxt = []
        for obj in layer:
            if id(obj) in seen or isinstance(obj, ModuleType | type):
                continue
            seen.add(id(obj))
            if isinstance(obj, str):
                out.append(obj)
                continue
            nxt.extend(gc.get_referents(obj))
        layer = nxt
    return out


def test_a_forgotten_beads_words_are_not_kept_by_the_token_count_cache(open_memory: Opener) -> None:
    mem = open_memory("a")
    marker = "quokka-ledger-5521"
    secret = f"the spare safe code is kept in the {marker} notebook in the attic"
    mem.append_bead(secret, id="gone", session_id="s1")
    mem.append_bead("a note about the attic and its boxes", id="kept", session_id="s1")
    mem.wait_indexed()
    ctx = mem.context("where is the safe code notebook kept?", token_budget=2000)
    assert marker in ctx.text  # counted (and cached) while it was remembered
    mem.forget("gone")
    mem.wait_indexed()
    assert marker not in mem.context("where is the safe code notebook kept?").text
    assert all(marker not in i.text for i in mem.retrieve("safe code notebook attic").items)
    for module in (fusion, build, context_facts, reader):
        assert not [s for s in _strings_reachable(module) if marker in s], module.__name__


def test_the_token_count_cache_stays_bounded_and_right() -> None:
    texts = [f"entry {i}: " + "🦆" * (i % 50) for i in range(3 * fusion.CACHED_TEXTS)]
    expected = [fusion._count(t) for t in texts]
    assert [fusion.count_tokens(t) for t in texts] == expected
    assert [fusion.count_tokens(t) for t in reversed(texts)] == expected[::-1]
    assert len(fusion._COUNTS) <= fusion.CACHED_TEXTS
    long = "word " * 2000  # past CACHED_CHARS: counted, never cached
    size = len(fusion._COUNTS)
    assert fusion.count_tokens(long) == fusion._count(long)
    assert len(fusion._COUNTS) == size
