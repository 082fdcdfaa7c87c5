"""Snapshots: the replicated databases in the remote, so a new laptop starts fast and a replica
that lacks compacted ops can replay them (docs/sync-protocol.md §10).

A snapshot is a **manifest** (``snapshots/<replica>-<hlc>.snap``, kind SNAPSHOT) naming its
**parts** (``snapshots/<replica>-<hlc>.<n>.part``, kind SNAPSHOT_PART), each a slice of one
database of at most about `PART_BYTES` of keys and values, in database then key order. Every
object is sealed like a segment (encrypted with the key name in its associated data when the
remote has a key). The manifest holds, per part, its size and BLAKE2b-256, its row count and
its first and last key; the parts are written first, the manifest last, so a manifest that
reads names parts that exist (until its writer replaces it). Neither side ever holds the
whole state: the writer streams from one read transaction, a joiner loads part by part into
one write transaction (`Store.load_parts`), fetching the next parts while it writes.

A part is trusted only if its bytes hash to what the (authenticated) manifest says for that
position, it decodes under its own key name, and it says which snapshot and position it is:
a forged, truncated, reordered, duplicated or foreign part, or one that inflates past
`PART_INFLATED`, refuses the whole snapshot, and nothing of it is written.

Snapshots written before parts existed (one object, ``{"dbs": ...}`` in the payload) are
still read, whole, as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from chrysalis.core.errors import ChrysalisError, SegmentError, StoreError
from chrysalis.remotes import RemoteNotFound
from chrysalis.store.keys import SNAPSHOT_DBS
from chrysalis.sync import objects, protocol
from chrysalis.sync.heartbeats import Heartbeats
from chrysalis.sync.layout import (
    is_snapshot_key,
    snapshot_key,
    snapshot_of,
    snapshot_part_key,
    snapshots_of,
)
from chrysalis.sync.segment import Kind, decode, encode
from chrysalis.sync.session import Outcome, Session

log = logging.getLogger(__name__)

PART_BYTES = 16 << 20  # keys + values a part holds: it closes at the first row past this
# A part inflates to its rows plus msgpack's framing; one row may be a whole bead of
# MAX_CONTENT_CHARS (up to 32 MiB of UTF-8) past PART_BYTES. Anything larger is a bomb.
PART_INFLATED = 128 << 20
PART_LEVEL = 1  # zlib level of parts: 2.5-3x faster than 6 for 3-15 % more bytes (benchmarks.md)
PREFETCH = 3  # parts fetched and verified ahead of the one being written
MAX_PARTS = 1 << 20
FORMAT = 2  # the manifest's "format": 2 = parts (a payload with "dbs" is the older, whole one)

Entry = dict[str, Any]


def publish(
    s: Session, heartbeats: Heartbeats, *, force: bool = False, keep: int = protocol.KEEP_SNAPSHOTS
) -> dict[str, Any]:
    """Write a snapshot of our state unless our last one holds it already (``force``: write
    one anyway, e.g. after a forget erased ops without changing our version vector); announce
    it in our heartbeat and delete our older ones but the newest ``keep`` (and parts no
    manifest of ours names: a publish cut short). The caller pushes first: every blob and op
    it names must be in the remote before it."""
    last = s.local.last_snapshot(s.fid)
    with s.local.dump_stream(lambda vv: not force and protocol.snapshot_current(last, vv)) as (
        vv,
        stream,
    ):
        if stream is None:
            assert last is not None
            return {"key": last["key"], "written": False}
        hlc = s.local.hlc_now()
        key = snapshot_key(s.me, hlc)
        parts, digest = _write_parts(s, key, stream)
    manifest = {"format": FORMAT, "replica": s.me, "hlc": hlc, "vv": vv, "digest": digest,
                "parts": parts}  # fmt: skip
    data = encode(Kind.SNAPSHOT, manifest, object_key=key, key=s.key)
    s.remote.put_if_absent(key, data)
    size = len(data) + sum(p["bytes"] for p in parts)
    s.local.set_last_snapshot(s.fid, {"key": key, "vv": vv, "bytes": size})
    heartbeats.beat()
    # Our HLC only grows: a name after the one just written is not ours (planted by whoever
    # writes the bucket); counted among "the newest", it would make us delete ours.
    ours = [o.key for o in s.remote.list(snapshots_of(s.me)) if snapshot_of(o.key) <= key]
    for old in protocol.snapshots_to_delete(ours, keep):
        s.remote.delete(old)
    return {"key": key, "written": True, "bytes": size, "parts": len(parts),
            "ops": sum(vv.values()), "vv": vv}  # fmt: skip


def _write_parts(
    s: Session, key: str, stream: Iterator[tuple[str, Iterable[tuple[bytes, bytes]]]]
) -> tuple[list[Entry], str]:
    """Cut ``stream`` into parts and put each (sealing and uploading one while the next is
    read); returns the manifest's part entries and the state digest."""
    digest = s.local.state_digest()
    entries: list[Entry] = []
    pending: deque[Future[Entry]] = deque()

    def seal(n: int, name: str, kv: list[bytes], raw: int) -> Entry:
        pkey = snapshot_part_key(key, n)
        payload = {"snapshot": key, "n": n, "db": name, "kv": kv}
        data = encode(Kind.SNAPSHOT_PART, payload, object_key=pkey, key=s.key, level=PART_LEVEL)
        if not s.remote.put_if_absent(pkey, data):
            # Our names are fresh (a new HLC): whatever holds it is foreign, not ours
            s.remote.put(pkey, data)
        return {"db": name, "rows": len(kv) // 2, "raw": raw, "bytes": len(data),
                "hash": _hash(data), "first": kv[0], "last": kv[-2]}  # fmt: skip

    with ThreadPoolExecutor(1, thread_name_prefix="snapshot-put") as pool:

        def flush(name: str, kv: list[bytes], raw: int) -> None:
            while len(pending) >= 2:  # bounded: at most two parts in memory besides this one
                entries.append(pending.popleft().result())
            pending.append(pool.submit(seal, len(entries) + len(pending), name, kv, raw))

        for name, pairs in stream:
            kv: list[bytes] = []
            raw = 0
            for k, v in pairs:
                kv += (k, v)
                raw += len(k) + len(v)
                if raw >= PART_BYTES:
                    digest.feed(name, zip(kv[::2], kv[1::2], strict=True))
                    flush(name, kv, raw)
                    kv, raw = [], 0
            digest.feed(name, zip(kv[::2], kv[1::2], strict=True))
            if kv:
                flush(name, kv, raw)
        while pending:
            entries.append(pending.popleft().result())
    return entries, digest.hexdigest()


