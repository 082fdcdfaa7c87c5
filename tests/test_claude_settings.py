"""``chrysalis hooks install|uninstall claude-code``: our hooks in and out of Claude Code's
settings files, everything else in them left as it was; files it must not touch refused."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from chrysalisd.claude_settings import EVENTS, hook_command, is_ours
from chrysalisd.cli import main

THEIRS = {  # a settings file as a person has it: permissions, env, hooks of their own
    "permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Read(./.env)"]},
    "env": {"ORCHARD_REGION": "eu-west-1"},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/audit-bash"}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send 'Claude is done'"}]}],
        "UserPromptSubmit": [
            {
                "hooks": [
                    {"type": "command", "command": "/opt/lint-prompt --strict", "timeout": 5},
                ]
            }
        ],
    },
    "model": "sonnet",
}


@pytest.fixture
def claude_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.delenv("CHRYSALIS_SOCKET", raising=False)
    monkeypatch.delenv("CHRYSALIS_MEMORY", raising=False)
    return tmp_path / "claude"


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def ours(settings: dict[str, Any]) -> dict[str, list[str]]:
    """Per event, the commands of ours in ``settings``."""
    return {
        event: [h["command"] for g in groups for h in g["hooks"] if is_ours(h["command"])]
        for event, groups in settings.get("hooks", {}).items()
        if any(is_ours(h["command"]) for g in groups for h in g["hooks"])
    }


def without_ours(settings: dict[str, Any]) -> dict[str, Any]:
    hooks = {
        event: [
            {**g, "hooks": [h for h in g["hooks"] if not is_ours(h["command"])]}
            for g in groups
            if any(not is_ours(h["command"]) for h in g["hooks"])
        ]
        for event, groups in settings.get("hooks", {}).items()
    }
    return {**settings, "hooks": {e: g for e, g in hooks.items() if g}}


def test_install_into_a_new_user_settings_file(claude_dir: Path) -> None:
    done = cli("hooks", "install", "claude-code", "--json")
    assert done.exit_code == 0, done.output
    path = claude_dir / "settings.json"
    settings = json.loads(path.read_text())
    assert list(ours(settings)) == list(EVENTS)
    for event, groups in settings["hooks"].items():
        (group,) = groups
        (hook,) = group["hooks"]
        assert hook["type"] == "command" and hook["timeout"] == EVENTS[event]
        assert shlex.split(hook["command"])[-2:] == ["hooks", "claude-code"]
    assert json.loads(done.output)["path"] == str(path)


def test_install_keeps_everything_else_and_twice_is_once(claude_dir: Path) -> None:
    claude_dir.mkdir()
    path = claude_dir / "settings.json"
    path.write_text(json.dumps(THEIRS, indent=4))
    os.chmod(path, 0o600)
    assert cli("hooks", "install", "claude-code").exit_code == 0
    once = json.loads(path.read_text())
    assert without_ours(once) == THEIRS
    # Ours come after theirs in events both have: their hooks keep their place.
    assert once["hooks"]["Stop"][0] == THEIRS["hooks"]["Stop"][0]
    again = cli("hooks", "install", "claude-code", "--memory", "orchard")
    assert "replacing 5 of ours" in again.output
    twice = json.loads(path.read_text())
    assert without_ours(twice) == THEIRS
    for commands in ours(twice).values():
        (command,) = commands
        assert shlex.split(command)[-4:] == ["hooks", "claude-code", "--memory", "orchard"]
    assert os.stat(path).st_mode & 0o777 == 0o600  # the file's mode is kept


def test_uninstall_removes_only_ours(claude_dir: Path) -> None:
    claude_dir.mkdir()
    path = claude_dir / "settings.json"
    path.write_text(json.dumps(THEIRS))
    cli("hooks", "install", "claude-code")
    done = cli("hooks", "uninstall", "claude-code")
    assert "removed 5 hooks of ours" in done.output
    assert json.loads(path.read_text()) == THEIRS
    assert "no hooks of ours" in cli("hooks", "uninstall", "claude-code").output


def test_a_group_holding_ours_beside_theirs_keeps_theirs(claude_dir: Path) -> None:
    claude_dir.mkdir()
    mine = hook_command(program="/usr/local/bin/chrysalis")
    shared = {"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "say done"},
        {"type": "command", "command": mine},
    ]}]}}  # fmt: skip
    (claude_dir / "settings.json").write_text(json.dumps(shared))
    cli("hooks", "uninstall", "claude-code")
    assert json.loads((claude_dir / "settings.json").read_text()) == {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}
    }


def test_project_and_local_scopes_write_in_the_project(tmp_path: Path, claude_dir: Path) -> None:
    project = tmp_path / "orchard"
    project.mkdir()
    assert cli("hooks", "install", "claude-code", "--project", "--dir", str(project)).exit_code == 0
    assert cli("hooks", "install", "claude-code", "--local", "--dir", str(project)).exit_code == 0
    assert ours(json.loads((project / ".claude" / "settings.json").read_text()))
    assert ours(json.loads((project / ".claude" / "settings.local.json").read_text()))
    assert not (claude_dir / "settings.json").exists()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"hooks": {"Stop": [ }', "is not valid JSON"),
        ("[1, 2, 3]", "is not a JSON object"),
        ('{"hooks": ["Stop"]}', '"hooks" is not an object'),
        ('{"hooks": {"Stop": {"command": "x"}}}', 'hooks "Stop" is not a list'),
        ('{"hooks": {"Stop": [{"command": "x"}]}}', 'hooks "Stop" is not a list'),
    ],
)
def test_a_settings_file_it_cannot_read_as_claude_code_does_is_left_alone(
    claude_dir: Path, text: str, said: str
) -> None:
    claude_dir.mkdir()
    path = claude_dir / "settings.json"
    path.write_text(text)
    for verb in ("install", "uninstall"):
        done = CliRunner().invoke(main, ["hooks", verb, "claude-code"])
        assert done.exit_code == 1 and said in done.output and "not changed" in done.output
        assert path.read_text() == text
    assert [p.name for p in claude_dir.iterdir()] == ["settings.json"]  # no temporary left


def test_another_users_settings_file_is_refused(claude_dir: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("giving a file to another user takes root")
    claude_dir.mkdir()
    path = claude_dir / "settings.json"
    path.write_text(json.dumps(THEIRS))
    os.chown(path, 65534, 65534)
    done = CliRunner().invoke(main, ["hooks", "install", "claude-code"])
    assert done.exit_code == 1 and "belongs to" in done.output
    assert json.loads(path.read_text()) == THEIRS


def test_a_symlinked_settings_file_is_written_through(claude_dir: Path, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "claude-settings.json").write_text(json.dumps(THEIRS))
    claude_dir.mkdir()
    (claude_dir / "settings.json").symlink_to(dotfiles / "claude-settings.json")
    assert cli("hooks", "install", "claude-code").exit_code == 0
    assert (claude_dir / "settings.json").is_symlink()
    assert ours(json.loads((dotfiles / "claude-settings.json").read_text()))


@pytest.mark.parametrize(
    ("command", "mine"),
    [
        ("/home/me/.venv/bin/chrysalis hooks claude-code", True),
        ("'/opt/my tools/chrysalis' hooks claude-code --memory work", True),
        ("/usr/bin/python3 -m chrysalisd hooks claude-code", True),
        ("chrysalis hooks claude-code --socket /tmp/s.sock", True),
        ("echo chrysalis hooks claude-code", False),
        ("other-tool hooks claude-code", False),
        ("chrysalis recall 'hooks claude-code'", False),
        ("chrysalis hooks 'claude-code", False),  # not a command line shlex can split
        ("notify-send done", False),
    ],
)
def test_which_commands_are_ours(command: str, mine: bool) -> None:
    assert is_ours(command) is mine


def test_the_command_names_memory_and_socket_quoted() -> None:
    line = hook_command("client x", "/tmp/a b/s.sock", program="/bin/chrysalis")
    assert shlex.split(line) == [
        "/bin/chrysalis", "hooks", "claude-code", "--memory", "client x",
        "--socket", "/tmp/a b/s.sock",
    ]  # fmt: skip
    assert is_ours(line)


def test_the_installed_command_runs_as_claude_code_runs_it(
    claude_dir: Path, tmp_path: Path
) -> None:
    """Claude Code runs the command line through a shell with the event on stdin."""
    cli("hooks", "install", "claude-code")
    settings = json.loads((claude_dir / "settings.json").read_text())
    (command,) = ours(settings)["UserPromptSubmit"]
    event = {"session_id": "s", "transcript_path": "", "cwd": str(tmp_path),
             "hook_event_name": "UserPromptSubmit", "prompt": "anything about tea?"}  # fmt: skip
    env = {**os.environ, "CHRYSALIS_SOCKET": str(tmp_path / "none.sock")}
    done = subprocess.run(
        command, shell=True, input=json.dumps(event).encode(), capture_output=True, env=env,
        timeout=30, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout == b""
    assert b"no daemon at" in done.stderr
