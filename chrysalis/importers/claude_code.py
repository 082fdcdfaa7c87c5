"""Claude Code transcripts (``~/.claude/projects/<project>/<session id>.jsonl``) as bead rows.

A transcript is JSON Lines, one entry a line, appended as the session goes. An entry of
``type`` ``user`` or ``assistant`` carries ``uuid``, ``parentUuid``, ``sessionId``,
``timestamp``, ``cwd`` and ``message`` ``{role, content}``, where content is a string or a list
of blocks (``text``, ``tool_use``, ``tool_result``, ``thinking``, ``image``). Other types
(``summary``, ``system``, ``file-history-snapshot``, ...) are not turns.

Rows, per kept block of an entry:

    id          cc-<uuid> for an entry's first row, cc-<uuid>.<block index> for the others
    role        user or assistant for text; tool for a tool call (``<tool>: <input>``) and
                for a tool result that is an error (``error: <output>``)
    content     the text, ``<system-reminder>`` blocks removed; a tool call's input clipped
    session_id  the entry's sessionId (else the caller's)
    turn_id     the entry's uuid
    ts          its timestamp (else the entry before it's); an entry with neither is left out
    tags        ["claude-code", "project:<cwd>"]

Left out, because they are not what anyone said: subagent entries (``isSidechain``), meta
entries (``isMeta``: caveats, command output), the summary a compaction writes
(``isCompactSummary``: the turns it summarizes are imported themselves), slash-command and
shell wrappers (``<command-name>``, ``<local-command-stdout>``, ``<bash-input>``, ...), the
model's reasoning (``thinking``), images, and tool results that succeeded (a file read, a
command's output: the call says what was done, its output is the file's or the program's).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from chrysalis.importers.rows import MAX_TAG, Row, bead_row, clip, epoch, safe_id

__all__ = ["entry_rows", "project_tag", "rows"]

TOOL_TEXT = 1_000  # characters of a tool call's input, or a failed call's output
_WRAPPER = re.compile(
    r"^\s*<(command-name|command-message|command-args|local-command-stdout|local-command-stderr"
    r"|bash-input|bash-stdout|bash-stderr|user-prompt-submit-hook)>"
)
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
_ROLES = {"user", "assistant"}


def project_tag(cwd: str) -> str:
    """``project:<cwd>``; a path too long for a tag keeps its end (the folder's name)."""
    tag = f"project:{cwd}"
    return tag if len(tag) <= MAX_TAG else "project:…" + cwd[-(MAX_TAG - 9) :]


def rows(
    lines: Iterable[bytes | str], *, session_id: str | None = None, cwd: str | None = None
) -> Iterator[Row | None]:
    """For each line of a transcript, its rows, then None for a line that is not JSON (the
    caller counts them): a malformed line never stops the rest. ``session_id`` and ``cwd``
    stand in for entries without theirs."""
    last_ts: float | None = None
    for line in lines:
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except (ValueError, UnicodeDecodeError, RecursionError):  # nested past the parser
            yield None
            continue
        if not isinstance(entry, dict):
            yield None
            continue
        ts = epoch(entry.get("timestamp"))
        last_ts = ts if ts is not None else last_ts
        if last_ts is None:
            continue
        yield from entry_rows(entry, last_ts, session_id=session_id, cwd=cwd)


def entry_rows(
    entry: Mapping[str, Any], ts: float, *, session_id: str | None, cwd: str | None
) -> Iterator[Row]:
    """The rows of one transcript entry stamped ``ts`` (none for what is not a turn)."""
    if entry.get("type") not in _ROLES or entry.get("isSidechain") or entry.get("isMeta"):
        return
    if entry.get("isCompactSummary"):
        return
    uuid, message = entry.get("uuid"), entry.get("message")
    if not isinstance(uuid, str) or not uuid or not isinstance(message, dict):
        return
    role = str(message.get("role") if message.get("role") in _ROLES else entry["type"])
    session = entry.get("sessionId") if isinstance(entry.get("sessionId"), str) else session_id
    if not session:
        return
    folder = entry.get("cwd") if isinstance(entry.get("cwd"), str) else cwd
    tags = ["claude-code", *([project_tag(folder)] if folder else [])]
    first = True
    for index, (kind, text) in enumerate(_blocks(message.get("content"), role)):
        bead_id = safe_id("cc", uuid) if first else safe_id("cc", f"{uuid}.{index}")
        row = bead_row(
            id=bead_id, ts=ts, role=kind, content=text, session_id=safe_id(session),
            turn_id=safe_id(uuid), tags=tags if kind != "tool" else [*tags, "tool"],
        )  # fmt: skip
        if row is not None:
            first = False
            yield row


def _blocks(content: Any, role: str) -> Iterator[tuple[str, str]]:
    """(role, text) per block of a message's content, in order; ("", "") for a block that is
    left out, so that indexes stay the block's position."""
    if isinstance(content, str):
        yield _said(role, content)
        return
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict):
            yield "", ""
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            yield _said(role, block["text"])
        elif kind == "tool_use":
            args = block.get("input")
            shown = _tool_input(args)
            yield "tool", f"{block.get('name', 'tool')}: {clip(shown, TOOL_TEXT)}"
        elif kind == "tool_result" and block.get("is_error"):
            yield "tool", f"error: {clip(_result_text(block.get('content')), TOOL_TEXT)}"
        else:
            yield "", ""


def _said(role: str, text: str) -> tuple[str, str]:
    if _WRAPPER.match(text):
        return "", ""
    return role, _REMINDER.sub("", text)


def _tool_input(args: Any) -> str:
    # The one field that says what was done, when there is one: a command, a path, a pattern.
    if isinstance(args, dict):
        for key in ("command", "file_path", "path", "pattern", "url", "query", "description"):
            if isinstance(args.get(key), str):
                return str(args[key])
    return json.dumps(args, ensure_ascii=False, default=str)


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(b.get("text")) for b in content if isinstance(b, dict) and b.get("text")
        )
    return ""
