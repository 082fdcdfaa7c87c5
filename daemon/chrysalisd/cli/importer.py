"""``chrysalis import --from chatgpt|claude|claude-code``: past conversations in, through the
daemon's import (all or nothing, idempotent, secrets redacted), with a progress bar and a
summary."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

import click

from chrysalis.core.errors import Conflict, NotFound
from chrysalis.importers import Export, Row, Source, export_lines

from ..words import counted
from .common import print_json

if TYPE_CHECKING:
    from chrysalis.client import Client

WHAT = {"chatgpt": "conversations", "claude": "conversations", "claude-code": "transcripts"}


def run(client: Client, fmt: str, path: str, *, as_json: bool) -> None:
    """Import the export at ``path``, print what came in."""
    export = Export(fmt, path)
    tally = Tally()
    try:
        bar = click.progressbar(
            export, length=export.total, label=f"importing {WHAT[fmt]}", file=sys.stderr,
            hidden=as_json or export.total < 2,
        )  # fmt: skip
        with bar as units:
            got = client.import_lines(export_lines(tally.rows(units)))
    except Conflict:
        # Some turn is stored with other content (a resumed Claude Code session copies its
        # turns, an older version of this importer wrote it otherwise): keep what is stored.
        click.echo("some turns are stored already with other content; keeping those", err=True)
        tally = Tally()
        rows = list(tally.rows(Export(fmt, path)))
        fresh = [row for row in rows if not _stored(client, row["id"])]
        tally.kept = len(rows) - len(fresh)
        got = client.import_lines(export_lines(fresh))
    summary = {
        "format": fmt, "path": path, WHAT[fmt]: export.total, "turns": tally.turns,
        "sessions": len(tally.sessions), "added": got["added"]["bead"],
        "unchanged": got["unchanged"]["bead"] + tally.kept, "forgotten": got["forgotten"],
        "redacted": got.get("redacted", 0), "bad_lines": tally.bad_lines,
        "repeated": tally.repeated,
    }  # fmt: skip
    if as_json:
        print_json(summary)
        return
    click.echo(
        f"{export.total} {WHAT[fmt]}, {counted(tally.turns, 'turn')} in "
        f"{counted(len(tally.sessions), 'session')}: "
        f"{summary['added']} added, {summary['unchanged']} already here"
        + (f", {got['forgotten']} forgotten here (left out)" if got["forgotten"] else "")
    )
    if summary["redacted"]:
        click.echo(
            f"redacted {counted(summary['redacted'], 'secret')} before storing them", err=True
        )
    if tally.bad_lines:
        click.echo(f"skipped {counted(tally.bad_lines, 'line')} that were not JSON", err=True)


class Tally:
    """Counts the rows on their way to the daemon, and leaves out a row whose id came
    already in this import (one turn in two transcripts: a resumed session's copy)."""

    def __init__(self) -> None:
        self.turns = self.bad_lines = self.repeated = self.kept = 0
        self.sessions: set[str] = set()
        self._seen: set[str] = set()

    def rows(self, units: Iterable[Source]) -> Iterator[Row]:
        for unit in units:
            self.bad_lines += unit.bad_lines
            for row in unit.rows:
                if row["id"] in self._seen:
                    self.repeated += 1
                    continue
                self._seen.add(row["id"])
                self.turns += 1
                self.sessions.add(row["session_id"])
                yield row


def _stored(client: Client, bead_id: str) -> bool:
    try:
        client.get_bead(bead_id)
    except NotFound:
        return False  # absent, or forgotten: the import skips those
    return True
