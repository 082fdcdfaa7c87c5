"""What every importer shares: bead rows as the store takes them, ids made safe, times read,
long text clipped, and rows as the JSON Lines ``POST /v1/import`` takes.

A bead row is a plain dict with ``id``, ``ts`` (epoch seconds), ``role``, ``content``,
``session_id``, ``turn_id`` and ``tags``: valid as it is for `chrysalis.core.models.Bead`, and the
same every time the same input is read, so importing twice changes nothing.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from chrysalis.core.errors import InvalidInput
from chrysalis.core.limits import MAX_CONTENT_CHARS

__all__ = [
    "MAX_TAG",
    "Row",
    "bead_row",
    "clip",
    "epoch",
    "export_lines",
    "load_json",
    "safe_id",
]

Row = dict[str, Any]
MAX_ID = 128
MAX_TAG = 128
_UNSAFE = re.compile(r"[^A-Za-z0-9._:@-]+")
_LAST_WORD = re.compile(r"\S+\Z")
TS_MAX = 32_503_680_000.0  # 3000-01-01: what the store takes (models.TS_MAX)


def safe_id(*parts: str) -> str:
    """``parts`` joined by ``-`` as an id the store takes: characters outside
    ``[A-Za-z0-9._:@-]`` become ``-``, it starts with a letter or digit, and an id that would
    be over 128 characters keeps its head and a digest of the whole (never two ids for one
    input, never one id for two)."""
    text = "-".join(parts)
    out = _UNSAFE.sub("-", text).lstrip("._:@-")
    if len(out) > MAX_ID or not out:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        out = (out[: MAX_ID - 33] + "-" + digest) if out else "x-" + digest
    return out


def epoch(value: Any) -> float | None:
    """Epoch seconds from a number (seconds, or milliseconds when it is too big for seconds)
    or an ISO 8601 string (a missing zone read as UTC); None for anything else or a time
    the store cannot hold."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = float(value)
        if seconds > TS_MAX:
            seconds /= 1000.0
    elif isinstance(value, str) and value.strip():
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        seconds = parsed.timestamp()
    else:
        return None
    return seconds if 0.0 <= seconds < TS_MAX else None


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out. A word the cut
    would split is left out whole: clips happen before the daemon's secrets scan, and the
    head of a credential cut in two is no longer the shape its rule knows."""
    if len(text) <= limit:
        return text
    note = f" […{len(text) - limit:,} more characters]"  # its width, near enough
    head = text[: max(0, limit - len(note))]
    if not text[len(head)].isspace():
        head = _LAST_WORD.sub("", head)
    return head + f" […{len(text) - len(head):,} more characters]"


def _clean(text: str) -> str:
    # Lone surrogates (a JSON "\ud83d" half) and NULs are refused by the store: replace them.
    text = text.replace("\x00", "")
    return text.encode("utf-8", "replace").decode("utf-8") if _has_surrogate(text) else text


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def bead_row(
    *,
    id: str,
    ts: float,
    role: str,
    content: str,
    session_id: str,
    turn_id: str | None,
    tags: Iterable[str],
) -> Row | None:
    """One bead row, or None when ``content`` is blank (nothing to remember). ``content`` is
    stripped and clipped to what one bead holds; tags are clipped to 128 characters."""
    text = _clean(content).strip()
    if not text:
        return None
    row: Row = {
        "id": id,
        "ts": ts,
        "role": role,
        "content": clip(text, MAX_CONTENT_CHARS),
        "session_id": session_id,
        "tags": list(dict.fromkeys(_clean(t)[:MAX_TAG] for t in tags if t)),
    }
    if turn_id is not None:
        row["turn_id"] = turn_id
    return row


HEADER = {"kind": "header", "format": "chrysalis-export", "version": 1}


def export_lines(rows: Iterable[Row]) -> Iterator[bytes]:
    """``rows`` as the JSON Lines ``POST /v1/import`` (`chrysalis.Client.import_lines`) takes:
    a header, then one bead a line."""
    yield json.dumps(HEADER).encode() + b"\n"
    for row in rows:
        item = json.dumps(row, ensure_ascii=False, separators=(",", ":"))
        yield b'{"kind":"bead","item":' + item.encode() + b"}\n"


def load_json(path: str | Path) -> Any:
    """The parsed JSON of an export file, or `InvalidInput` naming it."""
    try:
        with open(path, "rb") as f:
            return json.load(f)
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror or exc}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path}: not JSON ({exc})") from None
    except RecursionError:  # json's C parser recurses per level of [ or {
        raise InvalidInput(f"{path}: not an export: its JSON is nested too deeply") from None
