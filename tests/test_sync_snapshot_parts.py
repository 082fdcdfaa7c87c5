"""Snapshots in parts (sync/snapshots.py): a new laptop loads them part by part, and whoever
writes to the bucket cannot make it load anything else: each tampered part refuses the whole
snapshot, nothing of it is written, and the join falls back to the segments."""

from __future__ import annotations

import json
import os
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
import pytest

from chrysalis import Memory
from chrysalis.core.errors import SegmentError, StoreError
from chrysalis.remotes import open_remote
from chrysalis.remotes import s3 as s3_remote
from chrysalis.store.keys import SNAPSHOT_DBS
from chrysalis.sync import Sync, protocol, snapshots
from chrysalis.sync.layout import snapshot_of, snapshot_part_key
from chrysalis.sync.segment import Kind, decode, derive_key, encode, read_key_file

Opener = Callable[..., Memory]


@pytest.fixture(autouse=True)
def small_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parts of ~3 KiB, so a few hundred beads make several parts of one database."""
    monkeypatch.setattr(snapshots, "PART_BYTES", 3 << 10)


def _folder(tmp_path: Path) -> str:
    root = tmp_path / "remote"
    root.mkdir()
    return f"file://{root}"


def _key_file(tmp_path: Path, keyed: bool) -> Path | None:
    if not keyed:
        return None
    kf = tmp_path / "key"
    kf.write_text(os.urandom(32).hex())
    return kf


def _data_key(url: str, kf: Path | None) -> bytes | None:
    if kf is None:
        return None
    fmt = json.loads(open_remote(url).get("format.json"))
    return derive_key(read_key_file(kf), bytes.fromhex(fmt["encryption"]["salt"]))


def _published(open_memory: Opener, url: str, kf: Path | None) -> tuple[Memory, Sync, str]:
    """A memory of varied beads (one with content in a blob), pushed and snapshotted."""
    a = open_memory("a", replica_id="aaaa")
    sa = Sync(a, url, key_file=kf)
    topics = ["tide tables", "a sourdough starter", "the bus to Ørsted", "ledger totals"]
    a.append_beads(
        {"content": f"note {i} about {topics[i % 4]} «{i * 7}»", "session_id": f"s{i // 40}"}
        for i in range(240)
    )
    a.append_bead("a long letter " + "word " * 20_000, id="letter")  # over the blob threshold
    sa.push()
    snap = sa.snapshot()
    assert snap["written"] and snap["parts"] >= 6
    return a, sa, snap["key"]


def _join(open_memory: Opener, url: str, kf: Path | None, name: str = "c") -> tuple[Memory, Sync]:
    c = open_memory(name)
    sc = Sync(c, url, key_file=kf)
    return c, sc


def _parts_of(url: str, key: str) -> list[str]:
    return [o.key for o in open_remote(url).list(key[: -len(".snap")]) if o.key != key]


def test_a_snapshot_in_parts_loads_and_the_laptop_says_so(
    open_memory: Opener, tmp_path: Path
) -> None:
    url = _folder(tmp_path)
    a, _, key = _published(open_memory, url, None)
    parts = _parts_of(url, key)
    assert parts == sorted(parts) and all(snapshot_of(p) == key for p in parts)
    c, sc = _join(open_memory, url, None)
    got = sc.pull()
    assert got["snapshot"] == key
    assert c.state_digest() == a.state_digest()
    assert c.get_bead("letter").content.startswith("a long letter word")
    assert sc.status()["rejected"] == []


def _tamper_truncate(remote: Any, parts: list[str], key: str, data_key: bytes | None) -> str:
    remote.put(parts[2], remote.get(parts[2])[:-40])
    return "not the part its manifest names"


def _tamper_reorder(remote: Any, parts: list[str], key: str, data_key: bytes | None) -> str:
    one, two = remote.get(parts[1]), remote.get(parts[2])
    remote.put(parts[1], two)
    remote.put(parts[2], one)
    return "not the part its manifest names"


def _tamper_duplicate(remote: Any, parts: list[str], key: str, data_key: bytes | None) -> str:
    remote.put(parts[3], remote.get(parts[2]))
    return "not the part its manifest names"


def _tamper_forge(remote: Any, parts: list[str], key: str, data_key: bytes | None) -> str:
    """Other rows, sealed as a part under its own name: with a key, the forger has none and
    seals under another; without one the bytes are well formed, but not the manifest's."""
    payload = {"snapshot": key, "n": 2, "db": "ops", "kv": [b"aaaa\0" + bytes(8), b"\x80"]}
    forger_key = None if data_key is None else os.urandom(32)
    remote.put(parts[2], encode(Kind.SNAPSHOT_PART, payload, object_key=parts[2], key=forger_key))
    return "not the part its manifest names"


