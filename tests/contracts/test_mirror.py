"""The Mirror contract (chrysalis/mirrors/__init__.py `Mirror`), run against every kind.

Each test takes ``kind`` (``zep``: the zep-python SDK against Zep's v2 API; ``zep-cloud``: the
zep-cloud SDK against API v4), both through their real SDKs against the strict local fake of
Zep (tests/fakes/zep_server.py). What only one kind does (v2's sessions and role types, v4's
triples and idempotency keys) is tested in tests/test_zep.py and tests/test_zep_cloud.py.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from chrysalis import Memory
from chrysalis.mirrors import Mirror, MirrorError
from chrysalis.mirrors.zep import ZepMirror
from chrysalis.mirrors.zep_cloud import ZepCloudMirror
from chrysalis.store import faults
from chrysalis.sync import Sync
from tests.fakes.zep_server import FakeZep

KEY = "zk-contract-8e2b41"
Opener = Callable[..., Memory]


@dataclass
class Kind:
    name: str
    path: str  # the API's root under the fake's URL
    mirror: type[ZepMirror] | type[ZepCloudMirror]

    def messages(self, zep: FakeZep) -> list[dict[str, Any]]:
        """Every message the service holds, of any user."""
        return zep.messages() if self.name == "zep" else zep.thread_messages()

    def ids(self, zep: FakeZep) -> Counter[str]:
        return Counter(m["metadata"]["chrysalis_id"] for m in self.messages(zep))


KINDS = [Kind("zep", "", ZepMirror), Kind("zep-cloud", "/api/v4", ZepCloudMirror)]


@pytest.fixture(params=KINDS, ids=lambda k: k.name)
def kind(request: pytest.FixtureRequest) -> Kind:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def zep() -> Iterator[FakeZep]:
    with FakeZep(api_key=KEY) as fake:
        yield fake
        assert fake.problems == []  # every request was one the real server takes


@pytest.fixture
def mirror(kind: Kind, zep: FakeZep) -> Iterator[Callable[..., Mirror]]:
    """``mirror(memory, key=KEY, url=<the fake>, **options)``, closed after the test."""
    made: list[Mirror] = []

    def make(memory: Memory, key: str = KEY, url: str | None = None, **kw: Any) -> Mirror:
        made.append(kind.mirror(memory, url or zep.url + kind.path, key, **kw))
        return made[-1]

    yield make
    for m in made:
        m.close()


def test_beads_become_messages_once(
    open_memory: Opener, zep: FakeZep, kind: Kind, mirror: Callable[..., Mirror]
) -> None:
    m = open_memory("a")
    m.append_bead("hello there", id="b1", session_id="chat-1", role="user")
    m.append_bead("hi! how can I help?", id="b2", session_id="chat-1", role="assistant")
    m.append_bead("a note to self", id="b3", role="note")
    m.add_node(id="n1", type="thing")  # not a bead: not a message
    z = mirror(m)
    assert z.push()["ops"] == 3
    assert z.push()["ops"] == 0
    assert kind.ids(zep) == Counter({"b1": 1, "b2": 1, "b3": 1})
    by_id = {x["metadata"]["chrysalis_id"]: x for x in kind.messages(zep)}
    assert by_id["b1"]["content"] == "hello there"
    assert by_id["b2"]["metadata"]["chrysalis_origin"] == m.replica_id
    status = z.status()
    assert status["kind"] == kind.name and status["pending_ops"] == 0
    assert status["last_push"]["ok"] and status["consecutive_errors"] == 0


def test_each_replica_sends_only_its_own_beads(
    open_memory: Opener, zep: FakeZep, kind: Kind, mirror: Callable[..., Mirror], tmp_path: Path
) -> None:
    (tmp_path / "remote").mkdir()
    url = f"file://{tmp_path / 'remote'}"
    a, b = open_memory("a"), open_memory("b")
    za, zb = mirror(a, user_id="team"), mirror(b, user_id="team")
    for round_ in range(3):
        a.append_beads({"content": f"a{round_}-{i}", "id": f"a{round_}-{i}"} for i in range(5))
        b.append_beads({"content": f"b{round_}-{i}", "id": f"b{round_}-{i}"} for i in range(5))
        Sync(a, url).push(), Sync(b, url).push(), Sync(a, url).pull(), Sync(b, url).pull()
        za.push(), zb.push()  # each holds both replicas' beads, and sends only its own
    counts = kind.ids(zep)
    assert len(counts) == 30 and set(counts.values()) == {1}
    origins = {x["metadata"]["chrysalis_origin"] for x in kind.messages(zep)}
    assert origins == {a.replica_id, b.replica_id}


def test_a_crash_after_send_resends_nothing(
    open_memory: Opener,
    zep: FakeZep,
    kind: Kind,
    mirror: Callable[..., Mirror],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    m = open_memory("a")
    m.append_beads({"content": f"turn {i}", "id": f"t{i}", "session_id": "s"} for i in range(7))
    z = mirror(m, batch=3)

    def crash(point: str) -> None:
        if point == f"{kind.name}-after-send":
            raise SystemExit("killed")  # what SIGKILL leaves: sent, the cursor not moved

    monkeypatch.setattr(faults, "fault", crash)
    with pytest.raises(SystemExit):
        z.push()
    monkeypatch.undo()
    assert sum(kind.ids(zep).values()) == 3
    m.append_bead("after the crash", id="late", session_id="s")
    again = mirror(m, batch=3)  # as after a restart
    # zep finds the batch in flight there and sends the rest; zep-cloud sends it again with
    # the same idempotency key (Zep applies it once) and counts it
    assert again.push()["ops"] == {"zep": 5, "zep-cloud": 8}[kind.name]
    assert kind.ids(zep) == Counter({**{f"t{i}": 1 for i in range(7)}, "late": 1})
    m.forget("t1")  # from the batch in flight at the crash: still known as ours to take out
    assert again.push()["forgotten"] == 1
    assert "t1" not in kind.ids(zep)


def test_a_lost_reply_fails_the_push_and_the_next_sends_nothing_twice(
    open_memory: Opener, zep: FakeZep, kind: Kind, mirror: Callable[..., Mirror]
) -> None:
    m = open_memory("a")
    m.append_beads({"content": f"turn {i}", "id": f"t{i}", "session_id": "s"} for i in range(4))
    z = mirror(m)
    # the messages land, every answer is lost (the SDK's own retries too)
    route = "/memory" if kind.name == "zep" else "/messages"
    zep.fail(500, times=3, route=route, landed=True)
    with pytest.raises(MirrorError, match="HTTP 500"):
        z.push()
    assert z.status()["consecutive_errors"] == 1 and "HTTP 500" in z.status()["last_error"]
    zep._failures.clear()
    z.push()
    assert kind.ids(zep) == Counter({f"t{i}": 1 for i in range(4)})
    assert z.status()["consecutive_errors"] == 0


def test_forget_reaches_the_service_from_any_replica(
    open_memory: Opener, zep: FakeZep, kind: Kind, mirror: Callable[..., Mirror], tmp_path: Path
) -> None:
    (tmp_path / "remote").mkdir()
    url = f"file://{tmp_path / 'remote'}"
    a, b = open_memory("a"), open_memory("b")
    za, zb = mirror(a), mirror(b)
    a.append_bead("my pin is 9911", id="pin", session_id="a-only")
    a.append_bead("kept in the same session", id="kept", session_id="a-only")
    b.append_bead("b's code word is zebra", id="zebra", session_id="b-only")
    za.push(), zb.push()
    assert za.forget_state("zebra") == ("gone", f"this replica never sent it to {kind.name}")
    Sync(a, url).push(), Sync(b, url).push(), Sync(a, url).pull()
    a.forget("pin")  # a's own
    a.forget("zebra")  # b's, forgotten on a: b takes it out when it hears
    assert za.forget_state("pin")[0] == "pending"
    Sync(a, url).push(), Sync(b, url).pull()
    assert za.push()["forgotten"] == 1
    assert zb.push()["forgotten"] == 1
    assert za.push()["forgotten"] == zb.push()["forgotten"] == 0
    texts = [x["content"] for x in kind.messages(zep)]
    assert texts == ["kept in the same session"]
    assert za.forget_state("pin") == ("gone", f"erased from {kind.name}")
    assert zb.forget_state("zebra") == ("gone", f"erased from {kind.name}")
    for z in (za, zb):
        for hit in z.search("pin 9911 code word zebra", 10, 5.0):
            assert "9911" not in hit.text and "zebra" not in hit.text, hit


def test_a_fact_derived_from_a_forgotten_bead_goes_with_it(
    open_memory: Opener,
    zep: FakeZep,
    kind: Kind,
    mirror: Callable[..., Mirror],
    request: pytest.FixtureRequest,
) -> None:
    if kind.name == "zep-cloud":
        request.applymarker(
            pytest.mark.xfail(
                strict=True,
                reason="found by this suite, not fixed: Zep Cloud keeps the graph edge it "
                "derived from a deleted thread, and the mirror keeps the fact node it pulled "
                "(it records no episode to tie a fact to the bead it came from)",
            )
        )
    m = open_memory("a")
    m.append_bead("Bob prefers window seats", id="f", session_id="s")
    m.append_bead("other words", id="o", session_id="s")
    z = mirror(m)
    z.push()
    assert z.pull()["facts"] == 1
    m.forget("f")
    assert z.push()["forgotten"] == 1
    assert [n.name for n in m.all_nodes() if n.type == "fact"] == []  # nor in any replica
    assert [h.text for h in z.search("window seats", 5, 5.0)] == []


def test_pull_brings_each_derived_fact_once(
    open_memory: Opener, zep: FakeZep, mirror: Callable[..., Mirror]
) -> None:
    a, b = open_memory("a"), open_memory("b")
    a.append_bead("Alice prefers green tea in the morning", id="t1", session_id="s1")
    a.append_bead("nothing to derive here", id="t2", session_id="s1")
    za, zb = mirror(a), mirror(b)
    za.push()
    assert za.pull()["facts"] == 1
    assert za.pull()["facts"] == 0  # already here
    facts = [n for n in a.all_nodes() if n.type == "fact"]
    assert [f.name for f in facts] == ["Alice prefers green tea in the morning"]
    b.apply_ops(a.ops_since({}))
    assert zb.pull()["facts"] == 0  # the other replica has it through sync
    assert a.state_digest() == b.state_digest()


def test_search_answers_with_the_mirrors_signal(
    open_memory: Opener, zep: FakeZep, kind: Kind, mirror: Callable[..., Mirror]
) -> None:
    m = open_memory("a")
    m.append_beads(
        {"content": f"Bob prefers window seats on trip {i}", "id": f"w{i}", "session_id": "s"}
        for i in range(4)
    )
    z = mirror(m)
    z.push()
    hits = z.search("window seats", 2, 5.0)
    assert 1 <= len(hits) <= 2
    for hit in hits:
        assert "window seats" in hit.text
        assert hit.signals[kind.name] == hit.score > 0
        assert hit.provenance["source"] == "zep"
    assert z.status()["last_error"] is None


def test_the_api_key_is_never_shown_or_logged(
    open_memory: Opener,
    zep: FakeZep,
    kind: Kind,
    mirror: Callable[..., Mirror],
    caplog: pytest.LogCaptureFixture,
) -> None:
    m = open_memory("a")
    m.append_bead("x", id="x")
    caplog.set_level(logging.DEBUG)
    bad = mirror(m, key="wrong-" + KEY)
    with pytest.raises(MirrorError) as err:
        bad.push()
    assert "401" in str(err.value) and KEY not in str(err.value)
    zep.problems.clear()  # the 401 was the point
    down = mirror(m, url="http://127.0.0.1:9" + kind.path, timeout=1)
    with pytest.raises(MirrorError) as err:
        down.push()
    assert KEY not in str(err.value)
    text = caplog.text + repr(bad.status()) + repr(down.status())
    assert KEY not in text
    assert bad.status()["consecutive_errors"] == down.status()["consecutive_errors"] == 1
