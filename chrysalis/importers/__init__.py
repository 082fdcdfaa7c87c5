"""Past conversations from other tools as bead rows: pure parsers, no daemon, no store.

    chatgpt       ChatGPT's export, ``conversations.json``: each conversation's kept branch
    claude        a claude.ai export, ``conversations.json``
    claude-code   Claude Code transcripts: a ``.jsonl`` file or a folder of them
                  (``~/.claude/projects/<project>/``)

`Export` opens an export (`read` iterates one): `Source` units (a conversation, a
transcript), each with its rows; `export_lines` turns rows into what the daemon's import
takes, so::

    from chrysalis import Client
    from chrysalis.importers import read, export_lines
    rows = (row for unit in read("chatgpt", "conversations.json") for row in unit.rows)
    Client().import_lines(export_lines(rows))    # all or nothing; twice changes nothing

Rows are the same every time the same input is read (ids come from the export's own ids),
so an import repeated adds nothing, and a turn forgotten here stays forgotten. (A row whose
id is stored with other content makes the import a `Conflict`: ``chrysalis import --from``
then keeps what is stored and imports the rest.) Each module's
docstring says how its format maps to beads and what is left out. Only the standard library
is imported: the Claude Code hook parses transcripts on its short path.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from chrysalis.core.errors import InvalidInput
from chrysalis.importers import chatgpt, claude, claude_code
from chrysalis.importers.rows import Row, export_lines, load_json

__all__ = ["FORMATS", "Export", "Row", "Source", "export_lines", "read"]

FORMATS = ("chatgpt", "claude", "claude-code")


class Source:
    """One unit of an export: a conversation or a transcript, its rows, and how many of its
    lines were not JSON (transcripts only). (A plain class: dataclasses costs the hook's
    start-up 8 ms.)"""

    def __init__(self, name: str, rows: list[Row], bad_lines: int = 0) -> None:
        self.name = name
        self.rows = rows
        self.bad_lines = bad_lines


class Export:
    """The export at ``path`` in format ``fmt`` (one of `FORMATS`): ``total`` units, and
    iterating yields each as a `Source`, in order (each conversation let go once yielded).

    Raises `InvalidInput` for an unknown format, a path that cannot be read, or a file that
    is not of the format (naming where)."""

    def __init__(self, fmt: str, path: str | Path) -> None:
        self.fmt, self.path = fmt, Path(path).expanduser()
        self._convs: list[Any] = []
        self._files: list[Path] = []
        if fmt == "claude-code":
            self._files = transcript_files(self.path)
            self.total = len(self._files)
            return
        if fmt not in _PARSERS:
            raise InvalidInput(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
        if self.path.is_dir():
            self.path = self.path / "conversations.json"  # the unzipped export's folder
        self._convs = _PARSERS[fmt][0](load_json(self.path), self.path.name)
        self.total = len(self._convs)

    def __iter__(self) -> Iterator[Source]:
        if self.fmt == "claude-code":
            for file in self._files:
                yield _transcript(file)
            return
        convert = _PARSERS[self.fmt][1]
        convs, self._convs = self._convs[::-1], []  # popped from the end: let go as it goes
        n = 0
        while convs:
            conv, n = convs.pop(), n + 1
            title = conv.get("title") or conv.get("name") or f"conversation {n}"
            yield Source(str(title), list(convert(conv, f"{self.path.name}: conversation {n}")))


_PARSERS: dict[str, tuple[Callable[..., list[Any]], Callable[..., Iterator[Row]]]] = {
    "chatgpt": (chatgpt.conversations, chatgpt.conversation_rows),
    "claude": (claude.conversations, claude.conversation_rows),
}


def read(fmt: str, path: str | Path) -> Iterator[Source]:
    """The units of the export at ``path`` in format ``fmt``, in order (`Export`)."""
    yield from Export(fmt, path)


def transcript_files(path: Path) -> list[Path]:
    """The ``.jsonl`` files at ``path`` (itself, or under it), oldest first."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise InvalidInput(f"{path}: no such file or folder")
    found = [p for p in path.rglob("*.jsonl") if p.is_file()]
    return sorted(found, key=lambda p: (os.stat(p).st_mtime, str(p)))


def _transcript(file: Path) -> Source:
    try:
        with open(file, "rb") as f:
            parsed = list(claude_code.rows(f, session_id=file.stem))
    except OSError as exc:
        raise InvalidInput(f"cannot read {file}: {exc.strerror or exc}") from None
    good = [row for row in parsed if row is not None]
    return Source(str(file), good, bad_lines=len(parsed) - len(good))
