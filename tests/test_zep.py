"""The Zep mirror through the real zep-python SDK against a strict local fake of Zep's API:
what only the v2 mirror does (sessions, role types, marked forgets). What every mirror does
is in tests/contracts/test_mirror.py."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from chrysalis import Memory
from chrysalis.mirrors import MirrorError, assisted_retrieve
from chrysalis.mirrors.zep import ZepMirror
from chrysalis.sync import Sync
from tests.fakes.zep_server import FakeZep

KEY = "zk-secret-3f9a7c"
Opener = Callable[..., Memory]


@pytest.fixture
def zep() -> Iterator[FakeZep]:
    with FakeZep(api_key=KEY) as fake:
        yield fake
        assert fake.problems == []  # every request was one the real server takes


@pytest.fixture
def zm() -> Iterator[Callable[..., ZepMirror]]:
    """``zm(memory, url, key, ...)``: a ZepMirror, closed after the test."""
    made: list[ZepMirror] = []

    def make(*args: object, **kw: object) -> ZepMirror:
        made.append(ZepMirror(*args, **kw))  # type: ignore[arg-type]
        return made[-1]

    yield make
    for m in made:
        m.close()


def ids_in_zep(zep: FakeZep) -> Counter[str]:
    return Counter(m["metadata"]["chrysalis_id"] for m in zep.messages())


def test_beads_become_session_messages_once(
    open_memory: Opener, zep: FakeZep, zm: Callable[..., ZepMirror]
) -> None:
    m = open_memory("a")
    m.append_bead("hello there", id="b1", session_id="chat-1", role="user")
    m.append_bead("hi! how can I help?", id="b2", session_id="chat-1", role="assistant")
    m.append_bead("a note to self", id="b3", role="note")
    m.add_node(id="n1", type="thing")  # not a bead: not sent
    mirror = zm(m, zep.url, KEY, user_id="team-memory")
    assert mirror.push()["ops"] == 3
    assert mirror.push()["ops"] == 0
    assert set(zep.users) == {"team-memory"}
    assert set(zep.sessions) == {"team-memory-chat-1", "team-memory-default"}
    first, second = zep.sessions["team-memory-chat-1"]["messages"]
    assert (first["role_type"], second["role_type"]) == ("user", "assistant")
    assert first["content"] == "hello there"
    meta = first["metadata"]
    assert meta["chrysalis_id"] == "b1" and meta["chrysalis_origin"] == m.replica_id
    assert meta["chrysalis_op"] == f"{m.replica_id}:1" and isinstance(meta["chrysalis_hlc"], str)
    note = zep.sessions["team-memory-default"]["messages"][0]
    assert note["role_type"] == "norole"
    status = mirror.status()
    assert status["pending_ops"] == 0 and status["last_push"]["ok"]
    assert KEY not in repr(status)
    assert ("POST", "/api/v2/sessions/team-memory-chat-1/memory") in zep.requests


def test_a_lost_reply_is_recognized_and_errors_are_retried(
    open_memory: Opener, zep: FakeZep, zm: Callable[..., ZepMirror]
) -> None:
    m = open_memory("a")
    m.append_beads({"content": f"turn {i}", "id": f"t{i}"} for i in range(4))
    mirror = zm(m, zep.url, KEY)
    zep.fail(500, route="/memory", landed=True)  # the messages land; the answer is lost
    with pytest.raises(MirrorError, match="HTTP 500"):
        mirror.push()
    assert mirror.status()["consecutive_errors"] == 1
    zep.fail(429, retry_after=0.1, route="/messages")  # the SDK honours Retry-After
    zep.fail(503, route="/messages")
    assert mirror.push()["ops"] == 0  # all four were there already
    assert ids_in_zep(zep) == Counter({f"t{i}": 1 for i in range(4)})
    assert mirror.status()["consecutive_errors"] == 0


def test_forget_reaches_zep(
    open_memory: Opener, zep: FakeZep, zm: Callable[..., ZepMirror], tmp_path: Path
) -> None:
    (tmp_path / "remote").mkdir()
    url = f"file://{tmp_path / 'remote'}"
    a, b = open_memory("a"), open_memory("b")
    za, zb = zm(a, zep.url, KEY), zm(b, zep.url, KEY)
    a.append_bead("my secret is 4471", id="secret", session_id="solo")
    a.append_bead("kept in the same session", id="kept", session_id="solo")
    a.append_bead("a's line in a shared chat", id="a-shared", session_id="shared")
    b.append_bead("b's line that a will forget", id="b-shared", session_id="shared")
    za.push()
    zb.push()
    Sync(a, url).push()
    Sync(b, url).push()
    Sync(a, url).pull()
    a.forget("secret")  # its session holds only a's messages: Zep loses the text
    a.forget("b-shared")  # forgotten on a, pushed by b: b takes it out when it hears
    Sync(a, url).push()
    Sync(b, url).pull()
    assert za.push()["forgotten"] == 1
    assert zb.push()["forgotten"] == 1
    texts = [m["content"] for m in zep.messages()]
    assert "my secret is 4471" not in texts and "kept in the same session" in texts
    assert ids_in_zep(zep)["kept"] == 1
    # the shared session holds a's message too: Zep's v2 API cannot delete one message
    shared = {
        m["metadata"]["chrysalis_id"]: m for m in zep.sessions["chrysalis-shared"]["messages"]
    }
    assert shared["b-shared"]["metadata"]["chrysalis_forgotten"] is True
    assert zb.status()["forgotten_kept_by_zep"] == 1 and za.status()["forgotten_kept_by_zep"] == 0
    hits = zb.search("line that a will forget", 5, 1.0)
    assert "b-shared" not in {h.id for h in hits}


def test_facts_come_back_as_kg_nodes_once(
    open_memory: Opener, zep: FakeZep, zm: Callable[..., ZepMirror], tmp_path: Path
) -> None:
    a, b = open_memory("a"), open_memory("b")
    a.append_bead("Alice prefers green tea in the morning", id="t1", session_id="s1")
    a.append_bead("nothing to derive here", id="t2", session_id="s1")
    za, zb = zm(a, zep.url, KEY), zm(b, zep.url, KEY)
    za.push()
    assert za.pull()["facts"] == 1
    assert za.pull()["facts"] == 0  # already here
    facts = [n for n in a.all_nodes() if n.type == "fact"]
    assert [f.name for f in facts] == ["Alice prefers green tea in the morning"]
    assert (
        facts[0].metadata["source"] == "zep" and facts[0].metadata["zep_session"] == "chrysalis-s1"
    )
    edges = [e for e in a.all_edges() if e.predicate == "zep_fact"]
    assert [(e.source, e.target) for e in edges] == [("zep-user-chrysalis", facts[0].id)]
    b.apply_ops(a.ops_since({}))
    assert zb.pull()["facts"] == 0  # the other replica has them through sync
    assert a.state_digest() == b.state_digest()


def test_assisted_retrieval_up_down_and_slow(
    open_memory: Opener, zep: FakeZep, zm: Callable[..., ZepMirror]
) -> None:
    a, other = open_memory("a"), open_memory("other")
    other.append_bead("the launch window opens on tuesday", id="remote-only", session_id="x")
    zm(other, zep.url, KEY).push()  # in Zep, not in a's memory
    a.append_bead("an unrelated local note", id="local")
    mirror = zm(a, zep.url, KEY)
    up = assisted_retrieve(a, mirror, "when does the launch window open", k=5)
    zep_items = [i for i in up.items if i.provenance.get("source") == "zep"]
    assert [(i.id, i.text) for i in zep_items] == [
        ("remote-only", "the launch window opens on tuesday")
    ]  # not synced here yet: Zep's copy, with its origin
    assert zep_items[0].provenance["origin_replica"] == other.replica_id
    assert any("remote hits" in n for n in up.notes)
    strong = assisted_retrieve(a, mirror, "unrelated local note", k=1, weak_below=0.1)
    assert all(i.provenance.get("source") != "zep" for i in strong.items)  # not asked
    local_ids = [i.id for i in a.retrieve("launch window", k=5).items]
    zep.fail(500, times=5, route="/search")
    down = assisted_retrieve(a, mirror, "launch window", k=5)
    assert [i.id for i in down.items] == local_ids
    assert any("search failed" in n for n in down.notes)
    assert "HTTP 500" in mirror.status()["last_error"]
    zep.delay, zep.delay_routes = 2.0, ("/search",)
    started = time.perf_counter()
    slow = assisted_retrieve(a, mirror, "launch window", k=5, budget_s=0.3)
    assert time.perf_counter() - started < 0.3 + 0.25
    assert [i.id for i in slow.items] == local_ids
    assert any("300 ms budget" in n for n in slow.notes)
