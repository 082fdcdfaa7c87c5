"""`ChrysalisStore`: LangGraph's long-term memory (`BaseStore`) kept in a Chrysalis memory.

::

    from langgraph.graph import StateGraph
    from chrysalis.integrations.langgraph import ChrysalisStore

    store = ChrysalisStore()                  # the daemon on $CHRYSALIS_SOCKET, memory "default"
    graph = builder.compile(store=store)      # nodes: runtime.store / get_store()

How items are kept. The store talks to the daemon over its socket (`chrysalis.Client`): an
agent runs in its own process, and the daemon is the one process that may open the data dir;
through it the items are indexed, synced to the other laptops and scanned for credentials like
every other bead. An item is one bead:

- ``content``: ``{"namespace": [...], "key": ..., "value": {...}, "created_at": ...}`` as
  JSON, so fused retrieval (keywords, vectors) finds it by its words;
- ``session_id``: ``langgraph:<hash of the namespace>``, so one namespace reads as one session
  and a `get` walks only its namespace;
- ``tags``: ``langgraph:store``, ``langgraph:p:<hash>`` for each prefix of the namespace (how
  `search` and `list_namespaces` select), ``langgraph:k:<hash of namespace and key>``;
- ``role`` ``note``, ``source`` ``langgraph``.

Beads are append-only, so a `put` appends the new version and then forgets every older
version of that key it sees (each keeping the newest), and a `delete` forgets every version:
what remains of a deleted item is, per bead, the forget receipt (``client.forget_receipt(id)``
for the ids `forget` returns) and an erased stub with its id and time. Reads take the newest
version, so concurrent puts of one key end with the last one the daemon ordered, and with one
bead once every put has returned.

Credentials: values are scanned before they are sent (``secrets=``: ``"redact"`` by default,
``"refuse"``, ``"off"``; `chrysalis.integrations._beads.safe_json`), so what `get` answers
shows ``[REDACTED:<kind>]`` where a credential was, and a warning is logged naming the kinds
and fields (never the secret). A namespace label or key that holds a credential is refused:
they are kept as given, to be found again.

Not supported: TTLs (``supports_ttl`` is False: a ``ttl`` raises `NotImplementedError`, as
`BaseStore` does), and ``index=`` on a put (every item's whole JSON is indexed).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)

from chrysalis.client import Client
from chrysalis.core.errors import InvalidInput, NotFound
from chrysalis.integrations._beads import PAGE, check_policy, check_stored, newest_beads, safe_json
from chrysalis.secrets.scan import describe, redact

if TYPE_CHECKING:
    from collections.abc import Callable

    from chrysalis.core.models import Bead

__all__ = ["STORE_TAG", "ChrysalisStore", "item_tag", "namespace_session", "prefix_tag"]

log = logging.getLogger("chrysalis.integrations")

STORE_TAG = "langgraph:store"
SOURCE = "langgraph"  # every item bead's source
MAX_DEPTH = 64  # labels in a namespace: each prefix is a tag, and a bead holds 256 tags
_VERSION = "langgraph/1"  # in every hash, so another layout could live beside this one
_OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def _hash(obj: Any) -> str:
    text = json.dumps([_VERSION, obj], ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def namespace_session(namespace: tuple[str, ...]) -> str:
    """The session id of a namespace's items."""
    return f"langgraph:{_hash(list(namespace))}"


def prefix_tag(prefix: tuple[str, ...]) -> str:
    """The tag every item under ``prefix`` carries (``()``: every item of the store)."""
    return f"langgraph:p:{_hash(list(prefix))}" if prefix else STORE_TAG


def item_tag(namespace: tuple[str, ...], key: str) -> str:
    """The tag of every version of one item."""
    return f"langgraph:k:{_hash([list(namespace), key])}"


def _time(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, UTC)


