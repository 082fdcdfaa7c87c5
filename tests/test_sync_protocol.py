"""The sync protocol's decisions (chrysalis/sync/protocol.py), pure, under Hypothesis."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chrysalis.core.errors import SegmentError
from chrysalis.store.keys import same_op
from chrysalis.sync import protocol
from chrysalis.sync.layout import parse_seg_key, seg_key, snapshot_key, snapshots_of

Op = dict[str, Any]


def op(seq: int, replica: str = "r", content: str = "x") -> Op:
    bead = f"b{seq}"
    data = {"id": bead, "ts": 1.0, "content": content}
    return {
        "replica": replica,
        "seq": seq,
        "hlc": seq,
        "kind": "bead.add",
        "target": bead,
        "data": data,
    }


def erased(o: Op) -> Op:
    return {**o, "data": {"id": o["data"]["id"], "ts": o["data"]["ts"], "erased": True}}


@st.composite
def partitions(draw: st.DrawFn, n: int) -> list[tuple[int, int]]:
    """Seqs 1..n cut into consecutive segments ``(first, last)``."""
    cuts = sorted(draw(st.sets(st.integers(2, n), max_size=n))) if n > 1 else []
    firsts = [1, *cuts]
    return [(f, nxt - 1) for f, nxt in zip(firsts, [*firsts[1:], n + 1], strict=True)]


# ---- layout ----------------------------------------------------------------------------------


@given(st.text("0123456789abcdef", min_size=1, max_size=16), st.integers(0, 2**64 - 2))
def test_segment_keys_round_trip_and_sort_as_numbers(replica: str, first: int) -> None:
    key = seg_key(replica, first)
    assert parse_seg_key(key) == (replica, first, key)
    assert seg_key(replica, first) < seg_key(replica, first + 1)
    assert snapshot_key(replica, first).startswith(snapshots_of(replica))


@pytest.mark.parametrize(
    "key", ["changed", "format.json", "ops/r", "ops/r/zz.seg", "ops/r/1.snap", "ops/r/x/1.seg"]
)
def test_other_keys_are_not_segments(key: str) -> None:
    assert parse_seg_key(key) is None


# ---- push ------------------------------------------------------------------------------------


@given(
    sizes=st.lists(st.integers(1, 500), max_size=60),
    max_ops=st.integers(1, 20),
    max_bytes=st.integers(1, 2000),
    upto=st.none() | st.integers(0, 70),
)
def test_segment_cutting_covers_every_op_once_in_order_within_the_caps(
    sizes: list[int], max_ops: int, max_bytes: int, upto: int | None
) -> None:
    log = [{**op(i + 1), "size": size} for i, size in enumerate(sizes)]
    cursor, segments = 0, []
    while True:  # the push loop: read after the cursor (at most max_ops), cut, move the cursor
        after = [o for o in log if o["seq"] > cursor][:max_ops]
        cut = protocol.cut_segment(
            after, upto=upto, size=lambda o: o["size"], max_ops=max_ops, max_bytes=max_bytes
        )
        if not cut:
            break
        segments.append(cut)
        cursor = cut[-1]["seq"]
    assert [o for s in segments for o in s] == [o for o in log if upto is None or o["seq"] <= upto]
    for s in segments:
        assert 1 <= len(s) <= max_ops
        assert len(s) == 1 or sum(o["size"] for o in s) <= max_bytes
        assert [o["seq"] for o in s] == list(range(s[0]["seq"], s[-1]["seq"] + 1))


@given(n=st.integers(1, 12), data=st.data())
def test_a_taken_name_holding_our_ops_has_landed(n: int, data: st.DataObject) -> None:
    first = data.draw(st.integers(1, n))
    ours = [op(s) for s in range(first, n + 1)]
    extra = data.draw(st.integers(0, 3))
    cut = data.draw(st.integers(first, n))  # an earlier, shorter attempt is the same name too
    theirs = [op(s) for s in range(first, cut + 1 + extra)]
    theirs = [erased(o) if data.draw(st.booleans()) else o for o in theirs]  # forgotten since
    own = data.draw(st.booleans())
    verdict = protocol.judge_taken("k", "r", ours, theirs, own=own, same=same_op)
    if own and cut + extra > n:
        assert isinstance(verdict, protocol.Clone)  # it holds ops of our id we never wrote
        assert "which we never wrote" in verdict.detail
    else:
        assert verdict == protocol.Landed(min(cut + extra, n))


@given(n=st.integers(1, 12), data=st.data())
def test_a_taken_name_with_other_content_is_a_clone(n: int, data: st.DataObject) -> None:
    ours = [op(s) for s in range(1, n + 1)]
    theirs = list(ours[: data.draw(st.integers(1, n))])
    i = data.draw(st.integers(0, len(theirs) - 1))
    theirs[i] = op(theirs[i]["seq"], content="written by the twin")
    verdict = protocol.judge_taken(
        "k", "r", ours, theirs, own=data.draw(st.booleans()), same=same_op
    )
    assert verdict == protocol.Clone(f"k holds other content for op r:{i + 1}")


def test_our_heartbeat_stops_push_when_decommissioned_or_ahead_of_us() -> None:
    judge = protocol.judge_own_heartbeat
    assert judge(None, "me", 5) is None
    assert judge({"pushed": 5}, "me", 5) is None
    assert judge({"pushed": 6}, "me", 5) == protocol.Clone(
        "the remote says replica me pushed up to 6 but this data dir pushed only 5"
    )
    retired = judge({"pushed": 9, "decommissioned": True, "by": "b"}, "me", 5)
    assert isinstance(retired, protocol.Retired)
    assert retired.why.startswith("replica me was decommissioned by b;")


@given(last=st.integers(0, 9), upto=st.none() | st.integers(0, 9), pushed=st.integers(0, 9))
def test_waiting_means_ops_up_to_the_bound_past_the_cursor(
    last: int, upto: int | None, pushed: int
) -> None:
    bound = last if upto is None else min(last, upto)
    assert protocol.unpushed(last, upto, pushed) == any(s > pushed for s in range(1, bound + 1))


# ---- pull ------------------------------------------------------------------------------------


@given(n=st.integers(1, 40), data=st.data())
def test_gap_detection_never_applies_past_a_missing_seq(n: int, data: st.DataObject) -> None:
    segs = data.draw(partitions(n))
    segs = segs[data.draw(st.integers(0, len(segs) - 1)) :]  # the oldest ones compacted
    have = data.draw(st.integers(0, n))
    pushed = data.draw(st.integers(0, n))  # its heartbeat may lag behind its segments
    firsts = [f for f, _ in segs]
    if protocol.up_to_date(firsts, pushed=pushed, have=have):
        assert have >= firsts[-1]  # we hold the newest segment's first op at least
        return
    hole = protocol.gap(firsts, have)
    if hole is not None:
        assert hole == (have + 1, segs[0][0] - 1)  # exactly the seqs no segment holds
        return
    read = []
    for i in range(protocol.read_from(firsts, have), len(segs)):
        if protocol.held(firsts, i, have):
            continue
        first, last = segs[i]
        assert first <= have + 1  # contiguous with what we hold: nothing after a hole
        # it brings something new; only the newest may be read again, while the heartbeat lags
        assert last > have or i == len(segs) - 1
        read.append(i)
        have = max(have, last)
    assert have == n
    assert read == sorted(read)


@given(n=st.integers(1, 40), data=st.data())
def test_a_segment_deleted_mid_run_is_found_and_its_origin_puts_back_exactly_it(
    n: int, data: st.DataObject
) -> None:
    segs = data.draw(partitions(n))
    lost = data.draw(st.sets(st.sampled_from(range(1, len(segs))))) if len(segs) > 1 else set()
    kept = [seg for i, seg in enumerate(segs) if i not in lost]  # the first segment stays
    firsts = [f for f, _ in kept]
    # a reader walking the kept segments from nothing stops exactly at the first lost seq
    have, hole = 0, None
    for i in range(protocol.read_from(firsts, have), len(kept)):
        hole = protocol.hole_before(kept[i][0], have)
        if hole is not None:
            break
        have = max(have, kept[i][1])
    if hole is None:  # nothing follows the loss: its heartbeat's ``pushed`` shows it
        hole = protocol.hole_before(n + 1, have)
    missing = [seq for i, (f, last) in enumerate(segs) if i in lost for seq in range(f, last + 1)]
    if not missing:
        assert hole is None and have == n
        return
    assert hole is not None and hole[0] == missing[0] == have + 1
    assert all(seq in missing for seq in range(hole[0], hole[1] + 1))
    # the origin puts back the hole, never past its cursor nor over a segment that exists
    span = protocol.republish_range(firsts, hole, pushed=n)
    assert span == hole
    assert protocol.republish_range(firsts, (firsts[-1], n), pushed=n) is None


@given(
    firsts=st.lists(st.integers(1, 50), min_size=1, unique=True),
    start=st.integers(-2, 60),
    end=st.integers(-2, 60),
    pushed=st.integers(0, 60),
)
def test_a_reported_hole_never_makes_us_put_what_exists_or_was_never_pushed(
    firsts: list[int], start: int, end: int, pushed: int
) -> None:
    firsts.sort()
    span = protocol.republish_range(firsts, (start, end), pushed)
    if span is not None:
        lo, hi = span
        assert 1 <= lo <= hi <= pushed and lo == start and hi <= end
        assert not any(lo <= f <= hi for f in firsts)


@given(firsts=st.lists(st.integers(1, 50), min_size=1, unique=True), have=st.integers(0, 60))
def test_pull_starts_at_the_segment_holding_the_next_seq(firsts: list[int], have: int) -> None:
    firsts.sort()
    i = protocol.read_from(firsts, have)
    if firsts[0] <= have + 1:
        assert firsts[i] <= have + 1
        assert i + 1 == len(firsts) or firsts[i + 1] > have + 1
    else:
        assert i == 0


def test_segments_are_checked_against_their_name() -> None:
    ops = [op(s) for s in (3, 4, 5)]
    payload = protocol.segment_payload("r", ops)
    assert protocol.check_segment(payload, "k", "r", 3) == ops
    for bad, replica, first in [
        (payload, "other", 3),
        (payload, "r", 2),
        ({**payload, "last": 6}, "r", 3),
        ({**payload, "ops": [ops[0], ops[2]]}, "r", 3),
        ({**payload, "ops": []}, "r", 3),
        ("not a segment", "r", 3),
    ]:
        with pytest.raises(SegmentError, match="k: its ops are not"):
            protocol.check_segment(bad, "k", replica, first)


def test_an_idle_pull_needs_the_same_marker_and_no_force() -> None:
    assert protocol.idle(b"t", b"t", force=False)
    assert not protocol.idle(b"t", b"t", force=True)
    assert not protocol.idle(b"u", b"t", force=False)
    assert not protocol.idle(None, None, force=False)  # no marker yet: look


# ---- snapshots and compaction ----------------------------------------------------------------

REPLICAS = ["me", "a", "b", "c"]
vvs = st.dictionaries(st.sampled_from(REPLICAS), st.integers(0, 30))


@st.composite
def remotes(draw: st.DrawFn) -> tuple[dict[str, dict[str, Any]], dict[str, list[tuple[int, int]]]]:
    """Heartbeats (some decommissioned, some with a snapshot) and each replica's segments."""
    hbs = {}
    for r in draw(st.sets(st.sampled_from(REPLICAS))):
        hb: dict[str, Any] = {"replica": r, "vv": draw(vvs), "pushed": 0}
        if draw(st.booleans()):
            hb["snapshot"] = {"key": snapshot_key(r, 1), "vv": draw(vvs)}
        if draw(st.integers(0, 3)) == 0:
            hb["decommissioned"] = True
        hbs[r] = hb
    segs = {r: draw(partitions(draw(st.integers(1, 30)))) for r in REPLICAS}
    return hbs, segs


