"""The daemon's settings from the command line: the flags `daemon` and `config` share, and
`config`, which prints what a daemon started here would use and where each value came from.

`chrysalisd.config` (pydantic) is imported inside the functions: the client commands start
without it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from .common import json_option, print_json

if TYPE_CHECKING:
    from ..config import Explained

F = TypeVar("F", bound=Callable[..., Any])

EXIT_BAD_SETTING = 2  # as chrysalisd.server's: a setting is malformed


def daemon_options(f: F) -> F:
    """The settings a flag can give (the rest: the TOML file and CHRYSALIS_* variables)."""
    options = [
        click.option(
            "--data-dir",
            type=click.Path(file_okay=False, path_type=Path),
            help="[env CHRYSALIS_DATA_DIR]",
        ),
        click.option(
            "--config",
            "config_file",
            type=click.Path(dir_okay=False, path_type=Path),
            help="A TOML file [env CHRYSALIS_CONFIG; default "
            "$XDG_CONFIG_HOME/chrysalis/config.toml].",
        ),
        click.option(
            "--embedder",
            help='"auto", "deterministic", "ollama[:MODEL]", "minilm[:PATH]" or '
            '"sentence-transformers:PATH" [env CHRYSALIS_EMBEDDER].',
        ),
        click.option(
            "--extractor",
            help='Knowledge from beads: "rules" (offline), "ollama[:MODEL]" or "none" '
            "[env CHRYSALIS_EXTRACTOR].",
        ),
        click.option(
            "--remote",
            help="Sync through file:///shared/folder or s3://bucket/prefix [env CHRYSALIS_REMOTE].",
        ),
        click.option(
            "--sync-key-file",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Encrypt what goes to the remote: a file with 64 hex digits or a passphrase "
            "[env CHRYSALIS_SYNC_KEY_FILE].",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


FLAGS = ("data_dir", "embedder", "extractor", "remote", "sync_key_file")


def explain(ctx: click.Context, config_file: Path | None, flags: dict[str, Any]) -> Explained:
    """The settings `daemon_options` and ``--socket`` give, with their sources; a bad one is
    one ``error:`` line and exit status 2."""
    from chrysalis.core.errors import InvalidInput

    from ..config import explain_settings

    socket = ctx.ensure_object(dict).get("socket")
    if socket is not None and str(socket) == os.environ.get("CHRYSALIS_SOCKET"):
        socket = None  # click read it from the variable: let the settings say so
    try:
        return explain_settings(config_file, {**flags, "socket": socket})
    except InvalidInput as exc:
        click.echo(f"error: {exc.message}", err=True)
        ctx.exit(EXIT_BAD_SETTING)
        raise  # not reached: ctx.exit raises


@click.command("config")
@daemon_options
@json_option
@click.pass_context
def config(ctx: click.Context, /, config_file: Path | None, as_json: bool, **flags: Any) -> None:
    """Print the settings a daemon started here (same flags, variables and file) would use,
    each with where it came from: default, file PATH, env CHRYSALIS_X or flag --x. Secrets
    are never printed: a key file's path is, a Zep API key only as "set". Exits 2 when a
    setting is bad, as the daemon would.

    \b
    Example:
      chrysalis config
      chrysalis config --config ./team.toml --json | jq '.settings.remote'
    """
    from ..config import unknown_variables

    explained = explain(ctx, config_file, flags)
    table = _rows(explained)
    memories = {
        name: {
            key: {"value": _shown(key, getattr(mem, key)), "from": explained.sources["memories"]}
            for key in sorted(explained.settings.memories[name])
        }
        for name, mem in sorted(explained.memories().items())
    }
    warnings = unknown_variables(os.environ)
    if as_json:
        print_json({
            "config_file": None if explained.file is None else str(explained.file),
            "settings": table, "memories": memories, "warnings": warnings,
        })  # fmt: skip
        return
    file = explained.file
    click.echo(f"config file: {file if file is not None else 'none'}")
    width = max(map(len, table))
    for key, row in table.items():
        click.echo(f"{key:<{width}}  {_text(row['value'])}  ({row['from']})")
    for name, keys in memories.items():
        click.echo(f"[memories.{name}]")
        for key, row in keys.items():
            click.echo(f"  {key:<{width - 2}}  {_text(row['value'])}  ({row['from']})")
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)


def _rows(explained: Explained) -> dict[str, dict[str, Any]]:
    settings = explained.settings
    return {
        key: {"value": _shown(key, getattr(settings, key)), "from": explained.sources[key]}
        for key in type(settings).model_fields
        if key != "memories"
    }


def _shown(key: str, value: Any) -> Any:
    """A value as JSON shows it; a secret only as "set" (its file's path is no secret)."""
    from pydantic import SecretStr

    if isinstance(value, SecretStr):
        return "set"
    if isinstance(value, Path):
        return str(value)
    return value


def _text(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "-"
    return str(value)
