"""hooks: the memory inside Claude Code (context on each prompt, the turns captured)."""

from __future__ import annotations

from pathlib import Path

import click

from .. import claude_hook, claude_settings
from ..words import counted
from .common import json_option, print_json

AGENTS = click.Choice(["claude-code"])


@click.group()
def hooks() -> None:
    """Hooks that put the memory in an agent's loop: Claude Code.

    \b
    Example:
      chrysalis hooks install claude-code            # every project (~/.claude/settings.json)
      chrysalis hooks install claude-code --project --memory work
      chrysalis hooks uninstall claude-code
    """


@hooks.command("claude-code")
@click.option("--budget", type=click.IntRange(1, 100_000), help="Tokens of context at most.")
@click.pass_context
def claude_code(ctx: click.Context, budget: int | None) -> None:
    """Answer one Claude Code hook event read as JSON on stdin (Claude Code runs this).

    SessionStart and UserPromptSubmit print what the memory holds on the prompt (or on the
    project) as additionalContext; PreCompact, Stop and SessionEnd import the turns of the
    transcript not captured yet. It always exits 0 and never blocks the agent: with no daemon
    it says so on stderr and lets the prompt go on without memory. ``--memory a,b`` reads
    both memories and writes to the first.

    \b
    Example:
      echo '{"hook_event_name": "UserPromptSubmit", "session_id": "s1",
             "transcript_path": "", "cwd": ".", "prompt": "how do we deploy?"}' |
        chrysalis hooks claude-code
    """
    obj = ctx.ensure_object(dict)
    memories = str(obj.get("memory") or "").split(",")
    socket = obj.get("socket")
    options = claude_hook.HookOptions(memories, str(socket) if socket else None, budget)
    ctx.exit(claude_hook.run(options))


def _scope_options(f: click.decorators.FC) -> click.decorators.FC:
    f = click.option(
        "--dir", "project", type=click.Path(file_okay=False, path_type=Path),
        help="The project folder for --project/--local [default: the working directory].",
    )(f)  # fmt: skip
    return click.option(
        "--user", "scope", flag_value="user", default=True,
        help="~/.claude/settings.json: every project (the default).",
    )(click.option(
        "--project", "scope", flag_value="project",
        help="<project>/.claude/settings.json: this project, for everyone who clones it.",
    )(click.option(
        "--local", "scope", flag_value="local",
        help="<project>/.claude/settings.local.json: this project, for you only.",
    )(f)))  # fmt: skip


@hooks.command()
@click.argument("agent", type=AGENTS)
@_scope_options
@json_option
@click.pass_context
def install(
    ctx: click.Context, agent: str, scope: str, project: Path | None, as_json: bool
) -> None:
    """Install the hooks into AGENT's settings (other settings and hooks stay as they are;
    installing again replaces ours, never adds a second). The command written names
    ``--memory`` and ``--socket`` when given here.

    \b
    Example:
      chrysalis hooks install claude-code
      chrysalis hooks install claude-code --local --memory client-x
    """
    obj = ctx.ensure_object(dict)
    path = claude_settings.settings_path(scope, project)
    command = claude_settings.hook_command(obj.get("memory"), obj.get("socket"))
    done = claude_settings.install(path, command)
    if as_json:
        print_json({**done, "command": command})
        return
    again = f" (replacing {done['replaced']} of ours)" if done["replaced"] else ""
    click.echo(f"installed in {path}{again}: {', '.join(done['events'])}")
    click.echo(f"  command: {command}")
    click.echo("Claude Code reads it at its next start; run `chrysalis daemon` if it is not up.")


@hooks.command()
@click.argument("agent", type=AGENTS)
@_scope_options
@json_option
def uninstall(agent: str, scope: str, project: Path | None, as_json: bool) -> None:
    """Remove our hooks from AGENT's settings, and nothing else.

    \b
    Example:
      chrysalis hooks uninstall claude-code --project
    """
    path = claude_settings.settings_path(scope, project)
    done = claude_settings.uninstall(path)
    if as_json:
        print_json(done)
    elif done["removed"]:
        click.echo(f"removed {counted(done['removed'], 'hook')} of ours from {path}")
    else:
        click.echo(f"no hooks of ours in {path}")
