"""Conversation-aware evidence for fused retrieval: who said it, and which sessions matter.

Two rules, both about conversations rather than any one benchmark (docs/benchmarks.md shows
each one's effect on LoCoMo and LongMemEval, which differ in turn length and speakers):

- **Attribution.** A question is about someone's words. When it names a speaker of the
  candidate beads (their ``source``, e.g. "What has Melanie painted?"), beads by the others
  count for less; otherwise, in a user-assistant chat, a question is about what the user said
  (an assistant's long replies echo the user's words without being the user's facts), unless it
  asks about the assistant's own earlier words ("you recommended", "our last conversation").
- **Session evidence.** A session whose turns match the question again and again is about it:
  each hit gains a little from the best hits of its session.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

_WORDS = re.compile(r"[^\W_]+", re.UNICODE)
# "you" then (perhaps one word, then) a verb in the past, or "did you", "you've": what the
# assistant did or said; "your previous ...", "our last conversation": the question looks back
# at the assistant's side of the chat.
_ABOUT_ASSISTANT = re.compile(
    r"\b(?:did|have|had)\s+you\b|\byou'?ve\b|"
    r"\byou\s+(?:\w+\s+)?(?:\w+ed|told|said|gave|wrote|made|sent|showed|shown|shared|taught|"
    r"found|thought|put|brought|chose|did|got|had|knew|meant|read|saw|took|came|drew|spoke|"
    r"left)\b|\byour\s+(?:previous|last|earlier|own)\b|"
    r"\bour\s+(?:\w+\s+)?(?:conversation|chat|discussion|talk)\b",
    re.IGNORECASE,
)


def asks_about_assistant(query: str) -> bool:
    """Whether ``query`` looks back at what the assistant said or did."""
    return _ABOUT_ASSISTANT.search(query) is not None


def _name_words(source: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _WORDS.findall(source))


def attribution(query: str, beads: Iterable[Any], discount: float) -> dict[str, float]:
    """A factor per bead id (1.0 or ``discount``) for the beads by speakers ``query`` is not
    about. Beads need ``id``, ``role`` and ``source``. Nothing is discounted when the query
    cannot tell the speakers apart (names all of them, or the beads have one speaker)."""
    beads = list(beads)
    if discount >= 1.0 or not beads:
        return {}
    words = {w.lower() for w in _WORDS.findall(query)}
    sources = {b.source for b in beads if b.source}
    named = {s for s in sources if (parts := _name_words(s)) and parts <= words}
    if named and named != sources:
        return {b.id: (1.0 if b.source in named else discount) for b in beads}
    roles = {b.role for b in beads}
    if {"user", "assistant"} <= roles and not asks_about_assistant(query):
        return {b.id: (discount if b.role == "assistant" else 1.0) for b in beads}
    return {}


def session_evidence(hits: Mapping[str, tuple[str | None, float]]) -> dict[str, float]:
    """Per session, the evidence of its hits (its best one's strength plus half its second's),
    scaled by the best session's: ``hits`` maps a key to ``(session, strength)``; returns each
    key's session evidence in [0, 1] (keys without a session get none)."""
    by_session: dict[str, list[float]] = defaultdict(list)
    for session, strength in hits.values():
        if session is not None and strength > 0:
            by_session[session].append(strength)
    evidence = {}
    for session, values in by_session.items():
        best = sorted(values, reverse=True)[:2]
        evidence[session] = best[0] + (0.5 * best[1] if len(best) > 1 else 0.0)
    top = max(evidence.values(), default=0.0)
    if top <= 0:
        return {}
    return {
        key: evidence[session] / top
        for key, (session, _) in hits.items()
        if session is not None and session in evidence
    }


def lean_on_neighbours(words: Iterable[int], short: int) -> float:
    """How much a hit lends its neighbours, from the word counts of its window (the hit and
    the turns around it): fully where turns are short (``short`` words or fewer on average:
    chit-chat spreads an answer over several), less as they grow (long turns stand alone)."""
    counts = list(words)
    mean = sum(counts) / len(counts) if counts else 0.0
    return min(1.0, short / max(1.0, mean))
