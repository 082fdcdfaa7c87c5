"""A data dir's identity: the lock that keeps it to one process, and the meta that says whose
replica it is (replica id, generation, format, and the fingerprint that notices a copy).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import secrets
import threading
import time
from pathlib import Path
from typing import Any

from chrysalis.core.errors import DataDirLocked, StoreError
from chrysalis.store.keys import pack, u64, unpack
from chrysalis.store.oplog import last_seq

log = logging.getLogger(__name__)

FORMAT_VERSION = 1


class DataDirLock:
    """An exclusive lock on the data dir: across processes (flock) and within this one."""

    _held: set[str] = set()
    _guard = threading.Lock()

    def __init__(self, path: Path) -> None:
        self.key = str(path.resolve())
        with self._guard:
            if self.key in self._held:
                raise DataDirLocked(f"data dir {path} is already open in this process")
            self._held.add(self.key)
        self.fd = os.open(path / "LOCK", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            other = os.pread(self.fd, 32, 0).decode(errors="replace").strip() or "?"
            os.close(self.fd)
            with self._guard:
                self._held.discard(self.key)
            raise DataDirLocked(
                f"data dir {path} is in use by another process (pid {other}); "
                "one memory is opened by one process at a time (the daemon, if it is running)"
            ) from None
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, str(os.getpid()).encode(), 0)

    def release(self) -> None:
        with contextlib.suppress(OSError):
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
        with self._guard:
            self._held.discard(self.key)


def init_meta(txn: Any, meta: Any, ops: Any, path: Path, replica_id: str | None) -> str:
    """Make or check the data dir's identity in an open write transaction; returns the
    replica id to write under.

    A new data dir gets ``replica_id`` (or a random one) and generation 1. An existing one
    must have this build's format; if its LMDB file is not the one it was last opened as (a
    copy or a restore), it starts a new generation (`new_generation`).
    """
    existing = txn.get(b"replica_id", db=meta)
    if existing is None:
        txn.put(b"replica_id", (replica_id or secrets.token_hex(8)).encode(), db=meta)
        txn.put(b"generation", u64(1), db=meta)
        txn.put(b"format", u64(FORMAT_VERSION), db=meta)
        txn.put(b"created_at", pack(time.time()), db=meta)
    elif replica_id is not None and existing.decode() != replica_id:
        raise DataDirLocked(
            f"data dir {path} belongs to replica {existing.decode()}, not {replica_id}"
        )
    fmt = int.from_bytes(txn.get(b"format", db=meta), "big")
    if fmt != FORMAT_VERSION:
        raise StoreError(f"data dir {path} has format {fmt}; this build reads {FORMAT_VERSION}")
    here = u64(os.stat(path / "lmdb" / "data.mdb").st_ino)
    seen = txn.get(b"fingerprint", db=meta)
    if seen is not None and seen != here and replica_id is None:
        new_generation(txn, meta, ops, "the data dir was copied or restored")
    txn.put(b"fingerprint", here, db=meta)
    return str(txn.get(b"replica_id", db=meta).decode())


def new_generation(txn: Any, meta: Any, ops: Any, why: str) -> None:
    """Write from now on under a fresh replica id (generation + 1).

    A copied or restored data dir must not go on writing under the id it shares with its
    original: two writers would make different ops with the same dots. The old id's ops stay
    in the log like any other replica's; ``lineage`` remembers up to which seq this copy holds
    them, so sync can still publish those (identical on both copies).
    """
    old = txn.get(b"replica_id", db=meta).decode()
    upto = last_seq(txn, ops, old)
    raw = txn.get(b"m:lineage", db=meta)
    lineage = [] if raw is None else unpack(raw)
    lineage.append({"replica": old, "upto": upto, "at": time.time(), "why": why})
    new = secrets.token_hex(8)
    txn.put(b"m:lineage", pack(lineage), db=meta)
    txn.put(b"replica_id", new.encode(), db=meta)
    txn.put(b"generation", u64(int.from_bytes(txn.get(b"generation", db=meta), "big") + 1), db=meta)
    log.warning("%s: replica %s continues as %s (new generation)", why, old, new)
