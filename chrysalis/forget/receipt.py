"""Forget receipts: where a forgotten bead's content is known gone, and where it may remain.
Pure: the models and the rules; the places come from `chrysalis.forget.scrub` (this data dir),
`chrysalis.sync` (other replicas, the remote) and `chrysalis.mirrors` (Zep).

A receipt lists places, each ``gone``, ``pending`` (it will go: who or what must act, and
when), ``marked`` (a service keeps it, marked forgotten: it cannot delete it), ``in use`` (the
same bytes are a live bead's content too: they stay for that bead) or ``unknown`` (we cannot
tell now: unreachable). Places:

- ``local``: this replica's files: LMDB (compacted by `chrysalis.forget.scrub`, which also lists
  these places), the keyword and vector indexes, the blob file, and the knowledge derived
  from the bead (`knowledge_place`: gone once no entity or fact cites it as evidence);
- ``replica``: every other replica the remote knows, from its heartbeat: has it applied the
  forget, and has its scrub covered it since;
- ``remote``: segments, snapshots and blobs (`chrysalis.sync.scrub`);
- ``zep``: the mirror (`chrysalis.mirrors`).

``clean`` says every place is gone; ``settled`` that nothing is pending (``--wait`` waits
for it).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

State = Literal["gone", "pending", "marked", "in use", "unknown"]


class Place(BaseModel):
    place: Literal["local", "replica", "remote", "zep"]
    name: str
    state: State
    why: str


class ForgetReceipt(BaseModel):
    bead_id: str
    replica: str  # the replica that wrote this receipt
    forgotten_at: float | None  # when this replica erased it
    by: str | None  # the forget op, ``replica:seq`` (None while only an erased copy came)
    clean: bool  # every place is gone
    settled: bool  # no place is pending
    places: list[Place]


def replica_places(
    by: Sequence[Any] | None,
    heartbeats: Mapping[str, Mapping[str, Any]],
    me: str,
    now: float,
    unsent: Sequence[Sequence[Any]] = (),
) -> list[Place]:
    """Every other replica the remote knows, from its heartbeat. ``unsent``: the ops that
    wrote the bead when its content never left this replica (forgotten before any remote
    confirmed them, and the remote holds no copy): a replica that has applied none of them
    never had it, so it is ``gone`` whatever it has applied of the forget."""
    places = []
    for replica, hb in sorted(heartbeats.items()):
        if replica == me:
            continue
        seen = f"last seen {ago(hb['time'], now)}" if hb.get("time") else "never seen"
        vv = hb.get("vv") or {}
        if hb.get("decommissioned"):
            state: State = "gone"
            why = "decommissioned: it writes nothing more, and the others clean up its objects"
        elif unsent and all(int(vv.get(r, 0)) < int(s) for r, s in unsent):
            state = "gone"
            why = f"never received it: this laptop forgot it before sending it ({seen})"
        elif by is None:
            state, why = "unknown", "the forget op itself has not reached this replica yet"
        elif int(vv.get(by[0], 0)) < int(by[1]):
            state, why = "pending", f"pending on {replica}: it has not applied the forget ({seen})"
        elif int((hb.get("scrubbed") or {}).get(by[0], 0)) < int(by[1]):
            state = "pending"
            why = f"{replica} applied the forget; its scrub has not reported yet ({seen})"
        else:
            state, why = "gone", f"applied the forget and scrubbed its files ({seen})"
        places.append(Place(place="replica", name=replica, state=state, why=why))
    return places


SHOWN = 5  # citing items named in a place's why


def knowledge_place(me: str, citing: Sequence[str], worker_error: str | None = None) -> Place:
    """The knowledge derived from a forgotten bead (DESIGN §13), from the present nodes and
    edges (``node:<id>`` / ``edge:<id>``) whose evidence still names it: ``gone`` when none
    does (what only it supported is retracted, the rest no longer cites it), else ``pending``
    on the knowledge worker, which retracts them."""
    name = f"{me}: knowledge"
    if not citing:
        why = "no entity, fact or summary cites it: what only it supported was retracted"
        return Place(place="local", name=name, state="gone", why=why)
    shown = ", ".join(citing[:SHOWN])
    if len(citing) > SHOWN:
        shown += f" and {len(citing) - SHOWN} more"
    n = len(citing)
    why = (
        f"{n} derived item{'s' if n != 1 else ''} still cite{'s' if n == 1 else ''} it "
        f"({shown}): the knowledge worker has not retracted them yet"
    )
    if worker_error:
        why += f" (its last error: {worker_error})"
    return Place(place="local", name=name, state="pending", why=why)


def receipt(
    replica: str, bead_id: str, record: Mapping[str, Any], places: list[Place]
) -> ForgetReceipt:
    """The receipt ``replica`` gives for ``bead_id`` from its forget record and places."""
    by = record.get("by")
    return ForgetReceipt(
        bead_id=bead_id,
        replica=replica,
        forgotten_at=record.get("at"),
        by=f"{by[0]}:{by[1]}" if by else None,
        clean=all(p.state == "gone" for p in places),
        settled=not any(p.state == "pending" for p in places),
        places=places,
    )


def ago(at: float, now: float | None = None) -> str:
    seconds = max(0.0, (now or time.time()) - float(at))
    if seconds < 90:
        return f"{seconds:.0f} s ago"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min ago"
    if seconds < 172800:
        return f"{seconds / 3600:.0f} h ago"
    return f"{seconds / 86400:.0f} days ago"
