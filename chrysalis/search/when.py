"""Time named in a query, read against the moment it is asked (``now``).

"What did I cook last weekend?" asked on a Tuesday means the Saturday and Sunday before; "two
weeks ago" means around fourteen days before ``now``. `window` turns the usual English phrases
into a span of epoch seconds; retrieval then favours beads written in it (the ``time`` signal).
Only phrases that name a span are read: "recently" or "when" alone name none.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

DAY = 86400.0
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "couple": 2, "few": 3, "several": 3,
}  # fmt: skip
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

_AGO = re.compile(
    r"\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few|several)"
    r"\s+(day|week|month|year)s?\s+ago\b"
)
_PAST = re.compile(
    r"\b(?:past|last|previous)\s+(\d+|two|three|four|five|six|seven|eight|nine|ten|few|couple of)"
    r"\s+(day|week|month|year)s?\b"
)
_LAST = re.compile(
    r"\b(?:last|past|previous)\s+(weekend|week|month|year|" + "|".join(_WEEKDAYS) + r")\b"
)
_THIS = re.compile(r"\bthis\s+(morning|week|weekend|month|year)\b")


def _count(word: str) -> int:
    word = word.removeprefix("a ").removesuffix(" of").strip()
    return int(word) if word.isdigit() else _NUMBERS.get(word, 1)


def window(query: str, now: float) -> tuple[float, float] | None:
    """The span ``(start, end)`` of epoch seconds ``query`` names relative to ``now``, or
    None. Spans are generous at their edges (a day either side): people round."""
    text = query.lower()
    today = datetime.fromtimestamp(now, UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    midnight = today.timestamp()
    if m := _AGO.search(text):
        days = _count(m.group(1)) * _UNIT_DAYS[m.group(2)]
        slack = max(1.0, 0.25 * days)  # "two weeks ago" is about 10 to 18 days
        return now - (days + slack) * DAY, now - (days - slack) * DAY
    if m := _PAST.search(text):
        days = _count(m.group(1)) * _UNIT_DAYS[m.group(2)]
        return now - (days + 1) * DAY, now
    if "yesterday" in text:
        return midnight - 1.5 * DAY, midnight + 0.5 * DAY
    if re.search(r"\btoday\b|\btonight\b", text):
        return midnight - 0.5 * DAY, now
    if m := _LAST.search(text):
        return _last(m.group(1), today, now)
    if m := _THIS.search(text):
        span = {"morning": 1, "week": 7, "weekend": 3, "month": 31, "year": 366}[m.group(1)]
        return now - span * DAY, now
    return None


def _last(unit: str, today: datetime, now: float) -> tuple[float, float]:
    """ "last <unit>": the previous calendar week/weekend/month/year or weekday."""
    weekday = today.weekday()
    if unit in _WEEKDAYS:
        back = (weekday - _WEEKDAYS.index(unit)) % 7 or 7
        day = today - timedelta(days=back)
        return day.timestamp() - 0.5 * DAY, day.timestamp() + 1.5 * DAY
    if unit == "weekend":
        saturday = today - timedelta(days=(weekday - 5) % 7 or 7)
        return saturday.timestamp() - 0.5 * DAY, saturday.timestamp() + 2.5 * DAY
    if unit == "week":
        monday = today - timedelta(days=weekday + 7)
        return monday.timestamp() - DAY, monday.timestamp() + 8 * DAY
    if unit == "month":
        first = (today.replace(day=1) - timedelta(days=1)).replace(day=1)
        return first.timestamp() - DAY, today.replace(day=1).timestamp() + DAY
    start = today.replace(year=today.year - 1, month=1, day=1)
    return start.timestamp(), today.replace(month=1, day=1).timestamp() + DAY


def closeness(ts: float, span: tuple[float, float]) -> float:
    """1.0 inside ``span``, falling off outside it over the span's own length (at least a
    day): a bead just outside a named week still counts for something."""
    start, end = span
    if start <= ts <= end:
        return 1.0
    scale = max(DAY, end - start)
    gap = start - ts if ts < start else ts - end
    return max(0.0, 1.0 - gap / scale)
