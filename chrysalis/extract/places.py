# ruff: noqa: RUF001, SIM905 - curly quotes are text here; word lists read best as one string
"""A gazetteer: whether a capitalised name is a city, whatever sentence it stands in.

The names are GeoNames' cities of 15,000 people or more as the `geotext` package ships them
(its data file only: the package's own reader is not used). Each city gives its name and its
ASCII name; a city of 100,000 or more also gives its other Latin-script names ("Lisboa",
"Munich", "Gothenburg"). Names that are also everyday English words when capitalised ("Nice",
"Reading", "Split", "Of") are left out: a place must be told by its name, not guessed from a
word. The data is read once, on first use (~0.7 s), and kept (~50,000 names).

Data: GeoNames (geonames.org), CC BY 3.0 as geotext ships it; geotext is MIT-licensed.
"""

from __future__ import annotations

import importlib.util
import re
from functools import cache
from pathlib import Path

__all__ = ["city_in_lower_case", "is_city"]

_MIN_ALTERNATES = 100_000  # a city this big also answers to its other names
# A Latin-script name of one to four words ("Andorra la Vella", "Saint-Étienne").
_LATIN = re.compile(r"^[A-ZÀ-Þ][a-zß-ÿ'’.-]+(?:[ -][A-Za-zÀ-ÿ'’.-]+){0,3}$")
# Cities whose names are capitalised everyday words: a sentence's "Best" or "Split" is no
# place. (First names that are cities, "Florence", stay: a home needs a home's words too.)
_WORDS = frozenset(
    """of best nice reading bath mobile split male police sale bar man gap date orange hope
    union normal mission plain plains temple independence liberty paradise enterprise
    commerce success friendship concord harmony providence opportunity university college
    park spring springs valley city center centre town village port bay beach lake river hill
    hills mountain view heights grove north south east west central new old ocean sun moon
    star gold silver santa san de la el los las le du des di da do dos das along can march
    most much name same since than""".split()
)


# Big cities' names that are also everyday words in lower case ("in the van", "a man").
_LOWER_WORDS = frozenset(
    """cork delta hull man orange sale surprise tyre van mobile bath victoria florence
    austin jackson chester york""".split()
) | frozenset({"the city", "city center", "city centre", "la city", "high point", "chai chai"})


@cache
def _gazetteer() -> tuple[frozenset[str], dict[str, str]]:
    """The names, and the big cities' names by their lower case (`city_in_lower_case`)."""
    spec = importlib.util.find_spec("geotext")
    if spec is None or not spec.submodule_search_locations:
        return frozenset(), {}  # not installed: no place is recognised by name alone
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "cities15000.txt"
    names: set[str] = set()
    lower: dict[str, str] = {}
    with path.open(encoding="utf-8") as f:
        for line in f:
            cols = line.split("\t")
            if len(cols) < 15:
                continue
            names.add(cols[1])
            names.add(cols[2])
            if int(cols[14] or 0) >= _MIN_ALTERNATES:
                alternates = [a for a in cols[3].split(",") if _LATIN.match(a)]
                names.update(alternates)
                # (in lower case, the city's own names and its alternates of two words or
                # more: its one-word alternates hold everyday words, "luck" for Lutsk, "turn"
                # for Angren, "rest" for Rasht, "lime" for Lima)
                for n in (cols[1], cols[2], *(a for a in alternates if " " in a.strip())):
                    if _LATIN.match(n) and n.lower() not in _WORDS | _LOWER_WORDS:
                        lower.setdefault(n.lower(), n)
    kept = frozenset(n for n in names if n.lower() not in _WORDS and len(n) > 2)
    return kept, {k: v for k, v in lower.items() if v in kept}


def _names() -> frozenset[str]:
    return _gazetteer()[0]


def is_city(name: str) -> bool:
    """Whether ``name`` (as written, capitalised) is a city's name in the gazetteer."""
    return name in _names()


def city_in_lower_case(name: str) -> str | None:
    """The name of a city of `_MIN_ALTERNATES` people or more written ``name`` in lower case
    ("lyon" -> "Lyon", as typed on a phone), or None. Only big cities: their names are
    seldom everyday words, and those that are (`_LOWER_WORDS`, `_WORDS`) are left out."""
    return _gazetteer()[1].get(name)
