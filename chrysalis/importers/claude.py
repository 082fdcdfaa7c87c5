"""A claude.ai data export (``conversations.json``) as bead rows.

The file is a JSON list of conversations ``{"uuid", "name", "created_at", "chat_messages":
[...]}``; each message has ``uuid``, ``sender`` (``human`` or ``assistant``), ``text``,
``content`` (blocks: ``text``, ``thinking``, ``tool_use``, ``tool_result``), ``created_at``,
``attachments`` (files whose text was extracted: ``file_name``, ``extracted_content``) and
``files`` (uploads: ``file_name``). When messages carry ``parent_message_uuid`` (a retried or
edited message starts a branch), only the branch ending at the newest message is imported.

One bead per message:

    id          claude-<conversation uuid>-<message uuid>
    role        user (sender human) or assistant
    content     the text blocks (else ``text``); a tool call as ``[tool <name>: <input>]``,
                its result as ``[result: ...]`` (each clipped); attachments as ``[attached:
                <name>]`` with the start of their extracted text; uploads as ``[file: <name>]``
    session_id  claude-<conversation uuid>
    turn_id     the message uuid
    ts          its created_at, else the one before it (the conversation's first)
    tags        ["claude"]

Left out: the model's reasoning (``thinking`` blocks) and empty messages.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from chrysalis.core.errors import InvalidInput
from chrysalis.importers.rows import Row, bead_row, clip, epoch, safe_id

__all__ = ["conversation_rows", "conversations", "rows"]

TOOL_TEXT = 1_000  # characters of a tool call's input or result kept
ATTACHMENT_TEXT = 2_000  # characters of an attachment's extracted text kept
ROOT = "00000000-0000-4000-8000-000000000000"  # the parent of a conversation's first message
_ROLES = {"human": "user", "user": "user", "assistant": "assistant"}


def conversations(data: Any, where: str = "conversations.json") -> list[dict[str, Any]]:
    """The conversations of a parsed export, or `InvalidInput` saying what the file is not."""
    if isinstance(data, dict) and "chat_messages" in data:
        data = [data]
    if not isinstance(data, list):
        raise InvalidInput(
            f"{where}: not a claude.ai export: expected a JSON list of conversations, each "
            'with "uuid" and "chat_messages"'
        )
    for n, conv in enumerate(data, start=1):
        if not isinstance(conv, dict) or not isinstance(conv.get("chat_messages"), list):
            raise InvalidInput(
                f"{where}: conversation {n} has no chat_messages: not a claude.ai export"
            )
    return data


def rows(data: Any, where: str = "conversations.json") -> Iterator[Row]:
    """Bead rows for every message of every conversation of a parsed export, in order."""
    for n, conv in enumerate(conversations(data, where), start=1):
        yield from conversation_rows(conv, f"{where}: conversation {n}")


def conversation_rows(conv: Mapping[str, Any], where: str) -> Iterator[Row]:
    """The bead rows of one conversation (its kept branch, when it has branches)."""
    conv_id = conv.get("uuid")
    if not isinstance(conv_id, str) or not conv_id.strip():
        raise InvalidInput(f"{where}: no conversation uuid")
    session = safe_id("claude", conv_id)
    ts = epoch(conv.get("created_at")) or 0.0
    for message in _kept(conv["chat_messages"]):
        msg_id = message.get("uuid")
        role = _ROLES.get(str(message.get("sender")))
        if not isinstance(msg_id, str) or role is None:
            continue
        ts = max(ts, epoch(message.get("created_at")) or ts)
        row = bead_row(
            id=safe_id("claude", conv_id, msg_id), ts=ts, role=role, content=_text(message),
            session_id=session, turn_id=safe_id(msg_id), tags=["claude"],
        )  # fmt: skip
        if row is not None:
            yield row


def _kept(messages: list[Any]) -> list[dict[str, Any]]:
    """The messages in order; with parent links, the branch ending at the newest message."""
    messages = [m for m in messages if isinstance(m, dict)]
    by_id = {m["uuid"]: m for m in messages if isinstance(m.get("uuid"), str)}
    if not messages or not all(isinstance(m.get("parent_message_uuid"), str) for m in messages):
        return messages
    newest = max(messages, key=lambda m: epoch(m.get("created_at")) or 0.0)
    path, seen = [], set()
    node: dict[str, Any] | None = newest
    while node is not None and node.get("uuid") not in seen:
        seen.add(node.get("uuid"))
        path.append(node)
        parent = node.get("parent_message_uuid")
        node = by_id.get(parent) if parent != ROOT else None
    path.reverse()
    return path


def _text(message: Mapping[str, Any]) -> str:
    out: list[str] = []
    blocks = message.get("content")
    if isinstance(blocks, list) and blocks:
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                out.append(block["text"])
            elif kind == "tool_use":
                args = json.dumps(block.get("input"), ensure_ascii=False, default=str)
                out.append(f"[tool {block.get('name', '?')}: {clip(args, TOOL_TEXT)}]")
            elif kind == "tool_result":
                out.append(f"[result: {clip(_result_text(block.get('content')), TOOL_TEXT)}]")
    elif isinstance(message.get("text"), str):
        out.append(message["text"])
    for attachment in message.get("attachments") or []:
        if isinstance(attachment, dict) and isinstance(attachment.get("file_name"), str):
            extracted = attachment.get("extracted_content")
            body = f"\n{clip(extracted, ATTACHMENT_TEXT)}" if isinstance(extracted, str) else ""
            out.append(f"[attached: {attachment['file_name']}]{body}")
    for upload in message.get("files") or []:
        if isinstance(upload, dict) and isinstance(upload.get("file_name"), str):
            out.append(f"[file: {upload['file_name']}]")
    return "\n".join(p for p in out if p.strip())


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(b.get("text")) for b in content if isinstance(b, dict) and b.get("text")
        )
    return ""
