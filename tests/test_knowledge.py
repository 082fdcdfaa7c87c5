"""Knowledge (DESIGN §13): rules extraction, evidence and lineage, supersede and validity on
read, the origin-only worker, retraction after forgets on any replica, budget and backoff."""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chrysalis import ChrysalisError, Memory
from chrysalis.core import crdt
from chrysalis.core.errors import ExtractorUnavailable, NotFound
from chrysalis.core.graph_ids import derived_node_id, edge_id, graph_key, node_id
from chrysalis.core.models import Bead, Edge, Node, OpKind
from chrysalis.extract import Entity, Extraction, Fact
from chrysalis.extract.worker import Budget, KnowledgeWorker

WAIT = 10.0
EXAMPLES = int(os.environ.get("CHRYSALIS_KNOWLEDGE_EXAMPLES", "25"))


# The replicas of one memory share a graph key (as they share a sync key), so entity ids are
# known here: `entity` names them.
SECRET = b"test graph secret"


def entity(name: str) -> str:
    return derived_node_id(name, graph_key(SECRET))


def open_mem(path: Path, **options: Any) -> Memory:
    options.setdefault("extractor", "rules")
    options.setdefault("graph_secret", SECRET)
    return Memory.open(path, sync=False, **options)


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    m = open_mem(tmp_path / "a", replica_id="ra")
    try:
        yield m
    finally:
        m.close()


def learned(*mems: Memory) -> None:
    for m in mems:
        assert m.wait_learned(WAIT)


def sync(a: Memory, b: Memory) -> None:
    """Exchange ops both ways until neither has anything new (derived ops included)."""
    for _ in range(10):
        learned(a, b)
        moved = 0
        for src, dst in ((a, b), (b, a)):
            ops = src.ops_since(dst.version_vector())
            moved += len(ops)
            if ops:
                dst.apply_ops(ops)
        learned(a, b)
        if not moved and a.version_vector() == b.version_vector():
            return
    raise AssertionError("replicas did not settle")


def fact(subject: str, predicate: str, obj: str) -> str:
    return edge_id(entity(subject), predicate, entity(obj))


def spans(m: Memory) -> set[tuple[str, float | None, float | None]]:
    return {(e.id, e.valid_at, e.invalid_at) for e in m.all_edges(include_invalid=True)}


def slug(n: Node) -> str:
    """An extracted entity by its name's normal form (its id is a hash of that)."""
    return node_id(n.name) if n.derived_by and n.name else n.id


def node_ids(m: Memory) -> set[str]:
    return {slug(n) for n in m.all_nodes()}


# ---- rules extraction ----------------------------------------------------------------------


def test_entities_of_every_kind_cite_their_bead(mem: Memory) -> None:
    bead = mem.append_bead(
        'Yesterday I met Ada Lovelace about "The Art of Code". See chrysalis/extract/rules.py '
        "and write_knowledge, mail ada@example.com, read https://example.com/doc on "
        "2024-03-05 and on March 3, 2024.",
        ts=1000,
    )
    learned(mem)
    nodes = {slug(n): n for n in mem.all_nodes()}
    want = {
        "ada-lovelace": "name",
        "the-art-of-code": "title",
        "write_knowledge": "code",
        "chrysalis-extract-rules.py": "path",
        node_id("ada@example.com"): "email",
        node_id("https://example.com/doc"): "url",
        "2024-03-05": "date",
        "2024-03-03": "date",
    }
    for nid, type in want.items():
        assert nid in nodes, (nid, sorted(nodes))
        assert nodes[nid].type == type
        assert nodes[nid].evidence == [bead.id]
        assert nodes[nid].derived_by == "rules/6"


def test_markup_closing_tags_are_not_paths(mem: Memory) -> None:
    mem.append_bead("A page with <b>bold</b> and </script> in it, from site/pages/index.html.")
    learned(mem)
    paths = sorted(slug(n) for n in mem.all_nodes() if n.type == "path")
    assert paths == ["site-pages-index.html"]


