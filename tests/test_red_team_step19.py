"""Round 3's red team: the attacks on the surfaces this round added (the Claude Code hook, the
importers, the LangGraph and OpenAI Agents integrations), each of which failed against the
code before the fix it names (docs/security.md lists them).

The attackers: the text itself (JSON nested past the parser's recursion, a credential where a
clip falls, a credential as an id), and another local user who can write where the hook keeps
its cursors."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import string
from pathlib import Path
from typing import Any

import pytest

from chrysalis import Client, SecretRefused
from chrysalis.importers import chatgpt, claude, claude_code
from chrysalis.secrets.scan import redact

from .daemon_process import DaemonProcess
from .test_claude_hook import command, daemon, event, home, run, session_beads, transcript

__all__ = ["daemon", "home"]  # fixtures, used by name

ALPHABET = string.ascii_letters + string.digits
DEEP = 100_000  # levels of nesting: far past CPython's recursion limit


def _token(prefix: str, n: int) -> str:
    return prefix + "".join(secrets.choice(ALPHABET) for _ in range(n))


def _pieces(body: str, n: int = 10) -> list[str]:
    """Every ``n`` characters in a row of a credential's random body: any one of them in a
    stored text is a part of the credential that survived."""
    return [body[i : i + n] for i in range(len(body) - n + 1)]


def _line(uuid: str, session: str, content: Any, kind: str = "user") -> str:
    return json.dumps({
        "type": kind, "uuid": uuid, "parentUuid": None, "sessionId": session,
        "timestamp": "2025-03-04T10:00:00Z", "cwd": "/home/dev/orchard",
        "message": {"role": kind, "content": content},
    })  # fmt: skip


# ---- JSON nested past the parser -----------------------------------------------------------


def test_an_event_nested_past_the_parsers_depth_exits_0_and_says_so(
    home: Path, tmp_path: Path
) -> None:
    """Before: ``RecursionError: maximum recursion depth exceeded while decoding a JSON array``,
    a traceback and exit 1 (the hook promises exit 0 whatever it is given)."""
    payload = b"[" * DEEP + b"]" * DEEP
    done, _ = command(payload, tmp_path / "none.sock", home)
    assert done.returncode == 0, done.stderr[-300:]
    assert done.stdout == b"" and b"Traceback" not in done.stderr
    assert b"not JSON" in done.stderr and len(done.stderr.splitlines()) == 1


def test_a_transcript_line_nested_past_the_parsers_depth_does_not_stop_capture(
    daemon: DaemonProcess, home: Path
) -> None:
    """Before: the Stop hook died on the line with a RecursionError, exit 1, before its cursor
    was saved: every later event died on it again, so nothing of that transcript was captured
    ever after."""
    session = "7b1e0c55-0000-4000-8000-0000000000d1"
    lines = [
        _line("d1000000-0000-4000-8000-000000000001", session, "The greenhouse vents open at 24C."),
        "[" * DEEP + "]" * DEEP,
        _line("d1000000-0000-4000-8000-000000000002", session, "Water the figs on Thursdays."),
    ]
    path = transcript(home, session, text="\n".join(lines) + "\n")
    done, _ = command(
        json.dumps(event("stop", home, session_id=session, transcript_path=str(path))).encode(),
        daemon.socket, home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-300:]
    assert b"Traceback" not in done.stderr and b"1 line(s) of" in done.stderr
    assert [b.content for b in session_beads(daemon, session)] == [
        "The greenhouse vents open at 24C.", "Water the figs on Thursdays.",
    ]  # fmt: skip


def test_an_export_nested_past_the_parsers_depth_is_refused_in_plain_words(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    """Before: ``chrysalis import --from chatgpt`` printed a RecursionError traceback."""
    conv = '{"id": "c1", "mapping": {}, "x": ' + "[" * DEEP + "]" * DEEP + "}"
    export = tmp_path / "conversations.json"
    export.write_text(f"[{conv}]")
    done = daemon.cli("import", "--from", "chatgpt", str(export))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-300:]
    assert "nested too deeply" in done.stderr and str(export) in done.stderr


# ---- a credential where a clip falls -------------------------------------------------------


def test_a_credential_cut_by_a_tool_calls_clip_leaves_no_piece_behind(
    daemon: DaemonProcess, home: Path
) -> None:
    """A tool call's input is clipped to 1,000 characters before the daemon's scan. Before:
    the clip cut a GitHub token in two and the part before the cut (26 of its 36 random
    characters) was stored, too short for the token's rule to know it."""
    session = "7b1e0c55-0000-4000-8000-0000000000d2"
    token = _token("ghp_", 36)
    cmd = _cut_across(claude_code.TOOL_TEXT, "make clean && git push https://", token, "@gh/o.git")
    block = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": cmd}}
    text = _line("d2000000-0000-4000-8000-000000000001", session, [block], "assistant") + "\n"
    path = transcript(home, session, text=text)
    _, err = run(daemon, event("stop", home, session_id=session, transcript_path=str(path)))
    stored = " ".join(b.content for b in session_beads(daemon, session))
    assert stored.startswith("Bash: pear fig plum"), err
    assert not [p for p in _pieces(token[4:]) if p in stored]


