"""A memory without a sync key keeps its graph key in the data dir (issue 28 C9, the hole left
after keyed ids): whoever copies the data dir reads the key and tests names against the ids a
forget left behind. A forget that retracts an entity therefore has the key rotated at the
scrub (`KnowledgeWriter.rotate`): every live entity moved to its id under a new key, the old
key erased and compacted out of the file, so the tombstones are under a key that exists
nowhere."""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lmdb

from chrysalis import Memory
from chrysalis.graph import derived_node_id
from chrysalis.keys import DB_NAMES, unpack

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
