"""Snapshots: the replicated databases as one object, so a new laptop starts fast and a replica
that lacks compacted ops can replay them (docs/sync-protocol.md §10)."""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from chrysalis.core.errors import ChrysalisError, SegmentError
from chrysalis.remotes import RemoteNotFound
from chrysalis.sync import objects, protocol
from chrysalis.sync.heartbeats import Heartbeats
from chrysalis.sync.layout import snapshot_key, snapshots_of
from chrysalis.sync.segment import Kind, decode, encode
from chrysalis.sync.session import Outcome, Session

log = logging.getLogger(__name__)


def publish(
    s: Session, heartbeats: Heartbeats, *, force: bool = False, keep: int = protocol.KEEP_SNAPSHOTS
) -> dict[str, Any]:
    """Write a snapshot of our state unless our last one holds it already (``force``: write
    one anyway, e.g. after a forget erased ops without changing our version vector); announce
    it in our heartbeat and delete our older ones but the newest ``keep``. The caller pushes
    first: every blob and op it names must be in the remote before it."""
    last = s.local.last_snapshot(s.fid)
    vv, dbs, digest = s.local.dump_unless(
        lambda vv: not force and protocol.snapshot_current(last, vv)
    )
    if dbs is None:
        assert last is not None
        return {"key": last["key"], "written": False}
    hlc = s.local.hlc_now()
    key = snapshot_key(s.me, hlc)
    payload = {"replica": s.me, "hlc": hlc, "vv": vv, "digest": digest, "dbs": dbs}
    data = encode(Kind.SNAPSHOT, payload, object_key=key, key=s.key)
    del dbs, payload
    s.remote.put_if_absent(key, data)
    s.local.set_last_snapshot(s.fid, {"key": key, "vv": vv, "bytes": len(data)})
    heartbeats.beat()
    ours = [o.key for o in s.remote.list(snapshots_of(s.me))]
    for old in protocol.snapshots_to_delete(ours, keep):
        s.remote.delete(old)
    return {"key": key, "written": True, "bytes": len(data), "ops": sum(vv.values()), "vv": vv}


def join(s: Session, hbs: dict[str, dict[str, Any]], out: Outcome) -> None:
    """An empty data dir starts from the most complete snapshot it can read, loaded whole."""
    for info in protocol.announced_snapshots(hbs):
        try:
            payload = _read(s, info["key"])
            dbs = {
                name: [(bytes(k), bytes(v)) for k, v in rows]
                for name, rows in payload["dbs"].items()
            }
            if s.local.digest_of(dbs) != payload.get("digest"):
                raise SegmentError(f"{info['key']}: state does not match its digest")
            for sha in s.local.blobs_in(dbs):  # the blobs its live beads use
                if not s.local.has_blob(sha):
                    objects.fetch_blob(s, sha, out)
            s.local.load(dbs)
        except (SegmentError, RemoteNotFound, KeyError, TypeError, ValueError) as exc:
            unreadable(s, info["key"], exc)
            continue
        s.health.rejected.pop(info["key"], None)
        out.ops += sum(payload["vv"].values())
        out.objects += 1
        return


def fill(s: Session, replica: str, upto: int, hbs: dict[str, dict[str, Any]], out: Outcome) -> bool:
    """Replay the ops of ``replica`` up to ``upto`` (compacted away) from a snapshot holding
    them, for a non-empty store; False if no announced snapshot could."""
    for info in protocol.snapshots_covering(hbs, replica, upto):
        try:
            payload = _read(s, info["key"])
        except (SegmentError, RemoteNotFound) as exc:
            unreadable(s, info["key"], exc)
            continue
        have = s.local.version_vector().get(replica, 0)
        ops = [op for op in s.local.ops_in(payload["dbs"], replica) if op["seq"] > have]
        objects.fetch_blobs(s, ops, out)
        out.ops += s.local.apply(ops)
        out.objects += 1
        s.health.rejected.pop(info["key"], None)
        return True
    return False


def unreadable(s: Session, key: str, exc: Exception) -> None:
    """Report an announced snapshot that could not be used. One that is gone while its writer
    has a newer one is no anomaly: the writer replaced it after the heartbeat we read
    announced it (a forget replaces snapshots at once), and its next heartbeat announces the
    new one. Anything else (damaged, forged, announced but never written) is rejected."""
    if isinstance(exc, RemoteNotFound) and "-" in key:
        with contextlib.suppress(ChrysalisError):
            if any(o.key > key for o in s.remote.list(key.rsplit("-", 1)[0] + "-")):
                log.info("%s was replaced by a newer snapshot since it was announced", key)
                return
    s.health.rejected[key] = str(exc)


def read_verified(s: Session, key: str) -> dict[str, Any]:
    """Snapshot ``key``, decoded and authenticated, its state matching its digest."""
    payload = _read(s, key)
    dbs = {name: [(bytes(k), bytes(v)) for k, v in rows] for name, rows in payload["dbs"].items()}
    if s.local.digest_of(dbs) != payload.get("digest"):
        raise SegmentError(f"{key}: state does not match its digest")
    return payload


def _read(s: Session, key: str) -> dict[str, Any]:
    payload = decode(s.remote.get(key), kind=Kind.SNAPSHOT, object_key=key, key=s.key)
    if not isinstance(payload, dict) or not isinstance(payload.get("dbs"), dict):
        raise SegmentError(f"{key}: not a snapshot payload")
    return payload
