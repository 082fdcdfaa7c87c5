"""The time a question is about, read against the moment it is asked (``now``).

"Where do I live?" is about now; "where did I live in June 2025?", "... last summer", "... two
years ago" about a span; "where did I work before I moved?" about the moment before an event
the memory knows (a fact's start: resolved by `chrysalis.context.facts`); "where did I live at
first?" about the earliest value. `frame` reads the phrase; it does no I/O.

Absolute spans ("June 2025", "summer of 2024", "in 2023", "early 2025", "March" alone: the
latest March that ended before ``now``) are read here; relative ones ("last year", "three
months ago", "last week") by `chrysalis.search.when`, which fusion already uses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from chrysalis.search import when

DAY = 86400.0
Kind = Literal["now", "during", "before", "after", "first"]

_MONTHS = [
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
]  # fmt: skip
# "may" alone is a verb far more often than a month: only with a year or "in"/"last" before it.
_MONTH = r"(?P<month>" + "|".join(_MONTHS) + r"|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\.?"
_YEAR = r"(?P<year>(?:19|20)\d{2})"
_PART = r"(?:(?P<part>early|mid|late|the\s+(?:start|beginning|middle|end)\s+of)[\s-]+)?"
_MONTH_YEAR = re.compile(
    r"\b" + _PART + r"(?:(?P<day>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?)?" + _MONTH
    + r"(?:\s+(?P<day2>\d{1,2})(?:st|nd|rd|th)?)?,?\s+(?:of\s+)?" + _YEAR + r"\b"
)  # fmt: skip
_ISO_MONTH = re.compile(
    r"\b(?P<year>(?:19|20)\d{2})-(?P<month>0[1-9]|1[0-2])(?:-(?P<day>\d{2}))?\b"
)
_SEASONS = {"spring": (3, 3), "summer": (6, 3), "autumn": (9, 3), "fall": (9, 3), "winter": (12, 3)}
_SEASON = r"(?P<season>spring|summer|autumn|fall|winter)"
_SEASON_YEAR = re.compile(r"\b" + _PART + _SEASON + r"\s+(?:of\s+)?" + _YEAR + r"\b")
_LAST_SEASON = re.compile(r"\b(?:last|this\s+past|past)\s+" + _SEASON + r"\b")
# A bare number is no year ("I paid 2000"): a year needs a word saying so before it.
_YEAR_ONLY = re.compile(
    r"\b(?:(?P<part>early|mid|late|the\s+(?:start|beginning|middle|end)\s+of)[\s-]+|"
    r"(?:in|during|throughout|back\s+in|around|by|over)\s+)" + _YEAR + r"\b"
)
_MONTH_ALONE = re.compile(
    r"\b(?:in|during|back\s+in|around|last|this\s+past|early|mid|late)\s+(?:-\s*)?" + _MONTH
    + r"(?!\s+(?:\d|of\s+\d))\b"
)  # fmt: skip
_HALF_AGO = re.compile(
    r"\b(?:(?P<n>a|an|one|two|three|\d+)\s+(?P<unit>year|month)s?\s+and\s+a\s+half|half\s+a\s+"
    r"(?P<half>year))\s+ago\b"
)
_EARLIER_THIS_YEAR = re.compile(r"\bearlier\s+this\s+year\b")
_BEFORE = re.compile(r"\b(?:before|prior\s+to|until)\s+(?P<anchor>[^?.!;]+)")
_AFTER = re.compile(r"\b(?:after|once|since)\s+(?P<anchor>[^?.!;]+)")
_PREVIOUS = re.compile(
    r"\b(?:used\s+to|use\s+to|previous(?:ly)?|formerly|former|before\s+that|before\s+then|"
    r"prior|any\s?more|no\s+longer|old\s+(?:job|home|place|flat|apartment|house|city|"
    r"company|employer|car|address|partner)|ex-\w+)\b"
)
_FIRST = re.compile(
    r"\b(?:at\s+first|originally|initially|to\s+begin\s+with|in\s+the\s+beginning|"
    r"(?:my|the)\s+(?:very\s+)?first)\b"
)
_NOW = re.compile(
    r"\b(?:now|currently|current|these\s+days|nowadays|at\s+the\s+moment|at\s+present|today|"
    r"still|right\s+now|presently|lately|latest|most\s+recent(?:ly)?)\b"
)
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3}


@dataclass(frozen=True, slots=True)
class Frame:
    """When a question is about.

    ``kind``: ``now``; ``during`` the span ``start``..``end``; ``before`` / ``after`` the event
    ``anchor`` names (words of the question, e.g. "I moved to Berlin"; empty: the latest
    change of what the question asks about); ``first``: the earliest value. ``phrase`` is the
    words that said so; ``marked`` that the question marks its time explicitly ("now",
    "currently", a date), so the order of what changed matters to it.
    """

    kind: Kind
    start: float | None = None
    end: float | None = None
    anchor: str = ""
    phrase: str = ""
    marked: bool = False


def frame(query: str, now: float) -> Frame:
    """The `Frame` of ``query`` asked at ``now`` (epoch seconds). Never raises: a question
    that names no time is about now."""
    text = " ".join(query.lower().split())
    if m := _MONTH_YEAR.search(text):
        year, month = int(m["year"]), _month(m["month"])
        day = m["day"] or m["day2"]
        if day and 1 <= int(day) <= 31:
            start = _ts(year, month, 1) + (int(day) - 1) * DAY
            return Frame("during", start, start + DAY, phrase=m[0], marked=True)
        return _during(_part(m["part"], _ts(year, month, 1), _next_month(year, month)), m[0])
    if m := _ISO_MONTH.search(text):
        year, month = int(m["year"]), int(m["month"])
        if m["day"] and 1 <= int(m["day"]) <= 31:
            start = _ts(year, month, 1) + (int(m["day"]) - 1) * DAY
            return Frame("during", start, start + DAY, phrase=m[0], marked=True)
        return _during((_ts(year, month, 1), _next_month(year, month)), m[0])
    if m := _SEASON_YEAR.search(text):
        return _during(_part(m["part"], *_season(m["season"], int(m["year"]))), m[0])
    if m := _LAST_SEASON.search(text):
        year = datetime.fromtimestamp(now, UTC).year
        for y in (year, year - 1, year - 2):
            span = _season(m["season"], y)
            if span[1] <= now:
                return _during(span, m[0])
    if m := _YEAR_ONLY.search(text):
        year = int(m["year"])
        return _during(_part(m["part"], _ts(year, 1, 1), _ts(year + 1, 1, 1)), m[0])
    if m := _MONTH_ALONE.search(text):
        month = _month(m["month"])
        year = datetime.fromtimestamp(now, UTC).year
        while _next_month(year, month) > now and year > 1970:
            year -= 1  # the latest such month that has ended
        return _during((_ts(year, month, 1), _next_month(year, month)), m[0])
    if m := _HALF_AGO.search(text):
        if m["half"]:
            days = 182.5
        else:
            n = int(m["n"]) if m["n"].isdigit() else _NUMBERS[m["n"]]
            days = (n + 0.5) * (365 if m["unit"] == "year" else 30)
        slack = 0.1 * days
        return _during((now - (days + slack) * DAY, now - (days - slack) * DAY), m[0])
    if m := _EARLIER_THIS_YEAR.search(text):
        year = datetime.fromtimestamp(now, UTC).year
        return _during((_ts(year, 1, 1), max(_ts(year, 1, 1) + DAY, now - 14 * DAY)), m[0])
    if (relative := when.window(text, now)) is not None and relative[0] < now - 1.5 * DAY:
        # (not "today", "this week": those are the present)
        return _during(relative, "")
    if m := _BEFORE.search(text):
        return Frame("before", anchor=m["anchor"].strip(), phrase=m[0], marked=True)
    if m := _PREVIOUS.search(text):
        return Frame("before", phrase=m[0], marked=True)
    if m := _AFTER.search(text):
        return Frame("after", anchor=m["anchor"].strip(), phrase=m[0], marked=True)
    if m := _FIRST.search(text):
        return Frame("first", phrase=m[0], marked=True)
    m = _NOW.search(text)
    return Frame("now", phrase=m[0] if m else "", marked=m is not None)


def _during(span: tuple[float, float], phrase: str) -> Frame:
    return Frame("during", span[0], span[1], phrase=phrase, marked=True)


def _month(word: str) -> int:
    word = word.rstrip(".")[:3]
    return next(i + 1 for i, m in enumerate(_MONTHS) if m.startswith(word))


def _ts(year: int, month: int, day: int) -> float:
    return datetime(year, month, day, tzinfo=UTC).timestamp()


def _next_month(year: int, month: int) -> float:
    return _ts(year + month // 12, month % 12 + 1, 1)


def _season(season: str, year: int) -> tuple[float, float]:
    """Northern-hemisphere meteorological seasons; winter 2024 is December 2024 to February."""
    month, length = _SEASONS[season]
    end_month, end_year = month + length, year
    if end_month > 12:
        end_month, end_year = end_month - 12, year + 1
    return _ts(year, month, 1), _ts(end_year, end_month, 1)


def _part(part: str | None, start: float, end: float) -> tuple[float, float]:
    """The part of a span "early", "mid", "late", "the start of" ... names (its thirds)."""
    if not part:
        return start, end
    third = (end - start) / 3
    if part.startswith("early") or "start" in part or "beginning" in part:
        return start, start + third
    if part.startswith("mid") or "middle" in part:
        return start + third, end - third
    return end - third, end
