"""The ``chrysalis`` command: the daemon, and a client for it.

Client commands talk to the daemon over its socket (``--socket`` or ``CHRYSALIS_SOCKET``) and
import none of the storage engine, so they start fast. Every command that prints data takes
``--json``; its shape is stable. Library errors become one ``error:`` line and exit status 1.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import click

from chrysalis import __version__
from chrysalis.client import Client, Routes
from chrysalis.errors import ChrysalisError, InvalidInput

F = TypeVar("F", bound=Callable[..., Any])
IMPORT_CHUNK_LINES = 1000
IMPORT_CHUNK_BYTES = 8 * 1024 * 1024


def _client(ctx: click.Context) -> Client:
    obj = ctx.ensure_object(dict)
    if "client" not in obj:
        obj["client"] = ctx.with_resource(Client(obj.get("socket")))
    client: Client = obj["client"]
    return client


def json_option(f: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(f)


def _print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


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
@click.version_option(__version__, prog_name="chrysalis")
@click.pass_context
def main(ctx: click.Context, socket: Path | None) -> None:
    """Chrysalis: a local-first memory for AI agents.

    \b
    Example:
      chrysalis daemon &                     # serve ~/.local/share/chrysalis
      chrysalis remember "the user prefers tea" --session s1
      chrysalis recall "what does the user drink?"
    """
    ctx.ensure_object(dict)["socket"] = socket


# ---- the daemon ----------------------------------------------------------------------------


@main.command()
@click.option(
    "--data-dir", type=click.Path(file_okay=False, path_type=Path), help="[env CHRYSALIS_DATA_DIR]"
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A TOML file [env CHRYSALIS_CONFIG; default $XDG_CONFIG_HOME/chrysalis/config.toml].",
)
@click.option(
    "--embedder",
    help='"auto", "deterministic", "ollama[:MODEL]" or "sentence-transformers:PATH" '
    "[env CHRYSALIS_EMBEDDER].",
)
@click.option(
    "--remote",
    help="Sync through file:///shared/folder or s3://bucket/prefix [env CHRYSALIS_REMOTE].",
)
@click.option(
    "--sync-key-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Encrypt what goes to the remote: a file with 64 hex digits or a passphrase "
    "[env CHRYSALIS_SYNC_KEY_FILE].",
)
@click.pass_context
def daemon(
    ctx: click.Context,
    data_dir: Path | None,
    config_file: Path | None,
    embedder: str | None,
    remote: str | None,
    sync_key_file: Path | None,
) -> None:
    """Run the daemon in the foreground (logs on stderr; SIGTERM or Ctrl-C stops it).

    Settings come from defaults, then the TOML file, then CHRYSALIS_* variables, then flags.

    \b
    Example:
      chrysalis daemon --data-dir ~/agent-memory
      chrysalis daemon --remote s3://my-bucket/agent --sync-key-file ~/.config/chrysalis/key
      CHRYSALIS_EMBEDDER=deterministic chrysalis --socket /tmp/c.sock daemon
    """
    from .config import load_settings
    from .server import main as serve

    socket = ctx.obj.get("socket")
    overrides = {
        "data_dir": data_dir,
        "socket": socket,
        "embedder": embedder,
        "remote": remote,
        "sync_key_file": sync_key_file,
    }
    try:
        settings = load_settings(config_file, overrides)
    except InvalidInput as exc:
        click.echo(f"error: {exc.message}", err=True)
        ctx.exit(2)
    ctx.exit(serve(settings))


# ---- status --------------------------------------------------------------------------------


@main.command()
@json_option
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Show the replica, its state digest, counts, indexes, embedder, jobs and sync state.

    \b
    Example:
      chrysalis status
      chrysalis status --json | jq .state_digest
    """
    s = _client(ctx).status()
    if as_json:
        _print_json(s)
        return
    c = s["counts"]
    index = s["index"]
    behind = index["behind"]
    vectors = index.get("vectors")
    lines = [
        f"replica   {s['replica_id']}  (chrysalis {s['version']}, pid {s['pid']}, "
        f"up {_ago(s['uptime_s'])})",
        f"data      {s['data_dir']}",
        f"socket    {s['socket']}",
        f"digest    {s['state_digest']}",
        f"beads     {c['beads']:,}   ops {c['ops']:,}   pending {c['pending_ops']:,}   "
        f"embeddings {c['embeddings']:,}",
        f"keyword   {index['keyword']['items']:,} items, {behind['keyword']} ops behind",
    ]
    if vectors:
        lines.append(
            f"vectors   {vectors['items']:,} items ({vectors['kind']}), "
            f"{behind.get('vectors', 0)} ops behind"
        )
    emb = s.get("embedder")
    lines.append(f"embedder  {emb['provider']} {emb['model']}" if emb else "embedder  none")
    if index.get("last_error"):
        lines.append(f"index err {index['last_error']}")
    for job in s["jobs"]:
        state = f"error: {job['last_error']}" if job["last_error"] else "ok"
        lines.append(f"job       {job['name']}: {job['runs']} runs, {state}")
    lines += _remote_lines(s["sync"]["remote"])
    click.echo("\n".join(lines))


