"""Remote-assisted retrieval (`chrysalis.search.assisted`) against a scripted search service."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx

from chrysalis import Memory
from chrysalis.core.models import RetrievedItem
from chrysalis.mirrors import MirrorHealth, assisted_retrieve


class TimesOutItself:
    """A search client with its own timer, as the Zep SDKs have: given ``timeout``, it gives
    up a moment before it (the caller's wait, scheduled late on a loaded machine, is later)."""

    kind = "zep"

    def __init__(self) -> None:
        self.health = MirrorHealth()
        self.timeouts: list[float] = []

    def search(self, query: str, k: int, timeout: float) -> list[RetrievedItem]:
        self.timeouts.append(timeout)
        time.sleep(max(0.0, timeout - 0.05))
        raise httpx.ReadTimeout("timed out")  # what the SDKs raise


def test_a_mirror_slower_than_the_budget_is_a_budget_miss(
    open_memory: Callable[..., Memory],
) -> None:
    m = open_memory("a")
    m.append_bead("an unrelated local note", id="local")
    mirror = TimesOutItself()
    started = time.perf_counter()
    out = assisted_retrieve(m, mirror, "launch window", k=5, budget_s=0.3)
    assert time.perf_counter() - started < 0.3 + 0.25
    # the budget decides, not the client's own timer: the note says so (the flake in
    # test_zep / test_zep_cloud was "search failed (ReadTimeout)" when the SDK won the race)
    assert any("300 ms budget" in n for n in out.notes), out.notes
    assert mirror.timeouts[0] > 0.3
