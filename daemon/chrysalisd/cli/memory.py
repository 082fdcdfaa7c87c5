"""What the memory holds: remember, recall, fact, forget, ingest."""

from __future__ import annotations

import contextlib
import shutil
import sys
import textwrap
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from chrysalis.client import Routes
from chrysalis.client.routes import bead_body
from chrysalis.core.errors import InvalidInput, PayloadTooLarge
from chrysalis.core.limits import MAX_CONTENT_CHARS
from chrysalis.core.vocab import DEFAULT_ROLE, DEFAULT_STRATEGY, ROLES, STRATEGIES

from ..words import counted
from . import forget_where
from .common import client_for, connect, json_option, memory_names, print_json, shown, span_text
from .receipts import show_receipt, wait_option


@click.command()
@click.argument("text")
@click.option("--id", "id_", help="The bead's id (default: a new UUIDv7).")
@click.option(
    "--role",
    default=DEFAULT_ROLE,
    show_default=True,
    type=click.Choice(ROLES),
)
@click.option("--session", help="The session (conversation) it belongs to.")
@click.option(
    "--importance",
    type=click.FloatRange(0.0, 1.0),
    help="0 to 1; without it, judged from how new the words are to the memory.",
)
@click.option("--tag", "tags", multiple=True, help="A tag; repeat for more.")
@json_option
@click.pass_context
def remember(
    ctx: click.Context,
    text: str,
    id_: str | None,
    role: str,
    session: str | None,
    importance: float | None,
    tags: tuple[str, ...],
    as_json: bool,
) -> None:
    """Store TEXT as a bead ("-" reads it from stdin) and print its id.

    One bead holds at most 8,388,608 characters (longer text is refused before it is
    sent: ``chrysalis ingest`` chunks it).

    A credential in TEXT (an API key, a token, a private key, a password in a URL) is
    replaced with [REDACTED:<kind>] by the daemon before it is stored, and named on stderr
    (daemon setting `secrets`: redact, refuse or off).

    \b
    Example:
      chrysalis remember "deploys go out on Tuesdays" --session ops --tag process
      git log -1 | chrysalis remember - --role tool --json
    """
    content = sys.stdin.read() if text == "-" else text
    if len(content) > MAX_CONTENT_CHARS:  # refused at once, not after sending 10 MB
        raise PayloadTooLarge(
            f"the text is too long for one bead: {len(content):,} characters, at most "
            f"{MAX_CONTENT_CHARS:,}; use chrysalis ingest FILE (it chunks long text)"
        )
    body = bead_body(
        content, id=id_, role=role, session_id=session, importance=importance, tags=tags
    )
    call = Routes.remember_noting(body)
    bead, redacted = client_for(ctx).send(call)
    if redacted:  # on stderr: --json output stays the bead
        counts = Counter((f.get("kind"), f.get("field")) for f in redacted)
        words = ", ".join(f"{n} {kind} in {field}" for (kind, field), n in counts.items())
        click.echo(f"redacted {words}", err=True)
    if as_json:
        print_json(bead)
    else:
        where = f" in session {bead['session_id']}" if bead.get("session_id") else ""
        click.echo(f"remembered {bead['id']} ({bead['role']}{where})")


LINES = 3  # of an item's text in recall, without --full


@click.command()
@click.argument("query")
# -n/--limit as ls and head say it; -k, retrieval's name for it, is kept as its old spelling.
@click.option("-n", "--limit", "-k", "k", type=click.IntRange(min=1), default=10, show_default=True,
              help="How many items (-k is its old spelling).")  # fmt: skip
@click.option("--budget", type=int, help="A token budget for the items' text.")
@click.option(
    "--strategy",
    default=DEFAULT_STRATEGY,
    show_default=True,
    type=click.Choice(STRATEGIES),
)
@click.option("--full", is_flag=True, help=f"Each item's whole text (else {LINES} lines).")
@click.option("--min-score", type=float, help="Leave out items scoring under this.")
@json_option
@click.pass_context
def recall(
    ctx: click.Context,
    query: str,
    k: int,
    budget: int | None,
    strategy: str,
    full: bool,
    min_score: float | None,
    as_json: bool,
) -> None:
    """Find what the memory holds about QUERY, and say why each item matched.

    Each item: its rank, kind and score; where an ingested chunk came from
    (``docs/notes.md:12-30``); its text, wrapped to the terminal (3 lines, ``--full`` for
    all); then why it matched (each signal), the replica it came from and its id.
    ``--memory a,b`` ranks the items of both memories together, each naming its memory.

    \b
    Example:
      chrysalis recall "when do deploys go out?" -n 5
      chrysalis recall "tea" --budget 500 --json | jq '.items[].provenance'
      chrysalis recall "the release plan" --memory work,personal
    """
    names = memory_names(ctx)
    across = names if len(names) > 1 else ()
    call = Routes.recall(query, k, budget, strategy, None, memories=across, min_score=min_score)
    result = client_for(ctx, several=True).raw(call)
    if as_json:
        print_json(result)
        return
    if not result["items"]:
        click.echo("nothing found")
    width = max(40, shutil.get_terminal_size((100, 24)).columns)
    for n, item in enumerate(result["items"], start=1):
        head = f"{n:>2}. [{item['kind']}] {item['score']:.3f}  "
        text, where = _text_and_where(item)
        if where:
            click.echo(head + where)
            head = "    "
        lines = textwrap.wrap(text, width, initial_indent=head, subsequent_indent="    ")
        if not full and len(lines) > LINES:
            lines = lines[:LINES]
            lines[-1] = lines[-1][: width - 2].rstrip() + " …"
        click.echo("\n".join(lines) or head.rstrip())
        ranked = sorted(item["signals"].items(), key=lambda kv: -kv[1])
        why = ", ".join(f"{name} {value:.2f}" for name, value in ranked)
        origin = item["provenance"].get("origin_replica")
        source = f" · from {origin}" if origin else ""
        if within := item["provenance"].get("memory"):
            source = f" · in {within}{source}"
        click.echo(f"    why: {why}{source} · id {item['id']}")
    for note in result["notes"]:
        click.echo(f"note: {note}", err=True)