def _remote_lines(r: dict[str, Any] | None) -> list[str]:
    if r is None:
        return ["sync      no remote configured"]
    lock = " (encrypted)" if r["encrypted"] else ""
    out = [f"sync      {r['url']}{lock}"]
    for verb in ("push", "pull"):
        last = r[f"last_{verb}"]
        if last["at"] is None:
            out.append(f"  {verb}    not yet")
        else:
            state = "ok" if last["ok"] else f"failed: {last['error']}"
            out.append(
                f"  {verb}    {_ago(time.time() - last['at'])} ago, {state}, {last['ops']} ops"
            )
    pending = "?" if r["pending_ops"] is None else f"{r['pending_ops']:,}"
    out.append(f"  pending {pending} ops to push; {r['consecutive_errors']} errors in a row")
    if r["stopped"]:
        out.append(f"  STOPPED {r['stopped']}")
    for rej in r["rejected"]:
        out.append(f"  rejected {rej['key']}: {rej['error']}")
    for peer in r["peers"]:
        seen = _ago(time.time() - peer["last_seen"]) + " ago" if peer["last_seen"] else "never"
        gone = "  (decommissioned)" if peer["decommissioned"] else ""
        out.append(
            f"  peer    {peer['replica']} on {peer['host']}: lag {peer['lag']} ops, "
            f"seen {seen}{gone}"
        )
    return out


# ---- ingest ----------------------------------------------------------------------------------


@main.command()
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
    client = ctx.with_resource(Client(obj.get("socket"), timeout=600))
    opts = {"kind": kind, "session_id": session}
    replies = []
    for arg in paths:
        if arg == "-":
            replies.append(client.ingest(text=sys.stdin.read(), source=source, **opts))
            continue
        path = Path(arg).expanduser().absolute()
        if path.is_dir():
            from chrysalis.ingest import iter_files

            found, each = list(iter_files(path)), []
            with click.progressbar(
                found, label=f"ingesting {arg}", file=sys.stderr, hidden=as_json or len(found) < 2
            ) as bar:
                for file in bar:  # binary or not UTF-8: refused, the folder pass reports it
                    with contextlib.suppress(InvalidInput):
                        each.append(client.ingest(path=str(file), **opts))
            # once more for the whole folder: each file is unchanged now; files ingested from
            # it before that are gone get their chunks forgotten, binary ones are reported
            folder = client.ingest(path=str(path), **opts)
            merged = {k: sum(r[k] for r in each) for k in ("chunks", "added", "unchanged")}
            merged["removed"] = sum(r["removed"] for r in each) + folder["removed"]
            merged["files"] = [f for r in each for f in r["files"]]
            merged["skipped_files"] = folder["skipped_files"]
            replies.append(merged)
        else:
            replies.append(client.ingest(path=str(path), **opts))
    totals = {k: sum(r[k] for r in replies) for k in ("chunks", "added", "unchanged", "removed")}
    if as_json:
        _print_json({"inputs": replies, **totals})
        return
    for reply in replies:
        for skip in reply["skipped_files"]:
            click.echo(f"skipped {skip['path']}: {skip['why']}", err=True)
    files = sum(len(r["files"]) for r in replies)
    click.echo(
        f"{files} file(s), {totals['chunks']} chunks: {totals['added']} added, "
        f"{totals['unchanged']} unchanged, {totals['removed']} removed"
    )