def _tamper_delete(remote: Any, parts: list[str], key: str, data_key: bytes | None) -> str:
    remote.delete(parts[-1])
    return "no object"


@pytest.mark.parametrize(
    "tamper",
    [_tamper_truncate, _tamper_reorder, _tamper_duplicate, _tamper_forge, _tamper_delete],
    ids=["truncated", "reordered", "duplicated", "forged", "deleted"],
)
@pytest.mark.parametrize("keyed", [False, True], ids=["plain", "keyed"])
def test_a_tampered_part_refuses_the_snapshot_and_the_join_replays_segments(
    open_memory: Opener, tmp_path: Path, keyed: bool, tamper: Any
) -> None:
    url, kf = _folder(tmp_path), _key_file(tmp_path, keyed)
    a, _, key = _published(open_memory, url, kf)
    why = tamper(open_remote(url), _parts_of(url, key), key, _data_key(url, kf))
    c, sc = _join(open_memory, url, kf)
    got = sc.pull()
    assert got["snapshot"] is None  # not loaded: the op log was replayed instead
    rejected = {r["key"]: r["error"] for r in sc.status()["rejected"]}
    assert why in rejected[key]
    assert c.state_digest() == a.state_digest()  # the segments carried everything


def test_nothing_of_a_refused_snapshot_is_written(open_memory: Opener, tmp_path: Path) -> None:
    """The last part is the one that fails: every part before it was already streamed into
    the transaction, and none of it may stay."""
    url = _folder(tmp_path)
    _, _, key = _published(open_memory, url, None)
    remote = open_remote(url)
    last = _parts_of(url, key)[-1]
    remote.put(last, remote.get(last)[:-1])
    c = open_memory("c")
    sc = Sync(c, url)
    s = sc._connect().session
    out = snapshots.Outcome()
    snapshots.join(s, {"aaaa": {"snapshot": {"key": key, "vv": {"aaaa": 1}}}}, out)
    assert out.snapshot is None and key in s.health.rejected
    assert c.store.is_empty() and c.version_vector() == {}


def _forge_plain_manifest(remote: Any, key: str, entries: list[dict[str, Any]]) -> None:
    """What a bucket writer can do to a plaintext remote: any manifest it likes."""
    manifest = decode(remote.get(key), kind=Kind.SNAPSHOT, object_key=key, key=None)
    manifest["parts"] = entries
    remote.put(key, encode(Kind.SNAPSHOT, manifest, object_key=key, key=None))


def test_a_manifest_naming_another_snapshots_parts_is_refused(
    open_memory: Opener, tmp_path: Path
) -> None:
    """Plaintext remote: the writer copies an older snapshot's parts under the new one's names
    and rewrites the manifest to match their hashes. Each part says whose it is."""
    url = _folder(tmp_path)
    a, sa, old = _published(open_memory, url, None)
    a.append_beads({"content": f"later note {i}"} for i in range(30))
    sa.push()
    new = sa.snapshot()["key"]
    remote = open_remote(url)
    old_manifest = decode(remote.get(old), kind=Kind.SNAPSHOT, object_key=old, key=None)
    for n in range(len(old_manifest["parts"])):
        remote.put(snapshot_part_key(new, n), remote.get(snapshot_part_key(old, n)))
    _forge_plain_manifest(remote, new, old_manifest["parts"])
    c, sc = _join(open_memory, url, None)
    assert sc.pull()["snapshot"] != new
    rejected = {r["key"]: r["error"] for r in sc.status()["rejected"]}
    assert f"not part 0 (ops) of {new}" in rejected[new]
    assert c.state_digest() == a.state_digest()


def test_a_manifest_of_another_snapshot_fails_authentication_with_a_key(
    open_memory: Opener, tmp_path: Path
) -> None:
    url, kf = _folder(tmp_path), _key_file(tmp_path, True)
    a, sa, old = _published(open_memory, url, kf)
    a.append_beads({"content": f"later note {i}"} for i in range(30))
    sa.push()
    new = sa.snapshot()["key"]
    remote = open_remote(url)
    remote.put(new, remote.get(old))  # the older manifest under the announced name
    c, sc = _join(open_memory, url, kf)
    sc.pull()
    rejected = {r["key"]: r["error"] for r in sc.status()["rejected"]}
    assert "fails authentication" in rejected[new]
    assert c.state_digest() == a.state_digest()


