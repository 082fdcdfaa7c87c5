"""``chrysalis forget`` with a selector: preview what matches, ask once, forget exactly that.

The command itself lives with the other memory commands (`memory.forget`); this module holds
its selector options and what it does with them. The real forget is sent with the
``expect_digest`` the preview answered (a hash of the ids it matched), so if the match changed
in between (a bead forgotten, or a matching one written) the daemon refuses (409) and nothing
is forgotten. What was forgotten is then shown as one combined forget receipt.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import click

from chrysalis.client import Routes
from chrysalis.core.errors import SelectionChanged
from chrysalis.core.vocab import ROLES

from ..words import counted
from .common import client_for, confirm, print_json
from .receipts import show_receipts

F = TypeVar("F", bound=Callable[..., Any])
SELECTOR_FLAGS = "--session, --path, --tag, --query, --since, --until, --role"


class Moment(click.ParamType):  # type: ignore[type-arg]
    """A time flag: epoch seconds or ISO 8601 (without a zone: UTC, as the daemon reads
    it), checked here so a mistake names the flag typed; the value is epoch seconds."""

    name = "TIME"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, float):
            return value
        try:
            epoch = float(value)
        except ValueError:
            try:
                at = datetime.fromisoformat(value)
            except ValueError:
                self.fail(f"{value!r} is not a time: ISO 8601 (2026-01-31, 2026-01-31T09:00) "
                          "or epoch seconds", param, ctx)  # fmt: skip
            epoch = (at if at.tzinfo else at.replace(tzinfo=UTC)).timestamp()
        if not 0 <= epoch < math.inf:
            self.fail(f"{value!r} is not a time from 1970 on", param, ctx)
        return epoch


TIME = Moment()


def filter_options(f: F) -> F:
    """The selector's flags: what `forget` forgets and `ls` lists (every one given must hold)."""
    options = [
        click.option("--session", "session_id", help="Beads of this session."),
        click.option(
            "--path",
            type=click.Path(),
            help="Beads ingested from this file, or from any file under this directory.",
        ),
        click.option("--tag", help="Beads with this tag."),
        click.option(
            "--query", help="Beads whose text holds every word of this (not by similarity)."
        ),
        # --since/--until, as retrieval's filters say it; --after/--before are their old
        # spellings, kept. Both ends are included (a bead stamped at midnight is "since" it).
        click.option(
            "--since",
            "--after",
            "after",
            type=TIME,
            help="Beads stamped at or after this (ISO 8601 or epoch seconds; "
            "--after is its old spelling).",
        ),
        click.option(
            "--until",
            "--before",
            "before",
            type=TIME,
            help="Beads stamped at or before this (--before is its old spelling).",
        ),
        click.option("--role", type=click.Choice(ROLES)),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def selector_options(f: F) -> F:
    """The selector flags, ``--dry-run``, ``--yes`` and ``--json``."""
    options = [
        filter_options,
        click.option("--dry-run", is_flag=True, help="Only show what matches; forget nothing."),
        click.option("--yes", "-y", is_flag=True, help="Do not ask before forgetting."),
        click.option("--json", "as_json", is_flag=True, help="Print JSON."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def selector_of(values: dict[str, Any]) -> dict[str, Any]:
    """The selector flags given, as the API's selector (a path made absolute here). The
    API's ``after``/``before`` leave their ends out; --since/--until take them in: the bounds
    move by the smallest step a timestamp has, so exactly the beads stamped on them join."""
    chosen = {k: v for k, v in values.items() if v is not None}
    if "path" in chosen:
        chosen["path"] = str(Path(chosen["path"]).expanduser().absolute())
    if "after" in chosen:
        chosen["after"] = math.nextafter(chosen["after"], -math.inf)
        if chosen["after"] < 0:  # since 1970: every bead
            del chosen["after"]
    if "before" in chosen:
        chosen["before"] = math.nextafter(chosen["before"], math.inf)
    return chosen


def show(seen: dict[str, Any]) -> None:
    n, shown = seen["matched"], len(seen["beads"])
    if n == 0:
        click.echo("no bead matches")
        return
    which = "" if shown == n else f" (the oldest {shown} shown)"
    click.echo(f"{counted(n, 'bead')} match{'es' if n == 1 else ''}{which}:")
    for bead in seen["beads"]:
        when = datetime.fromtimestamp(bead["ts"]).strftime("%Y-%m-%d %H:%M")
        session = bead["session_id"] or "-"
        click.echo(f"  {bead['id']}  {when}  {session}  {bead['role']}  {bead['preview']}")
    if seen["more"]:
        click.echo("  (more than one call forgets: they go in batches of 10,000)")


def run(
    ctx: click.Context,
    selector: dict[str, Any],
    *,
    dry_run: bool,
    yes: bool,
    as_json: bool,
    wait: float | None = None,
) -> None:
    """Preview; unless ``dry_run``, ask once (unless ``yes``), forget exactly what was
    previewed (batch after batch, each confirmed by the digest the last call answered) and
    print the combined receipt (`receipts.show_receipts`, waiting up to ``wait`` seconds)."""
    if not selector:
        raise click.UsageError(f"give a bead ID, or a selector: {SELECTOR_FLAGS}")
    client = client_for(ctx)
    seen = client.raw(Routes.forget_where(selector, dry_run=True))
    n = seen["matched"]
    if dry_run:
        print_json(seen) if as_json else show(seen)
        return
    if n == 0:
        print_json({"forgotten": 0, "ids": []}) if as_json else click.echo("no bead matches")
        return
    if not yes:
        if not as_json:
            show(seen)
        confirm(ctx, f"Forget {counted(n, 'bead')}?", err=as_json)
    ids: list[str] = []
    digest = seen["expect_digest"]
    while True:
        try:
            call = Routes.forget_where(selector, dry_run=False, expect_digest=digest)
            done = client.raw(call)
        except SelectionChanged as exc:
            if ids:
                exc.message = f"forgot {len(ids)}, then stopped: {exc.message}"
            raise
        ids += done["ids"]
        if not done["more"]:
            break
        digest = done["expect_digest"]
    show_receipts(client, ids, wait, as_json)