def test_one_entity_from_two_beads_is_one_node(mem: Memory) -> None:
    a = mem.append_bead("We talked to Grace Hopper today.", ts=1000)
    b = mem.append_bead("Later, Grace Hopper called back.", ts=1001)
    learned(mem)
    node = mem.get_node("grace-hopper")
    assert sorted(node.evidence) == sorted([a.id, b.id])
    assert [slug(n) for n in mem.all_nodes()].count("grace-hopper") == 1


def test_system_bead_yields_nothing(mem: Memory) -> None:
    mem.append_bead("You are a helper. I live in Lisbon. Ask Ada Lovelace.", role="system")
    learned(mem)
    assert mem.all_nodes() == []
    assert mem.all_edges() == []


def test_assistants_first_person_is_no_fact(mem: Memory) -> None:
    mem.append_bead("I live in Lisbon, as a model would say.", role="assistant", ts=1000)
    learned(mem)
    assert mem.all_edges() == []


def test_users_first_person_is_a_fact_about_the_speaker(mem: Memory) -> None:
    bead = mem.append_bead("I live in Lisbon.", ts=1000)
    learned(mem)
    edge = mem.get_edge(fact("user", "lives_in", "Lisbon"))
    user, lisbon = entity("user"), entity("lisbon")
    assert (edge.source, edge.predicate, edge.target) == (user, "lives_in", lisbon)
    assert edge.evidence == [bead.id] and edge.derived_by == "rules/6"
    assert edge.valid_at == 1000 and edge.invalid_at is None
    said = mem.append_bead("I work at Initech.", ts=1100, source="Maria")
    learned(mem)
    edge = mem.get_edge(fact("Maria", "works_at", "Initech"))
    assert edge.source == entity("Maria") and edge.evidence == [said.id]
    assert mem.get_node("maria").type == "person"


# ---- supersede and validity ----------------------------------------------------------------

LISBON = fact("user", "lives_in", "Lisbon")
PORTO = fact("user", "lives_in", "Porto")


def lived(mem: Memory) -> None:
    mem.append_bead("I live in Lisbon.", ts=1000)
    mem.append_bead("I moved to Porto.", ts=2000)
    learned(mem)


def test_a_later_fact_supersedes_an_earlier_one(mem: Memory) -> None:
    lived(mem)
    # the end is stored (an op), not only resolved on read
    record = mem.reader.record("edge", LISBON)
    assert record is not None
    assert crdt.field_value(record, "invalid_at") == 2000
    assert mem.get_edge(LISBON).invalid_at == 2000
    assert [slug(n.node) for n in mem.neighbors("user")] == ["porto"]
    assert {slug(n.node) for n in mem.neighbors("user", include_invalid=True)} == {
        "lisbon",
        "porto",
    }
    assert [slug(n.node) for n in mem.neighbors("user", as_of=1500)] == ["lisbon"]
    assert [slug(n.node) for n in mem.neighbors("user", as_of=2500)] == ["porto"]
    assert [slug(n.node) for n in mem.neighbors("user", as_of=500)] == []
    assert {e.id for e in mem.all_edges(as_of=1500)} == {LISBON}
    assert {e.id for e in mem.all_edges(include_invalid=False)} == {PORTO}
    # nothing is deleted on supersede
    assert {e.id for e in mem.all_edges(include_invalid=True)} == {LISBON, PORTO}


@pytest.mark.parametrize("strategy", ["kg", "fusion"])
def test_retrieve_walks_the_facts_that_held_then(mem: Memory, strategy: str) -> None:
    lived(mem)
    mem.wait_indexed(WAIT)

    def walked(**kw: Any) -> set[str]:
        result = mem.retrieve("user", k=20, strategy=strategy, **kw)
        edges = {i.id for i in result.items if i.kind == "edge"}
        for item in result.items:
            edges |= set(item.provenance.get("edges") or [])
        return edges & {LISBON, PORTO}

    assert walked(as_of=1500) == {LISBON}
    assert walked(as_of=2500) == {PORTO}
    assert walked() == {PORTO}


