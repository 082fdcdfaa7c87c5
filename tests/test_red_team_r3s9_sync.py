"""Red team of round 3 session 9: this session's pull changes (a gap is dropped once we hold all
a heartbeat says its replica pushed; a full pull puts back our own heartbeat when it is missing
or unreadable; a pull reads every replica with a heartbeat) against someone who can write the
bucket without the sync key, a decommissioned replica that still runs, and a clone."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from chrysalis import Memory
from chrysalis.core.errors import CloneDetected, Decommissioned
from chrysalis.remotes import open_remote
from chrysalis.sync import Sync
from tests.remote_fixtures import key_file

Opener = Callable[..., Memory]


def _gaps(sync: Sync) -> dict[str, tuple[int, int]]:
    return {r: (g["from"], g["to"]) for r, g in sync.status()["gaps"].items()}


def _open_tail(
    open_memory: Opener, url: str, kf: Path | None
) -> tuple[Memory, Memory, Sync, Sync, bytes]:
    """a pushes ops 1-2, 3-4, 5-6 (one segment each); b pulls 1-2 only, then the bucket writer
    deletes the two newer segments: b reports the tail 3..6 as a gap (a real hole). Also
    returns a's heartbeat as it was after its first push (what a bucket writer may keep)."""
    a, b = open_memory("a", replica_id="aaaa"), open_memory("b", replica_id="bbbb")
    sa, sb = Sync(a, url, key_file=kf), Sync(b, url, key_file=kf)
    remote = open_remote(url)
    old = b""
    for n in range(3):
        a.append_bead(f"the {['ferry', 'lantern', 'orchard'][n]} entry", id=f"e{n}a")
        a.append_bead(f"a second line about the {['tide', 'wick', 'pears'][n]}", id=f"e{n}b")
        sa.push()
        if n == 0:
            sb.pull()
            old = remote.get("replicas/aaaa.json")
    for key in sorted(o.key for o in remote.list("ops/aaaa/"))[1:]:
        remote.delete(key)
    sb.pull(force=True)
    assert b.version_vector()["aaaa"] == 2
    assert _gaps(sb) == {"aaaa": (3, 6)}
    return a, b, sa, sb, old


# ---- change 1: a gap dropped once we hold all a heartbeat says was pushed ---------------------


@pytest.mark.parametrize("keyed", [False, True])
def test_a_replayed_old_heartbeat_does_not_hide_a_hole_that_is_still_open(
    open_memory: Opener, remote_url: Any, tmp_path: Path, keyed: bool
) -> None:
    """With a key a bucket writer cannot forge a heartbeat, but it can put back an old one it
    kept: one that says a pushed only ops 1-2. b holds those, so the heartbeat looked current
    and b dropped the gap while ops 3..6 were still missing; a, told of no hole, put nothing
    again, and its idle pulls never looked at its own heartbeat (readable: not "lost"), so the
    hole stayed hidden until a's next hourly heartbeat. (Plaintext: the same bytes are a
    forgery anyone can write; b cannot tell, but a puts its own back and the hole heals.)"""
    url, kf = remote_url(), key_file(tmp_path, keyed)
    a, b, sa, sb, old = _open_tail(open_memory, url, kf)
    open_remote(url).put("replicas/aaaa.json", old)

    sb.pull(force=True)
    if keyed:  # an authentic heartbeat never takes back what its replica pushed
        assert _gaps(sb) == {"aaaa": (3, 6)}, "ops 3..6 are still missing"

    sa.pull(force=True)  # a finds a heartbeat of its own that says less than it pushed
    assert sb.heartbeats()["aaaa"]["pushed"] == 6
    sb.pull(force=True)
    assert _gaps(sb) == {"aaaa": (3, 6)}
    sa.pull(force=True)  # reads b's heartbeat, which names the hole
    sa.push()  # and puts ops 3..6 again
    sb.pull(force=True)
    assert b.version_vector()["aaaa"] == 6 and _gaps(sb) == {}
    assert b.state_digest() == a.state_digest()


