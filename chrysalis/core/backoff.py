"""`Backoff`: how long to wait before the next try after consecutive failures (pure, no I/O).

The n-th consecutive failure waits ``min(cap, first * factor ** (n - 1))`` seconds; with
``jitter`` the wait is spread by up to ± that fraction (still capped), so that many retriers
do not come back in step. A success starts the count again::

    b = Backoff(first=2.0, cap=600.0, jitter=0.25)
    delay = b.failure(now)      # 2 s (1.5..2.5), then 4, 8... up to 600
    if b.ready(later): ...      # the wait after the last failure is over
    b.success()                 # back to no wait

Time is whatever clock the caller passes as ``now`` (``time.monotonic()``, ``time.time()``);
the class never reads one, so it is tested without sleeping.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

__all__ = ["Backoff"]


@dataclass
class Backoff:
    """Exponential backoff with a cap and optional jitter; not thread-safe (one per retrier).

    ``first`` > 0, ``cap`` > 0, ``factor`` >= 1, 0 <= ``jitter`` < 1, else `ValueError`.
    ``failures`` counts the consecutive failures since the last success; ``retry_at`` is
    when the wait after the last one ends (None after a success).
    """

    first: float = 1.0
    cap: float = 60.0
    factor: float = 2.0
    jitter: float = 0.0
    rng: random.Random = field(default_factory=random.Random, repr=False, compare=False)
    failures: int = field(default=0, init=False)
    retry_at: float | None = field(default=None, init=False)
    _base: float = field(default=0.0, init=False, repr=False)  # the last wait before jitter

    def __post_init__(self) -> None:
        if not (self.first > 0 and self.cap > 0 and self.factor >= 1):
            raise ValueError(f"backoff needs first > 0, cap > 0 and factor >= 1, got {self!r}")
        if not 0 <= self.jitter < 1:
            raise ValueError(f"backoff jitter is a fraction in [0, 1), got {self.jitter}")

    def failure(self, now: float) -> float:
        """Count a failure at ``now``; the seconds to wait before the next try (0 < d <= cap).

        Without jitter the delays of consecutive failures never decrease."""
        self.failures += 1
        # grown step by step (not factor ** n) so a long outage cannot overflow the float
        self._base = min(self.cap, self.first if self.failures == 1 else self._base * self.factor)
        delay = self._base
        if self.jitter:
            delay = min(self.cap, delay * self.rng.uniform(1 - self.jitter, 1 + self.jitter))
        self.retry_at = now + delay
        return delay

    def success(self) -> None:
        """Forget the failures: the next failure waits ``first`` again, and `ready` is True."""
        self.failures = 0
        self.retry_at = None
        self._base = 0.0

    def ready(self, now: float) -> bool:
        """Whether a try may go ahead at ``now``: no failure since the last success, or the
        wait after the last one is over."""
        return self.retry_at is None or now >= self.retry_at