def test_late_arrival_of_the_older_fact_gets_its_end(mem: Memory) -> None:
    mem.append_bead("I moved to Porto.", ts=2000)
    learned(mem)
    mem.append_bead("I live in Lisbon.", ts=1000)  # said earlier, learned later
    learned(mem)
    assert mem.get_edge(LISBON).invalid_at == 2000
    assert mem.get_edge(PORTO).invalid_at is None
    assert [slug(n.node) for n in mem.neighbors("user")] == ["porto"]
    assert [slug(n.node) for n in mem.neighbors("user", as_of=1500)] == ["lisbon"]


def test_a_fact_restated_while_it_holds_keeps_its_start(mem: Memory) -> None:
    first = mem.append_bead("I live in Lisbon.", ts=1000)
    again = mem.append_bead("I live in Lisbon, as before.", ts=1500)
    learned(mem)
    edge = mem.get_edge(LISBON)
    assert edge.valid_at == 1000 and edge.invalid_at is None
    assert sorted(edge.evidence) == sorted([first.id, again.id])


# ---- lineage and the forget cascade --------------------------------------------------------


def test_forget_the_only_evidence_removes_what_it_supported(mem: Memory) -> None:
    only = mem.append_bead("I live in Lisbon. Ada Lovelace agrees.", ts=1000)
    other = mem.append_bead("Ada Lovelace wrote again.", ts=1001)
    learned(mem)
    assert {"lisbon", "user", "ada-lovelace"} <= node_ids(mem)
    mem.forget(only.id)
    learned(mem)
    with pytest.raises(NotFound):
        mem.get_edge(LISBON)
    assert "lisbon" not in node_ids(mem) and "user" not in node_ids(mem)
    record = mem.reader.record("node", entity("lisbon"))  # a removed record, not a missing one
    assert record is not None and not crdt.is_present(record)
    assert mem.get_node("ada-lovelace").evidence == [other.id]
    mem.forget(only.id)  # twice is fine
    learned(mem)
    assert mem.get_node("ada-lovelace").evidence == [other.id]


def test_a_person_added_node_survives_the_cascade(mem: Memory) -> None:
    # The extractor writes on a person's node of the name (one node per name), and a node a
    # person wrote is never the extractor's to retract: a forget takes its bead off it.
    mem.add_node("lisbon", "place", name="Lisbon")
    bead = mem.append_bead("I live in Lisbon.", ts=1000)
    learned(mem)
    node = mem.get_node("lisbon")
    assert node.derived_by is None and node.evidence == [bead.id]
    with pytest.raises(NotFound):
        mem.get_node(entity("Lisbon"))  # no second node of the name
    assert [e.predicate for e in mem.all_edges() if e.target == "lisbon"] == ["lives_in"]
    mem.forget(bead.id)
    learned(mem)
    node = mem.get_node("lisbon")
    assert node.derived_by is None and node.name == "Lisbon" and node.evidence == []
    assert [e for e in mem.all_edges(include_invalid=True) if e.target == "lisbon"] == []


def test_forget_where_cascades(mem: Memory) -> None:
    mem.append_bead("I live in Lisbon.", ts=1000, session_id="s1")
    mem.append_bead("I work at Acme.", ts=1001, session_id="s1")
    keep = mem.append_bead("Grace Hopper called.", ts=1002, session_id="s2")
    learned(mem)
    forgotten, _ = mem.forget_where({"session_id": "s1"})
    assert len(forgotten) == 2
    learned(mem)
    assert mem.all_edges() == []
    assert node_ids(mem) == {"grace-hopper"}
    assert mem.get_node("grace-hopper").evidence == [keep.id]


# ---- the worker across replicas ------------------------------------------------------------


def own_knowledge_ops(m: Memory) -> list[dict[str, Any]]:
    kinds = {OpKind.NODE_PUT, OpKind.NODE_REMOVE, OpKind.EDGE_PUT, OpKind.EDGE_REMOVE}
    return [o for o in m.ops_since({}) if o["replica"] == m.replica_id and o["kind"] in kinds]


