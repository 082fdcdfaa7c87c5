from __future__ import annotations

from pathlib import Path

import pytest

from chrysalis import Bead, InvalidInput, Memory, PayloadTooLarge
from chrysalis.core.models import ID_PATTERN, MAX_CONTENT_CHARS, new_id
from chrysalis.schemas import json_schemas

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"


def test_schemas_are_fresh() -> None:
    """Regenerate with `python -m chrysalis.schemas` when this fails."""
    expected = json_schemas()
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in SCHEMAS.glob("*.schema.json")}
    assert sorted(on_disk) == sorted(expected), "schemas/ has missing or extra files"
    for name, text in expected.items():
        assert on_disk[name] == text, f"schemas/{name} is stale: run `python -m chrysalis.schemas`"


def test_new_id_is_a_time_ordered_safe_uuid7() -> None:
    import re

    ids = [new_id() for _ in range(50)]
    assert all(re.match(ID_PATTERN, i) for i in ids)
    assert all(i[14] == "7" for i in ids)
    assert len(set(ids)) == 50


def test_bead_accepts_datetime_iso_and_epoch() -> None:
    from datetime import UTC, datetime

    dt = datetime(2024, 5, 8, 13, 56, tzinfo=UTC)
    for ts in (dt, "2024-05-08T13:56:00+00:00", dt.timestamp(), int(dt.timestamp())):
        assert Bead(id="b1", ts=ts, content="x").ts == dt.timestamp()


BAD_BEADS = [  # each refused in plain words, naming the field as the caller wrote it
    ({"ts": 1.0}, "content is required"),
    ({"ts": 1.0, "content": ""}, "content must not be empty"),
    ({"ts": 1.0, "content": 42}, "content must be a string"),  # wrong type, not coerced
    ({"ts": 1.0, "content": "x", "importance": "0.5"}, "importance must be a number"),
    ({"ts": 1.0, "content": "x", "importance": 2.0}, "importance must be at most 1"),
    (
        {"ts": 1.0, "content": "x", "role": "wizard"},
        "role must be 'user', 'assistant', 'system', 'tool' or 'note'",
    ),
    ({"ts": 1.0, "content": "x", "tags": "a,b"}, "tags must be a list"),
    ({"ts": True, "content": "x"}, "ts: timestamp must be epoch seconds, a datetime or an ISO"),
    ({"ts": "yesterday", "content": "x"}, "ts: not an ISO 8601 timestamp: 'yesterday'"),
    ({"ts": -5.0, "content": "x"}, "ts must be at least 0"),
    (
        {"ts": 1.0, "content": "bad \ud800 surrogate"},
        "content contains a lone surrogate (not valid Unicode)",
    ),
    (
        {"ts": 1.0, "content": "x", "tags": ["ok", "\udfff"]},
        "tags[1] contains a lone surrogate (not valid Unicode)",
    ),
    ({"ts": 1.0, "content": "x", "extra": 1}, "extra is not a known field"),
    (
        {"ts": 1.0, "content": "x", "session_id": "../etc/passwd"},
        "session_id is not an id: an id is 1 to 128",
    ),
]


@pytest.mark.parametrize(("fields", "message"), BAD_BEADS)
def test_invalid_beads_raise_clearly_and_write_nothing(
    mem: Memory, fields: dict, message: str
) -> None:  # type: ignore[type-arg]
    before = (mem.state_digest(), mem.version_vector())
    with pytest.raises(InvalidInput) as info:
        mem.append_beads([{"id": "b1", **fields}])
    assert str(info.value).startswith(message)  # no "invalid bead: 0: Value error, ..."
    assert (mem.state_digest(), mem.version_vector()) == before


@pytest.mark.parametrize(
    "bad_id", ["", "../x", "a/b", ".hidden", "a b", "x" * 129, "nul\x00", "é", 7]
)
def test_unsafe_ids_are_refused(mem: Memory, bad_id: object) -> None:
    with pytest.raises(InvalidInput, match="id"):
        mem.append_bead("x", id=bad_id)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="id"):
        mem.add_node(bad_id, "person")  # type: ignore[arg-type]
    assert mem.version_vector() == {}


def test_oversized_content_is_too_large(mem: Memory) -> None:
    with pytest.raises(PayloadTooLarge, match="content"):
        mem.append_bead("x" * (MAX_CONTENT_CHARS + 1))
    with pytest.raises(PayloadTooLarge, match="tags"):
        mem.append_bead("x", tags=["t" * 129])
    assert mem.version_vector() == {}


def test_one_bad_row_in_a_batch_writes_nothing(mem: Memory) -> None:
    rows = [{"content": f"row {i}"} for i in range(10)] + [{"content": None}]
    with pytest.raises(InvalidInput, match=r"^bead 11: content must be a string$"):
        mem.append_beads(rows)
    assert mem.last_beads(20) == []


def test_invalid_node_metadata(mem: Memory) -> None:
    with pytest.raises(InvalidInput, match="metadata"):
        mem.add_node("n1", "thing", metadata={"when": object()})
    with pytest.raises(InvalidInput, match="metadata"):
        mem.add_node("n1", "thing", metadata={"x": float("nan")})
    with pytest.raises(PayloadTooLarge):
        mem.add_node("n1", "thing", name="n" * 10_000)
    with pytest.raises(InvalidInput, match="type"):
        mem.add_node("n1", "")
    assert mem.version_vector() == {}


def test_invalid_persona_and_skill(mem: Memory) -> None:
    with pytest.raises(InvalidInput, match="unknown persona field"):
        mem.update_persona(mood="happy")
    with pytest.raises(InvalidInput, match="goals"):
        mem.update_persona(goals="be nice")
    with pytest.raises(InvalidInput, match="name"):
        mem.put_skill({"id": "s1"})
    with pytest.raises(InvalidInput, match="id"):
        mem.put_skill({"id": "s 1", "name": "x"})
    assert mem.version_vector() == {}