@given(remotes())
def test_compaction_never_deletes_a_segment_a_live_replica_lacks(
    remote: tuple[dict[str, dict[str, Any]], dict[str, list[tuple[int, int]]]],
) -> None:
    hbs, segs = remote
    live = [hb for hb in hbs.values() if not hb.get("decommissioned")]
    floors = protocol.compaction_floors(hbs, "me")
    if floors is None:
        assert "me" not in {hb["replica"] for hb in live}
        return
    snaps = protocol.announced_snapshots(hbs)
    for replica, floor in floors.items():
        assert replica == "me" or hbs[replica].get("decommissioned")
        mine = [(first, seg_key(replica, first)) for first, _ in segs[replica]]
        deleted = protocol.compactable(mine, floor)
        assert deleted == [k for _, k in mine[: len(deleted)]]  # the oldest ones, in order
        assert mine[-1][1] not in deleted  # the newest always stays
        for (_, last), (_, key) in zip(segs[replica], mine, strict=True):
            if key in deleted:
                assert all(hb["vv"].get(replica, 0) >= last for hb in live)
                assert any(s["vv"].get(replica, 0) >= last for s in snaps)


@given(remotes(), st.sampled_from(REPLICAS), st.integers(0, 30))
def test_snapshots_are_tried_most_complete_first(
    remote: tuple[dict[str, dict[str, Any]], Any], replica: str, upto: int
) -> None:
    hbs, _ = remote
    found = protocol.announced_snapshots(hbs)
    sums = [sum(s["vv"].values()) for s in found]
    assert sums == sorted(sums, reverse=True)
    assert len(found) == sum(1 for hb in hbs.values() if "snapshot" in hb)
    covering = protocol.snapshots_covering(hbs, replica, upto)
    assert covering == [s for s in found if s["vv"].get(replica, 0) >= upto]


