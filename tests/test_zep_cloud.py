"""The Zep Cloud mirror through the real zep-cloud SDK (API v4) against the strict local fake."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator

import pytest

from chrysalis import Memory, faults
from chrysalis.mirrors import MirrorError, assisted_retrieve
from chrysalis.mirrors.zep_cloud import ZepCloudMirror
from tests.fakes.zep_server import FakeZep

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