def _check_text(text: Any, what: str) -> str:
    if not isinstance(text, str):
        raise InvalidInput(f"{what} must be a string, not {type(text).__name__}")
    try:
        text.encode()
    except UnicodeEncodeError:
        raise InvalidInput(f"{what} holds a lone surrogate: it cannot be stored") from None
    return text


def _check_labels(labels: Any, what: str) -> tuple[str, ...]:
    if not isinstance(labels, tuple | list):
        raise InvalidNamespaceError(f"{what} must be a tuple of strings, not {labels!r:.80}")
    if len(labels) > MAX_DEPTH:
        raise InvalidNamespaceError(f"{what} has {len(labels)} labels; at most {MAX_DEPTH}")
    return tuple(_check_text(label, f"a label of the {what}") for label in labels)


def _decode(bead: Bead) -> Item | None:
    """The item a bead holds, or None when it is not one of this store's (or its tags and
    its text disagree: a bead claiming another namespace than it is filed under)."""
    try:
        env = json.loads(bead.content)
    except ValueError:
        return None
    if not isinstance(env, dict):
        return None
    ns, key, value = env.get("namespace"), env.get("key"), env.get("value")
    if not (
        isinstance(ns, list)
        and all(isinstance(label, str) for label in ns)
        and isinstance(key, str)
        and isinstance(value, dict)
    ):
        return None
    namespace = tuple(ns)
    if item_tag(namespace, key) not in bead.tags:
        return None
    created = env.get("created_at")
    if not isinstance(created, int | float) or isinstance(created, bool):
        created = bead.ts
    return Item(
        value=value,
        key=key,
        namespace=namespace,
        created_at=_time(created),
        updated_at=_time(bead.ts),
    )


def _check_filter(want: Any, where: str = "filter") -> None:
    if isinstance(want, Mapping):
        for k, v in want.items():
            if not isinstance(k, str):
                raise InvalidInput(f"{where}: keys must be strings, not {k!r:.40}")
            if k.startswith("$") and k not in _OPERATORS:
                raise InvalidInput(
                    f"{where}: unknown operator {k!r:.40}; known: {', '.join(_OPERATORS)}"
                )
            _check_filter(v, f"{where}.{k}")
    elif isinstance(want, list | tuple):
        for n, v in enumerate(want):
            _check_filter(v, f"{where}[{n}]")


