"""The graph as the inspector draws it (issue 34): `Memory.graph_drawing` and the daemon's
``GET /v1/kg/graph/draw`` (compact columns, cached by the memory's version, 304 while
unchanged) and ``GET /v1/kg/nodes/{id}/edges`` (a node's facts, read when it is chosen).

The drawing must say what `all_nodes`/`all_edges` say (degree, validity as resolved against
later facts of a functional predicate, removed items gone), bounded by its limits however big
the memory is."""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chrysalis import Memory
from chrysalis.read.drawing import Drawing, GraphChanges
from tests.conftest import exchange

from .daemon_process import DaemonProcess, DaemonThread, raw_http


def picture(d: Drawing) -> set[tuple[str, str, float | None, float | None]]:
    return {
        (d.ids[s], d.ids[t], v, end)
        for s, t, v, end in zip(d.sources, d.targets, d.valid_at, d.invalid_at, strict=True)
    }


def expected(mem: Memory) -> tuple[Counter[str], set[tuple[str, str, Any, Any]]]:
    edges = mem.all_edges(include_invalid=True)
    degree: Counter[str] = Counter()
    for e in edges:
        degree[e.source] += 1
        degree[e.target] += 1
    return degree, {(e.source, e.target, e.valid_at, e.invalid_at) for e in edges}


def test_the_drawing_says_what_the_graph_holds(mem: Memory) -> None:
    mem.add_fact("Wanda", "lives_in", "Tallinn", valid_at=1_600_000_000)
    mem.add_fact("Wanda", "lives_in", "Riga", valid_at=1_650_000_000)  # ends Tallinn
    mem.add_fact("Wanda", "knows", "Otto", invalid_at=1_640_000_000)
    mem.add_fact("Otto", "knows", "Otto")  # a self-loop counts twice, as all_edges does
    gone = mem.add_fact("Otto", "owns", "a kayak")
    mem.add_node("lonely", "thing", name="Lonely")
    mem.remove_edge(gone.id)
    d = mem.graph_drawing(limit=100)
    degree, edges = expected(mem)
    assert picture(d) == edges
    by_id = dict(zip(d.ids, d.degree, strict=True))
    assert by_id == {n.id: degree[n.id] for n in mem.all_nodes()}
    assert d.ids == sorted(by_id, key=lambda n: (-by_id[n], n))  # most connected first
    tallinn = next(e for e in mem.all_edges(include_invalid=True) if e.target == "tallinn")
    assert tallinn.invalid_at == 1_650_000_000  # resolved, not stated: and drawn so
    assert (tallinn.source, tallinn.target, 1_600_000_000, 1_650_000_000) in picture(d)
    assert d.names[d.ids.index("lonely")] == "Lonely"
    assert [d.type_names[t] for t in d.types] == [mem.get_node(i).type for i in d.ids]
    assert (d.nodes_total, d.edges_total) == (len(by_id), len(edges))


def test_a_removed_node_takes_its_edges_out_of_the_drawing(mem: Memory) -> None:
    mem.add_fact("Ines", "mentors", "Kai")
    mem.add_fact("Kai", "uses", "Vim")
    mem.remove_node("kai")
    d = mem.graph_drawing()
    assert set(d.ids) == {"ines", "vim"} and d.sources == [] and d.degree == [0, 0]


def test_limits_keep_the_most_connected_and_the_edges_among_them(mem: Memory) -> None:
    for spoke in range(12):
        mem.add_fact("Hub", "links", f"spoke {spoke}")
    for spoke in range(4):
        mem.add_fact(f"spoke {spoke}", "links", f"leaf {spoke}")
    d = mem.graph_drawing(limit=5)
    assert d.ids[0] == "hub" and len(d.ids) == 5 and d.nodes_total == 12 + 4 + 1
    assert {d.ids[t] for t in d.targets} <= set(d.ids[1:])
    few = mem.graph_drawing(limit=17, max_edges=3)
    assert len(few.sources) == 3 and few.edges_total == 16
    # the kept edges are those among the most connected: the hub's, to its busiest spokes
    assert all(few.ids[s] == "hub" for s in few.sources)
    assert mem.graph_drawing(max_edges=0).sources == []


FACTS = st.lists(
    st.tuples(
        st.integers(0, 7),
        st.sampled_from(["lives_in", "knows", "likes"]),
        st.integers(0, 7),
        st.one_of(st.none(), st.integers(1, 50)),
    ),
    max_size=25,
)


