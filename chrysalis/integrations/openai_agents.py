"""`ChrysalisSession`: an OpenAI Agents SDK session whose history is a Chrysalis session.

::

    from agents import Agent, Runner
    from chrysalis.integrations.openai_agents import ChrysalisSession

    session = ChrysalisSession("support-ada")          # the daemon on $CHRYSALIS_SOCKET
    result = await Runner.run(agent, "Hello", session=session)

It implements the SDK's `Session` protocol (``get_items``, ``add_items``, ``pop_item``,
``clear_session``) over the daemon's socket (`chrysalis.Client`; the async methods run it on
a worker thread, so one session serves any event loop). Each history item is one bead in
session ``session_id`` (ids that are not Chrysalis ids, e.g. with spaces or over 128
characters, become ``openai-agents:<hash>``), tagged ``openai-agents``:

- a plain message, exactly ``{"role": "user"|"assistant"|"system", "content": "<text>"}``, is
  a bead of that role holding the text, so recall, summaries and knowledge read it like any
  turn; the daemon's secrets policy applies to it as to every bead (a credential comes back
  as ``[REDACTED:<kind>]`` in the history the model sees next);
- any other item (model output messages, tool calls and their outputs, reasoning) is its
  JSON, tagged ``openai-agents:json`` too, scanned before it is sent so that redaction keeps
  the JSON whole (``secrets=``, as `chrysalis.integrations._beads.safe_json`).

Other beads of the same session (written by other tools) are not part of the SDK's history.
``pop_item`` reads the newest item and forgets it: two sessions popping at once may both
return the same item. What a popped or cleared item leaves is its forget receipt.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from agents.memory.session_settings import SessionSettings, resolve_session_limit

from chrysalis.client import Client
from chrysalis.core.errors import InvalidInput, NotFound, SecretRefused
from chrysalis.core.limits import ID_PATTERN
from chrysalis.integrations._beads import check_policy, check_stored, newest_beads, safe_json
from chrysalis.secrets.scan import describe, redact

if TYPE_CHECKING:
    from agents.items import TResponseInputItem

    from chrysalis.core.models import Bead

__all__ = ["JSON_TAG", "TAG", "ChrysalisSession", "chrysalis_session_id"]

log = logging.getLogger("chrysalis.integrations")

TAG = "openai-agents"
JSON_TAG = "openai-agents:json"
_TEXT_ROLES = ("user", "assistant", "system")
_CHUNK = 500  # items per commit: a page of history (1000) never sits in one timestamp
_ID = re.compile(ID_PATTERN)


def chrysalis_session_id(session_id: str) -> str:
    """The Chrysalis session holding an SDK session: its id when that is a valid id holding
    no credential (the daemon would redact one to ``redacted-<kind>``, one session for every
    such id), else a hash of it."""
    if _ID.fullmatch(session_id) and not redact(session_id, as_id=True)[1]:
        return session_id
    return "openai-agents:" + hashlib.sha256(session_id.encode()).hexdigest()[:32]


def _role(item: dict[str, Any]) -> str:
    role = item.get("role")
    if role in _TEXT_ROLES:
        return cast(str, role)
    kind = str(item.get("type", ""))
    return "tool" if "call" in kind or kind.endswith("_output") else "note"


class ChrysalisSession:
    """The SDK's session protocol over a Chrysalis session (see the module's doc).

    ``ChrysalisSession(session_id, client=None, *, socket=None, memory=None,
    secrets="redact", session_settings=None)``: with no ``client`` one is opened on
    ``socket`` for named memory ``memory`` and closed by `close`. Bad items raise
    `chrysalis.InvalidInput` and nothing of that call is stored."""

    def __init__(
        self,
        session_id: str,
        client: Client | None = None,
        *,
        socket: str | Path | None = None,
        memory: str | None = None,
        secrets: str = "redact",
        session_settings: SessionSettings | None = None,
    ) -> None:
        if not isinstance(session_id, str) or not session_id:
            raise InvalidInput("session_id must be a non-empty string")
        try:
            session_id.encode()
        except UnicodeEncodeError:
            raise InvalidInput("session_id holds a lone surrogate") from None
        if client is not None and (socket is not None or memory is not None):
            raise InvalidInput("give a client, or a socket and memory for a new one; not both")
        self.session_id = session_id
        self.chrysalis_session = chrysalis_session_id(session_id)
        self.session_settings = session_settings
        self.secrets = check_policy(secrets)
        self._own = client is None
        self.client = client if client is not None else Client(socket, memory=memory)

    def close(self) -> None:
        """Close the client if this session opened it."""
        if self._own:
            self.client.close()

    # ---- the protocol -------------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The history, oldest first; with ``limit`` (or the settings' limit), the latest
        that many."""
        limit = resolve_session_limit(limit, self.session_settings)
        return await asyncio.to_thread(self._get_items, limit)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append ``items`` in order, all in one commit per 500."""
        await asyncio.to_thread(self._add_items, list(items))

    async def pop_item(self) -> TResponseInputItem | None:
        """Forget the newest item and return it; None when the history is empty."""
        return await asyncio.to_thread(self._pop_item)

    async def clear_session(self) -> None:
        """Forget every item of the history (other beads of the session stay)."""
        await asyncio.to_thread(self._clear)

    # ---- blocking halves ------------------------------------------------------------------

    def _get_items(self, limit: int | None) -> list[TResponseInputItem]:
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise InvalidInput(f"limit must be an int or None, not {limit!r:.40}")
        if limit is not None and limit <= 0:
            return []
        beads = list(
            newest_beads(self.client, tag=TAG, session_id=self.chrysalis_session, limit=limit)
        )
        items = [self._decode(b) for b in reversed(beads)]
        return [item for item in items if item is not None]

    def _row(self, item: Any) -> tuple[dict[str, Any], bool]:
        """A bead row for ``item``, and whether it holds the item's JSON."""
        if not isinstance(item, dict):
            raise InvalidInput(f"a session item must be a dict, not {type(item).__name__}")
        row: dict[str, Any] = {"session_id": self.chrysalis_session, "source": "openai-agents"}
        content = item.get("content")
        plain = set(item) == {"role", "content"} and item["role"] in _TEXT_ROLES
        if plain and isinstance(content, str):
            try:
                content.encode()
            except UnicodeEncodeError:
                raise InvalidInput("a message holds a lone surrogate") from None
            if self.secrets == "refuse" and (found := redact(content)[1]):
                raise SecretRefused(
                    f"refused: a message holds {describe(found)} (secrets='refuse'); "
                    "nothing was stored",
                    details=[f.as_dict() for f in found],
                )
            return {**row, "role": item["role"], "content": content, "tags": [TAG]}, False
        text, findings = safe_json(item, self.secrets, f"a {item.get('type', 'message')} item")
        if findings:
            log.warning("openai-agents session: redacted %s before storing", describe(findings))
        return {**row, "role": _role(item), "content": text, "tags": [TAG, JSON_TAG]}, True

    def _add_items(self, items: list[Any]) -> None:
        rows = [self._row(item) for item in items]  # all checked before any is sent
        for at in range(0, len(rows), _CHUNK):
            chunk = rows[at : at + _CHUNK]
            beads = self.client.remember_many([row for row, _ in chunk])
            sent = {b.id: row["content"] for (row, is_json), b in zip(chunk, beads, strict=True)
                    if is_json}  # fmt: skip
            check_stored(self.client, sent, beads, "a session item's JSON")

    def _pop_item(self) -> TResponseInputItem | None:
        while True:
            beads = self.client.last_beads(1, session_id=self.chrysalis_session, tag=TAG)
            if not beads:
                return None
            try:
                self.client.forget(beads[-1].id)
            except NotFound:  # popped by someone else meanwhile: take the next
                continue
            item = self._decode(beads[-1])
            if item is not None:
                return item

    def _clear(self) -> None:
        while self.client.forget_where(
            session_id=self.chrysalis_session, tag=TAG, dry_run=False
        ).get("more"):
            pass

    def _decode(self, bead: Bead) -> TResponseInputItem | None:
        if JSON_TAG not in bead.tags:
            return cast("TResponseInputItem", {"role": bead.role, "content": bead.content})
        try:
            item = json.loads(bead.content)
        except ValueError:
            item = None
        if not isinstance(item, dict):  # not written by this class: not the SDK's history
            log.warning("openai-agents session: bead %s is not an item; skipped", bead.id)
            return None
        return cast("TResponseInputItem", item)
