"""retrieve(): signals, provenance, strategies, filters, token budget, bad input."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from chrysalis import InvalidInput, Memory
from chrysalis.search import count_tokens
from chrysalis.search.embed import DeterministicEmbedder


@pytest.fixture
def memory(open_memory: Callable[..., Memory]) -> Memory:
    mem = open_memory(embedder="deterministic", replica_id="laptop-a")
    rows = [
        ("s1", "user", "I adopted a puppy called Biscuit last weekend", 0.9, ["pets"]),
        ("s1", "assistant", "Congratulations! How is Biscuit settling in?", 0.3, []),
        ("s1", "user", "He chews everything, especially my running shoes", 0.5, ["pets"]),
        ("s2", "user", "My marathon training starts in March", 0.7, ["sport"]),
        ("s2", "assistant", "Good luck with the marathon plan", 0.2, []),
        ("s2", "user", "I bought new running shoes for the marathon", 0.6, ["sport"]),
    ]
    mem.append_beads(
        [{"id": f"b{i}", "session_id": s, "role": r, "content": c, "importance": imp, "tags": t, "ts": 1_700_000_000.0 + 60 * i}
         for i, (s, r, c, imp, t) in enumerate(rows)]
    )  # fmt: skip
    mem.add_node("biscuit", "pet", name="Biscuit")
    mem.add_node("user", "person", name="the user")
    mem.add_edge("user", "biscuit", "owns", evidence=["b0"])
    mem.wait_indexed(timeout=30)
    return mem


def test_items_explain_themselves(memory: Memory) -> None:
    result = memory.retrieve("what is the puppy called?", k=5)
    assert result.items and result.strategy == "fusion"
    top = result.items[0]
    assert top.id == "b0" and top.kind == "bead"
    assert {"emb", "keyword", "recency", "importance"} <= set(top.signals)
    assert top.provenance["origin_replica"] == "laptop-a"
    assert top.provenance["op"].startswith("laptop-a:") and top.provenance["session_id"] == "s1"
    scores = [i.score for i in result.items]
    assert scores == sorted(scores, reverse=True)
    assert result.tokens_used == sum(i.tokens for i in result.items)


def test_graph_expansion_walks_edges(memory: Memory) -> None:
    result = memory.retrieve("Biscuit", k=10, strategy="kg")
    by_key = {f"{i.kind}:{i.id}": i for i in result.items}
    edge = next(i for i in result.items if i.kind == "edge")
    assert edge.text == "the user owns Biscuit" and edge.provenance["edges"] == [edge.id]
    assert "node:user" in by_key and by_key["node:user"].signals["graph"] > 0
    assert by_key["bead:b0"].provenance["via_node"] == "biscuit"  # the fact's evidence


def test_context_signal_brings_the_neighbouring_turn(memory: Memory) -> None:
    items = memory.retrieve("Congratulations", k=6, filters={"kinds": ["bead"]}).items
    neighbours = {i.id: i for i in items}
    assert "b1" in neighbours and neighbours["b0"].signals.get("context", 0) > 0


@pytest.mark.parametrize("strategy", ["fusion", "emb", "keyword", "kg", "beads"])
def test_every_strategy_answers(memory: Memory, strategy: str) -> None:
    result = memory.retrieve("running shoes", k=3, strategy=strategy)
    assert result.strategy == strategy and len(result.items) <= 3
    if strategy in ("keyword", "fusion"):
        assert {"b2", "b5"} <= {i.id for i in result.items}
    if strategy == "beads":
        assert result.items[0].id == "b5"  # the latest first


def test_filters(memory: Memory) -> None:
    def ids(**filters: object) -> set[str]:
        return {
            i.id
            for i in memory.retrieve("running shoes marathon puppy", k=20, filters=filters).items
            if i.kind == "bead"
        }

    assert ids(session_id="s2") == {"b3", "b4", "b5"}
    assert ids(role="assistant") <= {"b1", "b4"} and ids(role="assistant")
    assert ids(tags=["pets"]) == {"b0", "b2"}
    assert ids(min_importance=0.6) == {"b0", "b3", "b5"}
    assert ids(since=1_700_000_000.0 + 150, until=1_700_000_000.0 + 250) == {"b3", "b4"}
    only_nodes = memory.retrieve("Biscuit", k=5, filters={"kinds": ["node"]}).items
    assert only_nodes and all(i.kind == "node" for i in only_nodes)


def test_token_budget_is_honoured_and_dedup_by_content(open_memory: Callable[..., Memory]) -> None:
    mem = open_memory()
    mem.append_beads(
        [{"id": f"d{i}", "content": "the very same words about tea"} for i in range(3)]
    )
    mem.append_bead("tea " * 200, id="long")
    mem.append_bead("short tea note", id="short")
    result = mem.retrieve("tea", k=10, strategy="keyword")
    texts = [i.text for i in result.items]
    assert len(texts) == len(set(texts))  # three identical beads: one item
    budget = mem.retrieve("tea", k=10, token_budget=20, strategy="keyword")
    assert budget.tokens_used <= 20 and "long" not in {i.id for i in budget.items}
    assert budget.items and budget.token_budget == 20


def test_without_an_embedder_keyword_and_graph_still_work(
    open_memory: Callable[..., Memory],
) -> None:
    mem = open_memory()
    mem.append_bead("the invoice number is INV-20931", id="inv")
    result = mem.retrieve("INV-20931", k=3)
    assert result.items[0].id == "inv"
    assert "emb: no embedder configured" in result.notes


def test_bad_queries(memory: Memory) -> None:
    for kwargs in ({"query": ""}, {"query": "x", "k": 0}, {"query": "x", "strategy": "magic"},
                   {"query": "x", "token_budget": -1}, {"query": "x", "filters": {"colour": "red"}},
                   {"query": "x", "filters": {"min_importance": 3}}):  # fmt: skip
        with pytest.raises(InvalidInput):
            memory.retrieve(**kwargs)  # type: ignore[arg-type]


def test_count_tokens_is_offline_and_sane() -> None:
    assert count_tokens("hello") == 1
    assert 8 <= count_tokens("The quick brown fox jumps over the lazy dog.") <= 14
    assert count_tokens("x" * 4000) == 1000


def test_emb_strategy_returns_the_nearest_neighbours(open_memory: Callable[..., Memory]) -> None:
    """strategy="emb" ranks by the vector alone: beads of different ages and importance, with
    near-ties between their vectors, come back as numpy brute force orders them."""
    rng = np.random.default_rng(3)
    embedder = DeterministicEmbedder(64)
    mem = open_memory(embedder=embedder)
    vocabulary = [
        "kettle", "lantern", "harbour", "violin", "meadow", "copper", "ledger", "orchard",
        "tunnel", "parcel", "glacier", "pepper", "saddle", "thimble", "walnut",
    ]  # fmt: skip
    rows = [
        {
            "id": f"v{i}",
            "content": " ".join(rng.choice(vocabulary, int(rng.integers(2, 7)))) + f" note {i}",
            "ts": 1_600_000_000.0 + float(rng.uniform(0, 2 * 365 * 86400)),  # two years apart
            "importance": float(rng.uniform(0, 1)),
        }
        for i in range(400)
    ]
    mem.append_beads(rows)
    mem.wait_indexed(timeout=60)
    ids = [r["id"] for r in rows]
    stored = np.stack(
        [np.frombuffer(mem.get_embedding("bead", i, embedder.model).vector, "<f4") for i in ids]
    )
    hits = total = 0
    for _ in range(40):
        query = stored[rng.integers(len(ids))] + 0.3 * rng.standard_normal(64) / 8
        query = (query / np.linalg.norm(query)).astype(np.float32)
        exact = {ids[j] for j in np.argsort(-(stored @ query))[:10]}
        got = mem.retrieve("anything", k=10, strategy="emb", query_vector=query).items
        assert [i.score for i in got] == sorted((i.score for i in got), reverse=True)
        assert all(set(i.signals) == {"emb"} for i in got)  # nothing else ranks them
        hits += len(exact & {i.id for i in got})
        total += 10
    assert hits / total >= 0.99
