"""``chrysalis hooks claude-code``: one Claude Code hook event in on stdin, the answer out.

Claude Code runs the command on each event it is installed for (`claude_settings`) and
writes the event as JSON on stdin: ``session_id``, ``transcript_path``, ``cwd``,
``hook_event_name`` and the event's own fields (``prompt`` for UserPromptSubmit, ``source``
for SessionStart, ``trigger`` and ``custom_instructions`` for PreCompact, ``stop_hook_active``
for Stop, ``reason`` for SessionEnd).

- SessionStart, UserPromptSubmit: what the memory holds that bears on the prompt (on the
  project, at session start) is printed as ``{"hookSpecificOutput": {"hookEventName": ...,
  "additionalContext": "..."}}``, which Claude Code adds to the model's context. It comes
  from the daemon's context route (``POST /v1/context``) or, from a daemon without it, from
  recall, formatted as a short block citing each item's id.
- PreCompact, Stop, SessionEnd: the turns of ``transcript_path`` not captured yet are
  imported (`chrysalis.importers.claude_code` says what a turn is): session = Claude Code's
  session id, tagged with the project folder, secrets redacted by the daemon; a turn
  already here, or forgotten here, is left as it is. A cursor per transcript (under
  ``$XDG_STATE_HOME/chrysalis/claude-code``: a byte offset, no content) makes each run read
  only what was appended since the last.

The hook never stands in the agent's way: whatever happens (no daemon, a refusal, bad
input) it exits 0, prints nothing on stdout but an answer, and says what went wrong on stderr
in one line. It reads only a transcript that is a regular file of the caller's, under Claude
Code's projects folder, reached without a symlink leaving it.

Start-up is most of its cost, so this module imports only the standard library and the
light parts of `chrysalis` (no httpx, click, pydantic or the engine); `chrysalisd.launch`
runs it without loading the CLI.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import stat
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from chrysalis.client.light import LightClient, quote_segment
from chrysalis.core.errors import (
    ChrysalisError,
    Conflict,
    DaemonNotRunning,
    MethodNotAllowed,
    NotFound,
)

if TYPE_CHECKING:
    from chrysalis.importers.rows import Row

# The capture events import the transcript parser (re, datetime, hashlib) when they need it:
# the prompt's path, which Claude Code waits on, does without.

__all__ = ["CAPTURE", "CONTEXT", "HookOptions", "parse_args", "projects_root", "run"]

CONTEXT = ("SessionStart", "UserPromptSubmit")
CAPTURE = ("PreCompact", "Stop", "SessionEnd")
MAX_INPUT_BYTES = 4 * 1024 * 1024  # a pasted file in a prompt fits; more is not a hook event
MAX_READ_BYTES = 64 * 1024 * 1024  # of a transcript per run; the rest waits for the next
MAX_LINE_BYTES = 16 * 1024 * 1024  # one transcript entry; a longer one is skipped
QUERY_CHARS = 2_000  # of a long prompt, what the query holds
ITEM_CHARS = 400  # of one recalled item in the fallback block
RECALL_K = 12  # items the fallback asks for; repeats and the tail are dropped after
DEFAULT_BUDGET = 1_200  # tokens of context
STDIN_SECONDS = 2.0  # Claude Code writes the event and closes stdin at once
CONTEXT_SECONDS = 4.0  # the prompt waits on this: at most this, then without memory
CAPTURE_SECONDS = 30.0
NAME = "chrysalis"


class HookOptions:
    """What the command line says: the memories (the first is written), the socket, the
    token budget of the context."""

    def __init__(
        self, memories: Sequence[str] = (), socket: str | None = None, budget: int | None = None
    ) -> None:
        self.memories = [m for m in memories if m] or [os.environ.get("CHRYSALIS_MEMORY", "")]
        self.memories = [m for m in self.memories if m] or ["default"]
        self.socket = socket
        self.budget = budget or DEFAULT_BUDGET


def parse_args(args: Sequence[str]) -> HookOptions | None:
    """``--memory NAME[,NAME...]``, ``--socket PATH``, ``--budget N`` (each as two words or
    ``--x=value``); None for anything else (the full CLI then reads it and explains)."""
    values: dict[str, str] = {}
    it = iter(args)
    for arg in it:
        name, eq, value = arg.partition("=")
        if name not in ("--memory", "--socket", "--budget") or name in values:
            return None
        if not eq:
            value = next(it, "")
        if not value:
            return None
        values[name] = value
    budget = values.get("--budget")
    if budget is not None and not (budget.isdigit() and 0 < int(budget) <= 100_000):
        return None
    return HookOptions(
        values.get("--memory", "").split(","), values.get("--socket"),
        int(budget) if budget else None,
    )  # fmt: skip


def run(
    options: HookOptions,
    stdin: IO[bytes] | None = None,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
) -> int:
    """Answer the event on ``stdin``; always returns 0 (see the module's docstring)."""
    stdin = stdin if stdin is not None else sys.stdin.buffer
    stdout = stdout if stdout is not None else sys.stdout
    stderr = stderr if stderr is not None else sys.stderr
    try:
        event = _read_event(stdin)
        name = event["hook_event_name"]
        if name in CONTEXT:
            text = _context(options, event)
            if text:
                answer = {"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}}
                stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
        elif name in CAPTURE:
            note = _capture(options, event)
            if note:
                stderr.write(f"{NAME}: {note}\n")
        else:
            stderr.write(f"{NAME}: {name!r} is not an event this hook answers; nothing done\n")
    except DaemonNotRunning as exc:
        stderr.write(f"{NAME}: {exc.message}; the memory was not used for this event\n")
    except (ChrysalisError, Refused) as exc:
        stderr.write(f"{NAME}: {_message(exc)}\n")
    except OSError as exc:  # a closed stdout, a full disk: still not the agent's problem
        stderr.write(f"{NAME}: {exc}\n")
    except Exception as exc:  # a bug of ours is still not the agent's problem
        # Only the exception's type: its message may quote the input (a prompt, a transcript).
        stderr.write(f"{NAME}: failed ({type(exc).__name__}); the memory was not used\n")
    return 0


class Refused(Exception):
    """Input the hook will not act on (the message says why)."""


def _message(exc: Exception) -> str:
    return exc.message if isinstance(exc, ChrysalisError) else str(exc)


# ---- the event ---------------------------------------------------------------------------


def _read_event(stdin: IO[bytes]) -> dict[str, Any]:
    raw = _read_bounded(stdin)
    try:
        event = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):  # RecursionError: nested too deep
        raise Refused(f"the hook input is not JSON ({len(raw)} bytes); nothing done") from None
    if not isinstance(event, dict) or not isinstance(event.get("hook_event_name"), str):
        raise Refused("the hook input has no hook_event_name; nothing done")
    for key in ("session_id", "transcript_path", "cwd", "prompt"):
        if key in event and not isinstance(event[key], str):
            raise Refused(f"the hook input's {key} is not a string; nothing done")
    return event


def _read_bounded(stdin: IO[bytes]) -> bytes:
    """stdin to its end, refusing more than MAX_INPUT_BYTES or a writer that does not close
    it within STDIN_SECONDS (a pipe; a file is read as it is)."""
    deadline = time.monotonic() + STDIN_SECONDS
    fd = _fileno(stdin)
    parts: list[bytes] = []
    size = 0
    while True:
        if fd is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise Refused(f"the hook input did not end within {STDIN_SECONDS:g} s")
            chunk = os.read(fd, 1 << 16)
        else:
            chunk = stdin.read(1 << 16)
        if not chunk:
            return b"".join(parts)
        size += len(chunk)
        if size > MAX_INPUT_BYTES:
            raise Refused(f"the hook input is over {MAX_INPUT_BYTES:,} bytes; nothing done")
        parts.append(chunk)


def _fileno(stream: IO[bytes]) -> int | None:
    try:
        return stream.fileno()
    except (OSError, ValueError, AttributeError):  # io.BytesIO in tests: no descriptor
        return None


# ---- context -----------------------------------------------------------------------------


def _context(options: HookOptions, event: Mapping[str, Any]) -> str:
    """The block to add to the model's context, or "" when the memory holds nothing that
    bears on it."""
    if event["hook_event_name"] == "UserPromptSubmit":
        query = event.get("prompt", "").strip()[:QUERY_CHARS]
    else:  # the session starts: what the memory holds about the project
        folder = os.path.basename(str(event.get("cwd", "")).rstrip("/"))
        query = f"the project {folder}" if folder else ""
    if not query:
        return ""
    # Half a surrogate pair ("\ud83d": an emoji cut in two) is valid JSON but no UTF-8.
    query = query.encode("utf-8", "replace").decode("utf-8")
    client = LightClient(options.socket, memory=options.memories[0], timeout=CONTEXT_SECONDS)
    session = event.get("session_id") or None
    body: dict[str, Any] = {"query": query, "token_budget": options.budget}
    if session and _is_id(session):  # Claude Code's are UUIDs
        body["session_id"] = session
        # the whole session is in Claude Code's prompt, not only its latest turns: none of
        # its captured turns is given back (as the recall fallback below does)
        body["recent"] = SESSION_TURNS
    if len(options.memories) > 1:
        body["memories"] = options.memories
    try:
        answer = client.post("/v1/context", body)
    except (NotFound, MethodNotAllowed) as exc:
        if not str(exc.message).startswith(("no route", "POST is not allowed")):
            raise
        return _recalled(client, options, query, body.get("session_id"))
    text = answer.get("text") if isinstance(answer, dict) else None
    return text.strip() if isinstance(text, str) else ""


SESSION_TURNS = 1000  # the most the context route leaves out of one session (its `recent`)
_ID_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:@-")


def _is_id(text: str) -> bool:
    """Whether ``text`` is an id as the store takes it (limits.ID_RULE), without ``re``."""
    return 0 < len(text) <= 128 and text[0].isalnum() and text.isascii() and set(text) <= _ID_CHARS


def _recalled(client: LightClient, options: HookOptions, query: str, session: str | None) -> str:
    """A daemon without the context route: recall, as a short block citing each item. Items
    of this session are left out (the agent has them), so are repeats of one text (a turn
    captured in two sessions) and the tail of the ranking below half the best score."""
    body: dict[str, Any] = {"query": query, "k": RECALL_K, "token_budget": options.budget}
    if len(options.memories) > 1:
        body["memories"] = options.memories
    result = client.post("/v1/retrieve", body)
    items, seen = [], set()
    for item in result.get("items", []):
        text = " ".join(str(item.get("text", "")).split())
        if item.get("kind") == "node" or text in seen:  # a bare entity name says nothing
            continue
        if session and (item.get("provenance") or {}).get("session_id") == session:
            continue
        seen.add(text)
        items.append((float(item.get("score", 0.0)), text, item))
    if not items:
        return ""
    best = items[0][0]
    lines = []
    for score, text, item in items:
        if score < best / 2:
            break
        if len(text) > ITEM_CHARS:
            text = text[: ITEM_CHARS - 1] + "…"
        where = (item.get("provenance") or {}).get("memory")
        cite = f"{item.get('kind')} {item.get('id')}" + (f" in {where}" if where else "")
        lines.append(f"- [{cite}] {text}")
    return (
        "From Chrysalis memory (earlier sessions; each item cites its id, and may be out of "
        "date):\n" + "\n".join(lines)
    )


# ---- capture -----------------------------------------------------------------------------


def projects_root() -> Path:
    """Where Claude Code keeps transcripts: ``$CLAUDE_CONFIG_DIR/projects``, else
    ``~/.claude/projects``."""
    base = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return Path(base).expanduser() / "projects"


def open_transcript(path: Any) -> tuple[IO[bytes], os.stat_result, Path]:
    """The transcript at ``path`` opened for reading, its stat and its real path; `Refused`
    unless it is a regular file of the caller's under `projects_root` (a symlink may lead
    from one place under it to another, never out)."""
    if not isinstance(path, str) or not path or "\x00" in path or len(path) > 4096:
        raise Refused("the hook input has no transcript_path; nothing captured")
    if not os.path.isabs(path):
        raise Refused(f"transcript_path {path!r} is not absolute; nothing captured")
    root = Path(os.path.realpath(projects_root()))
    real = Path(os.path.realpath(path))
    if not real.is_relative_to(root):
        raise Refused(
            f"transcript {path} is not under Claude Code's projects folder {root}; not read"
        )
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise Refused(f"cannot read transcript {path}: {exc.strerror}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
        os.close(fd)
        what = "not a regular file" if not stat.S_ISREG(st.st_mode) else "not yours"
        raise Refused(f"transcript {path} is {what}; not read")
    return os.fdopen(fd, "rb"), st, real


def _capture(options: HookOptions, event: Mapping[str, Any]) -> str:
    """Import the turns appended to the transcript since the last capture; a note for
    stderr when something was left out, else ""."""
    from chrysalis.importers import claude_code

    session = event.get("session_id") or None
    f, st, real = open_transcript(event.get("transcript_path"))
    cursor = Cursor(options, real)
    with f:
        start = cursor.offset(st)
        f.seek(start)
        lines, end, skipped = _new_lines(f, start)
    parsed = list(claude_code.rows(lines, session_id=session, cwd=event.get("cwd") or None))
    rows = [row for row in parsed if row is not None]
    bad = len(parsed) - len(rows) + skipped
    if rows:
        client = LightClient(options.socket, memory=options.memories[0], timeout=CAPTURE_SECONDS)
        _import(client, rows)
    cursor.save(st, end)
    notes = []
    if bad:
        notes.append(f"{bad} line(s) of {real.name} were not transcript entries; skipped")
    if end - start >= MAX_READ_BYTES:
        notes.append(f"{real.name} has more to capture; the next event takes it")
    return "; ".join(notes)


def _new_lines(f: IO[bytes], start: int) -> tuple[list[bytes], int, int]:
    """Whole lines from ``start`` (at most MAX_READ_BYTES of them), the offset after the last,
    and how many over-long lines were skipped. A last line without its newline is still
    being written: it is left for the next run."""
    lines: list[bytes] = []
    end, skipped = start, 0
    while end - start < MAX_READ_BYTES:
        line = f.readline(MAX_LINE_BYTES + 1)
        if not line.endswith(b"\n"):
            if len(line) <= MAX_LINE_BYTES:
                break  # the end of the file, maybe mid-line
            rest = _skip_line(f)
            if rest is None:
                break
            end += len(line) + rest
            skipped += 1
            continue
        end += len(line)
        lines.append(line)
    return lines, end, skipped


def _skip_line(f: IO[bytes]) -> int | None:
    """Bytes read to the end of an over-long line, or None when the file ends first."""
    total = 0
    while chunk := f.readline(1 << 20):
        total += len(chunk)
        if chunk.endswith(b"\n"):
            return total
    return None


def _import(client: LightClient, rows: list[Row]) -> None:
    """Import ``rows``; a turn stored already under another id's content (a resumed session's
    copy, a turn captured before by an older parser) keeps what is stored."""
    try:
        _send(client, rows)
    except Conflict:
        fresh = [row for row in rows if not _stored(client, row["id"])]
        if fresh:
            _send(client, fresh)


def _send(client: LightClient, rows: list[Row]) -> None:
    from chrysalis.importers.rows import export_lines

    payload = b"".join(export_lines(rows))
    client.request("POST", "/v1/import", payload, "application/x-ndjson")


def _stored(client: LightClient, bead_id: str) -> bool:
    """True when bead ``bead_id`` is here (a forgotten one is not: the import skips it)."""
    try:
        client.get(f"/v1/beads/{quote_segment(bead_id)}")
    except NotFound:
        return False
    return True


class Cursor:
    """How far a transcript was captured into a memory: ``{dev, ino, offset}`` in a file of
    the caller's own state folder. Without a usable folder every run reads the transcript
    from its start (still correct: what is here is left as it is)."""

    def __init__(self, options: HookOptions, transcript: Path) -> None:
        base = os.environ.get("XDG_STATE_HOME") or os.path.join(
            os.path.expanduser("~"), ".local", "state"
        )
        self.folder = Path(base) / "chrysalis" / "claude-code"
        import hashlib

        socket = options.socket or os.environ.get("CHRYSALIS_SOCKET", "")
        key = f"{socket}\0{options.memories[0]}\0{transcript}".encode("utf-8", "surrogatepass")
        self.file = self.folder / (hashlib.sha256(key).hexdigest()[:32] + ".json")

    def _usable(self) -> bool:
        """The folder is the caller's and no one else may write in it: a cursor planted by
        another user would make the hook skip turns."""
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            st = os.lstat(self.folder)
        except OSError:
            return False
        return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022

    def offset(self, st: os.stat_result) -> int:
        """Where to start reading: the saved offset if it is this same file and no longer
        than it is now (a rewritten or truncated transcript starts over), else 0."""
        if not self._usable():
            return 0
        try:
            fd = os.open(self.file, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as f:
                mine = os.fstat(fd)
                if not stat.S_ISREG(mine.st_mode) or mine.st_uid != os.getuid():
                    return 0
                saved = json.loads(f.read(4096))
        except (OSError, ValueError, RecursionError):
            return 0
        if not isinstance(saved, dict):
            return 0
        offset = saved.get("offset")
        same = saved.get("dev") == st.st_dev and saved.get("ino") == st.st_ino
        if same and isinstance(offset, int) and 0 <= offset <= st.st_size:
            return offset
        return 0

    def save(self, st: os.stat_result, offset: int) -> None:
        if not self._usable():
            return
        data = json.dumps({"dev": st.st_dev, "ino": st.st_ino, "offset": offset}).encode()
        # tempfile would import shutil (and bz2, lzma): a name of our own, created exclusively
        tmp = self.folder / f".{self.file.name}.{os.getpid()}.{os.urandom(4).hex()}"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, self.file)
        except OSError:
            _unlink(str(tmp))


def _unlink(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
