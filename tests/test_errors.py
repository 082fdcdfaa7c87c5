"""The error tree: one module, drawn in its docstring, every class with a code and a status."""

from __future__ import annotations

import inspect
import re

import pytest

from chrysalis.core import errors
from chrysalis.core.errors import BY_CODE, ChrysalisError, error_class


def _classes() -> list[type[ChrysalisError]]:
    return [
        obj
        for _, obj in inspect.getmembers(errors, inspect.isclass)
        if issubclass(obj, ChrysalisError) and obj.__module__ == errors.__name__
    ]


def _drawn() -> dict[str, tuple[int, int | None]]:
    """``{class name: (depth, status)}`` as the docstring's tree draws them."""
    out: dict[str, tuple[int, int | None]] = {}
    for line in (errors.__doc__ or "").splitlines():
        m = re.match(r"^    ((?:[│ ]   )*)(?:[├└]── )?([A-Z]\w+)\b", line)
        if m and ("── " in line or m.group(2) == "ChrysalisError"):
            status = re.search(r"\(HTTP (\d{3})\)", line)
            out[m.group(2)] = (len(m.group(1)) // 4, int(status.group(1)) if status else None)
    return out


def test_the_docstring_draws_every_class_and_only_those() -> None:
    assert set(_drawn()) == {c.__name__ for c in _classes()}


def test_the_drawing_shows_each_class_under_its_parent_with_its_status() -> None:
    drawn = _drawn()
    for cls in _classes():
        depth, status = drawn[cls.__name__]
        parents = [b for b in cls.__mro__[1:] if b is ChrysalisError or b in _classes()]
        assert depth == max(0, len(parents) - 1), cls.__name__
        if status is not None:
            assert status == cls.status, cls.__name__


def test_no_error_class_lives_outside_errors_py() -> None:
    import chrysalis.mirrors
    import chrysalis.remotes
    import chrysalis.sync
    import chrysalis.sync.segment
    import chrysalisd.demo

    def walk(cls: type) -> list[type]:
        return [cls, *(c for sub in cls.__subclasses__() for c in walk(sub))]

    foreign = {
        c.__qualname__: c.__module__
        for c in walk(ChrysalisError)
        if c.__module__ != errors.__name__
    }
    # fakes and test doubles may subclass; the package's own modules may not
    assert {n: m for n, m in foreign.items() if m.startswith(("chrysalis", "chrysalisd"))} == {}
    assert chrysalis.remotes.RemoteUnavailable is errors.RemoteUnavailable
    assert chrysalis.sync.segment.SegmentError is errors.SegmentError
    assert chrysalis.sync.CloneDetected is errors.CloneDetected
    assert chrysalis.mirrors.MirrorError is errors.MirrorError
    assert chrysalisd.demo.DemoFailed is errors.DemoFailed


def test_the_code_table_lists_every_class_under_a_unique_code() -> None:
    classes = _classes()
    codes = [c.code for c in classes]
    assert len(codes) == len(set(codes)), "two classes share a code"
    assert set(BY_CODE.values()) == set(classes)
    for cls in classes:
        assert BY_CODE[cls.code] is cls


@pytest.mark.parametrize("code", sorted(BY_CODE))
def test_error_class_finds_each_code_with_only_errors_imported(code: str) -> None:
    assert error_class(code).code == code


def test_error_class_of_an_unknown_code_is_the_base() -> None:
    assert error_class("no-such-code") is ChrysalisError


def test_only_internal_errors_answer_500() -> None:
    for cls in _classes():
        if cls.status == 500:
            assert cls is ChrysalisError or issubclass(cls, errors.InternalError), cls
        else:
            assert 400 <= cls.status < 600
