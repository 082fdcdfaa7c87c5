"""The agent's side: its persona, its skills, and the MCP server it talks through."""

from __future__ import annotations

import click

from chrysalis.client import Routes
from chrysalis.core.errors import InvalidInput

from .common import client_for, json_option, print_json, read_json


@click.group()
def persona() -> None:
    """Show or replace the agent's persona.

    \b
    Example:
      chrysalis persona show --json > persona.json
      chrysalis persona set persona.json
    """


@persona.command("show")
@json_option
@click.pass_context
def persona_show(ctx: click.Context, as_json: bool) -> None:
    """Print the persona.

    \b
    Example:
      chrysalis persona show
    """
    p = client_for(ctx).raw(Routes.persona)
    if as_json:
        print_json(p)
        return
    click.echo(f"{p['name'] or '(unnamed)'}: {p['description']}")
    for label in ("goals", "norms", "skills"):
        for v in p[label]:
            click.echo(f"  {label[:-1]}: {v}")
    for trait, value in p["traits"].items():
        click.echo(f"  {trait}: {value}")


@persona.command("set")
@click.argument("file")
@json_option
@click.pass_context
def persona_set(ctx: click.Context, file: str, as_json: bool) -> None:
    """Replace the persona with FILE (JSON: name, description, goals, norms, skills, traits;
    "-" for stdin).

    \b
    Example:
      echo '{"name": "Ada", "goals": ["help with Rust"]}' | chrysalis persona set -
    """
    p = client_for(ctx).raw(Routes.put_persona(read_json(file)))
    if as_json:
        print_json(p)
    else:
        click.echo(f"persona set: {p['name'] or '(unnamed)'}")


@click.group()
def skill() -> None:
    """Add, list, show and remove skills.

    \b
    Example:
      chrysalis skill put deploy.json
      chrysalis skill list
    """


@skill.command("put")
@click.argument("file")
@json_option
@click.pass_context
def skill_put(ctx: click.Context, file: str, as_json: bool) -> None:
    """Add or replace the skill in FILE (JSON: id, name, description, signature, examples,
    tags; "-" for stdin).

    \b
    Example:
      echo '{"id": "deploy", "name": "Deploy", "signature": "deploy(env)"}' | chrysalis skill put -
    """
    data = read_json(file)
    if not isinstance(data, dict):
        raise InvalidInput(f"{file}: expected a JSON object with id and name")
    s = client_for(ctx).raw(Routes.put_skill(data))
    if as_json:
        print_json(s)
    else:
        click.echo(f"skill {s['id']} saved")


@skill.command("list")
@json_option
@click.pass_context
def skill_list(ctx: click.Context, as_json: bool) -> None:
    """List the skills.

    \b
    Example:
      chrysalis skill list --json
    """
    skills = client_for(ctx).raw(Routes.skills)
    if as_json:
        print_json(skills)
        return
    for s in skills:
        click.echo(f"{s['id']}  {s['name']}  {s['description'][:60]}")


@skill.command("show")
@click.argument("skill_id")
@json_option
@click.pass_context
def skill_show(ctx: click.Context, skill_id: str, as_json: bool) -> None:
    """Show one skill.

    \b
    Example:
      chrysalis skill show deploy
    """
    s = client_for(ctx).raw(Routes.get_skill(skill_id))
    if as_json:
        print_json(s)
        return
    click.echo(f"{s['id']}: {s['name']}\n{s['description']}")
    if s["signature"]:
        click.echo(f"signature: {s['signature']}")
    for e in s["examples"]:
        click.echo(f"example: {e}")


@skill.command("rm")
@click.argument("skill_id")
@click.pass_context
def skill_rm(ctx: click.Context, skill_id: str) -> None:
    """Remove a skill.

    \b
    Example:
      chrysalis skill rm deploy
    """
    client_for(ctx).delete_skill(skill_id)
    click.echo(f"skill {skill_id} removed")


@click.command()
@click.option("--memory", "memory_name", help="The memory it works in (default: --memory before "
              "the command, CHRYSALIS_MEMORY, or default).")  # fmt: skip
@click.option("--read", default="", help="Other memories its recall may read, comma-separated.")
@click.pass_context
def mcp(ctx: click.Context, memory_name: str | None, read: str) -> None:
    """Serve the memory to an agent over MCP (stdio), through the running daemon.

    Tools: remember, recall, context, add_fact, forget, forget_where, get_persona,
    update_persona, list_skills, get_skill, put_skill, memory_status. Register it in an MCP
    client as the command `chrysalis mcp` (see the README); the socket comes from --socket or
    CHRYSALIS_SOCKET.

    \b
    Example:
      chrysalis mcp
      chrysalis mcp --memory coding --read team     # writes to coding, recalls coding + team
      CHRYSALIS_SOCKET=/tmp/agent.sock chrysalis mcp
    """
    from ..mcp_server import main as serve_mcp

    obj = ctx.ensure_object(dict)
    others = [name.strip() for name in read.split(",") if name.strip()]
    serve_mcp(obj.get("socket"), memory_name or obj.get("memory"), others)
