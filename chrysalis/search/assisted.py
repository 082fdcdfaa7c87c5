"""Remote-assisted retrieval: local fusion first; when its hits are weak, a search service
(a Zep mirror) joins within a time budget. Depends on two small protocols, not on `Memory` or
the mirrors' code.
"""

from __future__ import annotations

import concurrent.futures
import time
from typing import Any, Protocol

from chrysalis.core.models import RetrievalResult, RetrievedItem
from chrysalis.search.fusion import count_tokens


class Retrieves(Protocol):
    def retrieve(
        self,
        query: str,
        k: int = 10,
        token_budget: int | None = None,
        strategy: str = "fusion",
        filters: Any = None,
        *,
        now: Any = None,
        as_of: Any = None,
    ) -> RetrievalResult: ...


class HealthReport(Protocol):
    def ok(self, what: str, result: dict[str, Any]) -> None: ...

    def failed(self, what: str, exc: BaseException) -> None: ...


class SearchService(Protocol):
    """What assisted retrieval needs of a mirror (`chrysalis.mirrors.Mirror` is one)."""

    @property
    def kind(self) -> str: ...

    @property
    def health(self) -> HealthReport: ...

    def search(self, query: str, k: int, timeout: float) -> list[RetrievedItem]: ...


CLIENT_GRACE_S = 1.0  # how much longer than the budget the search client may wait
_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="mirror-search")


def assisted_retrieve(
    memory: Retrieves,
    mirror: SearchService | None,
    query: str,
    *,
    k: int = 10,
    token_budget: int | None = None,
    strategy: str = "fusion",
    filters: Any = None,
    weak_below: float = 0.5,
    budget_s: float = 0.4,
    weight: float = 1.0,
    now: Any = None,
    as_of: Any = None,
) -> RetrievalResult:
    """Local retrieval; when its best hit scores below ``weak_below`` (or it found fewer than
    ``k``), the mirror's hits join the fusion, if they come within ``budget_s``. A slow or failing
    mirror leaves the local result as it is, with a note saying why: one that has not answered
    within ``budget_s`` is a budget miss ("no answer within the N ms budget"), whatever its own
    client's timer says."""
    result = memory.retrieve(
        query,
        k=k,
        token_budget=token_budget,
        strategy=strategy,
        filters=filters,
        now=now,
        as_of=as_of,
    )
    if mirror is None or strategy not in ("fusion", "emb"):
        return result
    best = max((i.score for i in result.items), default=0.0)
    if best >= weak_below and len(result.items) >= k:
        return result
    started = time.perf_counter()
    # The budget is ours to keep: the client gets a longer timeout (it only frees the worker
    # thread), so our wait, not the SDK's own timer racing it, decides a slow answer.
    future = _POOL.submit(mirror.search, query, k, budget_s + CLIENT_GRACE_S)
    try:
        hits = future.result(timeout=budget_s)
    except concurrent.futures.TimeoutError:
        future.cancel()
        error = TimeoutError(f"no answer within the {budget_s * 1000:.0f} ms budget")
        mirror.health.failed("search", error)
        result.notes.append(f"{mirror.kind}: {error}; local results only")
        return result
    except Exception as exc:  # the mirror's failure must not fail the recall
        mirror.health.failed("search", exc)
        result.notes.append(
            f"{mirror.kind}: search failed ({type(exc).__name__}); local results only"
        )
        return result
    elapsed_ms = (time.perf_counter() - started) * 1000
    mirror.health.ok("search", {"hits": len(hits), "ms": round(elapsed_ms, 1)})
    have = {(i.kind, i.id): i for i in result.items}
    merged = list(result.items)
    for hit in hits:
        hit.score *= weight
        mine = have.get((hit.kind, hit.id))
        if mine is not None:  # a local item the mirror also found: it gains the signal
            mine.signals[mirror.kind] = hit.signals.get(mirror.kind, hit.score)
            mine.score += hit.score
            continue
        merged.append(hit)
    merged.sort(key=lambda i: -i.score)
    out, used = [], 0
    for item in merged[:k]:
        item.tokens = item.tokens or count_tokens(item.text)
        if token_budget is not None and used + item.tokens > token_budget:
            continue
        out.append(item)
        used += item.tokens
    result.items = out
    result.tokens_used = used
    result.notes.append(
        f"{mirror.kind}: local hits were weak (best {best:.2f}); {len(hits)} remote hits "
        f"in {elapsed_ms:.0f} ms"
    )
    return result