def _text_and_where(item: dict[str, Any]) -> tuple[str, str]:
    """An item's text on one line, and ``path:start-end`` of each span ref (an ingested
    chunk's file and lines; the path relative to the working directory under it). The
    text's ``source: `` prefix is left out when the span refs say where."""
    text = " ".join(item["text"].split())
    prov = item.get("provenance") or {}
    refs = prov.get("span_refs") or []
    where = ", ".join(span_text(r) for r in refs)
    source = prov.get("source")
    if where and source and text.startswith(f"{source}: "):
        text = text[len(source) + 2 :]
    return text, where


@click.command()
@click.argument("subject")
@click.argument("predicate")
@click.argument("object_", metavar="OBJECT")
@click.option("--type", "type_", default="entity", show_default=True, help="Type of new nodes.")
@click.option("--evidence", multiple=True, help="A bead id the fact comes from; repeatable.")
@json_option
@click.pass_context
def fact(
    ctx: click.Context,
    subject: str,
    predicate: str,
    object_: str,
    type_: str,
    evidence: tuple[str, ...],
    as_json: bool,
) -> None:
    """Record SUBJECT PREDICATE OBJECT in the knowledge graph (nodes made as needed), in one
    atomic write.

    Nodes are named by their text (lowercased, spaces to dashes), so "Alice" in two facts
    is one node; the same fact twice is one edge. On a one-value predicate (lives_in,
    works_at, ... as configured) the fact ends the subject's earlier one with another object.

    \b
    Example:
      chrysalis fact Alice works_at "Acme Corp"
      chrysalis fact alice prefers tea --evidence 0190c3a2-...
    """
    call = Routes.add_fact(subject, predicate, object_, type_, 1.0, evidence)
    edge = client_for(ctx).raw(call)
    if as_json:
        print_json(edge)
    else:
        click.echo(f"{edge['source']} -[{predicate}]-> {edge['target']}  (edge {edge['id']})")


