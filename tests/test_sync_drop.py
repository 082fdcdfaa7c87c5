"""Dropping a memory in its remote (chrysalis/sync/drop.py, docs/sync-protocol.md §16), with
the library: the drop marker stops every old laptop (even once the name was made again there),
a bucket writer without the key cannot forge one, a push that raced the drop is taken back, and
a sweep cut short is finished by the next laptop that opens the remote with the key. Through a
folder and S3 on 127.0.0.1."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from chrysalis import Memory
from chrysalis.core.errors import MemoryDropped
from chrysalis.remotes import open_remote
from chrysalis.sync import Sync, drop
from chrysalis.sync.segment import Kind, encode

Opener = Callable[..., Memory]


def _key(tmp_path: Path) -> Path:
    key = tmp_path / "key"
    key.write_text(os.urandom(32).hex())
    return key


def _keys(url: str) -> list[str]:
    return [o.key for o in open_remote(url).list()]


def _two(open_memory: Opener, url: str, key: Path | None) -> tuple[Memory, Sync, Memory, Sync]:
    a, b = open_memory("a", replica_id="aaaa"), open_memory("b", replica_id="bbbb")
    sa, sb = Sync(a, url, key_file=key), Sync(b, url, key_file=key)
    a.append_bead("a's note about the okapi", id="a1")
    b.append_bead("b's note about the okapi", id="b1")
    for s in (sa, sb, sa):
        s.push()
        s.pull()
    return a, sa, b, sb


@pytest.mark.parametrize("keyed", [False, True])
def test_the_old_laptop_stops_even_once_the_name_is_made_again_there(
    open_memory: Opener, remote_url: Any, tmp_path: Path, keyed: bool
) -> None:
    url, key = remote_url(), _key(tmp_path) if keyed else None
    _a, sa, b, sb = _two(open_memory, url, key)
    b.append_bead("b wrote this after a dropped it", id="b2")  # unpushed
    done = sa.drop()
    assert done["ok"] and done["left"] == [] and set(done["peers"]) == {"aaaa", "bbbb"}
    assert _keys(url) == [done["marker"]]
    # the memory is made again under the same remote: a new data dir, a new format
    c = open_memory("c", replica_id="cccc")
    sc = Sync(c, url, key_file=key)
    c.append_bead("the new memory's first note", id="c1")
    sc.push()
    with pytest.raises(MemoryDropped, match="dropped by replica aaaa"):
        Sync(b, url, key_file=key).push()  # b opening the remote afresh (a restart)
    with pytest.raises(MemoryDropped):
        sb.pull()  # and the running one
    with pytest.raises(MemoryDropped):
        sb.push()
    assert sb.status()["dropped"]
    assert not [k for k in _keys(url) if "bbbb" in k]  # nothing of b went in
    sc.pull(force=True)
    assert [x.id for x in c.all_beads()] == ["c1"]


def test_a_forged_drop_marker_does_not_stop_a_keyed_laptop(
    open_memory: Opener, remote_url: Any, tmp_path: Path
) -> None:
    url, key = remote_url(), _key(tmp_path)
    _, sa, b, sb = _two(open_memory, url, key)
    assert sa.format is not None
    fid = sa.format["id"]
    name = f"dropped/{fid}"
    # A bucket writer without the key: a well-formed but unsealed marker, then garbage.
    for forged in (
        encode(Kind.DROP, {"id": fid, "by": "aaaa", "at": 1.0}, object_key=name, key=None),
        os.urandom(64),
    ):
        open_remote(url).put(name, forged)
        b.append_bead(f"b goes on {len(forged)}")
        sb.push()
        sb.pull(force=True)
        status = sb.status()
        assert status["dropped"] is None and status["last_error"] is None
        assert name in {t["key"] for t in status["tampered"]}
    assert len(list(b.all_beads())) == 4
    with pytest.raises(MemoryDropped):  # the real one, sealed with the key, does stop it
        sa.drop()
        sb.pull(force=True)


def test_a_push_that_raced_the_drop_is_taken_back(
    open_memory: Opener, remote_url: Any, tmp_path: Path
) -> None:
    url = remote_url()
    _a, sa, b, sb = _two(open_memory, url, None)
    sa.drop()
    # b's segment lands after the sweep (its marker check passed just before the drop)
    remote = open_remote(url)
    stray = "ops/bbbb/0000000000000099.seg"
    remote.put(stray, b"whatever b was writing")
    remote.put("replicas/bbbb.json", b"{}")
    b.append_bead("b's late note")
    with pytest.raises(MemoryDropped):
        sb.push()
    assert not [k for k in _keys(url) if "bbbb" in k]


def test_a_sweep_cut_short_is_finished_by_the_next_laptop_with_the_key(
    open_memory: Opener, remote_url: Any, tmp_path: Path
) -> None:
    url, key = remote_url(), _key(tmp_path)
    _a, sa, _b, sb = _two(open_memory, url, key)
    s = sa._connect().session
    drop.mark(s)  # the dropping laptop wrote its marker, then lost the remote
    old = sa.format
    assert old is not None
    c = open_memory("c", replica_id="cccc")
    sc = Sync(c, url, key_file=key)
    sc.pull(force=True)  # joins: finds the dropped format, finishes the sweep, starts anew
    assert list(c.all_beads()) == []
    assert sc.format is not None and sc.format["id"] != old["id"]
    left = _keys(url)
    assert f"dropped/{old['id']}" in left
    assert not [k for k in left if k.startswith(("ops/aaaa", "ops/bbbb", "snapshots/"))]
    with pytest.raises(MemoryDropped):
        sb.pull(force=True)