# ---- agents ----------------------------------------------------------------------------------


@main.command()
@json_option
def demo(as_json: bool) -> None:
    """Watch two laptops share one memory: in a temporary folder, laptop-a writes while
    laptop-b is offline, both sync through a shared folder, and laptop-b recalls laptop-a's
    memory with its provenance. No daemon, no network, nothing left behind.

    \b
    Example:
      chrysalis demo
    """
    from .demo import run_demo

    result = run_demo(echo=(lambda line: None) if as_json else click.echo)
    if as_json:
        _print_json(result)


@main.command()
@click.pass_context
def mcp(ctx: click.Context) -> None:
    """Serve the memory to an agent over MCP (stdio), through the running daemon.

    Tools: remember, recall, add_fact, forget, get_persona, update_persona, list_skills,
    get_skill, put_skill, memory_status. Register it in an MCP client as the command
    `chrysalis mcp` (see the README); the socket comes from --socket or CHRYSALIS_SOCKET.

    \b
    Example:
      chrysalis mcp
      CHRYSALIS_SOCKET=/tmp/agent.sock chrysalis mcp
    """
    from .mcp_server import main as serve_mcp

    serve_mcp(ctx.ensure_object(dict).get("socket"))


# ---- doctor ----------------------------------------------------------------------------------


@main.command()
@json_option
@click.pass_context
def doctor(ctx: click.Context, as_json: bool) -> None:
    """Check the socket, the data dir, the indexes against LMDB, the embedder (Ollama), the
    remote (reachable, writable, format, clock skew), sync and Zep; say what to do for each
    problem. Exits 1 if any check fails.

    \b
    Example:
      chrysalis doctor
    """
    from chrysalis.client import default_socket_path

    from .doctor import local_checks

    socket = Path(ctx.ensure_object(dict).get("socket") or default_socket_path())
    checks = local_checks(socket)
    if all(c["status"] != "error" for c in checks):
        try:
            checks += _client(ctx).doctor()["checks"]
        except ChrysalisError as exc:
            checks.append(
                {"check": "daemon", "status": "error", "detail": exc.message,
                 "fix": "restart it: `chrysalis daemon`"}
            )  # fmt: skip
    ok = all(c["status"] != "error" for c in checks)
    if as_json:
        _print_json({"ok": ok, "checks": checks})
    else:
        marks = {"ok": "ok  ", "warn": "WARN", "error": "FAIL"}
        for c in checks:
            click.echo(f"{marks[c['status']]}  {c['check']:<13} {c['detail']}")
            if c["status"] != "ok" and c["fix"]:
                click.echo(f"      {'':<13} -> {c['fix']}")
    if not ok:
        ctx.exit(1)


# ---- sync ------------------------------------------------------------------------------------


@main.command()
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
@json_option
@click.pass_context
def sync(
    ctx: click.Context, only: str | None, snapshot: bool, decommission: str | None, as_json: bool
) -> None:
    """Push to the remote and pull from it now (and every mirror), then say what moved.

    Exits 1 if a step failed (the daemon retries on its schedule anyway).

    \b
    Example:
      chrysalis sync
      chrysalis sync --pull --json
      chrysalis sync --snapshot
    """
    obj = ctx.ensure_object(dict)
    client = ctx.with_resource(Client(obj.get("socket"), timeout=600))
    result = client.sync(
        push=only != "pull", pull=only != "push", snapshot=snapshot, decommission=decommission
    )
    if as_json:
        _print_json(result)
    else:
        r = result["remote"]
        lines = [f"remote  {r['url']}"]
        for verb in ("push", "pull", "snapshot"):
            step = r.get(verb)
            if step is None:
                continue
            if step.get("ok") is False:
                lines.append(f"  {verb}  failed: {step['error']}")
            elif verb == "snapshot":
                state = "written" if step["written"] else "unchanged, not rewritten"
                lines.append(f"  snapshot  {step['key']} {state}")
            else:
                lines.append(
                    f"  {verb}  {step['ops']} ops in {step['objects']} objects "
                    f"({step['bytes']:,} bytes)"
                )
        click.echo("\n".join(lines))
    if not result["ok"]:
        ctx.exit(1)


