"""The tests' one way to wait (`tests.eventually`)."""

from __future__ import annotations

import itertools
import re
import time

import pytest

from tests.eventually import eventually


def test_returns_the_first_value_that_holds() -> None:
    counter = itertools.count()
    assert eventually(lambda: next(counter), until=lambda n: n >= 3, timeout=5, what="3",
                      interval=0) == 3  # fmt: skip
    assert eventually(lambda: "ready", timeout=0, what="x") == "ready"  # once, even at 0 s


def test_says_what_it_waited_for_and_the_last_value_within_the_deadline() -> None:
    started = time.monotonic()
    with pytest.raises(AssertionError, match=re.escape("waited 0.2 s for the moon; last: []")):
        eventually(list, timeout=0.2, what="the moon", interval=0.05)
    assert 0.2 <= time.monotonic() - started < 1.0


def test_an_error_in_the_probe_fails_at_once() -> None:
    def broken() -> bool:
        raise KeyError("gone")

    started = time.monotonic()
    with pytest.raises(KeyError):
        eventually(broken, timeout=10, what="never")
    assert time.monotonic() - started < 1.0
