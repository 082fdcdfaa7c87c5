"""Someone who can write to the bucket but holds no sync key: each attack fails, visibly in
status, and sync heals or goes on (docs/sync-protocol.md §14). Through real remotes (a folder,
and S3 on 127.0.0.1)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from chrysalis import Memory
from chrysalis.core.errors import FormatTampered
from chrysalis.remotes import open_remote
from chrysalis.sync import Sync
from tests.remote_fixtures import key_file

Opener = Callable[..., Memory]


def _three_segments(a: Memory, sa: Sync) -> list[str]:
    """a pushes ops 1-2, 3-4 and 5-6, one segment each; returns their keys."""
    for n in range(3):
        a.append_bead(f"a's note {2 * n}", id=f"a{2 * n}")
        a.append_bead(f"a's note {2 * n + 1}", id=f"a{2 * n + 1}")
        sa.push()
    keys = [o.key for o in open_remote(sa.remote.url).list(f"ops/{a.replica_id}/")]
    assert len(keys) == 3
    return sorted(keys)


@pytest.mark.parametrize("keyed", [False, True])
def test_a_segment_deleted_mid_run_shows_as_a_gap_and_its_origin_puts_it_again(
    open_memory: Opener, remote_url: Any, tmp_path: Path, keyed: bool
) -> None:
    url, kf = remote_url(), key_file(tmp_path, keyed)
    a, b = open_memory("a", replica_id="aaaa"), open_memory("b", replica_id="bbbb")
    sa, sb = Sync(a, url, key_file=kf), Sync(b, url, key_file=kf)
    segs = _three_segments(a, sa)
    open_remote(url).delete(segs[1])  # ops aaaa:3..4

    sb.pull()
    assert b.version_vector()["aaaa"] == 2
    gaps = sb.status()["gaps"]
    assert {r: (g["from"], g["to"]) for r, g in gaps.items()} == {"aaaa": (3, 4)}
    assert "missing from the remote" in gaps["aaaa"]["why"]

    sa.pull()  # a reads b's heartbeat, which names the hole
    sa.push()  # and puts ops 3..4 again
    assert segs[1] in {t["key"] for t in sa.status()["tampered"]}
    sb.pull()
    assert b.version_vector()["aaaa"] == 6
    assert sb.status()["gaps"] == {}
    assert b.state_digest() == a.state_digest()


@pytest.mark.parametrize("attack", ["edit", "replay", "swap"])
@pytest.mark.parametrize("keyed", [False, True])
def test_a_segment_damaged_mid_run_is_a_gap_its_origin_replaces(
    open_memory: Opener, remote_url: Any, tmp_path: Path, keyed: bool, attack: str
) -> None:
    """Found by the soak's tampering actor: a segment edited, replayed or swapped in place
    (not deleted) was rejected by peers forever, and its origin never heard of it."""
    url, kf = remote_url(), key_file(tmp_path, keyed)
    a, b = open_memory("a", replica_id="aaaa"), open_memory("b", replica_id="bbbb")
    sa, sb = Sync(a, url, key_file=kf), Sync(b, url, key_file=kf)
    segs = _three_segments(a, sa)
    remote = open_remote(url)
    if attack == "edit":
        data = bytearray(remote.get(segs[1]))
        data[len(data) // 2] ^= 0xFF
        remote.put(segs[1], bytes(data))
    elif attack == "replay":
        remote.put(segs[1], remote.get(segs[0]))
    else:
        one, two = remote.get(segs[1]), remote.get(segs[2])
        remote.put(segs[1], two)
        remote.put(segs[2], one)

    sb.pull()
    assert b.version_vector()["aaaa"] == 2
    status = sb.status()
    assert segs[1] in {r["key"] for r in status["rejected"]}
    assert {r: (g["from"], g["to"]) for r, g in status["gaps"].items()} == {"aaaa": (3, 4)}

    sa.pull()  # a reads b's heartbeat, which names the hole
    sa.push()  # reads its segment back, finds it is not its own, puts its own over it
    assert segs[1] in {t["key"] for t in sa.status()["tampered"]}
    for _ in range(2):  # a swap damaged the next one too: the same round heals it
        sb.pull()
        sa.pull()
        sa.push()
    sb.pull()
    assert b.version_vector()["aaaa"] == 6
    assert sb.status()["gaps"] == {} and sb.status()["rejected"] == []
    assert b.state_digest() == a.state_digest()


def test_a_hole_its_origin_cannot_fill_is_filled_from_a_snapshot(
    open_memory: Opener, remote_url: Any
) -> None:
    url = remote_url()
    a, b, c = (open_memory(n, replica_id=n * 4) for n in "abc")
    sa, sb, sc = Sync(a, url), Sync(b, url), Sync(c, url)
    segs = _three_segments(a, sa)
    sc.pull()
    sc.snapshot()  # c holds and announces all of a's ops
    open_remote(url).delete(segs[1])
    b.append_bead("b's own", id="b1")  # not empty: it replays the hole, it does not join
    sb.pull()
    assert b.version_vector()["aaaa"] == 6
    assert sb.status()["gaps"] == {}


@pytest.mark.parametrize("keyed", [False, True])
def test_an_old_segment_replayed_under_our_next_name_does_not_stall_push(
    open_memory: Opener, remote_url: Any, tmp_path: Path, keyed: bool
) -> None:
    url, kf = remote_url(), key_file(tmp_path, keyed)
    a, b = open_memory("a", replica_id="aaaa"), open_memory("b", replica_id="bbbb")
    sa, sb = Sync(a, url, key_file=kf), Sync(b, url, key_file=kf)
    a.append_bead("first", id="x1")
    sa.push()
    remote = open_remote(url)
    first = "ops/aaaa/0000000000000001.seg"
    remote.put("ops/aaaa/0000000000000002.seg", remote.get(first))  # the replay
    a.append_bead("second", id="x2")

    moved = sa.push()
    assert moved["ok"] and sa.status()["stopped"] is None
    assert [t["key"] for t in sa.status()["tampered"]] == ["ops/aaaa/0000000000000002.seg"]
    assert sa.status()["pending_ops"] == 0
    sb.pull()
    assert b.get_bead("x2").content == "second"


def test_a_peer_that_rejected_a_replaced_segment_reads_it_again(
    open_memory: Opener, remote_url: Any
) -> None:
    url = remote_url()
    a, b = open_memory("a", replica_id="aaaa"), open_memory("b", replica_id="bbbb")
    sa, sb = Sync(a, url), Sync(b, url)
    a.append_bead("first", id="x1")
    sa.push()
    remote = open_remote(url)
    remote.put("ops/aaaa/0000000000000002.seg", remote.get("ops/aaaa/0000000000000001.seg"))
    sb.pull()
    assert [r["key"] for r in sb.status()["rejected"]] == ["ops/aaaa/0000000000000002.seg"]
    a.append_bead("second", id="x2")
    sa.push()  # puts its own segment over the replay
    sb.pull()
    assert sb.status()["rejected"] == []
    assert b.get_bead("x2").content == "second"


def test_a_heartbeat_claiming_more_pushed_than_we_did_is_not_a_clone(
    open_memory: Opener, remote_url: Any
) -> None:
    url = remote_url()
    a, b = open_memory("a", replica_id="aaaa"), open_memory("b", replica_id="bbbb")
    sa, sb = Sync(a, url), Sync(b, url)
    a.append_bead("first", id="x1")
    sa.push()
    remote = open_remote(url)
    hb = json.loads(remote.get("replicas/aaaa.json"))
    remote.put("replicas/aaaa.json", json.dumps({**hb, "pushed": 10**9}).encode())
    a.append_bead("second", id="x2")

    sa2 = Sync(a, url)  # a restart: the identity check runs again
    assert sa2.push()["ok"]
    st = sa2.status()
    assert st["stopped"] is None and st["pending_ops"] == 0
    assert "replicas/aaaa.json" in {t["key"] for t in st["tampered"]}
    assert json.loads(remote.get("replicas/aaaa.json"))["pushed"] == a.version_vector()["aaaa"]
    sb.pull()
    assert b.get_bead("x2").content == "second"


def test_a_forged_heartbeat_s_hole_closes_once_the_real_heartbeat_is_back(
    open_memory: Opener, remote_url: Any
) -> None:
    """Found by the soak: a heartbeat forged to claim one op more than its replica pushed
    made a peer report a hole at the tail; once the replica's own heartbeat was back the peer
    held all it had pushed and stopped reading it, but kept reporting the hole for ever."""
    url = remote_url()
    a, b = open_memory("a", replica_id="aaaa"), open_memory("b", replica_id="bbbb")
    sa, sb = Sync(a, url), Sync(b, url)
    a.append_bead("first", id="x1")
    a.append_bead("second", id="x2")
    sa.push()
    remote = open_remote(url)
    real = remote.get("replicas/aaaa.json")
    pushed = json.loads(real)["pushed"]
    remote.put(
        "replicas/aaaa.json", json.dumps({**json.loads(real), "pushed": pushed + 1}).encode()
    )
    sb.pull()
    gaps = sb.status()["gaps"]
    assert {r: (g["from"], g["to"]) for r, g in gaps.items()} == {"aaaa": (pushed + 1, pushed + 1)}

    remote.put("replicas/aaaa.json", real)  # the replica's next heartbeat says what it pushed
    sb.pull(force=True)
    assert sb.status()["gaps"] == {}
    assert b.state_digest() == a.state_digest()


@pytest.mark.parametrize("snapshot", [False, True])
def test_a_replica_whose_every_segment_is_gone_is_still_pulled(
    open_memory: Opener, remote_url: Any, snapshot: bool
) -> None:
    """Found by the soak: compaction keeps only a replica's newest segment, and the bucket
    writer deleted that one. A peer read only replicas with segments listed, so it never saw
    the hole: it stayed behind for ever, reporting nothing."""
    url = remote_url()
    a, b, c = (open_memory(n, replica_id=n * 4) for n in "abc")
    sa, sb, sc = Sync(a, url), Sync(b, url), Sync(c, url)
    a.append_bead("one", id="x1")
    sa.push()
    sb.pull()
    a.append_bead("two", id="x2")
    sa.push()
    sc.pull()
    if snapshot:
        sc.snapshot()  # c holds and announces all of a's ops
    remote = open_remote(url)
    for obj in remote.list("ops/aaaa/"):
        remote.delete(obj.key)
    sb.pull(force=True)
    if not snapshot:  # a hole only a can fill: b reports it, a puts its ops again
        assert {r: (g["from"], g["to"]) for r, g in sb.status()["gaps"].items()} == {"aaaa": (2, 2)}
        sa.pull(force=True)
        sa.push()
        sb.pull(force=True)
    assert b.version_vector()["aaaa"] == 2 and b.get_bead("x2").content == "two"
    assert sb.status()["gaps"] == {}


# (A plaintext heartbeat anyone can write and read: push judges what it claims, clone check.)
@pytest.mark.parametrize(
    ("attack", "keyed"), [("delete", False), ("delete", True), ("forge", True)]
)
def test_a_replica_puts_back_its_heartbeat_deleted_or_forged_at_its_next_full_pull(
    open_memory: Opener, remote_url: Any, tmp_path: Path, keyed: bool, attack: str
) -> None:
    """Found by the soak: an idle replica (nothing to push) never looked at its heartbeat, so
    one the bucket writer deleted (or, with a key, forged) stayed gone: peers could not tell
    what it had pushed, and a damaged segment of its stayed rejected for ever."""
    url, kf = remote_url(), key_file(tmp_path, keyed)
    a, b = open_memory("a", replica_id="aaaa"), open_memory("b", replica_id="bbbb")
    sa, sb = Sync(a, url, key_file=kf), Sync(b, url, key_file=kf)
    a.append_bead("first", id="x1")
    sa.push()
    remote = open_remote(url)
    if attack == "delete":
        remote.delete("replicas/aaaa.json")
    else:
        forged = {"replica": "aaaa", "host": "mallory", "generation": 1, "pushed": 0}
        remote.put("replicas/aaaa.json", json.dumps(forged).encode())

    sa.pull(force=True)  # nothing to pull, nothing to push: only its heartbeat is wrong
    sb.pull(force=True)
    peers = {row["replica"]: row for row in sb.status()["peers"]}
    assert peers["aaaa"]["pushed"] == 1 and peers["aaaa"]["host"] != "mallory"


@pytest.mark.parametrize("keyed", [False, True])
def test_a_deleted_format_is_never_recreated_and_the_repair_puts_it_back(
    open_memory: Opener, remote_url: Any, tmp_path: Path, keyed: bool
) -> None:
    url, kf = remote_url(), key_file(tmp_path, keyed)
    a, b = open_memory("a", replica_id="aaaa"), open_memory("b", replica_id="bbbb")
    Sync(a, url, key_file=kf).push()
    a.append_bead("before", id="x1")
    Sync(a, url, key_file=kf).push()
    Sync(b, url, key_file=kf).pull()
    remote = open_remote(url)
    before = remote.get("format.json")
    remote.delete("format.json")
    a.append_bead("after", id="x2")

    sa, sb = Sync(a, url, key_file=kf), Sync(b, url, key_file=kf)  # both restart
    for s in (sa, sb):
        with pytest.raises(FormatTampered, match=r"missing.*chrysalis sync --repair-format"):
            s.push()
        assert "--repair-format" in s.status()["last_error"]
    assert remote.list("format.json") == []  # nobody made a new one

    with pytest.raises(FormatTampered, match="never synced"):
        Sync(open_memory("c"), url, key_file=kf).repair_format()
    assert sa.repair_format() == {"repaired": True, "id": json.loads(before)["id"]}
    assert json.loads(remote.get("format.json")) == json.loads(before)
    sa.push()
    sb.push()
    sb.pull()
    assert sa.status()["stopped"] is None and sb.status()["stopped"] is None
    assert b.get_bead("x2").content == "after"


@pytest.mark.parametrize("keyed", [False, True])
def test_a_rewritten_format_is_refused_and_repaired(
    open_memory: Opener, remote_url: Any, tmp_path: Path, keyed: bool
) -> None:
    url, kf = remote_url(), key_file(tmp_path, keyed)
    a = open_memory("a", replica_id="aaaa")
    a.append_bead("before", id="x1")
    Sync(a, url, key_file=kf).push()
    remote = open_remote(url)
    fmt = json.loads(remote.get("format.json"))
    remote.put("format.json", json.dumps({**fmt, "id": "0123456789abcdef"}).encode())

    sa = Sync(a, url, key_file=kf)
    with pytest.raises(FormatTampered, match="repair-format"):
        sa.push()
    assert sa.repair_format()["repaired"]
    a.append_bead("after", id="x2")
    assert sa.push()["ok"] and sa.status()["stopped"] is None


def test_repair_refuses_a_remote_whose_segments_our_key_does_not_open(
    open_memory: Opener, remote_url: Any, tmp_path: Path
) -> None:
    url, kf = remote_url(), key_file(tmp_path, True)
    a = open_memory("a", replica_id="aaaa")
    a.append_bead("before", id="x1")
    Sync(a, url, key_file=kf).push()
    remote = open_remote(url)
    seg = "ops/aaaa/0000000000000001.seg"
    remote.put(seg, remote.get(seg)[:40] + bytes(60))
    remote.delete("format.json")
    with pytest.raises(FormatTampered, match="reads under the format"):
        Sync(a, url, key_file=kf).repair_format()
    assert remote.list("format.json") == []


def test_repair_is_not_stopped_by_one_damaged_segment(
    open_memory: Opener, remote_url: Any, tmp_path: Path
) -> None:
    """A bucket writer deleted format.json and damaged a segment: the origin would replace
    the segment, but only once syncing works again, so the repair must not wait for it. One
    segment that reads under the known format is proof enough that the remote is ours."""
    url, kf = remote_url(), key_file(tmp_path, True)
    a = open_memory("a", replica_id="aaaa")
    sa = Sync(a, url, key_file=kf, segment_ops=1)
    for i in range(3):
        a.append_bead(f"bead {i}", id=f"x{i}")
        sa.push()
    remote = open_remote(url)
    seg = "ops/aaaa/0000000000000001.seg"
    remote.put(seg, remote.get(seg)[:40] + bytes(60))
    remote.delete("format.json")
    assert Sync(a, url, key_file=kf).repair_format()["repaired"]
    b = open_memory("b", replica_id="bbbb")
    sb = Sync(b, url, key_file=kf)
    for _ in range(3):  # b reports the damaged one as a gap; a puts it back (§6 step 9)
        sb.pull()
        sb.push()
        sa.pull()
        sa.push()
    sb.pull()
    assert b.state_digest() == a.state_digest()


@pytest.mark.parametrize("keyed", [False, True])
@pytest.mark.parametrize("claim", ["huge", "exact"])
def test_a_heartbeat_lying_about_what_it_applied_never_costs_a_peer_an_op(
    open_memory: Opener, remote_url: Any, tmp_path: Path, keyed: bool, claim: str
) -> None:
    url, kf = remote_url(), key_file(tmp_path, keyed)
    a, b = open_memory("a", replica_id="aaaa"), open_memory("b", replica_id="bbbb")
    sa, sb = Sync(a, url, key_file=kf), Sync(b, url, key_file=kf)
    a.append_bead("a's first", id="a0")
    sa.push()
    sb.pull()  # b holds aaaa:1 only
    for n in range(1, 4):
        a.append_bead(f"a's note {n}", id=f"a{n}")
        sa.push()
    remote = open_remote(url)
    hb = sb.heartbeats()["bbbb"]  # the bucket writer could not read it with a key: no matter
    lie = 10**9 if claim == "huge" else a.version_vector()["aaaa"]
    # b claims all of a's ops, and a snapshot that holds them (no such object)
    bogus = {"key": "snapshots/bbbb-00000000000000ff.snap", "vv": {"aaaa": lie}, "bytes": 1}
    remote.put(
        "replicas/bbbb.json",
        json.dumps({**hb, "vv": {**hb["vv"], "aaaa": lie}, "snapshot": bogus}).encode(),
    )
    if claim == "huge":
        sa.snapshot()  # a real snapshot: only the claim stands in the way
    sa.pull(force=True)

    sa.compact()
    if claim == "huge" or keyed:  # with a key the forged heartbeat is not even read
        assert "replicas/bbbb.json" in {t["key"] for t in sa.status()["tampered"]}
        assert len(remote.list("ops/aaaa/")) == 4  # nothing b lacks was deleted
    else:
        # no snapshot compaction could read covers them: the bogus one is rejected
        assert len(remote.list("ops/aaaa/")) == 4
        assert bogus["key"] in {r["key"] for r in sa.status()["rejected"]}
    Sync(b, url, key_file=kf).pull()
    assert b.state_digest() == a.state_digest()


def test_a_lie_compaction_cannot_see_through_still_loses_nothing(
    open_memory: Opener, remote_url: Any, tmp_path: Path
) -> None:
    """Without a key, b's heartbeat claims exactly what a wrote, and a has a real snapshot:
    compaction trusts the claim, but only deletes what that snapshot (read back and
    verified) holds, so b fills from it."""
    url, kf = remote_url(), None
    a, b = open_memory("a", replica_id="aaaa"), open_memory("b", replica_id="bbbb")
    sa, sb = Sync(a, url, key_file=kf), Sync(b, url, key_file=kf)
    a.append_bead("a's first", id="a0")
    sa.push()
    sb.pull()
    b.append_bead("b's own", id="b0")
    sb.push()
    for n in range(1, 4):
        a.append_bead(f"a's note {n}", id=f"a{n}")
        sa.push()
    sa.snapshot()
    remote = open_remote(url)
    hb = json.loads(remote.get("replicas/bbbb.json"))
    remote.put(
        "replicas/bbbb.json",
        json.dumps({**hb, "vv": {**hb["vv"], "aaaa": a.version_vector()["aaaa"]}}).encode(),
    )
    assert sa.compact()["deleted"] > 0
    sb.pull(force=True)
    assert b.version_vector()["aaaa"] == a.version_vector()["aaaa"]
    assert sb.status()["gaps"] == {}


@pytest.mark.parametrize("forgery", ["pushed", "decommissioned"])
def test_with_a_key_a_forged_heartbeat_neither_stops_nor_retires_us(
    open_memory: Opener, remote_url: Any, tmp_path: Path, forgery: str
) -> None:
    url, kf = remote_url(), key_file(tmp_path, True)
    a, b = open_memory("a", replica_id="aaaa"), open_memory("b", replica_id="bbbb")
    sa = Sync(a, url, key_file=kf)
    a.append_bead("first", id="x1")
    sa.push()
    hb = sa.heartbeats()["aaaa"]
    forged = {**hb, "pushed": 10**9}
    if forgery == "decommissioned":
        forged = {**hb, "decommissioned": True, "by": "bbbb", "at": 1.0}
    remote = open_remote(url)
    remote.put("replicas/aaaa.json", json.dumps(forged).encode())  # no key: plain JSON
    a.append_bead("second", id="x2")

    sa2 = Sync(a, url, key_file=kf)  # a restart
    assert sa2.push()["ok"]
    st = sa2.status()
    assert st["stopped"] is None and st["pending_ops"] == 0
    assert "not authentic" in {t["key"]: t["what"] for t in st["tampered"]}["replicas/aaaa.json"]
    assert not sa2.heartbeats()["aaaa"].get("decommissioned")  # rewritten, sealed
    sb = Sync(b, url, key_file=kf)
    sb.pull()
    assert b.get_bead("x2").content == "second"
    assert [p["replica"] for p in sb.status()["peers"] if p["decommissioned"]] == []


def test_with_a_key_a_heartbeat_moved_to_another_name_is_refused(
    open_memory: Opener, remote_url: Any, tmp_path: Path
) -> None:
    url, kf = remote_url(), key_file(tmp_path, True)
    a = open_memory("a", replica_id="aaaa")
    sa = Sync(a, url, key_file=kf)
    a.append_bead("first", id="x1")
    sa.push()
    remote = open_remote(url)
    remote.put("replicas/cccc.json", remote.get("replicas/aaaa.json"))  # a replay elsewhere
    assert set(sa.heartbeats()) == {"aaaa"}
    assert "replicas/cccc.json" in {t["key"] for t in sa.status()["tampered"]}
    assert "unreadable" in sa.compact()["why"]


def test_without_a_key_a_tombstone_contradicting_our_cursor_does_not_retire_us(
    open_memory: Opener, remote_url: Any
) -> None:
    url = remote_url()
    a = open_memory("a", replica_id="aaaa")
    a.append_bead("first", id="x1")
    Sync(a, url).push()
    remote = open_remote(url)
    hb = json.loads(remote.get("replicas/aaaa.json"))
    forged = {**hb, "pushed": 10**9, "decommissioned": True, "by": "bbbb", "at": 1.0}
    remote.put("replicas/aaaa.json", json.dumps(forged).encode())
    a.append_bead("second", id="x2")
    sa = Sync(a, url)
    assert sa.push()["ok"]
    assert sa.status()["stopped"] is None
    assert "not written by us" in sa.status()["tampered"][0]["what"]
    assert not json.loads(remote.get("replicas/aaaa.json")).get("decommissioned")


def test_a_replayed_marker_delays_a_pull_at_most_until_the_next_full_one(
    open_memory: Opener, remote_url: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ``changed`` marker is one object anyone with write access can put back: putting the
    old token back after each push would make every scheduled pull idle, for ever."""
    from chrysalis.sync import pull as pull_module

    url = remote_url()
    a, b = open_memory("a", replica_id="aaaa"), open_memory("b", replica_id="bbbb")
    sa, sb = Sync(a, url), Sync(b, url)
    a.append_bead("first", id="x1")
    sa.push()
    sb.pull()
    remote = open_remote(url)
    old = remote.get("changed")
    a.append_bead("second", id="x2")
    sa.push()
    remote.put("changed", old)  # the replay: "nobody pushed since you last looked"
    sb.pull()
    assert b.version_vector()["aaaa"] == 1  # the hint was believed, within the bound
    monkeypatch.setattr(pull_module, "FULL_PULL_EVERY", 0.0)  # the bound has passed
    sb.pull()
    assert b.get_bead("x2").content == "second"


