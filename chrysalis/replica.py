"""`Replica`: one copy of a memory on one laptop, with everything that copy shares.

    Memory   the data dir (`chrysalis.memory`)
    engine   push and pull against its remote, under its sync key (`chrysalis.sync.Sync`)
    mirror   a service holding a copy it can search (Zep: `chrysalis.mirrors`)

A `Replica` answers what needs all three: `sync` (push, then pull, now), the forget receipt of
every place a forgotten bead was (this data dir, the other replicas, the remote's objects, the
mirror) and recall that asks the mirror when the local hits are weak. It starts no threads
beyond the `Memory`'s own: whoever hosts it schedules it (an embedded program calls `sync`
when it likes; the daemon runs it on timers, `chrysalisd.state.Daemon`).

Embedded::

    with Replica.open("~/agent-memory", remote="file:///mnt/shared/memory",
                      sync_key_file="~/.config/chrysalis/sync.key") as r:
        r.memory.append_bead("the user prefers tea")
        r.sync()
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from chrysalis.core.errors import ChrysalisError, Conflict
from chrysalis.core.models import Filters, RetrievalResult
from chrysalis.forget import receipt, scrub
from chrysalis.forget.receipt import ForgetReceipt, Place, State
from chrysalis.memory import Memory
from chrysalis.mirrors import Mirror, assisted_retrieve
from chrysalis.remotes import Remote
from chrysalis.search import above
from chrysalis.sync.protocol import BLOB_GRACE
from chrysalis.sync.segment import read_key_file

if TYPE_CHECKING:
    from chrysalis.sync import Sync

WEAK_BELOW = 0.5  # a best local hit under this score asks the mirror too
BUDGET_S = 0.4  # how long a recall waits for the mirror's hits


class Replica:
    """A `Memory` with its remote (`engine`, a `Sync`; None: no remote) and its `mirror`
    (None: none). Thread-safe as its parts are: a sync, a receipt and a recall may run at
    once. Closing it closes all three."""

    def __init__(
        self,
        memory: Memory,
        engine: Sync | None = None,
        mirror: Mirror | None = None,
        *,
        weak_below: float = WEAK_BELOW,
        budget_s: float = BUDGET_S,
    ) -> None:
        self.memory = memory
        self.engine = engine
        self.mirror = mirror
        self.weak_below = weak_below
        self.budget_s = budget_s
        # Called as each push starts (a host counting unpushed writes starts again from 0).
        self.on_push: Callable[[], None] | None = None

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        remote: str | Remote | None = None,
        sync_key_file: str | os.PathLike[str] | None = None,
        host: str | None = None,
        blob_grace: float = BLOB_GRACE,
        mirror: Callable[[Memory], Mirror] | None = None,
        weak_below: float = WEAK_BELOW,
        budget_s: float = BUDGET_S,
        **memory_options: Any,
    ) -> Replica:
        """Open the memory in ``path`` (`Memory.open`, given ``memory_options``) with its
        remote (a URL, ``file://`` or ``s3://``, or a `Remote`) and mirror (made from the
        opened memory by ``mirror``, e.g. ``lambda m: ZepMirror(m, url, key)``).

        ``sync_key_file`` holds the sync key: what is pushed is encrypted under it, and
        extracted entities are named under it from the start (`graph.EntityNames`); without
        one, the remote holds plaintext. It is read before anything is opened: a missing or
        bad file raises `SyncKeyError` and creates nothing. ``host`` names this laptop in
        its heartbeat (the host name by default); ``blob_grace`` is how long an unused blob
        stays in the remote. Nothing talks to the remote before the first `sync`.
        """
        secret = None
        if remote is not None and sync_key_file is not None:
            secret = read_key_file(sync_key_file)
            memory_options.setdefault("graph_secret", secret)
        memory = Memory.open(path, **memory_options)
        try:
            engine = None
            if remote is not None:
                from chrysalis.sync import Sync  # here: a replica without a remote never syncs

                engine = Sync(
                    memory, remote, key_file=sync_key_file, host=host, blob_grace=blob_grace
                )
            made = None if mirror is None else mirror(memory)
        except BaseException:
            memory.close()
            raise
        return cls(memory, engine, made, weak_below=weak_below, budget_s=budget_s)

    def close(self) -> None:
        if self.engine is not None:
            self.engine.close()
        if self.mirror is not None:
            self.mirror.close()
        self.memory.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object | TracebackType) -> None:
        self.close()

    # ---- sync ----------------------------------------------------------------------------------

    def push(self) -> dict[str, Any]:
        """Push this replica's new ops to the remote (`Sync.push`); `Conflict` without one."""
        engine = self._engine("push")
        if self.on_push is not None:
            self.on_push()
        return engine.push()

    def sync(
        self,
        push: bool = True,
        pull: bool = True,
        snapshot: bool = False,
        decommission: str | None = None,
        repair_format: bool = False,
    ) -> dict[str, Any]:
        """Push, then pull, now; what moved (or why not) for the remote and the mirror::

            {"ok": bool, "remote": {"url", "ok", "push", "pull", ...} | None,
             "mirrors": [{"kind", "ok", "push", "pull"}]}

        A step that fails is reported in its place (``{"ok": False, "error", "code"}``) and
        the others still run: one unreachable service never stops the rest. ``snapshot``
        takes a snapshot after the pull. ``decommission`` first retires another laptop's
        replica id (it stops gating compaction); ``repair_format`` first puts back the
        remote's deleted or rewritten ``format.json``. Raises `Conflict` when there is
        nothing to sync with, or a remote is needed and there is none."""
        if repair_format:
            self._engine("repairing format.json")
        if decommission is not None:
            self._engine("decommission").decommission(decommission)
        if self.engine is None and self.mirror is None:
            raise Conflict("nothing to sync with: this replica has no remote and no mirror")
        remote = None
        if self.engine is not None:
            engine = self.engine
            remote = _steps(
                {"url": engine.remote.url},
                [("repair_format", repair_format, engine.repair_format),
                 ("push", push, self.push), ("pull", pull, lambda: engine.pull(force=True)),
                 ("snapshot", snapshot, engine.snapshot)],
            )  # fmt: skip
        mirrors = []
        if self.mirror is not None:
            m = self.mirror
            mirrors.append(
                _steps({"kind": m.kind}, [("push", push, m.push), ("pull", pull, m.pull)])
            )
        ok = all(r["ok"] for r in [*([remote] if remote else []), *mirrors])
        return {"ok": ok, "remote": remote, "mirrors": mirrors}

    def _engine(self, what: str) -> Sync:
        if self.engine is None:
            raise Conflict(f"{what} needs a remote: open the replica with remote=URL")
        return self.engine

    def status(self) -> dict[str, Any]:
        """The remote's sync status (`Sync.status`; None without one) and each mirror's."""
        return {
            "remote": self.engine.status() if self.engine else None,
            "mirrors": [self.mirror.status()] if self.mirror else [],
        }

    # ---- recall --------------------------------------------------------------------------------

    def retrieve(
        self,
        query: str,
        k: int = 10,
        token_budget: int | None = None,
        strategy: str = "fusion",
        filters: Filters | Mapping[str, Any] | None = None,
        now: float | datetime | None = None,
        as_of: float | datetime | None = None,
        min_score: float | None = None,
    ) -> RetrievalResult:
        """`Memory.retrieve`, with the mirror's hits joining when the local ones are weak
        (best score under ``weak_below``, or fewer than ``k``) and they come within
        ``budget_s`` (`chrysalis.search.assisted`). A slow or failing mirror leaves the
        local result, with a note saying why. ``min_score`` leaves out items scoring under it."""
        found = assisted_retrieve(
            self.memory, self.mirror, query, k=k, token_budget=token_budget,
            strategy=strategy, filters=filters, weak_below=self.weak_below,
            budget_s=self.budget_s, now=now, as_of=as_of,
        )  # fmt: skip
        return above(found, min_score)

    # ---- forget receipts -----------------------------------------------------------------------

    def forget_receipt(self, bead_id: str) -> ForgetReceipt:
        """Where forgotten bead ``bead_id`` is gone and where it may remain: this data dir's
        places (`chrysalis.forget.scrub`), then every other replica the remote knows and the
        remote's segments, snapshots and blobs (`chrysalis.sync`), then the mirror.

        A source that cannot answer now (the remote unreachable, say) becomes an ``unknown``
        place naming why, never a failed receipt: a receipt is most wanted when something is
        down. Raises `NotFound` for a bead unknown here, `Conflict` for one not forgotten."""
        memory = self.memory
        record = scrub.record_of(memory, bead_id)
        places = scrub.local_places(memory, bead_id, record)
        if self.engine is not None:
            remote = self._remote_places(record)
            # Content that never left here (and no copy on the remote) reached no other laptop.
            kept = any(p.place == "remote" and p.state != "gone" for p in remote)
            unsent = record.get("adds", ()) if record.get("unpushed") and not kept else ()
            try:
                heartbeats = self.engine.heartbeats()
                places += receipt.replica_places(
                    record.get("by"), heartbeats, memory.replica_id, time.time(), unsent
                )
            except ChrysalisError as exc:
                places.append(
                    Place(place="replica", name="other replicas", state="unknown",
                          why=f"their heartbeats cannot be read now: {exc}")
                )  # fmt: skip
            places += remote
        if self.mirror is not None:
            state, why = self.mirror.forget_state(bead_id)
            places.append(
                Place.model_validate(
                    {"place": "zep", "name": self.mirror.kind, "state": state, "why": why}
                )
            )
        return receipt.receipt(memory.replica_id, bead_id, record, places)

    def _remote_places(self, record: Mapping[str, Any]) -> list[Place]:
        """The remote's segments, snapshots and blobs (`Sync.remote_places`) as places."""
        assert self.engine is not None
        ops = [(str(r), int(s)) for r, s in [*record.get("adds", ()), *record.get("vectors", ())]]
        by = record.get("by")
        found = self.engine.remote_places(
            ops, list(record.get("blobs", ())), (str(by[0]), int(by[1])) if by else None
        )
        places = []
        for group in ("segments", "snapshots", "blobs"):
            for key, where in sorted(found.get(group, {}).items()):
                state: State = _STATES.get(where["state"], "unknown")
                why = where.get("why") or _GONE_WHY[group]
                places.append(Place(place="remote", name=key, state=state, why=why))
        return places


_GONE_WHY = {
    "segments": "rewritten in erased form, or compacted away",
    "snapshots": "taken after the forget: it holds the erased form",
    "blobs": "deleted",
}
_STATES: dict[str, State] = {
    "gone": "gone", "remains": "pending", "in use by a live bead": "in use",
}  # fmt: skip


def _steps(report: dict[str, Any], steps: list[tuple[str, bool, Any]]) -> dict[str, Any]:
    """Run the wanted steps in order; each one's result, or its error, goes in the report."""
    report["ok"] = True
    for verb, wanted, run in steps:
        if not wanted:
            continue
        try:
            report[verb] = run()
        except ChrysalisError as exc:
            report[verb] = {"ok": False, "error": exc.message, "code": exc.code}
            report["ok"] = False
    return report
