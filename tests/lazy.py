"""Heavy SDKs imported when a test first uses them, not when the module is collected.

Every pytest-xdist worker collects every test module, so a module-level ``import agents`` (the
OpenAI Agents SDK, ~2 s of CPU) or ``import langgraph`` is paid four times per run even though
one worker runs those tests. ``lazy_module("agents")`` stands in for the module and imports it
on the first attribute read; type checkers see the real module through ``TYPE_CHECKING``.
"""

from __future__ import annotations

import importlib
from typing import Any


class _LazyModule:
    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        # pytest's collection probes every module global (__test__, _pytestfixturefunction...):
        # a private name is never the SDK's API, so it imports nothing
        if attr.startswith("_"):
            raise AttributeError(attr)
        return getattr(importlib.import_module(self._name), attr)


def lazy_module(name: str) -> Any:
    return _LazyModule(name)
