"""The daemon itself: run it, show its status, check it (`daemon`, `status`, `doctor`)."""

from __future__ import annotations

import gc
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import click

from chrysalis.client import Routes
from chrysalis.core.errors import ChrysalisError

from ..words import counted
from .common import ago, client_for, connect, json_option, print_json
from .settings import daemon_options, explain

if TYPE_CHECKING:
    from chrysalis.client import Client


@click.command()
@daemon_options
@click.option(
    "--detach",
    is_flag=True,
    help="Run in the background: return once the socket answers; output to "
    "<data_dir>/daemon.log (stop it with `chrysalis stop`).",
)
@click.pass_context
def daemon(ctx: click.Context, /, config_file: Path | None, detach: bool, **flags: Any) -> None:
    """Run the daemon in the foreground (logs on stderr; SIGTERM or Ctrl-C stops it), or in
    the background with --detach.

    Settings come from defaults, then the TOML file, then CHRYSALIS_* variables, then flags
    (`chrysalis config` shows them and where each came from). A start that fails prints one
    `error:` line and exits 2 when a setting is malformed, 1 otherwise (see
    docs/operations.md).

    \b
    Example:
      chrysalis daemon --data-dir ~/agent-memory
      chrysalis daemon --detach && chrysalis status && chrysalis stop
      chrysalis daemon --remote s3://my-bucket/agent --sync-key-file ~/.config/chrysalis/key
      CHRYSALIS_EMBEDDER=deterministic chrysalis --socket /tmp/c.sock daemon
    """
    collecting = gc.isenabled()
    if not detach:
        # Most of what a start makes (modules, schemas, the indexes) lives as long as the
        # daemon: the collector's ~230 passes over it as it grew cost ~0.1 s of CPU a start
        # more than one full collection at the end. Off until the server has collected once
        # and frozen what is left, before it serves (`server.run`'s ``freeze``), then on.
        gc.disable()
    try:
        explained = explain(ctx, config_file, flags)
        settings = explained.settings
        if detach:
            from .lifecycle import detach as start_detached

            args = [] if config_file is None else ["--config", str(config_file)]
            for key, value in flags.items():
                if value is not None:
                    args += [f"--{key.replace('_', '-')}", str(value)]
            start_detached(ctx, settings, args)
            return
        from ..server import main as serve

        ctx.exit(serve(settings, explained.sources))
    finally:
        # A start that fails in a process that goes on (the CLI called by another program,
        # a test's CliRunner) gives that process its collector back.
        if collecting:
            gc.enable()


