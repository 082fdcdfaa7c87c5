# ruff: noqa: SIM905 - a word list reads best as one string
"""Session summaries (DESIGN §14): what a conversation was about, as one bead retrieval can
find when the question is about the session rather than one turn.

A summary is a bead like any other (role ``note``, tag ``summary``, in the session it
summarises) that names its evidence (``derived_from``) and what wrote it (``derived_by``).
Being a bead, a forget erases it everywhere with step 10's machinery; naming its evidence, a
forget of any bead it stands on forgets it too, and its origin writes a new one from what is
left (`chrysalis.extract.worker`).

`extractive` is the offline summariser: SumBasic (Nenkova & Vanderwende, 2005) over the
session's sentences: a sentence scores the mean session frequency of its content words, the
best is taken, its words count for less (squared probabilities), and again, until the
summary is full; chosen sentences keep their order and their speaker. Every bead read counts
as evidence (its words weighed the choice), so forgetting any of them re-derives the summary.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

from chrysalis.core.models import Bead

VERSION = "summary/1"
TAG = "summary"  # a summary bead's tag: retrieval lists summaries when a filter names it
MIN_BEADS = 3  # fewer turns than this need no summary
MAX_BEADS = 256  # the latest turns of a longer session (a bead names at most 256 evidence ids)
MAX_CHARS = 1200  # the summary's sentences
MAX_SENTENCE = 300
MIN_WORDS = 4  # shorter sentences say little on their own ("Sounds good!")
MAX_PICKS = 12  # sentences looked at for the summary, taken or too long to fit
MAX_SENTENCES = 400  # candidates: the first of a session's turns (LongMemEval's: ~10 each)
TOPICS = 8

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[^\W\d_][\w'-]*", re.UNICODE)
_STOP = frozenset(
    """a an the i i'm i've i'd i'll me my mine we our ours you your yours he him his she her
    hers it its they them their theirs this that these those there here what when where why
    how who whom which whose yes no not and or but if then so because as at by for from in into
    of on to with about after before during since until while also just only very really too
    maybe perhaps please thanks thank hi hello hey ok okay sure great good nice well oh ah wow
    yeah yep cool awesome sorry all any some every each both either one is are was were be
    been being am do does did done have has had having will would can could should may might
    must shall let lets let's get got go going gone know think like want need make made
    more most much many lot lots something anything thing things way it's that's don't
    can't i'm you're what's there's than other such own same again still even back now""".split()
)


@dataclass(frozen=True, slots=True)
class Summary:
    """A session summary and what it cost (model calls and tokens, for the budget)."""

    text: str
    evidence: tuple[str, ...]  # every bead the summary was made from
    calls: int = 0
    tokens: int = 0


@runtime_checkable
class Summarizer(Protocol):
    """Writes a session's summary; ``summary_version`` is recorded as its ``derived_by``.
    Raises `chrysalis.core.errors.ExtractorUnavailable` when its service cannot answer."""

    summary_version: str

    def summarize(self, session_id: str, beads: Sequence[Bead]) -> Summary | None: ...


def speaker(bead: Bead) -> str:
    return bead.source or bead.role


def _day(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).date().isoformat()


def header(session_id: str, beads: Sequence[Bead]) -> str:
    """``Session S, 2023-05-08 to 2023-05-09: 12 turns by Ada, Bo.``"""
    first, last = (_day(b.ts) for b in (beads[0], beads[-1]))
    when = first if first == last else f"{first} to {last}"
    speakers = ", ".join(dict.fromkeys(speaker(b) for b in beads))
    return f"Session {session_id}, {when}: {len(beads)} turns by {speakers}."


def _words(text: str) -> list[str]:
    return [w for w in (m.lower() for m in _WORD.findall(text)) if len(w) > 2 and w not in _STOP]


def _mean(p: dict[str, float], words: list[str]) -> float:
    return sum(p[w] for w in words) / len(words)


def extractive(session_id: str, beads: Sequence[Bead]) -> Summary | None:
    """The SumBasic summary of ``beads`` (a session's turns, oldest first), or None when they
    are too few to need one. Deterministic."""
    beads = [b for b in beads if b.role != "system" and b.content and b.derived_by is None]
    beads = beads[-MAX_BEADS:]
    if len(beads) < MIN_BEADS:
        return None
    sentences: list[tuple[int, str, list[str]]] = []  # (bead index, text, content words)
    counts: Counter[str] = Counter()
    for i, bead in enumerate(beads):
        for part in _SENTENCE.split(bead.content):
            text = " ".join(part.split())
            words = _words(text)
            counts.update(words)
            if len(text.split()) >= MIN_WORDS and words and len(sentences) < MAX_SENTENCES:
                sentences.append((i, text[:MAX_SENTENCE], words))
    if not sentences:
        return None
    total = sum(counts.values())
    p = {w: c / total for w, c in counts.items()}
    chosen: list[int] = []
    size = 0
    left = set(range(len(sentences)))
    for _ in range(MAX_PICKS):  # bounded: a long session costs no more than a short one
        if not left or size >= MAX_CHARS:
            break
        best = max(left, key=lambda s: (_mean(p, sentences[s][2]), -s))
        left.discard(best)
        text = sentences[best][1]
        if size + len(text) > MAX_CHARS and chosen:
            continue
        chosen.append(best)
        size += len(text) + 1
        for w in set(sentences[best][2]):
            p[w] *= p[w]
    lines = [header(session_id, beads)]
    for s in sorted(chosen):
        i, text, _ = sentences[s]
        lines.append(f"{speaker(beads[i])}: {text}")
    topics = [w for w, _ in sorted(counts.items(), key=lambda wc: (-wc[1], wc[0]))[:TOPICS]]
    lines.append("Topics: " + ", ".join(topics) + ".")
    return Summary("\n".join(lines), tuple(b.id for b in beads))
