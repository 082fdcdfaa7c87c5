"""The ``chrysalis`` command: the daemon, and a client for it. One module per group of
commands: `service` (daemon, status, doctor, ui), `lifecycle` (daemon --detach, stop),
`settings` (config), `memory` (remember, recall, fact, forget, ingest), `context`, `browse`
(ls, show, kg), `agent` (persona, skill, mcp), `memories`, `exchange` (export, import;
`importer` for chat histories), `replication` (sync, demo), `hooks` (Claude Code).

Client commands talk to the daemon over its socket (``--socket`` or ``CHRYSALIS_SOCKET``) and
import none of the storage engine, so they start fast. Every command that prints data takes
``--json``; its shape is stable. Library errors become one ``error:`` line and exit status 1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from chrysalis import __version__
from chrysalis.core.errors import ChrysalisError

from . import (
    agent,
    browse,
    exchange,
    hooks,
    lifecycle,
    memories,
    memory,
    replication,
    service,
    settings,
)
from . import context as context_cli
from . import secrets as secrets_cli

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


# Commands about the daemon as a whole, not one memory: no --memory after them.
SERVER_WIDE = {"daemon", "stop", "config"}


def _anywhere(command: click.Command) -> None:
    """Let ``--socket`` and ``--memory`` also come after the command (``chrysalis status
    --socket X``), as people type them; they set what the options before it set."""

    def keep(key: str) -> Any:
        def callback(ctx: click.Context, _: click.Parameter, value: Any) -> Any:
            if value is not None:
                ctx.ensure_object(dict)[key] = value
            return value

        return callback

    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _anywhere(sub)
        return
    taken = {opt for p in command.params for opt in getattr(p, "opts", ())}
    if "--socket" not in taken:
        command.params.append(
            click.Option(
                ["--socket"], type=click.Path(dir_okay=False, path_type=Path),
                expose_value=False, callback=keep("socket"),
                help="The daemon's socket (also before the command).",
            )
        )  # fmt: skip
    if "--memory" not in taken and command.name not in SERVER_WIDE:
        command.params.append(
            click.Option(
                ["--memory"], expose_value=False, callback=keep("memory"),
                help="The named memory to work in (also before the command).",
            )
        )  # fmt: skip


for command in (
    service.daemon, lifecycle.stop, settings.config, service.status, service.doctor,
    service.ui,
    memory.remember, memory.recall, context_cli.context, memory.fact, memory.forget,
    memory.ingest,
    browse.ls, browse.show, browse.kg,
    agent.persona, agent.skill, agent.mcp, memories.memory,
    exchange.export, exchange.import_,
    replication.sync, replication.demo, secrets_cli.secrets, hooks.hooks,
):  # fmt: skip
    _anywhere(command)
    main.add_command(command)
