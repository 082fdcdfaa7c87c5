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
"""

from __future__ import annotations

import json
import math
import re
from functools import cache
from importlib import resources

__all__ = ["features", "likely", "stands", "version"]

_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)*|[?!]", re.UNICODE)
_MODEL = "learned_cues.json"


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


@cache
def _weights() -> tuple[str, dict[str, tuple[float, float | None, dict[str, float]]]]:
    data = json.loads(resources.files(__package__).joinpath(_MODEL).read_text("utf-8"))
    return data["version"], {
        attr: (
            float(m["bias"]),
            None if m.get("min") is None else float(m["min"]),
            {k: float(v) for k, v in m["weights"].items()},
        )
        for attr, m in data["attributes"].items()
    }


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