@settings(max_examples=25, deadline=None)
@given(FACTS, st.sets(st.integers(0, 7), max_size=3))
def test_any_graph_is_drawn_as_all_edges_reads_it(
    facts: list[tuple[int, str, int, int | None]], removed: set[int]
) -> None:
    with tempfile.TemporaryDirectory() as where, Memory.open(Path(where) / "m", sync=False) as mem:
        for s, p, o, when in facts:
            mem.add_fact(f"person {s}", p, f"person {o}", valid_at=when)
        present = {n.id for n in mem.all_nodes()}
        for r in removed:
            if f"person-{r}" in present:
                mem.remove_node(f"person-{r}")
        d = mem.graph_drawing(limit=100)
        degree, edges = expected(mem)
        assert picture(d) == edges
        drawn = dict(zip(d.ids, d.degree, strict=True))
        assert drawn == {n.id: degree[n.id] for n in mem.all_nodes()}


def test_the_graph_version_moves_with_nodes_and_edges_only(open_memory: Any) -> None:
    a, b = open_memory("a"), open_memory("b")
    seen = GraphChanges(b.store)
    first = seen.version
    b.append_bead("a bead is not the graph", id="n1")
    b.put_embedding("bead", "n1", "toy", [0.1, 0.2], provider="test", text_hash="0" * 64)
    assert seen.version == first
    b.add_fact("Pia", "knows", "Quentin")
    assert seen.version != first
    second = seen.version
    a.add_node("rhea", "person", name="Rhea")
    exchange(a, b)  # another laptop's node, applied here
    assert seen.version != second
    assert GraphChanges(b.store).version != seen.version  # another counter, another name


# ---- the daemon's routes ----------------------------------------------------------------


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    d = DaemonThread(tmp_path_factory.mktemp("drawing") / "data").start()
    yield d
    assert d.stop() == 0, d.output()
    d.close()


@pytest.fixture(scope="module")
def http(daemon: DaemonProcess) -> Iterator[httpx.Client]:
    with raw_http(daemon.socket) as client:
        yield client


def test_the_drawing_is_compact_cached_and_304_while_unchanged(http: httpx.Client) -> None:
    assert http.post("/v1/kg/facts", json={"subject": "Léa \"the\" Ørsted", "predicate": "uses",
                                           "object": "Emacs"}).status_code == 201  # fmt: skip
    first = http.get("/v1/kg/graph/draw")
    assert first.status_code == 200 and first.headers["content-type"] == "application/json"
    body = first.json()
    assert set(body) == {"nodes", "types", "edges", "nodes_total", "edges_total"}
    names = dict(zip(body["nodes"]["id"], body["nodes"]["name"], strict=True))
    assert 'Léa "the" Ørsted' in names.values()  # odd text survives as text
    etag = first.headers["etag"]
    again = http.get("/v1/kg/graph/draw")
    assert again.content == first.content and again.headers["etag"] == etag
    same = http.get("/v1/kg/graph/draw", headers={"if-none-match": etag})
    assert same.status_code == 304 and same.content == b""
    listed = http.get("/v1/kg/graph/draw", headers={"if-none-match": f'"other", {etag}'})
    assert listed.status_code == 304
    # beads (and the vectors the indexer writes for them) leave the graph as it was
    assert http.post("/v1/beads", json={"content": "Léa switched to Emacs"}).status_code == 201
    assert http.get("/v1/kg/graph/draw", headers={"if-none-match": etag}).status_code == 304
    # another shape is another answer
    other = http.get("/v1/kg/graph/draw?limit=1", headers={"if-none-match": etag})
    assert other.status_code == 200 and len(other.json()["nodes"]["id"]) == 1
    # a write makes a new version: the old tag no longer matches, the new fact is drawn
    http.post("/v1/kg/facts", json={"subject": "Emacs", "predicate": "runs on", "object": "Lisp"})
    changed = http.get("/v1/kg/graph/draw", headers={"if-none-match": etag})
    assert changed.status_code == 200 and changed.headers["etag"] != etag
    assert "Lisp" in changed.json()["nodes"]["name"]


def test_concurrent_draws_agree(http: httpx.Client, daemon: DaemonProcess) -> None:
    import concurrent.futures

    http.post("/v1/kg/facts", json={"subject": "Mirte", "predicate": "knows", "object": "Joost"})

    def draw(_: int) -> tuple[str, bytes]:
        with httpx.Client(transport=httpx.HTTPTransport(uds=str(daemon.socket)),
                          base_url="http://chrysalis", timeout=60) as c:  # fmt: skip
            r = c.get("/v1/kg/graph/draw?limit=2000")
            return r.headers["etag"], r.content

    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        answers = set(pool.map(draw, range(12)))
    assert len(answers) == 1


