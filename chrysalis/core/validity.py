"""When a fact holds (DESIGN §13): world time beside the op's learned time.

A fact edge holds from ``valid_at`` until ``invalid_at`` (either may be unknown). On a
*functional* predicate (one value at a time: ``lives_in``, ``works_at``, ``prefers``) a later
fact supersedes an earlier one with another object: the earlier one ends when the later one
starts. The writer records that by setting the old fact's ``invalid_at`` (an op, so it shows
in the log and in Zep); readers resolve it again from the facts themselves, so two laptops that
learned contradicting facts concurrently, neither seeing the other, still agree after sync.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from chrysalis.core.errors import InvalidInput

DEFAULT_FUNCTIONAL = frozenset(
    {"lives_in", "works_at", "works_as", "prefers", "status", "age", "married_to", "partner"}
)


@dataclass(frozen=True, slots=True)
class Span:
    """One fact of a (subject, predicate) group: its id, object and stated validity."""

    id: str
    target: str
    valid_at: float | None
    invalid_at: float | None


def resolve(group: Iterable[Span]) -> dict[str, float | None]:
    """The effective ``invalid_at`` of each fact of one functional (subject, predicate)
    group: the stated one, or the start of the next fact with another object, whichever is
    earlier. Facts without a ``valid_at`` sort first; ties break by id, so every replica
    resolves the same way."""
    ordered = sorted(group, key=lambda s: (s.valid_at or 0.0, s.id))
    out: dict[str, float | None] = {}
    for i, span in enumerate(ordered):
        end = span.invalid_at
        for later in ordered[i + 1 :]:
            if later.target != span.target:
                start = later.valid_at or 0.0
                end = start if end is None else min(end, start)
                break
        out[span.id] = end
    return out


def enders(group: Iterable[Span]) -> dict[str, str | None]:
    """For each fact of one functional group, the id of the fact whose start `resolve`
    weighs as its end (the next one with another object), or None when none follows."""
    ordered = sorted(group, key=lambda s: (s.valid_at or 0.0, s.id))
    out: dict[str, str | None] = {}
    for i, span in enumerate(ordered):
        out[span.id] = next((x.id for x in ordered[i + 1 :] if x.target != span.target), None)
    return out


def holds(valid_at: float | None, invalid_at: float | None, at: float) -> bool:
    """Whether a fact with this validity holds at time ``at``."""
    return (valid_at is None or valid_at <= at) and (invalid_at is None or invalid_at > at)


def epoch(value: float | datetime, name: str) -> float:
    """A time given as a datetime (naive means UTC) or epoch seconds, as epoch seconds;
    `InvalidInput` naming ``name`` otherwise."""
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidInput(f"{name} must be a datetime or epoch seconds")
    return float(value)