def test_a_part_that_inflates_past_the_cap_is_refused(
    open_memory: Opener, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plaintext remote, manifest forged to name it: 16 MiB of one repeated row, a few KiB
    on the wire, against a cap lowered to 1 MiB (the real one is 128 MiB)."""
    monkeypatch.setattr(snapshots, "PART_INFLATED", 1 << 20)
    url = _folder(tmp_path)
    a, _, key = _published(open_memory, url, None)
    remote = open_remote(url)
    manifest = decode(remote.get(key), kind=Kind.SNAPSHOT, object_key=key, key=None)
    pkey = snapshot_part_key(key, 0)
    kv = [b"aaaa\0" + bytes(8), bytes(16 << 20)]
    bomb = encode(Kind.SNAPSHOT_PART, {"snapshot": key, "n": 0, "db": "ops", "kv": kv},
                  object_key=pkey, key=None)  # fmt: skip
    assert len(bomb) < 64 << 10
    remote.put(pkey, bomb)
    entries = manifest["parts"]
    entries[0] = {**entries[0], "bytes": len(bomb), "hash": snapshots._hash(bomb),
                  "rows": 1, "first": kv[0], "last": kv[0]}  # fmt: skip
    _forge_plain_manifest(remote, key, entries)
    c, sc = _join(open_memory, url, None)
    sc.pull()
    rejected = {r["key"]: r["error"] for r in sc.status()["rejected"]}
    assert "does not decompress whole" in rejected[key]
    assert c.state_digest() == a.state_digest()


@pytest.mark.parametrize(
    "entries",
    [
        lambda e: [*e, {**e[0], "db": "meta"}],  # not a replicated database
        lambda e: [e[-1], *e[:-1]],  # a later database's part first: out of database order
        lambda e: [{**e[0], "rows": -1}, *e[1:]],
        lambda e: "not a list",
    ],
    ids=["unknown-db", "db-order", "negative-rows", "not-a-list"],
)
def test_a_malformed_manifest_is_refused(open_memory: Opener, tmp_path: Path, entries: Any) -> None:
    url = _folder(tmp_path)
    a, _, key = _published(open_memory, url, None)
    remote = open_remote(url)
    manifest = decode(remote.get(key), kind=Kind.SNAPSHOT, object_key=key, key=None)
    _forge_plain_manifest(remote, key, entries(manifest["parts"]))
    c, sc = _join(open_memory, url, None)
    assert sc.pull()["snapshot"] is None
    assert key in {r["key"] for r in sc.status()["rejected"]}
    assert c.state_digest() == a.state_digest()


def test_a_snapshot_of_one_object_written_before_parts_still_loads(
    open_memory: Opener, tmp_path: Path
) -> None:
    url = _folder(tmp_path)
    a, _, key = _published(open_memory, url, None)
    remote = open_remote(url)
    for p in _parts_of(url, key):
        remote.delete(p)
    vv, dbs, digest = a.reader.dump_unless(lambda vv: False)
    legacy = {"replica": "aaaa", "hlc": 1, "vv": vv, "digest": digest, "dbs": dbs}
    remote.put(key, encode(Kind.SNAPSHOT, legacy, object_key=key, key=None))
    c, sc = _join(open_memory, url, None)
    assert sc.pull()["snapshot"] == key
    assert c.state_digest() == a.state_digest()


def test_compaction_trusts_no_snapshot_with_a_damaged_part(
    open_memory: Opener, tmp_path: Path
) -> None:
    url = _folder(tmp_path)
    _, sa, key = _published(open_memory, url, None)
    b = open_memory("b", replica_id="bbbb")
    sb = Sync(b, url)
    sb.pull()
    sb.push()
    sa.pull()
    remote = open_remote(url)
    part = _parts_of(url, key)[1]
    data = remote.get(part)
    remote.put(part, data[:100] + bytes([data[100] ^ 1]) + data[101:])
    assert sa.compact()["deleted"] == 0
    assert key in {r["key"] for r in sa.status()["rejected"]}


def test_old_snapshots_go_with_their_parts_and_a_cut_short_publish_is_cleaned() -> None:
    def snap(hlc: int, parts: int) -> list[str]:
        key = f"snapshots/r-{hlc:016x}.snap"
        return [snapshot_part_key(key, n) for n in range(parts)] + [key]

    orphan = [snapshot_part_key("snapshots/r-0000000000000009.snap", 0)]
    ours = sorted(snap(1, 2) + snap(2, 3) + snap(3, 1) + orphan)
    gone = protocol.snapshots_to_delete(ours, keep=2)
    assert gone[0] == "snapshots/r-0000000000000001.snap"  # the manifest before its parts
    assert set(gone) == {*snap(1, 2), *orphan}
    assert protocol.snapshots_to_delete(ours, keep=1)[:2] == [
        "snapshots/r-0000000000000001.snap",
        "snapshots/r-0000000000000002.snap",
    ]


def test_a_republished_snapshot_leaves_no_part_of_the_replaced_ones(
    open_memory: Opener, tmp_path: Path
) -> None:
    url = _folder(tmp_path)
    a, sa, first = _published(open_memory, url, None)
    for i in range(3):
        a.append_bead(f"round {i} of edits")
        sa.push()
        sa.snapshot()
    listed = [o.key for o in open_remote(url).list("snapshots/")]
    manifests = [k for k in listed if k.endswith(".snap")]
    assert len(manifests) == protocol.KEEP_SNAPSHOTS and first not in manifests
    assert {snapshot_of(k) for k in listed} == set(manifests)


def test_a_stream_that_fails_midway_leaves_the_store_empty(open_memory: Opener) -> None:
    m = open_memory("m")

    def stream() -> Any:
        yield "ops", [(b"aaaa\0" + (1).to_bytes(8, "big"), b"\x80")]
        raise SegmentError("part 1 does not verify")

    with pytest.raises(SegmentError, match="does not verify"):
        m.store.load_parts(stream)
    assert m.store.is_empty()

    def disordered() -> Any:
        yield "beads", [(b"b", b"1")]
        yield "beads", [(b"a", b"2")]  # a slice whose keys go back

    with pytest.raises(StoreError, match="out of order"):
        m.store.load_parts(disordered)
    assert m.store.is_empty()
    assert set(SNAPSHOT_DBS) >= {"ops", "beads"}


def test_a_part_is_no_bigger_than_its_cap_on_the_wire(open_memory: Opener, tmp_path: Path) -> None:
    """Parts close at PART_BYTES of keys and values: every part's rows, inflated, stay under
    it plus one row, so the loader's cap is never met by an honest writer."""
    url = _folder(tmp_path)
    _, _, key = _published(open_memory, url, None)
    remote = open_remote(url)
    manifest = decode(remote.get(key), kind=Kind.SNAPSHOT, object_key=key, key=None)
    for n, e in enumerate(manifest["parts"]):
        body = remote.get(snapshot_part_key(key, n))
        raw = zlib.decompress(body[8:-16])
        kv = msgpack.unpackb(raw)["kv"]
        biggest = max(len(kv[i]) + len(kv[i + 1]) for i in range(0, len(kv), 2))
        assert e["raw"] == sum(map(len, kv)) < snapshots.PART_BYTES + biggest


def test_the_s3_endpoints_owner_is_read_once_a_second_and_a_refusal_never_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[float] = []
    refuse = False

    def check(url: str, what: str, error: type[Exception]) -> None:
        calls.append(time.monotonic())
        if refuse:
            raise error("served by another user")

    monkeypatch.setattr(s3_remote, "check_loopback_service", check)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    remote = s3_remote.S3Remote("s3://b/p?endpoint_url=http://127.0.0.1:9&retries=1&timeout=1")
    try:
        for _ in range(5):
            remote._start("get")
        assert len(calls) == 1  # within the second: asked once
        remote._owner_checked_at -= s3_remote.OWNER_CHECKED_FOR + 0.01
        refuse = True
        for _ in range(3):
            with pytest.raises(Exception, match="another user"):
                remote._start("get")
        assert len(calls) == 4  # each refused request asked again
    finally:
        remote.close()


def test_through_s3_a_truncated_part_is_refused_and_a_good_snapshot_loads(
    open_memory: Opener, tmp_path: Path, s3_server: Any
) -> None:
    """End to end on moto's S3 server on 127.0.0.1, with a sync key: the bucket's writer cuts
    a part short; a new laptop refuses the snapshot and replays the segments; the next
    snapshot (the tampering did not touch it) is what a second new laptop loads."""
    bucket = s3_server.new_bucket()
    url, kf = s3_server.url(bucket), _key_file(tmp_path, True)
    a, sa, key = _published(open_memory, url, kf)
    part = snapshot_part_key(key, 1)
    s3 = s3_server.client()
    whole = s3.get_object(Bucket=bucket, Key=f"team/{part}")["Body"].read()
    s3.put_object(Bucket=bucket, Key=f"team/{part}", Body=whole[: len(whole) // 2])
    c, sc = _join(open_memory, url, kf)
    assert sc.pull()["snapshot"] is None
    assert "not the part its manifest names" in sc.status()["rejected"][0]["error"]
    assert c.state_digest() == a.state_digest()
    a.append_bead("written after the tampering")
    sa.push()
    fresh = sa.snapshot()["key"]
    d, sd = _join(open_memory, url, kf, name="d")
    assert sd.pull()["snapshot"] == fresh
    assert d.state_digest() == a.state_digest()
