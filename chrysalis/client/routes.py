"""`Routes`: each route of the daemon's API as a `Call` (method, path, body, how to read the
answer), and the request bodies the clients build. No I/O: `chrysalis.client` sends them.

Import them from `chrysalis.client`, where agents find them with the clients.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, TypeVar, Unpack
from urllib.parse import quote

from chrysalis.core.vocab import BeadFields, bead_row

if TYPE_CHECKING:
    # Only named in annotations: the daemon imports this module (REDACTED_HEADER) and does
    # not otherwise need httpx (~0.1 s of CPU to import).
    import httpx

    from chrysalis.core.models import (
        Bead,
        Context,
        Edge,
        Neighbor,
        Node,
        Persona,
        RetrievalResult,
        Skill,
    )
    from chrysalis.forget.receipt import ForgetReceipt

__all__ = [
    "REDACTED_HEADER", "Call", "Routes", "bead_body", "ingest_body", "persona_patch",
    "raw_answer", "redactions", "selector_body",
]  # fmt: skip

REDACTED_HEADER = "Chrysalis-Redacted"

T = TypeVar("T")


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request and how to read its answer (`Routes` makes them; both clients send them)."""

    method: str
    path: str
    parse: Callable[[httpx.Response], T]
    json: Any = None
    params: Mapping[str, Any] = field(default_factory=dict)
    content: bytes | Iterable[bytes] | None = None


def _json(r: httpx.Response) -> Any:
    return r.json()


def _nothing(r: httpx.Response) -> None:
    return None


# pydantic and the models are imported at the first answer that needs them, not with the
# client: the CLI prints raw JSON and starts ~80 ms faster without them.


def _model(name: str) -> Callable[[httpx.Response], Any]:
    def parse(r: httpx.Response) -> Any:
        from chrysalis.core import models

        return getattr(models, name).model_validate_json(r.content)

    return parse


def _receipt(r: httpx.Response) -> Any:
    from chrysalis.forget.receipt import ForgetReceipt

    return ForgetReceipt.model_validate_json(r.content)


def _list(name: str) -> Callable[[httpx.Response], Any]:
    return lambda r: _adapter(name).validate_json(r.content)


@functools.cache
def _adapter(name: str) -> Any:
    from pydantic import TypeAdapter

    from chrysalis.core import models

    return TypeAdapter(list[getattr(models, name)])  # type: ignore[arg-type,misc]


def raw_answer(r: httpx.Response) -> Any:
    """An answer as it came: decoded JSON, text, bytes, or None for 204."""
    if r.status_code == 204:
        return None
    kind = r.headers.get("content-type", "")
    if kind.startswith("application/json"):
        return r.json()
    return r.text if kind.startswith("text/") else r.content


def redactions(r: httpx.Response) -> list[dict[str, Any]]:
    """What the daemon redacted from the beads it was sent (the ``Chrysalis-Redacted``
    header): ``[{"bead", "kind", "field", "start", "end"}]``, empty when nothing."""
    value = r.headers.get(REDACTED_HEADER)
    if not value:
        return []
    import json

    found = json.loads(value)
    return found if isinstance(found, list) else []


def _seg(id: str) -> str:
    """An id as one path segment: whatever it holds, it cannot climb out of its route."""
    return quote(id, safe="")


