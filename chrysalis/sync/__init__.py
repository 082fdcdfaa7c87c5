"""Replication through a `Remote`: push our ops, pull the others', converge by the CRDT rules.

The remote's layout (docs/sync-protocol.md has every detail):

    format.json                          format, id, created_at, encryption (salt, key check)
    replicas/<replica>.json              heartbeat: host, generation, pushed, vv, snapshot, time
    ops/<replica>/<first:016x>.seg       consecutive ops of one replica, written once
    snapshots/<replica>-<hlc:016x>.snap  the replicated databases + their version vector
    blobs/<sha256>                       large bead content, content-addressed
    changed                              a token rewritten after each push; idle pulls GET it

A replica writes only its own keys (and ``changed``). Push sends blobs, then each segment by a
create-only put, and moves its cursor (in LMDB) only after the remote confirmed. A segment's
name is its first seq, so a retried push after a crash meets its own earlier object under the
same name: the same ops mean it landed; other ops mean another copy of this data dir pushed
first (a clone), and push stops. Pull reads segments past what we hold, verifies each (checksum,
authentication, replica and seq run), and applies it; a rejected segment stops only its replica.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import json
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn

from ..errors import ChrysalisError, DotConflict, InvalidInput, SegmentError, SyncKeyError
from ..errors import CloneDetected as CloneDetected  # re-exported: they live in errors.py
from ..errors import Decommissioned as Decommissioned
from ..faults import fault as _fault
from ..remotes import Remote, RemoteNotFound, open_remote
from ..segment import Kind, decode, derive_key, encode, read_key_file
from ..store import pack, same_op, unpack

if TYPE_CHECKING:
    from ..memory import Memory

log = logging.getLogger(__name__)

FORMAT = 1
SEGMENT_OPS = 4096  # ops per segment at most
SEGMENT_BYTES = 4 << 20  # and about this many bytes of ops
APPLY_BATCH = 4096
KEEP_SNAPSHOTS = 2
HEARTBEAT_EVERY = 3600.0  # an idle replica still says it is alive this often


def seg_key(replica: str, first: int) -> str:
    return f"ops/{replica}/{first:016x}.seg"


def _now() -> float:
    return time.time()


@dataclass
class Outcome:
    """What one push or pull did (kept for status)."""

    at: float | None = None
    ok: bool | None = None
    ops: int = 0
    objects: int = 0
    bytes: int = 0
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "ok": self.ok,
            "ops": self.ops,
            "objects": self.objects,
            "bytes": self.bytes,
            "error": self.error,
        }


@dataclass
class _Health:
    last_push: Outcome = field(default_factory=Outcome)
    last_pull: Outcome = field(default_factory=Outcome)
    last_error: str | None = None
    consecutive_errors: int = 0
    stopped: str | None = None  # why push refuses to run (clone, decommissioned)
    rejected: dict[str, str] = field(default_factory=dict)  # segment key -> why
    gaps: dict[str, str] = field(default_factory=dict)  # replica -> what is missing


class Sync:
    """Push and pull one memory against one remote. Thread-safe: a push and a pull may run at
    once; two pushes (or two pulls) take turns."""

    def __init__(
        self,
        memory: Memory,
        remote: Remote | str,
        *,
        key_file: str | os.PathLike[str] | None = None,
        host: str | None = None,
        segment_ops: int = SEGMENT_OPS,
    ) -> None:
        self.memory = memory
        self.store = memory.store
        self.remote = open_remote(remote) if isinstance(remote, str) else remote
        self._secret = None if key_file is None else read_key_file(key_file)
        self.key: bytes | None = None
        self.host = host or socket.gethostname()
        self.segment_ops = segment_ops
        self.format: dict[str, Any] | None = None
        self.health = _Health()
        self.peers: dict[str, dict[str, Any]] = {}
        self._push_lock = threading.Lock()
        self._pull_lock = threading.Lock()
        self._hb_lock = threading.Lock()
        self._marker_seen: bytes | None = None
        self._identity_checked = False  # our heartbeat read once since start
        self._last_heartbeat = 0.0

    # ---- the remote's format -------------------------------------------------------------------

    def _open(self) -> dict[str, Any]:
        """Read (or create) ``format.json`` and settle the key; fail closed on any mismatch."""
        if self.format is not None:
            return self.format
        try:
            raw = self.remote.get("format.json")
        except RemoteNotFound:
            fmt: dict[str, Any] = {
                "format": FORMAT,
                "id": secrets.token_hex(8),
                "created_at": _now(),
                "created_by": self.store.replica_id,
                "encryption": None,
            }
            if self._secret is not None:
                salt = secrets.token_bytes(16)
                key = derive_key(self._secret, salt)
                check = encode(Kind.KEY_CHECK, "chrysalis", object_key="format.json", key=key)
                fmt["encryption"] = {
                    "cipher": "AES-256-GCM",
                    "kdf": "scrypt",
                    "salt": salt.hex(),
                    "check": check.hex(),
                }
            if not self.remote.put_if_absent("format.json", json.dumps(fmt).encode()):
                return self._open()  # another laptop made it first: use theirs
            raw = self.remote.get("format.json")
        try:
            fmt = json.loads(raw)
            version = fmt["format"]
        except (ValueError, KeyError, TypeError):
            raise SegmentError(f"{self.remote.url}: format.json is not valid") from None
        if version != FORMAT:
            raise SegmentError(
                f"{self.remote.url}: remote format {version}; this build reads {FORMAT}"
            )
        enc = fmt.get("encryption")
        if enc and self._secret is None:
            raise SyncKeyError(
                f"{self.remote.url} is encrypted: configure its sync key "
                "(--sync-key-file / CHRYSALIS_SYNC_KEY_FILE)"
            )
        if not enc and self._secret is not None:
            raise SyncKeyError(
                f"{self.remote.url} is not encrypted but a sync key is configured: refusing to "
                "exchange plaintext (use a new remote prefix for encrypted sync)"
            )
        if enc:
            assert self._secret is not None
            key = derive_key(self._secret, bytes.fromhex(enc["salt"]))
            try:
                decode(
                    bytes.fromhex(enc["check"]),
                    kind=Kind.KEY_CHECK,
                    object_key="format.json",
                    key=key,
                )
            except SegmentError:
                raise SyncKeyError(
                    f"the sync key is not the one {self.remote.url} was created with"
                ) from None
            self.key = key
        self.format = fmt
        return fmt

    def _cursor_name(self, replica: str) -> str:
        return f"sync:{self._open()['id']}:pushed:{replica}"

    def pushed(self, replica: str | None = None) -> int:
        return int(self.store.get_meta(self._cursor_name(replica or self.store.replica_id)) or 0)

    # ---- push ----------------------------------------------------------------------------------

    def push(self) -> dict[str, Any]:
        """Send our ops the remote lacks; returns what moved."""
        return self._run("push", self._push_lock, self._push)

    def _push(self, out: Outcome) -> bool:
        unannounced = self._announced() < self.pushed()
        if self._identity_checked and not unannounced and not self._waiting():
            return False  # nothing to send: an idle push costs no request
        self._check_identity()
        self._identity_checked = True
        for replica, upto in self._owned():
            self._push_replica(replica, upto, out)
        if out.objects or self._announced() < self.pushed():
            # Segments others have not been told of: also those of an earlier push that failed
            # (or was killed) after its segments and before this point.
            _fault("before-heartbeat")
            self.heartbeat()
            self.remote.put("changed", secrets.token_hex(8).encode())
            self.store.put_meta(self._announced_name(), self.pushed())
        return True

    def _run(self, what: str, lock: threading.Lock, step: Any) -> dict[str, Any]:
        """One push or pull: its outcome kept for status, errors counted; ``step(out)`` says
        whether it spoke to the remote (only that resets the error count)."""
        with lock:
            out = Outcome(at=_now())
            try:
                self._open()
                spoke = step(out)
            except Exception as exc:
                self._failed(out, exc)
                setattr(self.health, f"last_{what}", out)
                raise
            out.ok = True
            setattr(self.health, f"last_{what}", out)
            if spoke:
                self._succeeded()
            if out.ops:
                log.info(
                    "%s: %d ops in %d objects, %s", what, out.ops, out.objects, self.remote.url
                )
            return out.as_dict()

    def _announced_name(self) -> str:
        return f"sync:{self._open()['id']}:announced"

    def _announced(self) -> int:
        """Our cursor as of the last ``changed`` marker we wrote (durable, in LMDB)."""
        return int(self.store.get_meta(self._announced_name()) or 0)

    def _owned(self) -> list[tuple[str, int | None]]:
        """Whose ops we push: ours, and those of the ids this data dir was before a new
        generation, up to where it held them when it was copied."""
        lineage = self.store.get_meta("lineage") or []
        return [(self.store.replica_id, None)] + [(g["replica"], g["upto"]) for g in lineage]

    def _waiting(self) -> bool:
        """Are there ops of ours the remote has not confirmed? (No request.)"""
        with self.store.read() as txn:
            for replica, upto in self._owned():
                last = self.store._last_seq(txn, replica)
                if min(last, upto if upto is not None else last) > self.pushed(replica):
                    return True
        return False

    def _check_identity(self) -> int:
        """Read our heartbeat: stop if we were decommissioned or a clone pushed as us.
        Returns the ``pushed`` it announces (0 if none)."""
        if self.health.stopped:
            raise CloneDetected(self.health.stopped)
        me = self.store.replica_id
        try:
            hb = json.loads(self.remote.get(f"replicas/{me}.json"))
        except RemoteNotFound:
            return 0
        except ValueError:
            return 0  # a damaged heartbeat of ours is rewritten by this push
        if hb.get("decommissioned"):
            why = (
                f"replica {me} was decommissioned by {hb.get('by')}; it no longer pushes "
                "(move this data dir aside and start a new one to rejoin)"
            )
            self.health.stopped = why
            raise Decommissioned(why)
        announced = int(hb.get("pushed", 0))
        if announced > self.pushed(me):
            self._clone(
                f"the remote says replica {me} pushed up to {announced} but this data dir "
                f"pushed only {self.pushed(me)}"
            )
        return announced

    def _clone(self, detail: str) -> NoReturn:
        why = (
            f"clone detected: {detail}; another copy of this data dir writes as "
            f"{self.store.replica_id}. Push stopped; nothing of this copy was published past "
            "the fork. Keep one copy and move the other aside."
        )
        self.health.stopped = why
        raise CloneDetected(why)

    def _push_replica(self, replica: str, upto: int | None, out: Outcome) -> None:
        cursor = self.pushed(replica)
        while True:
            with self.store.read() as txn:
                ops = self.store.ops_range(txn, replica, cursor, self.segment_ops)
            if upto is not None:
                ops = [op for op in ops if op["seq"] <= upto]
            if not ops:
                return
            ops = _cap_bytes(ops)
            self._push_blobs(ops, out)
            first, last = ops[0]["seq"], ops[-1]["seq"]
            key = seg_key(replica, first)
            payload = {"replica": replica, "first": first, "last": last, "ops": ops}
            data = encode(Kind.SEGMENT, payload, object_key=key, key=self.key)
            if self.remote.put_if_absent(key, data):
                out.objects += 1
                out.bytes += len(data)
            else:
                last = self._landed(key, replica, ops, own=upto is None)
            _fault("after-segment-put")
            self.store.put_meta(self._cursor_name(replica), last)
            out.ops += last - cursor
            cursor = last

    def _landed(self, key: str, replica: str, ops: list[dict[str, Any]], *, own: bool) -> int:
        """Our segment's name is taken: by our own earlier put (its reply lost, or a crash
        before the cursor moved) or by a clone. Returns the last seq it holds."""
        theirs = self._read_segment(key, replica)
        mine = {op["seq"]: op for op in ops}
        for op in theirs:
            if op["seq"] not in mine:
                if own:
                    self._clone(f"{key} holds op {replica}:{op['seq']}, which we never wrote")
                break  # a lineage id: the original went on past our fork point
            if not same_op(mine[op["seq"]], op):
                self._clone(f"{key} holds other content for op {replica}:{op['seq']}")
        return min(int(theirs[-1]["seq"]), int(ops[-1]["seq"]))

    def _push_blobs(self, ops: list[dict[str, Any]], out: Outcome) -> None:
        for op in ops:
            blob = op["data"].get("blob") if op["kind"] == "bead.add" else None
            if not blob:
                continue
            sha = blob["sha256"]
            try:
                raw = self.store.blobs.get(sha)
            except ChrysalisError:
                continue  # forgotten meanwhile: the op we send is about to be erased too
            key = f"blobs/{sha}"
            data = encode(Kind.BLOB, raw, object_key=key, key=self.key)
            if self.remote.put_if_absent(key, data):
                out.objects += 1
                out.bytes += len(data)

    # ---- heartbeats ----------------------------------------------------------------------------

    def heartbeat(self) -> None:
        """Publish who we are and exactly which ops we hold (gates compaction)."""
        with self._hb_lock:
            me = self.store.replica_id
            hb = {
                "replica": me,
                "host": self.host,
                "generation": self.store.generation,
                "lineage": [g["replica"] for g in self.store.get_meta("lineage") or []],
                "pushed": self.pushed(me),
                "vv": self.memory.version_vector(),
                "snapshot": self.store.get_meta(f"sync:{self._open()['id']}:snapshot"),
                "time": _now(),
                "format": FORMAT,
            }
            self.remote.put(f"replicas/{me}.json", json.dumps(hb).encode())
            self._last_heartbeat = time.monotonic()

    def heartbeats(self) -> dict[str, dict[str, Any]]:
        """Every replica's heartbeat (unreadable ones are skipped and logged)."""
        out = {}
        for obj in self.remote.list("replicas/"):
            if not obj.key.endswith(".json"):
                continue
            try:
                hb = json.loads(self.remote.get(obj.key))
                out[str(hb["replica"])] = hb
            except RemoteNotFound:
                continue
            except (ValueError, KeyError, TypeError):
                log.warning("skipping unreadable heartbeat %s", obj.key)
        return out

    # ---- pull ----------------------------------------------------------------------------------

    def pull(self, *, force: bool = False) -> dict[str, Any]:
        """Apply the ops other replicas pushed that we lack; returns what moved.

        When nobody pushed since the last pull (the ``changed`` marker is as we saw it), this
        costs one small GET, unless ``force``.
        """
        return self._run("pull", self._pull_lock, lambda out: self._pull(out, force=force))

    def _pull(self, out: Outcome, *, force: bool) -> bool:
        try:
            marker: bytes | None = self.remote.get("changed")
        except RemoteNotFound:
            marker = None
        if not force and marker is not None and marker == self._marker_seen:
            if time.monotonic() - self._last_heartbeat > HEARTBEAT_EVERY:
                self.heartbeat()
            return True
        hbs = self.heartbeats()
        segments: dict[str, list[tuple[int, str]]] = {}
        for obj in self.remote.list("ops/"):
            parsed = _parse_seg_key(obj.key)
            if parsed:
                segments.setdefault(parsed[0], []).append((parsed[1], obj.key))
        if self.store.is_empty() and hbs:
            self._join_from_snapshot(hbs, out)
        me, complete = self.store.replica_id, True
        for replica, segs in sorted(segments.items()):
            if replica == me:
                continue
            complete &= self._pull_replica(replica, sorted(segs), hbs, out)
        self.peers = hbs
        if out.ops or time.monotonic() - self._last_heartbeat > HEARTBEAT_EVERY:
            self.heartbeat()
        if complete:
            self._marker_seen = marker  # else the next poll looks again
        return True

    def _pull_replica(
        self,
        replica: str,
        segs: list[tuple[int, str]],
        hbs: dict[str, dict[str, Any]],
        out: Outcome,
    ) -> bool:
        """Apply ``replica``'s segments past what we hold; False if something is left."""
        have = self.memory.version_vector().get(replica, 0)
        firsts = [f for f, _ in segs]
        pushed = int(hbs.get(replica, {}).get("pushed", 0))
        if firsts[-1] <= pushed <= have:
            return True  # its heartbeat is current (no segment past it) and we hold it all
        if firsts[0] > have + 1:
            # Compacted away: a snapshot that covers the hole fills it, or it waits.
            if not self._fill_from_snapshot(replica, firsts[0] - 1, hbs, out):
                self.health.gaps[replica] = (
                    f"ops {replica}:{have + 1}..{firsts[0] - 1} are compacted and no snapshot "
                    "covers them yet"
                )
                return False
            have = self.memory.version_vector().get(replica, 0)
        self.health.gaps.pop(replica, None)
        start = max(0, bisect.bisect_right(firsts, have + 1) - 1)
        for i in range(start, len(segs)):
            first, key = segs[i]
            if key in self.health.rejected:
                return False
            if i + 1 < len(segs) and firsts[i + 1] <= have + 1:
                continue  # every op in it is already here
            try:
                data = self.remote.get(key)
                ops = self._verify_segment(key, data, replica, first)
                self._fetch_blobs(ops, out)
                result = self._apply(ops)
            except (SegmentError, SyncKeyError, InvalidInput, DotConflict) as exc:
                self.health.rejected[key] = str(exc)
                log.error("rejected %s: %s", key, exc)
                return False
            except RemoteNotFound:
                return False  # compacted between list and get: the next pull sees why
            out.objects += 1
            out.bytes += len(data)
            out.ops += result
            have = max(have, ops[-1]["seq"])
        return True

    def _read_segment(self, key: str, replica: str) -> list[dict[str, Any]]:
        parsed = _parse_seg_key(key)
        assert parsed is not None
        return self._verify_segment(key, self.remote.get(key), replica, parsed[1])

    def _verify_segment(
        self, key: str, data: bytes, replica: str, first: int
    ) -> list[dict[str, Any]]:
        payload = decode(data, kind=Kind.SEGMENT, object_key=key, key=self.key)
        try:
            ops = payload["ops"]
            ok = (
                payload["replica"] == replica
                and payload["first"] == first
                and isinstance(ops, list)
                and len(ops) > 0
                and payload["last"] == first + len(ops) - 1
                and all(
                    isinstance(op, dict)
                    and op.get("replica") == replica
                    and op.get("seq") == first + i
                    for i, op in enumerate(ops)
                )
            )
        except (TypeError, KeyError):
            ok = False
        if not ok:
            raise SegmentError(f"{key}: its ops are not {replica}'s consecutive ops from {first}")
        return ops  # type: ignore[no-any-return]

    def _fetch_blobs(self, ops: list[dict[str, Any]], out: Outcome) -> None:
        for op in ops:
            blob = op["data"].get("blob") if op["kind"] == "bead.add" else None
            if (
                not blob
                or not isinstance(blob, dict)
                or self.store.blobs.has(blob.get("sha256", ""))
            ):
                continue
            key = f"blobs/{blob['sha256']}"
            data = self.remote.get(key)
            raw = decode(data, kind=Kind.BLOB, object_key=key, key=self.key)
            if not isinstance(raw, bytes) or self.store.blobs.put(raw) != blob["sha256"]:
                raise SegmentError(f"{key}: content does not match its name")
            out.objects += 1
            out.bytes += len(data)

    def _apply(self, ops: list[dict[str, Any]]) -> int:
        applied = 0
        for i in range(0, len(ops), APPLY_BATCH):
            applied += int(self.memory.apply_ops(ops[i : i + APPLY_BATCH]).applied)
        return applied

    # ---- snapshots -----------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """Publish the replicated databases as one object, so a new laptop starts fast.

        Pushes first (the snapshot's blobs and our ops must be in the remote before it); does
        nothing if nothing changed since our last snapshot.
        """
        self.push()
        fid = self._open()["id"]
        last = self.store.get_meta(f"sync:{fid}:snapshot")
        with self.store.read() as txn:
            vv = self.store.version_vector(txn)
            if last and last["vv"] == vv:
                return {"key": last["key"], "written": False}
            dbs = self.store.dump(txn)
            digest = self.store.state_digest(txn)
        hlc = self.store.clock.now()
        key = f"snapshots/{self.store.replica_id}-{hlc:016x}.snap"
        payload = {
            "replica": self.store.replica_id,
            "hlc": hlc,
            "vv": vv,
            "digest": digest,
            "dbs": dbs,
        }
        data = encode(Kind.SNAPSHOT, payload, object_key=key, key=self.key)
        del dbs, payload
        self.remote.put_if_absent(key, data)
        self.store.put_meta(f"sync:{fid}:snapshot", {"key": key, "vv": vv, "bytes": len(data)})
        self.heartbeat()
        for old in self.remote.list(f"snapshots/{self.store.replica_id}-")[:-KEEP_SNAPSHOTS]:
            self.remote.delete(old.key)
        return {"key": key, "written": True, "bytes": len(data), "ops": sum(vv.values())}

    def _snapshots(self, hbs: dict[str, dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """The snapshots heartbeats announce, the most complete first."""
        found = [hb["snapshot"] for hb in hbs.values() if isinstance(hb.get("snapshot"), dict)]
        yield from sorted(found, key=lambda s: -sum(s.get("vv", {}).values()))

    def _load_snapshot(self, info: dict[str, Any]) -> dict[str, Any]:
        key = info["key"]
        payload = decode(self.remote.get(key), kind=Kind.SNAPSHOT, object_key=key, key=self.key)
        if not isinstance(payload, dict) or not isinstance(payload.get("dbs"), dict):
            raise SegmentError(f"{key}: not a snapshot payload")
        return payload

    def _join_from_snapshot(self, hbs: dict[str, dict[str, Any]], out: Outcome) -> None:
        """An empty data dir starts from the most complete snapshot, loaded whole."""
        from ..store import digest_of

        for info in self._snapshots(hbs):
            try:
                payload = self._load_snapshot(info)
                dbs = {
                    name: [(bytes(k), bytes(v)) for k, v in rows]
                    for name, rows in payload["dbs"].items()
                }
                if digest_of(dbs) != payload.get("digest"):
                    raise SegmentError(f"{info['key']}: state does not match its digest")
                self._fetch_snapshot_blobs(dbs, out)
                self.store.load(dbs)
            except (SegmentError, RemoteNotFound, KeyError, TypeError, ValueError) as exc:
                self.health.rejected[info["key"]] = str(exc)
                continue
            out.ops += sum(payload["vv"].values())
            out.objects += 1
            return

    def _fetch_snapshot_blobs(
        self, dbs: dict[str, list[tuple[bytes, bytes]]], out: Outcome
    ) -> None:
        """The blobs the snapshot's live beads use (its ``blobrefs`` view names them)."""
        shas = sorted({k.split(b"\0", 1)[0].decode() for k, _ in dbs.get("blobrefs", ())})
        refs = [{"kind": "bead.add", "data": {"blob": {"sha256": sha}}} for sha in shas]
        self._fetch_blobs(refs, out)

    def _fill_from_snapshot(
        self, replica: str, upto: int, hbs: dict[str, dict[str, Any]], out: Outcome
    ) -> bool:
        """Replay a snapshot's ops of ``replica`` (the replay path, for a non-empty store)."""
        for info in self._snapshots(hbs):
            if info.get("vv", {}).get(replica, 0) < upto:
                continue
            try:
                payload = self._load_snapshot(info)
            except (SegmentError, RemoteNotFound) as exc:
                self.health.rejected[info["key"]] = str(exc)
                continue
            have = self.memory.version_vector()
            prefix = replica.encode() + b"\0"
            ops = [
                unpack(bytes(v))
                for k, v in payload["dbs"].get("ops", ())
                if bytes(k).startswith(prefix)
            ]
            ops = [op for op in ops if op["seq"] > have.get(replica, 0)]
            self._fetch_blobs(ops, out)
            out.ops += self._apply(ops)
            out.objects += 1
            return True
        return False

    # ---- compaction ------------------------------------------------------------------------------

    def compact(self) -> dict[str, Any]:
        """Delete segments every live replica holds and a snapshot covers (never by age)."""
        self._open()
        hbs = self.heartbeats()
        live = [hb for hb in hbs.values() if not hb.get("decommissioned")]
        if not any(hb["replica"] == self.store.replica_id for hb in live):
            return {"deleted": 0, "why": "no heartbeat of ours yet"}
        covered: dict[str, int] = {}
        for info in self._snapshots(hbs):
            for r, seq in info.get("vv", {}).items():
                covered[r] = max(covered.get(r, 0), int(seq))
        mine = {self.store.replica_id} | {r for r, hb in hbs.items() if hb.get("decommissioned")}
        deleted = 0
        for replica in sorted(mine):
            floor = min(
                [int(hb.get("vv", {}).get(replica, 0)) for hb in live] + [covered.get(replica, 0)]
            )
            segs = sorted(
                p for p in (_parse_seg_key(o.key) for o in self.remote.list(f"ops/{replica}/")) if p
            )
            for (_, _, key), (_, nxt, _) in itertools.pairwise(segs):
                if nxt - 1 <= floor:
                    self.remote.delete(key)
                    deleted += 1
        return {"deleted": deleted}

    def decommission(self, replica: str) -> dict[str, Any]:
        """Retire a laptop that will not come back: it stops gating compaction."""
        self._open()
        if replica == self.store.replica_id:
            raise InvalidInput("a replica cannot decommission itself; run this on another laptop")
        hbs = self.heartbeats()
        if replica not in hbs:
            raise InvalidInput(f"no replica {replica!r} in {self.remote.url}")
        tomb = {**hbs[replica], "decommissioned": True, "by": self.store.replica_id, "at": _now()}
        self.remote.put(f"replicas/{replica}.json", json.dumps(tomb).encode())
        return {"replica": replica, "decommissioned": True}

    # ---- status ----------------------------------------------------------------------------------

    def _failed(self, out: Outcome, exc: Exception) -> None:
        out.ok = False
        out.error = f"{type(exc).__name__}: {exc}"
        self.health.last_error = out.error
        self.health.consecutive_errors += 1

    def _succeeded(self) -> None:
        self.health.consecutive_errors = 0

    def status(self) -> dict[str, Any]:
        me = self.store.replica_id
        vv = self.memory.version_vector()
        try:
            pushed = self.pushed(me) if self.format else None
        except ChrysalisError:
            pushed = None
        h = self.health
        peers = []
        for r, hb in sorted(self.peers.items()):
            if r == me:
                continue
            peers.append(
                {
                    "replica": r,
                    "host": hb.get("host"),
                    "pushed": hb.get("pushed", 0),
                    "applied_here": vv.get(r, 0),
                    "lag": max(0, int(hb.get("pushed", 0)) - vv.get(r, 0)),
                    "last_seen": hb.get("time"),
                    "decommissioned": bool(hb.get("decommissioned")),
                }
            )
        return {
            "url": self.remote.url,
            "encrypted": self.key is not None,
            "replica": me,
            "pushed": pushed,
            "pending_ops": None if pushed is None else max(0, vv.get(me, 0) - pushed),
            "last_push": h.last_push.as_dict(),
            "last_pull": h.last_pull.as_dict(),
            "last_error": h.last_error,
            "consecutive_errors": h.consecutive_errors,
            "stopped": h.stopped,
            "rejected": [{"key": k, "error": v} for k, v in sorted(h.rejected.items())],
            "gaps": dict(h.gaps),
            "peers": peers,
            "requests": dict(self.remote.requests),
        }

    def close(self) -> None:
        self.remote.close()


def _cap_bytes(ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    total = 0
    for i, op in enumerate(ops):
        total += len(pack(op))
        if total > SEGMENT_BYTES and i:
            return ops[:i]
    return ops


def _parse_seg_key(key: str) -> tuple[str, int, str] | None:
    parts = key.split("/")
    if len(parts) != 3 or parts[0] != "ops" or not parts[2].endswith(".seg"):
        return None
    with contextlib.suppress(ValueError):
        return parts[1], int(parts[2][:-4], 16), key
    return None
