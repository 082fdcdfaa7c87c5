"""The protocol's decisions, as pure functions: no I/O, no Memory, no Remote.

Each takes what was read (heartbeats, segment lists, version vectors, ops) and says what to do;
push.py, pull.py, snapshots.py and compaction.py do the reading and writing around them.
docs/sync-protocol.md gives the rules these implement (section numbers below are its own).
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chrysalis.core.errors import SegmentError
from chrysalis.core.models import OpKind
from chrysalis.sync.layout import is_snapshot_key, snapshot_of

Op = dict[str, Any]
Heartbeats = Mapping[str, Mapping[str, Any]]  # replica -> its heartbeat

SEGMENT_OPS = 4096  # ops per segment at most
SEGMENT_BYTES = 4 << 20  # and about this many bytes of ops
KEEP_SNAPSHOTS = 2  # of our own snapshots, the newest this many stay
HEARTBEAT_EVERY = 3600.0  # an idle replica still says it is alive this often


# ---- push (§6) -------------------------------------------------------------------------------


def owned(me: str, lineage: Sequence[Mapping[str, Any]]) -> list[tuple[str, int | None]]:
    """Whose ops we push, as ``(replica, upto)``: ours (no bound), and those of the ids this
    data dir was before a new generation, up to where it held them when it was copied (§8)."""
    return [(me, None)] + [(g["replica"], g["upto"]) for g in lineage]


def unpushed(last: int, upto: int | None, pushed: int) -> bool:
    """Does a replica we push hold ops (up to ``upto``) past what the remote confirmed?"""
    return min(last, upto if upto is not None else last) > pushed


def cut_segment(
    ops: Sequence[Op],
    *,
    upto: int | None,
    size: Callable[[Op], int],
    max_ops: int = SEGMENT_OPS,
    max_bytes: int = SEGMENT_BYTES,
) -> list[Op]:
    """The next segment from ``ops`` (the ops after the cursor, in seq order): a prefix of at
    most ``max_ops`` ops, none past ``upto``, and no more than ``max_bytes`` by ``size`` unless
    its first op alone is larger. Empty when nothing is left to push."""
    cut = [op for op in ops[:max_ops] if upto is None or op["seq"] <= upto]
    total = 0
    for i, op in enumerate(cut):
        total += size(op)
        if total > max_bytes and i:
            return cut[:i]
    return cut


def segment_payload(replica: str, ops: Sequence[Op]) -> dict[str, Any]:
    """What a segment object holds: ``replica``'s consecutive ``ops``."""
    return {"replica": replica, "first": ops[0]["seq"], "last": ops[-1]["seq"], "ops": list(ops)}


@dataclass(frozen=True)
class Landed:
    """The object under our segment's name holds our ops (an earlier attempt): ``last`` is
    pushed."""

    last: int


@dataclass(frozen=True)
class Clone:
    """Another copy of this data dir pushed as us."""

    detail: str


@dataclass(frozen=True)
class Retired:
    """Our replica id was decommissioned: we push no more."""

    why: str


def judge_taken(
    key: str,
    replica: str,
    ours: Sequence[Op],
    theirs: Sequence[Op],
    *,
    own: bool,
    same: Callable[[Op, Op], bool],
) -> Landed | Clone:
    """Our segment's name ``key`` is taken by ``theirs`` (§6 step 6): by our own earlier put
    (its reply lost, or a crash before the cursor moved), or by a clone.

    Landed if every op of theirs that we also hold is ``same`` as ours (equal, or equal but
    erased); Clone if one differs, or if ``own`` (our own id) and it holds an op we never
    wrote. A lineage id (not ``own``) may hold more: the original went on past our fork."""
    mine = {op["seq"]: op for op in ours}
    for op in theirs:
        if op["seq"] not in mine:
            if own:
                return Clone(f"{key} holds op {replica}:{op['seq']}, which we never wrote")
            break
        if not same(mine[op["seq"]], op):
            return Clone(f"{key} holds other content for op {replica}:{op['seq']}")
    return Landed(min(int(theirs[-1]["seq"]), int(ours[-1]["seq"])))


@dataclass(frozen=True)
class Forged:
    """Our heartbeat claims what this data dir's durable state contradicts: not ours."""

    detail: str


