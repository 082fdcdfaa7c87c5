"""`ChrysalisSession` under the OpenAI Agents SDK's own Runner (openai-agents, pinned in the
``integrations`` extra), against a real daemon: the model is the SDK's `ScriptedModel`
answering from the history it is given, so no network and no model."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from chrysalis import Client, InvalidInput, SecretRefused
from tests.daemon_process import DaemonProcess
from tests.lazy import lazy_module

if TYPE_CHECKING:
    import agents
    import agents.memory as agents_memory
    import agents.testing as agents_testing

    import chrysalis.integrations.openai_agents as integration
else:  # imported by the worker that runs these tests, not by every one that collects them
    agents = lazy_module("agents")
    agents_memory = lazy_module("agents.memory")
    agents_testing = lazy_module("agents.testing")
    integration = lazy_module("chrysalis.integrations.openai_agents")


def _offline() -> agents.RunConfig:
    return agents.RunConfig(tracing_disabled=True)  # the SDK would export traces to OpenAI


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    d = DaemonProcess(tmp_path_factory.mktemp("agents") / "data").start()
    yield d
    assert d.stop() == 0, d.output()
    d.close()


@pytest.fixture
def client(daemon: DaemonProcess) -> Iterator[Client]:
    with daemon.client() as c:
        yield c


_n = 0


def _session(daemon: DaemonProcess, name: str = "", **kw: Any) -> integration.ChrysalisSession:
    global _n
    _n += 1
    return integration.ChrysalisSession(name or f"chat-{_n}", socket=daemon.socket, **kw)


def _texts(items: Any) -> list[str]:
    """The words of each input item the model was given, whatever its shape."""
    out = []
    for item in items if isinstance(items, list) else [{"role": "user", "content": items}]:
        content = item.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out.append(" ".join(part.get("text", "") for part in content))
        else:
            out.append(json.dumps(item))
    return out


def _recalls_the_name(call: agents_testing.ModelCall) -> Any:
    """A model that knows only what its input says: it names the user if an earlier turn did."""
    said = " ".join(_texts(call.input))
    found = re.findall(r"(?:call me|my name is) (\w+)", said, re.I)
    return [
        agents_testing.assistant_message(
            f"You are {found[-1]}." if found else "I do not know your name."
        )
    ]


def test_the_runner_gives_the_model_the_earlier_turns(
    daemon: DaemonProcess, client: Client
) -> None:
    session = _session(daemon)
    model = agents_testing.ScriptedModel([agents_testing.ModelStep.respond(_recalls_the_name)] * 3)
    agent = agents.Agent(name="helper", instructions="Answer briefly.", model=model)

    async def chat() -> list[str]:
        said = []
        for turn in ("Hello, my name is Ingrid.", "What is my name?", "And again?"):
            result = await agents.Runner.run(agent, turn, session=session, run_config=_offline())
            said.append(result.final_output)
        return said

    assert asyncio.run(chat()) == ["You are Ingrid.", "You are Ingrid.", "You are Ingrid."]
    # the second call's input: the first turn, the reply to it, then the new question
    second = _texts(model.calls[1].input)
    assert second == ["Hello, my name is Ingrid.", "You are Ingrid.", "What is my name?"]
    assert len(model.calls[2].input) == 5
    history = asyncio.run(session.get_items())
    assert [item.get("role") for item in history] == ["user", "assistant"] * 3
    # in the memory: one session, the user's words as plain turns, replies as JSON items
    beads = client.last_beads(50, session_id=session.chrysalis_session)
    assert [b.role for b in beads] == ["user", "assistant"] * 3
    assert beads[0].content == "Hello, my name is Ingrid." and beads[0].tags == [integration.TAG]
    assert integration.JSON_TAG in beads[1].tags and json.loads(beads[1].content) == history[1]
    assert (
        "Ingrid"
        in client.recall("Ingrid", filters={"session_id": session.chrysalis_session}).items[0].text
    )
    session.close()


def test_tool_calls_and_their_outputs_come_back_exactly(daemon: DaemonProcess) -> None:
    @agents.function_tool
    def look_up_order(order_id: str) -> str:
        """The state of an order."""
        return f"order {order_id} shipped on Tuesday"

    session = _session(daemon)
    model = agents_testing.ScriptedModel(
        [
            [agents_testing.function_call("look_up_order", {"order_id": "A-77"}, call_id="call-1")],
            [agents_testing.assistant_message("It shipped on Tuesday.")],
            agents_testing.ModelStep.respond(
                lambda call: [agents_testing.assistant_message(" | ".join(_texts(call.input)))]
            ),
        ]
    )
    agent = agents.Agent(name="orders", model=model, tools=[look_up_order])

    async def chat() -> Any:
        await agents.Runner.run(
            agent, "Where is order A-77?", session=session, run_config=_offline()
        )
        return await agents.Runner.run(agent, "Thanks", session=session, run_config=_offline())

    last = asyncio.run(chat())
    history = asyncio.run(session.get_items())
    kinds = [item.get("type", "message") for item in history]
    assert kinds == [
        "message",
        "function_call",
        "function_call_output",
        "message",
        "message",
        "message",
    ]
    assert history[2]["output"] == "order A-77 shipped on Tuesday"  # type: ignore[typeddict-item]
    # what the third call saw is the stored history, item for item
    assert model.calls[2].input[:4] == history[:4]
    assert "order A-77 shipped on Tuesday" in last.final_output
    session.close()


def test_get_items_limit_pop_and_clear(daemon: DaemonProcess, client: Client) -> None:
    session = _session(daemon, session_settings=agents_memory.SessionSettings(limit=3))
    assert isinstance(session, agents_memory.Session)  # the SDK's runtime-checkable protocol
    items = [
        {"role": "user" if n % 2 == 0 else "assistant", "content": f"turn {n}"} for n in range(7)
    ]

    async def run() -> None:
        assert await session.get_items() == []
        assert await session.pop_item() is None
        await session.add_items(items[:4])
        await session.add_items(items[4:])
        assert await session.get_items() == items[4:]  # the settings' limit
        assert await session.get_items(limit=5) == items[2:]
        assert await session.get_items(limit=100) == items
        assert await session.get_items(limit=0) == []
        assert await session.pop_item() == items[6]
        assert await session.get_items(limit=100) == items[:6]
        await session.clear_session()
        assert await session.get_items(limit=100) == []
        assert await session.pop_item() is None

    # another tool's bead in the same session is not the SDK's history, and clear leaves it
    client.remember("a note from another tool", session_id=session.chrysalis_session)
    asyncio.run(run())
    assert [b.content for b in client.last_beads(10, session_id=session.chrysalis_session)] == [
        "a note from another tool"
    ]
    session.close()


def test_a_long_history_reads_back_whole_in_order(daemon: DaemonProcess) -> None:
    """Past the daemon's page of 1000 beads, and with 500 items stamped alike per commit."""
    session = _session(daemon)
    items = [{"role": "user", "content": f"line {n}"} for n in range(1203)]
    asyncio.run(session.add_items(items))
    assert asyncio.run(session.get_items()) == items
    assert asyncio.run(session.get_items(limit=1001)) == items[-1001:]
    session.close()


