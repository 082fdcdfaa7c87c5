"""`chrysalis mcp` end to end: the daemon and the MCP server as subprocesses, spoken to with the
official MCP SDK's stdio client."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.daemon_process import DaemonProcess, DaemonThread

ROOT = Path(__file__).parents[1]

TOOLS = {
    "remember", "recall", "context", "add_fact", "forget", "forget_where", "get_persona", "update_persona",
    "list_skills", "get_skill", "put_skill", "memory_status",
}  # fmt: skip


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[DaemonProcess]:
    d = DaemonThread(tmp_path / "data").start()
    yield d
    d.close()


async def session_run(socket: Path, steps: Any, *args: str) -> Any:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "chrysalisd", "mcp", *args],
        # This tree's chrysalis and chrysalisd, not whichever the venv installed.
        env={
            "CHRYSALIS_SOCKET": str(socket),
            "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "daemon")]),
        },
    )
    with open(Path(socket).parent / "mcp.err", "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await asyncio.wait_for(session.initialize(), 30)
            return await steps(session)


def payload(result: Any) -> Any:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        data = result.structured_content
        return data.get("result", data) if set(data) == {"result"} else data
    return json.loads(result.content[0].text)


def test_mcp_remember_then_recall(daemon: DaemonProcess) -> None:
    async def steps(session: Any) -> dict[str, Any]:
        tools = await session.list_tools()
        out: dict[str, Any] = {"tools": {t.name: t for t in tools.tools}}
        out["remembered"] = payload(
            await session.call_tool(
                "remember",
                {"content": "The user's cat is called Miso and hates thunder",
                 "session_id": "chat-7", "tags": ["pets"], "importance": 0.8},
            )
        )  # fmt: skip
        out["plain"] = payload(  # no importance given: the daemon judges one
            await session.call_tool("remember", {"content": "it is what it is"})
        )
        out["recalled"] = payload(
            await session.call_tool("recall", {"query": "what is the cat called", "k": 3})
        )
        out["fact"] = payload(
            await session.call_tool(
                "add_fact", {"subject": "Miso", "predicate": "is_a", "object": "cat"}
            )
        )
        out["persona"] = payload(
            await session.call_tool("update_persona", {"goals": ["look after the user's pets"]})
        )
        out["skill"] = payload(
            await session.call_tool("put_skill", {"id": "feed-cat", "name": "Feed the cat"})
        )
        out["skills"] = payload(await session.call_tool("list_skills", {}))
        out["status"] = payload(await session.call_tool("memory_status", {}))
        out["missing"] = await session.call_tool("forget", {"id": "no-such-bead"})
        out["bad"] = await session.call_tool("recall", {"query": "x", "k": 0})
        return out

    out = asyncio.run(session_run(daemon.socket, steps))
    assert set(out["tools"]) == TOOLS
    for tool in out["tools"].values():
        assert tool.description and tool.input_schema["type"] == "object"
    assert "query" in out["tools"]["recall"].input_schema["properties"]
    bead_id = out["remembered"]["id"]
    assert out["remembered"]["importance"] == 0.8
    assert out["plain"]["importance"] == 0.1  # stop words only: nothing new
    top = out["recalled"]["items"][0]
    assert top["id"] == bead_id and "Miso" in top["text"]
    assert top["provenance"]["origin_replica"] == out["status"]["replica_id"]
    assert top["signals"]  # why it matched
    assert out["fact"]["source"] == "miso" and out["fact"]["target"] == "cat"
    assert out["persona"]["goals"] == ["look after the user's pets"]
    assert [s["id"] for s in out["skills"]] == ["feed-cat"]
    assert out["status"]["counts"]["beads"] == 2
    assert out["missing"].is_error and "not_found" in out["missing"].content[0].text
    assert out["bad"].is_error  # k=0 breaks the schema: a tool error, not a crash
    assert daemon.once("get_bead", bead_id).session_id == "chat-7"
    assert daemon.once("get_bead", bead_id).role == "user"  # the one default role


def test_mcp_says_plainly_when_the_daemon_is_down(tmp_path: Path) -> None:
    socket = tmp_path / "nobody.sock"

    async def steps(session: Any) -> Any:
        first = await session.call_tool("recall", {"query": "anything"})
        second = await session.call_tool("memory_status", {})  # the server is still there
        return first, second

    first, second = asyncio.run(session_run(socket, steps))
    assert first.is_error and second.is_error
    text = first.content[0].text
    assert "not running" in text and "chrysalis daemon" in text


def test_mcp_add_fact_is_one_request(daemon: DaemonProcess) -> None:
    async def steps(session: Any) -> dict[str, Any]:
        before = daemon.request_counts()
        args = {"subject": "Miso", "predicate": "is_a", "object": "Cat", "evidence": ["b-1"]}
        fact = payload(await session.call_tool("add_fact", args))
        return {"fact": fact, "requests": daemon.requests_since(before)}

    out = asyncio.run(session_run(daemon.socket, steps))
    assert out["requests"] == {("POST", "/v1/kg/facts", 201): 1}
    fact = out["fact"]
    assert fact == {"edge": fact["edge"], "source": "miso", "target": "cat", "predicate": "is_a"}
    assert daemon.once("get_edge", fact["edge"]).evidence == ["b-1"]


def test_mcp_update_persona_is_one_patch(daemon: DaemonProcess) -> None:
    daemon.once("put_persona", {"name": "Ada", "goals": ["ship"], "traits": {"tone": "dry"}})

    async def steps(session: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        before = daemon.request_counts()
        args = {"norms": ["be kind"], "traits": {"tone": None, "pace": "calm"}}
        out["persona"] = payload(await session.call_tool("update_persona", args))
        out["requests"] = daemon.requests_since(before)
        before = daemon.request_counts()
        out["bad"] = await session.call_tool("update_persona", {"traits": {"": "x"}})
        out["bad requests"] = daemon.requests_since(before)
        return out

    out = asyncio.run(session_run(daemon.socket, steps))
    assert out["requests"] == {("PATCH", "/v1/persona", 200): 1}
    persona = out["persona"]
    assert (persona["name"], persona["goals"], persona["norms"]) == ("Ada", ["ship"], ["be kind"])
    assert persona["traits"] == {"pace": "calm"}  # merged key by key; "tone" deleted
    assert out["bad requests"] == {("PATCH", "/v1/persona", 400): 1}
    assert out["bad"].is_error and "invalid" in out["bad"].content[0].text
    assert daemon.once("get_persona").model_dump() == persona


def test_mcp_forget_where_previews_then_forgets_exactly_what_it_saw(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    with daemon.client() as c:
        chat = [c.remember(t, session_id="chat-9").id for t in ("hello", "my pin is 4321")]
        other = c.remember("a note in another chat", session_id="chat-1").id
    doc = tmp_path / "notes.md"
    doc.write_text("# Notes\n\nthe spare key is under the mat\n")
    daemon.once("ingest", path=str(doc))

    async def steps(session: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        call = session.call_tool
        out["preview"] = payload(await call("forget_where", {"session_id": "chat-9"}))
        out["unconfirmed"] = await call("forget_where", {"session_id": "chat-9", "dry_run": False})
        digest = out["preview"]["expect_digest"]
        with daemon.client() as c:  # another client writes a matching memory meanwhile
            late = c.remember("written after the preview", session_id="chat-9").id
        out["wrong"] = await call(
            "forget_where", {"session_id": "chat-9", "dry_run": False, "confirm_digest": digest}
        )
        with daemon.client() as c:
            out["late_kept"] = c.get_bead(late).id == late
            c.forget(late)
        out["done"] = payload(
            await call("forget_where", {"session_id": "chat-9", "dry_run": False,
                                        "confirm_digest": digest})
        )  # fmt: skip
        out["query"] = payload(await call("forget_where", {"query": "spare key"}))
        seen = payload(await call("forget_where", {"path": str(doc)}))
        out["path"] = payload(
            await call("forget_where", {"path": str(doc), "dry_run": False,
                                        "confirm_digest": seen["expect_digest"]})
        )  # fmt: skip
        out["empty"] = await call("forget_where", {})
        return out

    out = asyncio.run(session_run(daemon.socket, steps))
    preview = out["preview"]
    assert preview["matched"] == 2 and [b["id"] for b in preview["beads"]] == chat
    assert f"confirm_digest={preview['expect_digest']}" in preview["to_forget"]
    assert out["unconfirmed"].is_error and "confirm_digest" in out["unconfirmed"].content[0].text
    assert out["wrong"].is_error and "selection_changed" in out["wrong"].content[0].text
    assert out["late_kept"]  # the unseen memory was not forgotten
    assert out["done"]["forgotten"] == 2 and out["done"]["ids"] == chat
    assert out["query"]["matched"] == 1 and "spare key" in out["query"]["beads"][0]["preview"]
    assert out["path"]["forgotten"] == 1
    assert out["empty"].is_error and "empty selector" in out["empty"].content[0].text
    with daemon.client() as c:
        assert c.get_bead(other).session_id == "chat-1"
        assert c.forget_where(session_id="chat-9")["matched"] == 0


def test_mcp_works_in_its_memory_and_reads_the_ones_it_is_given(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        c.create_memory("coding")
        c.create_memory("team")
        c.remember("the personal note about the blue umbrella", id="personal")
    with daemon.client(memory="team") as team:
        team.remember("the team decided the umbrella stand is blue", id="teamwide")

    async def steps(session: Any) -> dict[str, Any]:
        wrote = payload(await session.call_tool("remember", {"content": "a blue umbrella bug"}))
        found = payload(await session.call_tool("recall", {"query": "blue umbrella", "k": 10}))
        return {"wrote": wrote, "found": found}

    out = asyncio.run(session_run(daemon.socket, steps, "--memory", "coding", "--read", "team"))
    seen = {i["id"]: i["provenance"]["memory"] for i in out["found"]["items"]}
    assert seen == {out["wrote"]["id"]: "coding", "teamwide": "team"}  # never "personal"
    with daemon.client(memory="coding") as coding:
        assert coding.get_bead(out["wrote"]["id"]).content == "a blue umbrella bug"
