"""retrieve()'s fast path against a straightforward reference: the same items, order, signals
and provenance; and the bounded graph walk (`Reader.walk`) against `neighbors`."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chrysalis import Memory
from chrysalis.core.errors import InvalidInput, NotFound
from chrysalis.core.events import split_key
from chrysalis.core.models import Bead, Filters, RetrievedItem
from chrysalis.read.graph import _Walk
from chrysalis.search import count_tokens, evidence, when
from chrysalis.search.fusion import _SCORED, Retriever, Weights, _bead_passes, _Candidate


class Reference(Retriever):
    """Scores and explains as the first version did: one read per bead, per origin, per
    node and edge, every candidate described in full."""

    def _score_and_explain(  # type: ignore[override]
        self,
        query: str,
        cands: dict[str, _Candidate],
        f: Filters,
        strategy: str,
        span: tuple[float, float] | None = None,
        summaries: bool = False,
        described: dict[str, Bead] | None = None,
    ) -> list[RetrievedItem]:
        w, reader = self.weights, self.reader
        beads = {}
        for c in cands.values():
            kind, item_id = split_key(c.key)
            if kind == "bead":
                with contextlib.suppress(NotFound):
                    beads[c.key] = reader.get_bead(item_id)
        if described is not None:
            described.update((b.id, b) for b in beads.values())
        newest = max((b.ts for b in beads.values()), default=0.0)
        sessions, factor = {}, {}
        if strategy == "fusion":
            strength = {k: cands[k].signals.get("emb", 0) + cands[k].signals.get("keyword", 0)
                        for k in beads}  # fmt: skip
            sessions = evidence.session_evidence(
                {k: (b.session_id, strength[k]) for k, b in beads.items()}
            )
            factor = evidence.attribution(query, beads.values(), w.attribution)
        out = []
        for c in cands.values():
            kind, item_id = split_key(c.key)
            if f.kinds and kind not in f.kinds:
                continue
            found = self._reference_describe(kind, item_id, beads.get(c.key))
            if found is None:
                continue
            text, importance, ts, provenance, bead = found
            if bead is not None and not _bead_passes(bead, f):
                continue
            signals = dict(c.signals)
            if strategy == "emb":  # the vector alone ranks (nearest neighbours)
                ts, importance = None, None
            if ts is not None:
                signals["recency"] = math.exp(-max(0.0, (newest - ts) / 86400) / 30)
                if span is not None and when.closeness(ts, span) > 0:
                    signals["time"] = when.closeness(ts, span)
            if importance is not None:
                signals["importance"] = importance
            if c.key in sessions:
                signals["session"] = sessions[c.key]
            if bead is not None and bead.id in factor:
                signals["attribution"] = factor[bead.id]
            score = (
                w.emb * signals.get("emb", 0.0)
                + w.keyword * signals.get("keyword", 0.0)
                + w.graph * signals.get("graph", 0.0)
                + w.context * signals.get("context", 0.0)
                + w.recency * signals.get("recency", 0.0)
                + w.importance * signals.get("importance", 0.0)
                + w.session * signals.get("session", 0.0)
                + w.time * signals.get("time", 0.0)
            ) * signals.get("attribution", 1.0)
            if strategy == "beads":
                score = signals.get("recent", 0.0)
            if strategy == "emb":
                score = signals.get("emb", 0.0)
            if c.edges:
                provenance["edges"] = c.edges
                provenance["via_node"] = c.via
            out.append(
                RetrievedItem(
                    kind=kind,  # type: ignore[arg-type]
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

    def _reference_describe(self, kind: str, item_id: str, bead: Any) -> Any:
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
                prov = {"source": "kg", **reader.origin("node", item_id)}
                return f"{n.name or n.id} ({n.type})", 0.5, None, prov, None
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
                prov = {"source": "persona", **reader.origin("persona", "persona")}
                return text, 0.5, None, prov, None
        except NotFound:
            return None
        return None


@pytest.fixture
def memory(open_memory: Callable[..., Memory]) -> Memory:
    mem = open_memory(embedder="deterministic", replica_id="laptop-a")
    words = [
        "puppy",
        "Biscuit",
        "marathon",
        "shoes",
        "tea",
        "garden",
        "invoice",
        "river",
        "budget",
        "walnut",
    ]
    mem.append_beads(
        [{"id": f"b{i}", "session_id": f"s{i % 4}", "role": ("user", "assistant")[i % 2],
          "content": f"{words[i % 10]} and {words[(3 * i) % 10]} note {i}",
          "importance": (i % 10) / 10, "tags": ["t" + str(i % 3)], "ts": 1_700_000_000.0 + 3600 * i,
          **({"source": "slack"} if i % 5 == 0 else {})}
         for i in range(60)]
    )  # fmt: skip
    mem.append_bead("tea " * 3000, id="big")  # a blob
    mem.append_bead("the same tea words", id="dup1")
    mem.append_bead("the same tea words", id="dup2")
    mem.forget("b7")
    for i, word in enumerate(words):
        mem.add_node(f"n{i}", "thing", name=f"{word} node")
    for i in range(25):
        mem.add_edge(f"n{i % 10}", f"n{(7 * i + 3) % 10}", "relates", id=f"e{i}",
                     weight=0.5 + (i % 4) / 2, evidence=[f"b{i}", f"b{i + 30}"])  # fmt: skip
    mem.remove_edge("e4")
    mem.put_skill({"id": "brew", "name": "brew tea", "description": "makes tea in the garden"})
    mem.update_persona(name="Ada", description="likes tea and marathon running")
    mem.wait_indexed(timeout=30)
    return mem


QUERIES = ["puppy Biscuit", "tea garden", "marathon shoes budget", "invoice river", "walnut"]
FILTERS: list[dict[str, Any]] = [
    {},
    {"kinds": ["bead"]},
    {"kinds": ["node", "edge"]},
    {"session_id": "s1"},
    {"role": "assistant", "min_importance": 0.3},
    {"tags": ["t2"], "since": 1_700_000_000.0 + 3600 * 10},
]


@pytest.mark.parametrize("strategy", ["fusion", "emb", "keyword", "kg", "beads"])
def test_same_results_as_the_reference(memory: Memory, strategy: str) -> None:
    fast = Retriever(memory.reader, memory.indexer, memory.embedder, memory.weights)
    ref = Reference(memory.reader, memory.indexer, memory.embedder, memory.weights)
    compared = 0
    for query in QUERIES:
        for filters in FILTERS:
            for k, budget in ((3, None), (10, None), (10, 40), (50, None)):
                args: dict[str, Any] = {"k": k, "token_budget": budget, "strategy": strategy}
                described: dict[str, Bead] = {}
                got = fast.retrieve(query, filters=filters, described=described, **args)
                want = ref.retrieve(query, filters=filters, **args)
                assert got.model_dump() == want.model_dump(), (query, filters, args)
                compared += bool(got.items)
                # Every bead returned was handed over as it is stored (a context reads
                # its time, session and tags from there).
                for item in got.items:
                    if item.kind == "bead":
                        assert described[item.id] == memory.get_bead(item.id)
    assert compared > 20


def test_walk_unbounded_is_neighbors_at_depth_two(memory: Memory) -> None:
    reader = memory.reader
    walks = reader.walk([f"n{i}" for i in range(10)] + ["nope"], limit=1000)
    assert "nope" not in walks
    for i in range(10):
        hood = reader.neighbors(f"n{i}", depth=2)
        degree, steps = walks[f"n{i}"]
        assert degree == sum(1 for n in hood if n.depth == 1)
        want = {
            (n.node.id, n.edge.id, n.edge.weight, tuple(n.edge.evidence), n.depth) for n in hood
        }
        got = {(s.node, s.edge, s.weight, tuple(s.evidence), s.depth) for s in steps}
        assert got == want
        weights = [s.weight for s in steps if s.depth == 1]
        assert weights == sorted(weights, reverse=True)  # heaviest first


def test_a_hub_does_not_blow_up_the_expansion(
    open_memory: Callable[..., Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = open_memory()
    mem.add_node("hub", "entity", name="Hubert the hub")
    edges = 3000
    for i in range(edges):
        mem.add_node(f"x{i}", "entity", name=f"spoke {i}")
        mem.add_edge("hub", f"x{i}", "knows", id=f"h{i}", weight=1.0 + (i % 7 == 0))
    mem.wait_indexed(timeout=60)
    reads = 0
    edge = _Walk.edge

    def counted(self: _Walk, edge_id: str) -> Any:
        nonlocal reads
        reads += 1
        return edge(self, edge_id)

    monkeypatch.setattr(_Walk, "edge", counted)
    degree, steps = mem.reader.walk(["hub"], limit=16)["hub"]
    assert degree == edges and len(steps) == 16 and reads <= 256
    assert all(s.depth == 1 and s.weight == 2.0 for s in steps)  # the heaviest
    result = mem.retrieve("Hubert", k=20, strategy="kg")
    graph = [i for i in result.items if i.signals.get("graph")]
    assert 0 < len(graph) <= 2 * 16
    assert all(i.signals["graph"] <= 2.0 / edges + 1e-6 for i in graph)
    assert all(i.provenance["via_node"] == "hub" for i in graph)


# ---- the vectorised scores and the cheaper reads stay the same answers ---------------------

_signal = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
_weight = st.floats(min_value=-3.0, max_value=3.0, allow_nan=False, allow_subnormal=False)


@given(
    weights=st.fixed_dictionaries({name: _weight for name in _SCORED}),
    signals=st.lists(
        st.dictionaries(st.sampled_from([*_SCORED, "attribution", "recent"]), _signal),
        max_size=30,
    ),
)
def test_scores_are_the_very_floats_score_gives(
    weights: dict[str, float], signals: list[dict[str, float]]
) -> None:
    # Bit for bit, not approximately: a last-bit difference can swap two candidates whose
    # rounded scores tie, and retrieval must not change.
    w = Weights(**weights)
    got = w.scores(signals).tolist()
    assert got == [w.score(s) for s in signals]
    assert all(isinstance(g, float) for g in got)


def test_last_bead_ids_are_the_ids_of_last_beads(memory: Memory) -> None:
    reader = memory.reader
    for n in (0, 1, 7, 50, 500):
        for session in (None, "s1", "s3", "nobody"):
            want = [b.id for b in reader.last_beads(n, session_id=session)]
            assert reader.last_bead_ids(n, session_id=session) == want
    assert "b7" not in reader.last_bead_ids(500)  # forgotten
    with pytest.raises(InvalidInput):
        reader.last_bead_ids(-1)


def test_windows_read_through_the_cache_forget_what_is_forgotten(memory: Memory) -> None:
    reader = memory.reader
    # b10's session s2 holds b2, b6, b10, b14, b18: b6 and b14 sit beside it.
    before = reader.windows(["b10"], 1)["b10"]
    assert before == (5, [("b6", -1, 5), ("b14", 1, 5)])  # "puppy and tea note 10"
    assert reader.windows(["b10"], 1)["b10"] == before  # now from the cache: the same
    memory.forget("b14")
    after = reader.windows(["b10"], 1)["b10"]
    assert [other for other, _, _ in after[1]] == ["b6", "b18"]
    assert all(other != "b14" for other, _, _ in reader.windows(["b18"], 2)["b18"][1])
    assert "b14" not in reader.windows(["b14", "b10"], 1)  # a forgotten hit has no window


def test_adjacent_beads_through_the_cache_forget_what_is_forgotten(memory: Memory) -> None:
    reader = memory.reader
    # s2 holds b2, b6, b10, b14, b18 (b14 forgotten in the second half)
    assert reader.adjacent_beads("b10", 2) == [("b6", -1), ("b2", -2), ("b14", 1), ("b18", 2)]
    assert reader.adjacent_beads("b10", 2) == memory.adjacent_beads("b10", 2)  # cached: same
    assert reader.windows(["b10"], 2)["b10"][1] == [
        ("b6", -1, 5), ("b2", -2, 5), ("b14", 1, 5), ("b18", 2, 5),
    ]  # fmt: skip
    memory.forget("b14")
    assert reader.adjacent_beads("b10", 1) == [("b6", -1), ("b18", 1)]
    assert reader.adjacent_beads("b14", 1) == []
    assert reader.adjacent_beads("b7", 1) == []  # forgotten before any read
    assert reader.adjacent_beads("nobody", 1) == []


_signal_values = st.one_of(
    st.floats(min_value=0.0, max_value=5.0, allow_nan=False),
    st.integers(min_value=0, max_value=3),
)


@given(
    signals=st.dictionaries(st.sampled_from([*_SCORED, "attribution", "recent"]), _signal_values),
    score=st.floats(min_value=-10.0, max_value=10.0, allow_nan=False),
    text=st.text(min_size=1, max_size=200),
    numpy_floats=st.booleans(),
)
def test_trusted_item_matches_validation(
    signals: dict[str, float], score: float, text: str, numpy_floats: bool
) -> None:
    """`fusion._item` (no validation) makes the very item validation makes, as the items
    loop calls it: signals rounded and made floats, numpy floats among them too."""
    import numpy as np

    from chrysalis.search.fusion import _item

    raw: dict[str, Any] = {k: np.float64(v) if numpy_floats else v for k, v in signals.items()}
    neg = -round(score, 6)  # as the items loop holds it
    prov = {"source": "slack", "op": "r:1", "hlc": 7, "edges": ["e1"], "span_refs": [{"a": 1}]}
    want = RetrievedItem(
        kind="bead", id="b1", text=text, score=-neg,
        signals={k: round(v, 6) for k, v in raw.items()}, provenance=dict(prov),
        tokens=count_tokens(text),
    )  # fmt: skip
    got = _item(
        "bead", "b1", text, -neg,
        {k: float(round(v, 6)) for k, v in raw.items()}, dict(prov), count_tokens(text),
    )  # fmt: skip
    assert got == want
    assert got.model_dump_json() == want.model_dump_json()
    assert got.model_fields_set == want.model_fields_set and repr(got) == repr(want)
    assert all(type(v) is float for v in got.signals.values())


@given(st.text(max_size=300) | st.text(alphabet=" .,!?-'\u00e9\u4e2d\u0130a1_\t\n", max_size=6000))
def test_count_tokens_cached_or_not_is_the_estimate(text: str) -> None:
    import re

    words = re.findall(r"\w+|[^\w\s]", text)
    want = max(1, len(text) // 4, len(words) * 3 // 4)
    assert count_tokens(text) == want
    assert count_tokens(text) == want  # a second time: from the cache when short


def test_count_tokens_keeps_only_short_texts() -> None:
    """A text past CACHED_CHARS is counted without the cache; a short one is kept under its
    hash, never its text (`tests/test_red_s8.py`: a forgotten bead's words stay nowhere)."""
    from chrysalis.search import fusion

    long_text = "a long one, never cached " * 1000
    assert len(long_text) > fusion.CACHED_CHARS
    assert count_tokens(long_text) == count_tokens(long_text) == len(long_text) // 4
    assert hash(long_text) not in fusion._COUNTS
    short = "a short one, cached"
    assert count_tokens(short) == count_tokens(short) == fusion._COUNTS[hash(short)]
    assert all(isinstance(k, int) for k in list(fusion._COUNTS))