def judge_own_heartbeat(
    hb: Mapping[str, Any] | None, me: str, pushed: int, *, beyond: bool = True
) -> Retired | Clone | Forged | None:
    """Our heartbeat as the remote has it (None: none, or unreadable) against our cursor
    ``pushed`` (§6 step 2): None means push may go on. ``beyond``: a segment of ours starts
    past our cursor. A claim of more pushed than we did is a clone's only when such a segment
    backs it; a bare claim contradicts our cursor: the whole heartbeat is Forged (a bucket
    writer's; its other claims, a decommission included, are not acted on)."""
    if hb is None:
        return None
    announced = int(hb.get("pushed", 0))
    if announced > pushed and not beyond:
        return Forged(
            f"it claims we pushed up to {announced} but we pushed {pushed} and no segment of "
            "ours lies past that: not written by us; ignored and rewritten"
        )
    if hb.get("decommissioned"):
        return Retired(
            f"replica {me} was decommissioned by {hb.get('by')}; it no longer pushes "
            "(move this data dir aside and start a new one to rejoin)"
        )
    if announced > pushed:
        return Clone(
            f"the remote says replica {me} pushed up to {announced} but this data dir "
            f"pushed only {pushed}"
        )
    return None


def clone_message(detail: str, me: str) -> str:
    return (
        f"clone detected: {detail}; another copy of this data dir writes as "
        f"{me}. Push stopped; nothing of this copy was published past "
        "the fork. Keep one copy and move the other aside."
    )


def op_blob(op: Mapping[str, Any]) -> Any:
    """The blob reference a ``bead.add`` op carries (``{sha256, ...}``), else None."""
    return op["data"].get("blob") if op["kind"] == OpKind.BEAD_ADD else None


# ---- pull (§7) -------------------------------------------------------------------------------


def check_segment(payload: Any, key: str, replica: str, first: int) -> list[Op]:
    """The ops of a decoded segment named ``key``; SegmentError unless they are ``replica``'s
    consecutive ops from ``first`` (its name's) to its ``last``."""
    try:
        ops = payload["ops"]
        ok = (
            payload["replica"] == replica
            and payload["first"] == first
            and isinstance(ops, list)
            and len(ops) > 0
            and payload["last"] == first + len(ops) - 1
            and all(
                isinstance(op, dict) and op.get("replica") == replica and op.get("seq") == first + i
                for i, op in enumerate(ops)
            )
        )
    except (TypeError, KeyError):
        ok = False
    if not ok:
        raise SegmentError(f"{key}: its ops are not {replica}'s consecutive ops from {first}")
    return ops  # type: ignore[no-any-return]


def up_to_date(firsts: Sequence[int], *, pushed: int, have: int) -> bool:
    """Nothing to read of a replica whose segments start at ``firsts`` (sorted; none if every
    one is gone): its heartbeat is current (no segment starts past its ``pushed``) and we hold
    all it pushed."""
    return (not firsts or firsts[-1] <= pushed) and pushed <= have


def gap(firsts: Sequence[int], have: int) -> tuple[int, int] | None:
    """The seqs ``(first, last)`` compacted away before we held them (the oldest segment
    starts past ``have + 1``), or None: segments alone cannot fill that hole."""
    return (have + 1, firsts[0] - 1) if firsts[0] > have + 1 else None


def hole_before(first: int, have: int) -> tuple[int, int] | None:
    """The seqs ``(from, to)`` missing between what we hold (``have``) and the next segment
    we can read (starting at ``first``), or None if it continues our run. Segments of one
    replica are contiguous (§6), so a hole means a segment was deleted or never landed."""
    return (have + 1, first - 1) if first > have + 1 else None


def republish_range(
    firsts: Sequence[int], reported: tuple[int, int], pushed: int
) -> tuple[int, int] | None:
    """What of a hole a peer ``reported`` in our own run we should put again, given our
    segments as listed (``firsts``, sorted) and our cursor ``pushed``: from its start up to
    the next segment that exists (never past our cursor), or None if a segment starts there
    (the report is stale or forged: nothing is missing)."""
    start, end = reported
    if start < 1 or start > pushed or start in firsts:
        return None
    later = [f for f in firsts if f > start]
    end = min(end, pushed, (later[0] - 1) if later else pushed)
    return (start, end) if end >= start else None


def recheck_range(
    firsts: Sequence[int], reported: tuple[int, int], pushed: int
) -> tuple[int, int] | None:
    """A peer reported a hole that starts where one of our segments does: that segment is
    there but unreadable to them (damaged, replayed or swapped by someone who can write to the
    bucket). Its span ``(first, last)`` to read back, verify, and replace with ours if it is
    not ours; None when no segment of ours starts there or it lies past our cursor."""
    start = reported[0]
    if start < 1 or start > pushed or start not in firsts:
        return None
    later = [f for f in firsts if f > start]
    return (start, (later[0] - 1) if later else pushed)


