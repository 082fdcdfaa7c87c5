"""Bad requests: each gets a 4xx in the one error shape, changes nothing, and the daemon
keeps serving."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from chrysalis.core.models import MAX_CONTENT_CHARS
from tests.eventually import eventually

from .daemon_process import DaemonProcess, DaemonThread, raw_http

MiB = 1024 * 1024


def big_chunks() -> Iterator[bytes]:
    for _ in range(40):  # 40 MiB, sent chunked: no Content-Length to refuse up front
        yield b"x" * MiB


BAD: list[tuple[str, str, str, dict[str, Any], int]] = [
    ("malformed JSON", "POST", "/v1/beads", {"content": b"{bad"}, 400),
    ("empty body", "POST", "/v1/beads", {"content": b""}, 400),
    ("array of numbers", "POST", "/v1/beads", {"json": [1, 2]}, 400),
    ("missing content", "POST", "/v1/beads", {"json": {}}, 400),
    ("content not a string", "POST", "/v1/beads", {"json": {"content": 5}}, 400),
    ("unknown field", "POST", "/v1/beads", {"json": {"content": "x", "colour": "red"}}, 400),
    ("unknown role", "POST", "/v1/beads", {"json": {"content": "x", "role": "wizard"}}, 400),
    ("importance over 1", "POST", "/v1/beads", {"json": {"content": "x", "importance": 2.0}}, 400),
    (
        "importance as text",
        "POST",
        "/v1/beads",
        {"json": {"content": "x", "importance": "high"}},
        400,
    ),
    (
        "path-traversing id",
        "POST",
        "/v1/beads",
        {"json": {"content": "x", "id": "../../etc/passwd"}},
        400,
    ),
    ("id with a space", "POST", "/v1/beads", {"json": {"content": "x", "id": "a b"}}, 400),
    ("ts not a time", "POST", "/v1/beads", {"json": {"content": "x", "ts": "yesterday"}}, 400),
    ("tags not a list", "POST", "/v1/beads", {"json": {"content": "x", "tags": "a,b"}}, 400),
    (
        "too many tags",
        "POST",
        "/v1/beads",
        {"json": {"content": "x", "tags": [f"t{i}" for i in range(300)]}},
        413,
    ),
    ("non-UTF-8 bytes", "POST", "/v1/beads", {"content": b'{"content": "caf\xe9 \xff\xfe"}'}, 400),
    ("lone surrogate", "POST", "/v1/beads", {"content": b'{"content": "a \\ud800 b"}'}, 400),
    (
        "one bad bead in a batch",
        "POST",
        "/v1/beads",
        {"json": [{"content": "fine"}, {"content": 7}]},
        400,
    ),
    ("64 MiB body", "POST", "/v1/beads", {"content": b"x" * (64 * MiB)}, 413),
    ("40 MiB chunked body", "POST", "/v1/beads", {"content": big_chunks()}, 413),
    (
        "content over its limit",
        "POST",
        "/v1/beads",
        {"json": {"content": "y" * (MAX_CONTENT_CHARS + 1)}},
        413,
    ),
    ("encoded traversal in the path", "GET", "/v1/beads/..%5C..%5Cetc%5Cpasswd", {}, 400),
    ("raw traversal in the path", "GET", "/v1/beads/../../etc/passwd", {}, 404),
    ("id with a space in the path", "DELETE", "/v1/beads/bad%20id", {}, 400),
    ("forget a missing bead", "DELETE", "/v1/beads/never-was", {}, 404),
    (
        "unknown strategy",
        "POST",
        "/v1/retrieve",
        {"json": {"query": "x", "strategy": "magic"}},
        400,
    ),
    ("negative k", "POST", "/v1/retrieve", {"json": {"query": "x", "k": -1}}, 400),
    ("huge k", "POST", "/v1/retrieve", {"json": {"query": "x", "k": 10**12}}, 400),
    (
        "span ref line beyond 64 bits",
        "POST",
        "/v1/beads",
        {
            "json": {
                "content": "x",
                "span_refs": [{"path": "a", "start_line": 1, "end_line": 10**30}],
            }
        },
        400,
    ),
    (
        "metadata integer beyond 64 bits",
        "POST",
        "/v1/kg/nodes",
        {"json": {"id": "n", "type": "t", "metadata": {"big": 10**30}}},
        400,
    ),
    ("k as text", "POST", "/v1/retrieve", {"json": {"query": "x", "k": "ten"}}, 400),
    ("empty query", "POST", "/v1/retrieve", {"json": {"query": ""}}, 400),
    (
        "unknown filter",
        "POST",
        "/v1/retrieve",
        {"json": {"query": "x", "filters": {"colour": "red"}}},
        400,
    ),
    ("zero token budget", "POST", "/v1/retrieve", {"json": {"query": "x", "token_budget": 0}}, 400),
    ("now that is no time", "POST", "/v1/retrieve", {"json": {"query": "x", "now": "soon"}}, 400),
    ("forget with an empty selector", "POST", "/v1/forget", {"json": {"dry_run": False}}, 400),
    (
        "forget by a relative path",
        "POST",
        "/v1/forget",
        {"json": {"path": "docs", "dry_run": False}},
        400,
    ),
    (  # a count alone cannot say which beads were shown (step 15): the digest must come
        "forget with a count and no digest",
        "POST",
        "/v1/forget",
        {"json": {"session_id": "nobody", "dry_run": False, "expect": 3}},
        400,
    ),
    (
        "forget with a digest that is not the match",
        "POST",
        "/v1/forget",
        {"json": {"session_id": "nobody", "dry_run": False, "expect_digest": "sha256:" + "0" * 64}},
        409,
    ),
    ("limit zero", "GET", "/v1/beads?limit=0", {}, 400),
    ("limit as text", "GET", "/v1/beads?limit=abc", {}, 400),
    ("PATCH on beads", "PATCH", "/v1/beads", {"json": {"content": "x"}}, 405),
    ("PUT on retrieve", "PUT", "/v1/retrieve", {"json": {"query": "x"}}, 405),
    ("GET on kg edges", "GET", "/v1/kg/edges", {}, 405),
    ("unknown route", "GET", "/v1/nowhere", {}, 404),
    ("unversioned route", "GET", "/beads", {}, 404),
    (
        "edge to missing nodes",
        "POST",
        "/v1/kg/edges",
        {"json": {"source": "ghost-a", "target": "ghost-b", "predicate": "knows"}},
        404,
    ),
    (
        "metadata nested too deep",
        "POST",
        "/v1/kg/nodes",
        {
            "json": {
                "id": "n1",
                "type": "t",
                "metadata": {"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": {"i": {"j": 1}}}}}}}}}},
            }
        },
        400,
    ),
    (
        "skill id differs from the path",
        "PUT",
        "/v1/skills/alpha",
        {"json": {"id": "beta", "name": "B"}},
        400,
    ),
    ("persona goals not a list", "PUT", "/v1/persona", {"json": {"goals": "be good"}}, 400),
    ("persona patch with a null name", "PATCH", "/v1/persona", {"json": {"name": None}}, 400),
    ("persona patch with an id", "PATCH", "/v1/persona", {"json": {"id": "other"}}, 400),
    (
        "fact with a blank subject",
        "POST",
        "/v1/kg/facts",
        {"json": {"subject": " ", "predicate": "knows", "object": "seed-node"}},
        400,
    ),
    (
        "fact with a bad evidence id",
        "POST",
        "/v1/kg/facts",
        {"json": {"subject": "a", "predicate": "knows", "object": "b", "evidence": ["../x"]}},
        400,
    ),
    ("neighbors depth 99", "GET", "/v1/kg/nodes/seed-node/neighbors?depth=99", {}, 400),
    (
        "import: a bad line after a good one",
        "POST",
        "/v1/import",
        {
            "content": b'{"kind":"bead","item":{"id":"imp-1","ts":1,"content":"ok"}}\n{"kind":"bead","item":{"id":"imp-2"}}\n'
        },
        400,
    ),
    (
        "import: another format",
        "POST",
        "/v1/import",
        {"content": b'{"kind":"header","format":"other","version":9}\n'},
        400,
    ),
    (
        "import: unknown kind",
        "POST",
        "/v1/import",
        {"content": b'{"kind":"spell","item":{}}\n'},
        400,
    ),
    (
        "same bead id, other content",
        "POST",
        "/v1/beads",
        {"json": {"id": "seed-bead", "content": "something else"}},
        409,
    ),
    ("Origin header", "GET", "/v1/status", {"headers": {"Origin": "http://evil.example"}}, 403),
]


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    d = DaemonThread(tmp_path_factory.mktemp("bad") / "data").start()
    with d.client() as c:
        c.remember("the seed bead", id="seed-bead")
        c.add_node("seed-node", "thing")
    eventually(
        lambda: d.once("status")["index"]["behind"],
        until=lambda b: not any(b.values()),
        timeout=30,
        what="the indexes to catch up",
    )  # embeddings are ops too
    yield d
    assert d.stop() == 0, d.output()
    d.close()


@pytest.fixture(scope="module")
def http(daemon: DaemonProcess) -> Iterator[httpx.Client]:
    with raw_http(daemon.socket) as client:
        yield client


def test_there_are_at_least_30_kinds() -> None:
    assert len(BAD) >= 30
    assert len({name for name, *_ in BAD}) == len(BAD)


@pytest.mark.parametrize(("name", "method", "path", "kw", "status"), BAD, ids=[b[0] for b in BAD])
def test_bad_request_is_refused_and_changes_nothing(
    http: httpx.Client, name: str, method: str, path: str, kw: dict[str, Any], status: int
) -> None:
    before = http.get("/v1/status").json()["state_digest"]
    r = http.request(method, path, **kw)
    assert r.status_code == status, r.text[:500]
    assert r.headers["chrysalis-version"]
    err = r.json()["error"]
    assert set(err) == {"code", "message", "details"}
    assert isinstance(err["code"], str) and len(err["message"]) > 10
    assert http.get("/_ping").text == "OK"
    assert http.get("/v1/status").json()["state_digest"] == before


def test_messages_name_what_is_wrong(http: httpx.Client) -> None:
    def message(method: str, path: str, **kw: Any) -> str:
        return str(http.request(method, path, **kw).json()["error"]["message"])

    assert "malformed JSON" in message("POST", "/v1/beads", content=b"{bad")
    assert message("POST", "/v1/retrieve", json={"query": "x", "k": -1}) == "k must be at least 1"
    assert "colour" in message("POST", "/v1/beads", json={"content": "x", "colour": "red"})
    assert "line 2" in message(
        "POST",
        "/v1/import",
        content=b'{"kind":"bead","item":{"id":"i1","ts":1,"content":"ok"}}\n{"kind":"bead","item":{}}\n',
    )
    assert "max_body_bytes" in message("POST", "/v1/beads", content=b"x" * (33 * MiB))
    assert "Origin" in message("GET", "/v1/health", headers={"Origin": "null"})
    assert "PATCH is not allowed" in message("PATCH", "/v1/beads")
    assert "no route GET /v1/nowhere" in message("GET", "/v1/nowhere")


PLAIN: list[tuple[str, str, dict[str, Any], str]] = [
    ("POST", "/v1/retrieve", {"json": {"query": ""}}, "query must not be empty"),
    ("POST", "/v1/retrieve", {"json": {"query": "x", "k": 0}}, "k must be at least 1"),
    ("POST", "/v1/retrieve", {"json": {"query": "x", "k": 10**12}}, "k must be at most 1,000"),
    ("POST", "/v1/retrieve", {"json": {"query": "x", "k": "ten"}}, "k must be a whole number"),
    (
        "POST", "/v1/retrieve", {"json": {"query": "x", "strategy": "magic"}},
        "strategy must be 'fusion', 'emb', 'keyword', 'kg' or 'beads'",
    ),
    (
        "POST", "/v1/retrieve", {"json": {"query": "x", "now": "soon"}},
        "now must be a number or a date and time (ISO 8601)",
    ),
    (
        "POST", "/v1/retrieve", {"json": {"query": "x", "filters": {"colour": "red"}}},
        "filters.colour is not a known field",
    ),
    ("POST", "/v1/beads", {"json": {"content": ""}}, "content must not be empty"),
    ("POST", "/v1/beads", {"json": {}}, "content is required"),
    ("POST", "/v1/beads", {"content": b""}, "the request body is required"),
    ("POST", "/v1/beads", {"json": {"content": "x", "colour": 1}}, "colour is not a known field of the request body"),
    ("POST", "/v1/beads", {"json": {"content": "x", "importance": "hi"}}, "importance must be a number"),
    (
        "POST", "/v1/beads", {"json": [{"content": "fine"}, {"content": ""}]},
        "bead 2: content must not be empty",
    ),
    ("POST", "/v1/beads", {"json": [{"content": "fine"}, 7]}, "bead 2 must be an object"),
    (
        "POST", "/v1/beads", {"json": {"content": "y" * (MAX_CONTENT_CHARS + 1)}},
        "content is too long: 8,388,609 characters, at most 8,388,608",
    ),
    (
        "POST", "/v1/beads", {"json": {"content": "x", "tags": [f"t{i}" for i in range(300)]}},
        "tags has too many items: 300, at most 256",
    ),
    ("POST", "/v1/beads", {"content": b"{bad"}, "malformed JSON at character 1: "
     "Expecting property name enclosed in double quotes"),
    ("GET", "/v1/beads?limit=0", {}, "limit must be at least 1"),
    ("GET", "/v1/beads?limit=abc", {}, "limit must be a whole number"),
]  # fmt: skip


@pytest.mark.parametrize(("method", "path", "kw", "said"), PLAIN, ids=[p[3] for p in PLAIN])
def test_messages_are_plain_words(
    http: httpx.Client, method: str, path: str, kw: dict[str, Any], said: str
) -> None:
    """Not pydantic's "body.query: String should have at least 1 character"."""
    err = http.request(method, path, **kw).json()["error"]
    assert err["message"] == said
    for detail in err["details"]:  # each problem in plain words too
        assert not any(w in detail["msg"] for w in ("should", "Value error", "body.")), detail


def test_a_curl_style_form_body_is_read_as_json(http: httpx.Client, tmp_path: Path) -> None:
    body = json.dumps({"content": "sent like curl -d", "id": "curl-style"})
    r = http.post(
        "/v1/beads", content=body, headers={"content-type": "application/x-www-form-urlencoded"}
    )
    assert r.status_code == 201 and r.json()["id"] == "curl-style"
