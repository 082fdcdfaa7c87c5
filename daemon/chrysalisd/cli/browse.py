"""Looking around the memory: ``ls`` (beads and sessions), ``show`` (one bead, whole) and
``kg`` (a node's neighbours; removing a fact or a node)."""

from __future__ import annotations

import contextlib
import shutil
import sys
import time
from typing import Any

import click

from chrysalis.client import Routes
from chrysalis.core.errors import InvalidInput, NotFound

from ..words import counted
from .common import client_for, epoch_or_text, json_option, print_json, span_text
from .forget_where import filter_options, selector_of


def when(ts: float | None, seconds: bool = False) -> str:
    """Local time, to the minute (or second): what a person reads in a listing."""
    if ts is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M", time.localtime(ts))


def _width() -> int | None:
    """The terminal's width; None when the output goes to a pipe or a file (no cut: a grep
    sees every word)."""
    return shutil.get_terminal_size().columns if sys.stdout.isatty() else None


@click.command("ls")
@click.option("-n", "--limit", "limit", type=click.IntRange(1, 1000), default=20,
              show_default=True, help="How many beads (the newest).")  # fmt: skip
@filter_options
@click.option("--sessions", "list_sessions", is_flag=True,
              help="List the sessions instead: beads in each, first and last time.")  # fmt: skip
@json_option
@click.pass_context
def ls(
    ctx: click.Context,
    limit: int,
    session_id: str | None,
    tag: str | None,
    role: str | None,
    path: str | None,
    query: str | None,
    after: float | None,
    before: float | None,
    list_sessions: bool,
    as_json: bool,
) -> None:
    """List the newest beads, oldest first, one line each (time, id, role, session, text),
    or with --sessions the sessions. Every filter given must hold.

    \b
    Example:
      chrysalis ls                          # the 20 newest beads
      chrysalis ls --session chat-7 -n 100
      chrysalis ls --tag decision --since 2026-11-01
      chrysalis ls --path docs/             # chunks ingested from files under docs/
      chrysalis ls --sessions
    """
    client = client_for(ctx)
    if list_sessions:
        rows = client.raw(Routes.sessions)
        if as_json:
            print_json(rows)
        elif not rows:
            click.echo("no sessions yet")
        else:
            wide = max(7, *(len(r["session_id"]) for r in rows))
            click.echo(f"{'session':<{wide}}  {'beads':>6}  {'first':<16}  last")
            for r in rows:
                click.echo(
                    f"{r['session_id']:<{wide}}  {r['beads']:>6,}  {when(r['first_ts']):<16}  "
                    f"{when(r['last_ts'])}"
                )
        return
    filters = selector_of(  # a path made absolute: the daemon matches it as ingest recorded it
        {"tag": tag, "role": role, "path": path, "query": query, "after": after, "before": before}
    )
    beads = client.raw(Routes.last_beads(limit, session_id, filters))
    if as_json:
        print_json(beads)
        return
    if not beads:
        click.echo("no beads match" if filters or session_id else "no beads yet")
        return
    width = _width()
    for b in beads:
        head = f"{when(b['ts'])}  {b['id']}  {b['role']:<9}"
        if b.get("session_id"):
            head += f" {b['session_id']}:"
        text = " ".join(b["content"].split()) or "(in a blob)"
        room = len(text) if width is None else max(30, width - len(head) - 1)
        click.echo(f"{head} {text if len(text) <= room else text[: room - 1] + '…'}")
    if len(beads) == limit:
        click.echo(f"(the newest {limit}; more with -n, or narrow with filters)", err=True)


@click.command()
@click.argument("bead_id")
@json_option
@click.pass_context
def show(ctx: click.Context, bead_id: str, as_json: bool) -> None:
    """Show one bead whole: its text, where it came from (file:line for ingested text), its
    session, tags, importance and what it was derived from.

    \b
    Example:
      chrysalis show 0193a4c2-7d4e-7c1a-9f00-1234567890ab
      chrysalis show 0193a4c2-... --json | jq .span_refs
    """
    bead = client_for(ctx).raw(Routes.get_bead(bead_id))
    if as_json:
        print_json(bead)
        return
    rows = [("id", bead["id"]), ("time", when(bead["ts"], seconds=True)), ("role", bead["role"])]
    if bead.get("session_id"):
        rows.append(("session", bead["session_id"]))
    if bead.get("tags"):
        rows.append(("tags", ", ".join(bead["tags"])))
    rows.append(("importance", f"{bead['importance']:.2f}"))
    if bead.get("source"):
        rows.append(("source", bead["source"]))
    for ref in bead.get("span_refs") or ():
        rows.append(("from", span_text(ref)))
    if bead.get("derived_from"):
        by = f" by {bead['derived_by']}" if bead.get("derived_by") else ""
        rows.append(("derived", f"from {counted(len(bead['derived_from']), 'bead')}{by}"))
        rows += [("", d) for d in bead["derived_from"]]
    for name, value in rows:
        click.echo(f"{name:<11}{value}")
    click.echo()
    click.echo(bead["content"])


