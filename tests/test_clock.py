from __future__ import annotations

import logging

from hypothesis import given
from hypothesis import strategies as st

from chrysalis.core.clock import (
    HLC,
    hlc_pack,
    hlc_wall_ms,
    vv_covers,
    vv_dominates,
    vv_merge,
    vv_missing,
)


class FakeWall:
    def __init__(self, ms: int) -> None:
        self.ms = ms

    def __call__(self) -> int:
        return self.ms


def test_now_is_monotonic_when_the_wall_clock_steps_back() -> None:
    wall = FakeWall(1_000_000)
    clock = HLC(wall_ms=wall)
    a = clock.now()
    wall.ms -= 60_000  # NTP steps the clock back a minute
    b = clock.now()
    c = clock.now()
    assert a < b < c
    assert hlc_wall_ms(c) == 1_000_000  # the logical part carries it, not the wall


def test_restart_resumes_above_the_persisted_clock() -> None:
    wall = FakeWall(5_000)
    last = HLC(wall_ms=wall).now()
    wall.ms = 4_000  # rebooted with an earlier wall clock
    assert HLC(last, wall_ms=wall).now() > last


def test_observe_moves_the_clock_forward_within_drift() -> None:
    wall = FakeWall(10_000)
    clock = HLC(wall_ms=wall, max_drift_ms=60_000)
    remote = hlc_pack(40_000, 3)
    assert clock.observe(remote) == remote
    assert clock.now() > remote
    assert clock.clamped == 0


def test_observe_clamps_a_remote_far_in_the_future_and_warns(caplog) -> None:  # type: ignore[no-untyped-def]
    wall = FakeWall(10_000)
    clock = HLC(wall_ms=wall, max_drift_ms=60_000)
    future = hlc_pack(10_000 + 365 * 86_400_000)
    with caplog.at_level(logging.WARNING, logger="chrysalis.core.clock"):
        used = clock.observe(future)
    assert used < future
    assert hlc_wall_ms(clock.now()) <= 10_000 + 60_000 + 1
    assert clock.clamped == 1
    assert "ahead of our wall clock" in caplog.text


def test_after_beats_a_clamped_stamp() -> None:
    wall = FakeWall(10_000)
    clock = HLC(wall_ms=wall, max_drift_ms=1_000)
    future = hlc_pack(10_000 + 86_400_000)
    clock.observe(future)
    assert clock.after(future) > future


@given(
    st.lists(
        st.tuples(st.booleans(), st.integers(0, 10**9), st.integers(-5_000, 5_000)), max_size=60
    )
)
def test_hlc_never_goes_backwards(steps: list[tuple[bool, int, int]]) -> None:
    wall = FakeWall(1_000_000)
    clock = HLC(wall_ms=wall, max_drift_ms=10_000)
    seen = clock.now()
    for is_remote, remote_ms, jump in steps:
        wall.ms = max(0, wall.ms + jump)
        if is_remote:
            clock.observe(hlc_pack(remote_ms))
        stamp = clock.now()
        assert stamp > seen
        seen = stamp


vvs = st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), st.integers(0, 20), max_size=4)


@given(vvs, vvs, vvs)
def test_vv_merge_is_a_join(a: dict[str, int], b: dict[str, int], c: dict[str, int]) -> None:
    assert vv_merge(a, b) == vv_merge(b, a)
    assert vv_merge(vv_merge(a, b), c) == vv_merge(a, vv_merge(b, c))
    assert vv_merge(a, a) == {k: v for k, v in a.items() if v > 0}
    m = vv_merge(a, b)
    assert vv_dominates(m, a) and vv_dominates(m, b)


@given(vvs, vvs)
def test_vv_missing_is_exactly_what_the_other_lacks(
    mine: dict[str, int], theirs: dict[str, int]
) -> None:
    missing = vv_missing(mine, theirs)
    for replica, (first, last) in missing.items():
        assert first == theirs.get(replica, 0) + 1 and last == mine[replica] and first <= last
    filled = vv_merge(theirs, {r: last for r, (_, last) in missing.items()})
    assert vv_dominates(filled, mine)
    assert not missing or not vv_dominates(theirs, mine)


def test_vv_covers() -> None:
    assert vv_covers({"a": 3}, [("a", 1), ("a", 3)])
    assert not vv_covers({"a": 3}, [("a", 4)])
    assert not vv_covers({}, [("b", 1)])
