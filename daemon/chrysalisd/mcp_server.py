"""`chrysalis mcp`: an MCP server over stdio that gives an agent its memory.

Every tool is a call to the daemon through `chrysalis.Client` (the socket from ``--socket`` or
``CHRYSALIS_SOCKET``), so the MCP process holds no data and any number of agents share one
memory. A daemon error comes back as a tool error naming what was wrong; a daemon that is not
running is said plainly; the server itself never dies of either.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import Field

from chrysalis.client import Client, Routes
from chrysalis.client.routes import bead_body, selector_body
from chrysalis.core.errors import ChrysalisError, DaemonNotRunning, InvalidInput
from chrysalis.core.vocab import DEFAULT_ROLE, DEFAULT_STRATEGY, Role, Strategy

T = TypeVar("T")
# Tool parameter types live at module level: the SDK reads the annotations by name.
Text = Annotated[str, Field(min_length=1, description="what to store, in plain words")]
When = Annotated[
    str | float | None, Field(description="ISO 8601 (e.g. 2026-01-31T12:00:00Z) or epoch seconds")
]

INSTRUCTIONS = """\
Long-term memory shared across sessions, agents and the user's laptops.
Call `context` (or `recall`, to search) before answering anything that may depend on earlier
conversations, the user's preferences or facts learned before; call `remember` for what is
worth keeping (decisions, preferences, facts, outcomes of tool calls), `add_fact` for a
relation between two things.
Every recalled item says why it matched (signals) and where it came from (provenance)."""


def build(
    socket: str | Path | None = None, memory: str | None = None, read: Sequence[str] = ()
) -> Any:
    """The MCP server with its tools (not started): they work in ``memory`` (default when
    None), and recall reads the memories in ``read`` too, in one ranking."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    import chrysalis

    server = MCPServer(
        "chrysalis", instructions=INSTRUCTIONS, version=chrysalis.__version__, log_level="WARNING"
    )
    client = Client(socket, memory=memory)
    # What recall reads: this agent's memory and the others it may read (none: its own only).
    reads = list(dict.fromkeys([memory or "default", *read])) if read else []

    def daemon_call(fn: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> T:
            try:
                return fn(*args, **kwargs)
            except DaemonNotRunning as exc:
                raise ToolError(
                    f"the Chrysalis memory daemon is not running ({exc.message}). Ask the user "
                    "to start it with `chrysalis daemon`."
                ) from None
            except ChrysalisError as exc:
                raise ToolError(f"{exc.code}: {exc.message}") from None

        return wrapper

    @server.tool(
        description="Store something worth remembering: a decision, a preference, a fact, the "
        "outcome of a task. Returns the new memory's id. Credentials in the text (API keys, "
        "tokens, private keys, passwords in URLs) are replaced with [REDACTED:<kind>] and "
        "listed under 'redacted'."
    )
    @daemon_call
    def remember(
        content: Text,
        role: Role = DEFAULT_ROLE,
        session_id: Annotated[
            str | None, Field(description="the conversation it belongs to")
        ] = None,
        importance: Annotated[
            float | None,
            Field(ge=0, le=1, description="0 trivial .. 1 vital; omitted: judged by novelty"),
        ] = None,
        tags: Annotated[list[str] | None, Field(description="labels to filter by later")] = None,
    ) -> dict[str, Any]:
        body = bead_body(
            content, role=role, session_id=session_id, importance=importance, tags=tags or ()
        )
        call = Routes.remember_noting(body)
        bead, redacted = client.send(call)
        out = {"id": bead["id"], "session_id": bead.get("session_id"), "ts": bead["ts"],
               "importance": bead["importance"]}  # fmt: skip
        if redacted:  # what kind of secret was replaced, and where; never the secret
            out["redacted"] = [{k: v for k, v in f.items() if k != "bead"} for f in redacted]
        return out

    @server.tool(
        description="Search the memory: recent turns, semantic and keyword matches and related "
        "knowledge-graph facts, fused and ranked. Each item has its text, score, the signals "
        "that matched (why) and its provenance (which laptop and operation it came from)."
    )
    @daemon_call
    def recall(
        query: Annotated[str, Field(min_length=1, description="what to look for")],
        k: Annotated[int, Field(ge=1, le=100, description="how many items at most")] = 10,
        token_budget: Annotated[
            int | None, Field(ge=1, description="fit the items' text into this many tokens")
        ] = None,
        strategy: Strategy = DEFAULT_STRATEGY,
    ) -> dict[str, Any]:
        result = client.raw(
            Routes.recall(query, k, token_budget, strategy, None, None, None, reads)
        )
        items = [
            {key: item[key] for key in ("kind", "id", "text", "score", "signals", "provenance")}
            for item in result["items"]
        ]
        return {"items": items, "tokens_used": result["tokens_used"], "notes": result["notes"]}

    @server.tool(
        description="The context to answer a question: the facts that bear on it (what held "
        "at the time it asks about first, each with since/until and evidence) and the turns "
        "that are evidence, as a prompt-ready text citing ids, within a token budget. Empty "
        "when nothing in memory bears on it. Pass session_id to leave out that session's "
        "latest turns (already in your prompt)."
    )
    @daemon_call
    def context(
        query: Annotated[str, Field(min_length=1, description="the question to answer")],
        token_budget: Annotated[int, Field(ge=1, le=100_000, description="tokens at most")] = 800,
        session_id: Annotated[str | None, Field(description="your session's id")] = None,
        exclude: Annotated[list[str] | None, Field(description="ids to leave out")] = None,
        now: When = None,
    ) -> dict[str, Any]:
        result = client.raw(
            Routes.context(query, token_budget, session_id, exclude or (), now, reads)
        )
        return {key: result[key] for key in ("text", "facts", "items", "tokens", "notes")}

    @server.tool(
        description="Record a fact as subject -predicate-> object in the knowledge graph "
        "(nodes are made as needed and named by their text), e.g. Alice works_at Acme."
    )
    @daemon_call
    def add_fact(
        subject: Annotated[str, Field(min_length=1)],
        predicate: Annotated[str, Field(min_length=1, description="e.g. works_at, prefers")],
        object: Annotated[str, Field(min_length=1)],
        evidence: Annotated[
            list[str] | None, Field(description="ids of memories that support it")
        ] = None,
    ) -> dict[str, Any]:
        call = Routes.add_fact(subject, predicate, object, "entity", 1.0, evidence or [])
        edge = client.raw(call)
        return {"edge": edge["id"], "source": edge["source"], "target": edge["target"],
                "predicate": predicate}  # fmt: skip

    @server.tool(description="Forget a memory by id: its text is erased on every laptop.")
    @daemon_call
    def forget(id: Annotated[str, Field(min_length=1)]) -> dict[str, Any]:
        client.raw(Routes.forget(id))
        return {"forgotten": id}

    @server.tool(
        description="Forget memories by what they are, not by id: a session, an ingested file "
        "or directory (absolute path), a tag, a query (memories holding every one of its words; "
        "never by similarity), a time range, a role. Every field given must hold; at least one "
        "is needed. Two steps: call with dry_run=true (the default) to see how many match and "
        "the first 50, changing nothing; then, if they are what should go, call again with "
        "the same fields, dry_run=false and confirm_digest set to the expect_digest it "
        "answered. If the match changed in between (a memory forgotten or a matching one "
        "written), nothing is forgotten and the tool says so."
    )
    @daemon_call
    def forget_where(
        session_id: Annotated[str | None, Field(description="memories of this session")] = None,
        path: Annotated[
            str | None, Field(description="memories ingested from this file or directory")
        ] = None,
        tag: Annotated[str | None, Field(description="memories with this tag")] = None,
        query: Annotated[
            str | None, Field(description="memories whose text holds every word of this")
        ] = None,
        before: When = None,
        after: When = None,
        role: Role | None = None,
        dry_run: Annotated[bool, Field(description="only show what matches (the default)")] = True,
        confirm_digest: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=100,
                description="the expect_digest the dry run answered; needed to forget",
            ),
        ] = None,
    ) -> dict[str, Any]:
        # Safe by default: an agent sees what it deletes, and a real forget names the digest of
        # the ids it saw, so the daemon refuses when other memories match than were shown.
        selector = selector_body(session_id, path, tag, query, before, after, role)
        if dry_run:
            seen: dict[str, Any] = client.raw(Routes.forget_where(selector, dry_run=True))
            if seen["matched"]:
                seen["to_forget"] = (
                    "call forget_where again with the same fields, dry_run=false and "
                    f"confirm_digest={seen['expect_digest']}"
                )
            return seen
        if confirm_digest is None:
            raise InvalidInput(
                "nothing was forgotten: to forget, first call with dry_run=true, then again "
                "with dry_run=false and confirm_digest set to the expect_digest it answered"
            )
        call = Routes.forget_where(selector, dry_run=False, expect_digest=confirm_digest)
        return client.raw(call)  # type: ignore[no-any-return]

    @server.tool(description="The agent's persona: name, description, goals, norms, traits.")
    @daemon_call
    def get_persona() -> dict[str, Any]:
        return client.raw(Routes.persona)  # type: ignore[no-any-return]

    @server.tool(
        description="Change the persona. Fields left out keep their value; goals and norms "
        "given replace the lists; traits merge key by key (a trait set to null is removed)."
    )
    @daemon_call
    def update_persona(
        name: str | None = None,
        description: str | None = None,
        goals: list[str] | None = None,
        norms: list[str] | None = None,
        traits: dict[str, str | None] | None = None,
    ) -> dict[str, Any]:
        changes = {"name": name, "description": description, "goals": goals, "norms": norms,
                   "traits": traits}  # fmt: skip
        call = Routes.update_persona({k: v for k, v in changes.items() if v is not None})
        return client.raw(call)  # type: ignore[no-any-return]

    @server.tool(description="The skills the agent has: id, name and description of each.")
    @daemon_call
    def list_skills() -> list[dict[str, Any]]:
        skills = client.raw(Routes.skills)
        return [{k: s.get(k) for k in ("id", "name", "description")} for s in skills]

    @server.tool(description="One skill in full: signature, examples, tags.")
    @daemon_call
    def get_skill(id: Annotated[str, Field(min_length=1)]) -> dict[str, Any]:
        return client.raw(Routes.get_skill(id))  # type: ignore[no-any-return]

    @server.tool(description="Add or replace a skill (how to do something, with examples).")
    @daemon_call
    def put_skill(
        id: Annotated[str, Field(min_length=1)],
        name: Annotated[str, Field(min_length=1)],
        description: str = "",
        signature: str = "",
        examples: list[str] | None = None,
        tags: list[str] | None = None,
    ) -> dict[str, Any]:
        skill = {"id": id, "name": name, "description": description, "signature": signature,
                 "examples": examples or [], "tags": tags or []}  # fmt: skip
        return client.raw(Routes.put_skill(skill))  # type: ignore[no-any-return]

    @server.tool(
        description="The memory's health: counts, indexes, knowledge extraction (lag, errors), "
        "replication to other laptops (lag, errors) and mirrors."
    )
    @daemon_call
    def memory_status() -> dict[str, Any]:
        s = client.raw(Routes.status)
        keep = ("replica_id", "state_digest", "counts", "index", "embedder", "knowledge", "sync")
        return {k: s[k] for k in keep if k in s}

    return server


def main(
    socket: str | Path | None = None, memory: str | None = None, read: Sequence[str] = ()
) -> None:
    """Serve MCP on stdin/stdout until the client hangs up."""
    build(socket, memory, read).run("stdio")
