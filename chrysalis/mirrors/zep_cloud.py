"""The Zep Cloud mirror, on the current ``zep-cloud`` SDK (API v4: users, threads, graphs).

- One Zep user per memory, found by its ``user_id`` (``users/lookup``) or created; its uuid is
  kept in LMDB. Each replica writes its beads to its own thread per bead session (threads get
  server uuids; a thread per replica needs no shared mapping, and is this replica's alone).
- Beads are thread messages; KG edges this replica wrote are fact triples in the user's graph
  (``graphs/{user}/edges``, node names from our nodes) with their validity as resolved on
  read (``valid_at`` / ``invalid_at``, ISO 8601): a fact superseded later is sent again with
  its end, so Zep holds it invalid from then (v4 cannot edit an edge's validity). Every call
  carries an ``Idempotency-Key`` made from the ops it sends
  (``chrysalis-<replica>-<first>-<last>``): a batch resent after a crash or a lost reply is
  the same request, which Zep applies once.
- Forget: a thread holds only this replica's beads, so the bead's thread is deleted and its
  live beads are sent to a new one. Graph facts Zep already derived from the message stay in
  the user's graph: v4 does not say which episode a message became.
- Pull: graph edges Zep derived (not ours) become fact nodes, as with the zep-python mirror.
- Search: ``graphs/{user}/search/edges`` within the budget.
- Drop: every thread this replica wrote is deleted, and every edge of the user's graph that
  this memory sent (``chrysalis_edge``). Facts Zep derived from the messages stay (v4 does not
  say which thread a fact came from, and the user may hold another memory's: one made
  before each memory had a user of its own, or another laptop's); the receipt counts them.
  The user stays, for the same reason.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

from chrysalis.core.errors import ChrysalisError, MirrorError, NotFound
from chrysalis.core.models import OpKind
from chrysalis.mirrors import _UNSAFE, OpLogMirror

if TYPE_CHECKING:
    from chrysalis.core.models import RetrievedItem
    from chrysalis.memory import Memory

log = logging.getLogger(__name__)

DEFAULT_URL = "https://api.getzep.com/api/v4"
ROLES = {"user": "user", "assistant": "assistant", "system": "system", "tool": "tool"}


class ZepCloudMirror(OpLogMirror):
    kind = "zep-cloud"

    def __init__(
        self,
        memory: Memory,
        base_url: str | None,
        api_key: str,
        *,
        user_id: str = "chrysalis",
        timeout: float = 10.0,
        batch: int = 30,
    ) -> None:
        from zep_cloud.client import Zep

        url = (base_url or DEFAULT_URL).rstrip("/")
        client = Zep(api_key=api_key, base_url=url, timeout=timeout)
        super().__init__(memory, client, url, user_id, f"zepc:{user_id}:", batch)

    # ---- calls -------------------------------------------------------------------------------

    def _call(self, fn: Any, *args: Any, retries: int = 2, **kwargs: Any) -> Any:
        from zep_cloud.core.api_error import ApiError

        try:
            return fn(*args, request_options={"max_retries": retries}, **kwargs)
        except ApiError as exc:
            raise MirrorError(f"zep-cloud {self.base_url}: HTTP {exc.status_code}") from None
        except Exception as exc:
            raise MirrorError(f"zep-cloud {self.base_url}: {type(exc).__name__}") from None

    def _key(self, *parts: object) -> str:
        return "chrysalis-" + "-".join(str(p) for p in (self.store.replica_id, *parts))

    def user_uuid(self) -> str:
        known = self.store.get_meta(self._meta + "user")
        if known:
            return str(known)
        from zep_cloud.core.api_error import ApiError

        try:
            user = self.client.user.lookup(user_id=self.user_id, request_options={"max_retries": 2})
        except ApiError as exc:
            if exc.status_code != 404:
                raise MirrorError(f"zep-cloud {self.base_url}: HTTP {exc.status_code}") from None
            user = self._call(
                self.client.user.create,
                user_id=self.user_id,
                metadata={"created_by": "chrysalis"},
                idempotency_key=f"chrysalis-user-{self.user_id}",
            )
        except Exception as exc:
            raise MirrorError(f"zep-cloud {self.base_url}: {type(exc).__name__}") from None
        self.store.put_meta(self._meta + "user", user.uuid_)
        return str(user.uuid_)

    def _thread(self, session: str, generation: int = 0) -> str:
        name = self._meta + "thread:" + session
        known = self.store.get_meta(name)
        if known:
            return str(known)
        thread = self._call(
            self.client.thread.create,
            user_uuid=self.user_uuid(),
            idempotency_key=self._key("thread", session, generation),
        )
        self.store.put_meta(name, thread.uuid_)
        return str(thread.uuid_)

    # ---- push --------------------------------------------------------------------------------

    def _group(self, op: dict[str, Any]) -> list[Any] | None:
        if op["kind"] == OpKind.BEAD_ADD and not op["data"].get("erased"):
            return ["bead", op["data"].get("session_id") or "default"]
        predicate = (
            op["data"].get("set", {}).get("predicate") if op["kind"] == OpKind.EDGE_PUT else None
        )
        if predicate and predicate != "zep_fact":  # facts that came from Zep do not go back
            return ["edge", None]
        return None

    def _send(self, flight: dict[str, Any]) -> int:
        kind, session = flight["group"]
        key = self._key(kind, flight["first"], flight["last"])
        if kind == "edge":
            return self._send_edges(flight["ids"], key)
        return self._send_beads(session, flight["ids"], key)

    def _recover(self, flight: dict[str, Any]) -> int:
        return self._send(flight)  # the same request with the same key: Zep applies it once

    def _sent(self, flight: dict[str, Any]) -> dict[str, Any]:
        kind, session = flight["group"]
        if kind != "bead":
            return {}
        return {self._meta + "bead:" + b: session for b in flight["ids"]}

    def _send_beads(self, session: str, bead_ids: list[str], key: str) -> int:
        from zep_cloud.types import AddMessage

        messages = []
        for bead_id in bead_ids:
            try:
                bead = self.memory.get_bead(bead_id)
            except NotFound:
                continue  # forgotten since
            origin = self.memory.origin("bead", bead_id)
            messages.append(
                AddMessage(
                    content=bead.content,
                    role=ROLES.get(bead.role, "user"),
                    name=bead.role,
                    metadata={
                        "chrysalis_id": bead.id,
                        "chrysalis_origin": origin.get("origin_replica"),
                        "chrysalis_op": origin.get("op"),
                        "chrysalis_hlc": str(origin.get("hlc")),
                    },
                )
            )
        if not messages:
            return 0
        thread = self._thread(session)
        self._call(self.client.thread.add_messages, thread, messages=messages, idempotency_key=key)
        return len(messages)

    def _send_edges(self, edge_ids: list[str], key: str) -> int:
        from zep_cloud.types import EdgeInput, EdgeNodeRef

        edges = []
        for edge_id in dict.fromkeys(edge_ids):  # put and supersede in one batch: sent once
            try:
                edge = self.memory.get_edge(edge_id)
                src, dst = self.memory.get_node(edge.source), self.memory.get_node(edge.target)
            except NotFound:
                continue  # removed since
            a, b = src.name or src.id, dst.name or dst.id
            edges.append(
                EdgeInput(
                    fact=f"{a} {edge.predicate.replace('_', ' ')} {b}",
                    fact_name=_UNSAFE.sub("_", edge.predicate).upper(),
                    source_node=EdgeNodeRef(name=a, labels=[src.type]),
                    target_node=EdgeNodeRef(name=b, labels=[dst.type]),
                    attributes={"chrysalis_edge": edge_id},
                    valid_at=_iso(edge.valid_at),
                    invalid_at=_iso(edge.invalid_at),
                )
            )
        if not edges:
            return 0
        self._call(self.client.graph.edge.add, self.user_uuid(), edges=edges, idempotency_key=key)
        return len(edges)

    def _forget(self, session: str, forgotten: str) -> str:
        """Delete the bead's thread (ours alone) and send its live beads to a new one."""
        live = [
            bead.id
            for bead in self.memory.all_beads()
            if (bead.session_id or "default") == session
            and self.memory.origin("bead", bead.id).get("origin_replica") == self.store.replica_id
        ]
        # A crash part way retries this whole step: the same generation, so the same keys,
        # so the same new thread and messages, each applied once.
        marker = self._meta + "rebuild:" + session
        generation = self.store.get_meta(marker)
        if generation is None:
            generation = int(self.store.get_meta(self._meta + "threadgen:" + session) or 0) + 1
            self.store.put_meta(marker, generation)
        old = self.store.get_meta(self._meta + "thread:" + session)
        if old:
            self._call(self.client.thread.delete, old, idempotency_key=self._key("del", old))
            self.store.put_meta(self._meta + "thread:" + session, None)
        self._thread(session, generation)
        for i in range(0, len(live), self.batch):
            chunk = live[i : i + self.batch]
            self._send_beads(session, chunk, self._key("rebuild", generation, session, i))
        self.store.put_metas(
            {
                marker: None,
                self._meta + "threadgen:" + session: generation,
            }
        )
        return "erased"

    # ---- drop ---------------------------------------------------------------------------------

    def _probe(self) -> None:
        self._unless_missing(self.client.user.lookup, user_id=self.user_id)  # 404: none yet

    def _unless_missing(self, fn: Any, *args: Any, **kwargs: Any) -> None:
        """`_call`, where a 404 (nothing there, or gone already) is no error."""
        from zep_cloud.core.api_error import ApiError

        try:
            fn(*args, request_options={"max_retries": 2}, **kwargs)
        except ApiError as exc:
            if exc.status_code != 404:
                raise MirrorError(f"zep-cloud {self.base_url}: HTTP {exc.status_code}") from None
        except Exception as exc:
            raise MirrorError(f"zep-cloud {self.base_url}: {type(exc).__name__}") from None

    def _erase_all(self, ours: set[str]) -> dict[str, Any]:
        prefix = self._meta + "thread:"
        gone = []
        for name, thread in sorted(self.memory.reader.metas(prefix).items()):
            self._unless_missing(
                self.client.thread.delete, str(thread), idempotency_key=self._key("drop", thread)
            )
            gone.append(name[len(prefix) :])
        user = self.store.get_meta(self._meta + "user")
        edges, derived = 0, 0
        if user:
            mine = self._edges_sent() | {e.id for e in self.memory.all_edges(include_invalid=True)}
            # the pager reads every page (the calls after the first are the pager's)
            listed = self._call(lambda **kw: list(self.client.graph.edge.list(str(user), **kw)),
                                page_size=100)  # fmt: skip
            for edge in listed:
                if (edge.attributes or {}).get("chrysalis_edge") in mine and edge.uuid_:
                    key = self._key("drop-edge", edge.uuid_)
                    self._unless_missing(
                        self.client.graph.edge.delete, str(user), edge.uuid_, idempotency_key=key
                    )
                    edges += 1
                elif not (edge.attributes or {}).get("chrysalis_edge"):
                    derived += 1
        done = f"{len(gone)} threads and {edges} facts this memory sent deleted"
        place: dict[str, Any] = {"sessions": gone, "edges_deleted": edges, "kept": []}
        if not derived:
            why = f"{done}; Zep user {self.user_id} stays (other memories may use it)"
            return {"state": "gone", "why": why, **place}
        why = (
            f"{done}; {derived} facts Zep derived stay in the graph of Zep user "
            f"{self.user_id}: v4 does not say which thread a fact came from, and other "
            "memories may use that user (give each memory its own zep_user_id, and delete "
            "the user in Zep once it holds this memory alone)"
        )
        place["kept"] = [{"graph": self.user_id, "facts": derived}]
        return {"state": "kept", "why": why, **place}

    def _edges_sent(self) -> set[str]:
        """The edges this replica's own ops put (what its pushes sent as triples)."""
        me, after, found = self.store.replica_id, 0, set()
        while ops := self.memory.reader.ops_range(me, after, 1000):
            found |= {op["target"] for op in ops if op["kind"] == OpKind.EDGE_PUT}
            after = ops[-1]["seq"]
        return found

    # ---- pull and search ---------------------------------------------------------------------

    def _pull(self) -> dict[str, Any]:
        page = self._call(self.client.graph.edge.list, self.user_uuid(), page_size=100)
        added = 0
        for edge in page.items or []:
            if (edge.attributes or {}).get("chrysalis_edge") or not edge.fact or not edge.uuid_:
                continue  # one of ours, sent as a triple
            meta = {"source": "zep-cloud", "zep_uuid": edge.uuid_, "fact_name": edge.name}
            added += self._add_fact_node(edge.uuid_, edge.fact, meta, 1.0)
        return {"ops": added, "facts": added}

    def search(self, query: str, k: int, timeout: float) -> list[RetrievedItem]:
        from zep_cloud.core.api_error import ApiError

        from chrysalis.core.models import RetrievedItem
        from chrysalis.search.fusion import count_tokens

        try:
            pager = self.client.graph.search_edges(
                self.user_uuid(),
                query=query,
                page_size=k,
                request_options=cast(Any, {"max_retries": 0, "timeout_in_seconds": timeout}),
            )
        except ApiError as exc:
            raise MirrorError(f"zep-cloud {self.base_url}: HTTP {exc.status_code}") from None
        items = []
        for edge in pager.items or []:
            if not edge.fact:
                continue
            score = float(edge.score or edge.relevance or 0.0)
            mine = (edge.attributes or {}).get("chrysalis_edge")
            if mine:
                try:
                    self.memory.get_edge(mine)
                except ChrysalisError:
                    continue  # removed here
            items.append(
                RetrievedItem(
                    kind="edge",
                    id=mine or f"zep-edge-{edge.uuid_}",
                    text=edge.fact,
                    score=score,
                    signals={self.kind: score},
                    provenance={"source": "zep", "zep_uuid": edge.uuid_},
                    tokens=count_tokens(edge.fact),
                )
            )
        return items


def _iso(ts: float | None) -> str | None:
    """Epoch seconds as the ISO 8601 UTC time Zep takes (``2024-03-05T10:00:00Z``)."""
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, UTC).isoformat().replace("+00:00", "Z")
