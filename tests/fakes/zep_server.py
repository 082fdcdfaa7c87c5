"""A local stand-in for Zep's v2 API (the routes the ``zep-python`` 2.x SDK calls), stateful and
strict: each request is checked for its method, path, ``Authorization: Api-Key <key>`` header
and the body shape the real SDK sends. Anything else is answered the way Zep would (401, 404,
400) and recorded in ``problems``, which a test asserts empty.

It derives a fact from each message that states one ("X likes Y", "X prefers Y", "X lives in
Y", "X works at Y", "X uses Y"), like Zep's fact extraction would, and searches messages and
facts by word overlap. It can fail on demand: ``fail(500)``, ``fail(429, retry_after=1)``,
and ``delay`` seconds before every answer (or only for some routes).
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

ROLE_TYPES = {"norole", "system", "assistant", "user", "function", "tool"}
MESSAGE_KEYS = {"content", "role", "role_type", "metadata", "uuid", "created_at", "updated_at",
                "token_count"}  # fmt: skip
FACT = re.compile(r"\b(likes|prefers|lives in|works at|uses)\b", re.IGNORECASE)
WORDS = re.compile(r"\w+")


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up on a slow answer


def _words(text: str) -> set[str]:
    return {w.lower() for w in WORDS.findall(text)}


class FakeZep:
    """``with FakeZep(api_key="k") as zep: zep.url``; ``zep.messages(user)`` for assertions."""

    def __init__(self, api_key: str = "test-key") -> None:
        self.api_key = api_key
        self.lock = threading.Lock()
        self.users: dict[str, dict[str, Any]] = {}
        self.sessions: dict[str, dict[str, Any]] = {}
        self.facts: dict[str, dict[str, Any]] = {}
        self.v4_users: dict[str, dict[str, Any]] = {}  # by uuid
        self.threads: dict[str, dict[str, Any]] = {}
        self.edges: dict[str, dict[str, Any]] = {}
        self.replies: dict[tuple[str, str], tuple[int, Any]] = {}  # (method, Idempotency-Key)
        self.requests: list[tuple[str, str]] = []
        self.problems: list[str] = []
        self.delay = 0.0
        self.delay_routes: tuple[str, ...] = ()  # empty: every route
        self._failures: list[tuple[int, float | None, str, bool]] = []
        self.server = _Server(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeZep:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    # ---- for tests -------------------------------------------------------------------------

    def fail(
        self,
        status: int,
        times: int = 1,
        retry_after: float | None = None,
        route: str = "",
        landed: bool = False,
    ) -> None:
        """Answer the next ``times`` requests (to paths containing ``route``) with ``status``;
        with ``landed``, do the request first (its reply is what fails)."""
        with self.lock:
            self._failures += [(status, retry_after, route, landed)] * times

    def messages(self, user_id: str | None = None) -> list[dict[str, Any]]:
        with self.lock:
            return [
                m
                for s in self.sessions.values()
                if user_id is None or s["user_id"] == user_id
                for m in s["messages"]
            ]

    # ---- the server --------------------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            wbufsize = 1 << 16  # one send per answer (headers apart would meet delayed ACKs)
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(raw)

            def _handle(self, method: str) -> None:
                parts = urlsplit(self.path)
                query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                fake.requests.append((method, parts.path))
                if fake.delay and (
                    not fake.delay_routes or any(r in parts.path for r in fake.delay_routes)
                ):
                    time.sleep(fake.delay)
                injected = None
                with fake.lock:
                    for i, (status, retry_after, route, landed) in enumerate(fake._failures):
                        if route in parts.path:
                            del fake._failures[i]
                            headers = {"Retry-After": f"{retry_after:g}"} if retry_after else {}
                            injected = (status, headers)
                            if not landed:
                                return self._reply(status, {"message": "injected"}, headers)
                            break
                if self.headers.get("Authorization") != f"Api-Key {fake.api_key}":
                    fake.problems.append(f"{method} {parts.path}: bad or missing Authorization")
                    return self._reply(401, {"message": "unauthorized"})
                version = parts.path[len("/api/") : len("/api/v2")]
                if not parts.path.startswith(("/api/v2/", "/api/v4/")):
                    fake.problems.append(f"{method} {parts.path}: not under /api/v2 or v4")
                    return self._reply(404, {"message": "not found"})
                key = self.headers.get("Idempotency-Key")
                if version == "v4" and method in ("POST", "PATCH", "DELETE") and not key:
                    fake.problems.append(f"{method} {parts.path}: no Idempotency-Key")
                body = None
                if raw:
                    if not (self.headers.get("Content-Type") or "").startswith("application/json"):
                        fake.problems.append(f"{method} {parts.path}: body is not JSON")
                    body = json.loads(raw)
                path = parts.path[len("/api/v2/") :].strip("/").split("/")
                try:
                    with fake.lock:
                        if version == "v2":
                            status, reply = fake.route(method, path, query, body)
                        else:
                            status, reply = fake.route_v4(method, path, query, body, key)
                except _Refused as exc:
                    fake.problems.append(f"{method} {parts.path}: {exc}")
                    status, reply = 400, {"message": str(exc)}
                except _Missing as exc:
                    status, reply = 404, {"message": str(exc)}
                if injected is not None:  # it landed; the answer is lost
                    return self._reply(injected[0], {"message": "injected"}, injected[1])
                self._reply(status, reply)

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def do_PATCH(self) -> None:
                self._handle("PATCH")

            def do_DELETE(self) -> None:
                self._handle("DELETE")

        return Handler

    def route(
        self, method: str, path: list[str], query: dict[str, str], body: Any
    ) -> tuple[int, Any]:
        match method, path:
            case "POST", ["users"]:
                _keys(body, {"user_id", "email", "first_name", "last_name", "metadata"})
                uid = _str(body, "user_id")
                if uid in self.users:
                    raise _Refused(f"user {uid} exists")
                self.users[uid] = {"user_id": uid, "metadata": body.get("metadata") or {},
                                   "uuid": str(uuid.uuid4()), "created_at": _now()}  # fmt: skip
                return 201, self.users[uid]
            case "GET", ["users", uid]:
                return 200, self._user(uid)
            case "GET", ["users", uid, "sessions"]:
                self._user(uid)
                return 200, [self._session_view(s) for s in self.sessions.values()
                             if s["user_id"] == uid]  # fmt: skip
            case "POST", ["sessions"]:
                _keys(body, {"session_id", "user_id", "metadata", "fact_rating_instruction"})
                sid = _str(body, "session_id")
                self._user(_str(body, "user_id"))
                if sid in self.sessions:
                    raise _Refused(f"session {sid} exists")
                self.sessions[sid] = {"session_id": sid, "user_id": body["user_id"],
                                      "metadata": body.get("metadata") or {}, "messages": [],
                                      "uuid": str(uuid.uuid4()), "created_at": _now()}  # fmt: skip
                return 201, self._session_view(self.sessions[sid])
            case "GET", ["sessions", sid]:
                return 200, self._session_view(self._session(sid))
            case "POST", ["sessions", "search"]:
                _keys(body, {"text", "user_id", "search_scope", "search_type", "session_ids",
                             "min_fact_rating", "min_score", "mmr_lambda", "record_filter"})  # fmt: skip
                return 200, self._search(body, int(query.get("limit") or 10))
            case "POST", ["sessions", sid, "memory"]:
                _keys(body, {"messages", "fact_instruction", "summary_instruction"})
                session = self._session(sid)
                messages = body.get("messages")
                if not isinstance(messages, list) or not messages:
                    raise _Refused("messages must be a non-empty list")
                for m in messages:
                    _keys(m, MESSAGE_KEYS)
                    if (
                        not isinstance(m.get("content"), str)
                        or m.get("role_type") not in ROLE_TYPES
                    ):
                        raise _Refused(f"bad message {m!r}")
                    if not isinstance(m.get("metadata", {}), dict):
                        raise _Refused("metadata must be an object")
                for m in messages:
                    stored = {**m, "uuid": str(uuid.uuid4()), "created_at": _now()}
                    session["messages"].append(stored)
                    if FACT.search(m["content"]):
                        fid = str(uuid.uuid4())
                        self.facts[fid] = {"uuid": fid, "fact": m["content"], "rating": 0.9,
                                           "created_at": _now(), "session_id": sid}  # fmt: skip
                return 200, {"message": "OK"}
            case "GET", ["sessions", sid, "memory"]:
                session = self._session(sid)
                lastn = int(query.get("lastn") or 0)
                msgs = session["messages"][-lastn:] if lastn else session["messages"]
                facts = [f for f in self.facts.values() if f["session_id"] == sid]
                return 200, {"messages": msgs, "facts": [f["fact"] for f in facts],
                             "relevant_facts": [_fact_view(f) for f in facts]}  # fmt: skip
            case "DELETE", ["sessions", sid, "memory"]:
                session = self._session(sid)
                session["messages"] = []
                for fid in [f for f, v in self.facts.items() if v["session_id"] == sid]:
                    del self.facts[fid]
                return 200, {"message": "deleted"}
            case "GET", ["sessions", sid, "messages"]:
                session = self._session(sid)
                limit, page = int(query.get("limit") or 100), int(query.get("cursor") or 1)
                if limit < 1 or page < 1:
                    raise _Refused("limit and cursor start at 1")
                rows = session["messages"][(page - 1) * limit : page * limit]
                return 200, {"messages": rows, "row_count": len(rows),
                             "total_count": len(session["messages"])}  # fmt: skip
            case "PATCH", ["sessions", sid, "messages", mid]:
                _keys(body, {"metadata"})
                for m in self._session(sid)["messages"]:
                    if m["uuid"] == mid:
                        m["metadata"] = body["metadata"]
                        return 200, m
                raise _Missing(f"no message {mid}")
            case "GET", ["facts", fid]:
                if fid not in self.facts:
                    raise _Missing(f"no fact {fid}")
                return 200, {"fact": _fact_view(self.facts[fid])}
            case "DELETE", ["facts", fid]:
                self.facts.pop(fid, None)
                return 200, "deleted"
        raise _Refused("no such route")

    # ---- v4 (the zep-cloud SDK) ------------------------------------------------------------

    def route_v4(
        self, method: str, path: list[str], query: dict[str, str], body: Any, key: str | None
    ) -> tuple[int, Any]:
        """Users, threads and graph edges. A repeated Idempotency-Key gets the first answer
        again and changes nothing, as Zep promises."""
        if key is not None and (method, key) in self.replies:
            return self.replies[(method, key)]
        answer = self._route_v4(method, path, query, body)
        reads = path[-1] in ("lookup", "list") or path[-2:] == ["search", "edges"]
        if key is not None and not reads and 200 <= answer[0] < 300:
            self.replies[(method, key)] = answer
        return answer

    def _route_v4(
        self, method: str, path: list[str], query: dict[str, str], body: Any
    ) -> tuple[int, Any]:
        match method, path:
            case "POST", ["users", "lookup"]:
                _keys(body, {"graph_id", "thread_id", "user_id"})
                uid = _str(body, "user_id")
                for u in self.v4_users.values():
                    if u["user_id"] == uid:
                        return 200, u
                raise _Missing(f"no user {uid}")
            case "POST", ["users"]:
                _keys(body, {"content_policy", "disable_default_ontology", "email", "first_name",
                             "last_name", "metadata", "time_zone", "user_id"})  # fmt: skip
                uid = _str(body, "user_id")
                if any(u["user_id"] == uid for u in self.v4_users.values()):
                    raise _Refused(f"user {uid} exists")
                uuid_ = str(uuid.uuid4())
                self.v4_users[uuid_] = {"uuid": uuid_, "user_id": uid, "graph_uuid": uuid_,
                                        "metadata": body.get("metadata") or {},
                                        "created_at": _now()}  # fmt: skip
                return 201, self.v4_users[uuid_]
            case "POST", ["threads"]:
                _keys(body, {"user_uuid"})
                user = _str(body, "user_uuid")
                if user not in self.v4_users:
                    raise _Missing(f"no user {user}")
                tid = str(uuid.uuid4())
                self.threads[tid] = {"uuid": tid, "user_uuid": user, "graph_uuid": user,
                                     "created_at": _now(), "messages": []}  # fmt: skip
                return 201, self._thread_view(self.threads[tid])
            case "DELETE", ["threads", tid]:
                if tid not in self.threads:
                    raise _Missing(f"no thread {tid}")
                del self.threads[tid]
                return 200, {"message": "deleted"}
            case "POST", ["threads", tid, "messages"]:
                _keys(body, {"messages", "ignore_roles", "return_context", "strict_ontology"})
                if tid not in self.threads:
                    raise _Missing(f"no thread {tid}")
                thread, added = self.threads[tid], []
                for m in body.get("messages") or []:
                    _keys(m, {"content", "metadata", "name", "reference_time", "role", "uuid"})
                    if not isinstance(m.get("content"), str) or m.get("role") not in ROLE_TYPES:
                        raise _Refused(f"bad message {m!r}")
                    stored = {**m, "uuid": str(uuid.uuid4()), "thread_uuid": tid,
                              "created_at": _now()}  # fmt: skip
                    thread["messages"].append(stored)
                    added.append(stored)
                    if FACT.search(m["content"]):
                        self._edge(thread["user_uuid"], m["content"], "DERIVED", {}, "", "")
                if not added:
                    raise _Refused("messages must be a non-empty list")
                return 200, {"messages": added}
            case "POST", ["graphs", gid, "edges"]:
                _keys(body, {"edges", "deduplicate"})
                self._graph(gid)
                out = []
                for e in body.get("edges") or []:
                    _keys(e, {"attributes", "expired_at", "fact", "fact_name", "invalid_at",
                              "metadata", "source_node", "target_node", "valid_at"})  # fmt: skip
                    src, dst = e.get("source_node") or {}, e.get("target_node") or {}
                    if not (src.get("name") or src.get("uuid")) or not (
                        dst.get("name") or dst.get("uuid")
                    ):
                        raise _Refused("an edge needs a source and a target node")
                    valid_at, invalid_at = _when(e, "valid_at"), _when(e, "invalid_at")
                    if valid_at and invalid_at and invalid_at < valid_at:
                        raise _Refused("invalid_at is before valid_at")
                    edge = self._edge(gid, _str(e, "fact"), _str(e, "fact_name"),
                                      e.get("attributes") or {}, src.get("name", ""),
                                      dst.get("name", ""))  # fmt: skip
                    edge.update(valid_at=e.get("valid_at"), invalid_at=e.get("invalid_at"))
                    out.append(edge)
                if not 1 <= len(out) <= 100:
                    raise _Refused("1 to 100 edges")
                return 202, {"edges": [{"uuid": e["uuid"]} for e in out]}
            case "DELETE", ["graphs", gid, "edges", eid]:
                self._graph(gid)
                if self.edges.get(eid, {}).get("graph_uuid") != gid:
                    raise _Missing(f"no edge {eid} in graph {gid}")
                del self.edges[eid]
                return 202, {"task": {"uuid": str(uuid.uuid4()), "status": "pending"}}
            case "POST", ["graphs", gid, "edges", "list"]:
                _keys(body or {}, {"filters"})
                self._graph(gid)
                items = [e for e in self.edges.values() if e["graph_uuid"] == gid]
                size = int(query.get("page_size") or 50)
                return 200, {"items": items[:size], "total_size": len(items)}
            case "POST", ["graphs", gid, "search", "edges"]:
                _keys(body, {"query", "bfs_origin_node_uuids", "center_node_uuid", "filters",
                             "filter_low_quality_results", "mmr_lambda", "reranker"})  # fmt: skip
                self._graph(gid)
                want = _words(_str(body, "query"))
                hits = []
                for e in self.edges.values():
                    if e["graph_uuid"] == gid:
                        score = len(want & _words(e["fact"])) / max(1, len(want))
                        if score:
                            hits.append({**e, "score": score})
                hits.sort(key=lambda e: -e["score"])
                return 200, {"items": hits[: int(query.get("page_size") or 10)]}
        raise _Refused("no such route")

    def _graph(self, gid: str) -> None:
        if gid not in self.v4_users:  # a user graph, addressed by the user's uuid
            raise _Missing(f"no graph {gid}")

    def _edge(
        self, gid: str, fact: str, name: str, attributes: dict[str, Any], src: str, dst: str
    ) -> dict[str, Any]:
        eid = str(uuid.uuid4())
        self.edges[eid] = {"uuid": eid, "graph_uuid": gid, "fact": fact, "name": name,
                           "attributes": attributes, "source_node_name": src,
                           "target_node_name": dst, "created_at": _now()}  # fmt: skip
        return self.edges[eid]

    @staticmethod
    def _thread_view(t: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in t.items() if k != "messages"}

    def thread_messages(self) -> list[dict[str, Any]]:
        with self.lock:
            return [m for t in self.threads.values() for m in t["messages"]]

    def _user(self, uid: str) -> dict[str, Any]:
        if uid not in self.users:
            raise _Missing(f"no user {uid}")
        return self.users[uid]

    def _session(self, sid: str) -> dict[str, Any]:
        if sid not in self.sessions:
            raise _Missing(f"no session {sid}")
        return self.sessions[sid]

    @staticmethod
    def _session_view(s: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in s.items() if k != "messages"}

    def _search(self, body: dict[str, Any], limit: int) -> dict[str, Any]:
        uid = _str(body, "user_id")
        self._user(uid)
        want = _words(_str(body, "text"))
        scope = body.get("search_scope") or "facts"
        if scope not in ("messages", "facts", "summary"):
            raise _Refused(f"bad search_scope {scope!r}")
        results = []
        for sid, s in self.sessions.items():
            if s["user_id"] != uid:
                continue
            if scope == "messages":
                for m in s["messages"]:
                    score = len(want & _words(m["content"])) / max(1, len(want))
                    if score:
                        results.append({"message": m, "score": score, "session_id": sid})
            else:
                for f in self.facts.values():
                    if f["session_id"] == sid:
                        score = len(want & _words(f["fact"])) / max(1, len(want))
                        if score:
                            results.append(
                                {"fact": _fact_view(f), "score": score, "session_id": sid}
                            )
        results.sort(key=lambda r: -r["score"])
        return {"results": results[:limit]}


class _Refused(Exception):
    pass


class _Missing(Exception):
    pass


def _keys(body: Any, allowed: set[str]) -> None:
    if not isinstance(body, dict):
        raise _Refused("the body must be a JSON object")
    extra = set(body) - allowed
    if extra:
        raise _Refused(f"unknown fields {sorted(extra)}")


def _str(body: dict[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value:
        raise _Refused(f"{key} must be a non-empty string")
    return value


def _when(body: dict[str, Any], key: str) -> datetime | None:
    """An edge's ``valid_at`` / ``invalid_at``: absent, null, or ISO 8601 text with a zone
    (what the SDK's ``EdgeInput`` carries; epoch numbers are refused, as Zep would)."""
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _Refused(f"{key} must be an ISO 8601 string")
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise _Refused(f"{key} is not ISO 8601: {value!r}") from None
    if when.tzinfo is None:
        raise _Refused(f"{key} has no time zone: {value!r}")
    return when


def _fact_view(f: dict[str, Any]) -> dict[str, Any]:
    return {k: f[k] for k in ("uuid", "fact", "rating", "created_at")}


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
