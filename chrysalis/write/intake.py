"""Intake: incoming bead rows made ready for their ``bead.add`` ops (the write side's first
step, `chrysalis.write.writer.Writer`).

A row (a dict of `Memory.append_bead`'s fields, or a `Bead`) passes the secrets policy
(`scan_row`), then gets what it was written without (`prepare_rows`): an id, a time, and an
importance, the bead's novelty against what the memory holds (`chrysalis.search.novelty`,
through the writer's ``importance`` callback; 0.5 without one). All of it is decided here, at
the origin, and travels in the op: every replica holds the same bead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from chrysalis.core.checks import validate
from chrysalis.core.errors import InvalidInput
from chrysalis.core.models import Bead, new_id
from chrysalis.secrets.scan import Finding, Policy, scan_bead

DEFAULT_IMPORTANCE = 0.5  # a bead written without one, where nothing judges novelty
# Texts in write order -> their importances (`Indexer.importance`).
Importance = Callable[[Sequence[str]], list[float]]
BEAD_FIELDS = (
    "id", "role", "content", "source", "session_id", "turn_id", "importance", "tags",
    "span_refs", "ts",
)  # fmt: skip
_BEAD_DEFAULTS = {
    name: (f.default_factory() if f.default_factory else f.default)  # type: ignore[call-arg]
    for name, f in Bead.model_fields.items()
    if not f.is_required()
}


def scan_row(row: Any, policy: Policy) -> tuple[Any, list[Finding]]:
    """A bead row (a dict or a `Bead`) under the secrets ``policy``: the row with secrets
    redacted (of the same type) and what was redacted; `SecretRefused` under ``refuse``."""
    if policy == "off":
        return row, []
    if isinstance(row, Bead):
        item, found = scan_bead(row.model_dump(), policy)
    elif isinstance(row, Mapping):
        item, found = scan_bead(row, policy)
    else:
        return row, []  # rejected by prepare_rows
    if not found:
        return row, []
    if item.get("blob") is not None:  # it named the unredacted text: made again on write
        item["blob"] = None
    return (validate(Bead, item, "bead") if isinstance(row, Bead) else item), found


def prepare_rows(
    rows: Sequence[Any], stamp: float, importance: Importance | None
) -> tuple[list[Any], list[bool]]:
    """``rows`` with an id, a time (``stamp``) and an importance where they had none, and
    per row whether its importance was judged here. `Bead`s pass as they are."""
    prepared: list[Any] = []
    judged: list[bool] = []
    for row in rows:
        if isinstance(row, Bead):
            prepared.append(row)
            judged.append(False)
            continue
        if not isinstance(row, Mapping):
            raise InvalidInput(f"a bead row must be a dict or a Bead, not {type(row).__name__}")
        item = dict(row)
        if item.get("id") is None:
            item["id"] = new_id()
        if item.get("ts") is None:
            item["ts"] = stamp
        if "tags" in item and isinstance(item["tags"], tuple):
            item["tags"] = list(item["tags"])
        prepared.append(item)
        judged.append(item.get("importance") is None)
    unjudged = [n for n, j in enumerate(judged) if j]
    if unjudged:
        texts = [_text(prepared[n].get("content")) for n in unjudged]
        scores = importance(texts) if importance is not None else [DEFAULT_IMPORTANCE] * len(texts)
        for n, score in zip(unjudged, scores, strict=True):
            prepared[n]["importance"] = score
    return prepared, judged


def same_bead(stored: Mapping[str, Any], new: Mapping[str, Any], *, judged: bool) -> bool:
    """Same add, ts aside (a retried append without ts gets a new one) and, when ``judged``
    here, importance aside (the retry is judged against a memory that now holds the bead);
    a remote op may leave defaults out."""
    skip = {"ts", "importance"} if judged else {"ts"}
    return all(
        stored.get(k, _BEAD_DEFAULTS.get(k)) == new.get(k, _BEAD_DEFAULTS.get(k))
        for k in (*BEAD_FIELDS, "blob")
        if k not in skip
    )


def _text(content: Any) -> str:
    return content if isinstance(content, str) else ""  # validation rejects it after
