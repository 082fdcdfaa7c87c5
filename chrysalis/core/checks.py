"""Input checks shared by the read and write sides: ids and pydantic models, with errors that
name what is wrong (`errors.InvalidInput`), never a store failure."""

from __future__ import annotations

import re
from typing import Any

from pydantic import TypeAdapter, ValidationError

from chrysalis.core.errors import InvalidInput, from_pydantic
from chrysalis.core.limits import ID_PATTERN, ID_RULE

_ID = re.compile(ID_PATTERN)  # fullmatch: `match` lets a trailing newline through


def check_id(value: Any, what: str) -> str:
    """Ids reach LMDB keys: a bad one is the caller's error, never a store failure."""
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise InvalidInput(f"invalid {what} id {str(value)[:80]!r}: an id is {ID_RULE}")
    return value


def validate(model: Any, value: Any, what: str) -> Any:
    """``value`` validated by a pydantic model or `TypeAdapter`; `InvalidInput` naming each
    bad field otherwise, in plain words (a list of more than one: each by its number,
    ``bead 2: content must not be empty``)."""
    try:
        if isinstance(model, TypeAdapter):
            return model.validate_python(value)
        return model.model_validate(value)
    except ValidationError as exc:
        batch = isinstance(value, list) and len(value) > 1
        raise from_pydantic(exc, what, batch=batch) from None
