"""Import is all or nothing for any size: every line is checked first (an error names its
true line number), then what is new is written in one transaction; a failure leaves the
memory as it was."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from chrysalis import Memory
from chrysalis.core.errors import Conflict, InvalidInput, NotFound
from chrysalis.store.env import WriteContext
from chrysalisd.exchange import FORMAT, FORMAT_VERSION, import_lines

from .daemon_process import DaemonProcess
from .eventually import eventually

HEADER = json.dumps({"kind": "header", "format": FORMAT, "version": FORMAT_VERSION}).encode()


def export_of(n_lines: int) -> bytes:
    """An export of ``n_lines`` lines: the header, then beads."""
    bead = (
        b'{"kind":"bead","item":{"id":"imp-%06d","ts":1700000000.5,"role":"user",'
        b'"content":"imported bead %d, about lunch","source":null,"session_id":"s%d",'
        b'"turn_id":null,"importance":0.5,"tags":[],"span_refs":[],"blob":null}}\n'
    )
    return b"".join([HEADER + b"\n", *(bead % (i, i, i % 20) for i in range(1, n_lines))])


def cut(data: bytes) -> bytes:
    """The export with its last line cut in the middle (no final newline)."""
    return data[: data.rindex(b"\n", 0, len(data) - 1) + 40]


@pytest.fixture
def memory(tmp_path: Path) -> Any:
    with Memory.open(tmp_path / "m", sync=False) as m:
        m.append_bead("here before", id="before")
        m.add_node("n1", "thing")
        yield m


def test_a_200000_line_export_cut_short_names_its_last_line_and_imports_nothing(
    memory: Memory,
) -> None:
    data = cut(export_of(200_000))
    assert data.count(b"\n") == 199_999  # the 200,000th line is the cut one
    digest = memory.state_digest()  # (how fast: bench/import_bench.py, not a timed test)
    with pytest.raises(InvalidInput) as err:
        import_lines(memory, io.BytesIO(data))
    assert err.value.message.startswith("line 200000: not JSON: ")
    assert err.value.message.endswith("(the line ends without a newline: was the file cut?)")
    assert memory.state_digest() == digest
    assert [b.id for b in memory.all_beads()] == ["before"]


def test_an_import_that_fails_while_writing_writes_nothing(memory: Memory) -> None:
    lines = [
        HEADER,
        b'{"kind":"node","item":{"id":"n2","type":"thing"}}',
        b'{"kind":"skill","item":{"id":"sk","name":"cooking"}}',
        b'{"kind":"edge","item":{"id":"e1","source":"n1","target":"nowhere","predicate":"p"}}',
        b'{"kind":"bead","item":{"id":"new","ts":1.5,"content":"new bead"}}',
    ]
    digest = memory.state_digest()
    ops = memory.stats()["ops"]
    with pytest.raises(NotFound, match=r"^line 4: no node 'nowhere'.*; nothing imported$"):
        import_lines(memory, b"\n".join(lines) + b"\n")
    assert memory.state_digest() == digest
    assert memory.stats()["ops"] == ops
    assert memory.version_vector() == {memory.replica_id: ops}
    with pytest.raises(NotFound):
        memory.get_node("n2")
    # The same file without the bad edge goes in whole, and the seqs go on without a gap.
    del lines[3]
    got = import_lines(memory, b"\n".join(lines) + b"\n")
    assert got["added"] == {"persona": 0, "skill": 1, "node": 1, "edge": 0, "bead": 1}
    assert memory.version_vector() == {memory.replica_id: ops + 3}


def test_a_conflicting_bead_names_its_line_and_imports_nothing(memory: Memory) -> None:
    lines = [
        HEADER,
        b'{"kind":"node","item":{"id":"n2","type":"thing"}}',
        b'{"kind":"bead","item":{"id":"before","ts":1.5,"content":"other content"}}',
    ]
    digest = memory.state_digest()
    with pytest.raises(Conflict, match=r"^line 3: bead 'before' exists here with other content"):
        import_lines(memory, b"\n".join(lines))
    assert memory.state_digest() == digest


def test_an_atomic_write_that_fails_after_writing_commits_nothing(memory: Memory) -> None:
    store = memory.store
    digest, seq = memory.state_digest(), store.seq

    def half(ctx: WriteContext) -> None:
        memory.add_node("half", "thing")  # joins this transaction
        raise Conflict("changed my mind")

    with pytest.raises(Conflict, match="changed my mind"):
        store.write(half, atomic=True)
    assert (memory.state_digest(), store.seq) == (digest, seq)

    def whole(ctx: WriteContext) -> str:
        memory.add_node("a", "thing")
        return memory.add_edge("a", "n1", "knows").id

    edge = store.write(whole, atomic=True)
    assert memory.get_edge(edge).source == "a"
    assert store.seq == seq + 2


# ---- through a real daemon ---------------------------------------------------------------------


def test_the_cli_streams_an_import_and_a_cut_file_changes_nothing(tmp_path: Path) -> None:
    d = DaemonProcess(tmp_path / "data").start()
    try:
        d.once("remember", "here before", id="before")
        # the digest once the indexer has written the bead's vector (an op of the state too)
        status = eventually(lambda: d.once("status"), timeout=30, what="the bead's vector",
                            until=lambda s: s["counts"]["embeddings"] == 1)  # fmt: skip
        digest = status["state_digest"]
        cut_file = tmp_path / "cut.jsonl"
        # the CLI's path (200,000 lines cut short: the test above)
        cut_file.write_bytes(cut(export_of(20_000)))
        done = d.cli("import", str(cut_file))
        assert done.returncode == 1, done.stderr
        assert done.stderr.startswith("error: line 20000: not JSON: "), done.stderr
        assert "was the file cut?" in done.stderr
        assert d.once("status")["state_digest"] == digest
        assert d.once("status")["counts"]["beads"] == 1

        whole = export_of(5_000)  # a whole one goes in whole (smaller: writing takes longer)
        whole_file = tmp_path / "whole.jsonl"
        whole_file.write_bytes(whole)
        done = d.cli("import", str(whole_file), "--json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["added"]["bead"] == 4_999
        assert d.once("status")["counts"]["beads"] == 5_000
        with d.client(timeout=120) as c:  # a second time, streamed by the client: nothing new
            chunks = (whole[i : i + 65536] for i in range(0, len(whole), 65536))
            again = c.import_lines(chunks)
            assert (again["added"]["bead"], again["unchanged"]["bead"]) == (0, 4_999)
    finally:
        assert d.stop() == 0, d.output()
        d.close()


def test_derived_knowledge_imports_once(tmp_path: Path) -> None:
    """Importing an export with derived nodes and edges again changes nothing, though the
    importing memory's knowledge worker derives them too (derived_by and an edge's metadata
    are not written by an import)."""
    from chrysalisd.exchange import export_lines

    with (
        Memory.open(tmp_path / "a", sync=False, extractor="rules") as a,
        Memory.open(tmp_path / "b", sync=False, extractor="rules") as b,
    ):
        a.append_bead("I live in Lisbon and work at Acme Corp")
        assert a.wait_learned(5)
        dump = b"".join(export_lines(a))
        first = import_lines(b, dump)["added"]
        assert first["node"] >= 2 and first["edge"] >= 1 and first["bead"] == 1
        assert b.wait_learned(5)
        assert sum(import_lines(b, dump)["added"].values()) == 0
