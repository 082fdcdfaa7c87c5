"""Memory in and out of files: export and import as JSON Lines (and LoCoMo conversations)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from .common import client_for, json_option, print_json

IMPORT_CHUNK_LINES = 1000
IMPORT_CHUNK_BYTES = 8 * 1024 * 1024


@click.command()
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@click.pass_context
def export(ctx: click.Context, file: str) -> None:
    """Write every visible item to FILE as JSON Lines ("-" for stdout).

    \b
    Example:
      chrysalis export backup.jsonl
    """
    data = client_for(ctx).export()
    if file == "-":
        sys.stdout.buffer.write(data)
        return
    Path(file).write_bytes(data)
    items = data.count(b"\n") - 1  # the header is not an item
    click.echo(f"exported {items} items to {file}", err=True)


@click.command("import")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--format",
    "format_",
    type=click.Choice(["chrysalis", "locomo"]),
    default="chrysalis",
    show_default=True,
    help="chrysalis: JSON Lines from `chrysalis export`; locomo: a LoCoMo conversation file "
    "(each turn a bead, each session a session).",
)
@json_option
@click.pass_context
def import_(ctx: click.Context, file: str, format_: str, as_json: bool) -> None:
    """Load FILE made by `chrysalis export` ("-" for stdin), or a public conversation set.
    Items already here are left alone, so importing twice changes nothing.

    \b
    Example:
      chrysalis import backup.jsonl
      chrysalis import --format locomo locomo10.json && chrysalis recall "Caroline's job"
    """
    client = client_for(ctx)
    if format_ == "locomo":
        from ..locomo import import_locomo

        counts = import_locomo(client, file)
        if as_json:
            print_json(counts)
        else:
            click.echo(
                f"imported {counts['added']} turns from {counts['conversations']} conversations "
                f"({counts['sessions']} sessions); {counts['unchanged']} already here"
            )
        return
    stream = sys.stdin.buffer if file == "-" else open(file, "rb")  # noqa: SIM115
    totals: dict[str, dict[str, int]] = {"added": {}, "unchanged": {}}
    forgotten = 0
    with stream:
        for chunk in _chunks(stream):
            got = client.import_lines(chunk)
            for key in ("added", "unchanged"):
                for kind, n in got[key].items():
                    totals[key][kind] = totals[key].get(kind, 0) + n
            forgotten += got["forgotten"]
    if as_json:
        print_json({**totals, "forgotten": forgotten})
        return
    added = sum(totals["added"].values())
    same = sum(totals["unchanged"].values())
    click.echo(f"imported {added} items, {same} already here, {forgotten} forgotten")


def _chunks(stream: Any) -> Iterator[bytes]:
    """Lines in requests of at most IMPORT_CHUNK_LINES lines / IMPORT_CHUNK_BYTES bytes."""
    batch: list[bytes] = []
    size = 0
    for line in stream:
        batch.append(line)
        size += len(line)
        if len(batch) >= IMPORT_CHUNK_LINES or size >= IMPORT_CHUNK_BYTES:
            yield b"".join(batch)
            batch, size = [], 0
    if batch:
        yield b"".join(batch)