def join(s: Session, hbs: dict[str, dict[str, Any]], out: Outcome) -> None:
    """An empty data dir starts from the most complete snapshot it can read: the parts of a
    manifest streamed into one write transaction (nothing is written unless every part
    verifies and the state matches the digest); an older one-object snapshot loaded whole.
    ``out.snapshot`` names the one loaded (None: the caller replays segments)."""
    for info in protocol.announced_snapshots(hbs):
        key = str(info.get("key"))
        try:
            manifest = _read(s, key)
            if "dbs" in manifest:
                _load_whole(s, key, manifest, out)
            else:
                _load_parts(s, key, manifest, out)
        except StoreError as exc:
            if not s.local.is_empty():  # a local write came first: replay segments instead
                log.info("%s not loaded: the data dir is no longer empty (%s)", key, exc)
                return
            unreadable(s, key, exc)
            continue
        except (SegmentError, RemoteNotFound, KeyError, TypeError, ValueError) as exc:
            unreadable(s, key, exc)
            continue
        s.health.rejected.pop(key, None)
        out.ops += sum(manifest["vv"].values())
        out.objects += 1
        out.snapshot = key
        return


def _load_whole(s: Session, key: str, payload: dict[str, Any], out: Outcome) -> None:
    """A one-object snapshot (the format before parts): verified, then written at once."""
    dbs = _whole_dbs(s, key, payload)
    for sha in s.local.blobs_in(dbs):  # the blobs its live beads use
        if not s.local.has_blob(sha):
            objects.fetch_blob(s, sha, out)
    s.local.load(dbs)


def _load_parts(s: Session, key: str, manifest: dict[str, Any], out: Outcome) -> None:
    entries = _entries(key, manifest)

    def stream() -> Iterator[tuple[str, Iterable[tuple[bytes, bytes]]]]:
        digest = s.local.state_digest()
        blobs: set[str] = set()
        for entry, kv in _parts(s, key, entries):
            pairs = list(zip(kv[::2], kv[1::2], strict=True))
            digest.feed(entry["db"], pairs)
            if entry["db"] == "blobrefs":
                blobs.update(k.split(b"\0", 1)[0].decode() for k, _ in pairs)
            out.objects += 1
            out.bytes += entry["bytes"]
            yield entry["db"], pairs
        if digest.hexdigest() != manifest.get("digest"):
            raise SegmentError(f"{key}: state does not match its digest")
        for sha in sorted(blobs):  # the blobs its live beads use, before the commit
            if not s.local.has_blob(sha):
                objects.fetch_blob(s, sha, out)

    s.local.load_parts(stream, reserve=sum(e["raw"] for e in entries))


