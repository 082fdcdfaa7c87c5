"""Forget in the remote (docs/sync-protocol.md §15): once the replicas have synced after a
forget, no object in the remote holds the content, decoded or raw; blobs a live bead still
names survive a racing deletion; a decommissioned replica's segments are cleaned by a live one.
Through real remotes (a folder, and S3 on 127.0.0.1), with and without a sync key."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import pytest

from chrysalis import Memory
from chrysalis.core import vector_bytes
from chrysalis.remotes import open_remote
from chrysalis.store.keys import same_op
from chrysalis.sync import Sync, protocol
from chrysalis.sync.segment import MAGIC, Kind, decode
from tests.remote_fixtures import key_file

Opener = Callable[..., Memory]
MARK = "zebra-quartz-7731"
VECTOR = [1234.5678, -8765.4321, 42.4242, 0.007]  # a vector of a forgotten bead, as a marker
VMARK = vector_bytes.encode(np.asarray(VECTOR))  # as the op stores it (float16 here)
KINDS = {"ops/": Kind.SEGMENT, "snapshots/": Kind.SNAPSHOT, "blobs/": Kind.BLOB}


def _big(tag: str) -> str:
    """Content over the 64 KiB blob threshold (in UTF-8) but under the 64 Ki-character cap."""
    return f"{tag} {MARK} " + "é" * 40_000


# blob_grace=-5: no grace at all, whatever the rounding of the store's mtime (the race test
# uses the default hour).


def _sync(*syncs: Sync) -> None:
    for s in syncs:
        s.pull()
        s.push()


def _holding(url: str, key: bytes | None, mark: bytes = MARK.encode()) -> list[str]:
    """Every object in the remote whose raw bytes or decoded payload hold ``mark``."""
    remote = open_remote(url)
    found = []
    for obj in remote.list(""):
        raw = remote.get(obj.key)
        plain = raw
        kind = next((k for p, k in KINDS.items() if obj.key.startswith(p)), None)
        if obj.key.endswith(".part"):  # a snapshot's part
            kind = Kind.SNAPSHOT_PART
        if kind is None and obj.key.startswith("replicas/") and raw[:4] == MAGIC:
            kind = Kind.HEARTBEAT
        if kind is not None:
            payload: Any = decode(raw, kind=kind, object_key=obj.key, key=key)
            plain = payload if isinstance(payload, bytes) else msgpack.packb(payload)
        if mark in raw or mark in plain:
            found.append(obj.key)
    return found


@pytest.mark.parametrize("keyed", [False, True])
def test_after_a_forget_no_object_in_the_remote_holds_the_content(
    open_memory: Opener, remote_url: Any, tmp_path: Path, keyed: bool
) -> None:
    url, kf = remote_url(), key_file(tmp_path, keyed)
    a, b = open_memory("a", replica_id="aaaa"), open_memory("b", replica_id="bbbb")
    sa, sb = Sync(a, url, key_file=kf, blob_grace=-5), Sync(b, url, key_file=kf, blob_grace=-5)
    a.append_bead(f"a small note {MARK}", id="small")
    a.append_bead(_big("a large note"), id="large")
    a.append_bead("a note that stays", id="stays")
    text_hash = hashlib.sha256(b"text").hexdigest()
    a.put_embedding("bead", "small", "m1", VECTOR, provider="test", text_hash=text_hash)
    sa.push()
    sa.snapshot()
    sb.pull()
    b.append_bead(f"b's note {MARK}", id="bsmall")
    sb.push()
    sb.snapshot()
    sa.pull()
    key = sa.key
    assert _holding(url, key) and _holding(url, key, VMARK)  # there before the forget
    blob = "blobs/" + hashlib.sha256(_big("a large note").encode()).hexdigest()
    assert any(o.key == blob for o in open_remote(url).list("blobs/"))

    for bead in ("small", "large", "bsmall"):
        a.forget(bead)
    _sync(sa, sb, sa, sb)

    assert _holding(url, key) == [] and _holding(url, key, VMARK) == []
    assert not any(o.key == blob for o in open_remote(url).list("blobs/"))
    for s in (sa, sb):
        left = s.status()["forget"]
        assert (left["rewrites"], left["blob_deletions"], left["snapshot"]) == (0, 0, False)
    assert a.state_digest() == b.state_digest()
    # A laptop that joins now starts from what the remote holds: erased, the same state.
    c = open_memory("c", replica_id="cccc")
    Sync(c, url, key_file=kf).pull()
    assert c.state_digest() == a.state_digest()
    assert c.get_bead("stays").content == "a note that stays"
    # Our older snapshots went; compaction still finds the cover it needs, and a laptop that
    # joins after it still converges.
    for s in (sa, sb):
        s.pull()
        s.push()
    assert sa.compact()["deleted"] >= 1
    d = open_memory("d", replica_id="dddd")
    Sync(d, url, key_file=kf).pull()
    assert d.state_digest() == a.state_digest()
    assert _holding(url, key) == []

    places = sa.remote_places(
        [("aaaa", 1), ("aaaa", 2), ("aaaa", 4), ("bbbb", 1)],
        [blob.split("/")[1]],
        forget=("aaaa", 5),
    )
    assert {v["state"] for v in places["segments"].values()} <= {"gone"}
    assert all(v["state"] == "gone" for v in places["snapshots"].values())
    assert places["blobs"] == {blob: {"state": "gone"}}


def test_the_receipt_says_who_must_act_while_content_remains(
    open_memory: Opener, remote_url: Any
) -> None:
    url = remote_url()
    a, b = open_memory("a", replica_id="aaaa"), open_memory("b", replica_id="bbbb")
    sa, sb = Sync(a, url), Sync(b, url)
    b.append_bead(f"b's note {MARK}", id="bnote")
    _sync(sb, sa)
    a.forget("bnote")
    _sync(sa)  # b is offline: only b may rewrite its segment
    places = sa.remote_places([("bbbb", 1)], [])
    (seg,) = places["segments"].values()
    assert seg["state"] == "remains"
    assert "pending on replica bbbb" in seg["why"]
    assert "--decommission bbbb" in seg["why"]
    assert sa.status()["forget"]["waiting_on"] == {"bbbb": 1}
    _sync(sb)
    assert [v["state"] for v in sa.remote_places([("bbbb", 1)], [])["segments"].values()] == [
        "gone"
    ]
    assert _holding(url, None) == []


@pytest.mark.parametrize("keyed", [False, True])
def test_a_decommissioned_origins_segments_are_cleaned_by_a_live_replica(
    open_memory: Opener, remote_url: Any, tmp_path: Path, keyed: bool
) -> None:
    url, kf = remote_url(), key_file(tmp_path, keyed)
    a, b, old = (open_memory(n, replica_id=n * 4) for n in ("a", "b", "o"))
    sa, sb, so = (Sync(m, url, key_file=kf, blob_grace=-5) for m in (a, b, old))
    old.append_bead(f"old's note {MARK}", id="onote")
    old.append_bead(_big("old's large note"), id="olarge")
    _sync(so)
    so.snapshot()
    _sync(sa, sb)
    so.close()  # the laptop is lost
    a.forget("onote")
    a.forget("olarge")
    _sync(sa, sb)
    assert _holding(url, sa.key) != []  # oooo's segment and snapshot: only oooo may write them
    sb.decommission("oooo")
    _sync(sa, sb, sa)  # aaaa is the live replica with the smallest id: the cleaner
    assert _holding(url, sa.key) == []
    assert open_remote(url).list("snapshots/oooo-") == []
    assert a.state_digest() == b.state_digest()


def test_a_push_naming_a_blob_a_forget_is_deleting_keeps_it(
    open_memory: Opener, remote_url: Any
) -> None:
    """b pushes a bead with the same large content while a deletes the blob: the fresh put
    makes a spare it (grace); and if the deletion lands anyway (a push slower than the grace),
    a reader reports it missing and b puts it again."""
    url = remote_url()
    a, b, c = (open_memory(n, replica_id=n * 4) for n in ("a", "b", "c"))
    sa, sb, sc = Sync(a, url), Sync(b, url), Sync(c, url)
    text = _big("shared")
    key = "blobs/" + hashlib.sha256(text.encode()).hexdigest()
    a.append_bead(text, id="first")
    _sync(sa, sb)
    a.forget("first")
    sa.pull()  # a's view is complete and fresh, and lacks b's next bead
    b.append_bead(text, id="second")
    sb.push()  # the blob is put again (fresh mtime), then the segment naming it
    sa.push()  # a's scrub: unreferenced in its view, but put within the grace: spared
    assert any(o.key == key for o in open_remote(url).list(key))
    assert sa.status()["forget"]["blob_deletions"] == 1
    sa.pull()
    sa.push()  # now a sees b's bead: the blob is in use, a's to-do is settled
    assert sa.status()["forget"]["blob_deletions"] == 0
    assert any(o.key == key for o in open_remote(url).list(key))

    # The residual window: the deletion lands after b's push checked the blob.
    open_remote(url).delete(key)
    sc.pull()
    assert key in sc.status()["forget"]["missing_blobs"]
    with pytest.raises(Exception, match="no bead"):
        c.get_bead("second")
    sb.pull()  # b reads c's heartbeat: it names the blob
    sb.push()  # and puts it again
    sc.pull()
    assert c.get_bead("second").content == text
    assert sc.status()["forget"]["missing_blobs"] == {}


def test_a_puller_that_read_a_segment_before_its_rewrite_is_not_confused(
    open_memory: Opener, remote_url: Any
) -> None:
    url = remote_url()
    a, b, c = (open_memory(n, replica_id=n * 4) for n in ("a", "b", "c"))
    sa, sb, sc = Sync(a, url), Sync(b, url), Sync(c, url)
    a.append_bead(f"note {MARK}", id="n1")
    a.append_bead("kept", id="n2")
    _sync(sa, sb)  # b read the segment in content form
    a.forget("n1")
    _sync(sa)  # rewritten erased under the same name
    # c never saw it: it reads the erased ops (an erased add is a forget) and no forget yet.
    seg = open_remote(url).list("ops/aaaa/")[0].key
    assert json.dumps(sa.remote_places([("aaaa", 1)], [])["segments"][seg]["state"]) == '"gone"'
    _sync(sc, sb, sc)
    for m in (b, c):
        assert m.state_digest() == a.state_digest()
        assert m.get_bead("n2").content == "kept"
    assert sb.status()["rejected"] == [] and sc.status()["rejected"] == []


# ---- the decisions (protocol.py), pure ------------------------------------------------------


def _op(seq: int, **data: Any) -> dict[str, Any]:
    return {"replica": "r", "seq": seq, "hlc": seq, "kind": "bead.add", "target": f"b{seq}",
            "data": {"id": f"b{seq}", "ts": 1.0, **data}}  # fmt: skip


def test_who_rewrites_a_replicas_segments() -> None:
    hbs: dict[str, dict[str, Any]] = {"b": {}, "c": {}, "a": {"decommissioned": True}}
    assert protocol.rewriter("c", hbs) == "c"  # itself, even offline
    assert protocol.rewriter("z", hbs) == "z"  # unknown: only itself
    assert protocol.rewriter("a", hbs) == "b"  # decommissioned: the smallest live id
    assert protocol.rewriter("a", {"a": {"decommissioned": True}}) is None


def test_erase_in_replaces_content_by_our_erased_copies_and_never_restores_it() -> None:
    remote = [_op(1, content="x"), _op(2, content="y"), _op(3, erased=True)]
    local = {1: _op(1, erased=True), 2: _op(2, content="y"), 3: _op(3, content="z")}
    new = protocol.erase_in(remote, local, same_op)
    assert new == [_op(1, erased=True), _op(2, content="y"), _op(3, erased=True)]
    assert protocol.erase_in(new, local, same_op) is None  # idempotent
    other = {1: {**_op(1, erased=True), "hlc": 99}}  # not the same op: left alone
    assert protocol.erase_in(remote, other, same_op) is None


def test_blobs_wait_out_the_grace_and_snapshots_cover_by_vector() -> None:
    assert not protocol.blob_deletable(None, 10_000.0)
    assert not protocol.blob_deletable(9_000.0, 10_000.0, grace=3600)
    assert protocol.blob_deletable(1_000.0, 10_000.0, grace=3600)
    assert protocol.covers({"a": 3, "b": 1}, {"a": 3}) and not protocol.covers({"a": 2}, {"a": 3})
    assert protocol.segment_index([1, 5, 9], 4) == 0 and protocol.segment_index([5], 4) is None


def test_the_receipt_reads_unknown_when_the_remote_is_away(
    open_memory: Opener, tmp_path: Path
) -> None:
    root = tmp_path / "share"
    root.mkdir()
    a = open_memory("a", replica_id="aaaa")
    sa = Sync(a, f"file://{root}")
    a.append_bead(f"note {MARK}", id="n1")
    _sync(sa)
    a.forget("n1")
    root.rename(tmp_path / "unmounted")  # an unmounted share: the remote is unavailable
    places = sa.remote_places([("aaaa", 1)], ["0" * 64])
    states = [v["state"] for part in places.values() for v in part.values()]
    assert states and set(states) == {"unknown"}
    assert "did not answer" in places["segments"]["ops/aaaa/"]["why"]


def test_a_snapshot_replaced_after_its_announcement_is_no_anomaly(
    open_memory: Opener, tmp_path: Path
) -> None:
    """A reader holding a heartbeat that announced a snapshot its writer has since replaced
    (a forget replaces snapshots at once) finds it gone: not reported. One announced and
    never written, with nothing newer of its writer, is rejected as before."""
    from chrysalis.remotes import RemoteNotFound
    from chrysalis.sync import snapshots

    root = tmp_path / "remote"
    root.mkdir()
    a = open_memory("a", replica_id="aaaa")
    a.append_bead("first")
    sa = Sync(a, f"file://{root}")
    sa.push()
    old = sa.snapshot()["key"]
    a.append_bead("second")
    new = sa.snapshot()["key"]
    assert new > old
    session = sa._connect().session
    snapshots.unreadable(session, old, RemoteNotFound(f"no object {old}"))
    assert old not in session.health.rejected
    ghost = "snapshots/zzzz-0000000000000001.snap"
    snapshots.unreadable(session, ghost, RemoteNotFound(f"no object {ghost}"))
    assert ghost in session.health.rejected
    sa.close()
