"""Mirrors: services that hold a copy of the memory and can search it (Zep), but are not where
replicas converge (they have no version vectors).

A `Mirror` pushes the ops this replica originated, idempotently, with its cursor in LMDB; pulls
what the service derives (facts) back in as ordinary ops; and answers a search within a time
budget, for remote-assisted retrieval (`assisted_retrieve`). A mirror that is slow or down
never blocks local work: every call has a timeout, and its errors show in `status()`.
"""

from __future__ import annotations

import abc
import logging
import re
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from chrysalis.core.errors import MirrorError as MirrorError  # re-exported: it lives in errors.py
from chrysalis.core.errors import NotFound
from chrysalis.core.events import Change, events_of
from chrysalis.net.loopback import check_loopback_service
from chrysalis.search.assisted import assisted_retrieve as assisted_retrieve  # re-exported

if TYPE_CHECKING:
    from chrysalis.core.models import RetrievedItem
    from chrysalis.memory import Memory

log = logging.getLogger(__name__)


@dataclass
class MirrorHealth:
    """What the mirror did last, for status (never holds a secret)."""

    last_push: dict[str, Any] = field(default_factory=dict)
    last_pull: dict[str, Any] = field(default_factory=dict)
    last_search: dict[str, Any] = field(default_factory=dict)
    last_error: str | None = None
    consecutive_errors: int = 0

    def ok(self, what: str, result: dict[str, Any]) -> None:
        setattr(self, f"last_{what}", {"at": time.time(), "ok": True, **result})
        self.consecutive_errors = 0

    def failed(self, what: str, exc: BaseException) -> None:
        error = f"{type(exc).__name__}: {exc}"
        setattr(self, f"last_{what}", {"at": time.time(), "ok": False, "error": error})
        self.last_error = error
        self.consecutive_errors += 1


class Mirror(abc.ABC):
    """A service that mirrors the memory. Thread-safe.

    Every implementation passes the contract suite in ``tests/contracts/test_mirror.py``:

    - ``push()`` sends each bead this replica originated once, as a message holding its
      text and ``chrysalis_id`` / ``chrysalis_origin`` metadata; beads pulled from other
      replicas are theirs to send. A second push with nothing new sends nothing
      (``{"ops": 0}``). A push that dies after the service took a batch (a crash, a lost
      reply) sends none of it twice when it runs again, in this process or the next.
    - A forget, from any replica, of a bead this replica sent reaches the service at the next
      push (``"forgotten"`` counts them); where the bead was alone with this replica's beads
      its text leaves the service, and `forget_state` says ``gone``. A bead never sent is
      ``gone`` too ("never sent").
    - ``pull()`` brings what the service derived (facts) in as ordinary ops, each once:
      a second pull brings nothing.
    - ``search(query, k, timeout)`` returns at most ``k`` items whose ``signals`` carry the
      mirror's ``kind`` and whose provenance says ``source: zep``; never a bead forgotten here.
      ``timeout`` bounds the client's wait (assisted recall keeps its own, shorter, budget).
    - Failures raise `MirrorError` naming the service and the HTTP status, never the API key;
      they show in ``status()`` (``last_error``, ``consecutive_errors``), which never holds
      the key either, and no log line does.
    """

    kind: str
    health: MirrorHealth
    # The replica ids of the other memories beside this one (the daemon sets it): what they
    # wrote, met in a user they shared with this memory, is never shown from here.
    foreign: Callable[[], Collection[str]] = frozenset

    @abc.abstractmethod
    def push(self) -> dict[str, Any]:
        """Send the ops this replica originated that the mirror lacks; what moved."""

    @abc.abstractmethod
    def pull(self) -> dict[str, Any]:
        """Bring what the mirror derived (facts) into the memory as ops; what came."""

    @abc.abstractmethod
    def search(self, query: str, k: int, timeout: float) -> list[RetrievedItem]:
        """The mirror's hits for ``query`` as retrieval items (provenance ``source=zep``)."""

    @abc.abstractmethod
    def status(self) -> dict[str, Any]: ...

    @abc.abstractmethod
    def forget_state(self, bead_id: str) -> tuple[str, str]:
        """Where a forgotten bead stands in the service: (``gone`` | ``pending`` | ``marked``,
        why), for its forget receipt."""

    @abc.abstractmethod
    def probe(self) -> None:
        """Raise `MirrorError` unless the service answers now, with our key: a drop asks
        first, and is refused (nothing changed) rather than leave the memory's text there."""

    @abc.abstractmethod
    def erase_all(self, replicas: Collection[str]) -> dict[str, Any]:
        """The memory is dropped: take out of the service everything this replica sent there
        (whole sessions: the memory is gone everywhere, whoever of ``replicas``, the memory's
        replica ids, wrote to them). What was done, for the drop's receipt: ``kind``, ``url``,
        ``user_id``, ``state`` (``gone``, or ``marked`` / ``kept`` when the service keeps
        something, each named in ``kept`` with why), ``why``, ``sessions`` (deleted).
        `MirrorError` when the service fails part way: calling again finishes the work."""

    def close(self) -> None:  # noqa: B027 - optional
        """Release connections."""


