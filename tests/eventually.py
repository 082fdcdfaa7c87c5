"""One way to wait in tests: `eventually` polls until something holds, within a deadline."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def eventually(
    probe: Callable[[], T],
    *,
    timeout: float,
    what: str,
    until: Callable[[T], object] = bool,
    interval: float = 0.05,
) -> T:
    """Call ``probe`` until ``until(value)`` is true (by default: the value is truthy) and
    return that value. ``probe`` runs at least once, and once more at the deadline.

    Raises `AssertionError` after ``timeout`` seconds, naming ``what`` was awaited and the
    last value seen, e.g. ``waited 5.0 s for the indexer to catch up; last: {'bead': 3}``.
    An exception ``probe`` raises is not retried: it fails the test as it is.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if until(value):
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"waited {timeout:g} s for {what}; last: {value!r}")
        time.sleep(min(interval, max(0.0, deadline - time.monotonic())))
