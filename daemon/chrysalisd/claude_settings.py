"""Our hooks in Claude Code's ``settings.json``: put in, taken out, nothing else touched.

Claude Code reads hooks from ``~/.claude/settings.json`` (the user's, every project;
``$CLAUDE_CONFIG_DIR`` moves it), ``<project>/.claude/settings.json`` (the project's, shared
through its repository) and ``<project>/.claude/settings.local.json`` (the project's, this
person's only). Each holds ``{"hooks": {"<Event>": [{"matcher": ..., "hooks": [{"type":
"command", "command": "...", "timeout": seconds}]}]}}`` beside other settings.

`install` adds one group per event whose command is ``chrysalis hooks claude-code`` (an
earlier one of ours is replaced, so installing twice leaves one); `uninstall` removes the
commands that are ours (`is_ours`) and the groups and events that leave empty. Every other
key, event, group and hook stays as it was, in its order. A file that is not a JSON object,
whose ``hooks`` is not what Claude Code reads, or that belongs to another user is refused and
left unchanged. The file is replaced atomically (a temporary file, fsync, rename), keeping its
mode; a symlinked settings file (dotfiles) is written through to its target.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

from chrysalis.client.local_socket import who
from chrysalis.core.errors import Conflict, Forbidden, InvalidInput

__all__ = ["EVENTS", "hook_command", "install", "is_ours", "settings_path", "uninstall"]

# Seconds Claude Code waits for the hook per event: the context ones answer within 4 s or
# give up themselves; a capture of a long transcript may take longer.
EVENTS = {"SessionStart": 10, "UserPromptSubmit": 10, "PreCompact": 60, "Stop": 60,
          "SessionEnd": 60}  # fmt: skip
MAX_SETTINGS_BYTES = 16 * 1024 * 1024


def settings_path(scope: str, project: Path | None = None) -> Path:
    """The settings file of ``scope``: ``user``, ``project`` or ``local`` (the last two in
    ``project``, the working directory by default)."""
    if scope == "user":
        base = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(
            os.path.expanduser("~"), ".claude"
        )
        return Path(base).expanduser() / "settings.json"
    folder = (project or Path.cwd()) / ".claude"
    if scope == "project":
        return folder / "settings.json"
    if scope == "local":
        return folder / "settings.local.json"
    raise InvalidInput(f"unknown scope {scope!r}: user, project or local")


def hook_command(
    memory: str | None = None, socket: str | Path | None = None, program: str | None = None
) -> str:
    """The command line Claude Code runs: ``program`` (the ``chrysalis`` on PATH by its
    absolute path, else this Python's ``-m chrysalisd``), then ``hooks claude-code`` and the
    memory and socket when given."""
    if program is None:
        found = shutil.which("chrysalis")
        program = (
            shlex.quote(os.path.abspath(found))
            if found
            else f"{shlex.quote(sys.executable)} -m chrysalisd"
        )
    words = [program, "hooks", "claude-code"]
    if memory and memory != "default":
        words += ["--memory", shlex.quote(memory)]
    if socket:
        words += ["--socket", shlex.quote(str(socket))]
    return " ".join(words)


def is_ours(command: Any) -> bool:
    """True for a command line that runs this hook: a program named ``chrysalis``, or a
    Python with ``-m chrysalisd``, then ``hooks claude-code`` (and its options)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if words[:1] and os.path.basename(words[0]) == "chrysalis":
        return words[1:3] == ["hooks", "claude-code"]
    return words[1:5] == ["-m", "chrysalisd", "hooks", "claude-code"]


def install(path: Path, command: str) -> dict[str, Any]:
    """Put ``command`` in ``path`` for every event of `EVENTS`; returns ``{"path", "events",
    "replaced"}`` (replaced: how many earlier commands of ours went)."""
    target, settings, before = _load(path)
    hooks = settings.setdefault("hooks", {})
    replaced = _remove_ours(hooks)
    for event, timeout in EVENTS.items():
        group = {"hooks": [{"type": "command", "command": command, "timeout": timeout}]}
        hooks.setdefault(event, []).append(group)
    _save(target, settings, before)
    return {"path": str(path), "events": list(EVENTS), "replaced": replaced}


def uninstall(path: Path) -> dict[str, Any]:
    """Take every command of ours out of ``path``; returns ``{"path", "removed"}``. A file
    that does not exist has none: nothing is written."""
    if not os.path.lexists(path):
        return {"path": str(path), "removed": 0}
    target, settings, before = _load(path)
    hooks = settings.get("hooks")
    removed = _remove_ours(hooks) if isinstance(hooks, dict) else 0
    if removed:
        _save(target, settings, before)
    return {"path": str(path), "removed": removed}


def _remove_ours(hooks: dict[str, Any]) -> int:
    removed = 0
    for event in list(hooks):
        groups = hooks[event]
        kept_groups = []
        for group in groups:
            inner = group.get("hooks")
            mine = [h for h in inner if isinstance(h, dict) and is_ours(h.get("command"))]
            if not mine:
                kept_groups.append(group)
                continue
            removed += len(mine)
            rest = [h for h in inner if not (isinstance(h, dict) and is_ours(h.get("command")))]
            if rest:
                kept_groups.append({**group, "hooks": rest})
        if kept_groups:
            hooks[event] = kept_groups
        elif groups:  # we emptied it; an event someone left empty stays
            del hooks[event]
    return removed


def _load(path: Path) -> tuple[Path, dict[str, Any], tuple[int, int] | None]:
    """(the file to write, its settings, its (mtime_ns, size) or None when it is new)."""
    target = Path(os.path.realpath(path))
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return target, {}, None
    if not stat.S_ISREG(st.st_mode):
        raise InvalidInput(f"{path} is not a regular file; not changed")
    if st.st_uid != os.getuid():
        raise Forbidden(f"{path} belongs to {who(st.st_uid)}, not you; not changed")
    if st.st_size > MAX_SETTINGS_BYTES:
        raise InvalidInput(f"{path} is over {MAX_SETTINGS_BYTES:,} bytes; not changed")
    try:
        settings = json.loads(target.read_bytes() or b"{}")
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path} is not valid JSON ({exc}); fix it first; not changed") from None
    if not isinstance(settings, dict):
        raise InvalidInput(f"{path} is not a JSON object; not changed")
    _check_hooks(path, settings.get("hooks"))
    return target, settings, (st.st_mtime_ns, st.st_size)


def _check_hooks(path: Path, hooks: Any) -> None:
    if hooks is None:
        return
    if not isinstance(hooks, dict):
        raise InvalidInput(f'{path}: "hooks" is not an object; not changed')
    for event, groups in hooks.items():
        if not isinstance(groups, list) or not all(
            isinstance(g, dict) and isinstance(g.get("hooks"), list) for g in groups
        ):
            raise InvalidInput(
                f'{path}: hooks "{event}" is not a list of {{"matcher", "hooks": [...]}} groups; '
                "not changed"
            )


def _save(target: Path, settings: dict[str, Any], before: tuple[int, int] | None) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    data = (json.dumps(settings, indent=2, ensure_ascii=False) + "\n").encode()
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = 0o644
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
        if _stamp(target) != before:  # Claude Code (or a person) wrote it meanwhile
            raise Conflict(f"{target} changed while it was being edited; run the command again")
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_mtime_ns, st.st_size
