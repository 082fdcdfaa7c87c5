"""Red team of round 3, session 3: one node per name (a hand-written fact and an extracted
entity of one name share a node), the inspector's cached drawing, and the clients' transport
without a TLS context. Each test is an attack that worked, or one that must keep failing."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from chrysalis import Memory

from .daemon_process import DaemonProcess, DaemonThread, raw_http
from .eventually import eventually


def holding(mem: Memory, predicate: str) -> dict[str, set[str]]:
    """Subject name -> the names of the objects of ``predicate`` that hold now."""
    out: dict[str, set[str]] = {}
    for e in mem.all_edges(include_invalid=False):
        if e.predicate == predicate:
            subject = mem.get_node(e.source).name or e.source
            out.setdefault(subject, set()).add(mem.get_node(e.target).name or e.target)
    return out


# ---- one node per name -------------------------------------------------------------------


def test_forgetting_the_bead_that_ended_a_hand_written_fact_brings_the_fact_back(
    open_memory: Callable[..., Memory],
) -> None:
    """A bead in Nadia's name ("I started at Brightwater") is extracted onto her hand-written
    node and ends her hand-written job. Forgetting that bead must undo all of it: the job
    holds again and keeps no end taken from the forgotten bead's time."""
    mem = open_memory("undo", extractor="rules")
    job = mem.add_fact("Nadia", "works_at", "Kestrel Freight", valid_at=1_400_000_000)
    bead = mem.append_bead("I started at Brightwater last week.", source="Nadia", ts=1_650_000_000)
    assert mem.wait_learned(timeout=30)
    assert holding(mem, "works_at") == {"Nadia": {"Brightwater"}}  # as designed: it supersedes
    mem.forget(bead.id)
    assert mem.wait_learned(timeout=30)
    assert holding(mem, "works_at") == {"Nadia": {"Kestrel Freight"}}
    back = mem.get_edge(job.id)
    assert back.invalid_at is None and back.valid_at == 1_400_000_000
    assert "Brightwater" not in str(back.model_dump())
    # and a fact that still has a later one stays ended by that one, not revived
    mem.add_fact("Nadia", "works_at", "Orrin Labs", valid_at=1_700_000_000)
    assert holding(mem, "works_at") == {"Nadia": {"Orrin Labs"}}
    assert mem.get_edge(job.id).invalid_at == 1_700_000_000


def test_an_extracted_fact_between_two_hand_written_ones_leaves_the_right_end_when_forgotten(
    open_memory: Callable[..., Memory],
) -> None:
    """Hand-written: Ilse lived in Graz from T1, Linz from T3. A bead at T2 ("I live in
    Salzburg now") ends Graz at T2. Forgotten, Graz ends at T3 again (Linz), not at T2."""
    mem = open_memory("between", extractor="rules")
    graz = mem.add_fact("Ilse", "lives_in", "Graz", valid_at=1_400_000_000)
    mem.add_fact("Ilse", "lives_in", "Linz", valid_at=1_700_000_000)
    bead = mem.append_bead("I live in Salzburg now.", source="Ilse", ts=1_550_000_000)
    assert mem.wait_learned(timeout=30)
    assert mem.get_edge(graz.id).invalid_at == 1_550_000_000
    mem.forget(bead.id)
    assert mem.wait_learned(timeout=30)
    assert mem.get_edge(graz.id).invalid_at == 1_700_000_000
    assert holding(mem, "lives_in") == {"Ilse": {"Linz"}}


@pytest.mark.parametrize(
    ("written", "said"),
    [("Möller", "Müller"), ("Zoë", "Zoé"), ("Łukasz", "Ukasz"), ("José", "Josè")],
)
def test_a_bead_about_someone_whose_name_differs_in_a_letter_leaves_a_persons_facts_alone(
    open_memory: Callable[..., Memory], written: str, said: str
) -> None:
    """The slug drops letters outside ASCII (``node_id("Möller") == node_id("Müller") ==
    "m-ller"``): the extractor must not take another person's bead onto the hand-written
    node of a name that only shares its slug, nor end their facts."""
    mem = open_memory("letters", extractor="rules")
    mem.add_fact(written, "works_at", "Harbour Mill", valid_at=1_400_000_000)
    mem.append_bead("I now work at Tidewater.", source=said, ts=1_650_000_000)
    assert mem.wait_learned(timeout=30)
    assert holding(mem, "works_at") == {written: {"Harbour Mill"}, said: {"Tidewater"}}


