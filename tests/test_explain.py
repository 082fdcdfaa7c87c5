"""Pydantic's error dicts in plain words (chrysalis/core/explain.py)."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from chrysalis.core.errors import InvalidInput, PayloadTooLarge, from_pydantic
from chrysalis.core.explain import field_name, sentence, sentences

CASES: list[tuple[dict[str, Any], str]] = [
    ({"type": "missing", "loc": ("content",), "msg": "Field required"}, "content is required"),
    (
        {"type": "string_too_short", "loc": ("query",), "msg": "String should have at least 1 "
         "character", "input": "", "ctx": {"min_length": 1}},
        "query must not be empty",
    ),
    (
        {"type": "string_too_short", "loc": ("name",), "msg": "", "ctx": {"min_length": 3}},
        "name is too short: at least 3 characters",
    ),
    (
        {"type": "string_too_long", "loc": ("content",), "msg": "String should have at most "
         "8388608 characters", "input": "x" * 10_485_760, "ctx": {"max_length": 8_388_608}},
        "content is too long: 10,485,760 characters, at most 8,388,608",
    ),
    (
        {"type": "string_too_long", "loc": ("content",), "msg": "", "ctx": {"max_length": 10}},
        "content is too long: at most 10 characters",
    ),
    (
        {"type": "greater_than_equal", "loc": ("k",), "msg": "", "ctx": {"ge": 1}},
        "k must be at least 1",
    ),
    (
        {"type": "string_pattern_mismatch", "loc": ("session_id",), "msg": "",
         "ctx": {"pattern": r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$"}},
        "session_id is not an id: an id is 1 to 128 letters, digits or . _ : @ -, the first a "
        "letter or digit",
    ),
    (
        {"type": "string_pattern_mismatch", "loc": ("name",), "msg": "", "ctx": {"pattern": "^x$"}},
        "name does not match the pattern ^x$",
    ),
    (
        {"type": "less_than_equal", "loc": ("importance",), "msg": "", "ctx": {"le": 1.0}},
        "importance must be at most 1",
    ),
    ({"type": "int_parsing", "loc": ("k",), "msg": ""}, "k must be a whole number"),
    ({"type": "float_parsing", "loc": ("importance",), "msg": ""}, "importance must be a number"),
    (
        {"type": "literal_error", "loc": ("role",), "msg": "", "ctx": {"expected": "'user' or 'note'"}},
        "role must be 'user' or 'note'",
    ),
    (
        {"type": "enum", "loc": ("colour",), "msg": "", "ctx": {"expected": "'red' or 'blue'"}},
        "colour must be 'red' or 'blue'",
    ),
    ({"type": "extra_forbidden", "loc": ("colour",), "msg": ""}, "colour is not a known field"),
    (
        {"type": "value_error", "loc": (), "msg": "Value error, content must not be empty"},
        "content must not be empty",
    ),
    (
        {"type": "value_error", "loc": ("metadata",), "msg": "Value error, too deep"},
        "metadata: too deep",
    ),
    (
        {"type": "json_invalid", "loc": ("body", 1), "msg": "JSON decode error",
         "ctx": {"error": "Expecting value"}},
        "malformed JSON at character 1: Expecting value",
    ),
    (
        {"type": "too_long", "loc": ("tags",), "msg": "",
         "ctx": {"field_type": "List", "max_length": 256, "actual_length": 300}},
        "tags has too many items: 300, at most 256",
    ),
    (
        {"type": "string_too_short", "loc": ("span_refs", 0, "path"), "msg": "",
         "ctx": {"min_length": 1}},
        "span_refs[0].path must not be empty",
    ),
    (
        {"type": "some_new_type", "loc": ("x",), "msg": "Input should be a valid thing"},
        "x must be a valid thing",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("err", "said"), CASES, ids=[c[1] for c in CASES])
def test_each_error_type_in_plain_words(err: dict[str, Any], said: str) -> None:
    assert sentence(err) == said


def test_a_batch_names_its_items_from_one() -> None:
    err = {"type": "value_error", "loc": (1,), "msg": "Value error, content must not be empty"}
    assert sentence(err, item="bead") == "bead 2: content must not be empty"
    assert sentence({"type": "missing", "loc": (0, "content")}, item="bead") == (
        "bead 1: content is required"
    )
    assert sentence({"type": "dict_type", "loc": (4,)}, item="bead") == "bead 5 must be an object"
    assert field_name(("many", 2, "tags", 0), item="bead") == "bead 3: tags[0]"


def test_a_unions_members_make_one_sentence() -> None:
    errs = [
        {"type": "float_parsing", "loc": ("now", "float"), "msg": ""},
        {"type": "datetime_from_date_parsing", "loc": ("now", "datetime"), "msg": ""},
    ]
    assert sentences(errs) == ["now must be a number or a date and time (ISO 8601)"]


class Colour(Enum):
    RED = "red"


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")
    content: Annotated[str, Field(max_length=5)]
    k: Annotated[int, Field(ge=1)] = 1
    role: Literal["user", "note"] = "note"
    colour: Colour = Colour.RED

    @model_validator(mode="after")
    def _not_blank(self) -> _M:
        if not self.content.strip():
            raise ValueError("content must not be empty")
        return self


def _refused(value: Any) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        TypeAdapter(list[_M]).validate_python(value) if isinstance(value, list) else (
            _M.model_validate(value)
        )
    return info.value


def test_from_pydantic_speaks_plainly_and_never_echoes_the_value() -> None:
    err = from_pydantic(_refused({"content": " "}), "thing")
    assert type(err) is InvalidInput and err.message == "content must not be empty"
    err = from_pydantic(_refused({"content": "s3cret-token", "k": 0}), "thing")
    assert type(err) is PayloadTooLarge
    assert err.message == "content is too long: 12 characters, at most 5; k must be at least 1"
    assert "s3cret" not in str(err.details)
    err = from_pydantic(_refused({"content": "x", "role": "x", "colour": "x", "y": 1}), "thing")
    assert err.message == (
        "role must be 'user' or 'note'; colour must be 'red'; y is not a known field of a thing"
    )
    batch = _refused([{"content": "ok"}, {"content": " "}])
    assert from_pydantic(batch, "thing", batch=True).message == "thing 2: content must not be empty"
    one = _refused([{"content": " "}])  # a list of one: its index says nothing
    assert from_pydantic(one, "thing").message == "content must not be empty"
    assert from_pydantic(_refused(7), "thing").message == "thing must be an object"
