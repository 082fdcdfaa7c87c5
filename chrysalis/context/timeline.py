"""The typed-mention timeline in a context: the user's latest own statement of the value
asked about, found whether retrieval did or not, and beads that only name such a value kept
out of what held.

For a question about the user that cues a typed attribute (`TYPED`: where they live, work,
what they drink, drive, whom they are with), about now or a past time:

- the bead that last stated the user's own value before the moment asked about
  (`chrysalis.read.mentions.latest`: one cursor walk) is shown among what held, even when
  retrieval missed it or the relevance floor cut it;
- a bead that names a value of that type but not as the user's (a friend's job, a trip, an
  ad, a drink tried once, a name with no word of a relationship) is shown after what held,
  not among it: newer than the fact that holds, it would otherwise come first.

Reads the verdicts the extractor recorded at write time; a memory with no timeline (no
extractor, or beads extracted on another replica) is left as retrieval found it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from chrysalis.context import facts as facts_mod
from chrysalis.read.reader import Reader

__all__ = ["TYPED", "Pick", "asked", "read"]

# The typed attributes, each with the fact predicates that cue it in a question.
TYPED: dict[str, tuple[str, ...]] = {
    "lives_in": ("lives_in",),
    "works_at": ("works_at",),
    "drinks": ("drinks", "prefers"),
    "drives": ("drives",),
    "partner": ("partner", "married_to"),
}
_WORD = re.compile(r"[a-z0-9][\w'\u2019-]*")


@dataclass(frozen=True, slots=True)
class Pick:
    """What the timeline says of one source's candidates: the bead ids to show among what
    held (``latest``: the user's latest own statement per attribute asked) and those to show
    after it (``aside``: they name a value of the type, none as the user's own)."""

    latest: tuple[str, ...] = ()
    aside: frozenset[str] = frozenset()


def asked(query: str) -> list[str]:
    """The typed attributes ``query`` cues (`facts._cued` on their predicates)."""
    words = _WORD.findall(query.lower())
    if not words:
        return []
    return [a for a, preds in TYPED.items() if any(facts_mod._cued(p, words) for p in preds)]


def read(reader: Reader, attributes: Sequence[str], at: float, candidates: Sequence[str]) -> Pick:
    """The timeline's `Pick` for ``attributes`` at moment ``at`` among bead ids
    ``candidates`` (the beads retrieval found)."""
    if not attributes:
        return Pick()
    latest: list[str] = []
    for attr in attributes:
        for _, bead_id, _ in reader.latest_mentions(attr, at, 1):
            if bead_id not in latest:
                latest.append(bead_id)
    wanted = set(attributes)
    aside = set()
    for bead_id, rows in reader.mentions_of(candidates).items():
        named = [own for p, _, own in rows if p in wanted]
        if named and not any(named) and bead_id not in latest:
            aside.add(bead_id)
    return Pick(tuple(latest), frozenset(aside))
