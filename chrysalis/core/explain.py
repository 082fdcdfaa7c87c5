"""Pydantic's validation errors in plain words, for people.

Pydantic says ``body.query: String should have at least 1 character``; a person wants
``query must not be empty``. `sentences` turns pydantic's error dicts (``type``, ``loc``,
``ctx``, and ``input`` when there) into one sentence each, naming the field as the user wrote
it: no ``body.`` prefix, no union member tags, list items as ``tags[2]`` and the items of a
batch as ``bead 1`` (counted from 1).

Pure: it reads the dicts only, so it imports nothing (not even pydantic); both the library
(`errors.from_pydantic`) and the daemon's 400 answers use it. Input values are never echoed,
only their length: a message may end in a log, and the value may be a secret.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from chrysalis.core.limits import ID_PATTERN, ID_RULE

__all__ = ["REQUEST_PARTS", "field_name", "sentence", "sentences"]

# Where FastAPI says a request's bad value was: the first part of its ``loc``.
REQUEST_PARTS = frozenset({"body", "query", "path", "header", "cookie"})

# The types pydantic names a union's members by in ``loc`` (``now.float``, ``now.datetime``):
# not fields. Other member tags carry brackets (``function-after[...]``, ``list[str]``).
_MEMBER_TAGS = frozenset(
    {"str", "int", "float", "bool", "bytes", "datetime", "date", "time", "timedelta", "none",
     "list", "dict", "set", "tuple", "decimal", "uuid", "constrained-str", "constrained-int",
     "constrained-float", "one", "many"}
)  # fmt: skip

_PREFIXES = ("Value error, ", "Assertion failed, ")

# type -> what the value must be (after "FIELD ")
_MUST = {
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "finite_number": "must be a finite number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "string_type": "must be a string",
    "string_unicode": "contains a lone surrogate (not valid Unicode)",
    "bytes_type": "must be text",
    "list_type": "must be a list",
    "tuple_type": "must be a list",
    "set_type": "must be a list",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "dataclass_type": "must be an object",
    "none_required": "must be null",
    "uuid_type": "must be a UUID",
    "uuid_parsing": "must be a UUID",
    "int_parsing_size": "is too large a number",
    "frozen_field": "cannot be changed",
    "extra_forbidden": "is not a known field",
    "missing": "is required",
}
_DATETIME = re.compile(r"^(datetime|date|time)_")


def _number(v: Any) -> str:
    """1 for 1.0, 8,388,608 for 8388608: numbers as a person writes them."""
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        v = int(v)
    return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)


def _plural(n: Any, word: str) -> str:
    return f"{_number(n)} {word}" + ("" if n == 1 else "s")


def field_name(loc: Sequence[Any], *, item: str | None = None) -> str:
    """The field ``loc`` points at, as the user wrote it: ``query``, ``tags[2]``,
    ``span_refs[0].path``; with ``item``, a leading index is the item of a batch:
    ``bead 2: content`` (counted from 1). Union member tags are left out (a request's
    first part, ``body``, is the caller's to drop)."""
    head, path = _where(loc, item)
    return f"{head}: {path}" if head and path else head or path


def _where(loc: Sequence[Any], item: str | None) -> tuple[str, str]:
    """(the batch item, the field path inside it) of ``loc``."""
    parts = [p for p in loc if not (isinstance(p, str) and _is_member_tag(p))]
    head = ""
    if item and parts and isinstance(parts[0], int):
        head, parts = f"{item} {parts[0] + 1}", parts[1:]
    path = ""
    for p in parts:
        path += f"[{p}]" if isinstance(p, int) else f".{p}" if path else str(p)
    return head, path


def _is_member_tag(part: str) -> bool:
    return part in _MEMBER_TAGS or "[" in part or part.startswith("function-")


def _unit(kind: str) -> str:
    if kind in ("too_short", "too_long"):
        return "item"
    return "byte" if "bytes" in kind else "character"


def _predicate(err: Mapping[str, Any]) -> str | None:
    """What is wrong, to follow the field's name; None when pydantic's own message is kept
    (a value_error's, or a type with no plain form)."""
    kind = str(err.get("type", ""))
    ctx = err.get("ctx") or {}
    has_input = "input" in err
    value = err.get("input")
    if kind in _MUST:
        return _MUST[kind]
    if kind in ("string_too_short", "too_short", "bytes_too_short"):
        least = ctx.get("min_length", 1)
        if least == 1 and kind != "too_short":
            return "must not be empty"
        unit = _unit(kind)
        return f"is too short: at least {_plural(least, unit)}"
    if kind in ("string_too_long", "too_long", "bytes_too_long"):
        most = ctx.get("max_length")
        unit = _unit(kind)
        if kind == "too_long" and "actual_length" in ctx:
            return f"has too many items: {_number(ctx['actual_length'])}, at most {_number(most)}"
        if has_input and isinstance(value, (str, bytes, list)):
            return f"is too long: {_plural(len(value), unit)}, at most {_number(most)}"
        return f"is too long: at most {_plural(most, unit)}"
    if kind == "greater_than_equal":
        return f"must be at least {_number(ctx.get('ge'))}"
    if kind == "greater_than":
        return f"must be greater than {_number(ctx.get('gt'))}"
    if kind == "less_than_equal":
        return f"must be at most {_number(ctx.get('le'))}"
    if kind == "less_than":
        return f"must be less than {_number(ctx.get('lt'))}"
    if kind == "multiple_of":
        return f"must be a multiple of {_number(ctx.get('multiple_of'))}"
    if kind in ("literal_error", "enum"):
        return f"must be {ctx.get('expected', 'one of the allowed values')}"
    if kind == "string_pattern_mismatch":
        if ctx.get("pattern") == ID_PATTERN:
            return f"is not an id: an id is {ID_RULE}"
        return f"does not match the pattern {ctx.get('pattern')}"
    if _DATETIME.match(kind):
        return "must be a date and time (ISO 8601)"
    return None


def sentence(
    err: Mapping[str, Any], *, item: str | None = None, within: str = "", whole: str = ""
) -> str:
    """One pydantic error dict in plain words (see the module's docstring). ``item`` names
    a batch's items (``bead``); ``within`` the object the ``loc`` is inside (``filters``);
    ``whole`` what the input is called when the error is about all of it (``the request
    body``; by default ``item``, or ``the value``)."""
    loc = list(err.get("loc", ()))
    kind = str(err.get("type", ""))
    if kind == "json_invalid":
        at = next((p for p in loc if isinstance(p, int)), None)
        where = f" at character {at}" if at is not None else ""
        return f"malformed JSON{where}: {(err.get('ctx') or {}).get('error', err.get('msg'))}"
    head, path = _where(loc, item)
    if within:
        path = f"{within}.{path}" if path else within
    subject = path or head or whole or item or "the value"
    text = _said(err, path, subject)
    if kind == "extra_forbidden" and whole and path and not any(c in path for c in ".["):
        # a top-level field: say whose fields are known (a nested one's path says it)
        text += f" of {whole if whole.startswith(('the ', 'a ')) else 'a ' + whole}"
    return f"{head}: {text}" if head and not text.startswith(head) else text


def _said(err: Mapping[str, Any], path: str, subject: str) -> str:
    predicate = _predicate(err)
    if predicate is not None:
        return f"{subject} {predicate}"
    msg = str(err.get("msg", "is not valid"))
    for prefix in _PREFIXES:
        msg = msg.removeprefix(prefix)
    if msg.startswith("Input should be "):
        return f"{subject} must be {msg.removeprefix('Input should be ')}"
    leaf = path.rsplit(".", 1)[-1].split("[", 1)[0]
    if not path or msg.startswith(path) or (path == leaf and msg.startswith(leaf)):
        return msg  # the validator named its field already ("content must not be empty")
    return f"{path}: {msg}"


def sentences(
    errors: Iterable[Mapping[str, Any]],
    *,
    item: str | None = None,
    within: str = "",
    whole: str = "",
) -> list[str]:
    """Each error in plain words (`sentence`), once; the errors of a union's members on one
    field joined: ``now must be a number or a date and time (ISO 8601)``."""
    out: list[str] = []
    unions: dict[str, int] = {}  # field -> its sentence in out
    for err in errors:
        text = sentence(err, item=item, within=within, whole=whole)
        loc = err.get("loc", ())
        if any(isinstance(p, str) and _is_member_tag(p) for p in loc):
            name = field_name(loc, item=item)
            if name in unions and " must be " in text and " must be " in out[unions[name]]:
                more = text.split(" must be ", 1)[1]
                if more not in out[unions[name]]:
                    out[unions[name]] += f" or {more}"
                continue
            unions.setdefault(name, len(out))
        if text not in out:
            out.append(text)
    return out