def _ago(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f}s"
    if seconds < 5400:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"


# ---- beads and recall ----------------------------------------------------------------------


@main.command()
@click.argument("text")
@click.option("--id", "id_", help="The bead's id (default: a new UUIDv7).")
@click.option(
    "--role",
    default="user",
    show_default=True,
    type=click.Choice(["user", "assistant", "system", "tool", "note"]),
)
@click.option("--session", help="The session (conversation) it belongs to.")
@click.option("--importance", type=float, default=0.5, show_default=True, help="0 to 1.")
@click.option("--tag", "tags", multiple=True, help="A tag; repeat for more.")
@json_option
@click.pass_context
def remember(
    ctx: click.Context,
    text: str,
    id_: str | None,
    role: str,
    session: str | None,
    importance: float,
    tags: tuple[str, ...],
    as_json: bool,
) -> None:
    """Store TEXT as a bead ("-" reads it from stdin) and print its id.

    \b
    Example:
      chrysalis remember "deploys go out on Tuesdays" --session ops --tag process
      git log -1 | chrysalis remember - --role tool --json
    """
    body = {
        "content": sys.stdin.read() if text == "-" else text, "id": id_, "role": role,
        "session_id": session, "importance": importance, "tags": list(tags),
    }  # fmt: skip
    bead = _client(ctx).raw(Routes.remember({k: v for k, v in body.items() if v is not None}))
    if as_json:
        _print_json(bead)
    else:
        where = f" in session {bead['session_id']}" if bead.get("session_id") else ""
        click.echo(f"remembered {bead['id']} ({bead['role']}{where})")


@main.command()
@click.argument("query")
@click.option("-k", type=int, default=10, show_default=True, help="How many items.")
@click.option("--budget", type=int, help="A token budget for the items' text.")
@click.option(
    "--strategy",
    default="fusion",
    show_default=True,
    type=click.Choice(["fusion", "emb", "keyword", "kg", "beads"]),
)
@json_option
@click.pass_context
def recall(
    ctx: click.Context, query: str, k: int, budget: int | None, strategy: str, as_json: bool
) -> None:
    """Find what the memory holds about QUERY, and say why each item matched.

    \b
    Example:
      chrysalis recall "when do deploys go out?" -k 5
      chrysalis recall "tea" --budget 500 --json | jq '.items[].provenance'
    """
    result = _client(ctx).raw(Routes.recall(query, k, budget, strategy, None))
    if as_json:
        _print_json(result)
        return
    if not result["items"]:
        click.echo("nothing found")
    for n, item in enumerate(result["items"], start=1):
        text = " ".join(item["text"].split())
        click.echo(f"{n:>2}. [{item['kind']}] {item['score']:.3f}  {text[:110]}")
        ranked = sorted(item["signals"].items(), key=lambda kv: -kv[1])
        why = ", ".join(f"{name} {value:.2f}" for name, value in ranked)
        origin = item["provenance"].get("origin_replica")
        source = f" · from {origin}" if origin else ""
        click.echo(f"    why: {why}{source} · id {item['id']}")
    for note in result["notes"]:
        click.echo(f"note: {note}", err=True)