@pytest.mark.parametrize("keyed", [False, True])
def test_a_deleted_heartbeat_does_not_hide_a_hole_that_is_still_open(
    open_memory: Opener, remote_url: Any, tmp_path: Path, keyed: bool
) -> None:
    """Deleting a's heartbeat made b read what it pushed as 0: its one segment left was held,
    no tail was missing, and b dropped the gap for ops 3..6 it still lacked."""
    url, kf = remote_url(), key_file(tmp_path, keyed)
    a, b, sa, sb, _ = _open_tail(open_memory, url, kf)
    assert a.version_vector()["aaaa"] == 6
    open_remote(url).delete("replicas/aaaa.json")

    sb.pull(force=True)
    assert _gaps(sb) == {"aaaa": (3, 6)}, "ops 3..6 are still missing"
    sa.pull(force=True)  # puts its heartbeat back (change 2) and reads b's, naming the hole
    sa.push()
    sb.pull(force=True)
    assert b.version_vector()["aaaa"] == 6 and _gaps(sb) == {}


# ---- change 3: every replica with a heartbeat is read ------------------------------------------


@pytest.mark.parametrize(
    "ghost",
    [
        {"replica": "ghst", "pushed": 40},
        {"replica": "ghst", "pushed": "a great many"},
        {"replica": "ghst", "pushed": None, "host": "nowhere"},
        {"replica": "ghst", "pushed": -3, "snapshot": {"key": "snapshots/x", "vv": {"ghst": "y"}}},
    ],
    ids=["high", "words", "null", "odd-snapshot"],
)
@pytest.mark.parametrize("keyed", [False, True])
def test_a_heartbeat_of_a_replica_that_never_existed_neither_breaks_nor_costs_a_pull(
    open_memory: Opener, remote_url: Any, tmp_path: Path, keyed: bool, ghost: dict[str, Any]
) -> None:
    """Without the key a ghost's heartbeat is unreadable and ignored. On a plaintext remote
    anyone may write one: b may report a hole for it (as a forged segment always could make
    it), but a pull never fails on it, b's status still answers, and each pull costs the
    same requests as the last (nothing accumulates)."""
    url, kf = remote_url(), key_file(tmp_path, keyed)
    a, b = open_memory("a", replica_id="aaaa"), open_memory("b", replica_id="bbbb")
    sa, sb = Sync(a, url, key_file=kf), Sync(b, url, key_file=kf)
    a.append_bead("a line of its own", id="x1")
    sa.push()
    open_remote(url).put("replicas/ghst.json", json.dumps(ghost).encode())

    costs = []
    for _ in range(3):
        before = dict(sb.remote.requests)
        sb.pull(force=True)
        costs.append({v: n - before.get(v, 0) for v, n in sb.remote.requests.items()})
    assert costs[1] == costs[2]
    assert b.get_bead("x1").content == "a line of its own"
    status = sb.status()
    if keyed:
        assert _gaps(sb) == {}
        assert "replicas/ghst.json" in {t["key"] for t in status["tampered"]}
        before = dict(sb.remote.requests)
        sb.pull()  # complete: the marker is remembered, an idle poll is one GET
        assert {
            v: n - before.get(v, 0) for v, n in sb.remote.requests.items() if n > before.get(v, 0)
        } == {"get": 1}
    sa.pull(force=True)  # a is not hurt by b's report either
    a.append_bead("still going", id="x2")
    sa.push()
    sb.pull(force=True)
    assert b.get_bead("x2").content == "still going"


# ---- change 2: our heartbeat put back at a full pull ----------------------------------------


@pytest.mark.parametrize("keyed", [False, True])
def test_full_pulls_with_nothing_wrong_write_no_heartbeat(
    open_memory: Opener, remote_url: Any, tmp_path: Path, keyed: bool
) -> None:
    url, kf = remote_url(), key_file(tmp_path, keyed)
    a, b = open_memory("a", replica_id="aaaa"), open_memory("b", replica_id="bbbb")
    sa, sb = Sync(a, url, key_file=kf), Sync(b, url, key_file=kf)
    a.append_bead("one thing", id="x1")
    sa.push()
    sb.pull()
    for sync in (sa, sb):
        before = sync.remote.requests["put"]
        for _ in range(3):
            sync.pull(force=True)
        assert sync.remote.requests["put"] == before


