"""Laptops sharing one memory: sync now, and a demo of two laptops doing it."""

from __future__ import annotations

import click

from ..words import counted
from .common import connect, json_option, print_json


@click.command()
@click.option("--push", "only", flag_value="push", help="Only push our ops.")
@click.option("--pull", "only", flag_value="pull", help="Only pull the others' ops.")
@click.option(
    "--snapshot", is_flag=True, help="Then publish a snapshot (new laptops start from it)."
)
@click.option(
    "--decommission",
    metavar="REPLICA",
    help="First retire a laptop that will not come back (its id from `chrysalis status`).",
)
@click.option(
    "--repair-format",
    is_flag=True,
    help="First put back the remote's format.json, deleted or rewritten by someone else "
    "(status says so), as this laptop last opened it; our key must open the remote's data.",
)
@json_option
@click.pass_context
def sync(
    ctx: click.Context,
    only: str | None,
    snapshot: bool,
    decommission: str | None,
    repair_format: bool,
    as_json: bool,
) -> None:
    """Push to the remote and pull from it now (and every mirror), then say what moved.

    Exits 1 if a step failed (the daemon retries on its schedule anyway).

    \b
    Example:
      chrysalis sync
      chrysalis sync --pull --json
      chrysalis sync --snapshot
      chrysalis sync --repair-format
    """
    obj = ctx.ensure_object(dict)
    client = ctx.with_resource(connect(obj.get("socket"), timeout=600, memory=obj.get("memory")))
    result = client.sync(
        push=only != "pull",
        pull=only != "push",
        snapshot=snapshot,
        decommission=decommission,
        repair_format=repair_format,
    )
    if as_json:
        print_json(result)
    else:
        r = result["remote"]
        lines = [f"remote  {r['url']}"]
        for verb in ("repair_format", "push", "pull", "snapshot"):
            step = r.get(verb)
            if step is None:
                continue
            if step.get("ok") is False:
                lines.append(f"  {verb}  failed: {step['error']}")
            elif verb == "repair_format":
                state = "put back" if step["repaired"] else "already right"
                lines.append(f"  format.json  {step['id']} {state}")
            elif verb == "snapshot":
                state = "written" if step["written"] else "unchanged, not rewritten"
                lines.append(f"  snapshot  {step['key']} {state}")
            else:
                lines.append(
                    f"  {verb}  {counted(step['ops'], 'op')} in "
                    f"{counted(step['objects'], 'object')} ({counted(step['bytes'], 'byte')})"
                )
        click.echo("\n".join(lines))
    if not result["ok"]:
        ctx.exit(1)


@click.command()
@json_option
def demo(as_json: bool) -> None:
    """Watch two laptops share one memory: in a temporary folder, laptop-a writes while
    laptop-b is offline, both sync through a shared folder, and laptop-b recalls laptop-a's
    memory with its provenance. No daemon, no network, nothing left behind.

    \b
    Example:
      chrysalis demo
    """
    from ..demo import run_demo

    result = run_demo(echo=(lambda line: None) if as_json else click.echo)
    if as_json:
        print_json(result)
