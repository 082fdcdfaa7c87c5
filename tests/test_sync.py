"""Replication through real remotes (a folder, and S3 on 127.0.0.1): every test runs on both."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from chrysalis import Memory
from chrysalis.core.errors import NotFound
from chrysalis.remotes import Remote, RemoteUnavailable, open_remote
from chrysalis.sync import CloneDetected, Decommissioned, Sync
from chrysalis.sync import push as sync_push
from chrysalis.sync.segment import Kind, SyncKeyError, encode

Opener = Callable[..., Memory]


def converge(*pairs: tuple[Memory, Sync], rounds: int = 2) -> None:
    for _ in range(rounds):
        for _, s in pairs:
            s.push()
        for _, s in pairs:
            s.pull()


def digests(*mems: Memory) -> set[str]:
    return {m.state_digest() for m in mems}


def all_objects(remote: Remote) -> dict[str, bytes]:
    return {o.key: remote.get(o.key) for o in remote.list("")}


def write_some(m: Memory, tag: str, n: int = 5) -> None:
    for i in range(n):
        m.append_bead(f"{tag} note {i} about the harbour", id=f"{tag}-{i}", session_id=tag)
    m.add_node(id=f"{tag}-node", type="person", name=f"Person {tag}")
    m.add_node(id="shared-node", type="place", name="The harbour")
    m.add_edge(f"{tag}-node", "shared-node", "visits")
    m.update_persona(goals=[f"goal of {tag}"])


def test_three_replicas_converge_with_provenance(open_memory: Opener, remote_url: Any) -> None:
    url = remote_url()
    mems = [open_memory(n) for n in "abc"]
    pairs = [(m, Sync(m, url)) for m in mems]
    for m, tag in zip(mems, "abc", strict=True):
        write_some(m, tag)
    mems[0].append_bead("z" * 200_000, id="big")  # a blob: its content goes to blobs/
    converge(*pairs)
    assert len(digests(*mems)) == 1
    for m in mems:
        assert m.get_bead("big").content == "z" * 200_000
        m.wait_indexed(10)
        for origin, tag in zip(mems, "abc", strict=True):
            hits = m.retrieve(f"{tag} note 3", k=5, strategy="keyword").items
            hit = next(i for i in hits if i.id == f"{tag}-3")
            assert hit.provenance["origin_replica"] == origin.replica_id
    status = pairs[0][1].status()
    assert status["pending_ops"] == 0 and status["consecutive_errors"] == 0
    assert {p["replica"] for p in status["peers"]} == {m.replica_id for m in mems[1:]}
    assert all(p["lag"] == 0 for p in status["peers"])


def test_idle_pull_costs_one_small_get(open_memory: Opener, remote_url: Any) -> None:
    url = remote_url()
    a, b = open_memory("a"), open_memory("b")
    sa, sb = Sync(a, url), Sync(b, url)
    write_some(a, "a")
    sa.push()
    assert sb.pull()["ops"] > 0
    sb.push()
    before = dict(sb.remote.requests)
    for _ in range(5):
        assert sb.pull()["ops"] == 0
        assert sb.push()["ops"] == 0  # nothing waits: no request at all
    after = sb.remote.requests
    assert {k: after[k] - before.get(k, 0) for k in after} == {"get": 5, "put": 0, "list": 0}
    a.append_bead("one more", id="late")
    sa.push()
    assert sb.pull()["ops"] == 1  # the changed marker moved: a full look


class LostReply(Remote):
    """Lands the next create-only put, then fails as if its reply was lost."""

    def __init__(self, inner: Remote) -> None:
        super().__init__(inner.url)
        self.inner, self.armed = inner, 0

    def get(self, key: str) -> bytes:
        return self.inner.get(key)

    def put(self, key: str, data: bytes) -> None:
        self.inner.put(key, data)

    def put_if_absent(self, key: str, data: bytes) -> bool:
        created = self.inner.put_if_absent(key, data)
        if self.armed and key.startswith("ops/"):
            self.armed -= 1
            raise RemoteUnavailable(f"reply to the put of {key} lost")
        return created

    def list(self, prefix: str = "") -> list[Any]:
        return self.inner.list(prefix)

    def delete(self, key: str) -> None:
        self.inner.delete(key)


def test_a_put_whose_reply_is_lost_is_not_sent_twice(open_memory: Opener, remote_url: Any) -> None:
    url = remote_url()
    a, b = open_memory("a"), open_memory("b")
    flaky = LostReply(open_remote(url))
    sa, sb = Sync(a, flaky), Sync(b, url)
    write_some(a, "a")
    flaky.armed = 1
    with pytest.raises(RemoteUnavailable):
        sa.push()
    assert sa.status()["pending_ops"] == a.version_vector()[a.replica_id]  # cursor did not move
    a.append_bead("written after the failed push", id="after")
    sa.push()  # meets its own segment under the same name, counts it, sends the rest
    segs = [o.key for o in flaky.list(f"ops/{a.replica_id}/")]
    assert len(segs) == 2
    sb.pull()
    assert digests(a, b) == {a.state_digest()}
    assert sa.status()["pending_ops"] == 0


def test_a_crash_between_put_and_cursor_resends_nothing(
    open_memory: Opener, remote_url: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = remote_url()
    a = open_memory("a", replica_id="aaaa")
    sa = Sync(a, url)
    write_some(a, "a")
    sa.push()
    a.append_bead("the segment of this lands; the cursor does not move", id="lost-cursor")

    def crash(point: str) -> None:
        if point == "after-segment-put":
            raise SystemExit("killed")  # what SIGKILL leaves: the put done, the cursor not

    monkeypatch.setattr(sync_push, "_fault", crash)
    with pytest.raises(SystemExit):
        sa.push()
    monkeypatch.undo()
    a.close()
    a = open_memory("a")
    sa = Sync(a, url)
    assert sa.status()["pending_ops"] == 1  # not connected yet: from the cursor kept here
    moved = sa.push()  # meets its segment under the same name: counts it, sends nothing
    assert (moved["ops"], moved["objects"]) == (1, 0)
    assert sa.status()["pending_ops"] == 0
    assert len(open_remote(url).list(f"ops/{a.replica_id}/")) == 2
    b = open_memory("b")
    Sync(b, url).pull()
    assert b.state_digest() == a.state_digest()


def test_a_pinned_clone_is_stopped_and_never_corrupts(
    open_memory: Opener, remote_url: Any, tmp_path: Path
) -> None:
    url = remote_url()
    a = open_memory("a", replica_id="aaaa")
    write_some(a, "a")
    Sync(a, url).push()
    a.close()
    shutil.copytree(tmp_path / "a", tmp_path / "twin")
    a, twin = open_memory("a", replica_id="aaaa"), open_memory("twin", replica_id="aaaa")
    sa, st = Sync(a, url), Sync(twin, url)
    a.append_bead("the original's", id="o1")
    twin.append_bead("the twin's", id="t1")  # the same dot aaaa:N, other content
    sa.push()
    with pytest.raises(CloneDetected, match="clone detected"):
        st.push()
    assert "clone detected" in st.status()["stopped"]
    with pytest.raises(CloneDetected):
        st.push()  # stays stopped
    c = open_memory("c")
    Sync(c, url).pull()
    assert c.state_digest() == a.state_digest()
    assert c.get_bead("o1").content == "the original's"


def test_a_twin_that_races_the_heartbeat_check_loses_on_the_segment_name(
    open_memory: Opener, remote_url: Any, tmp_path: Path
) -> None:
    url = remote_url()
    a = open_memory("a", replica_id="aaaa")
    a.append_bead("before", id="x")
    a.close()
    shutil.copytree(tmp_path / "a", tmp_path / "twin")
    a, twin = open_memory("a", replica_id="aaaa"), open_memory("twin", replica_id="aaaa")
    a.append_bead("original", id="o1")
    twin.append_bead("twin", id="t1")
    sa, st = Sync(a, url), Sync(twin, url)
    sa.push()
    open_remote(url).delete("replicas/aaaa.json")  # the twin cannot tell by the heartbeat
    with pytest.raises(CloneDetected, match="other content for op aaaa:2"):
        st.push()


def test_a_copied_data_dir_continues_as_a_new_replica(
    open_memory: Opener, remote_url: Any, tmp_path: Path
) -> None:
    url = remote_url()
    a = open_memory("a")
    first_id = a.replica_id
    write_some(a, "a")
    Sync(a, url).push()
    a.append_bead("written before the copy, never pushed", id="unpushed")
    a.close()
    shutil.copytree(tmp_path / "a", tmp_path / "copy")
    a, copy = open_memory("a"), open_memory("copy")
    assert a.replica_id == first_id and copy.replica_id != first_id
    a.append_bead("on the original after the copy", id="orig-after")
    copy.append_bead("on the copy after the copy", id="copy-after")
    sa, sc = Sync(a, url), Sync(copy, url)
    sc.push()  # the copy publishes the original's unpushed op too: it holds it identically
    sa.push()  # ...so the original meets the same ops under the same name, and goes on
    b = open_memory("b")
    pairs = [(a, sa), (copy, sc), (b, Sync(b, url))]
    converge(*pairs)
    assert len(digests(a, copy, b)) == 1
    for bead in ("unpushed", "orig-after", "copy-after"):
        assert b.get_bead(bead)
    assert all(s.status()["stopped"] is None for _, s in pairs)


def test_encrypted_remote_has_no_plaintext_and_needs_the_key(
    open_memory: Opener, remote_url: Any, tmp_path: Path
) -> None:
    url = remote_url()
    key = tmp_path / "key"
    key.write_text(os.urandom(32).hex())
    a, b = open_memory("a"), open_memory("b")
    sa, sb = Sync(a, url, key_file=key), Sync(b, url, key_file=key)
    secret = "the launch code is swordfish-4471"
    a.append_bead(secret, id="secret")
    a.append_bead(secret + " " + "padding " * 20_000, id="big-secret")  # a blob
    a.add_node(id="n1", type="thing", name="swordfish-4471 node")
    sa.snapshot()
    sb.pull()
    assert b.get_bead("secret").content == secret and a.state_digest() == b.state_digest()
    objects = all_objects(open_remote(url))
    assert any(k.startswith("blobs/") for k in objects)
    assert any(k.startswith("snapshots/") for k in objects)
    for name, data in objects.items():
        assert b"swordfish" not in data, name
    # a laptop without the key, or with another one, is told plainly
    c = open_memory("c")
    with pytest.raises(SyncKeyError, match="is encrypted: configure its sync key"):
        Sync(c, url).pull()
    other = tmp_path / "other"
    other.write_text("a different passphrase entirely")
    with pytest.raises(SyncKeyError, match="not the one"):
        Sync(c, url, key_file=other).pull()
    assert c.version_vector() == {}


def test_passphrase_keys_and_fail_closed_on_a_plaintext_remote(
    open_memory: Opener, remote_url: Any, tmp_path: Path
) -> None:
    plain, enc = remote_url(), remote_url()
    phrase = tmp_path / "phrase"
    phrase.write_text("correct horse battery staple\n")
    a, b = open_memory("a"), open_memory("b")
    a.append_bead("hello", id="h")
    Sync(a, plain).push()
    with pytest.raises(SyncKeyError, match="not encrypted but a sync key is configured"):
        Sync(b, plain, key_file=phrase).pull()
    Sync(a, enc, key_file=phrase).push()
    fmt = json.loads(open_remote(enc).get("format.json"))
    assert fmt["encryption"]["kdf"] == "scrypt" and len(bytes.fromhex(fmt["encryption"]["salt"]))
    Sync(b, enc, key_file=phrase).pull()
    assert b.get_bead("h").content == "hello"


def _flip(remote: Remote, key: str, at: int) -> None:
    data = bytearray(remote.get(key))
    data[at] ^= 0x40
    remote.put(key, bytes(data))


@pytest.mark.parametrize("damage", ["flip", "truncate", "forge", "swap", "other-key"])
@pytest.mark.parametrize("keyed", [False, True])
def test_bad_segments_are_rejected_and_others_still_apply(
    open_memory: Opener, remote_url: Any, tmp_path: Path, damage: str, keyed: bool
) -> None:
    url = remote_url()
    key = tmp_path / "key"
    key.write_text(os.urandom(32).hex())
    kf = key if keyed else None
    a, b, c = open_memory("a"), open_memory("b"), open_memory("c")
    sa, sb, sc = (Sync(m, url, key_file=kf) for m in (a, b, c))
    a.append_bead("a's first", id="a1")
    sa.push()
    a.append_bead("a's second", id="a2")
    sa.push()
    b.append_bead("b's", id="b1")
    sb.push()
    remote = open_remote(url)
    segs = [o.key for o in remote.list(f"ops/{a.replica_id}/")]
    victim = segs[1]
    if damage == "flip":
        _flip(remote, victim, 20)
    elif damage == "truncate":
        remote.put(victim, remote.get(victim)[:-30])
    elif damage == "forge":
        # a well-formed segment (valid checksum) whose ops are not a's ops from its name
        forger = open_memory("forger", replica_id="ffff")
        forger.append_bead("forged", id="forged")
        fs = Sync(forger, url, key_file=kf)
        fs.push()
        forged = remote.get("ops/ffff/0000000000000001.seg")
        remote.delete("ops/ffff/0000000000000001.seg")
        remote.delete("replicas/ffff.json")
        remote.put(victim, forged)
    elif damage == "other-key":  # a's real ops, sealed under a key this remote does not use
        ops = a.ops_since({})
        ops = [op for op in ops if op["replica"] == a.replica_id and op["seq"] >= 2]
        payload = {"replica": a.replica_id, "first": 2, "last": ops[-1]["seq"], "ops": ops}
        remote.put(victim, encode(Kind.SEGMENT, payload, object_key=victim, key=os.urandom(32)))
    else:  # swap: a's first segment's bytes under the second's name
        remote.put(victim, remote.get(segs[0]))
    result = sc.pull()
    assert result["ok"]
    assert c.get_bead("b1").content == "b's"  # the other replica's ops still apply
    assert c.get_bead("a1").content == "a's first"
    with pytest.raises(NotFound):
        c.get_bead("a2")
    rejected = sc.status()["rejected"]
    assert [r["key"] for r in rejected] == [victim]
    expected = {
        "flip": "checksum|authentication" if keyed else "checksum",
        "truncate": "checksum",
        "forge": "authentication" if keyed else "consecutive ops",
        "swap": "authentication" if keyed else "consecutive ops",
        "other-key": "authentication" if keyed else "encrypted and no sync key",
    }[damage]
    assert re.search(expected, rejected[0]["error"])


def test_snapshot_join_and_compaction(open_memory: Opener, remote_url: Any) -> None:
    url = remote_url()
    a, b = open_memory("a"), open_memory("b")
    sa, sb = Sync(a, url, segment_ops=50), Sync(b, url, segment_ops=50)
    a.append_beads({"content": f"bead {i}", "id": f"a{i}"} for i in range(300))
    a.append_bead("x" * 100_000, id="blobby")
    b.append_beads({"content": f"b bead {i}", "id": f"b{i}"} for i in range(120))
    a.forget("a7")
    converge((a, sa), (b, sb))
    snap = sa.snapshot()
    assert snap["written"] and sa.snapshot()["written"] is False  # nothing changed since
    # a new laptop starts from the snapshot in one object, then takes what came after
    b.append_bead("after the snapshot", id="late")
    sb.push()
    c = open_memory("c")
    sc = Sync(c, url)
    before = dict(sc.remote.requests)
    sc.pull()
    assert c.state_digest() == b.state_digest()
    assert c.get_bead("blobby").content == "x" * 100_000 and c.get_bead("late")
    assert sc.remote.requests["get"] - before.get("get", 0) < 20  # not 9 segments of a
    c.wait_indexed(10)
    assert c.retrieve("bead 42", k=3, strategy="keyword").items  # indexes built from it
    # compaction: only what every live replica holds and a snapshot covers
    converge((a, sa), (b, sb), (c, sc))
    segs_before = len(sa.remote.list(f"ops/{a.replica_id}/"))
    assert segs_before > 1
    deleted = sa.compact()["deleted"]  # every live replica holds them; the snapshot covers them
    assert deleted == segs_before - 1  # the newest segment stays
    # a lagging laptop that missed compacted segments replays from the snapshot
    d = open_memory("d")
    d.append_bead("d was offline", id="d1")
    sd = Sync(d, url)
    sd.pull()
    converge((a, sa), (b, sb), (c, sc), (d, sd))
    assert len(digests(a, b, c, d)) == 1


def test_compaction_waits_for_every_live_replica_until_decommission(
    open_memory: Opener, remote_url: Any
) -> None:
    url = remote_url()
    a, old = open_memory("a"), open_memory("old")
    sa, so = Sync(a, url, segment_ops=10), Sync(old, url)
    old.append_bead("the old laptop was here", id="o")
    so.push()
    a.append_beads({"content": f"n{i}", "id": f"n{i}"} for i in range(50))
    sa.push()
    sa.pull()
    sa.snapshot()
    assert sa.compact()["deleted"] == 0  # the old laptop has not applied a's ops
    with pytest.raises(Exception, match="cannot decommission itself"):
        sa.decommission(a.replica_id)
    sa.decommission(old.replica_id)
    assert sa.compact()["deleted"] == 4
    old.append_bead("back after all", id="o2")
    with pytest.raises(Decommissioned):
        so.push()  # its next push finds the tombstone and stops
    sa.pull(force=True)
    peers = {p["replica"]: p for p in sa.status()["peers"]}
    assert peers[old.replica_id]["decommissioned"]


def test_pending_is_known_before_the_first_run(open_memory: Opener, remote_url: Any) -> None:
    url = remote_url()
    a = open_memory("a")
    write_some(a, "a")
    sa = Sync(a, url)
    st = sa.status()  # never opened from this data dir: every op of ours is to push
    assert (st["pending_ops"], st["reached"]) == (a.version_vector()[a.replica_id], False)
    sa.push()
    st = sa.status()
    assert (st["pending_ops"], st["reached"]) == (0, True)
    a.append_bead("one more", id="later")
    st = Sync(a, url).status()  # a new start, before its first run: the cursor is in LMDB
    assert (st["pending_ops"], st["reached"]) == (1, True)


def test_an_idle_replica_that_only_pulls_is_seen_alive(open_memory: Opener, tmp_path: Path) -> None:
    (tmp_path / "remote").mkdir()
    url = f"file://{tmp_path / 'remote'}"
    a, b = open_memory("a"), open_memory("b")  # data dirs side by side
    sa, sb = Sync(a, url, heartbeat_every=0.2), Sync(b, url, heartbeat_every=0.2)
    write_some(a, "a")
    sa.push()
    sb.pull()
    sa.pull()

    def b_seen_by_a() -> float:
        return float(next(p["last_seen"] for p in sa.status()["peers"]))

    first = b_seen_by_a()
    for _ in range(2):
        time.sleep(0.3)
        sb.pull()  # nothing new: b pushes nothing, it only pulls
        sa.pull()  # nothing new for a either
        assert b_seen_by_a() > first and time.time() - b_seen_by_a() < 0.5
        first = b_seen_by_a()
    hb = json.loads((tmp_path / "remote" / "replicas" / f"{b.replica_id}.json").read_text())
    assert time.time() - hb["time"] < 0.5
