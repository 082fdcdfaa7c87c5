"""Printing forget receipts, and waiting for them to settle (``chrysalis forget ID --wait``,
``chrysalis forget --session S --wait``)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from ..words import counted

if TYPE_CHECKING:  # pydantic is not loaded for a client command
    from chrysalis.client import Client
    from chrysalis.forget.receipt import ForgetReceipt

from .common import F, print_json

WAIT_DEFAULT = 300.0  # seconds ``--wait`` without a number waits
POLL = 1.0  # seconds between two receipts while waiting
NOT_CLEAN = 3  # exit status when a place still holds the content (after --wait)

MARKS = {"gone": "✓", "pending": "…", "marked": "!", "in use": "=", "unknown": "?"}


def wait_option(f: F) -> F:
    return click.option(
        "--wait",
        "wait",
        type=float,
        is_flag=False,
        flag_value=WAIT_DEFAULT,
        default=None,
        metavar="[SECONDS]",
        help=f"Wait until no place is pending (default {WAIT_DEFAULT:.0f} s); exit "
        f"{NOT_CLEAN} if some place still holds the content.",
    )(f)


def show_receipt(client: Client, bead_id: str, wait: float | None, as_json: bool) -> None:
    """Print the receipt (after waiting up to ``wait`` seconds for it to settle)."""
    receipt = client.forget_receipt(bead_id)
    if wait is not None:
        deadline = time.monotonic() + wait
        while not receipt.settled and time.monotonic() < deadline:
            time.sleep(POLL)
            receipt = client.forget_receipt(bead_id)
    if as_json:
        print_json(receipt.model_dump(mode="json"))
    else:
        click.echo(render(receipt.model_dump(mode="json")))
    if wait is not None and not receipt.clean:
        raise SystemExit(NOT_CLEAN)


def show_receipts(
    client: Client, bead_ids: Sequence[str], wait: float | None, as_json: bool
) -> None:
    """Print one combined receipt for the beads a forget by selector forgot (``--json``: the
    ids and every bead's receipt), after waiting up to ``wait`` seconds for all to settle;
    with ``wait``, exit `NOT_CLEAN` if some place still holds some bead's content."""
    receipts = {b: client.forget_receipt(b) for b in bead_ids}
    if wait is not None:
        deadline = time.monotonic() + wait
        while not all(r.settled for r in receipts.values()) and time.monotonic() < deadline:
            time.sleep(POLL)
            for b, r in receipts.items():
                if not r.settled:
                    receipts[b] = client.forget_receipt(b)
    if as_json:
        print_json(
            {"forgotten": len(bead_ids), "ids": list(bead_ids),
             "clean": all(r.clean for r in receipts.values()),
             "settled": all(r.settled for r in receipts.values()),
             "receipts": [r.model_dump(mode="json") for r in receipts.values()]}
        )  # fmt: skip
    else:
        click.echo(render_many(list(receipts.values())))
    if wait is not None and not all(r.clean for r in receipts.values()):
        raise SystemExit(NOT_CLEAN)


WORST = ("pending", "unknown", "marked", "in use", "gone")  # a place shows its worst state


def render_many(receipts: Sequence[ForgetReceipt]) -> str:
    """Several beads' receipts as one: a verdict, then one line per place with its worst
    state, how many beads are in each state there, and why for the worst."""
    n = len(receipts)
    if n == 0:
        return "forgot 0 beads"
    places: dict[tuple[str, str], list[Any]] = {}
    for r in receipts:
        for p in r.places:
            places.setdefault((p.place, p.name), []).append(p)
    worst = {k: min(ps, key=lambda p: WORST.index(p.state)) for k, ps in places.items()}
    if all(r.clean for r in receipts):
        verdict = "gone everywhere Chrysalis knows of"
    elif all(r.settled for r in receipts):
        verdict = "settled, but not gone everywhere (see below)"
    else:
        pending = [name for (_, name), p in worst.items() if p.state == "pending"]
        verdict = f"pending on {', '.join(pending)}"
    beads = counted(n, "bead")
    lines = [f"forgot {beads}; forget receipt (from {receipts[0].replica}): {verdict}"]
    width = max((len(name) for _, name in places), default=0)
    for (place, name), ps in places.items():
        counts = {s: sum(p.state == s for p in ps) for s in WORST}
        tally = ", ".join(f"{c} {s}" for s, c in counts.items() if c)
        p = worst[(place, name)]
        lines.append(f"  {MARKS.get(p.state, ' ')} {place:<7} {name:<{width}}  {tally}: {p.why}")
    return "\n".join(lines)


def render(receipt: dict[str, Any]) -> str:
    """The receipt as lines a person reads: a verdict, then one line per place."""
    places = receipt["places"]
    if receipt["clean"]:
        verdict = "gone everywhere Chrysalis knows of"
    elif receipt["settled"]:
        verdict = "settled, but not gone everywhere (see below)"
    else:
        pending = [p["name"] for p in places if p["state"] == "pending"]
        verdict = f"pending on {', '.join(pending)}"
    lines = [f"forget receipt for {receipt['bead_id']} (from {receipt['replica']}): {verdict}"]
    width = max((len(p["name"]) for p in places), default=0)
    for p in places:
        lines.append(
            f"  {MARKS.get(p['state'], ' ')} {p['place']:<7} {p['name']:<{width}}  "
            f"{p['state']}: {p['why']}"
        )
    return "\n".join(lines)