class OpLogMirror(Mirror):
    """A mirror fed from this replica's own ops, in order, each exactly once.

    Consecutive ops of one *group* (``_group``: e.g. beads of one session) go in one call of at
    most ``batch``. Before the call the batch is recorded as in flight in LMDB; after the
    service confirmed, the cursor moves and the record goes, in one commit. A push that finds a
    batch in flight (a crash, a lost reply) hands it to ``_recover``, which must not send twice
    what already arrived.
    """

    def __init__(
        self, memory: Memory, client: Any, base_url: str, user_id: str, meta: str, batch: int
    ) -> None:
        self.memory = memory
        self.store = memory.store
        self.client = client  # the SDK's client
        self.base_url = base_url
        self.user_id = user_id
        self.batch = batch
        self.health = MirrorHealth()
        self._meta = meta  # this mirror's prefix for meta names
        self._push_lock = threading.Lock()
        self._pull_lock = threading.Lock()
        self.earlier_users = self._earlier_users()

    def _earlier_users(self) -> list[str]:
        """The other users of this service this memory mirrored to before (a changed
        ``zep_user_id``, or a named memory made when every memory defaulted to
        ``chrysalis``): their cursors are here. What it sent them stays there; under this
        user it sends its beads again."""
        kind = self._meta.split(":", 1)[0] + ":"
        return sorted(
            name[len(kind) : -len(":cursor")]
            for name, value in self.memory.reader.metas(kind).items()
            # an int: a bead id ending in ":cursor" has a session name as its value
            if name.endswith(":cursor") and type(value) is int and name != self._meta + "cursor"
        )

    # ---- push and pull, with their health -------------------------------------------------------

    def push(self) -> dict[str, Any]:
        return self._guarded("push", self._push_lock, self._push)

    def pull(self) -> dict[str, Any]:
        return self._guarded("pull", self._pull_lock, self._pull)

    def _guarded(self, what: str, lock: threading.Lock, fn: Any) -> dict[str, Any]:
        try:
            # every push and pull: a self-hosted service's port can be taken while it is down
            check_loopback_service(self.base_url, self.kind, MirrorError)
            with lock:
                result: dict[str, Any] = fn()
        except Exception as exc:
            self.health.failed(what, exc)
            raise
        self.health.ok(what, result)
        return result

    def probe(self) -> None:
        check_loopback_service(self.base_url, self.kind, MirrorError)
        self._probe()

    def erase_all(self, replicas: Collection[str]) -> dict[str, Any]:
        check_loopback_service(self.base_url, self.kind, MirrorError)
        with self._push_lock:  # no push of ours races the erase
            place = self._erase_all({*replicas, self.store.replica_id})
        return {"kind": self.kind, "url": self.base_url, "user_id": self.user_id, **place}

    @abc.abstractmethod
    def _probe(self) -> None: ...

    @abc.abstractmethod
    def _erase_all(self, ours: set[str]) -> dict[str, Any]:
        """`erase_all` without its common fields; ``ours``: the memory's replica ids."""

    def _push(self) -> dict[str, Any]:
        sent = self._push_ops()
        forgotten = self._push_forgets()
        return {"ops": sent, "objects": sent, "bytes": 0, "forgotten": forgotten}

    @abc.abstractmethod
    def _pull(self) -> dict[str, Any]: ...

    @abc.abstractmethod
    def _forget(self, session: str, bead_id: str) -> str:
        """Take a bead this replica sent (to ``session``) out of the service; says how:
        ``erased`` (its text left the service) or ``marked`` (the service keeps it, marked
        forgotten: it cannot delete it)."""

    def forget_state(self, bead_id: str) -> tuple[str, str]:
        """Where a forgotten bead stands in the service, for its receipt: (state, why)."""
        if self.store.get_meta(self._meta + "bead:" + bead_id) is not None:
            why = f"{self.kind} holds its text until the mirror's next push takes it out"
            if self.health.last_error:
                why += f"; the last attempt failed: {self.health.last_error}"
            return "pending", why
        done = self.store.get_meta(self._meta + "forgot:" + bead_id)
        if done == "erased":
            return "gone", f"erased from {self.kind}"
        if done == "marked":
            return "marked", f"{self.kind} keeps its text marked forgotten (it cannot delete it)"
        return "gone", f"this replica never sent it to {self.kind}"

    def _push_forgets(self) -> int:
        """Take forgets (from any replica) of beads this replica sent to the service."""
        name = self._meta + "forgets"
        seen = self.store.get_meta(name) or {}
        vv, done = dict(seen), 0
        for op in self.memory.ops_since(seen):
            vv[op["replica"]] = max(vv.get(op["replica"], 0), op["seq"])
            if not any(e.kind == "bead" and e.change is Change.ERASED for e in events_of(op)):
                continue
            session = self.store.get_meta(self._meta + "bead:" + op["target"])
            if session is None:
                continue  # not ours to take out
            how = self._forget(session, op["target"])
            self.store.put_metas(
                {
                    self._meta + "bead:" + op["target"]: None,
                    self._meta + "forgot:" + op["target"]: how,
                }
            )
            done += 1
        if vv != seen:
            self.store.put_meta(name, vv)
        return done

    def _add_fact_node(self, uuid: str, text: str, metadata: dict[str, Any], weight: float) -> bool:
        """A fact the service derived as a node ``zep-fact-<uuid>`` linked from the memory's
        user node; False if it is here already (pulled by us or by another replica)."""
        node_id = safe_id(f"zep-fact-{uuid}")
        try:
            self.memory.get_node(node_id)
            return False
        except NotFound:
            pass
        user = safe_id(f"zep-user-{self.user_id}")
        try:
            self.memory.get_node(user)
        except NotFound:
            self.memory.add_node(user, "zep_user", name=self.user_id, metadata={"source": "zep"})
        self.memory.add_node(node_id, "fact", name=text[:512], metadata=metadata)
        self.memory.add_edge(user, node_id, "zep_fact", weight=weight)
        return True

    def status(self) -> dict[str, Any]:
        h = self.health
        return {
            "kind": self.kind,
            "url": self.base_url,
            "user_id": self.user_id,
            "earlier_users": self.earlier_users,
            "pushed_through_seq": self.store.get_meta(self._meta + "cursor") or 0,
            "pending_ops": self.pending_ops(),
            "last_push": h.last_push,
            "last_pull": h.last_pull,
            "last_search": h.last_search,
            "last_error": h.last_error,
            "consecutive_errors": h.consecutive_errors,
        }

    def close(self) -> None:
        """Close the SDK's HTTP connections (both Zep SDKs keep an httpx client inside)."""
        wrapper = getattr(self.client, "_client_wrapper", None)
        httpx_client = getattr(getattr(wrapper, "httpx_client", None), "httpx_client", None)
        if httpx_client is not None:
            httpx_client.close()

    # ---- the op log -----------------------------------------------------------------------------

    @abc.abstractmethod
    def _group(self, op: dict[str, Any]) -> list[Any] | None:
        """The group an op is sent with, or None if it is not sent."""

    @abc.abstractmethod
    def _send(self, flight: dict[str, Any]) -> int:
        """Send a batch ``{"group", "ids", "first", "last"}``; how many items went."""

    @abc.abstractmethod
    def _recover(self, flight: dict[str, Any]) -> int:
        """Make sure a batch of unknown fate arrived, without sending anything twice."""

    def _sent(self, flight: dict[str, Any]) -> dict[str, Any]:
        """Meta to record with the cursor once a batch arrived."""
        return {}

    def _push_ops(self) -> int:
        from chrysalis.store.faults import fault

        store, sent = self.memory.store, 0
        inflight = store.get_meta(self._meta + "inflight")
        if inflight:
            sent += self._recover(inflight)
            store.put_metas(self._done(inflight))
        cursor = int(store.get_meta(self._meta + "cursor") or 0)
        while True:
            ops = self.memory.reader.ops_range(store.replica_id, cursor, 1000)
            if not ops:
                return sent
            group, ids, first, last = None, list[str](), 0, cursor
            for op in ops:
                key = self._group(op)
                if key is not None:
                    if ids and (key != group or len(ids) >= self.batch):
                        break
                    group, first = key, first or op["seq"]
                    ids.append(op["target"])
                last = op["seq"]
            if ids:
                flight = {"group": group, "ids": ids, "first": first, "last": last}
                store.put_meta(self._meta + "inflight", flight)
                sent += self._send(flight)
                fault(f"{self.kind}-after-send")
                store.put_metas(self._done(flight))
            else:
                store.put_meta(self._meta + "cursor", last)
            cursor = last

    def _done(self, flight: dict[str, Any]) -> dict[str, Any]:
        return {
            self._meta + "cursor": flight["last"],
            self._meta + "inflight": None,
            **self._sent(flight),
        }

    def pending_ops(self) -> int:
        store = self.memory.store
        done = int(store.get_meta(self._meta + "cursor") or 0)
        return max(0, self.memory.version_vector().get(store.replica_id, 0) - done)


_UNSAFE = re.compile(r"[^A-Za-z0-9._:@-]")


def safe_id(text: str) -> str:
    """``text`` as an id: characters the id pattern rejects become ``_``, at most 128."""
    return _UNSAFE.sub("_", text)[:128]
