"""Fused retrieval (DESIGN §6): recent beads + vector hits + keyword hits + graph expansion,
scored, de-duplicated, fitted to a token budget, and explained.

Every item says why it is there (``signals``: each signal's value in [0, 1]) and where it came
from (``provenance``: origin replica and op, source, span refs, edges walked).
"""

from __future__ import annotations

import contextlib
import itertools
import math
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, get_args

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chrysalis.core.errors import (
    EmbedderUnavailable,
    InsufficientStorage,
    InvalidInput,
    NotFound,
    from_pydantic,
)
from chrysalis.core.events import item_key, split_key
from chrysalis.core.models import Bead, Filters, Kind, RetrievalResult, RetrievedItem
from chrysalis.core.validity import epoch
from chrysalis.core.vocab import STRATEGIES, Strategy
from chrysalis.extract.summary import TAG as SUMMARY_TAG
from chrysalis.read.graph import record_origin
from chrysalis.read.reader import Reader
from chrysalis.search import evidence, when
from chrysalis.search.embed import Embedder
from chrysalis.search.indexer import Indexer


class Weights(BaseModel):
    """Fusion weights: score = sum of weight * signal, every signal in [0, 1]."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    emb: float = 0.5
    keyword: float = 1.0
    recency: float = 0.05
    importance: float = 0.05
    graph: float = 0.3
    # A bead next to a strong hit in the same session: answers sit beside the turn that shares
    # the question's words. Measured on LoCoMo (docs/benchmarks.md): the strongest signal.
    context: float = 1.0
    context_window: int = Field(default=2, ge=0, le=10)  # turns either side of a hit
    context_hits: int = Field(default=10, ge=0, le=100)  # how many hits lend context
    # Turns of about this many words or fewer lean on their neighbours (chit-chat); a hit among
    # longer turns lends them proportionally less (a long turn stands on its own).
    context_words: int = Field(default=50, ge=1)
    # A session whose turns match again and again is about the question (evidence.py).
    session: float = 0.2
    # The factor for beads by a speaker the query is not about (evidence.py); 1.0: off.
    attribution: float = Field(default=0.5, ge=0.0, le=1.0)
    # Beads written in the span a query names ("last weekend", "two weeks ago": when.py).
    time: float = 0.3
    # Beads that mention an entity the query names (an extracted node's evidence). Off: on
    # both dev sets it moved recall@10 by 0.000 with the rules extractor (docs/benchmarks.md),
    # since the same beads already hold the query's words.
    mentions: float = 0.0

    def score(self, signals: Mapping[str, float]) -> float:
        """The weighted sum of ``signals`` (those absent count 0), times the attribution."""
        total = sum(float(getattr(self, name)) * signals.get(name, 0.0) for name in _SCORED)
        return total * signals.get("attribution", 1.0)

    def scores(self, signals: Sequence[Mapping[str, float]]) -> np.ndarray:
        """`score` of each of ``signals``, as one float64 array. The same products are added
        in the same order (`_SCORED`'s), so each value is the very float `score` gives: a
        ranking cannot move by a last bit. Python touches only the signals present (a
        candidate has two or three of the nine), numpy does the arithmetic."""
        n = len(signals)
        table = np.zeros((len(_SCORED) + 1, n))
        table[-1] = 1.0  # attribution: a factor, 1.0 when absent
        rows, cols, values = [], [], []
        for col, s in enumerate(signals):
            for name, value in s.items():
                if (row := _ROW.get(name)) is not None:
                    rows.append(row)
                    cols.append(col)
                    values.append(value)
        table[rows, cols] = values
        total: np.ndarray = np.zeros(n)
        for row, name in enumerate(_SCORED):
            total += float(getattr(self, name)) * table[row]
        total *= table[-1]
        return total


# The signals a score adds up, each with the weight of the same name.
_SCORED = (
    "emb", "keyword", "graph", "context", "recency", "importance", "session", "time", "mentions",
)  # fmt: skip
# Each signal's row in `Weights.scores`' table; the attribution factor is the last.
_ROW = {name: row for row, name in enumerate((*_SCORED, "attribution"))}


_WORDS = re.compile(r"\w+|[^\w\s]", re.UNICODE)
KEYWORD_WAIT = 2.0  # seconds a retrieve waits for keyword search to reflect earlier writes
GRAPH_SEEDS = 5  # nodes among the hits whose neighbourhood is walked
SEED_SHARE = 0.5  # ... only those at least this share of the best candidate's strength
GRAPH_NEIGHBOURS = 16  # neighbours taken per seed (heaviest edges first)
MENTIONS = 20  # beads taken per entity the query names (its latest mentions)
TWO_HOPS_MIN = 0.25  # a seed walks two hops only if a second-hop neighbour would get this much
CACHED_CHARS = 4096  # texts up to this long have their token counts cached
PARALLEL_KEYWORD = 20_000  # items in the keyword index past which it is searched on a thread


def count_tokens(text: str) -> int:
    """An offline token estimate: ~4 characters or one word/punctuation mark per token, the
    larger (BPE tokenizers land between the two for English)."""
    if len(text) > CACHED_CHARS:
        return _count(text)
    # Keyed by the text's hash, not the text: a cache keyed by texts kept a forgotten bead's
    # words alive in the process after its forget, and up to 4096 * CACHED_CHARS characters
    # (64 MB of emoji). A str caches its hash, so the key costs nothing after the first call;
    # two texts sharing a 64-bit hash would share an estimate, nothing else.
    key = hash(text)
    if (count := _COUNTS.get(key)) is None:
        if len(_COUNTS) >= CACHED_TEXTS:
            _COUNTS.clear()  # (a context counts a few hundred texts: rarely a whole cache)
        count = _COUNTS[key] = _count(text)
    return count


def _count(text: str) -> int:
    return max(1, len(text) // 4, len(_WORDS.findall(text)) * 3 // 4)


# A context counts the same texts several times (an item, its excerpt, its line as fitted and
# as shown): a regex pass over each was ~7 % of its time at 100k beads. (Reads and writes of
# one dict are atomic: threads share it without a lock, at worst counting a text twice.)
CACHED_TEXTS = 4096
_COUNTS: dict[int, int] = {}


@dataclass(slots=True)
class _Candidate:
    key: str
    signals: dict[str, float] = field(default_factory=dict)
    # Set when a graph walk reaches it; () until then: a recall makes ~350 candidates and
    # a list each was a third of what the garbage collector had to look at.
    edges: Sequence[str] = ()
    via: str | None = None
    mentions: str | None = None  # the name of the entity the query named that it mentions


def _norm(values: dict[str, float]) -> dict[str, float]:
    """Scale to [0, 1] by the best value (scores of one query are comparable, not across)."""
    top = max(values.values(), default=0.0)
    return {k: (v / top if top > 0 else 0.0) for k, v in values.items()}


class Retriever:
    """One fused retrieval over the read side and the search indexes (never `Memory`)."""

    def __init__(
        self,
        reader: Reader,
        indexer: Indexer,
        embedder: Embedder | None,
        weights: Weights | None = None,
        waiting: Callable[[], AbstractContextManager[None]] = contextlib.nullcontext,
    ) -> None:
        self.reader = reader
        self.indexer = indexer
        self.embedder = embedder
        self.weights = weights or Weights()
        # around embedding the query: a remote embedder is a wait, not work (`Foreground`)
        self.waiting = waiting

    def embed_query(self, embedder: Embedder, query: str) -> Any:
        """``embedder``'s vector of ``query``; a remote embedder's wait outside the read's
        slot (`waiting`)."""
        with self.waiting() if embedder.remote else contextlib.nullcontext():
            return embedder.embed_query(query)

    def retrieve(
        self,
        query: str,
        k: int = 10,
        token_budget: int | None = None,
        strategy: str = "fusion",
        filters: Filters | Mapping[str, Any] | None = None,
        query_vector: Any = None,
        now: float | datetime | None = None,
        as_of: float | datetime | None = None,
        min_score: float | None = None,
        summaries: bool = False,
        *,
        described: dict[str, Bead] | None = None,
    ) -> RetrievalResult:
        """The best ``k`` items for ``query``; with ``min_score``, none scoring below it
        (fewer than ``k`` then: no padding). ``summaries`` lets session summaries in beside
        the turns (by default only a ``summary`` tag filter lists them). ``described``, when
        given, receives the visible beads read to rank the candidates (every bead item
        returned among them), by id: a caller needing more of a bead than its text has it
        without reading it again."""
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("query must be non-empty text")
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 1000:
            raise InvalidInput("k must be an int from 1 to 1000")
        if token_budget is not None and (
            isinstance(token_budget, bool) or not isinstance(token_budget, int) or token_budget < 1
        ):
            raise InvalidInput("token_budget must be a positive int")
        if min_score is not None and (
            isinstance(min_score, bool)
            or not isinstance(min_score, int | float)
            or not math.isfinite(min_score)
        ):
            raise InvalidInput("min_score must be a finite number")
        if strategy not in STRATEGIES:
            raise InvalidInput(f"unknown strategy {strategy!r}: fusion, emb, keyword, kg or beads")
        try:
            f = (
                filters
                if isinstance(filters, Filters)
                else Filters.model_validate(dict(filters or {}))
            )
        except ValidationError as exc:
            raise from_pydantic(exc, "filters", within="filters") from None
        notes: list[str] = []
        span = when.window(query, _epoch(now)) if strategy == "fusion" else None
        if strategy != "beads":
            try:
                if not self.indexer.wait_keyword(KEYWORD_WAIT):
                    notes.append(
                        "keyword: the index is still catching up; recent writes may be missing"
                    )
            except InsufficientStorage as exc:  # a read goes on: with what the index holds
                notes.append(f"keyword: recent writes may be missing: {exc.message}")
        pool = max(50, 5 * k)
        cands: dict[str, _Candidate] = {}

        def signal(key: str, name: str, value: float) -> _Candidate:
            # get, then make: setdefault would build a throwaway _Candidate on every call
            # (~350 calls a context, most on new keys: those take the first value as it is).
            if (c := cands.get(key)) is None:
                c = cands[key] = _Candidate(key, {name: max(value, 0.0)})
                return c
            signals = c.signals
            signals[name] = max(value, signals.get(name, 0.0))
            return c

        keyword: Any = None
        if strategy in ("fusion", "keyword", "kg"):
            indexer = self.indexer
            if indexer.keyword.size > PARALLEL_KEYWORD:
                # tantivy and FAISS both release the GIL: in a large memory, rank keywords on
                # another thread while the vector search runs here. In a small one the Python
                # around them dominates and two threads only fight over the GIL (measured).
                keyword = indexer.pool.submit(self._keyword_hits, query, pool, f)
            else:
                keyword = self._keyword_hits(query, pool, f)
        if strategy in ("fusion", "emb"):
            for key, sim in self._vector_hits(query, pool, f, notes, query_vector, k).items():
                signal(key, "emb", sim)
        if keyword is not None:
            hits = keyword if isinstance(keyword, dict) else keyword.result()
            for key, score in hits.items():
                signal(key, "keyword", score)
        if strategy in ("fusion", "beads"):
            latest = self.reader.last_bead_ids(min(pool, 50), session_id=f.session_id)
            for rank, bead_id in enumerate(reversed(latest)):
                signal(item_key("bead", bead_id), "recent", 1.0 / (1 + rank))
        if strategy in ("fusion", "kg"):
            self._expand_graph(cands, signal, f, None if as_of is None else epoch(as_of, "as_of"))
        if strategy == "fusion":
            self._add_context(cands, signal)

        # Describe (read from the store) only the most promising candidates: the signals so
        # far decide the order; recency and importance only nudge it.
        w = self.weights
        found = list(cands.values())
        if strategy == "beads":
            prelim = np.array([c.signals.get("recent", 0.0) for c in found])
        elif strategy == "emb":
            prelim = np.array([c.signals.get("emb", 0.0) for c in found])
        else:
            prelim = w.scores([c.signals for c in found])
        keep = max(3 * k, k + 30) * (4 if _bead_filtered(f) else 1)
        # Stable, as sorted() was: ties keep the order the candidates were found in.
        best = np.argsort(-prelim, kind="stable")[:keep]
        cands = {found[i].key: found[i] for i in best.tolist()}
        items = self._score_and_explain(query, cands, f, strategy, span, summaries, described)
        if min_score is not None:  # best first: the rest score lower still
            items = itertools.takewhile(lambda i: i.score >= min_score, items)
        return self.fit(query, strategy, items, k, token_budget, notes)  # type: ignore[arg-type]

    # ---- candidate sources ---------------------------------------------------------------

    def _vector_hits(
        self, query: str, n: int, f: Filters, notes: list[str], query_vector: Any, k: int
    ) -> dict[str, float]:
        """Nearest items; with filters, a deeper search (FAISS cannot filter by bead fields).
        During an embedder switch, those of the model recall still searches (`switch`).
        The ``k`` nearest score exactly; the rest of the pool (``n`` of them, a candidate
        source for the fused ranking) may keep the IVF codes' scores (`VectorIndex.search`):
        every candidate is read and checked when described."""
        embedder, vectors, note = self.indexer.serving()
        if embedder is None:
            notes.append("emb: no embedder configured")
            return {}
        if note is not None:
            notes.append(note)
        if vectors is None or len(vectors) == 0:
            return {}
        if query_vector is not None:
            try:
                vector = np.asarray(query_vector, dtype=np.float32).reshape(-1)
            except (TypeError, ValueError) as exc:
                raise InvalidInput(f"query_vector must be numbers: {exc}") from None
            if not np.isfinite(vector).all():
                raise InvalidInput("query_vector must be finite numbers")
            if vector.shape[0] != vectors.dims:
                raise InvalidInput(
                    f"query_vector has {vector.shape[0]} dims; the index searched "
                    f"({vectors.model}) has {vectors.dims}"
                )
        else:
            try:
                vector = self.embed_query(embedder, query)
            except EmbedderUnavailable as exc:
                notes.append(f"emb: {exc}")
                return {}
        deep = _bead_filtered(f)
        hits = vectors.search(vector, 10 * n if deep or f.kinds else n, exact=k)
        kinds = set(f.kinds)
        return {h.key: max(0.0, h.score) for h in hits if not kinds or split_key(h.key)[0] in kinds}

    def _keyword_hits(self, query: str, n: int, f: Filters) -> dict[str, float]:
        hits = self.indexer.keyword.search(query, n, f)
        return _norm({h.key: h.score for h in hits})

    def _expand_graph(
        self, cands: dict[str, _Candidate], signal: Any, f: Filters, as_of: float | None
    ) -> None:
        """Neighbours of the nodes the query names (a keyword hit on a node's name) and of
        the strong nodes among the other hits, and the edges walked: a bounded walk
        (`GraphReads.walk`: the heaviest edges first, a second hop only where it pays), all
        seeds in one read transaction."""
        best = max((max(c.signals.values()) for c in cands.values()), default=0.0)
        seeds = sorted(
            (
                c
                for c in cands.values()
                if c.key.startswith("node:")
                and (
                    c.signals.get("keyword", 0.0) > 0
                    or max(c.signals.values()) >= SEED_SHARE * best
                )
            ),
            key=lambda c: -max(c.signals.values()),
        )[:GRAPH_SEEDS]
        strengths = {split_key(c.key)[1]: max(c.signals.values()) for c in seeds}

        def two_hops(node_id: str, degree: int) -> bool:
            # What a second hop over a unit-weight edge would give: below TWO_HOPS_MIN, it
            # adds less to a score than recency and importance can (measured: one hop lost
            # nothing; the second costs most of the reads).
            return strengths[node_id] / max(1, degree) / 2 >= TWO_HOPS_MIN

        walks = self.reader.walk(list(strengths), GRAPH_NEIGHBOURS, two_hops=two_hops, as_of=as_of)
        self._mentions(seeds, signal)
        for seed in seeds:
            node_id = split_key(seed.key)[1]
            strength = max(seed.signals.values())
            if node_id not in walks:
                continue
            degree, steps = walks[node_id]
            degree = max(1, degree)
            for n in steps:
                value = min(1.0, strength * n.weight / degree / n.depth)
                for key in (
                    item_key("edge", n.edge),
                    item_key("node", n.node),
                    *(item_key("bead", bead_id) for bead_id in n.evidence),  # a fact's turns
                ):
                    c = signal(key, "graph", value)
                    c.edges = [n.edge]
                    c.via = node_id

    def _mentions(self, seeds: list[_Candidate], signal: Any) -> None:
        """The beads that mention an entity the query names (the node's evidence): its
        latest `MENTIONS` of them, each sharing the seed's strength with the others (an
        entity mentioned everywhere says little about any one bead)."""
        named = [c for c in seeds if c.signals.get("keyword", 0.0) > 0]
        if not named or self.weights.mentions <= 0:
            return
        nodes, _ = self.reader.graph_items([split_key(c.key)[1] for c in named], [])
        for c in named:
            node_id = split_key(c.key)[1]
            if node_id not in nodes:
                continue
            node = nodes[node_id][0]
            if node.derived_by is None or not node.evidence:
                continue
            share = c.signals["keyword"] / math.sqrt(len(node.evidence))
            for bead_id in sorted(node.evidence, reverse=True)[:MENTIONS]:
                hit = signal(item_key("bead", bead_id), "mentions", share)
                if hit.via is None:
                    hit.via, hit.mentions = node_id, node.name

    def _add_context(self, cands: dict[str, _Candidate], signal: Any) -> None:
        """Beads next to strong bead hits in the same session: an answer is often the turn
        before or after the one that shares the question's words."""
        strong = sorted(
            (
                c
                for c in cands.values()
                if c.key.startswith("bead:") and ("emb" in c.signals or "keyword" in c.signals)
            ),
            key=lambda c: -(c.signals.get("emb", 0) + c.signals.get("keyword", 0)),
        )[: self.weights.context_hits]
        w = self.weights
        windows = self.reader.windows([split_key(c.key)[1] for c in strong], w.context_window)
        for c in strong:
            if (window := windows.get(split_key(c.key)[1])) is None:
                continue
            words, around = window
            lean = evidence.lean_on_neighbours([words, *(n for _, _, n in around)], w.context_words)
            strength = (c.signals.get("emb", 0) + c.signals.get("keyword", 0)) / 2 * lean
            for neighbour, offset, _ in around:
                signal(item_key("bead", neighbour), "context", min(1.0, strength / abs(offset)))

    # ---- scoring -------------------------------------------------------------------------

    def _score_and_explain(
        self,
        query: str,
        cands: dict[str, _Candidate],
        f: Filters,
        strategy: str,
        span: tuple[float, float] | None = None,
        summaries: bool = False,
        described: dict[str, Bead] | None = None,
    ) -> Iterator[RetrievedItem]:
        """The candidates as items, best first. Everything is read in two transactions (the
        beads, then the graph items); an item's provenance and tokens are made as it is
        taken, so `fit` pays for those only down to the k it keeps."""
        w = self.weights
        reader = self.reader
        keys = [(c, *split_key(c.key)) for c in cands.values()]
        beads = reader.beads_with_origin([item_id for _, kind, item_id in keys if kind == "bead"])
        if described is not None:
            described.update((bead_id, bead) for bead_id, (bead, _) in beads.items())
        nodes, edges = reader.graph_items(
            [item_id for _, kind, item_id in keys if kind == "node"],
            [item_id for _, kind, item_id in keys if kind == "edge"],
        )
        newest = max((b.ts for b, _ in beads.values()), default=0.0)
        sessions: dict[str, float] = {}
        factor: dict[str, float] = {}
        if strategy == "fusion":
            hits = {}
            for bead_id, (b, _) in beads.items():
                hit = cands[item_key("bead", bead_id)].signals
                hits[bead_id] = (b.session_id, hit.get("emb", 0.0) + hit.get("keyword", 0.0))
            sessions = evidence.session_evidence(hits)
            factor = evidence.attribution(query, (b for b, _ in beads.values()), w.attribution)
        scored: list[tuple[float, Any, str, str, dict[str, float], Any, _Candidate]] = []
        weighed: list[tuple[Any, str, str, dict[str, float], Any, _Candidate]] = []  # to score
        for c, kind, item_id in keys:
            if f.kinds and kind not in f.kinds:
                continue
            found = self._describe(kind, item_id, beads, nodes, edges)
            if found is None:
                continue
            text, importance, ts, bead, provenance = found
            if bead is not None and not _bead_passes(bead, f, summaries):
                continue
            signals = dict(c.signals)
            if strategy == "emb":
                # The nearest neighbours the index found, in its order: recency and importance
                # would reorder near-ties (recall@10 vs brute force fell to 0.63, bench/peers.py).
                scored.append((-round(signals.get("emb", 0.0), 6), kind, item_id, text, signals,
                               provenance, c))  # fmt: skip
                continue
            if ts is not None:
                age_days = max(0.0, (newest - ts) / 86400)
                signals["recency"] = math.exp(-age_days / 30)
                if span is not None and (near := when.closeness(ts, span)) > 0:
                    signals["time"] = near
            signals["importance"] = importance
            if kind == "bead" and item_id in sessions:
                signals["session"] = sessions[item_id]
            if bead is not None and bead.id in factor:
                signals["attribution"] = factor[bead.id]
            weighed.append((kind, item_id, text, signals, provenance, c))
        if strategy == "beads":  # newest first
            totals = [s.get("recent", 0.0) for _, _, _, s, _, _ in weighed]
        else:
            totals = w.scores([s for _, _, _, s, _, _ in weighed]).tolist()
        scored.extend((-round(t, 6), *row) for t, row in zip(totals, weighed, strict=True))
        scored.sort(key=lambda s: s[:3])

        def items() -> Iterator[RetrievedItem]:
            for neg_score, kind, item_id, text, signals, provenance, c in scored:
                prov = _provenance(provenance)
                if c.edges:
                    prov["edges"] = c.edges
                if c.via is not None:
                    prov["via_node"] = c.via
                if c.mentions is not None:
                    prov["mentions"] = c.mentions
                yield _item(
                    kind, item_id, text, -neg_score,
                    {k: float(round(v, 6)) for k, v in signals.items()}, prov, count_tokens(text),
                )  # fmt: skip

        return items()

    def _describe(
        self,
        kind: str,
        item_id: str,
        beads: dict[str, Any],
        nodes: dict[str, Any],
        edges: dict[str, Any],
    ) -> tuple[str, float, float | None, Any, _Provenance] | None:
        """``(text, importance, ts, bead, provenance)`` of a visible item; `_provenance`
        makes the dict from ``provenance``."""
        reader = self.reader
        if kind == "bead":
            if item_id not in beads:
                return None
            bead, stamp = beads[item_id]
            text = f"{bead.source}: {bead.content}" if bead.source else bead.content
            # The bead and its stamp, not a closure over them: a closure is five objects for
            # the garbage collector, and a context describes ~90 beads to keep 30.
            return text, bead.importance, bead.ts, bead, (bead, stamp)
        if kind == "node":
            if item_id not in nodes:
                return None
            n, record = nodes[item_id]
            text = f"{n.name or n.id} ({n.type})"
            return text, 0.5, None, None, lambda: {"source": "kg", **record_origin(record)}
        if kind == "edge":
            if item_id not in edges:
                return None
            e, src, dst, record = edges[item_id]
            text = f"{src.name or src.id} {e.predicate} {dst.name or dst.id}"
            return (
                text,
                min(1.0, e.weight / 2),
                None,
                None,
                lambda: {"source": "kg", "evidence": e.evidence, **record_origin(record)},
            )
        try:
            if kind == "skill":
                s = reader.get_skill(item_id)
                text = f"skill {s.name}: {s.description}".strip()
                origin = reader.origin("skill", item_id)
                return text, 0.5, None, None, lambda: {"source": "skills", **origin}
            if kind == "persona":
                p = reader.get_persona()
                text = " ".join(x for x in [p.name, p.description, *p.goals, *p.norms] if x)
                origin = reader.origin("persona", "persona")
                return text, 0.5, None, None, lambda: {"source": "persona", **origin}
        except NotFound:
            return None
        return None

    # ---- dedup and budget ----------------------------------------------------------------

    @staticmethod
    def fit(
        query: str,
        strategy: Strategy,
        items: Iterable[RetrievedItem],
        k: int,
        budget: int | None,
        notes: list[str],
    ) -> RetrievalResult:
        seen: set[str] = set()  # texts taken, case and spacing folded
        chosen: list[RetrievedItem] = []
        used = 0
        for item in items:
            digest = " ".join(item.text.lower().split())
            if digest in seen:
                continue
            if budget is not None and used + item.tokens > budget:
                continue  # a smaller item further down may still fit
            seen.add(digest)
            chosen.append(item)
            used += item.tokens
            if len(chosen) == k:
                break
        return RetrievalResult(
            query=query, strategy=strategy, items=chosen, tokens_used=used,
            token_budget=budget, notes=notes,
        )  # fmt: skip


def above(result: RetrievalResult, min_score: float | None) -> RetrievalResult:
    """``result`` without the items scoring under ``min_score`` (None: as it is), its
    ``tokens_used`` recounted."""
    if min_score is None:
        return result
    items = [i for i in result.items if i.score >= min_score]
    tokens = sum(i.tokens for i in items)
    return result.model_copy(update={"items": items, "tokens_used": tokens})


_KINDS = frozenset(get_args(Kind))


def _item(
    kind: Kind,
    item_id: str,
    text: str,
    score: float,
    signals: dict[str, float],
    provenance: dict[str, Any],
    tokens: int,
) -> RetrievedItem:
    """The `RetrievedItem` validation would make of these values, made without it
    (`model_construct`): they are of their fields' types already (``signals`` floats), and
    validating ~30 items a context, provenance dicts included, was a few percent of its
    time. `test_trusted_item_matches_validation` pins the two together."""
    if kind not in _KINDS:  # what validation would have refused (keys are ours: never seen)
        raise ValueError(f"no such item kind: {kind!r}")
    return RetrievedItem.model_construct(
        kind=kind, id=item_id, text=text, score=float(score), signals=signals,
        provenance=provenance, tokens=tokens,
    )  # fmt: skip


# How an item's provenance is made when it is taken: a bead and the stamp of its add, or a
# callable for the other kinds (rare in a recall).
_Provenance = tuple[Any, tuple[int, str, int]] | Callable[[], dict[str, Any]]


def _provenance(made: _Provenance) -> dict[str, Any]:
    """The provenance dict of an item described as ``made`` (`Retriever._describe`)."""
    if not isinstance(made, tuple):
        return made()
    bead, stamp = made
    prov = {"source": bead.source, **Reader.bead_origin(stamp)}
    if bead.session_id:
        prov["session_id"] = bead.session_id
    if bead.span_refs:  # an ingested chunk: its file and lines
        prov["span_refs"] = [r.model_dump() for r in bead.span_refs]
    if bead.derived_by:  # a session summary: what wrote it, from how many turns
        prov["derived_by"] = bead.derived_by
        prov["derived_from"] = len(bead.derived_from)
    return prov


def _epoch(now: float | datetime | None) -> float:
    """``now`` as epoch seconds: the clock when not given; a naive datetime is UTC."""
    return time.time() if now is None else epoch(now, "now")


def _bead_filtered(f: Filters) -> bool:
    """Whether a filter on bead fields is set (kinds alone are checked on keys)."""
    return f.model_copy(update={"kinds": []}) != Filters()


def _bead_passes(bead: Any, f: Filters, summaries: bool = False) -> bool:
    if f.session_id is not None and bead.session_id != f.session_id:
        return False
    if f.role is not None and bead.role != f.role:
        return False
    if f.tags and not set(f.tags) & set(bead.tags):
        return False
    if SUMMARY_TAG in bead.tags and SUMMARY_TAG not in f.tags and not summaries:
        return False  # it lent its session evidence to the turns; listed when asked for
    if f.since is not None and bead.ts < f.since:
        return False
    if f.until is not None and bead.ts > f.until:
        return False
    return not (f.min_importance is not None and bead.importance < f.min_importance)
