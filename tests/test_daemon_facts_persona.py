"""The daemon's one-call verbs, on a real socket: a fact (both nodes and the edge in one write)
and a persona patch (only the given fields, so concurrent patches to other fields survive)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from chrysalis import AsyncClient
from chrysalis.core.errors import InvalidInput, NotFound

from .daemon_process import DaemonProcess, DaemonThread, raw_http


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    d = DaemonThread(tmp_path_factory.mktemp("verbs") / "data").start()
    yield d
    assert d.stop() == 0, d.output()
    d.close()


@pytest.fixture(scope="module")
def http(daemon: DaemonProcess) -> Iterator[httpx.Client]:
    with raw_http(daemon.socket) as client:
        yield client


def digest(http: httpx.Client) -> str:
    """The state digest once the daemon's own writes have settled: the embedder's vectors and
    the knowledge worker's ops follow a request, so two reads must agree (bounded wait)."""
    deadline = time.monotonic() + 15
    last = None
    while True:
        current = str(http.get("/v1/status").json()["state_digest"])
        if current == last or time.monotonic() > deadline:
            return current
        last = current
        time.sleep(0.3)


# ---- facts ----------------------------------------------------------------------------------


def test_a_fact_is_one_request_making_both_nodes_and_the_edge(daemon: DaemonProcess) -> None:
    before = daemon.request_counts()
    edge = daemon.once("add_fact", "Grace Hopper", "invented", "COBOL", evidence=["b-1"])
    assert daemon.requests_since(before) == {("POST", "/v1/kg/facts", 201): 1}
    assert (edge.source, edge.predicate, edge.target) == ("grace-hopper", "invented", "cobol")
    with daemon.client() as c:
        assert c.get_node("grace-hopper").name == "Grace Hopper"
        assert c.get_node("cobol").type == "entity"
        assert c.get_edge(edge.id).evidence == ["b-1"]
        (n,) = c.neighbors("grace-hopper")
        assert (n.node.id, n.edge.id, n.direction) == ("cobol", edge.id, "out")
        assert c.add_fact("grace hopper", "invented", "cobol", evidence=["b-1"]).id == edge.id


def test_the_cli_fact_is_one_request(daemon: DaemonProcess) -> None:
    before = daemon.request_counts()
    out = daemon.cli("fact", "Ada", "wrote_for", "Analytical Engine", "--type", "person", "--json")
    assert out.returncode == 0, out.stderr
    assert daemon.requests_since(before) == {("POST", "/v1/kg/facts", 201): 1}
    edge = json.loads(out.stdout)
    assert (edge["source"], edge["target"]) == ("ada", "analytical-engine")
    assert daemon.once("get_node", "ada").type == "person"
    human = daemon.cli("fact", "Ada", "wrote_for", "Analytical Engine")
    assert f"ada -[wrote_for]-> analytical-engine  (edge {edge['id']})" in human.stdout


def test_a_fact_keeps_an_existing_node_and_its_times(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        c.add_node("linus", "person", name="Linus Torvalds")
        edge = c.add_fact("Linus", "wrote", "Git", valid_at="2005-04-07T00:00:00+00:00")
        assert c.get_node("linus").name == "Linus Torvalds"
        assert edge.valid_at == 1112832000.0


FACT = {"subject": "Alice", "predicate": "knows", "object": "Bob"}


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({**FACT, "subject": ""}, "subject must not be empty"),
        ({**FACT, "subject": "   "}, "subject must be non-empty"),
        ({**FACT, "predicate": ""}, "predicate must not be empty"),
        ({"subject": "Alice", "object": "Bob"}, "predicate is required"),
        ({**FACT, "weight": "a lot"}, "weight"),
        ({**FACT, "evidence": ["a b"]}, "evidence[0] is not an id: an id is 1 to 128 letters"),
        ({**FACT, "colour": "red"}, "colour"),
        ({**FACT, "valid_at": "soon"}, "valid_at"),
    ],
)
def test_a_bad_fact_is_400_and_writes_nothing(
    http: httpx.Client, body: dict[str, Any], where: str
) -> None:
    before = digest(http)
    r = http.post("/v1/kg/facts", json=body)
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert set(err) == {"code", "message", "details"} and err["code"] == "invalid"
    assert where in err["message"]
    assert digest(http) == before
    assert http.get("/v1/kg/nodes/alice").status_code == 404