def test_a_rejected_segment_compacted_away_is_no_longer_reported(
    open_memory: Opener, remote_url: Any
) -> None:
    """Found by the soak: b rejected a damaged segment; its origin then compacted it away
    (a snapshot covers its ops) and b took them from the snapshot, yet b's status listed the
    rejection forever. A rejection is kept only while its object is listed and still needed."""
    url = remote_url()
    a, b = open_memory("a", replica_id="aaaa"), open_memory("b", replica_id="bbbb")
    sa, sb = Sync(a, url), Sync(b, url)
    segs = _three_segments(a, sa)
    remote = open_remote(url)
    data = bytearray(remote.get(segs[1]))
    data[len(data) // 2] ^= 0xFF
    remote.put(segs[1], bytes(data))
    b.append_bead("b's own", id="b1")  # not empty: it replays the hole, it does not join
    sb.pull()
    assert [r["key"] for r in sb.status()["rejected"]] == [segs[1]]

    sa.snapshot()  # a holds and announces all its ops, then its old segments go
    remote.delete(segs[0])
    remote.delete(segs[1])
    sb.pull(force=True)
    assert b.version_vector()["aaaa"] == 6
    assert sb.status()["rejected"] == [] and sb.status()["gaps"] == {}


def test_a_rejected_snapshot_no_heartbeat_announces_is_no_longer_reported(
    open_memory: Opener, remote_url: Any
) -> None:
    """Found by the soak: a snapshot announced, then gone (its writer was killed between
    announcing and writing, or replaced it) stayed in status as rejected forever. A rejected
    snapshot is reported while a heartbeat still announces it."""
    url = remote_url()
    a, b = open_memory("a", replica_id="aaaa"), open_memory("b", replica_id="bbbb")
    sa, sb = Sync(a, url), Sync(b, url)
    _three_segments(a, sa)
    sb.pull()
    remote = open_remote(url)
    hb = sb.heartbeats()["bbbb"]
    bogus = {"key": "snapshots/bbbb-00000000000000ff.snap", "vv": a.version_vector(), "bytes": 1}
    remote.put("replicas/bbbb.json", json.dumps({**hb, "snapshot": bogus}).encode())
    sa.pull(force=True)
    sa.compact()  # it tries the announced snapshot: no such object
    assert bogus["key"] in {r["key"] for r in sa.status()["rejected"]}
    b.append_bead("b's own", id="b1")
    sb.push()  # b's own heartbeat, announcing no such snapshot, replaces the forged one
    sa.pull(force=True)
    assert sa.status()["rejected"] == []
