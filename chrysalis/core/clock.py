"""Hybrid logical clocks and version vectors. Pure: no I/O but the wall clock you pass in.

An HLC timestamp is one int: ``wall_ms << 16 | counter``. It orders ops across laptops,
stays monotonic when the wall clock steps back, and never jumps further ahead than
``max_drift_ms`` because of a remote timestamp (that one is clamped, with a warning).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping

log = logging.getLogger(__name__)

COUNTER_BITS = 16
COUNTER_MASK = (1 << COUNTER_BITS) - 1
MAX_HLC = (1 << 63) - 1  # ops carry HLCs as signed 64-bit ints
DEFAULT_MAX_DRIFT_MS = 5 * 60 * 1000


def hlc_pack(wall_ms: int, counter: int = 0) -> int:
    return (wall_ms << COUNTER_BITS) | counter


def hlc_wall_ms(hlc: int) -> int:
    return hlc >> COUNTER_BITS


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


class HLC:
    """A hybrid logical clock. Not thread-safe: the store's single writer owns it.

    ``now()`` returns a timestamp above every one returned or observed before.
    ``observe(remote)`` folds a remote timestamp in; one more than ``max_drift_ms`` ahead of
    our wall clock is clamped to that bound (and logged), so a laptop with a clock set years
    ahead cannot drag every other clock with it.
    """

    def __init__(
        self,
        last: int = 0,
        *,
        wall_ms: Callable[[], int] = _wall_ms,
        max_drift_ms: int = DEFAULT_MAX_DRIFT_MS,
    ) -> None:
        self.last = last
        self._wall_ms = wall_ms
        self.max_drift_ms = max_drift_ms
        self.clamped = 0  # how many remote timestamps were too far ahead

    def now(self) -> int:
        candidate = hlc_pack(self._wall_ms())
        self.last = candidate if candidate > self.last else min(self.last + 1, MAX_HLC)
        return self.last

    def observe(self, remote: int) -> int:
        """Fold in a timestamp seen on a remote op; returns the (possibly clamped) value used."""
        limit = hlc_pack(self._wall_ms() + self.max_drift_ms, COUNTER_MASK)
        if remote > limit:
            self.clamped += 1
            log.warning(
                "remote HLC is %.1f s ahead of our wall clock; clamped to %d s of drift",
                (hlc_wall_ms(remote) - self._wall_ms()) / 1000,
                self.max_drift_ms // 1000,
            )
            remote = limit
        if remote > self.last:
            self.last = remote
        return remote

    def after(self, stamp: int) -> int:
        """A timestamp for one local write that must beat ``stamp``, even a stamp the clock
        clamped on receipt (a write that saw a value wins, whatever the clocks say).

        The clock itself does not jump to a far-future ``stamp``: only this write carries it.
        Raises `OverflowError` when ``stamp`` is at the end of the HLC range.
        """
        current = self.now()
        if current > stamp:
            return current
        if stamp >= MAX_HLC:
            raise OverflowError("cannot stamp a write after the largest HLC")
        if stamp - self.last <= self.max_drift_ms << COUNTER_BITS:
            self.last = stamp + 1  # near enough: keep the clock monotonic with this write
        return stamp + 1


# ---- version vectors: {replica_id: highest contiguous seq applied} ---------------------

VersionVector = dict[str, int]


def vv_merge(*vectors: Mapping[str, int]) -> VersionVector:
    """The pointwise maximum."""
    out: VersionVector = {}
    for vv in vectors:
        for replica, seq in vv.items():
            if seq > out.get(replica, 0):
                out[replica] = seq
    return out


def vv_dominates(a: Mapping[str, int], b: Mapping[str, int]) -> bool:
    """True when ``a`` has every op ``b`` has (a >= b pointwise)."""
    return all(a.get(replica, 0) >= seq for replica, seq in b.items())


def vv_missing(mine: Mapping[str, int], theirs: Mapping[str, int]) -> dict[str, tuple[int, int]]:
    """What ``theirs`` lacks of ``mine``: ``{replica: (first_seq, last_seq)}``, inclusive."""
    return {
        replica: (theirs.get(replica, 0) + 1, seq)
        for replica, seq in mine.items()
        if seq > theirs.get(replica, 0)
    }


def vv_covers(vv: Mapping[str, int], dots: Iterable[tuple[str, int]]) -> bool:
    """True when every ``(replica, seq)`` dot is at or below the vector."""
    return all(vv.get(replica, 0) >= seq for replica, seq in dots)