def test_only_the_origin_extracts_and_forgets_retract_everywhere(tmp_path: Path) -> None:
    a = open_mem(tmp_path / "a", replica_id="ra")
    b = open_mem(tmp_path / "b", replica_id="rb")
    try:
        lisbon = a.append_bead("I live in Lisbon. Ada Lovelace says hi.", ts=1000)
        learned(a)
        b.apply_ops([o for o in a.ops_since({}) if o["kind"] == OpKind.BEAD_ADD])
        learned(b)
        assert b.get_bead(lisbon.id).content.startswith("I live")
        assert own_knowledge_ops(b) == [] and b.all_nodes() == []
        sync(a, b)
        assert own_knowledge_ops(b) == []
        assert node_ids(b) == node_ids(a) and LISBON in {e.id for e in b.all_edges()}
        b.forget(lisbon.id)
        learned(b)
        assert b.all_nodes() == [] and b.all_edges() == []
        assert {o["kind"] for o in own_knowledge_ops(b)} >= {OpKind.EDGE_REMOVE}
        sync(a, b)
        assert a.all_nodes() == [] and a.all_edges() == []
        assert a.state_digest() == b.state_digest()
    finally:
        a.close()
        b.close()


# ---- budget, backoff, and the write path ---------------------------------------------------


class Counting:
    """An extractor that costs one model call and 100 tokens per bead."""

    name = "fake"
    version = "fake/1"

    def __init__(self) -> None:
        self.calls = 0
        self.down = False
        self.gate: threading.Event | None = None

    def extract(self, beads: Sequence[Bead]) -> list[Extraction]:
        if self.gate is not None:
            self.gate.wait(WAIT)
        if self.down:
            raise ExtractorUnavailable("fake is down")
        out = []
        for bead in beads:
            self.calls += 1
            word = bead.content.split()[-1].strip(".")
            out.append(Extraction(bead.id, entities=(Entity(word, "thing"),), calls=1, tokens=100))
        return out


class Clock:
    def __init__(self) -> None:
        self.now = 10_000.0

    def __call__(self) -> float:
        return self.now


def manual_worker(mem: Memory, extractor: Counting, **kw: Any) -> KnowledgeWorker:
    """A worker of our own (Memory opened with extractor=None), stepped by the test."""
    worker = KnowledgeWorker(mem.reader, mem.knowledge_writer, extractor, **kw)
    worker.close()  # no thread: the test calls step()
    return worker


def drain(worker: KnowledgeWorker) -> None:
    for _ in range(6):  # a closed worker's step() says False: take a few steps regardless
        worker.step()


def test_budget_pauses_extraction(tmp_path: Path) -> None:
    m = open_mem(tmp_path / "a", extractor=None)
    try:
        fake, clock = Counting(), Clock()
        worker = manual_worker(m, fake, budget=Budget(calls_per_hour=2), clock=clock)
        for i in range(3):
            m.append_bead(f"note number thing{i}", ts=1000 + i)
            drain(worker)
        assert fake.calls == 2
        status = worker.status()
        assert status["paused_for_s"] > 0 and "paused" in (status["last_error"] or "")
        assert status["last_hour"] == {"calls": 2, "tokens": 200}
        clock.now += 3601  # the hour has passed
        drain(worker)
        assert fake.calls == 3
        assert {"thing0", "thing1", "thing2"} <= node_ids(m)
    finally:
        m.close()


def test_unavailable_extractor_backs_off_and_loses_nothing(tmp_path: Path) -> None:
    m = open_mem(tmp_path / "a", extractor=None)
    try:
        fake, clock = Counting(), Clock()
        fake.down = True
        worker = manual_worker(m, fake, clock=clock)
        for i in range(3):
            m.append_bead(f"note number thing{i}", ts=1000 + i)
        drain(worker)
        status = worker.status()
        assert "fake is down" in (status["last_error"] or "") and status["paused_for_s"] > 0
        assert status["ops_behind"] > 0 and node_ids(m) == set()
        fake.down = False
        drain(worker)  # still backing off
        assert node_ids(m) == set()
        clock.now += 301
        drain(worker)
        assert {"thing0", "thing1", "thing2"} <= node_ids(m)
        assert worker.status()["last_error"] is None and worker.status()["ops_behind"] == 0
    finally:
        m.close()