@click.command()
@json_option
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Show the replica, its state digest, counts, indexes, embedder, knowledge, jobs and sync.

    \b
    Example:
      chrysalis status
      chrysalis status --json | jq .state_digest
    """
    s = client_for(ctx).status()
    if as_json:
        print_json(s)
        return
    c = s["counts"]
    index = s["index"]
    behind = index["behind"]
    vectors = index.get("vectors")
    others = [n for n in s.get("memories", ()) if n != s.get("memory")]
    also = f"  (also served: {', '.join(others)}; see one with --memory NAME)" if others else ""
    lines = [
        f"memory    {s.get('memory', 'default')}{also}",
        f"replica   {s['replica_id']}  (chrysalis {s['version']}, pid {s['pid']}, "
        f"up {ago(s['uptime_s'])})",
        f"data      {s['data_dir']}",
        f"socket    {s['socket']}",
        f"digest    {s['state_digest']}",
        f"beads     {c['beads']:,}   ops {c['ops']:,}   pending {c['pending_ops']:,}   "
        f"embeddings {c['embeddings']:,}",
        f"keyword   {counted(index['keyword']['items'], 'item')}, "
        f"{counted(behind['keyword'], 'op')} behind",
    ]
    if vectors:
        lines.append(
            f"vectors   {counted(vectors['items'], 'item')} ({vectors['kind']}), "
            f"{counted(behind.get('vectors', 0), 'op')} behind"
        )
    emb = s.get("embedder")
    lines.append(f"embedder  {emb['provider']} {emb['model']}" if emb else "embedder  none")
    if sw := index.get("switch"):
        lines.append(
            f"switching {sw['from']['model']} -> {sw['to']['model']}: {sw['vectors']:,} of "
            f"{counted(sw['items'], 'item')} embedded ({sw['percent']}%); "
            f"recall searches {sw['searching']}"
        )
        if sw["note"]:
            lines.append(f"  note    {sw['note']}")
    if index.get("last_error"):
        lines.append(f"index err {index['last_error']}")
    lines += _knowledge_lines(s.get("knowledge"))
    for job in s["jobs"]:
        state = f"error: {job['last_error']}" if job["last_error"] else "ok"
        lines.append(f"job       {job['name']}: {counted(job['runs'], 'run')}, {state}")
    lines += _remote_lines(s["sync"]["remote"], s["jobs"])
    click.echo("\n".join(lines))


def _knowledge_lines(k: dict[str, Any] | None) -> list[str]:
    if not k or k["extractor"] is None:
        return ["knowledge no extractor (extractor = none)"]
    d, r = k["derived"], k["retracted"]
    out = [
        f"knowledge {k['extractor']}: {counted(k['ops_behind'], 'op')} behind, "
        f"{counted(k['extracted'], 'bead')} extracted; {counted(d['nodes'], 'node')}, "
        f"{counted(d['edges'], 'edge')}, {d['superseded']:,} superseded;"
        f" {r['nodes'] + r['edges']:,} retracted",
    ]
    budget = {n: v for n, v in k["budget"].items() if v is not None}
    if budget:
        hour = k["last_hour"]
        out.append(
            f"  budget  {counted(hour['calls'], 'call')}, {counted(hour['tokens'], 'token')} "
            "this hour of "
            + ", ".join(f"{v} {n.replace('_per_hour', '')}" for n, v in budget.items())
        )
    if k["last_error"]:
        paused = f" (paused {k['paused_for_s']:.0f} s)" if k["paused_for_s"] else ""
        out.append(f"  error   {k['last_error']}{paused}")
    return out


def _remote_lines(r: dict[str, Any] | None, jobs: list[dict[str, Any]]) -> list[str]:
    if r is None:
        return ["sync      no remote configured"]
    lock = " (encrypted)" if r["encrypted"] else ""
    out = [f"sync      {r['url']}{lock}"]
    due = _next_runs(jobs, ("pull", "push"))
    if due:
        out.append(f"  next    {', '.join(due)}")
    for verb in ("push", "pull"):
        last = r[f"last_{verb}"]
        if last["at"] is None:
            out.append(f"  {verb}    not yet")
        else:
            state = "ok" if last["ok"] else f"failed: {last['error']}"
            out.append(
                f"  {verb}    {ago(time.time() - last['at'])} ago, {state}, "
                f"{counted(last['ops'], 'op')}"
            )
    if r["pending_ops"] is None:  # the data dir could not be read: the status says why
        pending = "pending unknown (this laptop's cursor could not be read)"
    else:
        pending = f"pending {counted(r['pending_ops'], 'op')} to push"
        if not r.get("reached", True):
            pending += " (the remote has not been reached yet)"
    out.append(f"  {pending}; {counted(r['consecutive_errors'], 'error')} in a row")
    if r["stopped"]:
        out.append(f"  STOPPED {r['stopped']}")
    for rej in r["rejected"]:
        out.append(f"  rejected {rej['key']}: {rej['error']}")
    for replica, gap in r.get("gaps", {}).items():
        out.append(
            f"  gap     {replica} ops {gap.get('from')}..{gap.get('to')} missing on the remote: "
            f"{gap.get('why', 'waiting for its origin or a snapshot')}"
        )
    for t in r.get("tampered", []):
        out.append(f"  tampered {t['key']}: {t['what']}")
    for peer in r["peers"]:
        seen = ago(time.time() - peer["last_seen"]) + " ago" if peer["last_seen"] else "never"
        gone = "  (decommissioned)" if peer["decommissioned"] else ""
        out.append(
            f"  peer    {peer['replica']} on {peer['host']}: lag {counted(peer['lag'], 'op')}, "
            f"seen {seen}{gone}"
        )
    return out


def _next_runs(jobs: list[dict[str, Any]], names: tuple[str, ...]) -> list[str]:
    """When each of these jobs runs next, as people say it: "pull in 1m", "push running
    now" (a named memory's jobs are "NAME/pull")."""
    said = []
    for name in names:
        job = next((j for j in jobs if j["name"].rsplit("/", 1)[-1] == name), None)
        if job is None:
            continue
        if job["running"]:
            said.append(f"{name} running now")
        elif job["next_run"]:
            left = datetime.fromisoformat(job["next_run"]).timestamp() - time.time()
            said.append(f"{name} in {ago(max(0.0, left))}")
    return said