@given(st.integers(0, 6), st.integers(1, 3))
def test_only_our_newest_snapshots_stay(n: int, keep: int) -> None:
    ours = [snapshot_key("me", hlc) for hlc in range(n)]
    gone = protocol.snapshots_to_delete(ours, keep)
    assert gone + ours[len(gone) :] == ours
    assert len(ours) - len(gone) == min(n, keep)


def test_a_snapshot_is_current_only_for_the_same_version_vector() -> None:
    assert not protocol.snapshot_current(None, {})
    assert protocol.snapshot_current({"key": "k", "vv": {"a": 1}}, {"a": 1})
    assert not protocol.snapshot_current({"key": "k", "vv": {"a": 1}}, {"a": 2})


def test_peer_rows_show_the_lag_and_leave_us_out() -> None:
    peers = {"me": {"pushed": 9}, "b": {"pushed": 7, "host": "h", "time": 1.0}}
    assert protocol.peer_rows(peers, "me", {"b": 3}) == [
        {
            "replica": "b",
            "host": "h",
            "pushed": 7,
            "applied_here": 3,
            "lag": 4,
            "last_seen": 1.0,
            "decommissioned": False,
        }
    ]


@given(
    written=st.integers(0, 50),
    claims=st.dictionaries(st.sampled_from(["b", "c", "d"]), st.integers(0, 10**9)),
    covered=st.integers(0, 60),
)
def test_compaction_never_deletes_past_a_verified_snapshot_nor_on_a_claim_above_our_ops(
    written: int, claims: dict[str, int], covered: int
) -> None:
    hbs: dict[str, dict[str, Any]] = {"me": {"replica": "me", "vv": {"me": written}}}
    hbs |= {r: {"replica": r, "vv": {"me": seq}} for r, seq in claims.items()}
    liars = protocol.implausible_claims(hbs, "me", written)
    assert liars == sorted(r for r, seq in claims.items() if seq > written)
    for r in liars:
        hbs[r] = {**hbs[r], "vv": {}}
    floors = protocol.compaction_floors(hbs, "me", covered={"me": covered})
    assert floors is not None
    assert floors["me"] <= min([covered, written, *claims.values()])
    if liars:
        assert floors["me"] == 0


