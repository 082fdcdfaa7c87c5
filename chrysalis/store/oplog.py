"""Reads of the op log (the ``ops`` database) inside a transaction: the version vector, one
replica's last seq, ranges of ops. The log holds each replica's ops 1..n with no gap, so these
are a few cursor moves each. And `log`, the one way an op is written to it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from chrysalis.store.keys import op_key, unpack

# lmdb's stubs type every value as ``bytes | memoryview``; we never open ``buffers=True``
# transactions, so values are bytes. Transactions and databases are typed loosely.
Txn = Any
Db = Any


def log(txn: Txn, ops: Db, key: bytes, value: bytes) -> None:
    """Write an op's value under its key (replacing one there).

    Appended when the key sorts after every other (LMDB's ``MDB_APPEND``): an ordinary put of
    an ever-growing key splits the last page in two and leaves it half full, which for ops of
    ~2 KB (a 768-dim float16 vector) means one op per 4 KiB page, twice the disk. Anywhere
    else (another replica's ops sort after) it is an ordinary put."""
    if not txn.put(key, value, db=ops, append=True):  # False: not after the last key
        txn.put(key, value, db=ops)


def last_ops(txn: Txn, ops: Db) -> dict[str, tuple[int, int]]:
    """``{replica: (seq, hlc)}`` of each replica's last logged op: a few cursor moves per
    replica, jumping from one replica's range to the next."""
    out: dict[str, tuple[int, int]] = {}
    with txn.cursor(db=ops) as cur:
        found = cur.first()
        while found:
            prefix = cur.key()[:-8]  # replica + b"\0"
            found = cur.set_range(prefix[:-1] + b"\x01")  # the next replica's first op
            if found:
                cur.prev()
            else:
                cur.last()
            key, value = cur.item()
            out[prefix[:-1].decode()] = (int.from_bytes(key[-8:], "big"), unpack(value)["hlc"])
            if found:
                found = cur.next()
    return out


def version_vector(txn: Txn, ops: Db) -> dict[str, int]:
    """``{replica: highest contiguous seq applied}``, read off the op log."""
    return {replica: seq for replica, (seq, _) in last_ops(txn, ops).items()}


def last_seq(txn: Txn, ops: Db, replica: str) -> int:
    """The highest seq of ``replica`` in the op log (0 if none)."""
    prefix = replica.encode() + b"\0"
    with txn.cursor(db=ops) as cur:
        found = cur.set_range(replica.encode() + b"\x01")
        if not (cur.prev() if found else cur.last()):
            return 0
        key = cur.key()
    if key.startswith(prefix) and len(key) == len(prefix) + 8:
        return int.from_bytes(key[-8:], "big")
    return 0


def ops_range(txn: Txn, ops: Db, replica: str, after: int, limit: int) -> list[dict[str, Any]]:
    """Up to ``limit`` of ``replica``'s logged ops after seq ``after``, in seq order."""
    prefix, out = replica.encode() + b"\0", list[dict[str, Any]]()
    with txn.cursor(db=ops) as cur:
        if cur.set_range(op_key(replica, after + 1)):
            for k, v in cur:
                if not k.startswith(prefix) or len(k) != len(prefix) + 8 or len(out) >= limit:
                    break
                out.append(unpack(v))
    return out


def ops_since(txn: Txn, ops: Db, vv: dict[str, int]) -> Iterator[dict[str, Any]]:
    """The ops the holder of ``vv`` lacks, per replica in seq order."""
    for replica, seq in sorted(version_vector(txn, ops).items()):
        have = vv.get(replica, 0)
        if seq <= have:
            continue
        prefix = replica.encode() + b"\0"
        with txn.cursor(db=ops) as cur:
            if not cur.set_range(op_key(replica, have + 1)):
                continue
            for k, v in cur:
                if not k.startswith(prefix) or len(k) != len(prefix) + 8:
                    break
                yield unpack(v)
