"""How the LMDB environment is laid out: its named databases, their key encodings, the value
codec, and what a forget leaves of an op.

Named databases (keys are bytes; ``\\0`` separates variable parts, ints are 8-byte big-endian):

    meta       name -> value            replica id, generation, format, cursors
    ops        replica\\0seq -> op       the op log (msgpack of the op's wire dict); it holds
                                        each replica's ops 1..n, so it *is* the version vector
    pending    replica\\0seq -> op       remote ops waiting for a gap to fill
    beads      id -> entry              sorted add dots [[hlc, replica, seq], ...] or "forgotten"
    bead_time  ts_us hlc replica\\0seq -> id          beads in time order
    bead_sess  session\\0 ts_us hlc replica\\0seq -> id
    nodes, edges, skills, persona       id -> record (see `chrysalis.core.crdt`)
    adj        node\\0edge -> b"o" | b"i"           edges by endpoint
    emb        kind\\0item\\0model -> record        embedding vectors as float32 bytes
    blobrefs   sha256\\0bead -> b""                 which live beads use a blob
    bead_from  evidence\\0bead -> b""               live summaries by the beads they stand on
    mentions   the typed-mention timeline, local and derived (`chrysalis.read.mentions`)
    scrub      b"op\\0" replica\\0seq -> done       ops a forget erased, and blobs it left
               b"blob\\0" sha256 -> done           unused: the remote's to-do (sync/scrub.py;
                                                  ``done``: per remote id, what is finished)

Pure: no I/O.
"""

from __future__ import annotations

from typing import Any

import msgpack

DB_NAMES = (
    "meta", "ops", "pending", "beads", "bead_time", "bead_sess",
    "nodes", "edges", "adj", "persona", "skills", "emb", "blobrefs", "forgets", "scrub",
    "bead_from", "mentions",
)  # fmt: skip
STATE_DBS = ("beads", "nodes", "edges", "persona", "skills", "emb")  # what state_digest() hashes
SNAPSHOT_DBS = (
    "ops", "beads", "bead_time", "bead_sess", "nodes", "edges", "adj", "persona", "skills",
    "emb", "blobrefs", "bead_from",
)  # fmt: skip
RECORD_DBS = {"node": "nodes", "edge": "edges", "persona": "persona", "skill": "skills"}
PERSONA_KEY = b"persona"


def pack(value: Any) -> bytes:
    return msgpack.packb(value, use_bin_type=True)  # type: ignore[no-any-return]


def unpack(data: bytes) -> Any:
    return msgpack.unpackb(data, raw=False)


def u64(n: int) -> bytes:
    return n.to_bytes(8, "big")


def op_key(replica: str, seq: int) -> bytes:
    return replica.encode() + b"\0" + u64(seq)


SCRUB_OP = b"op\0"  # scrub keys: SCRUB_OP + op_key(replica, seq), SCRUB_BLOB + sha256
SCRUB_BLOB = b"blob\0"


def time_key(ts: float, hlc: int, replica: str, seq: int) -> bytes:
    return u64(round(ts * 1_000_000)) + u64(hlc) + op_key(replica, seq)


def emb_key(kind: str, item: str, model: str) -> bytes:
    return f"{kind}\0{item}\0{model}".encode()


def record_key(collection: str, id: str) -> bytes:
    """The key of a record (node, edge, skill, or the one persona) in its database."""
    return PERSONA_KEY if collection == "persona" else id.encode()


def erased_data(data: dict[str, Any]) -> dict[str, Any]:
    """What a forgotten bead's add op keeps."""
    return {"id": data["id"], "ts": data["ts"], "erased": True}


def erased_embedding(data: dict[str, Any]) -> dict[str, Any]:
    """What an embedding op of a forgotten bead keeps."""
    return {"item_kind": data["item_kind"], "model": data["model"], "erased": True}


def same_op(stored: dict[str, Any], incoming: dict[str, Any]) -> bool:
    """Equal, or equal but for one side having had its content erased by a forget."""
    if stored == incoming:
        return True
    kind = stored["kind"]
    if kind != incoming["kind"] or kind not in ("bead.add", "embedding.put", "node.put"):
        return False
    a, b = dict(stored), dict(incoming)
    da, db = a.pop("data"), b.pop("data")
    if a != b or not (da.get("erased") or db.get("erased")):
        return False
    if kind == "node.put":  # a retracted node's put keeps all but what it added
        return {k: v for k, v in da.items() if k not in ("add", "erased")} == {
            k: v for k, v in db.items() if k not in ("add", "erased")
        }
    keys = ("id", "ts") if stored["kind"] == "bead.add" else ("item_kind", "model")
    return all(da.get(k) == db.get(k) for k in keys)
