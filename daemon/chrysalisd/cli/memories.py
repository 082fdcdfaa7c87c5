"""``chrysalis memory ls|create|drop``: the daemon's named memories. Every other command takes
``--memory NAME`` (or ``CHRYSALIS_MEMORY``) to work in one of them."""

from __future__ import annotations

import click

from chrysalis.client import Routes

from ..words import counted
from .common import client_for, confirm, json_option, print_json


@click.group("memory")
def memory() -> None:
    """List, create and drop named memories.

    \b
    Example:
      chrysalis memory create team --remote s3://team-bucket/chrysalis --sync-key-file ~/team.key
      chrysalis --memory team remember "the release is on Friday"
      chrysalis memory drop team
    """


@memory.command("ls")
@json_option
@click.pass_context
def ls(ctx: click.Context, as_json: bool) -> None:
    """The memories the daemon serves, default first.

    \b
    Example:
      chrysalis memory ls
    """
    found = client_for(ctx).raw(Routes.memories)["memories"]
    if as_json:
        print_json(found)
        return
    for m in found:
        where = m["remote"] or "no remote"
        key = ", encrypted" if m["encrypted"] else ""
        beads = counted(m["beads"], "bead")
        click.echo(f"{m['name']:<16} {beads:>14}  {where}{key}  {m['data_dir']}")


@memory.command("create")
@click.argument("name")
@click.option("--remote", help="Where its laptops meet: file:///folder or s3://bucket/prefix.")
@click.option("--sync-key-file", help="Its sync key (64 hex digits or a passphrase).")
@click.option("--extractor", help="rules, ollama[:MODEL] or none (default: the daemon's).")
@click.option("--zep-url", help="A Zep server to mirror it to.")
@click.option("--zep-api-key-file", help="A file holding that Zep server's key.")
@json_option
@click.pass_context
def create(ctx: click.Context, /, name: str, as_json: bool, **options: str | None) -> None:
    """Create memory NAME, with a remote and key of its own (never the default's).

    \b
    Example:
      chrysalis memory create notes
      chrysalis memory create team --remote file:///mnt/team/chrysalis --sync-key-file team.key
    """
    settings = {k: v for k, v in options.items() if v is not None}
    made = client_for(ctx).raw(Routes.create_memory(name, settings))
    if as_json:
        print_json(made)
    else:
        click.echo(f"created memory {made['name']} in {made['data_dir']}")


@memory.command("drop")
@click.argument("name")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@json_option
@click.pass_context
def drop(ctx: click.Context, name: str, yes: bool, as_json: bool) -> None:
    """Erase all of memory NAME: here, on its remote, and on its other laptops at their next
    sync. A memory made again with the same name and remote starts empty. It asks first
    (unless --yes); any answer but y cancels: nothing is changed, exit status 1.

    \b
    Example:
      chrysalis memory drop team --yes
    """
    if not yes:
        confirm(ctx, f"Erase everything memory {name!r} holds, everywhere?", err=as_json)
    receipt = client_for(ctx).raw(Routes.drop_memory(name))
    if as_json:
        print_json(receipt)
        return
    erased = receipt["erased"]
    click.echo(
        f"dropped memory {name}: {counted(erased['beads'], 'bead')}, "
        f"{counted(erased['node_records'], 'node')}, {counted(erased['edge_records'], 'fact')}, "
        f"{counted(erased['skill_records'], 'skill')}, {counted(erased['embeddings'], 'vector')}, "
        f"{counted(erased['ops'], 'op')} erased"
    )
    gone = receipt["data_dir"]
    click.echo(f"  data dir {gone['path']}: {'removed' if gone['removed'] else 'still there'}")
    remote = receipt.get("remote")
    if remote is None:
        click.echo("  remote: none")
    elif "already" in remote:
        click.echo(f"  remote {remote['url']}: already dropped by another laptop")
    else:
        state = "emptied" if remote["ok"] else "NOT emptied (see --json)"
        click.echo(
            f"  remote {remote['url']}: {state}, "
            f"{counted(remote['objects_removed'], 'object')} removed, "
            f"drop marker {remote['marker']} left for the other laptops"
        )
    for r in receipt.get("replicas") or []:
        click.echo(f"  laptop {r['replica']}: {r['state']} ({r['why']})")
    zep = receipt.get("zep")
    if zep is not None:
        click.echo(f"  zep {zep['url']}: {zep['state']} ({zep['why']})")
