"""The Zep mirror, on the ``zep-python`` 2.x SDK (Zep Community Edition and Zep's v2 API).

- One Zep user per memory (``user_id``), one Zep session per bead session (``<user>-<session>``,
  ``<user>-default`` for beads without one).
- Beads become session messages: ``role_type`` from the bead's role, and in the metadata our
  bead id, origin replica, seq and HLC. Only the replica that originated a bead pushes it.
- Push is idempotent: the cursor (our last own seq handled) and the batch in flight live in
  LMDB. After a crash only that batch is retried, and a message already in Zep is recognized by
  its ``chrysalis_id`` metadata, not sent twice.
- Forget: Zep's v2 API cannot delete or edit one message. When every message of the bead's Zep
  session was pushed by this replica, the session's memory is deleted and its live beads are
  sent again, so the text leaves Zep; otherwise the message is marked ``chrysalis_forgotten``
  (search drops it here) and status counts it as kept by Zep.
- Pull: the facts Zep derives per session become KG nodes (``type=fact``, metadata
  ``source=zep``) linked from the memory's user node by ``zep_fact`` edges.
- Search: ``sessions/search`` within a time budget, for `assisted_retrieve`.
- Drop: every session this replica sent beads to (recorded in LMDB), or that holds the memory's
  beads, loses its memory (messages and the facts Zep derived): the memory is gone everywhere.
  A session that also holds messages of replicas that are not the memory's (another memory on
  the same Zep user: one made before each memory had a user of its own, or another laptop's
  or program's) keeps them, and ours there are marked ``chrysalis_forgotten``. The Zep user
  stays (it may be shared, and it holds no text).
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, cast

from chrysalis.core.errors import ChrysalisError, MirrorError, NotFound
from chrysalis.core.models import OpKind
from chrysalis.mirrors import _UNSAFE, OpLogMirror

if TYPE_CHECKING:
    from chrysalis.core.models import RetrievedItem
    from chrysalis.memory import Memory

log = logging.getLogger(__name__)

ROLE_TYPES = {"user": "user", "assistant": "assistant", "system": "system", "tool": "tool"}
PAGE = 100
BATCH = 50


class ZepMirror(OpLogMirror):
    kind = "zep"

    def __init__(
        self,
        memory: Memory,
        base_url: str,
        api_key: str,
        *,
        user_id: str = "chrysalis",
        timeout: float = 10.0,
        batch: int = BATCH,
    ) -> None:
        from zep_python.client import Zep

        if os.environ.get("ZEP_API_URL"):
            log.warning("ZEP_API_URL is set: the zep-python SDK uses it instead of %s", base_url)
        url = base_url.rstrip("/")
        client = Zep(base_url=url, api_key=api_key, timeout=timeout)
        super().__init__(memory, client, url, user_id, f"zep:{user_id}:", batch)
        self._ready: set[str] = set()  # the user and sessions known to exist

    # ---- calls -------------------------------------------------------------------------------

    def _call(self, fn: Any, *args: Any, retries: int = 2, **kwargs: Any) -> Any:
        """One SDK call; its errors become `MirrorError` naming the status, never the key."""
        from zep_python.core.api_error import ApiError

        try:
            return fn(*args, request_options={"max_retries": retries}, **kwargs)
        except ApiError as exc:
            raise MirrorError(f"zep {self.base_url}: HTTP {exc.status_code}") from None
        except Exception as exc:  # httpx errors: connect, timeout, protocol
            raise MirrorError(f"zep {self.base_url}: {type(exc).__name__}") from None

    def _missing(self, fn: Any, *args: Any) -> bool:
        """True if the object the call reads does not exist (404)."""
        return self._found(fn, *args) is None

    def _found(self, fn: Any, *args: Any) -> Any | None:
        """What the call reads, or None if it does not exist (404)."""
        from zep_python.core.api_error import ApiError

        try:
            return fn(*args, request_options={"max_retries": 2})
        except ApiError as exc:
            if exc.status_code == 404:
                return None
            raise MirrorError(f"zep {self.base_url}: HTTP {exc.status_code}") from None
        except Exception as exc:
            raise MirrorError(f"zep {self.base_url}: {type(exc).__name__}") from None

    def _session(self, session: str) -> Any | None:
        """Zep session ``session`` if it exists (None if not), refusing one of another user:
        session ids are global in Zep and ours are ``<user>-<session>``, so another program
        or laptop (user ``a`` with session ``b-x``, user ``a-b`` with ``x``) can own the
        name. Writing there would show our text to that user, and reading its facts would
        bring theirs into this memory."""
        found = self._found(self.client.memory.get_session, session)
        owner = getattr(found, "user_id", None)
        if found is not None and owner != self.user_id:
            raise MirrorError(
                f"zep {self.base_url}: session {session} belongs to Zep user {owner}, not to "
                f"this memory's {self.user_id}: nothing is sent there nor read from it; give "
                "this memory (or that program) another zep_user_id"
            )
        return found

    def _ensure_user(self) -> None:
        if self.user_id in self._ready:
            return
        if self._missing(self.client.user.get, self.user_id):
            self._call(
                self.client.user.add, user_id=self.user_id, metadata={"created_by": "chrysalis"}
            )
        self._ready.add(self.user_id)

    def _ensure_session(self, session: str) -> None:
        if session in self._ready:
            return
        self._ensure_user()
        if self._session(session) is None:
            self._call(
                self.client.memory.add_session,
                session_id=session,
                user_id=self.user_id,
                metadata={"created_by": "chrysalis"},
            )
        self._ready.add(session)

    def session_of(self, bead_session: str | None) -> str:
        return _UNSAFE.sub("_", f"{self.user_id}-{bead_session or 'default'}")

    def _messages(self, session: str) -> Iterator[Any]:
        """The session's messages, newest page first."""
        first = self._call(self.client.memory.get_session_messages, session, limit=PAGE, cursor=1)
        pages = max(1, math.ceil((first.total_count or 0) / PAGE))
        for page in range(pages, 0, -1):
            reply = (
                first
                if page == 1
                else self._call(
                    self.client.memory.get_session_messages, session, limit=PAGE, cursor=page
                )
            )
            yield from reversed(reply.messages or [])

    # ---- push --------------------------------------------------------------------------------

    def _group(self, op: dict[str, Any]) -> list[Any] | None:
        if op["kind"] != OpKind.BEAD_ADD or op["data"].get("erased"):
            return None
        return ["bead", self.session_of(op["data"].get("session_id"))]

    def _send(self, flight: dict[str, Any]) -> int:
        return self._send_beads(flight["group"][1], flight["ids"])

    def _recover(self, flight: dict[str, Any]) -> int:
        return self._send_missing(flight["group"][1], flight["ids"])

    def _sent(self, flight: dict[str, Any]) -> dict[str, Any]:
        session = flight["group"][1]
        # the session is remembered after its beads are forgotten: a drop deletes it
        return {
            self._meta + "session:" + session: True,
            **{self._meta + "bead:" + b: session for b in flight["ids"]},
        }

    def _message(self, bead_id: str) -> Any | None:
        from zep_python.types import Message

        try:
            bead = self.memory.get_bead(bead_id)
        except NotFound:
            return None  # forgotten since: nothing to send
        origin = self.memory.origin("bead", bead_id)
        role_type = ROLE_TYPES.get(bead.role, "norole")
        return Message(
            role=bead.role,
            role_type=role_type,
            content=bead.content,
            metadata={
                "chrysalis_id": bead.id,
                "chrysalis_origin": origin.get("origin_replica"),
                "chrysalis_op": origin.get("op"),
                "chrysalis_hlc": str(origin.get("hlc")),  # 64-bit: JSON numbers lose digits
                "chrysalis_ts": bead.ts,
            },
        )

    def _send_beads(self, session: str, bead_ids: list[str]) -> int:
        messages = [m for m in (self._message(b) for b in bead_ids) if m is not None]
        if not messages:
            return 0
        self._ensure_session(session)
        # No automatic retry: a reply lost after the messages landed would send them twice.
        # The batch stays "in flight" in LMDB, and the next push sends only what Zep lacks.
        self._call(self.client.memory.add, session, messages=messages, retries=0)
        return len(messages)

    def _send_missing(self, session: str, bead_ids: list[str]) -> int:
        self._ensure_session(session)
        wanted, there = set(bead_ids), set()
        for msg in self._messages(session):
            bead = (msg.metadata or {}).get("chrysalis_id")
            if bead in wanted:
                there.add(bead)
                if there == wanted:
                    break
        return self._send_beads(session, [b for b in bead_ids if b not in there])

    # ---- forget ------------------------------------------------------------------------------

    def _forget(self, session: str, bead_id: str) -> str:
        me = self.store.replica_id
        target, ours_only, live = None, True, []
        for msg in self._messages(session):
            meta = msg.metadata or {}
            if meta.get("chrysalis_id") == bead_id:
                target = msg
            elif meta.get("chrysalis_origin") != me:
                ours_only = False
            elif not meta.get("chrysalis_forgotten"):
                live.append(meta["chrysalis_id"])
        if target is None:
            return "erased"  # not in Zep (a session deleted and sent again without it)
        if ours_only:  # the session is ours alone: delete it and send back what lives
            live.reverse()  # oldest first, as they were sent
            cursor = int(self.store.get_meta(self._meta + "cursor") or 0)
            flight = {"group": ["bead", session], "ids": live, "first": 0, "last": cursor}
            self.store.put_meta(self._meta + "inflight", flight)
            self._call(self.client.memory.delete, session)
            self._send_missing(session, live)
            self.store.put_meta(self._meta + "inflight", None)
            self._drop_facts(session)  # Zep dropped them with the session; the next pull
            return "erased"  # brings back what it derives again from what is left
        self._call(
            self.client.memory.update_message_metadata,
            session,
            target.uuid_,
            metadata={**(target.metadata or {}), "chrysalis_forgotten": True},
        )
        self.store.put_meta(self._meta + "kept", self.kept_by_zep() + 1)
        return "marked"

    def _drop_facts(self, session: str) -> None:
        for node in self.memory.all_nodes():
            if node.type == "fact" and node.metadata.get("zep_session") == session:
                self.memory.remove_node(node.id)

    # ---- drop ---------------------------------------------------------------------------------

    def _probe(self) -> None:
        self._missing(self.client.user.get, self.user_id)

    def _erase_all(self, ours: set[str]) -> dict[str, Any]:
        sessions = {name[len(self._meta + "session:") :]
                    for name in self.memory.reader.metas(self._meta + "session:")}  # fmt: skip
        sessions |= {str(s) for s in self.memory.reader.metas(self._meta + "bead:").values()}
        sessions |= {self.session_of(s) for s in [None, *self.memory.sessions()]}
        gone, kept = [], []
        for session in sorted(sessions):
            found = self._found(self.client.memory.get_session, session)
            if found is None or getattr(found, "user_id", None) != self.user_id:
                continue  # none, or another user's of the same name (`_session`): not ours
            mine, others = [], 0
            for msg in self._messages(session):
                if (msg.metadata or {}).get("chrysalis_origin") in ours:
                    mine.append(msg)
                else:
                    others += 1
            if not others:
                self._call(self.client.memory.delete, session)  # its messages and facts
                if mine:
                    gone.append(session)
                continue
            for msg in mine:  # Zep's v2 API cannot delete one message
                if not (msg.metadata or {}).get("chrysalis_forgotten"):
                    meta = {**(msg.metadata or {}), "chrysalis_forgotten": True}
                    self._call(self.client.memory.update_message_metadata, session,
                               msg.uuid_, metadata=meta)  # fmt: skip
            if mine:
                kept.append({"session": session, "messages": len(mine), "others": others})
        self._ready.clear()
        user = f"Zep user {self.user_id} stays (it holds no text; other memories may use it)"
        if not kept:
            why = f"{len(gone)} sessions deleted with the facts Zep derived from them; {user}"
            return {"state": "gone", "why": why, "sessions": gone, "kept": []}
        why = (
            f"{len(gone)} sessions deleted; {len(kept)} also hold messages of another memory "
            f"or program using Zep user {self.user_id} (give each memory its own zep_user_id): "
            "Zep's v2 API cannot delete one message, so this memory's there are marked "
            "forgotten (never shown by Chrysalis) and their text and the facts Zep derived "
            "in those sessions stay in Zep"
        )
        return {"state": "marked", "why": why, "sessions": gone, "kept": kept}

    # ---- pull: facts -------------------------------------------------------------------------

    def _pull(self) -> dict[str, Any]:
        # The sessions of our beads (zep-python 2.0's users/{id}/sessions parses its answer as a
        # list of lists, so it cannot read what Zep sends).
        local = [None, *self.memory.sessions()]
        added = 0
        for sid in dict.fromkeys(self.session_of(s) for s in local):
            if self._session(sid) is None:
                continue
            mem = self._call(self.client.memory.get, sid)
            for fact in mem.relevant_facts or []:
                if fact.uuid_ and fact.fact and self._add_fact(sid, fact):
                    added += 1
        return {"ops": added, "facts": added}

    def _add_fact(self, session: str, fact: Any) -> bool:
        rating = fact.rating if isinstance(fact.rating, int | float) else None
        meta = {"source": "zep", "zep_uuid": fact.uuid_, "zep_session": session,
                "rating": rating, "created_at": fact.created_at}  # fmt: skip
        return self._add_fact_node(fact.uuid_, fact.fact, meta, rating if rating else 1.0)

    # ---- search ------------------------------------------------------------------------------

    def search(self, query: str, k: int, timeout: float) -> list[RetrievedItem]:
        from zep_python.core.api_error import ApiError

        from chrysalis.core.models import RetrievedItem
        from chrysalis.search.fusion import count_tokens

        try:
            reply = self.client.memory.search_sessions(
                text=query,
                user_id=self.user_id,
                search_scope="messages",
                limit=k,
                # the SDK types this as int; httpx takes the float, so the thread ends on time
                request_options=cast(Any, {"max_retries": 0, "timeout_in_seconds": timeout}),
            )
        except ApiError as exc:
            raise MirrorError(f"zep {self.base_url}: HTTP {exc.status_code}") from None
        items = []
        # The replicas of the daemon's other memories: a bead message of theirs is in this
        # user's sessions because that memory shared it (mirrored before each memory had a
        # user of its own, DESIGN §15), and is not this memory's to show. Any other replica
        # may be one of ours not synced here yet: its beads show, with Zep's copy.
        theirs = set(self.foreign())
        for r in reply.results or []:
            score = float(r.score or 0.0)
            if r.message is not None:
                meta = r.message.metadata or {}
                if meta.get("chrysalis_forgotten"):
                    continue
                bead_id = meta.get("chrysalis_id")
                if bead_id and meta.get("chrysalis_origin") in theirs:
                    continue
                if bead_id and self._forgotten_here(bead_id):
                    continue  # never shown again, from anywhere
                if bead_id:
                    prov = {
                        "source": "zep",
                        "origin_replica": meta.get("chrysalis_origin"),
                        "op": meta.get("chrysalis_op"),
                        "zep_session": r.session_id,
                    }
                    try:  # here already: our copy of the text
                        text = self.memory.get_bead(bead_id).content
                    except ChrysalisError:  # not synced here yet: Zep's copy
                        text = r.message.content or ""
                    kind, item_id = "bead", bead_id
                else:
                    kind, item_id, text = (
                        "bead",
                        f"zep-msg-{r.message.uuid_}",
                        r.message.content or "",
                    )
                    prov = {"source": "zep", "zep_session": r.session_id}
            elif r.fact is not None and r.fact.fact:
                kind, item_id, text = "edge", f"zep-fact-{r.fact.uuid_}", r.fact.fact
                prov = {"source": "zep", "zep_session": r.session_id, "zep_uuid": r.fact.uuid_}
            else:
                continue
            items.append(
                RetrievedItem(
                    kind=kind,
                    id=item_id,
                    text=text,
                    score=score,
                    signals={"zep": score},
                    provenance=prov,
                    tokens=count_tokens(text),
                )
            )
        return items

    def _forgotten_here(self, bead_id: str) -> bool:
        return self.memory.reader.bead_states([bead_id])[bead_id] == "forgotten"

    # ---- status ------------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        return {**super().status(), "forgotten_kept_by_zep": self.kept_by_zep()}

    def kept_by_zep(self) -> int:
        """Forgotten beads whose text Zep still holds (marked: its API cannot delete one)."""
        return int(self.store.get_meta(self._meta + "kept") or 0)
