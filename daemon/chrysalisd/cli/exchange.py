"""Memory in and out of files: export and import as JSON Lines (and LoCoMo conversations)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from ..words import counted
from .common import client_for, connect, json_option, print_json

IMPORT_CHUNK_BYTES = 1024 * 1024
IMPORT_TIMEOUT = 3600.0  # the daemon answers once every line is checked and written


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
    click.echo(f"exported {counted(items, 'item')} to {file}", err=True)


@click.command("import")
@click.argument("file", type=click.Path(allow_dash=True))
@click.option(
    "--format",
    "--from",
    "format_",
    type=click.Choice(["chrysalis", "locomo", "chatgpt", "claude", "claude-code"]),
    default="chrysalis",
    show_default=True,
    help="chrysalis: JSON Lines from `chrysalis export`; locomo: a LoCoMo conversation file "
    "(each turn a bead, each session a session); chatgpt, claude: the conversations.json of "
    "a ChatGPT or claude.ai data export; claude-code: a Claude Code transcript (.jsonl) or a "
    "folder of them.",
)
@json_option
@click.pass_context
def import_(ctx: click.Context, file: str, format_: str, as_json: bool) -> None:
    """Load FILE made by `chrysalis export` ("-" for stdin), a public conversation set, or
    the history of another chat tool. All or nothing: every line is checked first (an error
    names its line in FILE), then what is new is written at once. Items already here are
    left alone, so importing twice changes nothing.

    A chat history (``--from chatgpt|claude|claude-code``) comes in one bead per turn, each
    conversation a session, its roles and times kept (ChatGPT: the branch the conversation
    was left on); credentials in it are redacted; a turn forgotten here stays forgotten.

    \b
    Example:
      chrysalis import backup.jsonl
      chrysalis import --format locomo locomo10.json && chrysalis recall "Caroline's job"
      chrysalis import --from chatgpt ~/Downloads/chatgpt-export/conversations.json
      chrysalis import --from claude-code ~/.claude/projects/-home-me-src-shop
    """
    if format_ in ("chatgpt", "claude", "claude-code"):
        from . import importer

        if file == "-":
            raise click.UsageError(f"--from {format_} reads a file or folder, not stdin")
        obj = ctx.ensure_object(dict)
        with connect(obj.get("socket"), timeout=IMPORT_TIMEOUT, memory=obj.get("memory")) as c:
            importer.run(c, format_, file, as_json=as_json)
        return
    if Path(file).is_dir():
        raise click.UsageError(f"{file} is a folder; --format {format_} reads a file")
    client = client_for(ctx)
    if format_ == "locomo":
        from ..locomo import import_locomo

        counts = import_locomo(client, file)
        if as_json:
            print_json(counts)
        else:
            click.echo(
                f"imported {counted(counts['added'], 'turn')} from "
                f"{counted(counts['conversations'], 'conversation')} "
                f"({counted(counts['sessions'], 'session')}); {counts['unchanged']:,} already here"
            )
        return
    # One request, streamed from the file: the daemon checks every line, then writes all or
    # nothing, and an error names the line's number in the file.
    stream = sys.stdin.buffer if file == "-" else open(file, "rb")  # noqa: SIM115
    obj = ctx.ensure_object(dict)
    with (
        stream,
        connect(obj.get("socket"), timeout=IMPORT_TIMEOUT, memory=obj.get("memory")) as slow,
    ):
        got = slow.import_lines(_chunks(stream))
    if as_json:
        print_json(got)
        return
    added = sum(got["added"].values())
    same = sum(got["unchanged"].values())
    click.echo(
        f"imported {counted(added, 'item')}, {same:,} already here, {got['forgotten']:,} forgotten"
    )
    if got.get("redacted"):
        click.echo(f"redacted {counted(got['redacted'], 'secret')} before storing them", err=True)


def _chunks(stream: Any) -> Iterator[bytes]:
    """The file in pieces of IMPORT_CHUNK_BYTES, sent as they are read (never whole)."""
    while chunk := stream.read(IMPORT_CHUNK_BYTES):
        yield chunk
