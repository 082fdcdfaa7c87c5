"""What an op did to the memory's items, as typed events: the indexes, the mirrors and the
daemon consume these instead of parsing op dicts.

`events_of` is a pure function of the op alone, so a consumer that reads the op log from its
own cursor (the indexer after a restart, a mirror) derives exactly what a live listener was
told at commit.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from chrysalis.core.models import OpKind


def item_key(kind: str, item_id: str) -> str:
    """An item's name in the search indexes: ``"<kind>:<id>"``."""
    return f"{kind}:{item_id}"


def split_key(key: str) -> tuple[str, str]:
    kind, _, item_id = key.partition(":")
    return kind, item_id


class Change(StrEnum):
    CHANGED = "changed"  # added, updated or removed: read the item's current state
    ERASED = "erased"  # a forget erased its content: every copy and derivative must go
    VECTOR = "vector"  # a vector of it was stored (its text did not change)


@dataclass(frozen=True, slots=True)
class ItemEvent:
    """One item an op touched: ``kind`` is bead, node, edge, skill or persona."""

    kind: str
    id: str
    change: Change

    @property
    def key(self) -> str:
        """The item's key in the search indexes (``kind:id``)."""
        return item_key(self.kind, self.id)


def events_of(op: dict[str, Any]) -> tuple[ItemEvent, ...]:
    """The items ``op`` touched and how (ops of any replica, as logged or as received)."""
    kind = op["kind"]  # compared as str: an OpKind is its value, and constructing one costs
    data, target = op["data"], op["target"]
    if kind == OpKind.BEAD_ADD:
        return (ItemEvent("bead", target, Change.ERASED if data.get("erased") else Change.CHANGED),)
    if kind == OpKind.BEAD_FORGET:
        return (ItemEvent("bead", target, Change.ERASED),)
    if kind == OpKind.EMBEDDING_PUT:
        if data.get("erased"):
            return (ItemEvent(data["item_kind"], target, Change.ERASED),)
        return (ItemEvent(data["item_kind"], target, Change.VECTOR),)
    return (ItemEvent(kind.partition(".")[0], target, Change.CHANGED),)


@dataclass
class Committed:
    """What one commit applied, told to `Store.listeners` after it is durable.

    The events are derived when first asked for: applying 100k pulled ops must not pay for
    objects no listener reads.
    """

    ops: list[dict[str, Any]] = field(default_factory=list)
    local_ops: int = 0  # ops this replica made in the commit
    local_bytes: int = 0  # and the bytes of bead content they carry
    erasure: int = 0  # the erasure count it reached if it erased content (`forget`), else 0

    def add(self, op: dict[str, Any], local: bool) -> None:
        self.ops.append(op)
        if local:
            self.local_ops += 1
            self.local_bytes += len(op["data"].get("content") or "")

    @functools.cached_property
    def events(self) -> list[ItemEvent]:
        return [event for op in self.ops for event in events_of(op)]


def keys_changed(ops: Iterable[dict[str, Any]]) -> tuple[set[str], set[str]]:
    """(item keys whose text may have changed, item keys whose vector may have changed)."""
    texts, vectors = set(), set()
    for op in ops:
        for event in events_of(op):
            if event.change is Change.VECTOR:
                vectors.add(event.key)
            elif event.kind != "edge":  # edges are found through their nodes, not by text
                texts.add(event.key)
                vectors.add(event.key)  # a removed item's vector leaves the index
    return texts, vectors
