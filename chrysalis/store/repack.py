"""Compacting LMDB: replace ``data.mdb`` by a copy holding live pages only.

LMDB never writes a page in place: an erased op's old value stays on a freed page until the
page is reused, which may be never. A compacting copy (``mdb_env_copy2`` with
``MDB_CP_COMPACT``) holds live pages only; renamed over the file, it leaves no freed page
behind (`chrysalis.forget.scrub` runs this after forgets).

The copy reads one snapshot, so readers and writers go on while it is made and synced (a
second or more for a gigabyte). Then, as a queued write (writers wait, readers wait only for
the close, rename and reopen: milliseconds), it is swapped in if nothing committed since its
snapshot. A memory written to meanwhile gets a second copy, made with writers held (measured:
a second free try rarely wins at 100,000 beads, where a copy takes a second). A crash leaves
the old file or the new one whole (the copy is synced before the rename); a leftover copy is
deleted when the store opens.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import lmdb

from chrysalis.core.errors import ChrysalisError
from chrysalis.store.atomic import sync_path
from chrysalis.store.keys import DB_NAMES, u64

TRIES = 1  # copies made while writers go on, before one made with writers held
COMPACT_DIR = "compacting"  # in lmdb/: a compacting copy on its way to replace data.mdb
Txn = Any


class Repackable(Protocol):
    """What compaction uses of `chrysalis.store.env.Repackable`."""

    path: Path
    env: Any

    def read(self) -> contextlib.AbstractContextManager[Txn]: ...
    def write(self, fn: Callable[[Any], Any], *, maintenance: bool = ...) -> Any: ...
    def swap_file(self, new: Path) -> None: ...
    def failed(self, exc: BaseException) -> ChrysalisError: ...


def compact(store: Repackable, before_swap: Callable[[Txn], Any] | None = None) -> Any:
    """Swap a compacting copy in; returns what ``before_swap`` returned (called with the read
    transaction of the state the copy holds)."""
    tmp = store.path / "lmdb" / COMPACT_DIR
    for _ in range(TRIES):
        with store.read() as txn:
            snapshot = txn.id()
            result = _copy(store, tmp, txn, before_swap)

        def swap_if_unchanged(_ctx: Any, snapshot: int = snapshot) -> bool:
            if store.env.info()["last_txnid"] != snapshot:
                return False  # a commit came after the copy's snapshot: it lacks it
            store.swap_file(tmp / "data.mdb")
            return True

        if store.write(swap_if_unchanged, maintenance=True):
            shutil.rmtree(tmp, ignore_errors=True)
            return result

    def copy_and_swap(_ctx: Any) -> Any:
        with store.env.begin() as txn:
            result = _copy(store, tmp, txn, before_swap)
        store.swap_file(tmp / "data.mdb")
        shutil.rmtree(tmp, ignore_errors=True)
        return result

    return store.write(copy_and_swap, maintenance=True)


def _copy(store: Repackable, tmp: Path, txn: Txn, before_swap: Callable[[Txn], Any] | None) -> Any:
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        result = before_swap(txn) if before_swap else None
        store.env.copy(str(tmp), compact=True, txn=txn)
        # The new file is the same data dir, not a copy of it: its fingerprint (an inode,
        # which the rename keeps) goes in before the swap (`chrysalis.store.datadir`).
        copy = lmdb.open(str(tmp), map_size=store.env.info()["map_size"], max_dbs=len(DB_NAMES) + 2)
        try:
            with copy.begin(write=True, db=copy.open_db(b"meta")) as w:
                w.put(b"fingerprint", u64(os.stat(tmp / "data.mdb").st_ino))
        finally:
            copy.close()
        sync_path(tmp / "data.mdb")
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise store.failed(exc) from exc
    return result
