"""A memory without a sync key keeps its graph key in the data dir (issue 28 C9, the hole left
after keyed ids): whoever copies the data dir reads the key and tests names against the ids a
forget left behind. A forget that retracts an entity therefore has the key rotated at the
scrub (`KnowledgeWriter.rotate`): every live entity moved to its id under a new key, the old
key erased and compacted out of the file, so the tombstones are under a key that exists
nowhere."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lmdb

from chrysalis import Memory
from chrysalis.core.graph_ids import derived_node_id, graph_key
from chrysalis.store.keys import DB_NAMES, unpack
from chrysalis.sync import Sync

from .test_knowledge_ids import CANDIDATES, FORGOTTEN, files, forget_all_mentions, open_mem

NAMES = [*CANDIDATES, "Lyon", "Kyiv", "Olga"]  # the red team's 47 and three more: 50
_BIN = re.compile(rb"\xc4(\x10|\x20)")  # msgpack bin8 of 16 or 32 bytes, as LMDB values hold keys
_HEX = re.compile(rb"(?<![0-9a-f])([0-9a-f]{64}|[0-9a-f]{32})(?![0-9a-f])")
_ID = re.compile(rb"n-[0-9a-f]{24}")


def _bytes_in(value: Any) -> Iterator[bytes]:
    if isinstance(value, bytes):
        if len(value) in (16, 32):
            yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _bytes_in(k)
            yield from _bytes_in(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _bytes_in(v)


def candidate_keys(root: Path, scratch: Path) -> set[bytes]:
    """Every 16- or 32-byte string an attacker can pull out of a copy of the data dir: each
    msgpack binary of that length and each hex string of that length in any file's raw
    bytes, and every such value (nested too) of every record of every LMDB database, read
    from a copy opened read-only."""
    keys: set[bytes] = set()
    data = files(root)
    for m in _BIN.finditer(data):
        size = m.group(1)[0]
        keys.add(data[m.end() : m.end() + size])
    keys.update(bytes.fromhex(h.decode()) for h in _HEX.findall(data))
    shutil.copytree(root / "lmdb", scratch)
    env = lmdb.open(str(scratch), readonly=True, lock=False, max_dbs=len(DB_NAMES) + 1)
    try:
        for name in DB_NAMES:
            db = env.open_db(name.encode(), create=False)
            with env.begin(db=db) as txn:
                for _k, raw in txn.cursor():
                    try:
                        value = unpack(raw)
                    except Exception:  # a raw (not msgpack) value: keep it whole
                        value = bytes(raw)
                    keys.update(_bytes_in(value))
    finally:
        env.close()
    return keys


def dictionary_hits(root: Path, scratch: Path) -> list[str]:
    """The names of the dictionary whose keyed id, under any candidate key, is in a file."""
    ids = set(_ID.findall(files(root)))
    keys = candidate_keys(root, scratch)
    assert keys, "the attack found no candidate key at all: it is not looking"
    return [n for n in NAMES if any(derived_node_id(n, k).encode() in ids for k in keys)]


def test_the_data_dir_key_cannot_test_a_forgotten_name_after_the_scrub(tmp_path: Path) -> None:
    """The attack: entities extracted, every bead naming two of them forgotten, receipts
    clean and the scrub done; the attacker reads every key-sized value in the data dir and
    hashes 50 names with each. The entity that stays is still found under the live key
    (the attack works); the forgotten ones are not."""
    mem = open_mem(tmp_path / "a")
    try:
        forget_all_mentions(mem)
        assert not mem.scrubber.due()
    finally:
        mem.close()
    found = dictionary_hits(tmp_path / "a", tmp_path / "scratch")
    assert "Ada Lovelace" in found  # the live key is in the data dir, as it must be
    assert not set(FORGOTTEN) & set(found), found


def _op_count(mem: Memory) -> int:
    return sum(mem.version_vector().values())


def test_forgets_in_one_scrub_window_rotate_the_key_once_and_the_receipt_waits(
    tmp_path: Path,
) -> None:
    """Two forgets that each retract an entity, before one scrub: the receipt says the LMDB
    file is pending (the key is still there) until the scrub; the scrub makes one new key,
    moves the live entities and their facts to it and leaves the old key in no meta."""
    mem = Memory.open(tmp_path / "a", sync=False, extractor="rules", scrub_delay=3600)
    try:
        first = mem.append_bead("I live in Reykjavik.")
        second = mem.append_bead("Olga Ivanova sent the report.")
        mem.append_bead("I work at Globex with Ada Lovelace.")
        assert mem.wait_learned(10)
        old_key = mem.reader.get_meta("graph:key")
        ada = mem.get_node(mem.entity_id("Ada Lovelace")).id
        facts = {e.predicate for e in mem.all_edges()}
        for bead in (first, second):
            mem.forget(bead.id)
            assert mem.wait_learned(10)
        assert mem.knowledge_writer.rotation_due() and mem.scrubber.due()
        lmdb_place = next(p for p in mem.forget_receipt(first.id).places if "lmdb" in p.name)
        assert lmdb_place.state == "pending" and "key" in lmdb_place.why, lmdb_place
        before = _op_count(mem)
        mem.scrubber.run()
        new_key = mem.reader.get_meta("graph:key")
        assert isinstance(new_key, bytes) and len(new_key) == 32 and new_key != old_key
        assert not mem.knowledge_writer.rotation_due() and not mem.scrubber.due()
        assert mem.forget_receipt(first.id).clean and mem.forget_receipt(second.id).clean
        # The live entities moved: found by name under the new key, with their facts.
        node = mem.get_node(mem.entity_id("Ada Lovelace"))
        assert node.id == derived_node_id("Ada Lovelace", new_key) != ada
        assert mem.entity_id("Globex") == derived_node_id("Globex", new_key)
        assert {e.predicate for e in mem.all_edges()} == facts - {"lives_in"}
        live = [n for n in mem.all_nodes() if n.derived_by is not None]
        edges = list(mem.all_edges())
        assert _op_count(mem) - before == 2 * (len(live) + len(edges))  # a put and a remove each
        assert not mem.knowledge_writer.rekey_due()
        # Learning goes on under the new key.
        mem.append_bead("Ada Lovelace moved to Lyon.")
        assert mem.wait_learned(10)
        assert mem.get_node("Lyon").id == derived_node_id("Lyon", new_key)
        assert mem.get_node(mem.entity_id("Ada Lovelace")).id == node.id
    finally:
        mem.close()
    again = Memory.open(tmp_path / "a", sync=False, extractor="rules", scrub_delay=3600)
    try:  # reopened: the new key is the data dir's own, and may rotate again
        assert again.entities.own and again.entities.key == new_key
        assert not again.knowledge_writer.rekey_due()
    finally:
        again.close()


def test_a_forget_that_retracts_no_entity_keeps_the_key(tmp_path: Path) -> None:
    mem = Memory.open(tmp_path / "a", sync=False, extractor="rules", scrub_delay=3600)
    try:
        mem.append_bead("Ada Lovelace wrote the notes.")
        trivia = mem.append_bead("Ada Lovelace liked the notes.")
        assert mem.wait_learned(10)
        key = mem.reader.get_meta("graph:key")
        mem.forget(trivia.id)  # Ada stays: another bead names her
        assert mem.wait_learned(10)
        assert not mem.knowledge_writer.rotation_due()
        mem.scrubber.run()
        assert mem.reader.get_meta("graph:key") == key
    finally:
        mem.close()


def test_a_key_held_elsewhere_is_not_rotated(tmp_path: Path) -> None:
    """The limit: a key derived from the sync key or from a plaintext remote's format is
    not the data dir's own; a forget leaves it as it is (a plaintext remote's key is in its
    format.json for any bucket reader: DESIGN §14 says to use a sync key)."""
    keyed = Memory.open(
        tmp_path / "k", sync=False, extractor="rules", scrub_delay=3600, graph_secret=b"sk"
    )
    try:
        said = keyed.append_bead("I live in Reykjavik.")
        assert keyed.wait_learned(10)
        keyed.forget(said.id)
        assert keyed.wait_learned(10)
        assert not keyed.knowledge_writer.rotation_due() and not keyed.entities.own
        keyed.scrubber.run()
        assert keyed.entities.key == graph_key(b"sk")
    finally:
        keyed.close()
    (tmp_path / "shared").mkdir()
    mem = Memory.open(tmp_path / "p", sync=False, extractor="rules", scrub_delay=3600)
    try:
        assert mem.entities.own
        Sync(mem, f"file://{tmp_path / 'shared'}").push()
        key = mem.entities.key
        assert not mem.entities.own and mem.reader.get_meta("graph:key") == key
        said = mem.append_bead("I live in Reykjavik.")
        assert mem.wait_learned(10)
        mem.forget(said.id)
        assert mem.wait_learned(10)
        assert not mem.knowledge_writer.rotation_due()
        mem.scrubber.run()
        assert mem.entities.key == key
    finally:
        mem.close()
    again = Memory.open(tmp_path / "p", sync=False, extractor="rules", scrub_delay=3600)
    try:  # reopened before it connects: the kept key is known to be the remote's
        assert not again.entities.own and again.entities.key == key
    finally:
        again.close()