def test_append_does_not_wait_for_extraction(tmp_path: Path) -> None:
    fake = Counting()
    fake.gate = threading.Event()
    m = open_mem(tmp_path / "a", extractor=fake)
    try:
        start = time.monotonic()
        bead = m.append_bead("remember the thing", ts=1000)
        m.append_bead("and another thing", ts=1001)
        assert time.monotonic() - start < 2.0
        assert m.get_bead(bead.id).content == "remember the thing"
        assert not m.wait_learned(0.2)
        fake.gate.set()
        learned(m)
        assert "thing" in node_ids(m)
    finally:
        fake.gate.set()
        m.close()


# ---- property: two replicas converge, with validity, and forgotten beads leave no trace -----

STATEMENTS = [
    "I live in Lisbon.",
    "I live in Porto.",
    "I live in Paris.",
    "I work at Acme.",
    "I work at Initech.",
    "We met Ada Lovelace.",
]
step = st.one_of(
    st.tuples(st.just("say"), st.integers(0, 1), st.sampled_from(STATEMENTS), st.integers(0, 9)),
    st.tuples(st.just("forget"), st.integers(0, 1), st.integers(0, 9)),
    st.tuples(st.just("fact"), st.integers(0, 1), st.sampled_from(["Lisbon", "Acme", "Rome"])),
    st.tuples(st.just("rm_edge"), st.integers(0, 1), st.integers(0, 9)),
    st.tuples(st.just("sync"), st.integers(0, 1), st.integers(0, 1)),
)


def run(m: Memory, op: tuple[Any, ...]) -> None:
    kind, _, *args = op
    try:
        if kind == "say":
            text, t = args
            m.append_bead(text, ts=1000 + 100 * t)
        elif kind == "forget":
            live = [b.id for b in m.all_beads()]
            if live:
                m.forget(live[args[0] % len(live)])
        elif kind == "fact":
            m.add_fact("user", "likes", args[0], valid_at=1000)
        elif kind == "rm_edge":
            edges = [e.id for e in m.all_edges()]
            if edges:
                m.remove_edge(edges[args[0] % len(edges)])
    except ChrysalisError as exc:
        assert exc.code in {"not_found", "conflict"}, exc


