"""Fused retrieval (DESIGN §6): recent beads + vector hits + keyword hits + graph expansion,
scored, de-duplicated, fitted to a token budget, and explained.

Every item says why it is there (``signals``: each signal's value in [0, 1]) and where it came
from (``provenance``: origin replica and op, source, edges walked).
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..embed import Embedder
from ..errors import EmbedderUnavailable, InvalidInput, NotFound, from_pydantic
from ..events import item_key, split_key
from ..models import Filters, RetrievalResult, RetrievedItem, Strategy
from ..read import Reader
from .indexer import Indexer


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


_WORDS = re.compile(r"\w+|[^\w\s]", re.UNICODE)
KEYWORD_WAIT = 2.0  # seconds a retrieve waits for keyword search to reflect earlier writes
PARALLEL_KEYWORD = 20_000  # items in the keyword index past which it is searched on a thread


def count_tokens(text: str) -> int:
    """An offline token estimate: ~4 characters or one word/punctuation mark per token, the
    larger (BPE tokenizers land between the two for English)."""
    return max(1, len(text) // 4, len(_WORDS.findall(text)) * 3 // 4)


@dataclass
class _Candidate:
    key: str
    signals: dict[str, float] = field(default_factory=dict)
    edges: list[str] = field(default_factory=list)
    via: str | None = None


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
    ) -> None:
        self.reader = reader
        self.indexer = indexer
        self.embedder = embedder
        self.weights = weights or Weights()

    def retrieve(
        self,
        query: str,
        k: int = 10,
        token_budget: int | None = None,
        strategy: str = "fusion",
        filters: Filters | Mapping[str, Any] | None = None,
        query_vector: Any = None,
    ) -> RetrievalResult:
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("query must be non-empty text")
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 1000:
            raise InvalidInput("k must be an int from 1 to 1000")
        if token_budget is not None and (
            isinstance(token_budget, bool) or not isinstance(token_budget, int) or token_budget < 1
        ):
            raise InvalidInput("token_budget must be a positive int")
        if strategy not in ("fusion", "emb", "keyword", "kg", "beads"):
            raise InvalidInput(f"unknown strategy {strategy!r}: fusion, emb, keyword, kg or beads")
        try:
            f = (
                filters
                if isinstance(filters, Filters)
                else Filters.model_validate(dict(filters or {}))
            )
        except ValidationError as exc:
            raise from_pydantic(exc, "filters") from None
        notes: list[str] = []
        if strategy != "beads" and not self.indexer.wait_keyword(KEYWORD_WAIT):
            notes.append("keyword: the index is still catching up; recent writes may be missing")
        pool = max(50, 5 * k)
        cands: dict[str, _Candidate] = {}

        def signal(key: str, name: str, value: float) -> _Candidate:
            c = cands.setdefault(key, _Candidate(key))
            c.signals[name] = max(value, c.signals.get(name, 0.0))
            return c

        keyword: Any = None
        if strategy in ("fusion", "keyword", "kg"):
            indexer = self.indexer
            if indexer.keyword.size > PARALLEL_KEYWORD:
                # SQLite and FAISS both release the GIL: in a large memory, rank keywords on
                # another thread while the vector search runs here. In a small one the Python
                # around them dominates and two threads only fight over the GIL (measured).
                keyword = indexer.pool.submit(self._keyword_hits, query, pool, f)
            else:
                keyword = self._keyword_hits(query, pool, f)
        if strategy in ("fusion", "emb"):
            for key, sim in self._vector_hits(query, pool, f, notes, query_vector).items():
                signal(key, "emb", sim)
        if keyword is not None:
            hits = keyword if isinstance(keyword, dict) else keyword.result()
            for key, score in hits.items():
                signal(key, "keyword", score)
        if strategy in ("fusion", "beads"):
            latest = self.reader.last_beads(min(pool, 50), session_id=f.session_id)
            for rank, b in enumerate(reversed(latest)):
                signal(item_key("bead", b.id), "recent", 1.0 / (1 + rank))
        if strategy in ("fusion", "kg"):
            self._expand_graph(cands, signal, f)
        if strategy == "fusion":
            self._add_context(cands, signal)

        # Describe (read from the store) only the most promising candidates: the signals so
        # far decide the order; recency and importance only nudge it.
        w = self.weights
        if strategy == "beads":
            prelim = {key: c.signals.get("recent", 0.0) for key, c in cands.items()}
        else:
            prelim = {
                key: w.emb * c.signals.get("emb", 0.0)
                + w.keyword * c.signals.get("keyword", 0.0)
                + w.graph * c.signals.get("graph", 0.0)
                + w.context * c.signals.get("context", 0.0)
                for key, c in cands.items()
            }
        keep = max(3 * k, k + 30) * (4 if _bead_filtered(f) else 1)
        best = sorted(cands, key=lambda key: -prelim[key])[:keep]
        cands = {key: cands[key] for key in best}
        items = self._score_and_explain(cands, f, strategy)
        return self._fit(query, strategy, items, k, token_budget, notes)  # type: ignore[arg-type]

    # ---- candidate sources ---------------------------------------------------------------

    def _vector_hits(
        self, query: str, n: int, f: Filters, notes: list[str], query_vector: Any
    ) -> dict[str, float]:
        """Nearest items; with filters, a deeper search (FAISS cannot filter by bead fields)."""
        if self.embedder is None:
            notes.append("emb: no embedder configured")
            return {}
        indexer = self.indexer
        if indexer.vectors is None or len(indexer.vectors) == 0:
            return {}
        if query_vector is not None:
            try:
                vector = np.asarray(query_vector, dtype=np.float32).reshape(-1)
            except (TypeError, ValueError) as exc:
                raise InvalidInput(f"query_vector must be numbers: {exc}") from None
            if not np.isfinite(vector).all():
                raise InvalidInput("query_vector must be finite numbers")
            if vector.shape[0] != indexer.vectors.dims:
                raise InvalidInput(
                    f"query_vector has {vector.shape[0]} dims; the index has {indexer.vectors.dims}"
                )
        else:
            try:
                vector = self.embedder.embed_query(query)
            except EmbedderUnavailable as exc:
                notes.append(f"emb: {exc}")
                return {}
        deep = _bead_filtered(f)
        hits = indexer.vectors.search(vector, 10 * n if deep or f.kinds else n)
        kinds = set(f.kinds)
        return {h.key: max(0.0, h.score) for h in hits if not kinds or split_key(h.key)[0] in kinds}

    def _keyword_hits(self, query: str, n: int, f: Filters) -> dict[str, float]:
        hits = self.indexer.keyword.search(query, n, f)
        return _norm({h.key: h.score for h in hits})

    def _expand_graph(self, cands: dict[str, _Candidate], signal: Any, f: Filters) -> None:
        """1-2 hops from the nodes among the hits: neighbours and the edges walked."""
        seeds = sorted(
            (c for c in cands.values() if c.key.startswith("node:")),
            key=lambda c: -max(c.signals.values()),
        )[:5]
        for seed in seeds:
            node_id = split_key(seed.key)[1]
            strength = max(seed.signals.values())
            try:
                hood = self.reader.neighbors(node_id, depth=2)
            except NotFound:
                continue
            degree = max(1, sum(1 for n in hood if n.depth == 1))
            for n in hood:
                value = strength * n.edge.weight / degree / n.depth
                edge = signal(item_key("edge", n.edge.id), "graph", min(1.0, value))
                edge.edges = [n.edge.id]
                edge.via = node_id
                node = signal(item_key("node", n.node.id), "graph", min(1.0, value))
                node.edges = [n.edge.id]
                node.via = node_id
                for bead_id in n.edge.evidence:  # the turns a fact was drawn from
                    ev = signal(item_key("bead", bead_id), "graph", min(1.0, value))
                    ev.edges = [n.edge.id]
                    ev.via = node_id

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
        for c in strong:
            strength = (c.signals.get("emb", 0) + c.signals.get("keyword", 0)) / 2
            window = self.weights.context_window
            for neighbour, offset in self.reader.adjacent_beads(split_key(c.key)[1], window):
                signal(item_key("bead", neighbour), "context", min(1.0, strength / abs(offset)))

    # ---- scoring -------------------------------------------------------------------------

    def _score_and_explain(
        self, cands: dict[str, _Candidate], f: Filters, strategy: str
    ) -> list[RetrievedItem]:
        w = self.weights
        reader = self.reader
        beads = {}
        for c in cands.values():
            kind, item_id = split_key(c.key)
            if kind == "bead":
                with contextlib.suppress(NotFound):
                    beads[c.key] = reader.get_bead(item_id)
        newest = max((b.ts for b in beads.values()), default=0.0)
        out = []
        for c in cands.values():
            kind, item_id = split_key(c.key)
            if f.kinds and kind not in f.kinds:
                continue
            found = self._describe(kind, item_id, beads.get(c.key))
            if found is None:
                continue
            text, importance, ts, provenance, bead = found
            if bead is not None and not _bead_passes(bead, f):
                continue
            signals = dict(c.signals)
            if ts is not None:
                age_days = max(0.0, (newest - ts) / 86400)
                signals["recency"] = math.exp(-age_days / 30)
            signals["importance"] = importance
            score = (
                w.emb * signals.get("emb", 0.0)
                + w.keyword * signals.get("keyword", 0.0)
                + w.graph * signals.get("graph", 0.0)
                + w.context * signals.get("context", 0.0)
                + w.recency * signals.get("recency", 0.0)
                + w.importance * importance
            )
            if strategy == "beads":  # newest first
                score = signals.get("recent", 0.0)
            if c.edges:
                provenance["edges"] = c.edges
                provenance["via_node"] = c.via
            out.append(
                RetrievedItem(
                    kind=kind,
                    id=item_id,
                    text=text,
                    score=round(score, 6),
                    signals={k: round(v, 6) for k, v in signals.items()},
                    provenance=provenance,
                    tokens=count_tokens(text),
                )
            )
        out.sort(key=lambda i: (-i.score, i.kind, i.id))
        return out

    def _describe(
        self, kind: str, item_id: str, bead: Any
    ) -> tuple[str, float, float | None, dict[str, Any], Any] | None:
        reader = self.reader
        try:
            if kind == "bead":
                if bead is None:
                    return None
                text = f"{bead.source}: {bead.content}" if bead.source else bead.content
                prov = {"source": bead.source, **reader.origin("bead", item_id)}
                if bead.session_id:
                    prov["session_id"] = bead.session_id
                return text, bead.importance, bead.ts, prov, bead
            if kind == "node":
                n = reader.get_node(item_id)
                text = f"{n.name or n.id} ({n.type})"
                return text, 0.5, None, {"source": "kg", **reader.origin("node", item_id)}, None
            if kind == "edge":
                e = reader.get_edge(item_id)
                src, dst = reader.get_node(e.source), reader.get_node(e.target)
                text = f"{src.name or src.id} {e.predicate} {dst.name or dst.id}"
                prov = {"source": "kg", "evidence": e.evidence, **reader.origin("edge", item_id)}
                return text, min(1.0, e.weight / 2), None, prov, None
            if kind == "skill":
                s = reader.get_skill(item_id)
                text = f"skill {s.name}: {s.description}".strip()
                return (
                    text,
                    0.5,
                    None,
                    {"source": "skills", **reader.origin("skill", item_id)},
                    None,
                )
            if kind == "persona":
                p = reader.get_persona()
                text = " ".join(x for x in [p.name, p.description, *p.goals, *p.norms] if x)
                return (
                    text,
                    0.5,
                    None,
                    {"source": "persona", **reader.origin("persona", "persona")},
                    None,
                )
        except NotFound:
            return None
        return None

    # ---- dedup and budget ----------------------------------------------------------------

    @staticmethod
    def _fit(
        query: str,
        strategy: Strategy,
        items: Sequence[RetrievedItem],
        k: int,
        budget: int | None,
        notes: list[str],
    ) -> RetrievalResult:
        seen: set[str] = set()
        chosen: list[RetrievedItem] = []
        used = 0
        for item in items:
            digest = hashlib.sha1(" ".join(item.text.lower().split()).encode()).hexdigest()
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


def _bead_filtered(f: Filters) -> bool:
    """Whether a filter on bead fields is set (kinds alone are checked on keys)."""
    return f.model_copy(update={"kinds": []}) != Filters()


def _bead_passes(bead: Any, f: Filters) -> bool:
    if f.session_id is not None and bead.session_id != f.session_id:
        return False
    if f.role is not None and bead.role != f.role:
        return False
    if f.tags and not set(f.tags) & set(bead.tags):
        return False
    if f.since is not None and bead.ts < f.since:
        return False
    if f.until is not None and bead.ts > f.until:
        return False
    return not (f.min_importance is not None and bead.importance < f.min_importance)