def read_from(firsts: Sequence[int], have: int) -> int:
    """The index of the segment holding ``have + 1`` (the oldest if none starts before it)."""
    return max(0, bisect.bisect_right(firsts, have + 1) - 1)


def held(firsts: Sequence[int], i: int, have: int, pushed: int = 0) -> bool:
    """Is every op of segment ``i`` already here? (Its successor starts by ``have + 1``; the
    last one's end is what its writer's heartbeat says it ``pushed``: a lie there hides no more
    than deleting the segment would.)"""
    if i + 1 < len(firsts):
        return firsts[i + 1] <= have + 1
    return firsts[i] <= pushed <= have


def idle(marker: bytes | None, seen: bytes | None, *, force: bool) -> bool:
    """Nobody pushed since our last complete pull: the ``changed`` token is as we saw it."""
    return not force and marker is not None and marker == seen


def heartbeat_due(now: float, last: float, every: float = HEARTBEAT_EVERY) -> bool:
    """An idle replica's heartbeat is older than ``every`` (monotonic seconds)."""
    return now - last > every


# ---- snapshots (§10) -------------------------------------------------------------------------


def announced_snapshots(hbs: Heartbeats) -> list[dict[str, Any]]:
    """The snapshots heartbeats announce, the most complete (highest vv sum) first."""
    found = [hb["snapshot"] for hb in hbs.values() if isinstance(hb.get("snapshot"), dict)]
    return sorted(found, key=lambda s: -sum(s.get("vv", {}).values()))


def snapshots_covering(hbs: Heartbeats, replica: str, upto: int) -> list[dict[str, Any]]:
    """The announced snapshots holding ``replica``'s ops up to ``upto``, most complete first."""
    return [s for s in announced_snapshots(hbs) if s.get("vv", {}).get(replica, 0) >= upto]


def snapshot_current(last: Mapping[str, Any] | None, vv: Mapping[str, int]) -> bool:
    """Our last snapshot (``{key, vv, bytes}``) already holds exactly ``vv``."""
    return bool(last and last["vv"] == vv)


def snapshots_to_delete(ours: Sequence[str], keep: int = KEEP_SNAPSHOTS) -> list[str]:
    """Of our snapshot objects' keys (manifests and parts, sorted), what goes: every manifest
    but the newest ``keep``, then every part no kept manifest names (an older snapshot's, or a
    publish cut short before its manifest). Manifests first: a reader never finds a manifest
    whose parts were deleted before it, only (racing) one that is itself gone."""
    manifests = [k for k in ours if is_snapshot_key(k)]
    kept = set(manifests[-keep:]) if keep > 0 else set()
    gone = [k for k in manifests if k not in kept]
    return gone + [k for k in ours if not is_snapshot_key(k) and snapshot_of(k) not in kept]


# ---- compaction (§11) ------------------------------------------------------------------------


def implausible_claims(hbs: Heartbeats, me: str, written: int) -> list[str]:
    """The replicas whose heartbeat says it applied more of our ops than the ``written`` we
    ever wrote: a lie (a bucket writer's edit), which must not let compaction delete what
    that replica lacks."""
    return sorted(r for r, hb in hbs.items() if r != me and _seq(hb.get("vv"), me) > written)


def _seq(vv: Any, replica: str) -> int:
    try:
        return int(vv.get(replica, 0))
    except (AttributeError, TypeError, ValueError):
        return 0


def compaction_floors(
    hbs: Heartbeats, me: str, covered: Mapping[str, int] | None = None
) -> dict[str, int] | None:
    """For each replica whose segments we may delete (ours and decommissioned ones, sorted):
    the highest seq every live replica has applied and some snapshot covers. ``covered``: the
    version vector of a snapshot compaction read back and verified (else the heartbeats'
    announced ones, as claimed). None while the remote has no live heartbeat of ours (we would
    not gate our own compaction)."""
    live = [hb for hb in hbs.values() if not hb.get("decommissioned")]
    if not any(hb["replica"] == me for hb in live):
        return None
    if covered is None:
        covered = {}
        for info in announced_snapshots(hbs):
            for r, seq in info.get("vv", {}).items():
                covered[r] = max(covered.get(r, 0), int(seq))
    mine = {me} | {r for r, hb in hbs.items() if hb.get("decommissioned")}
    return {
        replica: min(
            [int(hb.get("vv", {}).get(replica, 0)) for hb in live] + [covered.get(replica, 0)]
        )
        for replica in sorted(mine)
    }