@click.command()
@click.argument("bead_id", required=False)
@forget_where.selector_options
@wait_option
@click.pass_context
def forget(
    ctx: click.Context,
    bead_id: str | None,
    session_id: str | None,
    path: str | None,
    tag: str | None,
    query: str | None,
    before: float | None,
    after: float | None,
    role: str | None,
    dry_run: bool,
    yes: bool,
    as_json: bool,
    wait: float | None,
) -> None:
    """Forget a bead, or every bead a selector matches: the content leaves this laptop now
    and the others when they sync.

    A selector (every flag given must hold) first shows what matches and asks once; then
    exactly those beads are forgotten (if the match changed meanwhile, nothing is). Any
    answer but y cancels: "cancelled: nothing was changed", exit status 1. A query
    matches the beads holding every one of its words, never by similarity.

    Either way the forget receipt is printed (one for all the beads a selector forgot): each
    place the content went (this laptop's files, the other laptops, the remote's objects,
    Zep) and whether it is gone there yet; ``--wait`` waits until no place is pending and
    exits 3 if some place still holds it. Forgetting a bead ID again only prints the
    receipt.

    \b
    Example:
      chrysalis forget 0190c3a2-7d4e-7c1a-9f00-1234567890ab --wait 60
      chrysalis forget --session chat-7 --dry-run
      chrysalis forget --path docs/ --yes --wait 60
      chrysalis forget --query "old api key" --until 2026-01-01
    """
    chosen = forget_where.selector_of(
        {"session_id": session_id, "path": path, "tag": tag, "query": query,
         "before": before, "after": after, "role": role}
    )  # fmt: skip
    if chosen or bead_id is None:
        if bead_id is not None:
            raise click.UsageError("give a bead ID or a selector, not both")
        if wait is not None and dry_run:
            raise click.UsageError("--wait goes with a forget, not a --dry-run")
        forget_where.run(ctx, chosen, dry_run=dry_run, yes=yes, as_json=as_json, wait=wait)
        return
    if dry_run or yes:
        raise click.UsageError("--dry-run and --yes go with a selector")
    client = client_for(ctx)
    client.forget(bead_id)
    show_receipt(client, bead_id, wait, as_json)


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option("--session", help="Put every chunk in this session (default: one per file).")
@click.option(
    "--kind",
    type=click.Choice(["markdown", "python", "code", "text"]),
    help="How to chunk (default: by the file's extension).",
)
@click.option("--source", default="stdin", show_default=True, help="The name of text read from -.")
@json_option
@click.pass_context
def ingest(
    ctx: click.Context,
    paths: tuple[str, ...],
    session: str | None,
    kind: str | None,
    source: str,
    as_json: bool,
) -> None:
    """Store files (text, Markdown, source code) or stdin as memories, chunked on headings,
    paragraphs and functions, each pointing back at its file and lines. Ingesting an unchanged
    file again changes nothing; a changed file replaces its old chunks.

    \b
    Example:
      chrysalis ingest README.md docs/
      git log -5 | chrysalis ingest - --source git-log
    """
    obj = ctx.ensure_object(dict)
    client = ctx.with_resource(connect(obj.get("socket"), timeout=600, memory=obj.get("memory")))
    opts = {"kind": kind, "session_id": session}
    replies = []
    for arg in paths:
        if arg == "-":
            replies.append(client.ingest(text=sys.stdin.read(), source=source, **opts))
            continue
        path = Path(arg).expanduser().absolute()
        if path.is_dir():
            from chrysalis.ingest.files import iter_files

            found, each, inside = list(iter_files(path)), [], path.resolve()
            with click.progressbar(
                found, label=f"ingesting {arg}", file=sys.stderr, hidden=as_json or len(found) < 2
            ) as bar:
                for file in bar:  # not text: refused, the folder pass reports it
                    if not file.resolve().is_relative_to(inside):  # a link out of it:
                        continue  # refused by the folder pass, which says so
                    with contextlib.suppress(InvalidInput):
                        each.append(client.ingest(path=str(file), **opts))
            # once more for the whole folder: each file is unchanged now; files ingested from
            # it before that are gone get their chunks forgotten, binary ones are reported
            folder = client.ingest(path=str(path), **opts)
            merged = {
                k: sum(r.get(k, 0) for r in each)
                for k in ("chunks", "added", "unchanged", "redacted")
            }
            merged["removed"] = sum(r["removed"] for r in each) + folder["removed"]
            merged["files"] = [f for r in each for f in r["files"]]
            merged["skipped_files"] = folder["skipped_files"]
            replies.append(merged)
        else:
            size = path.stat().st_size if path.is_file() else 0
            with _working(f"ingesting {arg} ({size / 1e6:.1f} MB)", hidden=as_json or size < BIG):
                replies.append(client.ingest(path=str(path), **opts))
    counts = ("chunks", "added", "unchanged", "removed", "redacted")
    totals = {k: sum(r.get(k, 0) for r in replies) for k in counts}
    if as_json:
        print_json({"inputs": replies, **totals})
        return
    for reply in replies:
        for file in reply["files"]:  # UTF-8 goes without saying
            if file.get("encoding", "utf-8") != "utf-8":
                click.echo(f"read {shown(file['source'])} as {file['encoding']}", err=True)
        for skip in reply["skipped_files"]:
            click.echo(f"skipped {shown(skip['path'])}: {skip['why']}", err=True)
    files = sum(len(r["files"]) for r in replies)
    click.echo(
        f"{counted(files, 'file')}, {counted(totals['chunks'], 'chunk')}: {totals['added']} added, "
        f"{totals['unchanged']} unchanged, {totals['removed']} removed"
    )
    if totals["redacted"]:
        click.echo(
            f"redacted {counted(totals['redacted'], 'secret')} before storing them", err=True
        )


BIG = 1_000_000  # bytes: a file this big takes seconds to chunk and embed; say so meanwhile


@contextlib.contextmanager
def _working(label: str, *, hidden: bool) -> Iterator[None]:
    """``label…`` on stderr while the block runs (the daemon answers an ingest only when it is
    done); on a terminal, with the seconds going by, then how long it took."""
    if hidden:
        yield
        return
    click.echo(f"{label}…", err=True, nl=not sys.stderr.isatty())
    if not sys.stderr.isatty():
        yield
        return
    start, done = time.monotonic(), threading.Event()

    def tick() -> None:
        while not done.wait(1.0):
            click.echo(f"\r{label}… {time.monotonic() - start:.0f} s", err=True, nl=False)

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        yield
    finally:
        done.set()
        ticker.join()
        click.echo(f"\r{label}… {time.monotonic() - start:.1f} s", err=True)