def test_a_hand_written_fact_is_not_put_on_an_extracted_node_of_another_name(
    open_memory: Callable[..., Memory],
) -> None:
    """The other way: Jürgen's bead made an extracted node (its keyed id hashes the slug
    "j-rgen"); a fact written by hand about Jörgen must not land on it."""
    mem = open_memory("other-way", extractor="rules")
    mem.append_bead("I work at Tidewater.", source="Jürgen", ts=1_500_000_000)
    assert mem.wait_learned(timeout=30)
    mem.add_fact("Jörgen", "works_at", "Harbour Mill", valid_at=1_600_000_000)
    assert holding(mem, "works_at") == {"Jürgen": {"Tidewater"}, "Jörgen": {"Harbour Mill"}}


def test_a_node_written_without_a_name_takes_none_from_a_bead(
    open_memory: Callable[..., Memory],
) -> None:
    """An agent made node "mateo-ib-ez" with no name. A bead naming "Mateo Ibáñez" (the same
    slug) must not write its words onto that node: after the bead is forgotten, no part of
    the name it gave is left anywhere in the graph or its drawing."""
    mem = open_memory("nameless", extractor="rules")
    mem.add_node("mateo-ib-ez", "project")
    bead = mem.append_bead(
        "Lunch with Mateo Ibáñez today; Mateo Ibáñez wants the draft by Friday.",
        source="Odile",
        ts=1_600_000_000,
    )
    assert mem.wait_learned(timeout=30)
    assert any(n.name == "Mateo Ibáñez" for n in mem.all_nodes())  # the extractor found him
    assert mem.get_node("mateo-ib-ez").name is None
    mem.forget(bead.id)
    assert mem.wait_learned(timeout=30)
    names = [n.name for n in mem.all_nodes()] + list(mem.graph_drawing().names)
    assert not any("Ibáñez" in (n or "") for n in names), names
    assert mem.get_node("mateo-ib-ez").evidence == []


def test_case_and_spacing_of_one_name_still_make_one_node(
    open_memory: Callable[..., Memory],
) -> None:
    """What the fix must keep: "Rosalind Achebe" written by hand and "rosalind  achebe" or
    "ROSALIND ACHEBE." from a bead are one person."""
    mem = open_memory("same", extractor="rules")
    mem.add_fact("Rosalind Achebe", "works_at", "Quarry Row", valid_at=1_400_000_000)
    mem.append_bead("I now work at Lanternfish.", source="ROSALIND  ACHEBE", ts=1_650_000_000)
    assert mem.wait_learned(timeout=30)
    assert holding(mem, "works_at") == {"Rosalind Achebe": {"Lanternfish"}}


@pytest.mark.xfail(
    strict=True,
    reason="graph_ids.node_id keeps only ASCII letters: 'Möller' and 'Müller' written by hand "
    "are one node (slug 'm-ller'); changing the slug changes every stored id (a migration)",
)
def test_two_hand_written_names_differing_in_a_non_ascii_letter_are_two_nodes(
    mem: Memory,
) -> None:
    mem.add_fact("Möller", "works_at", "Harbour Mill")
    mem.add_fact("Müller", "works_at", "Tidewater")
    assert {n.name for n in mem.all_nodes()} >= {"Möller", "Müller"}


# ---- the inspector's cached drawing ------------------------------------------------------


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[DaemonThread]:
    d = DaemonThread(tmp_path / "data", env={"CHRYSALIS_EXTRACTOR": "rules"}).start()
    yield d
    assert d.stop() == 0, d.output()
    d.close()


@pytest.fixture
def http(daemon: DaemonProcess) -> Iterator[httpx.Client]:
    with raw_http(daemon.socket) as client:
        yield client


def drawn_names(r: httpx.Response) -> set[str | None]:
    assert r.status_code == 200, r.text
    return set(r.json()["nodes"]["name"])


def halloway(r: httpx.Response) -> bool:
    return any("Halloway" in (name or "") for name in drawn_names(r))


def test_one_memorys_drawing_or_tag_is_never_another_memorys(http: httpx.Client) -> None:
    """Two memories with the same graph shape asked the same way: each gets its own names,
    and one memory's ETag sent to the other gets that other's drawing, never a 304."""
    assert http.post("/v1/memories", json={"name": "work"}).status_code == 201
    http.post("/v1/kg/facts", json={"subject": "Thea Vance", "predicate": "knows", "object": "Bo"})
    http.post(
        "/v1/m/work/kg/facts", json={"subject": "Ugo Pratt", "predicate": "knows", "object": "Cy"}
    )
    home, work = http.get("/v1/kg/graph/draw"), http.get("/v1/m/work/kg/graph/draw")
    assert drawn_names(home) == {"Thea Vance", "Bo"} and drawn_names(work) == {"Ugo Pratt", "Cy"}
    assert home.headers["etag"] != work.headers["etag"]
    crossed = http.get("/v1/m/work/kg/graph/draw", headers={"if-none-match": home.headers["etag"]})
    assert drawn_names(crossed) == {"Ugo Pratt", "Cy"}
    # a memory dropped and made again under its name is a new graph: the old tag is no use
    assert http.delete("/v1/memories/work").status_code in (200, 204)
    assert http.post("/v1/memories", json={"name": "work"}).status_code == 201
    again = http.get("/v1/m/work/kg/graph/draw", headers={"if-none-match": work.headers["etag"]})
    assert drawn_names(again) == set()