def fill(s: Session, replica: str, upto: int, hbs: dict[str, dict[str, Any]], out: Outcome) -> bool:
    """Replay the ops of ``replica`` up to ``upto`` (compacted away) from a snapshot holding
    them, for a non-empty store; False if no announced snapshot could. Of a snapshot in
    parts, only the parts of the op log whose key range holds ``replica`` are read."""
    for info in protocol.snapshots_covering(hbs, replica, upto):
        key = str(info.get("key"))
        try:
            ops = _ops_of(s, key, replica)
        except (SegmentError, RemoteNotFound, KeyError, TypeError, ValueError) as exc:
            unreadable(s, key, exc)
            continue
        have = s.local.version_vector().get(replica, 0)
        ops = [op for op in ops if op["seq"] > have]
        objects.fetch_blobs(s, ops, out)
        out.ops += s.local.apply(ops)
        out.objects += 1
        s.health.rejected.pop(key, None)
        return True
    return False


def _ops_of(s: Session, key: str, replica: str) -> list[dict[str, Any]]:
    manifest = _read(s, key)
    if "dbs" in manifest:
        return s.local.ops_in(manifest["dbs"], replica)
    prefix = replica.encode() + b"\0"
    entries = _entries(key, manifest)
    wanted = [
        e for e in entries
        if e["db"] == "ops" and e["first"][: len(prefix)] <= prefix <= e["last"][: len(prefix)]
    ]  # fmt: skip
    pairs: list[tuple[bytes, bytes]] = []
    for _, kv in _parts(s, key, entries, only=wanted):
        pairs += zip(kv[::2], kv[1::2], strict=True)
    return s.local.ops_in({"ops": pairs}, replica)


def unreadable(s: Session, key: str, exc: Exception) -> None:
    """Report an announced snapshot that could not be used. One that is gone while its writer
    has a newer one is no anomaly: the writer replaced it after the heartbeat we read
    announced it (a forget replaces snapshots at once), and its next heartbeat announces the
    new one. Anything else (damaged, forged, announced but never written) is rejected."""
    if isinstance(exc, RemoteNotFound) and "-" in key:
        with contextlib.suppress(ChrysalisError):
            listed = s.remote.list(key.rsplit("-", 1)[0] + "-")
            if any(is_snapshot_key(o.key) and o.key > key for o in listed):
                log.info("%s was replaced by a newer snapshot since it was announced", key)
                return
    s.health.rejected[key] = str(exc)


def read_verified(s: Session, key: str) -> dict[str, Any]:
    """Snapshot ``key``'s manifest (or whole payload), every part read back and verified and
    the state matching its digest; raises `SegmentError` or `RemoteNotFound` otherwise."""
    manifest = _read(s, key)
    if "dbs" in manifest:
        _whole_dbs(s, key, manifest)
        return manifest
    digest = s.local.state_digest()
    for entry, kv in _parts(s, key, _entries(key, manifest)):
        digest.feed(entry["db"], zip(kv[::2], kv[1::2], strict=True))
    if digest.hexdigest() != manifest.get("digest"):
        raise SegmentError(f"{key}: state does not match its digest")
    return manifest


# ---- reading --------------------------------------------------------------------------------


def _read(s: Session, key: str) -> dict[str, Any]:
    """The manifest (or a one-object snapshot's payload), authenticated; `SegmentError` if it
    is not one."""
    if not is_snapshot_key(key):
        raise SegmentError(f"{key}: not a snapshot's name")
    payload = decode(s.remote.get(key), kind=Kind.SNAPSHOT, object_key=key, key=s.key)
    if not isinstance(payload, dict) or not isinstance(payload.get("vv"), dict):
        raise SegmentError(f"{key}: not a snapshot payload")
    if not isinstance(payload.get("dbs"), dict) and not isinstance(payload.get("parts"), list):
        raise SegmentError(f"{key}: not a snapshot payload (neither parts nor databases)")
    return payload