def test_sessions_are_apart_and_odd_ids_are_kept_apart(daemon: DaemonProcess) -> None:
    names = ["a b", "a_b", "ünïcødé 会话", "x" * 300, "x" * 301, "ok-id.1@x:y", "'; DROP --"]
    sessions = [_session(daemon, name) for name in names]
    for n, s in enumerate(sessions):
        asyncio.run(s.add_items([{"role": "user", "content": f"only in {n}"}]))
    for n, s in enumerate(sessions):
        assert asyncio.run(s.get_items()) == [{"role": "user", "content": f"only in {n}"}]
    assert (
        integration.chrysalis_session_id("ok-id.1@x:y") == "ok-id.1@x:y"
    )  # a valid id is kept as is
    assert len({s.chrysalis_session for s in sessions}) == len(names)
    for bad in ("", None, "\ud800"):
        with pytest.raises(InvalidInput):
            integration.ChrysalisSession(bad, socket=sessions[0].client.socket)  # type: ignore[arg-type]
    for s in sessions:
        s.close()


def test_credentials_are_redacted_and_json_items_stay_whole(
    daemon: DaemonProcess, caplog: pytest.LogCaptureFixture
) -> None:
    session = _session(daemon)
    key = "sk-proj-" + "Zq3" * 14
    tricky = 'key=token: abcd1234efgh5678ijkl&x="y"'  # a match that runs across JSON quotes
    output = {"type": "function_call_output", "call_id": "c1", "output": f"env: {tricky}; {key}"}
    with caplog.at_level(logging.WARNING, logger="chrysalis.integrations"):
        asyncio.run(session.add_items([{"role": "user", "content": f"my key is {key}"}, output]))
    history = asyncio.run(session.get_items())
    assert key not in json.dumps(history) and "abcd1234efgh5678ijkl" not in json.dumps(history)
    assert history[0]["content"] == "my key is [REDACTED:openai-key]"  # type: ignore[typeddict-item]
    assert history[1]["call_id"] == "c1" and "[REDACTED:" in history[1]["output"]  # type: ignore[typeddict-item]
    assert "redacted" in caplog.text and key not in caplog.text
    # refuse: nothing of the call is stored
    strict = _session(daemon, secrets="refuse")
    with pytest.raises(SecretRefused):
        asyncio.run(strict.add_items([{"role": "user", "content": "fine"}, output]))
    with pytest.raises(SecretRefused):
        asyncio.run(strict.add_items([{"role": "user", "content": f"token {key}"}]))
    assert asyncio.run(strict.get_items()) == []
    with pytest.raises(InvalidInput):
        asyncio.run(strict.add_items([{"role": "user", "content": "ok"}, {"x": float("nan")}]))
    with pytest.raises(InvalidInput):
        asyncio.run(strict.add_items(["not a dict"]))  # type: ignore[list-item]
    assert asyncio.run(strict.get_items()) == []
    session.close()
    strict.close()