def test_a_forgotten_beads_entity_leaves_every_cached_drawing(
    http: httpx.Client, daemon: DaemonProcess
) -> None:
    """A drawing cached in two shapes names an entity from a bead; the bead is forgotten.
    The old ETag gets a new drawing without the name, in either shape, and no drawing the
    daemon keeps in memory holds it any more."""
    from chrysalisd.routes import kg

    text = "Yesterday I met Corvin Halloway at the print studio."
    r = http.post("/v1/beads", json={"content": text})
    assert r.status_code == 201, r.text
    bead = r.json()["id"]
    first = eventually(
        lambda: http.get("/v1/kg/graph/draw"),
        timeout=30,
        what="the extractor to draw Corvin Halloway",
        until=halloway,
    )
    assert halloway(http.get("/v1/kg/graph/draw?limit=7"))
    assert http.delete(f"/v1/beads/{bead}").status_code == 204
    tag = {"if-none-match": first.headers["etag"]}
    after = eventually(
        lambda: http.get("/v1/kg/graph/draw", headers=tag),
        timeout=30,
        what="the forget to take Corvin Halloway out of the drawing",
        until=lambda r: r.status_code == 200 and not halloway(r),
    )
    assert after.headers["etag"] != first.headers["etag"]
    kept = [body for drawn in kg._drawn.values() for _, body in drawn.answers.values()]
    assert kept and not any(b"Halloway" in body for body in kept)


# ---- the clients' transport (no TLS context: a Unix socket only) -------------------------


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_the_clients_never_leave_the_socket_for_tcp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scheme: str
) -> None:
    """The transports are built with ``verify=False`` (no CA bundle is loaded). Nothing may
    turn that into a TCP connection without TLS checks: not proxy variables in the
    environment, not a server on our socket (ours: same uid) redirecting to a port."""
    import asyncio
    import os
    import select
    import socket
    import threading

    from chrysalis.client import AsyncClient, Client
    from chrysalis.core.errors import ChrysalisError

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(name, f"{scheme}://127.0.0.1:{port}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    folder = tmp_path / "s"
    folder.mkdir(mode=0o700)
    path = folder / "d.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    os.chmod(path, 0o600)
    server.listen(8)
    served: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                served.append(conn.recv(65536))
                conn.sendall(
                    f"HTTP/1.1 307 Temporary Redirect\r\nLocation: {scheme}://127.0.0.1:{port}"
                    "/v1/status\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode()
                )

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        # a 307 is no answer of the API's: an error (today the body's JSONDecodeError)
        with Client(socket=path, timeout=5) as client, pytest.raises((ChrysalisError, ValueError)):
            client.status()

        async def call() -> None:
            async with AsyncClient(socket=path, timeout=5) as client:
                await client.status()

        with pytest.raises((ChrysalisError, ValueError)):
            asyncio.run(call())
        assert len(served) == 2 and all(b"/v1/status" in s for s in served)
        assert select.select([listener], [], [], 0.3)[0] == [], "a client connected over TCP"
    finally:
        server.shutdown(socket.SHUT_RDWR)  # wakes the accept (a close alone does not)
        server.close()
        listener.close()
        thread.join(timeout=5)


def test_a_node_removed_while_its_facts_are_read_does_not_fail_the_panel(
    http: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A concurrent client removes the node at a fact's other end between the read of the
    chosen node's facts and the read of their ends' names: the chosen node exists, so the
    answer is its facts (the gone end without a name), not a 404 naming another node."""
    http.post("/v1/kg/facts", json={"subject": "Pernille", "predicate": "knows", "object": "Ivo"})
    read = Memory.edges_at

    def then_removed(self: Memory, node_id: str, limit: int = 500) -> Any:
        found = read(self, node_id, limit)
        self.remove_node("ivo")  # the other client, in the window
        return found

    monkeypatch.setattr(Memory, "edges_at", then_removed)
    r = http.get("/v1/kg/nodes/pernille/edges")
    assert r.status_code == 200, r.text
    assert r.json()["names"] == {"pernille": "Pernille", "ivo": None}