@pytest.mark.parametrize(
    ("query", "headers", "word"),
    [
        ("limit=0", {}, "limit"),
        ("limit=5001", {}, "limit"),
        ("limit=many", {}, "limit"),
        ("max_edges=-1", {}, "max_edges"),
        ("max_edges=50001", {}, "max_edges"),
        ("", {"if-none-match": '"' + "x" * 500 + '"'}, "if-none-match"),
    ],
)
def test_bad_asks_get_a_clear_error_and_change_nothing(
    http: httpx.Client, query: str, headers: dict[str, str], word: str
) -> None:
    before = http.get("/v1/status").json()["state_digest"]
    r = http.get(f"/v1/kg/graph/draw?{query}", headers=headers)
    assert r.status_code in (400, 413, 422), r.text
    assert word in json.dumps(r.json()["error"]).lower(), r.text
    assert http.get("/v1/status").json()["state_digest"] == before


def test_a_nodes_facts_in_and_out_with_the_names_at_their_ends(http: httpx.Client) -> None:
    http.post("/v1/kg/facts", json={"subject": "Saoirse", "predicate": "lives_in",
                                    "object": "Galway", "valid_at": 1_600_000_000})  # fmt: skip
    http.post("/v1/kg/facts", json={"subject": "Saoirse", "predicate": "lives_in",
                                    "object": "Cork", "valid_at": 1_700_000_000})  # fmt: skip
    http.post("/v1/kg/facts", json={"subject": "Declan", "predicate": "knows", "object": "Saoirse"})
    r = http.get("/v1/kg/nodes/saoirse/edges")
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["node"]["name"] == "Saoirse" and got["total"] == 3
    facts = {(e["source"], e["predicate"], e["target"]): e for e in got["edges"]}
    assert set(facts) == {("saoirse", "lives_in", "galway"), ("saoirse", "lives_in", "cork"),
                          ("declan", "knows", "saoirse")}  # fmt: skip
    assert facts[("saoirse", "lives_in", "galway")]["invalid_at"] == 1_700_000_000  # resolved
    assert got["names"] == {"saoirse": "Saoirse", "galway": "Galway", "cork": "Cork",
                            "declan": "Declan"}  # fmt: skip
    one = http.get("/v1/kg/nodes/Saoirse/edges?limit=1").json()  # by its name, as get_node
    assert len(one["edges"]) == 1 and one["total"] == 3
    missing = http.get("/v1/kg/nodes/nobody-here/edges")
    assert missing.status_code == 404 and "nobody-here" in missing.json()["error"]["message"]
    assert http.get("/v1/kg/nodes/saoirse/edges?limit=0").status_code in (400, 422)


def test_a_huge_memory_gets_a_bounded_drawing(tmp_path: Any) -> None:
    """More nodes than any drawing holds, a hub with more edges than asked for: the answer
    stays within its limits and says what it left out."""
    from chrysalis.extract import Entity, Extraction, Fact

    nodes = 5_600
    with Memory.open(tmp_path / "big", sync=False, embedder="deterministic",
                     extractor="none") as m:  # fmt: skip
        m.append_beads(
            [{"id": "b0", "ts": 1_700_000_000.0, "content": "where the facts came from"}]
        )
        batch = []
        for i in range(nodes):
            facts = (
                (Fact(f"Entity {i}", "relates to", "The Hub", "thing", "thing"),) if i % 2 else ()
            )
            batch.append(Extraction("b0", (Entity(f"Entity {i}", "thing"),), facts))
            if len(batch) == 1_000:
                m.knowledge_writer.learn(batch, {"b0": 1_700_000_000.0}, "rules/1")
                batch = []
        m.knowledge_writer.learn(batch, {"b0": 1_700_000_000.0}, "rules/1")
    d = DaemonThread(tmp_path / "big").start()
    try:
        with httpx.Client(transport=httpx.HTTPTransport(uds=str(d.socket)),
                          base_url="http://chrysalis", timeout=120) as c:  # fmt: skip
            whole = c.get("/v1/kg/graph/draw?limit=5000&max_edges=1000")
            assert whole.status_code == 200, whole.text
            body = whole.json()
            assert len(body["nodes"]["id"]) == 5_000 and body["nodes_total"] == nodes + 1
            assert len(body["edges"]["source"]) == 1_000 and body["edges_total"] == nodes // 2
            assert body["nodes"]["degree"][0] == nodes // 2  # the hub, first
            assert len(whole.content) < 600_000, len(whole.content)
            assert c.get("/v1/kg/graph/draw?limit=100000").status_code in (400, 422)
    finally:
        d.stop()
        d.close()
