"""`ChrysalisStore` as LangGraph's store (langgraph, pinned in the ``integrations`` extra),
against a real daemon: a compiled `StateGraph` reads and writes through it, and its answers
are held against LangGraph's own `InMemoryStore` given the same operations."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

import pytest

from chrysalis import Client, InvalidInput, NotFound, SecretRefused
from tests.daemon_process import DaemonProcess
from tests.lazy import lazy_module

if TYPE_CHECKING:
    import langgraph.config as lg_config
    import langgraph.graph as lg_graph
    import langgraph.runtime as lg_runtime
    import langgraph.store.base as lg_store
    import langgraph.store.memory as lg_memory

    import chrysalis.integrations.langgraph as integration
else:  # imported by the worker that runs these tests, not by every one that collects them
    lg_config = lazy_module("langgraph.config")
    lg_graph = lazy_module("langgraph.graph")
    lg_runtime = lazy_module("langgraph.runtime")
    lg_store = lazy_module("langgraph.store.base")
    lg_memory = lazy_module("langgraph.store.memory")
    integration = lazy_module("chrysalis.integrations.langgraph")


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    d = DaemonProcess(tmp_path_factory.mktemp("langgraph") / "data").start()
    yield d
    assert d.stop() == 0, d.output()
    d.close()


@pytest.fixture
def client(daemon: DaemonProcess) -> Iterator[Client]:
    with daemon.client() as c:
        yield c


@pytest.fixture
def store(daemon: DaemonProcess) -> Iterator[integration.ChrysalisStore]:
    with integration.ChrysalisStore(socket=daemon.socket) as s:
        yield s


_roots = iter(range(10**6))


def root() -> str:
    """A namespace root of its own per test: the module shares one daemon."""
    return f"t{next(_roots)}"


# ---- a graph ----------------------------------------------------------------------------------


@dataclass
class Context:
    user_id: str


class State(TypedDict, total=False):
    message: str
    recalled: list[str]


def _graph(store: integration.ChrysalisStore) -> Any:
    def remember(state: State, runtime: lg_runtime.Runtime[Context]) -> State:
        """Keeps what the user says about themself, one item per topic word."""
        assert runtime.store is not None
        said = state["message"]
        if said.lower().startswith("remember:"):
            fact = said.split(":", 1)[1].strip()
            topic = fact.split()[-1].strip(".").lower()
            runtime.store.put((runtime.context.user_id, "facts"), topic, {"fact": fact})
        return {}

    def recall(state: State, runtime: lg_runtime.Runtime[Context]) -> State:
        hits = lg_config.get_store().search(
            (runtime.context.user_id, "facts"), query=state["message"], limit=2
        )
        return {"recalled": [h.value["fact"] for h in hits]}

    builder = lg_graph.StateGraph(State, context_schema=Context)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(lg_graph.START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", lg_graph.END)
    return builder.compile(store=store)


def test_a_compiled_graph_reads_and_writes_through_the_store(
    store: integration.ChrysalisStore, client: Client
) -> None:
    graph = _graph(store)
    ada, bo = root(), root()
    graph.invoke({"message": "remember: I drink green tea"}, context=Context(ada))
    graph.invoke({"message": "remember: my sister lives in Lisbon"}, context=Context(ada))
    graph.invoke({"message": "remember: I collect old maps"}, context=Context(bo))
    out = graph.invoke({"message": "which city does my sister live in?"}, context=Context(ada))
    assert out["recalled"][0] == "my sister lives in Lisbon"
    out = graph.invoke({"message": "what do I drink with tea?"}, context=Context(ada))
    assert out["recalled"][0] == "I drink green tea"
    assert "I collect old maps" not in out["recalled"]  # another user's namespace
    # a later run replaces the item of the same topic word
    graph.invoke({"message": "remember: I now drink black tea"}, context=Context(ada))
    assert store.get((ada, "facts"), "tea").value == {"fact": "I now drink black tea"}  # type: ignore[union-attr]
    # in the memory: one live bead per item, in the namespace's session
    beads = client.last_beads(10, session_id=integration.namespace_session((ada, "facts")))
    assert sorted(json.loads(b.content)["key"] for b in beads) == ["lisbon", "tea"]
    assert all(b.role == "note" and b.source == "langgraph" for b in beads)

    async def arun() -> Any:
        return await graph.ainvoke({"message": "where does my sister live?"}, context=Context(ada))

    assert asyncio.run(arun())["recalled"][0] == "my sister lives in Lisbon"


def test_async_nodes_use_the_async_api(store: integration.ChrysalisStore) -> None:
    ns = (root(), "notes")

    async def write(state: State, runtime: lg_runtime.Runtime[Context]) -> State:
        assert runtime.store is not None
        await runtime.store.aput(ns, "a", {"text": state["message"]})
        item = await runtime.store.aget(ns, "a")
        found = await runtime.store.asearch(ns, query=state["message"])
        spaces = await runtime.store.alist_namespaces(prefix=ns[:1])
        assert item is not None and spaces == [ns]
        return {"recalled": [item.value["text"], *(h.key for h in found)]}

    builder = lg_graph.StateGraph(State, context_schema=Context)
    builder.add_node("write", write)
    builder.add_edge(lg_graph.START, "write")
    graph = builder.compile(store=store)

    for text in ("first thoughts", "second thoughts"):  # a fresh event loop each time
        out = asyncio.run(graph.ainvoke({"message": text}, context=Context("x")))
        assert out["recalled"] == [text, "a"]
    asyncio.run(store.adelete(ns, "a"))
    assert store.get(ns, "a") is None


# ---- put, get, delete -------------------------------------------------------------------------


def test_a_put_replaces_and_a_delete_leaves_only_receipts(
    store: integration.ChrysalisStore, client: Client
) -> None:
    ns = (root(), "profile")
    tag = integration.item_tag(ns, "city")
    store.put(ns, "city", {"name": "Porto"})
    first = store.get(ns, "city")
    (old,) = client.last_beads(10, session_id=integration.namespace_session(ns), tag=tag)
    store.put(ns, "city", {"name": "Ghent", "since": 2021})
    now = store.get(ns, "city")
    assert first is not None and now is not None
    assert now.value == {"name": "Ghent", "since": 2021}
    assert now.created_at == first.created_at and now.updated_at > first.updated_at
    (live,) = client.last_beads(10, session_id=integration.namespace_session(ns), tag=tag)
    # the older version is forgotten, not just hidden: its words are gone from the memory
    with pytest.raises(NotFound):
        client.get_bead(old.id)
    assert client.forget_receipt(old.id).model_dump()
    assert client.last_beads(10, query="Porto", session_id=integration.namespace_session(ns)) == []
    ids = store.forget(ns, "city")
    assert ids == [live.id]
    receipt = client.forget_receipt(ids[0]).model_dump()
    assert receipt and "Ghent" not in json.dumps(receipt, default=str)
    assert store.get(ns, "city") is None
    assert store.search(ns) == [] and store.search(ns, query="Ghent") == []
    assert store.forget(ns, "city") == []  # deleting what is gone is no error
    store.delete(ns, "never-was")


def test_concurrent_puts_of_one_key_end_with_one_version(
    store: integration.ChrysalisStore, client: Client, daemon: DaemonProcess
) -> None:
    ns = (root(), "race")
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            with integration.ChrysalisStore(socket=daemon.socket) as mine:
                for m in range(4):
                    mine.put(ns, "shared", {"writer": n, "round": m})
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    live = client.last_beads(
        50, session_id=integration.namespace_session(ns), tag=integration.item_tag(ns, "shared")
    )
    assert len(live) == 1
    item = store.get(ns, "shared")
    assert item is not None and item.value == json.loads(live[0].content)["value"]
    assert item.value["round"] == 3  # the last put the daemon ordered was some writer's last
    assert [h.key for h in store.search(ns)] == ["shared"]


# ---- search and list, held against LangGraph's lg_memory.InMemoryStore -----------------------------------

PEOPLE = [
    (
        ("people", "eu"),
        "ada",
        {"name": "Ada", "age": 36, "city": "Lisbon", "tags": ["math"], "pet": {"kind": "cat"}},
    ),
    (("people", "eu"), "bo", {"name": "Bo", "age": 29, "city": "Oslo", "tags": ["ski", "maps"]}),
    (
        ("people", "eu", "north"),
        "cy",
        {"name": "Cy", "age": 41, "city": "Tromsø", "pet": {"kind": "dog", "age": 3}},
    ),
    (("people", "asia"), "dee", {"name": "Dee", "age": 29, "city": "Osaka", "tags": ["maps"]}),
    (("pets",), "rex", {"name": "Rex", "age": 3, "pet": {"kind": "dog"}}),
    (("pets", "eu"), "tom", {"name": "Tom", "age": 12, "pet": None}),
]

FILTERS: list[dict[str, Any]] = [
    {}, {"age": 29}, {"age": {"$gt": 30}}, {"age": {"$gte": 29, "$lt": 40}}, {"age": {"$ne": 29}},
    {"city": "Oslo"}, {"tags": ["maps"]}, {"pet": {"kind": "dog"}}, {"pet": {"kind": "dog", "age": 3}},
    {"name": {"$eq": "Ada"}}, {"missing": None}, {"age": {"$lte": 3}},
]  # fmt: skip


def _both(store: integration.ChrysalisStore) -> tuple[str, lg_memory.InMemoryStore]:
    top = root()
    oracle = lg_memory.InMemoryStore()
    for ns, key, value in PEOPLE:
        store.put((top, *ns), key, value)
        oracle.put((top, *ns), key, value)
    return top, oracle


def test_search_by_filter_and_prefix_answers_as_langgraphs_own_store(
    store: integration.ChrysalisStore,
) -> None:
    top, oracle = _both(store)
    for prefix in [(top,), (top, "people"), (top, "people", "eu"), (top, "pets"), (top, "nobody")]:
        for f in FILTERS:
            ours = store.search(prefix, filter=f, limit=100)
            theirs = oracle.search(prefix, filter=f, limit=100)
            assert {(h.namespace, h.key) for h in ours} == {(h.namespace, h.key) for h in theirs}, (
                prefix,
                f,
            )
            assert all(h.score is None for h in ours)
    # limit and offset page through one order, without repeats
    pages = [store.search((top,), limit=2, offset=n) for n in (0, 2, 4, 6)]
    keys = [h.key for page in pages for h in page]
    assert sorted(keys) == sorted(k for _, k, _ in PEOPLE) and pages[-1] == []
    # an order between a number and a string or null does not hold (lg_memory.InMemoryStore raises)
    store.put((top, "odd"), "x", {"age": "old"})
    store.put((top, "odd"), "y", {"age": None})
    assert store.search((top, "odd"), filter={"age": {"$gt": 1}}) == []
    assert [h.key for h in store.search((top, "odd"), filter={"age": {"$gt": "a"}})] == ["x"]
    with pytest.raises(InvalidInput, match="operator"):
        store.search((top,), filter={"age": {"$regex": "1"}})
    with pytest.raises(InvalidInput, match="limit"):
        store.search((top,), limit=-1)


def test_list_namespaces_answers_as_langgraphs_own_store(store: integration.ChrysalisStore) -> None:
    top, oracle = _both(store)
    asks: list[dict[str, Any]] = [
        {"prefix": (top,)}, {"prefix": (top, "people")}, {"prefix": (top, "*", "eu")},
        {"prefix": (top,), "suffix": ("eu",)}, {"prefix": (top,), "max_depth": 2},
        {"prefix": (top,), "max_depth": 1}, {"prefix": (top,), "limit": 2, "offset": 1},
        {"prefix": (top, "people"), "suffix": ("*",), "max_depth": 3}, {"prefix": (top, "none")},
    ]  # fmt: skip
    for ask in asks:
        assert store.list_namespaces(**ask) == oracle.list_namespaces(**ask), ask
    everything = store.list_namespaces(limit=1000)
    assert [ns for ns in everything if ns[0] == top] == oracle.list_namespaces(limit=1000)


def test_a_query_ranks_by_meaning_within_the_prefix(store: integration.ChrysalisStore) -> None:
    top = root()
    notes = {
        "garden": "The tomatoes on the balcony need watering twice a week in July.",
        "car": "The hatchback's winter tyres are stored in the neighbour's garage.",
        "trip": "Flights to Reykjavik leave on the fourth; the hostel is booked.",
        "books": "Lent the paperback about whales to Marguerite last spring.",
    }
    for key, text in notes.items():
        store.put((top, "notes"), key, {"text": text, "len": len(text)})
    store.put((top + "x", "notes"), "decoy", {"text": "tyres tyres tyres garage"})
    hits = store.search((top,), query="where are the tyres kept?")
    assert hits[0].key == "car" and hits[0].score is not None
    assert all(h.namespace[0] == top for h in hits)  # not the other root with the same words
    assert store.search((top,), query="whales paperback", limit=1)[0].key == "books"
    # a filter narrows what the ranking may answer
    short = min(notes, key=lambda k: len(notes[k]))
    hits = store.search((top,), query="tyres garage", filter={"len": len(notes[short])})
    assert [h.key for h in hits] == [short]
    assert store.search((top,), query="tyres", limit=1, offset=1)[0].key != "car"


# ---- batch ------------------------------------------------------------------------------------


def test_a_batch_runs_in_order_and_a_bad_op_stops_it_before_any_change(
    store: integration.ChrysalisStore,
) -> None:
    ns = (root(), "b")
    results = store.batch(
        [
            lg_store.PutOp(ns, "k", {"v": 1}),
            lg_store.GetOp(ns, "k"),
            lg_store.PutOp(ns, "k", {"v": 2}),
            lg_store.SearchOp(ns, filter={"v": 2}),
            lg_store.ListNamespacesOp(match_conditions=(lg_store.MatchCondition("prefix", ns),)),
            lg_store.PutOp(ns, "k", None),
            lg_store.GetOp(ns, "k"),
        ]
    )
    assert results[0] is None and results[1].value == {"v": 1}  # type: ignore[union-attr]
    assert [h.value for h in results[3]] == [{"v": 2}]  # type: ignore[union-attr]
    assert results[4] == [ns] and results[6] is None
    for bad in (
        lg_store.PutOp(ns, "k", {"v": float("nan")}),
        lg_store.PutOp(ns, "k", {"v": b"bytes"}),
        lg_store.PutOp(ns, "k", {1: "int key"}),  # type: ignore[dict-item]
        lg_store.PutOp((*ns, "a.b"), "k", {"v": 3}),
        lg_store.PutOp((), "k", {"v": 3}),
        lg_store.PutOp(("langgraph", "x"), "k", {"v": 3}),
        lg_store.PutOp((*ns, ""), "k", {"v": 3}),
        lg_store.PutOp(ns, "k", ["not", "a", "dict"]),  # type: ignore[arg-type]
        lg_store.PutOp(ns, "\ud800", {"v": 3}),
        lg_store.GetOp(tuple(["x"] * 65), "k"),
        lg_store.SearchOp(ns, filter={"v": {"$like": 1}}),
        lg_store.ListNamespacesOp(max_depth=0),
    ):
        with pytest.raises((InvalidInput, lg_store.InvalidNamespaceError)):
            store.batch([lg_store.PutOp(ns, "first", {"v": 0}), bad])
        assert store.get(ns, "first") is None, bad
    with pytest.raises(NotImplementedError):
        store.batch([lg_store.PutOp(ns, "k", {"v": 1}, ttl=5.0)])
    assert asyncio.run(store.abatch([lg_store.PutOp(ns, "a", {"v": 9}), lg_store.GetOp(ns, "a")]))[
        1
    ].value == {"v": 9}  # type: ignore[union-attr]


# ---- what an attacker, a careless caller or a second agent can do ---------------------------


def test_odd_and_huge_labels_and_keys_stay_apart(
    store: integration.ChrysalisStore, client: Client
) -> None:
    top = root()
    labels = [
        "a:b",
        "a@b",
        "a b",
        "a/b",
        'a"b',
        "a\\b",
        "*",
        "ü会",
        "🦋",
        "x" * 20_000,
        "a\nb",
        "-",
    ]
    for n, label in enumerate(labels):
        store.put((top, label), label, {"n": n})
    for n, label in enumerate(labels):
        assert store.get((top, label), label).value == {"n": n}  # type: ignore[union-attr]
        assert [h.value for h in store.search((top, label))] == [{"n": n}]
    assert store.list_namespaces(prefix=(top,)) == sorted((top, label) for label in labels)
    # "a" + "b:c" and "a:b" + "c" are two namespaces, as are a key in one and a label
    store.put((top, "a", "b:c"), "k", {"which": 1})
    store.put((top, "a:b", "c"), "k", {"which": 2})
    assert store.get((top, "a", "b:c"), "k").value == {"which": 1}  # type: ignore[union-attr]
    assert store.get((top, "a:b", "c"), "k").value == {"which": 2}  # type: ignore[union-attr]
    big = {"text": "lorem ipsum " * 20_000}  # ~240 KB: kept as a blob by the daemon
    store.put((top, "big"), "k", big)
    assert store.get((top, "big"), "k").value == big  # type: ignore[union-attr]
    with pytest.raises(InvalidInput, match="at most"):
        store.put((top, "big"), "k2", {"text": "x" * (8 * 1024 * 1024)})
    assert store.get((top, "big"), "k2") is None


def test_credentials_in_values_are_redacted_and_the_caller_is_told(
    daemon: DaemonProcess, store: integration.ChrysalisStore, caplog: pytest.LogCaptureFixture
) -> None:
    ns = (root(), "creds")
    key = "ghp_" + "aB3dE5fG7h" * 4
    value = {
        "note": f"deploy with {key}",
        "password": "Tr0ub4dor&3x",
        "nested": [{"env": 'key=token: abcd1234efgh5678ijkl&x="y"'}],  # a match across JSON quotes
        "fine": "the meeting moved to Thursday",
    }
    with caplog.at_level(logging.WARNING, logger="chrysalis.integrations"):
        store.put(ns, "deploy", value)
    got = store.get(ns, "deploy")
    assert got is not None
    assert got.value["note"] == "deploy with [REDACTED:github-token]"
    assert got.value["password"] == "[REDACTED:password]"
    assert "abcd1234efgh5678ijkl" not in json.dumps(got.value)
    assert got.value["fine"] == value["fine"]
    assert "github-token" in caplog.text and key not in caplog.text
    assert store.search(ns, query="ghp_" + "aB3dE5fG7h" * 4)[0].value["note"].endswith("]")
    with integration.ChrysalisStore(socket=daemon.socket, secrets="refuse") as strict:
        with pytest.raises(SecretRefused, match="github-token"):
            strict.put(ns, "strict", value)
        assert strict.get(ns, "strict") is None
    # a label or key holding a credential would be changed by redaction: refused instead
    with pytest.raises(InvalidInput, match="namespace or the key"):
        store.put((*ns, key), "k", {"v": 1})
    with pytest.raises(InvalidInput, match="namespace or the key"):
        store.put(ns, f"token={key}", {"v": 1})


def test_a_second_agent_sees_only_its_namespaces_and_its_memory(
    daemon: DaemonProcess, store: integration.ChrysalisStore, client: Client
) -> None:
    mine, theirs = (root(), "memories"), (root(), "memories")
    store.put(mine, "pin", {"text": "the locker code is 4471 for the gym"})
    with integration.ChrysalisStore(socket=daemon.socket) as other:
        other.put(theirs, "pin", {"text": "the bike lock is 9902"})
        assert other.get(theirs, "pin").value["text"].endswith("9902")  # type: ignore[union-attr]
        hits = other.search(theirs, query="locker code gym")
        assert [h.namespace for h in hits] == [theirs]  # its own item, weakly; never mine
        assert other.search(theirs[:1]) != [] and other.list_namespaces(prefix=theirs[:1]) == [
            theirs
        ]
    # a bead forged by hand with my item's tags but claiming another namespace is no item of it
    client.remember(
        json.dumps({"namespace": list(theirs), "key": "pin", "value": {"text": "forged"}}),
        session_id=integration.namespace_session(mine), tags=[integration.prefix_tag(mine[:1]), integration.prefix_tag(mine), integration.item_tag(mine, "pin")],
    )  # fmt: skip
    assert store.get(mine, "pin").value["text"].startswith("the locker")  # type: ignore[union-attr]
    assert all(h.value["text"] != "forged" for h in store.search(mine[:1]))
    # a named memory is apart from the default one entirely
    client.create_memory("lg-other")
    with integration.ChrysalisStore(socket=daemon.socket, memory="lg-other") as elsewhere:
        assert elsewhere.get(mine, "pin") is None and elsewhere.search(mine[:1]) == []
        elsewhere.put(mine, "pin", {"text": "other memory"})
    assert store.get(mine, "pin").value["text"].startswith("the locker")  # type: ignore[union-attr]