def matches(value: Any, want: Any) -> bool:
    """Whether a stored field matches a filter's, as LangGraph's stores compare: equal
    scalars, lists element by element, mappings field by field (fields not named are
    ignored), or operators ``{"$gt": 3}`` (``$eq $ne $gt $gte $lt $lte``; an order between a
    number and a string, or with null, does not hold)."""
    if isinstance(want, Mapping):
        if any(k.startswith("$") for k in want):
            return all(_compare(value, op, arg) for op, arg in want.items())
        return isinstance(value, dict) and all(matches(value.get(k), v) for k, v in want.items())
    if isinstance(want, list | tuple):
        return (
            isinstance(value, list)
            and len(value) == len(want)
            and all(matches(a, b) for a, b in zip(value, want, strict=True))
        )
    return bool(value == want)


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _compare(value: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return bool(value == arg)
    if op == "$ne":
        return bool(value != arg)
    if not ((_number(value) and _number(arg)) or (isinstance(value, str) and isinstance(arg, str))):
        return False
    if op == "$gt":
        return bool(value > arg)
    if op == "$gte":
        return bool(value >= arg)
    if op == "$lt":
        return bool(value < arg)
    return bool(value <= arg)  # $lte: `_check_filter` let no other through


def _namespace_matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    return all(p == "*" or p == n for p, n in zip(path, part, strict=True)) if path else True


class ChrysalisStore(BaseStore):
    """LangGraph's `BaseStore` over the Chrysalis daemon: namespaces, put, get, search (a
    query ranks by fused retrieval; a filter matches value fields), delete, list_namespaces,
    batch and its async twin.

    ``ChrysalisStore(client=None, *, socket=None, memory=None, secrets="redact")``: with no
    ``client``, one is opened on ``socket`` (``$CHRYSALIS_SOCKET`` or the default path) for
    named memory ``memory`` and closed by `close`. A batch is checked whole before anything
    is changed (bad input raises `InvalidNamespaceError` or `chrysalis.InvalidInput`), then
    runs in order. The async methods run the same calls on a worker thread: one client then
    serves every event loop (an httpx async client stays bound to the loop it first ran on,
    and LangGraph apps call ``asyncio.run`` more than once)."""

    supports_ttl = False

    def __init__(
        self,
        client: Client | None = None,
        *,
        socket: str | Path | None = None,
        memory: str | None = None,
        secrets: str = "redact",
    ) -> None:
        if client is not None and (socket is not None or memory is not None):
            raise InvalidInput("give a client, or a socket and memory for a new one; not both")
        self.secrets = check_policy(secrets)
        self._own = client is None
        self.client = client if client is not None else Client(socket, memory=memory)

    def close(self) -> None:
        """Close the client if this store opened it."""
        if self._own:
            self.client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- BaseStore ----------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        runs = [self._prepare(op) for op in ops]  # every op checked before any runs
        return [run() for run in runs]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    def forget(self, namespace: tuple[str, ...], key: str) -> list[str]:
        """`delete`, answering the ids of the beads forgotten (every version of the item):
        ``client.forget_receipt(id)`` says where each is gone."""
        namespace = _check_labels(namespace, "namespace")
        return self._delete(namespace, _check_text(key, "key"))

    # ---- one op each ----------------------------------------------------------------------

    def _prepare(self, op: Op) -> Callable[[], Result]:
        if isinstance(op, GetOp | PutOp):
            op = op._replace(
                namespace=_check_labels(op.namespace, "namespace"),
                key=_check_text(op.key, "key"),
            )
        validate_op_namespace(op)
        if isinstance(op, GetOp):
            namespace, key = op.namespace, op.key
            return lambda: self._get(namespace, key)
        if isinstance(op, PutOp):
            if op.ttl is not None:
                raise NotImplementedError("ChrysalisStore keeps no TTL: put with ttl=None")
            if op.value is None:
                namespace, key = op.namespace, op.key

                def delete() -> None:
                    self._delete(namespace, key)

                return delete
            return self._prepare_put(op)
        if isinstance(op, SearchOp):
            return self._prepare_search(op)
        if isinstance(op, ListNamespacesOp):
            return self._prepare_list(op)
        raise InvalidInput(f"unknown store operation: {type(op).__name__}")

    def _newest(self, namespace: tuple[str, ...], key: str) -> tuple[Bead, Item] | None:
        """The item's newest version that is one (a bead filed under the item that holds
        something else, written by hand, is passed over)."""
        versions = newest_beads(
            self.client,
            tag=item_tag(namespace, key),
            session_id=namespace_session(namespace),
            first=1,  # one version, nearly always
        )
        for bead in versions:
            item = _decode(bead)
            if item is not None and item.namespace == namespace and item.key == key:
                return bead, item
        return None

    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        found = self._newest(namespace, key)
        return None if found is None else found[1]

    def _prepare_put(self, op: PutOp) -> Callable[[], None]:
        namespace, key = op.namespace, op.key
        if not namespace:
            raise InvalidNamespaceError("Namespace cannot be empty.")
        if namespace[0] == "langgraph":  # BaseStore.put refuses it; so must a batch
            raise InvalidNamespaceError(
                f'Root label for namespace cannot be "langgraph". Got: {namespace}'
            )
        if not isinstance(op.value, Mapping):
            raise InvalidInput(f"a value must be a dict, not {type(op.value).__name__}")
        # Checked (and scanned) now, so a bad value fails the batch before anything changes;
        # created_at is filled in when the put runs (the older version is read then).
        what = f"the value of key {redact(key)[0][:60]!r}"  # messages get logged
        env = {"namespace": list(namespace), "key": key, "value": dict(op.value)}
        text, findings = safe_json(env, self.secrets, what)
        if json.loads(text)["namespace"] != list(namespace) or json.loads(text)["key"] != key:
            raise InvalidInput(
                "the namespace or the key holds a credential; they are stored as given (to be "
                "found again), so choose other labels. Nothing was stored"
            )
        if findings:
            log.warning("langgraph store: redacted %s before storing", describe(findings))
        value = json.loads(text)["value"]

        def put() -> None:
            older = self._newest(namespace, key)
            body = {"namespace": list(namespace), "key": key, "value": value}
            if older is not None:
                body["created_at"] = older[1].created_at.timestamp()
            content, _ = safe_json(body, "off", what)  # scanned above; only a time was added
            tags = [STORE_TAG]
            tags += [prefix_tag(namespace[:n]) for n in range(1, len(namespace) + 1)]
            tags.append(item_tag(namespace, key))
            bead = self.client.remember(
                content,
                role="note",
                session_id=namespace_session(namespace),
                tags=tags,
                source=SOURCE,
            )
            check_stored(self.client, {bead.id: content}, [bead], what)
            self._keep_newest(namespace, key)

        return put

    def _keep_newest(self, namespace: tuple[str, ...], key: str) -> None:
        """Forget every version of the item but the newest. Each put runs this after its own
        commit, so the last put to commit leaves one bead; none forgets the newest there is."""
        versions = self.client.last_beads(
            PAGE, session_id=namespace_session(namespace), tag=item_tag(namespace, key)
        )
        for bead in versions[:-1]:
            with contextlib.suppress(NotFound):  # another put forgot it first
                self.client.forget(bead.id)

    def _delete(self, namespace: tuple[str, ...], key: str) -> list[str]:
        ids: list[str] = []
        while True:
            done = self.client.forget_where(
                session_id=namespace_session(namespace),
                tag=item_tag(namespace, key),
                dry_run=False,
            )
            ids += done["ids"]
            if not done.get("more"):
                return ids

    def _prepare_search(self, op: SearchOp) -> Callable[[], list[SearchItem]]:
        prefix = _check_labels(op.namespace_prefix, "namespace prefix")
        for name, n in (("limit", op.limit), ("offset", op.offset)):
            if not isinstance(n, int) or isinstance(n, bool) or n < 0:
                raise InvalidInput(f"{name} must be an int of 0 or more, not {n!r:.40}")
        if op.filter is not None and not isinstance(op.filter, Mapping):
            raise InvalidInput(f"filter must be a dict, not {type(op.filter).__name__}")
        _check_filter(op.filter)
        if op.query is not None:
            _check_text(op.query, "query")
        want = op.offset + op.limit

        def keep(item: Item) -> bool:
            return item.namespace[: len(prefix)] == prefix and (
                not op.filter or matches(item.value, op.filter)
            )

        def listed() -> list[SearchItem]:
            found: dict[tuple[tuple[str, ...], str], SearchItem] = {}
            seen: set[tuple[tuple[str, ...], str]] = set()
            if want == 0:
                return []
            for bead in newest_beads(self.client, tag=prefix_tag(prefix)):
                item = _decode(bead)
                if item is None or (item.namespace, item.key) in seen:
                    continue
                seen.add((item.namespace, item.key))  # newest first: the first is current
                if keep(item):
                    found[(item.namespace, item.key)] = _search_item(item, None)
                    if len(found) >= want:
                        break
            return list(found.values())[op.offset :]

        def ranked() -> list[SearchItem]:
            assert op.query is not None
            k = min(PAGE, max(10, want * (4 if op.filter else 2)))
            while True:
                found = self._ranked(op.query, prefix, k, keep, want)
                if len(found) >= want or found.exhausted or k >= PAGE:
                    return list(found)[op.offset : op.offset + op.limit]
                k = min(PAGE, 2 * k)

        if op.query is None or not op.query.strip():
            return lambda: listed()[: op.limit]
        return ranked

    def _ranked(
        self, query: str, prefix: tuple[str, ...], k: int, keep: Callable[[Item], bool], want: int
    ) -> _Found:
        result = self.client.recall(
            query, k=k, filters={"tags": [prefix_tag(prefix)], "kinds": ["bead"]}
        )
        found = _Found(exhausted=len(result.items) < k)
        seen: set[tuple[tuple[str, ...], str]] = set()
        for hit in result.items:
            if hit.kind != "bead":
                continue
            bead = self._current(hit.id, hit.text)
            item = None if bead is None else _decode(bead)
            if item is None or (item.namespace, item.key) in seen or not keep(item):
                continue
            seen.add((item.namespace, item.key))
            found.append(_search_item(item, hit.score))
            if len(found) >= want:
                break
        return found

    def _current(self, bead_id: str, text: str) -> Bead | None:
        """The bead ``bead_id`` if it is still its item's newest version, else None (a
        version a concurrent put has not forgotten yet is no answer)."""
        try:
            # retrieval shows a bead as "<source>: <content>"
            env = json.loads(text.removeprefix(f"{SOURCE}: "))
            namespace, key = tuple(env["namespace"]), env["key"]
        except (ValueError, TypeError, KeyError):  # the hit's text was cut: read the bead
            try:
                item = _decode(self.client.get_bead(bead_id))
            except NotFound:
                return None
            if item is None:
                return None
            namespace, key = item.namespace, item.key
        if not isinstance(key, str) or not all(isinstance(x, str) for x in namespace):
            return None
        newest = self._newest(tuple(namespace), key)
        return newest[0] if newest is not None and newest[0].id == bead_id else None

    def _prepare_list(self, op: ListNamespacesOp) -> Callable[[], list[tuple[str, ...]]]:
        conditions = tuple(op.match_conditions or ())
        for condition in conditions:
            _check_labels(tuple(condition.path), "match condition")
            if condition.match_type not in ("prefix", "suffix"):
                raise InvalidInput(f"match_type must be prefix or suffix: {condition.match_type}")
        for name, n in (("limit", op.limit), ("offset", op.offset)):
            if not isinstance(n, int) or isinstance(n, bool) or n < 0:
                raise InvalidInput(f"{name} must be an int of 0 or more, not {n!r:.40}")
        if op.max_depth is not None and (
            not isinstance(op.max_depth, int) or isinstance(op.max_depth, bool) or op.max_depth < 1
        ):
            raise InvalidInput(f"max_depth must be a positive int, not {op.max_depth!r:.40}")
        # Walk only the items under the longest fixed start a prefix condition names.
        fixed: tuple[str, ...] = ()
        for condition in conditions:
            if condition.match_type == "prefix":
                start = []
                for label in condition.path:
                    if label == "*":
                        break
                    start.append(label)
                fixed = max(fixed, tuple(start), key=len)

        def run() -> list[tuple[str, ...]]:
            namespaces: set[tuple[str, ...]] = set()
            for bead in newest_beads(self.client, tag=prefix_tag(fixed)):
                item = _decode(bead)
                if item is not None and all(
                    _namespace_matches(c, item.namespace) for c in conditions
                ):
                    namespaces.add(item.namespace)
            if op.max_depth is not None:
                namespaces = {ns[: op.max_depth] for ns in namespaces}
            return sorted(namespaces)[op.offset : op.offset + op.limit]

        return run


class _Found(list[SearchItem]):
    """Search hits, and whether the ranking had no more to give."""

    def __init__(self, *, exhausted: bool) -> None:
        super().__init__()
        self.exhausted = exhausted


def _search_item(item: Item, score: float | None) -> SearchItem:
    return SearchItem(
        namespace=item.namespace,
        key=item.key,
        value=item.value,
        created_at=item.created_at,
        updated_at=item.updated_at,
        score=score,
    )
