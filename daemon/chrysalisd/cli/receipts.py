"""Printing a forget receipt, and waiting for it to settle (``chrysalis forget ID --wait``)."""

from __future__ import annotations

import time
from typing import Any

import click

from chrysalis.client import Client

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
