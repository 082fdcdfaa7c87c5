"""Browsing from the CLI (step 14): ``ls``, ``show``, ``kg neighbors`` and ``kg rm``, against a
daemon on its socket; and the listing route under them."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from .daemon_process import DaemonProcess, run_cli


def run(d: DaemonProcess, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(args, d.env, cwd=cwd)


def ok(d: DaemonProcess, *args: str, cwd: Path | None = None) -> str:
    out = run(d, *args, cwd=cwd)
    assert out.returncode == 0, (args, out.stderr)
    return out.stdout


def test_ls_lists_the_newest_beads_and_filters_them(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        tea = c.remember("the user prefers green tea", session_id="chat-1", tags=["pref"])
        c.remember("deploys go out on Tuesdays", session_id="ops", role="note")
        for n in range(5):
            c.remember(f"filler turn number {n}", session_id="chat-1", role="assistant")
        mid = time.time()
        time.sleep(0.01)
        last = c.remember("the build is green again", session_id="ops", tags=["pref", "ci"])

    lines = ok(daemon, "ls").splitlines()
    assert len(lines) == 8 and "the user prefers green tea" in lines[0]
    assert lines[-1].split()[2] == last.id and "ops:" in lines[-1]  # oldest first, newest last

    two = run(daemon, "ls", "-n", "2")
    assert len(two.stdout.splitlines()) == 2 and "the build is green again" in two.stdout
    assert "the newest 2" in two.stderr

    by_tag = json.loads(ok(daemon, "ls", "--tag", "pref", "--json"))
    assert [b["id"] for b in by_tag] == [tea.id, last.id]
    by_role = json.loads(ok(daemon, "ls", "--role", "assistant", "-n", "3", "--json"))
    assert [b["content"] for b in by_role] == [f"filler turn number {n}" for n in (2, 3, 4)]
    in_ops = json.loads(ok(daemon, "ls", "--session", "ops", "--tag", "ci", "--json"))
    assert [b["id"] for b in in_ops] == [last.id]
    after = json.loads(ok(daemon, "ls", "--after", str(mid), "--json"))
    assert [b["id"] for b in after] == [last.id]
    words = json.loads(ok(daemon, "ls", "--query", "green", "--json"))
    assert {b["id"] for b in words} == {tea.id, last.id}
    assert ok(daemon, "ls", "--tag", "nothing-has-this").strip() == "no beads match"

    sessions = ok(daemon, "ls", "--sessions").splitlines()
    assert sessions[0].split() == ["session", "beads", "first", "last"]
    assert [s.split()[:2] for s in sessions[1:]] == [["ops", "2"], ["chat-1", "6"]]
    rows = json.loads(ok(daemon, "ls", "--sessions", "--json"))
    assert rows[0]["session_id"] == "ops" and rows[0]["last_ts"] == pytest.approx(last.ts)


def test_ls_refuses_a_bad_filter_in_plain_words(daemon: DaemonProcess) -> None:
    out = run(daemon, "ls", "--after", "next tuesday")
    # a bad flag value is a usage error (exit 2) naming the flag as typed (step 21, item 8)
    assert out.returncode == 2 and "'--after'" in out.stderr and "is not a time" in out.stderr
    assert "Traceback" not in out.stderr


def test_ls_by_path_and_show_with_file_and_lines(daemon: DaemonProcess, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.md").write_text("# Deploys\n\nThey go out on Tuesdays.\nNever on Fridays.\n")
    (tmp_path / "other.md").write_text("# Other\n\nSomething else entirely.\n")
    ok(daemon, "ingest", "docs", "other.md", cwd=tmp_path)

    chunks = json.loads(ok(daemon, "ls", "--path", "docs", "--json", cwd=tmp_path))
    assert len(chunks) == 1 and "Tuesdays" in chunks[0]["content"]
    shown = ok(daemon, "show", chunks[0]["id"], cwd=tmp_path)
    assert f"id         {chunks[0]['id']}" in shown
    assert "from       docs/notes.md:1-4" in shown  # relative to where the command runs
    assert shown.rstrip().endswith("Never on Fridays.")
    assert "from       notes.md:1-4" in ok(daemon, "show", chunks[0]["id"], cwd=docs)
    (tmp_path / "elsewhere").mkdir()
    elsewhere = ok(daemon, "show", chunks[0]["id"], cwd=tmp_path / "elsewhere")
    assert f"from       {docs / 'notes.md'}:1-4" in elsewhere  # not under it: absolute
    as_json = json.loads(ok(daemon, "show", chunks[0]["id"], "--json"))
    assert as_json["span_refs"] == [
        {"path": str(docs / "notes.md"), "start_line": 1, "end_line": 4}
    ]

    missing = run(daemon, "show", "0193a4c2-7d4e-7c1a-9f00-1234567890ab")
    assert missing.returncode == 1 and "no bead" in missing.stderr


def test_kg_neighbors_and_rm(daemon: DaemonProcess) -> None:
    ok(daemon, "fact", "Alice", "works_at", "Acme Corp")
    ok(daemon, "fact", "Alice", "knows", "Bob")
    ok(daemon, "fact", "Bob", "lives_in", "Lisbon")

    near = ok(daemon, "kg", "neighbors", "alice").splitlines()
    assert near[0] == "Alice (entity, node alice)"  # by name; shown by name
    assert near[1].startswith("  Alice -[knows]-> Bob  (edge e-")
    # a hand-written fact on a one-value predicate starts when written (it supersedes)
    assert near[2].startswith("  Alice -[works_at]-> Acme Corp  (since ") and "edge e-" in near[2]
    assert len(near) == 3
    far = ok(daemon, "kg", "neighbors", "alice", "--depth", "2")
    assert "\n    Bob -[lives_in]-> Lisbon  (since " in far  # two hops: indented twice
    data = json.loads(ok(daemon, "kg", "neighbors", "alice", "--json"))
    assert {n["node"]["id"] for n in data["neighbors"]} == {"acme-corp", "bob"}

    gone = ok(daemon, "kg", "rm", "Alice", "works_at", "Acme Corp")
    assert gone.startswith("removed Alice -[works_at]-> Acme Corp (edge e-")
    near = ok(daemon, "kg", "neighbors", "alice")
    assert "works_at" not in near and "knows" in near
    ended = ok(daemon, "kg", "neighbors", "alice", "--all")
    assert "works_at" not in ended  # removed, not ended: gone even from --all

    again = run(daemon, "kg", "rm", "alice", "works_at", "acme-corp")
    assert again.returncode == 1
    assert again.stderr.strip() == "error: no fact alice -[works_at]-> acme-corp"

    edge = next(n["edge"]["id"] for n in data["neighbors"] if n["node"]["id"] == "bob")
    assert ok(daemon, "kg", "rm", edge).strip() == f"removed edge {edge}"
    assert "no facts hold now" in ok(daemon, "kg", "neighbors", "alice")

    assert ok(daemon, "kg", "rm", "Lisbon") == "removed node Lisbon (lisbon) and its facts\n"
    assert "Lisbon" not in ok(daemon, "kg", "neighbors", "bob")
    nobody = run(daemon, "kg", "rm", "nobody-at-all")
    assert nobody.returncode == 1 and "no node" in nobody.stderr