def compactable(segs: Sequence[tuple[int, str]], floor: int) -> list[str]:
    """Of one replica's segments ``(first, key)`` (sorted), those whose last op (the next
    one's first - 1) is at or below ``floor``. The newest always stays."""
    return [key for (_, key), (nxt, _) in itertools.pairwise(segs) if nxt - 1 <= floor]


# ---- forget in the remote (§15) ---------------------------------------------------------------

BLOB_GRACE = 3600.0  # a blob is deleted only when unreferenced and last put this long ago


def rewriter(replica: str, hbs: Heartbeats) -> str | None:
    """Who may rewrite ``replica``'s segments in erased form: the replica itself while it is
    not decommissioned (also when it is offline: nobody else writes its keys); once it is
    decommissioned, the live replica with the smallest id (one cleaner, so two never race
    on one segment). None when no live replica is known."""
    hb = hbs.get(replica)
    if hb is None or not hb.get("decommissioned"):
        return replica
    live = sorted(r for r, h in hbs.items() if not h.get("decommissioned"))
    return live[0] if live else None


def segment_index(firsts: Sequence[int], seq: int) -> int | None:
    """The index of the segment (by sorted ``firsts``) that would hold ``seq``; None below
    the oldest (compacted)."""
    i = bisect.bisect_right(firsts, seq) - 1
    return i if i >= 0 else None


def erase_in(
    remote: Sequence[Op], local: Mapping[int, Op | None], same: Callable[[Op, Op], bool]
) -> list[Op] | None:
    """A segment's ops with each op whose ``local`` copy (by seq) is erased replaced by that
    copy; an op already erased there stays erased. None when nothing changes."""
    out, changed = [], False
    for op in remote:
        mine = local.get(op["seq"])
        if (
            mine is not None
            and mine["data"].get("erased")
            and not op["data"].get("erased")
            and same(mine, op)
        ):
            out.append(mine)
            changed = True
        else:
            out.append(op)
    return out if changed else None


def covers(big: Mapping[str, int], small: Mapping[str, int]) -> bool:
    """Does version vector ``big`` hold every op ``small`` holds?"""
    return all(int(big.get(r, 0)) >= int(seq) for r, seq in small.items())


def blob_deletable(mtime: float | None, now: float, grace: float = BLOB_GRACE) -> bool:
    """May an unreferenced blob last put at ``mtime`` (the store's clock) go? Only when older
    than ``grace``: a pusher re-puts a blob before the segment naming it, so a fresh one may
    be about to be named (§15)."""
    return mtime is not None and now - mtime > grace


# ---- heartbeats and status (§9, §12) ---------------------------------------------------------


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _vv(v: Any) -> bool:
    return isinstance(v, dict) and all(isinstance(r, str) and _count(n) for r, n in v.items())


def heartbeat_flaw(hb: Mapping[str, Any]) -> str | None:
    """What makes a heartbeat unusable, or None. Pull, status, compaction and scrub do sums
    and comparisons on its counts: on a plaintext remote anyone can write words there (a
    pull then failed for ever), so a count must be a whole number >= 0, a version vector
    replica -> count, an announced snapshot a key and a version vector."""
    if "pushed" in hb and not _count(hb["pushed"]):
        return "its pushed is not a whole number >= 0"
    for name in ("vv", "scrubbed"):
        if hb.get(name) is not None and not _vv(hb[name]):
            return f"its {name} is not a version vector"
    snap = hb.get("snapshot")
    if snap is not None and not (
        isinstance(snap, dict) and isinstance(snap.get("key"), str) and _vv(snap.get("vv"))
    ):
        return "its snapshot is not a key and a version vector"
    if hb.get("time") is not None and not isinstance(hb["time"], int | float):
        return "its time is not a number"
    return None


def tombstone(hb: Mapping[str, Any], *, by: str, at: float) -> dict[str, Any]:
    """A decommissioned replica's heartbeat."""
    return {**hb, "decommissioned": True, "by": by, "at": at}


def peer_rows(peers: Heartbeats, me: str, vv: Mapping[str, int]) -> list[dict[str, Any]]:
    """Status rows for the other replicas' heartbeats, with their lag behind us."""
    return [
        {
            "replica": r,
            "host": hb.get("host"),
            "pushed": hb.get("pushed", 0),
            "applied_here": vv.get(r, 0),
            "lag": max(0, int(hb.get("pushed", 0)) - vv.get(r, 0)),
            "last_seen": hb.get("time"),
            "decommissioned": bool(hb.get("decommissioned")),
        }
        for r, hb in sorted(peers.items())
        if r != me
    ]