def test_concurrent_writers_lose_nothing(daemon: DaemonProcess) -> None:
    session = _session(daemon)

    async def write(n: int) -> None:
        for m in range(5):
            await session.add_items([{"role": "user", "content": f"writer {n} line {m}"}])

    async def run() -> None:
        await asyncio.gather(*(write(n) for n in range(6)))

    asyncio.run(run())
    history = asyncio.run(session.get_items())
    assert sorted(i["content"] for i in history) == sorted(  # type: ignore[typeddict-item]
        f"writer {n} line {m}" for n in range(6) for m in range(5)
    )
    for n in range(6):  # each writer's lines in its own order
        mine = [i["content"] for i in history if i["content"].startswith(f"writer {n} ")]  # type: ignore[typeddict-item]
        assert mine == [f"writer {n} line {m}" for m in range(5)]
    session.close()


def test_a_session_on_a_named_memory_is_not_in_the_default_one(
    daemon: DaemonProcess, client: Client, tmp_path: Path
) -> None:
    client.create_memory("agents-b")
    mine = _session(daemon, "shared-name")
    theirs = integration.ChrysalisSession("shared-name", socket=daemon.socket, memory="agents-b")
    asyncio.run(mine.add_items([{"role": "user", "content": "default memory"}]))
    asyncio.run(theirs.add_items([{"role": "user", "content": "memory b"}]))
    assert asyncio.run(mine.get_items()) == [{"role": "user", "content": "default memory"}]
    assert asyncio.run(theirs.get_items()) == [{"role": "user", "content": "memory b"}]
    mine.close()
    theirs.close()
