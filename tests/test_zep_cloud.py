"""The Zep Cloud mirror through the real zep-cloud SDK (API v4) against the strict local fake."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator

import pytest

from chrysalis import Memory
from chrysalis.core.graph_ids import derived_node_id, edge_id, graph_key
from chrysalis.mirrors import MirrorError, assisted_retrieve
from chrysalis.mirrors.zep_cloud import ZepCloudMirror
from chrysalis.store import faults
from tests.fakes.zep_server import FakeZep


def fact(place: str) -> str:
    """The id of the extracted fact "user lives_in <place>"."""
    key = graph_key(SECRET)
    return edge_id(derived_node_id("user", key), "lives_in", derived_node_id(place, key))


SECRET = b"zep cloud graph secret"  # the memories' graph key: their entity ids are known


KEY = "zc-secret-5d1e"
Opener = Callable[..., Memory]
Make = Callable[..., ZepCloudMirror]


@pytest.fixture
def zep() -> Iterator[FakeZep]:
    with FakeZep(api_key=KEY) as fake:
        yield fake
        assert fake.problems == []


@pytest.fixture
def zc(zep: FakeZep) -> Iterator[Make]:
    made: list[ZepCloudMirror] = []

    def make(memory: Memory, **kw: object) -> ZepCloudMirror:
        made.append(ZepCloudMirror(memory, zep.url + "/api/v4", KEY, **kw))  # type: ignore[arg-type]
        return made[-1]

    yield make
    for m in made:
        m.close()


def in_zep(zep: FakeZep) -> Counter[str]:
    return Counter(m["metadata"]["chrysalis_id"] for m in zep.thread_messages())


def test_beads_and_edges_go_once(open_memory: Opener, zep: FakeZep, zc: Make) -> None:
    m = open_memory("a")
    m.append_bead("hello", id="b1", session_id="chat", role="user")
    m.append_bead("hi there", id="b2", session_id="chat", role="assistant")
    m.append_bead("a note", id="b3", role="note")
    m.add_node(id="ada", type="person", name="Ada")
    m.add_node(id="acme", type="company", name="Acme")
    m.add_edge("ada", "acme", "works_at")
    mirror = zc(m, user_id="team")
    assert mirror.push()["ops"] == 4
    assert mirror.push()["ops"] == 0
    assert [u["user_id"] for u in zep.v4_users.values()] == ["team"]
    assert len(zep.threads) == 2  # this replica's thread per bead session
    assert in_zep(zep) == Counter({"b1": 1, "b2": 1, "b3": 1})
    roles = {m["metadata"]["chrysalis_id"]: m["role"] for m in zep.thread_messages()}
    assert roles == {"b1": "user", "b2": "assistant", "b3": "user"}
    (edge,) = zep.edges.values()
    assert (edge["fact"], edge["name"]) == ("Ada works at Acme", "WORKS_AT")
    assert edge["attributes"] == {"chrysalis_edge": m.all_edges()[0].id}
    # a second replica of the same memory finds the user instead of making another
    other = open_memory("b")
    other.append_bead("from b", id="x1")
    zc(other, user_id="team").push()
    assert len(zep.v4_users) == 1


def test_crash_and_lost_reply_send_nothing_twice(
    open_memory: Opener, zep: FakeZep, zc: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = open_memory("a")
    m.append_beads({"content": f"turn {i}", "id": f"t{i}", "session_id": "s"} for i in range(5))
    mirror = zc(m, batch=2)

    def crash(point: str) -> None:
        if point == "zep-cloud-after-send":
            raise SystemExit("killed")

    monkeypatch.setattr(faults, "fault", crash)
    with pytest.raises(SystemExit):
        mirror.push()
    monkeypatch.undo()
    # the resend lands but every answer is lost, the SDK's own retries included
    zep.fail(500, times=3, route="/messages", landed=True)
    with pytest.raises(MirrorError, match="HTTP 500"):
        zc(m, batch=2).push()
    zep.fail(500, route="/messages", landed=True)  # once: the SDK retries with the same key
    assert zc(m, batch=2).push()["ops"] >= 3  # same keys: Zep applies each batch once
    assert in_zep(zep) == Counter({f"t{i}": 1 for i in range(5)})


def test_forget_rebuilds_the_thread_without_it(open_memory: Opener, zep: FakeZep, zc: Make) -> None:
    m = open_memory("a")
    m.append_bead("my pin is 9911", id="pin", session_id="s")
    m.append_bead("keep this one", id="keep", session_id="s")
    mirror = zc(m)
    mirror.push()
    m.forget("pin")
    assert mirror.push()["forgotten"] == 1
    texts = [x["content"] for x in zep.thread_messages()]
    assert texts == ["keep this one"]
    assert len(zep.threads) == 1


def test_facts_come_back_and_are_not_echoed(open_memory: Opener, zep: FakeZep, zc: Make) -> None:
    m = open_memory("a")
    m.append_bead("Bob prefers window seats", id="b", session_id="trip")
    mirror = zc(m)
    mirror.push()
    assert mirror.pull()["facts"] == 1 and mirror.pull()["facts"] == 0
    facts = [n for n in m.all_nodes() if n.type == "fact"]
    assert [f.name for f in facts] == ["Bob prefers window seats"]
    before = len(zep.edges)
    mirror.push()  # the zep_fact edge made by the pull is not sent back as a triple
    assert len(zep.edges) == before


def test_graph_search_assists_within_the_budget(
    open_memory: Opener, zep: FakeZep, zc: Make
) -> None:
    m = open_memory("a")
    m.add_node(id="ada", type="person", name="Ada")
    m.add_node(id="acme", type="company", name="Acme")
    m.add_edge("ada", "acme", "works_at")
    m.append_bead("Ada likes strong tea", id="tea")  # Zep derives a fact from it
    mirror = zc(m)
    mirror.push()
    up = assisted_retrieve(m, mirror, "where does Ada work", k=5)
    ours = next(i for i in up.items if i.kind == "edge" and i.id == m.all_edges()[0].id)
    assert ours.signals["zep-cloud"] > 0  # Zep found our own triple: it adds to our item
    derived = assisted_retrieve(m, mirror, "what does Ada like to drink", k=5)
    zep_only = [i for i in derived.items if i.provenance.get("source") == "zep"]
    assert [i.text for i in zep_only] == ["Ada likes strong tea"]
    zep.delay, zep.delay_routes = 2.0, ("/search",)
    started = time.perf_counter()
    slow = assisted_retrieve(m, mirror, "where does Ada work", k=5, budget_s=0.3)
    assert time.perf_counter() - started < 0.55
    assert any("budget" in n for n in slow.notes)
    assert KEY not in repr(mirror.status())


# ---- fact triples carry their validity ------------------------------------------------------

T = 1_700_000_000.0  # 2023-11-14T22:13:20Z


def sent(zep: FakeZep, edge_id: str) -> list[dict[str, object]]:
    """The triples sent for one of our edges, in the order Zep got them."""
    return [e for e in zep.edges.values() if e["attributes"].get("chrysalis_edge") == edge_id]


def test_triples_carry_validity_and_a_supersede_goes_again(
    open_memory: Opener, zep: FakeZep, zc: Make
) -> None:
    m = open_memory("a", extractor="rules", graph_secret=SECRET)
    m.append_bead("I live in Lisbon.", id="lis", ts=T)
    assert m.wait_learned(10)
    mirror = zc(m)
    mirror.push()
    lisbon = fact("lisbon")
    porto = fact("porto")
    (first,) = sent(zep, lisbon)
    assert (first["valid_at"], first["invalid_at"]) == ("2023-11-14T22:13:20Z", None)
    assert first["name"] == "LIVES_IN"
    m.append_bead("I moved to Porto.", id="por", ts=T + 3600)
    assert m.wait_learned(10)
    mirror.push()
    # the supersede (an op setting Lisbon's invalid_at) sends Lisbon again, with its end
    assert [(e["valid_at"], e["invalid_at"]) for e in sent(zep, lisbon)] == [
        ("2023-11-14T22:13:20Z", None),
        ("2023-11-14T22:13:20Z", "2023-11-14T23:13:20Z"),
    ]
    assert [(e["valid_at"], e["invalid_at"]) for e in sent(zep, porto)] == [
        ("2023-11-14T23:13:20Z", None)
    ]
    before = len(zep.edges)
    assert mirror.push()["ops"] == 0 and len(zep.edges) == before


def test_late_learned_facts_go_with_their_resolved_end(
    open_memory: Opener, zep: FakeZep, zc: Make
) -> None:
    m = open_memory("a", extractor="rules", graph_secret=SECRET)
    m.append_bead("I moved to Porto.", id="por", ts=T + 3600)
    m.append_bead("I live in Lisbon.", id="lis", ts=T)  # said before, learned after
    assert m.wait_learned(10)
    zc(m).push()
    lisbon = sent(zep, fact("lisbon"))
    assert lisbon and all(e["invalid_at"] == "2023-11-14T23:13:20Z" for e in lisbon)
    assert sent(zep, fact("porto"))[-1]["invalid_at"] is None


def test_a_persons_edge_goes_with_its_stated_validity(
    open_memory: Opener, zep: FakeZep, zc: Make
) -> None:
    m = open_memory("a")
    edge = m.add_fact("Ada", "works_at", "Acme", valid_at=T, invalid_at=T + 86_400)
    zc(m).push()
    (out,) = sent(zep, edge.id)
    assert (out["valid_at"], out["invalid_at"]) == ("2023-11-14T22:13:20Z", "2023-11-15T22:13:20Z")


def test_only_this_replicas_edges_go_out(open_memory: Opener, zep: FakeZep, zc: Make) -> None:
    a = open_memory("a", replica_id="ra", extractor="rules", graph_secret=SECRET)
    b = open_memory("b", replica_id="rb", extractor="rules", graph_secret=SECRET)
    a.append_bead("I live in Lisbon.", id="lis", ts=T)
    a.append_bead("I moved to Porto.", id="por", ts=T + 3600)
    assert a.wait_learned(10)
    b.apply_ops(a.ops_since(b.version_vector()))
    assert b.wait_learned(10)
    assert len(b.all_edges()) == 2
    zc(b, user_id="team").push()
    assert zep.edges == {}  # A's facts are A's to send
    zc(a, user_id="team").push()
    assert {e["attributes"]["chrysalis_edge"] for e in zep.edges.values()} == {
        fact("lisbon"),
        fact("porto"),
    }


def test_the_fake_refuses_validity_that_is_not_iso_8601(zep: FakeZep) -> None:
    import json
    import urllib.error
    import urllib.request

    def post(path: str, body: dict[str, object], key: str) -> int:
        request = urllib.request.Request(
            zep.url + "/api/v4/" + path,
            data=json.dumps(body).encode(),
            headers={
                "Authorization": f"Api-Key {KEY}",
                "Content-Type": "application/json",
                "Idempotency-Key": key,
            },
        )
        try:
            with urllib.request.urlopen(request) as reply:
                return int(reply.status)
        except urllib.error.HTTPError as exc:
            return exc.code

    assert post("users", {"user_id": "u"}, "k0") == 201
    (user,) = zep.v4_users
    triple: dict[str, object] = {"fact": "a b c", "fact_name": "B", "source_node": {"name": "a"},
                                 "target_node": {"name": "c"}}  # fmt: skip
    bads: list[dict[str, object]] = [
        {"valid_at": T},  # epoch seconds
        {"invalid_at": "yesterday"},
        {"valid_at": "2024-01-01T00:00:00"},  # no zone
        {"valid_at": "2024-01-02T00:00:00Z", "invalid_at": "2024-01-01T00:00:00Z"},
    ]
    for i, bad in enumerate(bads):
        assert post(f"graphs/{user}/edges", {"edges": [{**triple, **bad}]}, f"k{i + 1}") == 400
    assert len(zep.problems) == 4
    zep.problems.clear()
