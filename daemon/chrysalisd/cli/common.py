"""What the commands share: the client for the context's socket, ``--json``, and output."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from chrysalis.core.errors import InvalidInput

if TYPE_CHECKING:
    from chrysalis.client import Client

F = TypeVar("F", bound=Callable[..., Any])


def connect(socket: Path | str | None, **kw: Any) -> Client:
    """``Client(socket, **kw)``. The client (httpx) is imported here, when a command first
    talks to a daemon, not with the CLI: `chrysalis daemon` never does, and every test's
    daemon process would pay ~0.1 s of CPU for it."""
    from chrysalis.client import Client

    return Client(socket, **kw)


def client_for(ctx: click.Context, *, several: bool = False) -> Client:
    """The client for the context's socket and memory. ``--memory a,b`` (several memories)
    goes with the commands that read across memories (``several``): their client is the
    default memory's and they name the memories in the request (`memory_names`)."""
    obj = ctx.ensure_object(dict)
    names = memory_names(ctx)
    if len(names) > 1 and not several:
        raise click.UsageError(
            f"--memory {obj['memory']}: several memories go with recall and context only; name one"
        )
    if "client" not in obj:
        memory = None if len(names) > 1 else obj.get("memory")
        obj["client"] = ctx.with_resource(connect(obj.get("socket"), memory=memory))
    client: Client = obj["client"]
    return client


def memory_names(ctx: click.Context) -> list[str]:
    """The memories ``--memory`` names, comma-separated (none: the default memory)."""
    raw = str(ctx.ensure_object(dict).get("memory") or "")
    if not raw:
        return []
    names = [name.strip() for name in raw.split(",")]
    if not all(names):
        raise click.UsageError(f"--memory {raw!r}: a memory name is empty")
    return list(dict.fromkeys(names))


def json_option(f: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(f)


def print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def read_json(file: str) -> Any:
    text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except ValueError as exc:
        raise InvalidInput(f"{file}: not JSON: {exc}") from None


def ago(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f}s"
    if seconds < 5400:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"


def shown(path: str) -> str:
    """``path`` as a person at this shell wants it: relative to the working directory when it
    is under it (``docs/notes.md``), else as it is."""
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path


def span_text(ref: dict[str, Any]) -> str:
    """A span ref as ``path:start-end`` (``path:n`` for one line), its path `shown`: as editors
    and terminals link it."""
    start, end = ref["start_line"], ref["end_line"]
    return f"{shown(ref['path'])}:{start}" + (f"-{end}" if end != start else "")


def epoch_or_text(value: str | None) -> float | str | None:
    """A time flag: epoch seconds as a number; anything else (ISO 8601) as given, for the
    daemon to read."""
    try:
        return None if value is None else float(value)
    except ValueError:
        return value


CANCELLED = "cancelled: nothing was changed"


def confirm(ctx: click.Context, question: str, *, err: bool = False) -> None:
    """Ask ``question`` [y/N] (on stderr with ``err``: stdout is kept for JSON) and return on
    yes. Anything else (no, Enter, end of input, Ctrl-C) cancels the same way in every
    command: `CANCELLED` on stderr and exit status 1, as a change that was not made."""
    try:
        yes = click.confirm(question, err=err)
    except click.Abort:  # end of input or Ctrl-C at the prompt: end its line first
        click.echo("", err=err)
        yes = False
    if not yes:
        click.echo(CANCELLED, err=True)
        ctx.exit(1)