def _cut_across(limit: int, lead: str, secret: str, tail: str = "") -> str:
    """Text of filler words, then ``lead`` and ``secret`` placed so that a clip to ``limit``
    characters (its note takes some 25) falls some 14 characters into the secret's body."""
    prefix = len("sk-ant-api03-") if secret.startswith("sk-ant-") else len("ghp_")
    at = limit - 25 - prefix - 14  # where the secret starts
    words = ("pear fig plum " * (limit // 10))[: max(0, at - len(lead))]
    return words + lead + secret + tail + " and more after it" * 20


@pytest.mark.parametrize("where", ["claude attachment", "claude tool result", "chatgpt tool"])
def test_no_importer_clip_leaves_part_of_a_credential(where: str) -> None:
    """Every clip of the importers, with a credential across the cut, then the daemon's scan
    (`redact`, as the import runs it): no piece of the credential is left. Before: 14 of its
    random characters were (the shape's rule wants the whole token)."""
    key = _token("sk-ant-api03-", 93) + "AA"
    token = _token("ghp_", 36)
    if where == "claude attachment":
        env_file = _cut_across(claude.ATTACHMENT_TEXT, "\nANTHROPIC_PROD ", key, "\n")
        message = {"uuid": "m1", "sender": "human", "text": "what is wrong with this?",
                   "attachments": [{"file_name": ".env", "extracted_content": env_file}]}  # fmt: skip
        rows = list(claude.rows([{"uuid": "c1", "chat_messages": [message]}]))
        secret = key
    elif where == "claude tool result":
        result = _cut_across(claude.TOOL_TEXT, "fatal: remote https://", token, "@h/x.git")
        message = {"uuid": "m1", "sender": "assistant", "content": [{"type": "tool_result",
                   "is_error": True, "content": [{"type": "text", "text": result}]}]}  # fmt: skip
        rows = list(claude.rows([{"uuid": "c1", "chat_messages": [message]}]))
        secret = token
    else:
        output = _cut_across(chatgpt.TOOL_TEXT, "git remote add o https://", token, "@h/x.git")
        node = {"message": {"id": "m1", "author": {"role": "tool", "name": "python"},
                            "content": {"content_type": "text", "parts": [output]}},
                "parent": None, "children": []}  # fmt: skip
        rows = list(chatgpt.rows([{"id": "c1", "mapping": {"n1": node}, "current_node": "n1"}]))
        secret = token
    assert rows and "more characters]" in rows[0]["content"]  # the clip fell on the credential
    stored, _ = redact(rows[0]["content"])
    body = secret[13:] if secret.startswith("sk-ant") else secret[4:]
    assert not [p for p in _pieces(body) if p in stored], stored[-120:]


# ---- the hook's cursor ---------------------------------------------------------------------


def test_a_cursor_planted_by_another_user_is_not_trusted(daemon: DaemonProcess, home: Path) -> None:
    """Where the state folder is writable by others (a shared or misconfigured home), another
    user planted a cursor that says the transcript was read to its end. Before: the hook
    believed it and captured nothing; the cursor must be the caller's own file."""
    if os.getuid() != 0:
        pytest.skip("giving a file to another user takes root")
    session = "7b1e0c55-0000-4000-8000-0000000000d3"
    text = _line("d3000000-0000-4000-8000-000000000001", session, "Prune the pear tree in March.")
    path = transcript(home, session, text=text + "\n")
    folder = home / "state" / "chrysalis" / "claude-code"
    folder.mkdir(parents=True)
    folder.chmod(0o777)  # writable by others
    from chrysalisd.claude_hook import Cursor, parse_args

    options = parse_args(["--socket", str(daemon.socket)])
    assert options is not None
    cursor = Cursor(options, Path(os.path.realpath(path)))
    st = os.stat(path)
    cursor.file.write_text(json.dumps({"dev": st.st_dev, "ino": st.st_ino, "offset": st.st_size}))
    os.chown(cursor.file, 65534, 65534)
    run(daemon, event("stop", home, session_id=session, transcript_path=str(path)))
    assert [b.content for b in session_beads(daemon, session)] == ["Prune the pear tree in March."]


# ---- the integrations ----------------------------------------------------------------------


def test_agent_sessions_named_by_credentials_are_kept_apart(daemon: DaemonProcess) -> None:
    """An app keys its SDK sessions by a token (a user's session cookie, an API key). Before:
    the id went to the daemon as the session id, whose scan redacted it to
    ``redacted-github-token``: the session could not read its own history, and a session
    named ``redacted-github-token`` read every such session's."""
    from chrysalis.integrations.openai_agents import ChrysalisSession

    first, second = _token("ghp_", 36), _token("ghp_", 36)
    a = ChrysalisSession(first, socket=daemon.socket)
    b = ChrysalisSession(second, socket=daemon.socket)
    thief = ChrysalisSession("redacted-github-token", socket=daemon.socket)
    try:
        _apart(daemon, a, b, thief, first, second)
    finally:
        for s in (a, b, thief):
            s.close()


def _apart(daemon: DaemonProcess, a: Any, b: Any, thief: Any, first: str, second: str) -> None:
    asyncio.run(a.add_items([{"role": "user", "content": "the vault code is on the blue card"}]))
    asyncio.run(b.add_items([{"role": "user", "content": "ship the order to Lisbon"}]))
    assert [i["content"] for i in asyncio.run(a.get_items())] == [  # type: ignore[typeddict-item]
        "the vault code is on the blue card"
    ]
    assert [i["content"] for i in asyncio.run(b.get_items())] == [  # type: ignore[typeddict-item]
        "ship the order to Lisbon"
    ]
    assert asyncio.run(thief.get_items()) == []
    with Client(daemon.socket) as c:
        sessions = {bead.session_id for bead in c.last_beads(1000)}
    assert not [s for s in sessions if s and (first[4:14] in s or second[4:14] in s)]


def test_a_refused_key_is_not_repeated_in_the_error(daemon: DaemonProcess) -> None:
    """Before: ``SecretRefused: refused: the value of key 'ghp_…' holds …`` carried the
    credential's first 60 characters into every log that records the exception."""
    from chrysalis.integrations.langgraph import ChrysalisStore

    token = _token("ghp_", 36)
    with ChrysalisStore(socket=daemon.socket, secrets="refuse") as store:
        with pytest.raises(SecretRefused) as caught:
            store.put(("orchard",), token, {"note": "the pump's password is Qx7!vR2#pL9"})
        assert not [p for p in _pieces(token[4:]) if p in str(caught.value)]
        big = {"note": "y" * 8_400_000}
        with pytest.raises(Exception) as caught_big:
            store.put(("orchard",), f"note {token}", big)
        assert not [p for p in _pieces(token[4:]) if p in str(caught_big.value)]


def test_the_hook_runs_as_claude_code_runs_it_with_a_lone_surrogate_prompt(
    daemon: DaemonProcess, home: Path
) -> None:
    r"""A prompt holding half a surrogate pair (``"\ud83d"`` in the event's JSON) is no crash."""
    payload = json.dumps(event("user_prompt_submit", home, prompt="pears \ud83d and figs"))
    done, _ = command(payload.encode(), daemon.socket, home)
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr[-300:]


# ---- the secrets scan on text made to be slow ------------------------------------------------


def test_a_long_line_of_addresses_with_ports_is_scanned_in_linear_time(
    daemon: DaemonProcess,
) -> None:
    """Every write scans its text for credentials, holding the daemon's one interpreter.
    Before: the URL-password rule scanned from every ``x://`` to the end of a line without
    spaces, so 120 kB of ``http://host:port/path`` joined by commas (a config one-liner, a
    log) held the daemon for over a minute; the write timed out and every client waited."""
    nodes = ",".join(f"http://node{i}.orchard.example:80{i % 10}/status" for i in range(3_500))
    line = "https://ops:Plum-7Tree-Fig9@node0.orchard.example/," + nodes  # one credential
    assert len(line) > 120_000
    with Client(daemon.socket, timeout=20.0) as c:
        bead = c.remember(line, session_id="urls")
    assert "Plum-7Tree-Fig9" not in bead.content and "[REDACTED:password]" in bead.content
    assert bead.content.endswith(nodes)  # the addresses without a password are kept
