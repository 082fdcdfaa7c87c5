"""``chrysalis context``: what to put in an agent's prompt for its next turn."""

from __future__ import annotations

import click

from chrysalis.client import Routes

from .common import client_for, json_option, memory_names, print_json


@click.command()
@click.argument("query")
@click.option(
    "--budget", type=click.IntRange(1, 100_000), default=800, show_default=True,
    help="The context's size at most, in estimated tokens.",
)  # fmt: skip
@click.option("--session", "session_id", help="The agent's session: its latest turns are left out.")
@click.option("--recent", type=click.IntRange(0, 1000), help="How many of them (default 6).")
@click.option("--exclude", multiple=True, help="An id to leave out (repeatable).")
@click.option("--now", help="When the question is asked (ISO 8601 or epoch seconds).")
@click.option("--read", default="", help="Read these memories instead, comma-separated.")
@json_option
@click.pass_context
def context(
    ctx: click.Context,
    query: str,
    budget: int,
    session_id: str | None,
    recent: int | None,
    exclude: tuple[str, ...],
    now: str | None,
    read: str,
    as_json: bool,
) -> None:
    """Print the context for QUERY: the facts that bear on it (what held at the time it asks
    about first) and the beads that are evidence, each with its id; nothing when nothing
    in memory bears on it.

    \b
    Example:
      chrysalis context "where do I live now?"
      chrysalis context "where did I work in June 2025?" --budget 400
      chrysalis context "what does the user drink?" --session s1 --json | jq .facts
      chrysalis context "when is the fig repotted?" --memory garden,kitchen
    """
    when: str | float | None = now
    if now is not None:
        try:
            when = float(now)
        except ValueError:
            when = now  # ISO 8601: the daemon reads it and says what is wrong
    # `--memory a,b` reads across memories as recall does; `--read a,b` is the older spelling.
    names = memory_names(ctx)
    memories = [m for m in (part.strip() for part in read.split(",")) if m]
    if len(names) > 1:
        memories = list(dict.fromkeys([*names, *memories]))
    call = Routes.context(query, budget, session_id, exclude, when, memories, recent)
    result = client_for(ctx, several=True).raw(call)
    if as_json:
        print_json(result)
        return
    click.echo(result["text"] or "nothing in memory bears on this")
    for note in result["notes"]:
        click.echo(f"note: {note}", err=True)
