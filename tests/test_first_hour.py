"""Frictions a new user hit in the first hour (step 14), each held by a test where one can."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import pytest

from chrysalis import Client, Memory
from chrysalis.core.errors import PayloadTooLarge
from chrysalis.core.limits import MAX_CONTENT_CHARS
from tests.eventually import eventually

from .daemon_process import DaemonProcess, run_cli


def cli(d: DaemonProcess, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI with no CHRYSALIS_SOCKET in its environment: only the flags say where."""
    env = {k: v for k, v in d.env.items() if k not in ("CHRYSALIS_SOCKET", "CHRYSALIS_MEMORY")}
    return run_cli(args, env)


def test_socket_and_memory_work_after_the_command_too(daemon: DaemonProcess) -> None:
    sock = str(daemon.socket)
    with daemon.client() as c:
        c.create_memory("team")
    for args in (
        ("status", "--json", "--socket", sock),
        ("--socket", sock, "status", "--json"),
    ):
        out = cli(daemon, *args)
        assert out.returncode == 0, (args, out.stderr)
        assert json.loads(out.stdout)["memory"] == "default"
    out = cli(daemon, "remember", "a team note about violins", "--socket", sock, "--memory", "team")
    assert out.returncode == 0, out.stderr
    out = cli(daemon, "memory", "ls", "--json", "--socket", sock)  # inside a group, too
    assert {m["name"]: m["beads"] for m in json.loads(out.stdout)} == {"default": 0, "team": 1}
    out = cli(daemon, "status", "--socket", str(daemon.sock_dir / "nobody.sock"))
    assert out.returncode == 1 and "no daemon at" in out.stderr


