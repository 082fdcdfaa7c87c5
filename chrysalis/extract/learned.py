# ruff: noqa: RUF001 - a curly apostrophe is text here
"""A learned second opinion on whether a sentence tells the speaker's value of an attribute,
for the sentences whose words `chrysalis.extract.cues` does not know.

People tell a new home, job, drink, partner or car in more ways than a word list holds ("X it
is, then", "the commute from X is brutal"). Per attribute, a logistic regression over the
sentence's words, with the value and every other capitalised name masked ("VAL", "NAME") so
that it learns the wording and never the names, and the words next to the value, scores how
likely the sentence states the speaker's value. Its weights (`learned_cues.json`, a few
thousand numbers) are trained by `bench/train_cues.py` on the families of wordings in
`bench/changing_facts.py` that the rules were built from, statements against everyday
chatter (friends' homes, trips, drinks tried once); the families kept out of the rules'
making are kept out of its training too, so they measure it.

It only stands in for the attribute's words: whose the value is, whether it is asserted and
whether it is past are still decided by the rules (`chrysalis.extract.typed`).

A weights file that is missing, unreadable or not as `bench/train_cues.py` wrote it (its
version is the digest of its weights; each threshold between 0.5 and 1, each number finite
and small) is not used: a warning is logged and nothing is guessed, as before the model (a
damaged threshold of 0, or a NaN, would take every sentence with a name for a statement).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
from functools import cache
from importlib import resources

__all__ = ["features", "likely", "stands", "version"]

_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)*|[?!]", re.UNICODE)
_MODEL = "learned_cues.json"
_LARGEST = 50.0  # no trained weight or bias comes near (they are within ±3)
log = logging.getLogger(__name__)

_Model = dict[str, tuple[float, float | None, dict[str, float]]]


def features(sentence: str, start: int, end: int) -> set[str]:
    """The features of the value at ``sentence[start:end]``: the sentence's lower-case words
    (the value as "VAL", a capitalised word after the first as "NAME", a number as "NUM"),
    the two words on each side of the value, and the pair before it."""
    tokens: list[str] = []
    at = -1
    for m in _TOKEN.finditer(sentence):
        if m.end() <= start or m.start() >= end:
            word = m.group(0)
            if word[0].isdigit():
                tokens.append("NUM")
            elif word[0].isupper() and tokens and word != "I":
                tokens.append("NAME")
            else:
                tokens.append(word.lower().replace("’", "'"))
        elif at < 0:
            at = len(tokens)
            tokens.append("VAL")
    out = {"w:" + t for t in tokens}
    if at >= 0:
        for d in (1, 2):
            if at - d >= 0:
                out.add(f"L{d}:{tokens[at - d]}")
            if at + d < len(tokens):
                out.add(f"R{d}:{tokens[at + d]}")
        out.add("LL:" + " ".join(tokens[max(0, at - 2) : at]))
    return out


def _read() -> str:
    return resources.files(__package__).joinpath(_MODEL).read_text("utf-8")


@cache
def _weights() -> tuple[str, _Model]:
    try:
        return _parse(_read())
    except (
        OSError,
        UnicodeError,
        ValueError,
        TypeError,
        KeyError,
        AttributeError,
        RecursionError,
    ) as e:
        log.warning("%s is not usable (%s): no attribute is guessed from wording", _MODEL, e)
        return "learned/none", {}


def _number(x: object) -> float:
    if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x):
        raise ValueError(f"not a finite number: {x!r}")
    if abs(x) > _LARGEST:
        raise ValueError(f"out of range: {x!r}")
    return float(x)


def _parse(raw: str) -> tuple[str, _Model]:
    """The version and per-attribute bias, threshold and weights of a weights file, or a
    `ValueError` (or the like) when it is not as `bench/train_cues.py` writes it."""
    data = json.loads(raw)
    attrs = data["attributes"]
    digest = hashlib.sha256(json.dumps(attrs, sort_keys=True).encode()).hexdigest()[:12]
    if data["version"] != f"learned/{digest}":
        raise ValueError("its version is not the digest of its weights")
    model: _Model = {}
    for attr, m in attrs.items():
        low = None if m.get("min") is None else _number(m["min"])
        if low is not None and not 0.5 <= low < 1:
            raise ValueError(f"{attr}'s threshold {low} is not in [0.5, 1)")
        weights = {str(k): _number(v) for k, v in m["weights"].items()}
        model[str(attr)] = (_number(m["bias"]), low, weights)
    return data["version"], model


def version() -> str:
    """The trained model's version (a digest of its weights)."""
    return _weights()[0]


def likely(attr: str, sentence: str, start: int, end: int) -> float:
    """How likely (0-1) ``sentence`` states the speaker's ``attr`` (a typed attribute:
    lives_in, works_at, drinks, drives, partner) with the value at ``start:end``; 0.0 for an
    attribute the model has no weights for."""
    model = _weights()[1].get(attr)
    if model is None:
        return 0.0
    bias, _, weights = model
    z = bias + sum(weights.get(f, 0.0) for f in features(sentence, start, end))
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


def stands(attr: str, sentence: str, start: int, end: int) -> bool:
    """Whether the learned opinion stands in for ``attr``'s words here: its score reaches
    the attribute's threshold. Each was picked by `bench/train_cues.py` with every training
    family left out in turn: the lowest score at which that family's chatter (a friend's
    home, a drink ordered for someone, a hire car) is taken for a statement at most 2 % of the
    time. A drink or a car is named in passing more often than a home or an employer, so their
    thresholds are higher; an attribute with no such score has none and is never guessed."""
    model = _weights()[1].get(attr)
    return (
        model is not None
        and model[1] is not None
        and likely(attr, sentence, start, end) >= model[1]
    )