def test_a_bad_fact_through_the_client_raises_invalid_input(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        with pytest.raises(InvalidInput, match="object must be non-empty"):
            c.add_fact("Alice", "knows", " ")
        with pytest.raises(NotFound):
            c.get_node("alice")


def test_a_new_value_over_http_ends_the_old_one(http: httpx.Client) -> None:
    """POST /v1/kg/facts on a one-value predicate supersedes, as an extracted fact does."""
    first = http.post("/v1/kg/facts", json={"subject": "Wen", "predicate": "lives_in",
                                            "object": "Chengdu"})  # fmt: skip
    second = http.post("/v1/kg/facts", json={"subject": "Wen", "predicate": "lives_in",
                                             "object": "Vancouver"})  # fmt: skip
    assert first.status_code == second.status_code == 201, second.text
    old, new = first.json(), second.json()
    assert new["metadata"] == {"functional": True} and new["valid_at"] is not None
    ended = http.get(f"/v1/kg/edges/{old['id']}").json()
    assert ended["invalid_at"] == new["valid_at"]
    holding = http.get("/v1/kg/nodes/wen/neighbors").json()
    assert [n["node"]["name"] for n in holding] == ["Vancouver"]
    # A predicate with many values keeps both.
    for obj in ("dumplings", "hotpot"):
        http.post("/v1/kg/facts", json={"subject": "Wen", "predicate": "cooks", "object": obj})
    cooks = [e for e in http.get("/v1/kg/graph").json()["edges"] if e["predicate"] == "cooks"]
    assert {e["invalid_at"] for e in cooks} == {None} and len(cooks) == 2


def test_the_cli_fact_supersedes_too(daemon: DaemonProcess) -> None:
    for employer in ("Acme", "Globex"):
        out = daemon.cli("fact", "Alice Moreau", "works_at", employer, "--json")
        assert out.returncode == 0, out.stderr
    with daemon.client() as c:
        (n,) = c.neighbors("alice-moreau")
        assert n.node.name == "Globex"
        history = c.neighbors("alice-moreau", include_invalid=True)
        assert sorted(h.node.name or "" for h in history) == ["Acme", "Globex"]
        (acme,) = [h.edge for h in history if h.node.name == "Acme"]
        assert acme.invalid_at is not None and acme.invalid_at == n.edge.valid_at


# ---- persona --------------------------------------------------------------------------------


def test_a_patch_changes_only_the_given_fields_in_one_request(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        c.put_persona(
            {"name": "Ada", "description": "careful", "goals": ["ship"],
             "traits": {"tone": "dry", "pace": "slow"}}
        )  # fmt: skip
        before = daemon.request_counts()
        p = c.update_persona(goals=["ship", "test"], traits={"pace": None, "humour": "some"})
        assert daemon.requests_since(before) == {("PATCH", "/v1/persona", 200): 1}
        assert (p.name, p.description) == ("Ada", "careful")
        assert p.goals == ["ship", "test"]
        assert p.traits == {"tone": "dry", "humour": "some"}  # merged; "pace" deleted
        assert c.get_persona() == p
        assert c.update_persona() == p  # nothing given: nothing changes


def test_a_bad_patch_is_400_and_writes_nothing(http: httpx.Client) -> None:
    http.patch("/v1/persona", json={"name": "Before"}).raise_for_status()
    persona, before = http.get("/v1/persona").json(), digest(http)
    for body, where in [
        ({"name": None}, "name must be a string"),
        ({"name": "After", "goals": [5]}, "goals[0]"),  # one bad field: nothing applied
        ({"goals": "be good"}, "goals"),
        ({"traits": {"": "x"}}, "traits"),
        ({"id": "other"}, "id"),
        ({"colour": "red"}, "colour"),
        ([{"name": "x"}], "body"),
    ]:
        r = http.patch("/v1/persona", json=body)
        assert r.status_code == 400, (body, r.text)
        err = r.json()["error"]
        assert set(err) == {"code", "message", "details"} and err["code"] == "invalid"
        assert where in err["message"], (body, err["message"])
    r = http.patch("/v1/persona", content=b"{not json")
    assert r.status_code == 400 and "malformed JSON" in r.json()["error"]["message"]
    assert http.get("/v1/persona").json() == persona
    assert digest(http) == before


def test_concurrent_patches_to_different_fields_both_survive(daemon: DaemonProcess) -> None:
    daemon.once("put_persona", {"name": "start"})
    rounds = 40
    start = threading.Barrier(2)
    failures: list[BaseException] = []

    def patcher(patch: Any) -> None:
        try:
            with daemon.client() as c:
                start.wait()
                for i in range(rounds):
                    patch(c, i)
        except BaseException as exc:  # reported below, not lost in the thread
            failures.append(exc)

    threads = [
        threading.Thread(
            target=patcher,
            args=(lambda c, i: c.update_persona(name=f"name-{i}", traits={"a": str(i)}),),
        ),
        threading.Thread(
            target=patcher,
            args=(lambda c, i: c.update_persona(goals=[f"goal-{i}"], traits={"b": str(i)}),),
        ),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not failures, failures
    p = daemon.once("get_persona")
    last = str(rounds - 1)
    assert (p.name, p.goals, p.traits) == (f"name-{last}", [f"goal-{last}"], {"a": last, "b": last})


def test_the_async_client_has_both_verbs(daemon: DaemonProcess) -> None:
    async def go() -> None:
        async with AsyncClient(daemon.socket) as c:
            edge = await c.add_fact("Async", "uses", "asyncio")
            assert (edge.source, edge.target) == ("async", "asyncio")
            p = await c.update_persona(norms=["be brief"])
            assert p.norms == ["be brief"]
            with pytest.raises(InvalidInput):
                await c.update_persona(traits={"": "x"})
            with pytest.raises(InvalidInput):
                await c.add_fact("", "uses", "asyncio")

    asyncio.run(go())
