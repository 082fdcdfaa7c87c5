"""Entity ids are keyed (issue 28 C9): the id a forgotten entity leaves behind (a tombstone in
the log and the views) gives its name back to no one who hashes a list of candidate names,
while the replicas of a memory, sharing its graph key, still name an entity alike."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

from chrysalis import Memory
from chrysalis.core.graph_ids import derived_node_id, edge_id, graph_key, node_id
from chrysalis.sync import Sync

FORGOTTEN = ["Reykjavik", "Olga Ivanova"]
CANDIDATES = [
    *FORGOTTEN,
    "Lisbon", "Porto", "Oslo", "Helsinki", "Tallinn", "Riga", "Vilnius", "Warsaw", "Prague",
    "Vienna", "Budapest", "Zagreb", "Sofia", "Athens", "Rome", "Madrid", "Paris", "Dublin",
    "Edinburgh", "Cardiff", "Copenhagen", "Stockholm", "Bergen", "Akureyri", "Nuuk",
    "Anna Petrova", "Olga Petrova", "Ivan Ivanov", "Maria Ivanova", "Olga Smirnova",
    "Anna Ivanova", "Elena Ivanova", "Natalia Ivanova", "Sergei Ivanov", "Olga Kuznetsova",
    "Ada Lovelace", "Alan Turing", "Grace Hopper", "Maria", "Anna", "Olga", "Ivanova",
    "Acme", "Globex", "Initech",
]  # fmt: skip  # 47 names, as the red team tried
SECRET = b"the team's sync key"


def open_mem(path: Path, **options: object) -> Memory:
    return Memory.open(path, sync=False, extractor="rules", scrub_delay=0.1, **options)  # type: ignore[arg-type]


def unkeyed_ids(name: str) -> set[str]:
    """What graph.py made of a name before ids were keyed: the slug (facts, and extracted
    entities before round 2) and the unkeyed BLAKE2b of it (round 2)."""
    slug = node_id(name)
    return {slug, "n-" + hashlib.blake2b(slug.encode(), digest_size=12).hexdigest()}


def files(root: Path) -> bytes:
    """Every byte of every file in the data dir: the raw LMDB file, the index files, blobs."""
    return b"\n".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


def recovered(data: bytes) -> list[str]:
    """The candidates a dictionary attack finds: a name whose hashed id (or the name itself,
    in any case) is anywhere in ``data``."""
    low = data.lower()
    return [
        name
        for name in CANDIDATES
        if name.lower().encode() in low or any(i.encode() in data for i in unkeyed_ids(name))
    ]


def forget_all_mentions(mem: Memory) -> list[str]:
    """Write beads naming the two, and one that stays; forget every bead naming them; wait
    until every receipt is clean. Answers the ids forgotten."""
    mem.append_bead("I live in Reykjavik.", session_id="trip")
    mem.append_bead("Olga Ivanova sent the report about Reykjavik.", session_id="trip")
    mem.append_bead("Ada Lovelace wrote the notes.", session_id="notes")
    assert mem.wait_learned(10)
    names = {n.name for n in mem.all_nodes()}
    assert set(FORGOTTEN) | {"Ada Lovelace"} <= names, names
    gone: list[str] = []
    for word in ("Reykjavik", "Olga"):
        for bead_id in mem.select_beads({"query": word}).ids:
            mem.forget(bead_id)
            gone.append(bead_id)
    assert len(gone) == 2 and mem.wait_learned(10)
    assert {n.name for n in mem.all_nodes()} == {"Ada Lovelace"}
    deadline = time.monotonic() + 20
    while not all(mem.forget_receipt(b).clean for b in gone):
        assert time.monotonic() < deadline, [mem.forget_receipt(b) for b in gone]
        time.sleep(0.1)
    return gone


def test_a_dictionary_recovers_no_forgotten_entity_from_the_data_dir(tmp_path: Path) -> None:
    """The red team's attack: 47 candidate names hashed as graph.py did, against every byte
    of the data dir after a clean forget (on main it found both)."""
    mem = open_mem(tmp_path / "a")
    try:
        forget_all_mentions(mem)
    finally:
        mem.close()
    data = files(tmp_path / "a")
    assert recovered(data) == ["Ada Lovelace"]  # only the entity that was not forgotten


def test_with_a_sync_key_the_data_dir_holds_no_key_to_test_a_name(tmp_path: Path) -> None:
    """Keyed from the sync key (as the daemon opens a memory that has one), the data dir
    holds neither the graph key nor anything it was made from: hashing candidate names with
    any key found there finds nothing. Whoever holds the sync key can still test a name
    against the tombstone (the documented limit)."""
    mem = open_mem(tmp_path / "a", graph_secret=SECRET)
    try:
        forget_all_mentions(mem)
        assert mem.reader.get_meta("graph:key") is None
    finally:
        mem.close()
    data = files(tmp_path / "a")
    key = graph_key(SECRET)
    assert key not in data and SECRET not in data
    assert recovered(data) == ["Ada Lovelace"]
    assert derived_node_id("Reykjavik", key).encode() in data  # the limit: the key holder


def test_without_a_sync_key_the_data_dir_key_never_leaves_in_an_op(tmp_path: Path) -> None:
    mem = open_mem(tmp_path / "a")
    try:
        mem.append_bead("I live in Reykjavik.")
        assert mem.wait_learned(10)
        key = mem.reader.get_meta("graph:key")
        assert isinstance(key, bytes) and len(key) == 32
        assert mem.entity_id("Reykjavik") == derived_node_id("Reykjavik", key)
        assert mem.get_node("Reykjavik").id == mem.entity_id("Reykjavik")
        ops = repr(mem.ops_since({})).encode()
        assert key.hex().encode() not in ops and repr(key).encode() not in ops
    finally:
        mem.close()
    again = open_mem(tmp_path / "a")  # reopened: the same key, nothing to move
    try:
        assert again.get_node("Reykjavik").id == derived_node_id("Reykjavik", key)
        assert not again.knowledge_writer.rekey_due()
    finally:
        again.close()


def test_replicas_that_share_a_sync_key_name_an_entity_alike(tmp_path: Path) -> None:
    a = open_mem(tmp_path / "a", replica_id="ra", graph_secret=SECRET)
    b = open_mem(tmp_path / "b", replica_id="rb", graph_secret=SECRET)
    try:
        mine = a.append_bead("I live in Reykjavik.")
        theirs = b.append_bead("It was cold in Reykjavik.")
        assert a.wait_learned(10) and b.wait_learned(10)
        for src, dst in ((a, b), (b, a)):
            dst.apply_ops(src.ops_since(dst.version_vector()))
        assert a.wait_learned(10) and b.wait_learned(10)
        for m in (a, b):
            node = m.get_node("Reykjavik")
            assert node.id == derived_node_id("Reykjavik", graph_key(SECRET))
            assert sorted(node.evidence) == sorted([mine.id, theirs.id])
        assert a.state_digest() == b.state_digest()
    finally:
        a.close()
        b.close()


def test_replicas_on_a_plaintext_remote_adopt_its_key_and_move_what_they_named(
    tmp_path: Path,
) -> None:
    """Without a sync key, each data dir starts with a key of its own; opening the remote
    gives both the key its format carries, and each moves the entities it named before."""
    remote = f"file://{tmp_path / 'shared'}"
    (tmp_path / "shared").mkdir()
    a = open_mem(tmp_path / "a", replica_id="ra")
    b = open_mem(tmp_path / "b", replica_id="rb")
    try:
        mine = a.append_bead("I live in Reykjavik.")
        theirs = b.append_bead("It was cold in Reykjavik.")
        assert a.wait_learned(10) and b.wait_learned(10)
        assert a.get_node("Reykjavik").id != b.get_node("Reykjavik").id  # own keys
        sa, sb = Sync(a, remote), Sync(b, remote)
        for s in (sa, sb, sa, sb):
            s.pull()
            s.push()
        for m in (a, b):  # a last learned what b moved; b learns what a moved
            assert m.wait_learned(10)
        sa.pull()
        sb.pull()
        assert a.wait_learned(10) and b.wait_learned(10)
        for m in (a, b):
            derived = [n for n in m.all_nodes() if n.derived_by is not None]
            assert [n.name for n in derived if n.name == "Reykjavik"] == ["Reykjavik"]
            node = m.get_node("Reykjavik")
            assert sorted(node.evidence) == sorted([mine.id, theirs.id])
            assert m.entity_id("Reykjavik") == node.id
        assert a.entity_id("Reykjavik") == b.entity_id("Reykjavik")
    finally:
        a.close()
        b.close()


def test_a_new_key_moves_entities_and_their_facts_and_erases_the_old_names(
    tmp_path: Path,
) -> None:
    mem = open_mem(tmp_path / "a")
    try:
        said = mem.append_bead("I live in Reykjavik.")
        assert mem.wait_learned(10)
        old = mem.get_node("Reykjavik").id
        old_fact = edge_id(mem.entity_id("user"), "lives_in", old)
        assert mem.get_edge(old_fact).evidence == [said.id]
        mem.use_graph_secret(SECRET, keep=False)
        assert mem.wait_learned(10)
        key = graph_key(SECRET)
        new = derived_node_id("Reykjavik", key)
        node = mem.get_node("Reykjavik")
        assert (node.id, node.evidence, node.derived_by) == (new, [said.id], "rules/6")
        fact = mem.get_edge(edge_id(derived_node_id("user", key), "lives_in", new))
        assert fact.evidence == [said.id] and fact.valid_at is not None
        assert {e.id for e in mem.all_edges()} == {fact.id}
        assert {n.id for n in mem.all_nodes()} == {new, derived_node_id("user", key)}
        assert mem.reader.get_meta("graph:key") is None  # the old key left the data dir
        puts = [o for o in mem.ops_since({}) if o["kind"] == "node.put" and o["target"] == old]
        assert puts and all("Reykjavik" not in repr(o["data"]) for o in puts)
        assert not mem.knowledge_writer.rekey_due()
    finally:
        mem.close()