def _drop_none(d: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def _ts(value: Any) -> Any:
    """A timestamp as JSON can carry it: a datetime as ISO 8601, anything else as given."""
    return value.isoformat() if isinstance(value, datetime) else value


def bead_body(content: str, **fields: Unpack[BeadFields]) -> dict[str, Any]:
    """A remember body: `vocab.bead_row`, the one definition of a bead's fields."""
    return bead_row(content, fields)


def _time(value: datetime | float | str | None) -> str | float | None:
    return value.isoformat() if isinstance(value, datetime) else value


class Routes:
    """Each route as a `Call`: the one place that knows paths, bodies and answer types.

    ``client.raw(Routes.recall("tea", 5, None, "fusion", None))`` sends one and returns the
    answer as decoded JSON (what the CLI prints)."""

    ping: Call[bool] = Call("GET", "/_ping", lambda r: r.text == "OK")
    health: Call[dict[str, Any]] = Call("GET", "/v1/health", _json)
    status: Call[dict[str, Any]] = Call("GET", "/v1/status", _json)
    persona: Call[Persona] = Call("GET", "/v1/persona", _model("Persona"))
    skills: Call[list[Skill]] = Call("GET", "/v1/skills", _list("Skill"))
    export: Call[bytes] = Call("GET", "/v1/export", lambda r: r.content)
    doctor: Call[dict[str, Any]] = Call("GET", "/v1/doctor", _json)
    metrics: Call[str] = Call("GET", "/metrics", lambda r: r.text)
    sessions: Call[list[dict[str, Any]]] = Call("GET", "/v1/sessions", _json)

    memories: Call[dict[str, Any]] = Call("GET", "/v1/memories", _json)
    ui: Call[dict[str, Any]] = Call("POST", "/v1/ui", _json)  # the inspector's address

    @staticmethod
    def create_memory(name: str, settings: Mapping[str, Any]) -> Call[dict[str, Any]]:
        body = {"name": name, "settings": dict(settings)}
        return Call("POST", "/v1/memories", _json, json=body)

    @staticmethod
    def drop_memory(name: str) -> Call[dict[str, Any]]:
        return Call("DELETE", f"/v1/memories/{_seg(name)}", _json)

    @staticmethod
    def remember(body: dict[str, Any]) -> Call[Bead]:
        return Call("POST", "/v1/beads", _model("Bead"), json=body)

    @staticmethod
    def remember_noting(body: dict[str, Any]) -> Call[tuple[Any, list[dict[str, Any]]]]:
        """`remember`, answered as (the bead as JSON, `redactions`): what the CLI prints."""
        return Call("POST", "/v1/beads", lambda r: (r.json(), redactions(r)), json=body)

    @staticmethod
    def remember_many(beads: Iterable[Mapping[str, Any]]) -> Call[list[Bead]]:
        return Call("POST", "/v1/beads", _list("Bead"), json=[dict(b) for b in beads])

    @staticmethod
    def get_bead(id: str) -> Call[Bead]:
        return Call("GET", f"/v1/beads/{_seg(id)}", _model("Bead"))

    @staticmethod
    def last_beads(
        n: int, session_id: str | None, filters: Mapping[str, Any] | None = None
    ) -> Call[list[Bead]]:
        """``filters``: tag, role, path, query, after, before (all must hold)."""
        chosen = {
            k: _time(v) if k in ("after", "before") else v for k, v in (filters or {}).items()
        }
        params = _drop_none({"limit": n, "session_id": session_id, **chosen})
        return Call("GET", "/v1/beads", _list("Bead"), params=params)

    @staticmethod
    def forget(id: str) -> Call[None]:
        return Call("DELETE", f"/v1/beads/{_seg(id)}", _nothing)

    @staticmethod
    def forget_receipt(id: str) -> Call[ForgetReceipt]:
        return Call("GET", f"/v1/forget/{_seg(id)}", _receipt)

    @staticmethod
    def forget_where(
        selector: Mapping[str, Any],
        dry_run: bool = True,
        expect: int | None = None,
        expect_digest: str | None = None,
    ) -> Call[dict[str, Any]]:
        """``POST /v1/forget``: a dry run (the default) or, with ``dry_run=False``, the
        forget; ``selector`` as `selector_body` makes it."""
        body = {**selector, "dry_run": dry_run}
        if expect is not None:
            body["expect"] = expect
        if expect_digest is not None:
            body["expect_digest"] = expect_digest
        return Call("POST", "/v1/forget", _json, json=body)

    @staticmethod
    def recall(
        query: str,
        k: int,
        token_budget: int | None,
        strategy: str,
        filters: Any,
        now: datetime | float | None = None,
        as_of: datetime | float | None = None,
        memories: Iterable[str] = (),
        min_score: float | None = None,
    ) -> Call[RetrievalResult]:
        body = _drop_none(
            {"query": query, "k": k, "token_budget": token_budget, "strategy": strategy,
             "filters": dict(filters) if filters else None, "now": _time(now),
             "as_of": _time(as_of), "memories": list(memories) or None,
             "min_score": min_score}
        )  # fmt: skip
        return Call("POST", "/v1/retrieve", _model("RetrievalResult"), json=body)

    @staticmethod
    def context(
        query: str,
        token_budget: int = 800,
        session_id: str | None = None,
        exclude: Iterable[str] = (),
        now: datetime | float | str | None = None,
        memories: Iterable[str] = (),
        recent: int | None = None,
    ) -> Call[Context]:
        body = _drop_none(
            {"query": query, "token_budget": token_budget, "session_id": session_id,
             "exclude": list(exclude) or None, "now": _time(now),
             "memories": list(memories) or None, "recent": recent}
        )  # fmt: skip
        return Call("POST", "/v1/context", _model("Context"), json=body)

    @staticmethod
    def add_node(
        id: str, type: str, name: str | None, labels: Iterable[str], metadata: Any
    ) -> Call[Node]:
        body = _drop_none(
            {"id": id, "type": type, "name": name, "labels": list(labels),
             "metadata": dict(metadata) if metadata else None}
        )  # fmt: skip
        return Call("POST", "/v1/kg/nodes", _model("Node"), json=body)

    @staticmethod
    def get_node(id: str) -> Call[Node]:
        return Call("GET", f"/v1/kg/nodes/{_seg(id)}", _model("Node"))

    @staticmethod
    def remove_node(id: str) -> Call[None]:
        return Call("DELETE", f"/v1/kg/nodes/{_seg(id)}", _nothing)

    @staticmethod
    def add_edge(
        source: str,
        target: str,
        predicate: str,
        id: str | None,
        weight: float,
        evidence: Iterable[str],
    ) -> Call[Edge]:
        body = _drop_none(
            {"source": source, "target": target, "predicate": predicate, "id": id,
             "weight": weight, "evidence": list(evidence)}
        )  # fmt: skip
        return Call("POST", "/v1/kg/edges", _model("Edge"), json=body)

    @staticmethod
    def add_fact(
        subject: str,
        predicate: str,
        object: str,
        type: str = "entity",
        weight: float = 1.0,
        evidence: Iterable[str] = (),
        valid_at: Any = None,
        invalid_at: Any = None,
    ) -> Call[Edge]:
        body = _drop_none(
            {"subject": subject, "predicate": predicate, "object": object, "type": type,
             "weight": weight, "evidence": list(evidence), "valid_at": _ts(valid_at),
             "invalid_at": _ts(invalid_at)}
        )  # fmt: skip
        return Call("POST", "/v1/kg/facts", _model("Edge"), json=body)

    @staticmethod
    def get_edge(id: str) -> Call[Edge]:
        return Call("GET", f"/v1/kg/edges/{_seg(id)}", _model("Edge"))

    @staticmethod
    def remove_edge(id: str) -> Call[None]:
        return Call("DELETE", f"/v1/kg/edges/{_seg(id)}", _nothing)

    @staticmethod
    def neighbors(
        node_id: str,
        depth: int,
        as_of: datetime | float | str | None = None,
        include_invalid: bool = False,
    ) -> Call[list[Neighbor]]:
        path = f"/v1/kg/nodes/{_seg(node_id)}/neighbors"
        params: dict[str, Any] = {"depth": depth}
        if as_of is not None:
            params["as_of"] = _time(as_of)
        if include_invalid:
            params["include_invalid"] = "true"
        return Call("GET", path, _list("Neighbor"), params=params)

    @staticmethod
    def put_persona(persona: Persona | Mapping[str, Any]) -> Call[Persona]:
        body = persona.model_dump() if hasattr(persona, "model_dump") else dict(persona)
        return Call("PUT", "/v1/persona", _model("Persona"), json=body)

    @staticmethod
    def update_persona(fields: Mapping[str, Any]) -> Call[Persona]:
        return Call("PATCH", "/v1/persona", _model("Persona"), json=dict(fields))

    @staticmethod
    def get_skill(id: str) -> Call[Skill]:
        return Call("GET", f"/v1/skills/{_seg(id)}", _model("Skill"))

    @staticmethod
    def put_skill(skill: Skill | Mapping[str, Any]) -> Call[Skill]:
        body = skill.model_dump() if hasattr(skill, "model_dump") else dict(skill)
        return Call(
            "PUT", f"/v1/skills/{_seg(str(body.get('id', '')))}", _model("Skill"), json=body
        )

    @staticmethod
    def delete_skill(id: str) -> Call[None]:
        return Call("DELETE", f"/v1/skills/{_seg(id)}", _nothing)

    @staticmethod
    def import_lines(lines: bytes | Iterable[bytes]) -> Call[dict[str, Any]]:
        return Call("POST", "/v1/import", _json, content=lines)

    @staticmethod
    def ingest(body: dict[str, Any]) -> Call[dict[str, Any]]:
        return Call("POST", "/v1/ingest", _json, json=body)

    @staticmethod
    def sync(
        push: bool = True,
        pull: bool = True,
        snapshot: bool = False,
        decommission: str | None = None,
        repair_format: bool = False,
    ) -> Call[dict[str, Any]]:
        body = {"push": push, "pull": pull, "snapshot": snapshot, "decommission": decommission}
        if repair_format:  # only when asked: an older daemon's body has no such field
            body["repair_format"] = True
        return Call("POST", "/v1/sync", _json, json=body)


def selector_body(
    session_id: str | None = None,
    path: str | None = None,
    tag: str | None = None,
    query: str | None = None,
    before: Any = None,
    after: Any = None,
    role: str | None = None,
) -> dict[str, Any]:
    """A selector of beads for `Routes.forget_where` (fields left None are not sent)."""
    body = {"session_id": session_id, "path": path, "tag": tag, "query": query,
            "before": _ts(before), "after": _ts(after), "role": role}  # fmt: skip
    return _drop_none(body)


def ingest_body(
    path: str | None, text: str | None, source: str | None, kind: str | None, session: str | None
) -> dict[str, Any]:
    body = {"path": path, "text": text, "source": source, "kind": kind, "session_id": session}
    return {k: v for k, v in body.items() if v is not None}


def persona_patch(
    name: str | None,
    description: str | None,
    goals: Iterable[str] | None,
    norms: Iterable[str] | None,
    skills: Iterable[str] | None,
    traits: Mapping[str, str | None] | None,
) -> dict[str, Any]:
    lists = {"goals": goals, "norms": norms, "skills": skills}
    body: dict[str, Any] = {k: list(v) for k, v in lists.items() if v is not None}
    if traits is not None:
        body["traits"] = dict(traits)
    return _drop_none({"name": name, "description": description}) | body