@click.command()
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

    from ..doctor import local_checks

    obj = ctx.ensure_object(dict)
    socket = Path(obj.get("socket") or default_socket_path())
    checks = local_checks(socket)
    if all(c["status"] != "error" for c in checks):
        try:
            checks += _memory_checks(client_for(ctx), obj.get("memory"))
        except ChrysalisError as exc:
            checks.append(
                {"check": "daemon", "status": "error", "detail": exc.message,
                 "fix": "restart it: `chrysalis daemon`"}
            )  # fmt: skip
    ok = all(c["status"] != "error" for c in checks)
    if as_json:
        print_json({"ok": ok, "checks": checks})
    else:
        marks = {"ok": "ok  ", "warn": "WARN", "error": "FAIL"}
        for c in checks:
            click.echo(f"{marks[c['status']]}  {c['check']:<13} {c['detail']}")
            if c["status"] != "ok" and c["fix"]:
                click.echo(f"      {'':<13} -> {c['fix']}")
    if not ok:
        ctx.exit(1)


def _memory_checks(client: Client, memory: str | None) -> list[dict[str, str]]:
    """The daemon's checks of one memory (``--memory``), or of each one it serves, a named
    memory's checks named after it (``team: remote``)."""
    if memory is not None:
        checks: list[dict[str, str]] = client.doctor()["checks"]
        return checks
    out: list[dict[str, str]] = []
    for m in client.raw(Routes.memories)["memories"]:
        name = m["name"]
        if name == "default":  # its checks as ever, unprefixed
            out += client.doctor()["checks"]
            continue
        with connect(client.socket, timeout=client.timeout, memory=name) as one:
            out += [{**c, "check": f"{name}: {c['check']}"} for c in one.doctor()["checks"]]
    return out


@click.command()
@click.option("--no-browser", is_flag=True, help="Print a sign-in address; do not open a browser.")
@json_option
@click.pass_context
def ui(ctx: click.Context, no_browser: bool, as_json: bool) -> None:
    """Open the memory inspector: the daemon serves it on 127.0.0.1, and this opens it in
    your browser, signed in. Each run gives a new sign-in that works once, for 90 seconds.

    The browser is handed a private local page (0600) that signs in: the sign-in never
    appears in a command line other users could read. With --no-browser the sign-in
    address is printed for you to open (keep it to yourself; it works once).

    \b
    Example:
      chrysalis ui
      chrysalis --memory team ui --no-browser
    """
    found = client_for(ctx).raw(Routes.ui)
    memory = ctx.ensure_object(dict).get("memory")
    url = found["url"] + (f"&memory={quote(memory)}" if memory else "")
    if as_json:
        print_json({**found, "url": url})
        return
    if not no_browser:
        import webbrowser

        from .signin import write_signin_page

        page = write_signin_page(found["signin"], found["token"], memory, found["expires_in"])
        if webbrowser.open(page.as_uri()):
            click.echo("the memory inspector is open in your browser")
            return
        click.echo("no browser could be opened: open this address yourself", err=True)
    click.echo(f"the memory inspector (this address works once, for {found['expires_in']:.0f} s):")
    click.echo(f"  {url}")