@click.group()
def kg() -> None:
    """The knowledge graph: a node's neighbours, and removing a fact or a node. Add a fact
    with `chrysalis fact`.

    \b
    Example:
      chrysalis kg neighbors alice
      chrysalis kg rm alice works_at "Acme Corp"
    """


def _fact_line(edge: dict[str, Any], names: dict[str, str]) -> str:
    src = names.get(edge["source"], edge["source"])
    dst = names.get(edge["target"], edge["target"])
    held = []
    if edge.get("valid_at") is not None:
        held.append(f"since {when(edge['valid_at'])}")
    if edge.get("invalid_at") is not None:
        held.append(f"until {when(edge['invalid_at'])}")
    span = f"{', '.join(held)}; " if held else ""
    return f"{src} -[{edge['predicate']}]-> {dst}  ({span}edge {edge['id']})"


@kg.command()
@click.argument("node")
@click.option("--depth", type=click.IntRange(1, 3), default=1, show_default=True)
@click.option("--as-of", help="The facts that held then (ISO 8601 or epoch seconds).")
@click.option("--all", "include_invalid", is_flag=True,
              help="Every fact, also those superseded or ended.")  # fmt: skip
@json_option
@click.pass_context
def neighbors(
    ctx: click.Context,
    node: str,
    depth: int,
    as_of: str | None,
    include_invalid: bool,
    as_json: bool,
) -> None:
    """The facts around NODE (an id or an entity's name): each as subject -[predicate]->
    object, with when it held and its edge id, nearest first.

    \b
    Example:
      chrysalis kg neighbors alice --depth 2
      chrysalis kg neighbors alice --as-of 2026-01-01 --json
    """
    client = client_for(ctx)
    start = client.raw(Routes.get_node(node))
    found = client.raw(Routes.neighbors(start["id"], depth, epoch_or_text(as_of), include_invalid))
    if as_json:
        print_json({"node": start, "neighbors": found})
        return
    names = {start["id"]: start.get("name") or start["id"]}
    names |= {n["node"]["id"]: n["node"].get("name") or n["node"]["id"] for n in found}
    click.echo(f"{names[start['id']]} ({start['type']}, node {start['id']})")
    if not found:
        if include_invalid:
            click.echo("  no facts")
        else:  # the time the walk was asked about, in the words it was asked in
            at = f"held on {as_of}" if as_of is not None else "hold now"
            click.echo(f"  no facts {at} (--all for every fact, ended ones too)")
    for n in found:
        click.echo("  " * n["depth"] + _fact_line(n["edge"], names))


def _norm(text: str) -> str:
    return "-".join(text.lower().split())


@kg.command()
@click.argument("what", nargs=-1, required=True)
@click.pass_context
def rm(ctx: click.Context, what: tuple[str, ...]) -> None:
    """Remove a fact (SUBJECT PREDICATE OBJECT, or its edge id) or a node (its id or name;
    its facts are hidden with it). The removal syncs to the other laptops like any change.

    \b
    Example:
      chrysalis kg rm alice works_at "Acme Corp"
      chrysalis kg rm e-3f2a9c0d1b2e4f5a6b7c8d9e
      chrysalis kg rm acme-corp
    """
    client = client_for(ctx)
    if len(what) == 3:
        subject, predicate, obj = what
        start = client.raw(Routes.get_node(subject))
        out = client.raw(Routes.neighbors(start["id"], 1, None, True))
        hits = [
            n["edge"] for n in out
            if n["direction"] == "out" and n["edge"]["predicate"] == predicate
            and _norm(obj) in {_norm(n["node"]["id"]), _norm(n["node"].get("name") or "")}
        ]  # fmt: skip
        if not hits:
            raise NotFound(f"no fact {subject} -[{predicate}]-> {obj}")
        for edge in hits:
            client.raw(Routes.remove_edge(edge["id"]))
            click.echo(f"removed {subject} -[{predicate}]-> {obj} (edge {edge['id']})")
        return
    if len(what) != 1:
        raise InvalidInput("give an edge id, a node, or a fact as SUBJECT PREDICATE OBJECT")
    target = what[0]
    with contextlib.suppress(NotFound):
        client.raw(Routes.remove_edge(target))
        click.echo(f"removed edge {target}")
        return
    node = client.raw(Routes.get_node(target))  # by name too; NotFound says which
    client.raw(Routes.remove_node(node["id"]))
    click.echo(f"removed node {node.get('name') or node['id']} ({node['id']}) and its facts")