@main.command()
@click.argument("subject")
@click.argument("predicate")
@click.argument("object_")
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
    is one node; the same fact twice is one edge.

    \b
    Example:
      chrysalis fact Alice works_at "Acme Corp"
      chrysalis fact alice prefers tea --evidence 0190c3a2-...
    """
    call = Routes.add_fact(subject, predicate, object_, type_, 1.0, evidence)
    edge = _client(ctx).raw(call)
    if as_json:
        _print_json(edge)
    else:
        click.echo(f"{edge['source']} -[{predicate}]-> {edge['target']}  (edge {edge['id']})")


@main.command()
@click.argument("bead_id")
@click.pass_context
def forget(ctx: click.Context, bead_id: str) -> None:
    """Forget a bead: its content leaves this laptop now and the others when they sync.

    \b
    Example:
      chrysalis forget 0190c3a2-7d4e-7c1a-9f00-1234567890ab
    """
    _client(ctx).forget(bead_id)
    click.echo(f"forgot {bead_id}")


# ---- persona and skills --------------------------------------------------------------------


def _read_json(file: str) -> Any:
    text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except ValueError as exc:
        raise InvalidInput(f"{file}: not JSON: {exc}") from None


@main.group()
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
    p = _client(ctx).raw(Routes.persona)
    if as_json:
        _print_json(p)
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
    p = _client(ctx).raw(Routes.put_persona(_read_json(file)))
    if as_json:
        _print_json(p)
    else:
        click.echo(f"persona set: {p['name'] or '(unnamed)'}")


@main.group()
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
    data = _read_json(file)
    if not isinstance(data, dict):
        raise InvalidInput(f"{file}: expected a JSON object with id and name")
    s = _client(ctx).raw(Routes.put_skill(data))
    if as_json:
        _print_json(s)
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
    skills = _client(ctx).raw(Routes.skills)
    if as_json:
        _print_json(skills)
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
    s = _client(ctx).raw(Routes.get_skill(skill_id))
    if as_json:
        _print_json(s)
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
    _client(ctx).delete_skill(skill_id)
    click.echo(f"skill {skill_id} removed")


# ---- export and import ---------------------------------------------------------------------


@main.command()
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@click.pass_context
def export(ctx: click.Context, file: str) -> None:
    """Write every visible item to FILE as JSON Lines ("-" for stdout).

    \b
    Example:
      chrysalis export backup.jsonl
    """
    data = _client(ctx).export()
    if file == "-":
        sys.stdout.buffer.write(data)
        return
    Path(file).write_bytes(data)
    items = data.count(b"\n") - 1  # the header is not an item
    click.echo(f"exported {items} items to {file}", err=True)


@main.command("import")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--format",
    "format_",
    type=click.Choice(["chrysalis", "locomo"]),
    default="chrysalis",
    show_default=True,
    help="chrysalis: JSON Lines from `chrysalis export`; locomo: a LoCoMo conversation file "
    "(each turn a bead, each session a session).",
)
@json_option
@click.pass_context
def import_(ctx: click.Context, file: str, format_: str, as_json: bool) -> None:
    """Load FILE made by `chrysalis export` ("-" for stdin), or a public conversation set.
    Items already here are left alone, so importing twice changes nothing.

    \b
    Example:
      chrysalis import backup.jsonl
      chrysalis import --format locomo locomo10.json && chrysalis recall "Caroline's job"
    """
    client = _client(ctx)
    if format_ == "locomo":
        from .locomo import import_locomo

        counts = import_locomo(client, file)
        if as_json:
            _print_json(counts)
        else:
            click.echo(
                f"imported {counts['added']} turns from {counts['conversations']} conversations "
                f"({counts['sessions']} sessions); {counts['unchanged']} already here"
            )
        return
    stream = sys.stdin.buffer if file == "-" else open(file, "rb")  # noqa: SIM115
    totals: dict[str, dict[str, int]] = {"added": {}, "unchanged": {}}
    forgotten = 0
    with stream:
        for chunk in _chunks(stream):
            got = client.import_lines(chunk)
            for key in ("added", "unchanged"):
                for kind, n in got[key].items():
                    totals[key][kind] = totals[key].get(kind, 0) + n
            forgotten += got["forgotten"]
    if as_json:
        _print_json({**totals, "forgotten": forgotten})
        return
    added = sum(totals["added"].values())
    same = sum(totals["unchanged"].values())
    click.echo(f"imported {added} items, {same} already here, {forgotten} forgotten")


def _chunks(stream: Any) -> Iterator[bytes]:
    """Lines in requests of at most IMPORT_CHUNK_LINES lines / IMPORT_CHUNK_BYTES bytes."""
    batch: list[bytes] = []
    size = 0
    for line in stream:
        batch.append(line)
        size += len(line)
        if len(batch) >= IMPORT_CHUNK_LINES or size >= IMPORT_CHUNK_BYTES:
            yield b"".join(batch)
            batch, size = [], 0
    if batch:
        yield b"".join(batch)