def test_a_bead_without_a_role_has_one_default_on_every_surface(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    """CLI, client (HTTP) and library agree (MCP: test_mcp); a role given is kept."""
    out = daemon.cli("remember", "the user prefers green tea", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["role"] == "user"
    turn = daemon.cli("remember", "a note to self", "--role", "note", "--json")
    assert json.loads(turn.stdout)["role"] == "note"
    with Client(daemon.socket) as client:
        assert client.remember("the user likes rain").role == "user"
    with Memory.open(tmp_path / "embedded") as mem:
        assert mem.append_bead("the user likes snow").role == "user"


def run(d: DaemonProcess, *args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The CLI in ``cwd`` (paths shown relative to it), with more environment."""
    return run_cli(args, {**d.env, **env}, cwd=cwd)


def test_errors_are_plain_words_not_pydantics(daemon: DaemonProcess) -> None:
    for args, said in (
        (("recall", ""), "query must not be empty"),
        (("remember", ""), "content must not be empty"),
        (("remember", "x", "--tag", ""), "tags[0] must not be empty"),
    ):
        out = daemon.cli(*args)
        assert (out.returncode, out.stderr) == (1, f"error: {said}\n"), args


def test_remember_refuses_text_over_the_limit_before_sending_it(daemon: DaemonProcess) -> None:
    before = daemon.request_counts()
    out = daemon.cli("remember", "-", input="w" * (MAX_CONTENT_CHARS + 1))
    assert out.returncode == 1
    assert out.stderr == (
        "error: the text is too long for one bead: 8,388,609 characters, at most 8,388,608; "
        "use chrysalis ingest FILE (it chunks long text)\n"
    )
    daemon.cli("status")  # one request the daemon surely sees, so the count is current
    sent = daemon.requests_since(before)
    assert not [r for r in sent if r[0] == "POST"], sent  # refused before anything was sent
    with daemon.client() as c, pytest.raises(PayloadTooLarge) as err:
        c.remember("w" * (MAX_CONTENT_CHARS + 1))  # the daemon's own answer, in plain words
    assert err.value.message == "content is too long: 8,388,609 characters, at most 8,388,608"


def test_a_big_ingest_says_what_it_is_doing(daemon: DaemonProcess, tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("a line of words about quokkas\n\n" * 40_000)  # 1.24 MB
    out = run(daemon, "ingest", "big.txt", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stderr == "ingesting big.txt (1.2 MB)…\n"
    assert out.stdout.startswith("1 file, ")
    quiet = run(daemon, "ingest", "big.txt", "--json", cwd=tmp_path)
    assert quiet.stderr == "" and json.loads(quiet.stdout)["unchanged"] > 0


def test_ingest_tells_each_skipped_file_once(daemon: DaemonProcess, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# Tea\n\nGreen, in the morning.\n")
    (folder / "b.bin").write_bytes(b"\x00\x01\x02binary")
    (folder / "c.txt").write_bytes(b"caf\xe9 in latin-1\n")
    out = run(daemon, "ingest", "notes", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    skipped = [line for line in out.stderr.splitlines() if line.startswith(("skipped", "read"))]
    assert skipped == [  # Latin-1 is text: read, and said how (test_first_hour_2)
        "read notes/c.txt as cp1252",
        "skipped notes/b.bin: binary file (NUL byte at offset 0), not ingested",
    ]


def test_recall_wraps_the_text_and_shows_file_and_lines(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    words = " ".join(f"quokka{i}" for i in range(120))  # one long paragraph, lines 3 to 5
    (tmp_path / "notes.md").write_text(
        f"# Quokkas\n\n{words[:300]}\n{words[300:600]}\n{words[600:]}\n"
    )
    assert run(daemon, "ingest", "notes.md", cwd=tmp_path).returncode == 0
    out = run(daemon, "recall", "quokka7", "-k", "1", "--strategy", "keyword", cwd=tmp_path,
              COLUMNS="60")  # fmt: skip
    lines = out.stdout.splitlines()
    assert re.fullmatch(r" 1\. \[bead\] \d+\.\d{3}  notes\.md:1-5", lines[0]), lines[0]
    assert len(lines) == 5 and lines[4].startswith("    why: ")  # 3 lines of text, then why
    assert all(len(line) <= 60 for line in lines[1:4]) and lines[3].endswith(" …")
    assert lines[1].startswith("    # Quokkas quokka0 quokka1")  # no "/abs/path/notes.md: "
    full = run(daemon, "recall", "quokka7", "-k", "1", "--strategy", "keyword", "--full",
               cwd=tmp_path, COLUMNS="60")  # fmt: skip
    assert "quokka119" in full.stdout and "…" not in full.stdout
    as_json = json.loads(run(daemon, "recall", "quokka7", "-k", "1", "--json", cwd=tmp_path).stdout)
    refs = as_json["items"][0]["provenance"]["span_refs"]
    assert refs == [
        {"path": str((tmp_path / "notes.md").resolve()), "start_line": 1, "end_line": 5}
    ]


def test_status_says_pending_and_an_idle_peer_is_seen_recently(tmp_path: Path) -> None:
    """Two laptops on one file:// remote: b writes nothing and only pulls, yet a sees it
    alive (a heartbeat each pull), and status counts what is pending, never `?`."""
    (tmp_path / "remote").mkdir()
    remote = f"file://{tmp_path / 'remote'}"
    fast = {"CHRYSALIS_PULL_INTERVAL": "1", "CHRYSALIS_PUSH_INTERVAL": "1"}
    a = DaemonProcess(tmp_path / "a", env=fast)
    b = DaemonProcess(tmp_path / "b", env=fast)
    try:
        a.start("--remote", remote)
        out = a.cli("status")
        assert re.search(r"\n  pending \d+ ops? to push", out.stdout), out.stdout
        assert "?" not in out.stdout
        b.start("--remote", remote)
        b_id = b.once("status")["replica_id"]
        time.sleep(4)  # b's first pull wrote its heartbeat; since then, idle pulls only

        def b_seen_ago() -> float:
            peers = a.once("status")["sync"]["remote"]["peers"]
            seen = next((p["last_seen"] for p in peers if p["replica"] == b_id), None)
            return time.time() - seen if seen else 1e9

        eventually(b_seen_ago, until=lambda ago: ago <= 2.5, timeout=10, interval=0.2,
                   what="a to have seen b in the last 2.5 s")  # fmt: skip
        assert b_seen_ago() <= 2.5  # not "seen 14m ago" while b runs
        assert re.search(rf"peer    {b_id} on .*, seen \ds ago", a.cli("status").stdout)
    finally:
        a.close()
        b.close()


def test_memory_is_offered_only_where_it_means_something() -> None:
    from click.testing import CliRunner

    from chrysalisd.cli import main

    runner = CliRunner()
    for command in ("daemon", "stop", "config"):  # the daemon as a whole
        assert "--memory" not in runner.invoke(main, [command, "--help"]).output, command
    for command in ("status", "ls", "recall"):
        assert "--memory" in runner.invoke(main, [command, "--help"]).output, command
