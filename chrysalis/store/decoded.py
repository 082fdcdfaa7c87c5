"""`DecodedCache`: decoded op data of recently read beads, shared by readers and the writer."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any


class DecodedCache:
    """Decoded op data of recently read beads, keyed by op key: ``last_beads`` reads the same
    few dozen beads on every agent turn, and decoding is most of its cost.

    Safe because an op's data changes only when a forget erases it: the writer calls
    `invalidate` after such a commit, and a reader may `put` only if no invalidation
    happened since it took `epoch` before opening its transaction.
    """

    def __init__(self, capacity: int = 8192) -> None:
        self.capacity = capacity
        self.epoch = 0
        # Oldest first. A plain dict evicting with ``pop(next(iter(d)))`` scans the slots its
        # earlier evictions left empty: ~19 us a put once full, a few hundred us a recall at
        # 100k beads (each described bead a miss); OrderedDict pops its oldest in O(1).
        self._data: OrderedDict[bytes, dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: bytes) -> dict[str, Any] | None:
        return self._data.get(key)

    def put(self, key: bytes, data: dict[str, Any], epoch: int) -> None:
        with self._lock:
            if epoch != self.epoch:
                return
            if len(self._data) >= self.capacity:
                self._data.popitem(last=False)
            self._data[key] = data

    def invalidate(self, keys: list[bytes]) -> None:
        with self._lock:
            self.epoch += 1
            for key in keys:
                self._data.pop(key, None)
