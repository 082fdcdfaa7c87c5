"""``chrysalis secrets audit [--forget]``: credentials already stored, found and forgotten.

A memory written with ``secrets = "off"``, or before the scan knew a kind, may hold them.
The audit reads the memory's export over the socket and runs the same scan the write side
runs (`chrysalis.secrets.scan.scan_item`) on every item; it lists what it finds by bead (kinds
and fields, never the secret) and, with ``--forget``, forgets those beads and prints each
one's forget receipt. Nodes, edges, the persona and skills holding one are listed to be
edited or removed by hand: they have no forget.
"""

from __future__ import annotations

import json
from typing import Any

import click

from ..words import counted
from .common import client_for, print_json
from .receipts import show_receipt


@click.group()
def secrets() -> None:
    """Credentials in the memory: find those already stored, and forget them.

    \b
    Example:
      chrysalis secrets audit              # what is stored, by bead (never the secret)
      chrysalis secrets audit --forget     # forget those beads, with their receipts
    """


def audit_lines(lines: bytes) -> list[dict[str, Any]]:
    """Per item of an export that holds a credential: its kind, id and what was found
    (kind and field of each; never the secret)."""
    # Here, not with the CLI: compiling the detectors' patterns is ~30 ms of every start of
    # `chrysalis`, the daemon's included.
    from chrysalis.secrets.scan import describe, scan_item

    found = []
    for line in lines.splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        kind = record.get("kind")
        if kind not in ("bead", "node", "edge", "persona", "skill"):
            continue
        _, findings = scan_item(kind, record["item"], "redact")
        if findings:
            found.append(
                {
                    "kind": kind,
                    "id": record["item"].get("id"),
                    "found": [{"kind": f.kind, "field": f.field} for f in findings],
                    "what": describe(findings),
                }
            )
    return found


@secrets.command()
@click.option("--forget", "forget", is_flag=True, help="Forget the beads that hold one.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def audit(ctx: click.Context, forget: bool, as_json: bool) -> None:
    """List the stored items that hold a credential (by bead: the kinds and fields, never
    the secret); with --forget, forget those beads and print their forget receipts.

    \b
    Example:
      chrysalis secrets audit
      chrysalis secrets audit --forget --json
    """
    client = client_for(ctx)
    found = audit_lines(client.export())
    beads = [f for f in found if f["kind"] == "bead" and f["id"]]
    if as_json and not forget:
        print_json({"found": found})
        return
    if not as_json:
        if not found:
            click.echo("no stored credential found")
        for f in found:
            click.echo(f"{f['kind']} {f['id']}: {f['what']}")
    if not forget:
        return
    receipts = []
    for f in beads:
        client.forget(f["id"])
        if as_json:
            receipts.append(client.forget_receipt(f["id"]).model_dump(mode="json"))
        else:
            show_receipt(client, f["id"], None, False)
    if as_json:
        print_json({"found": found, "forgotten": [f["id"] for f in beads], "receipts": receipts})
    else:
        others = len(found) - len(beads)
        click.echo(
            f"forgot {counted(len(beads), 'bead')}"
            + (f"; {counted(others, 'other item')} to edit" if others else "")
        )