def forgotten_beads(m: Memory) -> set[str]:
    return {o["target"] for o in m.ops_since({}) if o["kind"] == OpKind.BEAD_FORGET}


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=st.lists(step, min_size=1, max_size=14))
def test_two_replicas_converge_with_knowledge(program: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        mems = [open_mem(Path(tmp) / f"r{i}", replica_id=f"r{i}") for i in range(2)]
        try:
            for op in program:
                if op[0] == "sync":
                    src, dst = mems[op[1]], mems[1 - op[1]]
                    learned(src)
                    dst.apply_ops(src.ops_since(dst.version_vector()))
                else:
                    run(mems[op[1]], op)
                    learned(mems[op[1]])
            sync(*mems)
            a, b = mems
            assert a.state_digest() == b.state_digest()
            assert spans(a) == spans(b)
            gone = forgotten_beads(a)
            for m in mems:
                edges = m.all_edges(include_invalid=True)
                linked = {e.source for e in edges} | {e.target for e in edges}
                items: list[Node | Edge] = [*m.all_nodes(), *edges]
                for item in items:
                    if item.derived_by is not None:
                        assert not gone & set(item.evidence), (item, gone)
                        # no evidence left: only a node another edge still names stays
                        assert item.evidence or item.id in linked, item
        finally:
            for m in mems:
                m.close()


def test_the_forgets_cursor_costs_no_commit_per_write_and_survives_a_restart(
    tmp_path: Path,
) -> None:
    m = open_mem(tmp_path / "a", extractor=None)
    bead = m.append_bead("I live in Lisbon.", ts=1000)
    learned(m)
    commits = m.store.commits
    m.add_node("ada", "person", name="Ada")
    learned(m)
    assert m.store.commits == commits + 1  # the write alone: no cursor commit after it
    m.close()
    m = open_mem(tmp_path / "a")  # now with the rules: the bead is extracted after a restart
    try:
        learned(m)
        assert "lisbon" in node_ids(m)
        m.forget(bead.id)
        learned(m)
        assert "lisbon" not in node_ids(m)
        forget = max(o["seq"] for o in m.ops_since({}) if o["kind"] == OpKind.BEAD_FORGET)
        assert m.reader.get_meta("knowledge:forgets")[m.replica_id] >= forget  # durable
    finally:
        m.close()
    m = open_mem(tmp_path / "a", extractor=None)
    try:  # close made the rest durable
        assert m.reader.get_meta("knowledge:forgets") == m.version_vector()
    finally:
        m.close()


def test_a_fact_trimmed_here_and_removed_there_does_not_outlive_its_beads(
    tmp_path: Path,
) -> None:
    """Found by the property: both say "I live in Lisbon"; A's ops reach B; A forgets its
    bead (A removes the fact) while B forgets its own (B trims the fact to A's bead). After
    the merge the fact was present with no evidence, and no forget named it any more."""
    a = open_mem(tmp_path / "a", replica_id="ra")
    b = open_mem(tmp_path / "b", replica_id="rb")
    try:
        mine = b.append_bead("I live in Lisbon.", ts=1000)
        theirs = a.append_bead("I live in Lisbon.", ts=1000)
        learned(a, b)
        b.apply_ops(a.ops_since(b.version_vector()))
        learned(b)
        assert sorted(b.get_edge(LISBON).evidence) == sorted([mine.id, theirs.id])
        a.forget(theirs.id)
        b.forget(mine.id)
        learned(a, b)
        sync(a, b)
        assert a.all_edges() == [] and b.all_edges() == []
        assert a.all_nodes() == [] and b.all_nodes() == []
        assert a.state_digest() == b.state_digest()
    finally:
        a.close()
        b.close()


class EndedBeforeSaid:
    """States one fact that ended before the bead said it, with no start ("I lived in Lisbon
    until 2020", said in 2023)."""

    name = "ended"
    version = "ended/1"

    def extract(self, beads: Any) -> list[Extraction]:
        return [
            Extraction(b.id, facts=(Fact("ada", "lived_in", "Lisbon", invalid_at=b.ts - 1000),))
            for b in beads
        ]


def test_a_fact_that_ended_before_it_was_said_gets_no_start_after_its_end(
    tmp_path: Path,
) -> None:
    m = open_mem(tmp_path / "a", extractor=EndedBeforeSaid())
    try:
        m.append_bead("I lived in Lisbon until 2020.", ts=5000)
        learned(m)
        (edge,) = m.all_edges(include_invalid=True)
        # was (5000, 4000): the bead's time taken as its start, after its end
        assert (edge.valid_at, edge.invalid_at) == (None, 4000)
    finally:
        m.close()


def test_extraction_waits_while_a_read_is_in_flight(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recall or a context holds the process's `Foreground` busy: the extraction thread
    waits between beads (here as long as the read lasts), then catches up."""
    import chrysalis.extract.worker as worker

    monkeypatch.setattr(worker, "YIELD_S", WAIT)
    foreground = mem.knowledge.foreground
    assert foreground is worker.FOREGROUND  # one per process: every memory's worker yields
    with foreground.busy():
        mem.append_bead("I live in Lisbon.", ts=1000)
        assert not mem.wait_learned(0.5)  # held back while the read lasts
        assert mem.all_edges() == []
    learned(mem)
    assert [e.predicate for e in mem.all_edges()] == ["lives_in"]


def test_recall_and_context_hold_the_foreground_while_they_run(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[int] = []
    real = mem.reader.last_beads

    def watch(*args: Any, **kwargs: Any) -> Any:
        seen.append(mem.knowledge.foreground.reads)
        return real(*args, **kwargs)

    monkeypatch.setattr(mem.reader, "last_beads", watch)
    mem.append_bead("I live in Lisbon.", ts=1000, session_id="s1")
    mem.context("where do I live?", session_id="s1")
    assert seen and all(n >= 1 for n in seen)
    assert mem.knowledge.foreground.reads == 0  # released after


def test_a_forget_is_retracted_even_while_reads_never_stop(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client streaming recalls holds extraction back (at most `YIELD_S` a bead), never a
    forget's retraction: what a forgotten bead supported goes at once."""
    import chrysalis.extract.worker as worker

    bead = mem.append_bead("I live in Lisbon.", ts=1000)
    learned(mem)
    assert mem.all_edges() != []
    monkeypatch.setattr(worker, "YIELD_S", WAIT)
    with mem.knowledge.foreground.busy():
        mem.forget(bead.id)
        learned(mem)  # caught up: retraction did not wait for the read to end
        assert mem.all_edges() == []


def test_the_foreground_is_idle_only_a_grace_after_the_last_read() -> None:
    from chrysalis.extract.worker import Foreground

    ground = Foreground(grace=0.2)
    assert ground.wait_idle(0.0)  # no read yet
    with ground.busy():
        assert ground.reads == 1 and not ground.wait_idle(0.0)
    assert ground.reads == 0
    assert not ground.wait_idle(0.0)  # a read just ended: the next may be coming
    assert ground.wait_idle(WAIT)  # quiet for the grace: idle


def test_reads_compute_at_most_at_once_a_nested_one_never_waits_on_itself() -> None:
    from chrysalis.extract.worker import Foreground

    ground = Foreground(at_once=1)
    inside = threading.Event()
    leave = threading.Event()
    second_in = threading.Event()

    def first() -> None:
        with ground.read():
            inside.set()
            with ground.read():  # nested on one thread: takes no second slot
                leave.wait(WAIT)

    def second() -> None:
        with ground.read():
            second_in.set()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    threads[0].start()
    assert inside.wait(WAIT)
    threads[1].start()
    assert not second_in.wait(0.2)  # the one slot is taken: it waits its turn
    assert ground.reads == 3  # ... counted as a read in flight all the same
    leave.set()
    assert second_in.wait(WAIT)
    for t in threads:
        t.join(WAIT)
    assert ground.reads == 0


def test_a_recall_waits_for_a_slot_when_every_one_is_held(mem: Memory) -> None:
    """`Memory.retrieve` computes in one of the process's `READS_AT_ONCE` slots: with every
    slot held it waits, and answers as soon as one is let go."""
    from chrysalis.extract import worker

    mem.append_bead("I live in Lisbon.", ts=1000)
    holding, release = threading.Barrier(worker.READS_AT_ONCE + 1), threading.Event()

    def hold() -> None:
        with mem.knowledge.foreground.read():
            holding.wait(WAIT)
            release.wait(WAIT)

    holders = [threading.Thread(target=hold) for _ in range(worker.READS_AT_ONCE)]
    for t in holders:
        t.start()
    holding.wait(WAIT)
    answered = threading.Event()
    asker = threading.Thread(target=lambda: (mem.retrieve("Lisbon", k=1), answered.set()))
    asker.start()
    assert not answered.wait(0.3)
    release.set()
    assert answered.wait(WAIT)
    for t in [*holders, asker]:
        t.join(WAIT)


def test_a_read_waiting_on_a_remote_embedder_lets_its_slot_go(tmp_path: Path) -> None:
    """A query embedded by a server (Ollama) is a wait, not work: while every slot's read
    waits on it, another read still computes (a keyword recall, which embeds nothing)."""
    from chrysalis.extract import worker
    from chrysalis.search.embed import DeterministicEmbedder

    entered, release = threading.Semaphore(0), threading.Event()

    class Remote(DeterministicEmbedder):
        remote = True

        def embed_query(self, text: str) -> Any:
            if text == "slow":
                entered.release()
                release.wait(WAIT)
            return super().embed_query(text)

    m = Memory.open(tmp_path / "r", embedder=Remote(), sync=False)
    try:
        m.append_bead("the hives are on the roof", ts=1000)
        m.wait_indexed(WAIT)
        waiters = [
            threading.Thread(target=m.retrieve, args=("slow",)) for _ in range(worker.READS_AT_ONCE)
        ]
        for t in waiters:
            t.start()
        for _ in waiters:
            assert entered.acquire(timeout=WAIT)  # every slot's read is waiting on the server
        done = threading.Event()
        other = threading.Thread(
            target=lambda: (m.retrieve("hives", strategy="keyword"), done.set())
        )
        other.start()
        assert done.wait(WAIT / 2)
        release.set()
        for t in [*waiters, other]:
            t.join(WAIT)
    finally:
        release.set()
        m.close()