def _whole_dbs(
    s: Session, key: str, payload: dict[str, Any]
) -> dict[str, list[tuple[bytes, bytes]]]:
    dbs = {name: [(bytes(k), bytes(v)) for k, v in rows] for name, rows in payload["dbs"].items()}
    if s.local.digest_of(dbs) != payload.get("digest"):
        raise SegmentError(f"{key}: state does not match its digest")
    return dbs


def _entries(key: str, manifest: dict[str, Any]) -> list[Entry]:
    """The manifest's part entries, checked for shape and order; `SegmentError` otherwise."""
    parts = manifest["parts"]
    if manifest.get("format") != FORMAT:
        raise SegmentError(f"{key}: snapshot format {manifest.get('format')!r}; this build "
                           f"reads {FORMAT}")  # fmt: skip
    if len(parts) > MAX_PARTS:
        raise SegmentError(f"{key}: names {len(parts):,} parts (at most {MAX_PARTS:,})")
    order = -1
    for n, e in enumerate(parts):
        ok = (
            isinstance(e, dict)
            and e.get("db") in SNAPSHOT_DBS
            and all(isinstance(e.get(f), int) and e[f] >= 0 for f in ("rows", "raw", "bytes"))
            and e["raw"] <= PART_INFLATED  # the joiner reserves map space for it up front
            and isinstance(e.get("hash"), str)
            and all(isinstance(e.get(f), bytes) for f in ("first", "last"))
        )
        if not ok:
            raise SegmentError(f"{key}: part {n} is not described as a part")
        at = SNAPSHOT_DBS.index(e["db"])
        if at < order:
            raise SegmentError(f"{key}: part {n} ({e['db']}) is out of database order")
        order = at
    return list(parts)


def _parts(
    s: Session, key: str, entries: Sequence[Entry], only: Sequence[Entry] | None = None
) -> Iterator[tuple[Entry, list[bytes]]]:
    """Each part of ``entries`` (or of ``only``, a subset) as ``(entry, [k0, v0, k1, ...])``, in
    order, each fetched and verified ahead by a worker thread; raises `SegmentError` (or
    `RemoteNotFound`) at the first that is not what the manifest says."""
    index = {id(e): n for n, e in enumerate(entries)}
    todo = [(index[id(e)], e) for e in (entries if only is None else only)]
    with ThreadPoolExecutor(2, thread_name_prefix="snapshot-get") as pool:
        ahead: deque[tuple[Entry, Future[list[bytes]]]] = deque()
        it = iter(todo)
        try:
            for n, e in it:
                ahead.append((e, pool.submit(_part, s, key, n, e)))
                if len(ahead) > PREFETCH:
                    break
            while ahead:
                e, fut = ahead.popleft()
                kv = fut.result()
                nxt = next(it, None)
                if nxt is not None:
                    ahead.append((nxt[1], pool.submit(_part, s, key, *nxt)))
                yield e, kv
        finally:
            for _, fut in ahead:
                fut.cancel()


def _part(s: Session, key: str, n: int, e: Entry) -> list[bytes]:
    """Part ``n`` of snapshot ``key``, checked against its manifest entry ``e``."""
    pkey = snapshot_part_key(key, n)
    data = s.remote.get(pkey)
    if len(data) != e["bytes"] or _hash(data) != e["hash"]:
        raise SegmentError(
            f"{pkey}: not the part its manifest names ({len(data):,} bytes; the manifest says "
            f"{e['bytes']:,} and another hash): replaced, truncated or from another snapshot"
        )
    payload = decode(
        data, kind=Kind.SNAPSHOT_PART, object_key=pkey, key=s.key, max_inflated=PART_INFLATED
    )
    kv = payload.get("kv") if isinstance(payload, dict) else None
    if (
        not isinstance(kv, list)
        or payload.get("snapshot") != key
        or payload.get("n") != n
        or payload.get("db") != e["db"]
    ):
        raise SegmentError(f"{pkey}: not part {n} ({e['db']}) of {key}")
    if len(kv) != 2 * e["rows"] or not kv or kv[0] != e["first"] or kv[-2] != e["last"]:
        raise SegmentError(f"{pkey}: holds other rows than its manifest says")
    if not all(type(x) is bytes for x in kv):
        raise SegmentError(f"{pkey}: a key or value is not bytes")
    if sum(map(len, kv)) != e["raw"]:
        raise SegmentError(f"{pkey}: holds other rows than its manifest says (not {e['raw']:,} "
                           "bytes of keys and values)")  # fmt: skip
    return kv


def _hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=32).hexdigest()
