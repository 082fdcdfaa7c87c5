"""Automatic importance: how new a bead's words are to the memory (DESIGN §14).

A bead written without an importance gets one at its origin, before its op is made, so the
value travels in the ``bead.add`` op and every replica holds the same (nothing to converge).
It is the bead's *novelty* against what the memory already holds, read off the keyword index:

    novelty = mean over the bead's distinct content words w of  log((N+1)/(n_w+1)) / log(N+1)

where N is the number of items the index holds and n_w how many of them hold w: a word no item
holds counts 1, a word every item holds counts 0. The words are the index's own terms
(lowercased, stemmed, stop words dropped), so "adopted" and "adopt" are one word. Beads
earlier in the same batch count as held (an import of a conversation sees its own past),
and so do the rows the index holds back for its next commit (`overlay.Pending`).

    importance = FLOOR + (CEILING - FLOOR) * novelty

A bead of no content words ("ok", "yes, it is") gets FLOOR; a bead of words the memory has
never seen gets CEILING. The ends 0 and 1 stay for people and agents who say so themselves.

Not a judgment of meaning: a rare word is not always an important one, and the first
mention of a topic counts more than its restatement. Vector novelty (distance to the nearest
item) would see paraphrase, but it needs the bead's embedding before the write, which an
Ollama embedder makes in tens of milliseconds; `remember` must stay sub-millisecond.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence

FLOOR = 0.1
CEILING = 0.9
MAX_CHARS = 20_000  # a long bead's novelty is read from its start: tokenizing 8 MB is slow


def novelty(
    terms: Sequence[Sequence[str]], doc_freq: Callable[[str], int], total: int
) -> list[float]:
    """The novelty in [0, 1] of each bead, given its distinct ``terms``, the number of held
    items holding a term (``doc_freq``) and of items held (``total``). Bead i counts beads
    0..i-1 as held."""
    held: Counter[str] = Counter()
    known: dict[str, int] = {}
    out = []
    for i, words in enumerate(terms):
        n_items = total + i
        if not words:
            out.append(0.0)
        elif n_items == 0:
            out.append(1.0)
        else:
            scale = math.log(n_items + 1)
            score = 0.0
            for w in words:
                if w not in known:
                    known[w] = doc_freq(w)
                n_w = min(known[w] + held[w], n_items)
                score += math.log((n_items + 1) / (n_w + 1)) / scale
            out.append(score / len(words))
        held.update(words)
    return out


def importance(novelty: float) -> float:
    """The importance a bead of this ``novelty`` is given."""
    return round(FLOOR + (CEILING - FLOOR) * min(1.0, max(0.0, novelty)), 3)
