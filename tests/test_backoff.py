"""`Backoff`: capped, growing without jitter, reset by a success, `ready` after the wait."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chrysalis.core.backoff import Backoff

seconds = st.floats(min_value=1e-3, max_value=1e6)


@st.composite
def backoffs(draw: st.DrawFn, jitter: bool) -> Backoff:
    return Backoff(
        first=draw(seconds),
        cap=draw(seconds),
        factor=draw(st.floats(min_value=1.0, max_value=10.0)),
        jitter=draw(st.floats(min_value=0.0, max_value=0.99)) if jitter else 0.0,
        rng=random.Random(draw(st.integers())),
    )


@given(backoffs(jitter=True), st.integers(min_value=1, max_value=2000))
def test_delays_are_positive_and_never_exceed_the_cap(b: Backoff, n: int) -> None:
    for _ in range(n):
        assert 0 < b.failure(now=0.0) <= b.cap


@given(backoffs(jitter=False), st.integers(min_value=2, max_value=200))
def test_without_jitter_delays_grow_monotonically_to_the_cap(b: Backoff, n: int) -> None:
    delays = [b.failure(now=0.0) for _ in range(n)]
    assert delays[0] == min(b.first, b.cap)
    assert delays == sorted(delays)
    for before, after in itertools.pairwise(delays):
        assert after == min(b.cap, before * b.factor)


@given(backoffs(jitter=True), st.integers(min_value=1, max_value=50))
def test_a_success_starts_again(b: Backoff, n: int) -> None:
    fresh = Backoff(b.first, b.cap, b.factor, b.jitter, rng=random.Random(7))
    for _ in range(n):
        b.failure(now=0.0)
    b.success()
    assert b.failures == 0 and b.retry_at is None and b.ready(now=float("-inf"))
    b.rng = random.Random(7)
    assert b.failure(now=0.0) == fresh.failure(now=0.0)


@given(backoffs(jitter=True), st.floats(min_value=-1e9, max_value=1e9))
def test_ready_once_the_wait_is_over(b: Backoff, now: float) -> None:
    assert b.ready(now)  # no failure yet
    delay = b.failure(now)
    assert b.failures == 1 and b.retry_at == now + delay
    assert not b.ready(now) or now + delay == now  # a delay below the float's resolution
    assert b.ready(now + delay)


def test_the_daemon_jobs_schedule() -> None:
    """2, 4, 8... s up to the cap: what `chrysalisd.jobs` documents (here without jitter)."""
    b = Backoff(first=2.0, cap=600.0)
    assert [b.failure(now=0.0) for _ in range(12)] == [
        2, 4, 8, 16, 32, 64, 128, 256, 512, 600, 600, 600
    ]  # fmt: skip


@pytest.mark.parametrize(
    "kw", [{"first": 0.0}, {"cap": -1.0}, {"factor": 0.5}, {"jitter": 1.0}, {"jitter": -0.1}]
)
def test_bad_parameters_are_refused(kw: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="backoff"):
        Backoff(**kw)
