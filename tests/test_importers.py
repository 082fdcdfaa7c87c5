"""The history parsers (`chrysalis.importers`) on hand-made exports shaped like the real ones:
ChatGPT's message tree with an edited prompt, hidden messages, reasoning, tool calls and
images; claude.ai's blocks, attachments and retried answers; Claude Code's transcript
entries. Pure functions: no daemon."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chrysalis.core.errors import InvalidInput
from chrysalis.core.models import BEADS
from chrysalis.importers import Export, chatgpt, claude, claude_code, export_lines, read
from chrysalis.importers.rows import epoch, safe_id

HISTORIES = Path(__file__).parent / "fixtures" / "histories"
TRANSCRIPT = Path(__file__).parent / "fixtures" / "claude_code" / "transcript.jsonl"


def all_rows(fmt: str, path: Path) -> list[dict[str, Any]]:
    return [row for unit in read(fmt, path) for row in unit.rows]


def test_chatgpt_keeps_the_branch_the_conversation_was_left_on() -> None:
    rows = all_rows("chatgpt", HISTORIES / "chatgpt_conversations.json")
    porto = [r for r in rows if r["session_id"].endswith("porto0000001")]
    turns = [r["turn_id"] for r in porto]
    assert turns == ["p-u1b", "p-call", "p-tool", "p-a1b", "p-u2", "p-a2"]
    # The first draft of the prompt and its answer were edited away; hidden context,
    # reasoning and its recap are not turns.
    text = " ".join(r["content"] for r in porto)
    assert "three days" not in text and "francesinha" not in text
    assert "I am vegetarian" not in text and "Answer briefly" not in text  # custom instructions
    assert "Thought for" not in text and "Vegetarian options in Porto are" not in text
    assert [r["role"] for r in porto] == ["user", "tool", "tool", "assistant", "user", "assistant"]
    assert porto[1]["content"].startswith("web.run ← search(")
    assert porto[2]["content"].startswith("web.run: Urban trains")
    assert porto[4]["content"].endswith("[image]\n[attached: booking-porto.png]")
    # A message without create_time takes the time before it; times never go back.
    assert porto[2]["ts"] == porto[1]["ts"] == 1709290103.0
    assert [r["ts"] for r in porto] == sorted(r["ts"] for r in porto)
    assert all(r["tags"] == ["chatgpt"] for r in rows)


def test_chatgpt_without_current_node_follows_the_newest_leaf() -> None:
    rows = all_rows("chatgpt", HISTORIES / "chatgpt_conversations.json")
    bread = [r for r in rows if r["session_id"].endswith("sourdough002")]
    assert [r["turn_id"] for r in bread] == ["s-u1", "s-call", "s-out", "s-a1"]
    assert bread[0]["content"].endswith("[attached: bakes.csv]")
    assert bread[1]["content"].startswith("python ← import pandas")


def test_claude_keeps_text_tools_and_attachments_and_the_retried_answer() -> None:
    rows = all_rows("claude", HISTORIES / "claude_conversations.json")
    garden = [r for r in rows if "garden" in r["session_id"]]
    assert [r["turn_id"] for r in garden] == ["m-1", "m-2"]  # m-3 is empty
    assert "[attached: balcony-notes.txt]\nBalcony gets 3 hours" in garden[0]["content"]
    assert "[file: balcony.jpg]" in garden[0]["content"]
    answer = garden[1]["content"]
    assert "Sungold" in answer and "[tool artifacts:" in answer and "[result: OK]" in answer
    assert "North-facing means little sun" not in answer  # its thinking
    invoice = [r for r in rows if "invoice" in r["session_id"]]
    assert [r["turn_id"] for r in invoice] == ["n-1", "n-2b", "n-3"]
    assert [r["role"] for r in invoice] == ["user", "assistant", "user"]
    assert invoice[0]["ts"] == epoch("2024-05-10T08:00:05Z")


def test_claude_code_keeps_what_was_said_and_done_not_the_machinery() -> None:
    (unit,) = list(read("claude-code", TRANSCRIPT))
    assert unit.bad_lines == 1
    by_role = [(r["role"], r["content"][:30]) for r in unit.rows]
    assert by_role == [
        ("user", "The nightly export to the vend"),
        ("tool", "Read: /home/dev/orchard/sync/v"),
        ("assistant", "fetch_all asks for every order"),
        ("tool", "Bash: pytest tests/test_vendor"),
        ("tool", "error: FAILED tests/test_vendo"),
        ("user", "Here is the failing run from C"),
        ("assistant", "I rewrote fetch_all to follow "),
        ("tool", "Edit: /home/dev/orchard/sync/v"),
    ]
    text = " ".join(r["content"] for r in unit.rows)
    for gone in ("/clear", "Caveat:", "Two callers", "Running PostToolUse", "continued from a",
                 "probably comes from", "import requests", "iVBORw0KGgo"):  # fmt: skip
        assert gone not in text


def test_a_transcript_line_that_is_not_an_object_is_counted_not_fatal() -> None:
    lines = [b"[]", b"17", b'"text"', b"{bad json", b"", b"{}"]
    parsed = list(claude_code.rows(lines, session_id="s"))
    assert parsed.count(None) == 4 and all(p is None for p in parsed)


def test_every_row_is_a_valid_bead_and_the_same_on_every_read() -> None:
    for fmt, path in [
        ("chatgpt", HISTORIES / "chatgpt_conversations.json"),
        ("claude", HISTORIES / "claude_conversations.json"),
        ("claude-code", TRANSCRIPT),
    ]:
        rows = all_rows(fmt, path)
        BEADS.validate_python(rows)  # what the daemon's import checks first
        assert rows == all_rows(fmt, path)
        assert len({r["id"] for r in rows}) == len(rows)


def test_export_lines_are_what_the_import_route_reads() -> None:
    rows = all_rows("claude", HISTORIES / "claude_conversations.json")
    lines = b"".join(export_lines(rows)).splitlines()
    assert json.loads(lines[0]) == {"kind": "header", "format": "chrysalis-export", "version": 1}
    assert [json.loads(line)["item"] for line in lines[1:]] == rows


@pytest.mark.parametrize(
    ("fmt", "data", "said"),
    [
        ("chatgpt", {"title": "no mapping"}, "not a ChatGPT export"),
        ("chatgpt", [{"title": "x"}], "conversation 1 has no mapping"),
        ("chatgpt", [{"mapping": {}}], "no conversation id"),
        ("claude", {"name": "x"}, "not a claude.ai export"),
        ("claude", [{"uuid": "u", "chat_messages": "hi"}], "has no chat_messages"),
        ("claude", [{"chat_messages": []}], "no conversation uuid"),
        ("chatgpt", [{"uuid": "u", "chat_messages": []}], "has no mapping"),  # the wrong --from
    ],
)
def test_a_file_of_another_shape_is_named(tmp_path: Path, fmt: str, data: Any, said: str) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InvalidInput, match=said):
        all_rows(fmt, path)


def test_unreadable_inputs_are_named(tmp_path: Path) -> None:
    (tmp_path / "conversations.json").write_text("{not json")
    with pytest.raises(InvalidInput, match="not JSON"):
        Export("chatgpt", tmp_path)  # the export's folder: its conversations.json
    with pytest.raises(InvalidInput, match="cannot read"):
        Export("claude", tmp_path / "missing.json")
    with pytest.raises(InvalidInput, match="no such file or folder"):
        Export("claude-code", tmp_path / "nowhere")
    with pytest.raises(InvalidInput, match="unknown format"):
        Export("gemini", tmp_path)


def test_message_trees_with_cycles_and_dangling_parents_end_the_walk() -> None:
    mapping = {
        "a": {"id": "a", "parent": "b", "children": [], "message": _said("a", "user", "one")},
        "b": {"id": "b", "parent": "a", "children": ["a"], "message": _said("b", "user", "two")},
    }
    assert [n["id"] for n in chatgpt.kept_branch(mapping, "a")] == ["b", "a"]
    dangling = {"c": {"id": "c", "parent": "gone", "message": _said("c", "user", "three")}}
    assert [n["id"] for n in chatgpt.kept_branch(dangling, "c")] == ["c"]


def _said(id: str, role: str, text: str) -> dict[str, Any]:
    return {"id": id, "author": {"role": role}, "content": {"content_type": "text",
            "parts": [text]}, "create_time": 1700000000}  # fmt: skip


def test_odd_text_is_made_storable() -> None:
    conv = {"id": "odd", "mapping": {
        "x": {"id": "x", "parent": None, "children": [],
              "message": _said("x", "user", "half an emoji \ud83d and a NUL \x00 here")},
    }, "current_node": "x"}  # fmt: skip
    (row,) = list(chatgpt.rows([conv]))
    BEADS.validate_python([row])
    assert "\x00" not in row["content"]
    long_id = safe_id("chatgpt", "c" * 200, "m")
    assert len(long_id) == 128 and long_id != safe_id("chatgpt", "c" * 200, "n")
    assert safe_id("chatgpt", "a/b c") == "chatgpt-a-b-c"


def test_huge_messages_are_clipped_to_one_bead() -> None:
    blocks = [{"type": "text", "text": "z" * (9 * 1024 * 1024)}]
    conv = {"uuid": "big", "chat_messages": [
        {"uuid": "m", "sender": "human", "content": blocks, "created_at": "2024-01-01T00:00:00Z"}
    ]}  # fmt: skip
    (row,) = list(claude.rows([conv]))
    BEADS.validate_python([row])
    assert row["content"].endswith("more characters]")


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("2025-06-03T09:15:00.000Z", 1748942100.0),
        ("2025-06-03T09:15:00", 1748942100.0),  # no zone: UTC
        ("2025-06-03T11:15:00+02:00", 1748942100.0),
        (1748942100, 1748942100.0),
        (1748942100000, 1748942100.0),  # milliseconds
        ("yesterday", None),
        (True, None),
        (-5, None),
        (None, None),
    ],
)
def test_times(value: Any, seconds: float | None) -> None:
    assert epoch(value) == seconds
