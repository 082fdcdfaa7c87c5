"""Forget in the remote (docs/sync-protocol.md §15): once the replicas have synced after a
forget, no object in the remote holds the content, decoded or raw; blobs a live bead still
names survive a racing deletion; a decommissioned replica's segments are cleaned by a live one.
Through real remotes (a folder, and S3 on 127.0.0.1), with and without a sync key."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
import pytest

from chrysalis import Memory
from chrysalis.remotes import open_remote
from chrysalis.segment import MAGIC, Kind, decode
from chrysalis.sync import Sync

Opener = Callable[..., Memory]
MARK = "zebra-quartz-7731"
KINDS = {"ops/": Kind.SEGMENT, "snapshots/": Kind.SNAPSHOT, "blobs/": Kind.BLOB}


def _key(tmp_path: Path, keyed: bool) -> Path | None:
    if not keyed:
        return None
    key = tmp_path / "key"
    key.write_text(os.urandom(32).hex())
    return key


def _big(tag: str) -> str:
    """Content over the 64 KiB blob threshold (in UTF-8) but under the 64 Ki-character cap."""
    return f"{tag} {MARK} " + "é" * 40_000


def _sync(*syncs: Sync) -> None:
    for s in syncs:
        s.pull()
        s.push()


def _holding(url: str, key: bytes | None, mark: str = MARK) -> list[str]:
    """Every object in the remote whose raw bytes or decoded payload hold ``mark``."""
    remote = open_remote(url)
    found = []
    for obj in remote.list(""):
        raw = remote.get(obj.key)
        plain = raw
        kind = next((k for p, k in KINDS.items() if obj.key.startswith(p)), None)
        if kind is None and obj.key.startswith("replicas/") and raw[:4] == MAGIC:
            kind = Kind.HEARTBEAT
        if kind is not None:
            payload: Any = decode(raw, kind=kind, object_key=obj.key, key=key)
            plain = payload if isinstance(payload, bytes) else msgpack.packb(payload)
        if mark.encode() in raw or mark.encode() in plain:
            found.append(obj.key)
    return found


@pytest.mark.parametrize("keyed", [False, True])
def test_after_a_forget_no_object_in_the_remote_holds_the_content(
    open_memory: Opener, remote_url: Any, tmp_path: Path, keyed: bool
) -> None:
    url, kf = remote_url(), _key(tmp_path, keyed)
    a, b = open_memory("a", replica_id="aaaa"), open_memory("b", replica_id="bbbb")
    sa, sb = Sync(a, url, key_file=kf, blob_grace=0), Sync(b, url, key_file=kf, blob_grace=0)
    a.append_bead(f"a small note {MARK}", id="small")
    a.append_bead(_big("a large note"), id="large")
    a.append_bead("a note that stays", id="stays")
    sa.push()
    sa.snapshot()
    sb.pull()
    b.append_bead(f"b's note {MARK}", id="bsmall")
    sb.push()
    sb.snapshot()
    sa.pull()
    key = sa.key
    assert _holding(url, key)  # the content is there before the forget
    blob = "blobs/" + hashlib.sha256(_big("a large note").encode()).hexdigest()
    assert any(o.key == blob for o in open_remote(url).list("blobs/"))

    for bead in ("small", "large", "bsmall"):
        a.forget(bead)
    _sync(sa, sb, sa, sb)

    assert _holding(url, key) == []
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

    places = sa.remote_places(
        [("aaaa", 1), ("aaaa", 2), ("bbbb", 1)], [blob.split("/")[1]], forget=("aaaa", 4)
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
    url, kf = remote_url(), _key(tmp_path, keyed)
    a, b, old = (open_memory(n, replica_id=n * 4) for n in ("a", "b", "o"))
    sa, sb, so = (Sync(m, url, key_file=kf, blob_grace=0) for m in (a, b, old))
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