@given(
    firsts=st.lists(st.integers(1, 50), min_size=1, unique=True),
    start=st.integers(-2, 60),
    pushed=st.integers(0, 60),
)
def test_a_reported_unreadable_segment_is_rechecked_only_if_it_is_ours_and_pushed(
    firsts: list[int], start: int, pushed: int
) -> None:
    firsts.sort()
    span = protocol.recheck_range(firsts, (start, start), pushed)
    if span is None:
        assert start not in firsts or not 1 <= start <= pushed
    else:
        lo, hi = span
        assert lo == start and lo in firsts and lo <= pushed
        assert not any(lo < f <= hi for f in firsts)  # exactly that segment's span


def test_the_last_segment_is_held_when_every_op_its_writer_pushed_is_here() -> None:
    """A rejected last segment stops being reported once its ops arrived another way: its end
    is what the writer's heartbeat says it pushed (no successor says where it ends)."""
    firsts = [1, 20, 47]
    assert not protocol.held(firsts, 2, have=93)  # no heartbeat: nothing says where it ends
    assert protocol.held(firsts, 2, have=93, pushed=93)
    assert not protocol.held(firsts, 2, have=92, pushed=93)  # the writer's last op is missing
    assert not protocol.held(firsts, 2, have=93, pushed=40)  # a heartbeat older than the segment
    assert protocol.held(firsts, 0, have=19, pushed=0)  # a successor still says it alone
    assert not protocol.held(firsts, 0, have=18, pushed=93)
