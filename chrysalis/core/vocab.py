"""The words every surface shares, defined once: a bead's roles and optional fields, and the
retrieval strategies.

The library (`Memory.append_bead`), both clients (`remember`), the HTTP bodies, the CLI and the
MCP tools all take these; plain typing only, so the CLI imports it without pydantic.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypedDict, get_args

Role = Literal["user", "assistant", "system", "tool", "note"]
ROLES: tuple[str, ...] = get_args(Role)
# A bead that does not say who spoke is the user's: what a person or an agent remembers for them.
# One default everywhere (library, clients, HTTP, CLI, MCP); turns state their role.
DEFAULT_ROLE: Role = "user"

Strategy = Literal["fusion", "emb", "keyword", "kg", "beads"]
STRATEGIES: tuple[str, ...] = get_args(Strategy)
DEFAULT_STRATEGY: Strategy = "fusion"


class BeadFields(TypedDict, total=False):
    """A bead's fields besides its content, each optional: what ``remember`` and
    ``append_bead`` take as keywords.

    ``id`` (a new UUIDv7 when absent), ``role`` (`DEFAULT_ROLE`), ``session_id``, ``turn_id``,
    ``ts`` (epoch seconds, an ISO 8601 string or a datetime; now when absent), ``importance``
    (0 to 1; judged from how new the words are when absent), ``tags``, ``source`` (who or what
    said it), ``span_refs`` (the file lines it came from)."""

    id: str | None
    role: Role | str
    session_id: str | None
    turn_id: str | None
    ts: Any
    importance: float | None
    tags: Iterable[str]
    source: str | None
    span_refs: Iterable[Any]


BEAD_FIELDS: tuple[str, ...] = tuple(BeadFields.__annotations__)


def bead_row(content: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """One bead as the wire and the write side take it: content and the fields given, none
    left as None, sequences as lists. An unknown field is kept, so the validator names it."""
    row: dict[str, Any] = {"content": content}
    for name, value in fields.items():
        if value is None:
            continue
        if name == "tags":
            value = list(value)
        elif name == "span_refs":
            value = [s if isinstance(s, Mapping) else s.model_dump() for s in value]
        row[name] = value
    return row
