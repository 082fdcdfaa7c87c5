"""``chrysalis demo``: two laptops, one shared folder, memories that meet.

Everything happens in a fresh temporary directory that is removed at the end, even on error:
two in-process memories ("laptop-a" and "laptop-b") sync through a ``file://`` remote folder
beside them. No network, no daemon, no configuration. Laptop A writes a short conversation
while B is offline, B writes a note of its own, both sync, and B recalls what only A wrote,
with its provenance; the two state digests must then be equal.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from chrysalis.core.errors import DemoFailed as DemoFailed  # re-exported: it lives in errors.py

REPLICAS = ("laptop-a", "laptop-b")
SESSION = "demo-atlas-planning"
MAX_ROUNDS = 4  # push/pull rounds before the demo gives up on converging

# What laptop A remembers while B is offline: a project, a preference, a fact.
A_WRITES: tuple[dict[str, Any], ...] = (
    {
        "id": "demo-a-1",
        "role": "user",
        "content": "We're moving the Atlas billing service from Postgres 13 to 16 "
        "over the weekend of 14 June.",
        "tags": ["project", "atlas"],
        "importance": 0.8,
    },
    {
        "id": "demo-a-2",
        "role": "assistant",
        "content": "Noted: the Atlas migration runs the weekend of 14 June. "
        "I'll keep the rollback checklist at hand.",
        "tags": ["project", "atlas"],
    },
    {
        "id": "demo-a-3",
        "role": "user",
        "content": "Preference: keep answers to short bullet lists, and never book "
        "meetings before 10am.",
        "tags": ["preference"],
        "importance": 0.9,
    },
    {
        "id": "demo-a-4",
        "role": "note",
        "content": "Fact: the Atlas staging cluster runs in the eu-west-1 region; "
        "its on-call rota is in PagerDuty under 'billing'.",
        "tags": ["fact", "atlas"],
        "importance": 0.7,
    },
)
# What laptop B writes on its own, before it ever synced.
B_WRITES: tuple[dict[str, Any], ...] = (
    {
        "id": "demo-b-1",
        "role": "note",
        "content": "Draft release notes for Atlas v2.3 are in docs/release-notes.md.",
        "tags": ["project", "atlas"],
    },
)
QUESTION = "Which region does the Atlas staging cluster run in?"


@contextlib.contextmanager
def _workdir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="chrysalis-demo-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _short(text: str, width: int = 120) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _ops(n: int) -> str:
    return f"{n} op" if n == 1 else f"{n} ops"


def run_demo(echo: Callable[[str], None] = print) -> dict[str, Any]:
    """Run the two-laptop story, telling it through ``echo``; returns what happened.

    The result has ``workdir`` (already removed), ``remote``, ``written`` (ids per replica),
    ``rounds`` (what each push and pull moved), ``recalled`` (the item laptop-b found, with
    its provenance), ``digests`` (equal), ``timings`` (seconds per step) and ``seconds``.
    Raises `DemoFailed` if the replicas do not converge or the recall misses.
    """
    # Imported here: the CLI imports this module without loading the storage engine.
    from chrysalis.memory import Memory
    from chrysalis.sync import Sync

    started = time.perf_counter()
    timings: dict[str, float] = {}
    mark = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal mark
        t = time.perf_counter()
        timings[name] = round(t - mark, 4)
        mark = t

    with _workdir() as root, contextlib.ExitStack() as stack:
        (root / "remote").mkdir()  # a file:// remote must exist (an unmounted drive is an error)
        remote = (root / "remote").as_uri()
        mems: dict[str, Memory] = {}
        syncs: dict[str, Sync] = {}
        for name in REPLICAS:
            mem = stack.enter_context(Memory.open(root / name, sync=False, replica_id=name))
            mems[name] = mem
            syncs[name] = Sync(mem, remote, host=name)
            stack.callback(syncs[name].close)
        a, b = mems["laptop-a"], mems["laptop-b"]
        echo(f"Two laptops, laptop-a and laptop-b, share a sync folder: {remote}")
        lap("open")

        echo("laptop-a remembers a short conversation while laptop-b is offline:")
        a.append_beads([{**row, "session_id": SESSION} for row in A_WRITES])
        for row in A_WRITES:
            echo(f"  a [{row['role']}] {_short(row['content'])}")
        echo("laptop-b, still offline, writes a note of its own:")
        b.append_beads(list(B_WRITES))
        for row in B_WRITES:
            echo(f"  b [{row['role']}] {_short(row['content'])}")
        lap("write")

        echo("Both come online and sync (push, then pull):")
        rounds: list[dict[str, Any]] = []
        for n in range(1, MAX_ROUNDS + 1):
            pushed = {name: int(syncs[name].push()["ops"]) for name in REPLICAS}
            pulled = {name: int(syncs[name].pull()["ops"]) for name in REPLICAS}
            rounds.append({"round": n, "pushed": pushed, "pulled": pulled})
            echo(
                f"  round {n}: "
                + ", ".join(f"{name} pushed {_ops(v)}" for name, v in pushed.items())
                + "; "
                + ", ".join(f"{name} pulled {_ops(v)}" for name, v in pulled.items())
            )
            if a.state_digest() == b.state_digest():
                break
        theirs = a.origin("bead", B_WRITES[0]["id"])
        echo(f"  laptop-a now holds laptop-b's note too (op {theirs.get('op')})")
        lap("sync")

        echo(f"laptop-b asks: {QUESTION!r}")
        b.wait_indexed(timeout=10)
        result = b.retrieve(QUESTION, k=3, filters={"kinds": ["bead"]})
        if not result.items:
            raise DemoFailed("laptop-b recalled nothing after sync")
        top = result.items[0]
        origin = top.provenance.get("origin_replica")
        echo(f"  recalled {top.id}: {_short(top.text)}")
        echo(
            f"  provenance: origin replica {origin}, op {top.provenance.get('op')} "
            f"(score {top.score:.2f})"
        )
        if origin != "laptop-a":
            raise DemoFailed(f"laptop-b's best answer came from {origin!r}, not laptop-a")
        lap("recall")

        digests = {name: mem.state_digest() for name, mem in mems.items()}
        for name, digest in digests.items():
            echo(f"  state digest of {name}: {digest}")
        if len(set(digests.values())) != 1:
            raise DemoFailed(f"the replicas did not converge after {len(rounds)} rounds")
        beads = {name: sum(1 for _ in mem.all_beads()) for name, mem in mems.items()}
        echo(
            f"Converged: both laptops hold the same {beads['laptop-a']} memories "
            "and the same state digest."
        )
        lap("verify")
        recalled = {
            "id": top.id,
            "kind": top.kind,
            "text": top.text,
            "score": top.score,
            "provenance": dict(top.provenance),
        }
    timings["cleanup"] = round(time.perf_counter() - mark, 4)
    return {
        "workdir": str(root),
        "remote": remote,
        "written": {
            "laptop-a": [row["id"] for row in A_WRITES],
            "laptop-b": [row["id"] for row in B_WRITES],
        },
        "rounds": rounds,
        "beads": beads,
        "recalled": recalled,
        "digests": digests,
        "timings": timings,
        "seconds": round(time.perf_counter() - started, 4),
    }
