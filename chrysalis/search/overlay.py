"""Recent writes the keyword index has not committed yet, searchable at once.

A tantivy commit fsyncs every new file: tens of milliseconds, where an agent remembers a turn
and recalls the next moment. So the index commits in batches (`KeywordIndex.apply`), and the
items written since its last commit wait here: search scores them by BM25 with the committed
index's statistics and merges them with its hits; a pending item hides its committed version.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from chrysalis.core.events import split_key
from chrysalis.core.models import Filters

K1, B = 1.2, 0.75  # tantivy's BM25 parameters


@dataclass(frozen=True)
class Pending:
    """Items written since the last commit: ``key -> (stems, fields)``. Immutable: the index
    replaces it (`with_rows`, or an empty one at a commit; a delete of one commits first)."""

    items: dict[str, tuple[Counter[str], dict[str, Any]]] = field(default_factory=dict)
    since: float | None = None  # monotonic time of the oldest
    holding: Counter[str] = field(default_factory=Counter)  # stem -> items holding it

    def __len__(self) -> int:
        return len(self.items)

    def __contains__(self, key: object) -> bool:
        return key in self.items

    def with_rows(
        self, rows: Iterable[tuple[str, Iterable[str], dict[str, Any]]], now: float
    ) -> Pending:
        """A new `Pending` with ``rows`` (key, stems, fields) added: never changed in place,
        so a search that holds one (without the index's lock) sees a consistent set."""
        items, holding = dict(self.items), self.holding.copy()
        for key, stems, fields in rows:
            if key in items:
                holding.subtract(items[key][0].keys())
            items[key] = (tf := Counter(stems), fields)
            holding.update(tf.keys())
        return Pending(items, now if self.since is None else self.since, +holding)

    def live(self) -> list[tuple[str, Counter[str], dict[str, Any]]]:
        return [(k, tf, fields) for k, (tf, fields) in self.items.items()]

    def search(
        self,
        stems: list[str],
        filters: Filters,
        doc_freq: Callable[[str], int],
        total: int,
        avg_len: float,
    ) -> list[tuple[str, float]]:
        """``(key, BM25)`` of the pending items that hold any of ``stems`` and pass
        ``filters``. The statistics are those tantivy uses once they are committed: ``total``
        documents in the index (as tantivy counts them) and ``doc_freq`` there, plus every
        pending item, whatever the filters (they narrow the hits, not the corpus)."""
        live = [(k, tf, f) for k, tf, f in self.live() if passes(k, f, filters)]
        if not live:
            return []
        n = total + len(self.items)
        idf = {}
        for stem in stems:
            df = doc_freq(stem) + self.holding[stem]
            idf[stem] = math.log(1 + (n - df + 0.5) / (df + 0.5))
        scored = []
        for key, tf, _ in live:
            norm = K1 * (1 - B + B * sum(tf.values()) / max(avg_len, 1.0))
            score = sum(idf[s] * tf[s] * (K1 + 1) / (tf[s] + norm) for s in stems if tf[s])
            if score > 0:
                scored.append((key, score))
        return scored

    def holding_all(self, stems: list[str]) -> list[str]:
        """Keys of the pending beads whose words include every one of ``stems``."""
        return [
            k for k, tf, _ in self.live() if split_key(k)[0] == "bead" and all(tf[s] for s in stems)
        ]


def passes(key: str, fields: dict[str, Any], f: Filters) -> bool:
    """Whether an item passes ``f`` as the index's filter queries would judge it: bead
    conditions bind beads only, ``kinds`` every item."""
    kind = split_key(key)[0]
    if f.kinds and kind not in f.kinds:
        return False
    if kind != "bead":
        return True
    ts, importance = fields.get("ts"), fields.get("importance") or 0.0
    if f.session_id is not None and fields.get("session") != f.session_id:
        return False
    if f.role is not None and fields.get("role") != f.role:
        return False
    if f.since is not None and (ts is None or ts < f.since):
        return False
    if f.until is not None and (ts is None or ts > f.until):
        return False
    if f.min_importance is not None and importance < f.min_importance:
        return False
    return not f.tags or bool(set(f.tags) & set(fields.get("tags", ())))
