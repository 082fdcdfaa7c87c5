"""What push, pull, snapshots and compaction share once the remote's format is read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chrysalis.remotes import Remote
from chrysalis.sync.local import Local


@dataclass
class Outcome:
    """What one push or pull did (kept for status)."""

    at: float | None = None
    ok: bool | None = None
    ops: int = 0
    objects: int = 0
    bytes: int = 0
    error: str | None = None
    snapshot: str | None = None  # a pull that joined: the snapshot it loaded (else segments)

    def as_dict(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "ok": self.ok,
            "ops": self.ops,
            "objects": self.objects,
            "bytes": self.bytes,
            "error": self.error,
            "snapshot": self.snapshot,
        }


@dataclass
class SyncHealth:
    last_push: Outcome = field(default_factory=Outcome)
    last_pull: Outcome = field(default_factory=Outcome)
    last_error: str | None = None
    consecutive_errors: int = 0
    stopped: str | None = None  # why push refuses to run (clone, decommissioned)
    retired: bool = False  # stopped because decommissioned (push raises Decommissioned)
    dropped: str | None = None  # why sync stopped for good: the memory was dropped (drop.py)
    rejected: dict[str, str] = field(default_factory=dict)  # object key -> why
    # replica -> {"from", "to", "why"}: ops missing from the remote that we cannot read yet
    gaps: dict[str, dict[str, Any]] = field(default_factory=dict)
    # object key -> what a bucket writer (no sync key) did to it, and what we did about it
    tampered: dict[str, str] = field(default_factory=dict)
    # (replica we push, from, to): holes in our own run that peers reported; push re-puts them
    republish: set[tuple[str, int, int]] = field(default_factory=set)
    # blob key -> why: a live bead names it but the remote lacks it (pull waits and retries)
    missing_blobs: dict[str, str] = field(default_factory=dict)
    # blobs (sha256) a peer's heartbeat says it misses: push puts them again if a live bead
    # here uses them (a deletion that raced a push, §15)
    reput_blobs: set[str] = field(default_factory=set)
    scrub_error: str | None = None  # the last failure of the remote's forget to-do (scrub.py)


@dataclass
class Session:
    """One memory bound to one opened remote."""

    remote: Remote
    local: Local
    format: dict[str, Any]  # format.json as read
    key: bytes | None  # the data key; None for a plaintext remote
    health: SyncHealth

    @property
    def fid(self) -> str:
        """The remote's id: our cursors are kept under it."""
        return str(self.format["id"])

    @property
    def me(self) -> str:
        return self.local.replica_id

    def pushed(self, replica: str | None = None) -> int:
        """The last seq of ``replica`` (ours by default) this remote confirmed."""
        return self.local.pushed(self.fid, replica or self.me)

    def announced(self) -> int:
        """Our cursor as of the last ``changed`` marker we wrote (durable, in LMDB)."""
        return self.local.announced(self.fid)
