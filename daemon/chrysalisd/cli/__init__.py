"""The ``chrysalis`` command: the daemon, and a client for it. One module per group of
commands: `service` (daemon, status, doctor), `memory`, `agent` (persona, skill, mcp),
`exchange` (export, import), `replication` (sync, demo).

Client commands talk to the daemon over its socket (``--socket`` or ``CHRYSALIS_SOCKET``) and
import none of the storage engine, so they start fast. Every command that prints data takes
``--json``; its shape is stable. Library errors become one ``error:`` line and exit status 1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from chrysalis import __version__
from chrysalis.errors import ChrysalisError

from . import agent, exchange, memories, memory, replication, service

__all__ = ["main"]


class _Group(click.Group):
    """Turns library errors into one line on stderr, not a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ChrysalisError as exc:
            click.echo(f"error: {exc.message}", err=True)
            ctx.exit(1)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--socket",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="CHRYSALIS_SOCKET",
    help="The daemon's socket [env CHRYSALIS_SOCKET; default "
    "$XDG_RUNTIME_DIR/chrysalis/chrysalis.sock].",
)
@click.option(
    "--memory",
    "memory_name",
    envvar="CHRYSALIS_MEMORY",
    help="The named memory to work in [env CHRYSALIS_MEMORY; default: default].",
)
@click.version_option(__version__, prog_name="chrysalis")
@click.pass_context
def main(ctx: click.Context, socket: Path | None, memory_name: str | None) -> None:
    """Chrysalis: a local-first memory for AI agents.

    \b
    Example:
      chrysalis daemon &                     # serve ~/.local/share/chrysalis
      chrysalis remember "the user prefers tea" --session s1
      chrysalis recall "what does the user drink?"
    """
    ctx.ensure_object(dict).update(socket=socket, memory=memory_name)


for command in (
    service.daemon, service.status, service.doctor, service.ui,
    memory.remember, memory.recall, memory.fact, memory.forget, memory.ingest,
    agent.persona, agent.skill, agent.mcp, memories.memory,
    exchange.export, exchange.import_,
    replication.sync, replication.demo,
):  # fmt: skip
    main.add_command(command)