@pytest.mark.parametrize("attack", ["delete", "forge"])
def test_our_pull_never_overwrites_a_clone_s_claim_and_the_clone_is_still_caught(
    open_memory: Opener, remote_url: Any, tmp_path: Path, attack: str
) -> None:
    """A twin of a's data dir pushed past a. a's full pull leaves the twin's heartbeat (it
    reads, and claims more: push judges it). If the bucket writer deletes or forges it, a's
    pull puts its own back, but a segment of a's past a's cursor still names the twin: a's
    next push stops."""
    url, kf = remote_url(), key_file(tmp_path, True)
    a = open_memory("a", replica_id="aaaa")
    a.append_bead("before the copy", id="b0")
    Sync(a, url, key_file=kf).push()
    a.close()
    shutil.copytree(tmp_path / "a", tmp_path / "twin")
    a, twin = open_memory("a", replica_id="aaaa"), open_memory("twin", replica_id="aaaa")
    sa, st = Sync(a, url, key_file=kf), Sync(twin, url, key_file=kf)
    sa.pull(force=True)  # a's first pull of this run writes its heartbeat (it is due)
    twin.append_bead("the twin's line", id="t1")
    st.push()
    claim = open_remote(url).get("replicas/aaaa.json")
    sa.pull(force=True)
    assert open_remote(url).get("replicas/aaaa.json") == claim
    if attack == "delete":
        open_remote(url).delete("replicas/aaaa.json")
    else:
        open_remote(url).put("replicas/aaaa.json", b'{"replica": "aaaa", "pushed": 0}')
    sa.pull(force=True)
    a.append_bead("the original's line", id="o1")
    with pytest.raises(CloneDetected, match="clone detected"):
        sa.push()


def test_a_decommissioned_replica_that_still_runs_does_not_undo_its_tombstone(
    open_memory: Opener, remote_url: Any, tmp_path: Path
) -> None:
    """b decommissions a, which is still running; a's pulls (its heartbeat due, or its
    heartbeat deleted by the bucket writer) must not write a live heartbeat over the
    tombstone: a retired replica would gate compaction again."""
    url, kf = remote_url(), key_file(tmp_path, True)
    a, b = open_memory("a", replica_id="aaaa"), open_memory("b", replica_id="bbbb")
    sa, sb = Sync(a, url, key_file=kf), Sync(b, url, key_file=kf)
    a.append_bead("a's only line", id="x1")
    sa.push()
    sb.pull()
    sb.decommission("aaaa")
    a.append_bead("after retirement", id="x2")
    with pytest.raises(Decommissioned):
        sa.push()
    sa.heartbeat_every = 0.0  # every pull is due to write a heartbeat
    sa.pull(force=True)
    sa.pull()
    assert sb.heartbeats()["aaaa"].get("decommissioned") is True
    open_remote(url).delete("replicas/aaaa.json")  # the bucket writer un-retires it?
    sa.pull(force=True)
    assert "aaaa" not in sb.heartbeats()
    with pytest.raises(Decommissioned):
        sa.push()


def test_a_replica_decommissioned_while_idle_stops_before_its_next_heartbeat(
    open_memory: Opener, remote_url: Any, tmp_path: Path
) -> None:
    """a never pushes again after b retires it; its polls (not forced) must notice before an
    idle heartbeat writes over the tombstone."""
    url, kf = remote_url(), key_file(tmp_path, True)
    a, b = open_memory("a", replica_id="aaaa"), open_memory("b", replica_id="bbbb")
    sa, sb = Sync(a, url, key_file=kf), Sync(b, url, key_file=kf)
    a.append_bead("a's only line", id="x1")
    sa.push()
    sa.pull()
    sb.pull()
    sb.decommission("aaaa")
    sa.heartbeat_every = 0.0
    sa.pull()
    sa.pull()
    assert sb.heartbeats()["aaaa"].get("decommissioned") is True
    assert "decommissioned" in sa.status()["stopped"]


def test_a_decommissioned_replica_s_deleted_segments_are_a_hole_a_snapshot_fills(
    open_memory: Opener, remote_url: Any, tmp_path: Path
) -> None:
    """Its tombstone says it pushed 4; the bucket writer deletes every segment of it. b, which
    held 2, reports 3..4 (nobody will put them again: the gap is true, not a ghost's) until
    c, which holds them, publishes a snapshot; then the gap closes."""
    url, kf = remote_url(), key_file(tmp_path, True)
    a, b, c = (open_memory(n, replica_id=n * 4) for n in "abc")
    sa, sb, sc = (Sync(m, url, key_file=kf) for m in (a, b, c))
    a.append_beads({"content": f"retiring note {i}"} for i in range(2))
    sa.push()
    sb.pull()
    a.append_beads({"content": f"late note {i}"} for i in range(2))
    sa.push()
    sc.pull()
    sb.decommission("aaaa")
    remote = open_remote(url)
    for obj in remote.list("ops/aaaa/"):
        remote.delete(obj.key)
    sb.pull(force=True)
    assert _gaps(sb) == {"aaaa": (3, 4)}
    sc.snapshot()
    sb.pull(force=True)
    assert _gaps(sb) == {} and b.version_vector()["aaaa"] == 4
