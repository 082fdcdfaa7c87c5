"""Import LoCoMo conversations (Maharana et al., ACL 2024) as beads.

A LoCoMo file is a JSON list of conversations, each ``{"sample_id": ..., "conversation":
{"speaker_a", "speaker_b", "session_N_date_time": "1:56 pm on 8 May, 2023", "session_N":
[{"speaker", "dia_id", "text", "blip_caption"?}, ...]}, "qa": [...]}``. One bead per turn:

    id          locomo-<sample>-<dia_id>            e.g. locomo-conv-26-D1:3
    content     "<speaker>: <text>" (+ " [shares a photo: <caption>]")
    role        user (both speakers are people talking to each other)
    session_id  locomo-<sample>-session_<N>
    turn_id     the dia_id
    ts          the session's date (UTC) + one second per turn; without a date, one second
                after the turn before
    tags        ["locomo", <speaker>]

No ``source``: retrieval shows a bead as "<source>: <content>", and the content already starts
with the speaker.

Ids are made safe for the store (characters outside ``[A-Za-z0-9._:@-]`` become ``-``) and
are deterministic, so importing the same file twice adds nothing the second time.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chrysalis.core.errors import Conflict, InvalidInput, NotFound

if TYPE_CHECKING:
    from chrysalis.client import Client
    from chrysalis.core.models import Bead
    from chrysalis.memory import Memory

DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y")
MAX_BATCH = 10_000  # the daemon takes at most this many beads per request
_SESSION = re.compile(r"^session_(\d+)$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._:@-]+")
_MAX_ID = 128
_MAX_TAG = 128
_COMPARED = ("content", "role", "session_id", "turn_id", "tags", "source")
_SESSION_SUFFIX = re.compile(r"-session_\d+$")


def safe_id(text: str) -> str:
    """``text`` as an id: unsafe runs become ``-``, it starts with a letter or digit, and it
    is at most 128 characters."""
    out = _UNSAFE.sub("-", text).lstrip("._:@-")[:_MAX_ID]
    if not out:
        raise InvalidInput(f"cannot make an id of {text[:80]!r}")
    return out


def parse_date(text: str) -> float | None:
    """'1:56 pm on 8 May, 2023' -> epoch seconds, read as UTC; None if it is not such a date."""
    cleaned = " ".join(text.split())
    for fmt in DATE_FORMATS:
        try:
            return datetime.strptime(cleaned, fmt).replace(tzinfo=UTC).timestamp()
        except ValueError:
            continue
    return None


def _load(path: str | Path) -> list[Any]:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path}: not a LoCoMo file: not JSON ({exc})") from None
    if isinstance(data, dict) and "conversation" in data:
        data = [data]  # one conversation on its own
    if not isinstance(data, list) or not data:
        raise InvalidInput(
            f"{path}: not a LoCoMo file: expected a JSON list of conversations "
            '({"sample_id", "conversation": {"session_1": [...], ...}, "qa"})'
        )
    return data


def _sessions(conversation: Mapping[str, Any], where: str) -> list[tuple[int, list[Any]]]:
    """The ``session_N`` turn lists, in session order (a date without turns is skipped)."""
    found = []
    for key, value in conversation.items():
        m = _SESSION.fullmatch(key)
        if m is None:
            continue
        if not isinstance(value, list):
            raise InvalidInput(f"{where}: {key} is not a list of turns")
        found.append((int(m.group(1)), value))
    if not found:
        raise InvalidInput(f"{where}: no session_N lists of turns in its conversation")
    return sorted(found, key=lambda item: item[0])


def locomo_beads(path: str | Path) -> Iterator[dict[str, Any]]:
    """One bead dict per turn of every conversation in the LoCoMo file at ``path``, in order.

    Raises `InvalidInput` (naming the place) for a file that is not LoCoMo-shaped.
    """
    data = _load(path)
    seen: set[str] = set()
    for index, sample in enumerate(data):
        where = f"{Path(path).name}: conversation {index + 1}"
        if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
            raise InvalidInput(f"{where}: not a LoCoMo conversation (no 'conversation' object)")
        sample_id = sample.get("sample_id", f"sample-{index + 1}")
        if not isinstance(sample_id, str | int) or isinstance(sample_id, bool):
            raise InvalidInput(f"{where}: sample_id must be a string")
        sample_key = safe_id(str(sample_id))
        where = f"{Path(path).name}: {sample_id}"
        conversation = sample["conversation"]
        last_ts = -1.0
        for number, turns in _sessions(conversation, where):
            date = conversation.get(f"session_{number}_date_time")
            start = parse_date(date) if isinstance(date, str) else None
            if start is None:
                start = last_ts + 1.0
            session_id = safe_id(f"locomo-{sample_key}-session_{number}")
            for i, turn in enumerate(turns):
                at = f"{where}: session_{number} turn {i + 1}"
                yield _bead(turn, at, sample_key, session_id, start + i, seen)
                last_ts = start + i


def _bead(
    turn: Any, at: str, sample_key: str, session_id: str, ts: float, seen: set[str]
) -> dict[str, Any]:
    if not isinstance(turn, dict):
        raise InvalidInput(f"{at}: a turn must be an object with speaker, dia_id and text")
    fields = {name: turn.get(name) for name in ("speaker", "dia_id", "text")}
    for name, value in fields.items():
        if not isinstance(value, str):
            raise InvalidInput(f"{at}: {name} must be a string")
    speaker = " ".join(str(fields["speaker"]).split())
    dia_id = str(fields["dia_id"]).strip()
    text = str(fields["text"]).strip()
    if not speaker or not dia_id:
        raise InvalidInput(f"{at}: speaker and dia_id must not be empty")
    bead_id = safe_id(f"locomo-{sample_key}-{dia_id}")
    if bead_id in seen:
        raise InvalidInput(f"{at}: dia_id {dia_id!r} appears twice (bead id {bead_id!r})")
    seen.add(bead_id)
    content = f"{speaker}: {text}"
    caption = turn.get("blip_caption")
    if isinstance(caption, str) and caption.strip():
        content += f" [shares a photo: {caption.strip()}]"
    return {
        "id": bead_id,
        "role": "user",
        "content": content,
        "session_id": session_id,
        "turn_id": safe_id(dia_id),
        "ts": ts,
        "tags": ["locomo", speaker[:_MAX_TAG]],
    }


def import_locomo(
    client_or_memory: Client | Memory, path: str | Path, batch: int = 500
) -> dict[str, Any]:
    """Write the LoCoMo file's turns as beads through a `Client` (``remember_many``) or into
    a `Memory` (``append_beads``), ``batch`` beads per commit.

    The whole file is read and checked first (`InvalidInput`, nothing written). Beads already
    here are left alone, and a turn whose bead was forgotten here stays forgotten, so a second
    import adds nothing; a bead id held here with other content raises `Conflict` before
    anything is written. Returns counts: ``turns``, ``added``, ``unchanged``, ``forgotten``,
    ``conversations``, ``sessions``, ``batches``.
    """
    from pydantic import ValidationError

    from chrysalis.client import Client
    from chrysalis.core.errors import from_pydantic
    from chrysalis.core.models import BEADS

    if not isinstance(batch, int) or isinstance(batch, bool) or not 1 <= batch <= MAX_BATCH:
        raise InvalidInput(f"batch must be an int from 1 to {MAX_BATCH}")
    rows = list(locomo_beads(path))
    try:
        BEADS.validate_python(rows)
    except ValidationError as exc:
        err = from_pydantic(exc, "bead", batch=True)
        raise type(err)(f"{Path(path).name}: {err.message}", details=err.details) from None

    target = client_or_memory
    append: Callable[[list[dict[str, Any]]], Sequence[Bead]]
    append = target.remember_many if isinstance(target, Client) else target.append_beads
    known = _known(target, rows)
    fresh: list[dict[str, Any]] = []
    for row in rows:
        stored = known.get(row["id"])
        if stored is None:
            fresh.append(row)
        elif any(getattr(stored, k) != row.get(k) for k in _COMPARED):
            raise Conflict(
                f"bead {row['id']!r} exists here with other content; nothing imported "
                "(was the file changed since it was imported?)"
            )
    counts = {
        "turns": len(rows),
        "added": 0,
        "unchanged": len(rows) - len(fresh),
        "forgotten": 0,
        "conversations": len({_SESSION_SUFFIX.sub("", row["session_id"]) for row in rows}),
        "sessions": len({row["session_id"] for row in rows}),
        "batches": 0,
    }
    for start in range(0, len(fresh), batch):
        chunk = fresh[start : start + batch]
        try:
            append(chunk)
        except Conflict:
            # A bead forgotten here keeps its id forever: leave it out and write the rest.
            chunk = _drop_forgotten(target, chunk, counts)
            if chunk:
                append(chunk)
        counts["added"] += len(chunk)
        counts["batches"] += 1
    return counts


def _known(target: Client | Memory, rows: list[dict[str, Any]]) -> dict[str, Bead]:
    """The beads already here under the rows' ids, read one session at a time."""
    per_session: dict[str, int] = {}
    for row in rows:
        per_session[row["session_id"]] = per_session.get(row["session_id"], 0) + 1
    ids = {row["id"] for row in rows}
    known: dict[str, Bead] = {}
    for session_id, n in per_session.items():
        # Some headroom for beads others wrote into the session; the daemon caps at 1000.
        for bead in target.last_beads(min(1000, n + 100), session_id=session_id):
            if bead.id in ids:
                known[bead.id] = bead
    return known


def _drop_forgotten(
    target: Client | Memory, chunk: list[dict[str, Any]], counts: dict[str, Any]
) -> list[dict[str, Any]]:
    """The rows of a refused batch that can still be written: a bead forgotten here is left
    out (counted), one already here unchanged too; one here with other content stays in, so
    that writing it raises the `Conflict`."""
    keep = []
    for row in chunk:
        try:
            stored = target.get_bead(row["id"])
        except NotFound as exc:
            if "forgotten" in str(exc):
                counts["forgotten"] += 1
                continue
            keep.append(row)
            continue
        if all(getattr(stored, k) == row.get(k) for k in _COMPARED):
            counts["unchanged"] += 1
        else:
            keep.append(row)
    return keep
