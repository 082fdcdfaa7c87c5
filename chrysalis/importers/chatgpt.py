"""ChatGPT's data export (``conversations.json``) as bead rows.

The file is a JSON list of conversations. Each has an ``id`` (or ``conversation_id``), a
``create_time`` and a ``mapping`` ``{node id: {"message", "parent", "children"}}``: a tree,
because editing a prompt or regenerating an answer starts a branch. ``current_node`` is the
leaf the user last saw; the conversation as kept is the path from it up to the root, and only
that path is imported (a conversation without it keeps the branch of its newest leaf).

One bead per message on that path:

    id          chatgpt-<conversation id>-<message id>
    role        the author's (user, assistant, system, tool); an assistant message addressed to
                a tool (``recipient`` not "all": code it runs, a search it makes) is ``tool``
    content     the text parts; code and tool output as text; images and attachments as
                ``[image]`` / ``[attached: name]``; a tool's text prefixed with its name
    session_id  chatgpt-<conversation id>
    turn_id     the message id
    ts          the message's create_time, else the one before it (the conversation's first)
    tags        ["chatgpt"]

Left out: messages hidden from the conversation (``is_visually_hidden_from_conversation``:
the system prompt, custom instructions), empty ones, the model's hidden reasoning
(``thoughts``, ``reasoning_recap``) and the model's memory notes (``model_editable_context``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from chrysalis.core.errors import InvalidInput
from chrysalis.importers.rows import Row, bead_row, clip, epoch, safe_id

__all__ = ["conversations", "kept_branch", "rows"]

TOOL_TEXT = 2_000  # characters of a tool's output kept: what it said, not all it printed
_SKIPPED_TYPES = {"thoughts", "reasoning_recap", "model_editable_context", "user_editable_context"}
_ROLES = {"user", "assistant", "system", "tool"}


def conversations(data: Any, where: str = "conversations.json") -> list[dict[str, Any]]:
    """The conversations of a parsed export, or `InvalidInput` saying what the file is not."""
    if isinstance(data, dict) and "mapping" in data:
        data = [data]  # one conversation on its own
    if not isinstance(data, list):
        raise InvalidInput(
            f"{where}: not a ChatGPT export: expected a JSON list of conversations, each with "
            '"mapping" and "current_node"'
        )
    for n, conv in enumerate(data, start=1):
        if not isinstance(conv, dict) or not isinstance(conv.get("mapping"), dict):
            raise InvalidInput(f"{where}: conversation {n} has no mapping: not a ChatGPT export")
    return data


def kept_branch(mapping: Mapping[str, Any], current: Any) -> list[dict[str, Any]]:
    """The nodes from the root down to ``current`` (the kept branch); without a known
    ``current``, down to the leaf whose message is newest. A cycle or a dangling parent ends
    the walk where it is."""
    if not isinstance(current, str) or current not in mapping:
        current = _newest_leaf(mapping)
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    node_id: Any = current
    while isinstance(node_id, str) and node_id in mapping and node_id not in seen:
        seen.add(node_id)
        node = mapping[node_id]
        if not isinstance(node, dict):
            break
        path.append(node)
        node_id = node.get("parent")
    path.reverse()
    return path


def _newest_leaf(mapping: Mapping[str, Any]) -> str | None:
    best, best_ts = None, -1.0
    for node_id, node in mapping.items():
        if not isinstance(node, dict) or node.get("children"):
            continue
        message = node.get("message")
        ts = epoch(message.get("create_time")) if isinstance(message, dict) else None
        if (ts or 0.0) >= best_ts:
            best, best_ts = node_id, ts or 0.0
    return best


def rows(data: Any, where: str = "conversations.json") -> Iterator[Row]:
    """Bead rows for every kept message of every conversation of a parsed export, in order.

    Raises `InvalidInput` (naming the conversation) for a file that is not an export."""
    for n, conv in enumerate(conversations(data, where), start=1):
        yield from conversation_rows(conv, f"{where}: conversation {n}")


def conversation_rows(conv: Mapping[str, Any], where: str) -> Iterator[Row]:
    """The bead rows of one conversation's kept branch."""
    conv_id = conv.get("conversation_id") or conv.get("id")
    if not isinstance(conv_id, str) or not conv_id.strip():
        raise InvalidInput(f"{where}: no conversation id")
    session = safe_id("chatgpt", conv_id)
    ts = epoch(conv.get("create_time")) or 0.0
    for node in kept_branch(conv["mapping"], conv.get("current_node")):
        message = node.get("message")
        if not isinstance(message, dict):
            continue  # the root, or a node whose message was removed
        ts = max(ts, epoch(message.get("create_time")) or ts)
        role, text = _role_and_text(message)
        msg_id = message.get("id") or node.get("id")
        if role is None or not isinstance(msg_id, str):
            continue
        row = bead_row(
            id=safe_id("chatgpt", conv_id, msg_id), ts=ts, role=role, content=text,
            session_id=session, turn_id=safe_id(msg_id), tags=["chatgpt"],
        )  # fmt: skip
        if row is not None:
            yield row


def _role_and_text(message: Mapping[str, Any]) -> tuple[str | None, str]:
    meta = _object(message.get("metadata"))
    if meta.get("is_visually_hidden_from_conversation"):
        return None, ""
    author = _object(message.get("author"))
    role = author.get("role")
    content = _object(message.get("content"))
    kind = content.get("content_type")
    if role not in _ROLES or kind in _SKIPPED_TYPES:
        return None, ""
    text = _content_text(content)
    attached = [a.get("name") for a in meta.get("attachments") or [] if isinstance(a, dict)]
    if attached := [name for name in attached if isinstance(name, str) and name]:
        text = (text + "\n" if text else "") + " ".join(f"[attached: {a}]" for a in attached)
    recipient = message.get("recipient")
    if role == "assistant" and isinstance(recipient, str) and recipient not in ("all", ""):
        return "tool", f"{recipient} ← {clip(text, TOOL_TEXT)}"  # the assistant calls a tool
    if role == "tool":
        name = author.get("name") if isinstance(author.get("name"), str) else "tool"
        return "tool", f"{name}: {clip(text, TOOL_TEXT)}"
    return str(role), text


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _content_text(content: Mapping[str, Any]) -> str:
    """The text of a message's content, whatever its ``content_type``."""
    parts = content.get("parts")
    if isinstance(parts, list):
        out = []
        for part in parts:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, dict):
                kind = str(part.get("content_type", ""))
                if "image" in kind:
                    out.append("[image]")
                elif "audio" in kind:
                    text = part.get("text")
                    out.append(text if isinstance(text, str) else "[audio]")
                elif isinstance(part.get("text"), str):
                    out.append(part["text"])
        return "\n".join(p for p in out if p)
    for key in ("text", "result"):  # code, execution_output, tether_*, system_error
        if isinstance(content.get(key), str):
            return str(content[key])
    return ""
