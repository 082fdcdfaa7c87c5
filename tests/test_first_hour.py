"""Frictions a new user hit in the first hour (step 14), each held by a test where one can."""

from __future__ import annotations

import json
import subprocess
import sys

from .daemon_process import DaemonProcess


def cli(d: DaemonProcess, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI with no CHRYSALIS_SOCKET in its environment: only the flags say where."""
    env = {k: v for k, v in d.env.items() if k not in ("CHRYSALIS_SOCKET", "CHRYSALIS_MEMORY")}
    return subprocess.run(
        [sys.executable, "-m", "chrysalisd", *args],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


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


def test_remember_is_a_note_from_the_cli_as_from_mcp(daemon: DaemonProcess) -> None:
    out = daemon.cli("remember", "the user prefers green tea", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["role"] == "note"
    turn = daemon.cli("remember", "hello there", "--role", "user", "--json")
    assert json.loads(turn.stdout)["role"] == "user"
