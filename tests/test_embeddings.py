"""Embedding vectors: stored as float16 (or float32) bytes, LWW per (item, model), replicated, forgotten."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import numpy as np
import pytest

from chrysalis import InvalidInput, Memory, NotFound

from .conftest import exchange

H = hashlib.sha256(b"text").hexdigest()


def test_put_get_and_replicate(open_memory: Callable[..., Memory]) -> None:
    a, b = open_memory("a", replica_id="a"), open_memory("b", replica_id="b")
    bead = a.append_bead("text")
    a.put_embedding("bead", bead.id, "m1", [0.5, -1.0, 2.0], provider="test", text_hash=H)
    got = a.get_embedding("bead", bead.id, "m1")
    assert got.dims == 3 and np.frombuffer(got.vector, "<f4").tolist() == [0.5, -1.0, 2.0]
    exchange(a, b)  # vectors replicate: a laptop without the model still has them
    assert b.get_embedding("bead", bead.id, "m1") == got
    with pytest.raises(NotFound):
        b.get_embedding("bead", bead.id, "other-model")


def test_concurrent_vectors_converge_to_one(open_memory: Callable[..., Memory]) -> None:
    a, b = open_memory("a", replica_id="a"), open_memory("b", replica_id="b")
    a.add_node("n", "thing")
    a.put_embedding("node", "n", "m", [1.0, 0.0], provider="x", text_hash=H)
    b.put_embedding("node", "n", "m", [0.0, 1.0], provider="y", text_hash=H)
    exchange(a, b)
    assert a.get_embedding("node", "n", "m") == b.get_embedding("node", "n", "m")
    assert a.state_digest() == b.state_digest()


def test_forget_removes_the_vector_everywhere(open_memory: Callable[..., Memory]) -> None:
    a, b, c = (open_memory(n, replica_id=n) for n in ("a", "b", "c"))
    bead = a.append_bead("secret")
    vec = np.arange(8, dtype="<f4")
    a.put_embedding("bead", bead.id, "m", vec, provider="t", text_hash=H)
    exchange(a, b)
    b.forget(bead.id)
    c.apply_ops(b.ops_since({"a": 2}))  # the forget before the bead and its vector
    exchange(a, b, c)
    for m in (a, b, c):
        with pytest.raises(NotFound):
            m.get_embedding("bead", bead.id, "m")
        op = m.log_op("a", 2)
        assert op is not None and op["data"] == {"item_kind": "bead", "model": "m", "erased": True}
    assert a.state_digest() == b.state_digest() == c.state_digest()
    with pytest.raises(NotFound, match="no bead"):
        a.put_embedding("bead", bead.id, "m", vec, provider="t", text_hash=H)


def test_bad_vectors(mem: Memory) -> None:
    bead = mem.append_bead("x")
    with pytest.raises(InvalidInput, match="finite"):
        mem.put_embedding("bead", bead.id, "m", [1.0, float("nan")], provider="t", text_hash=H)
    with pytest.raises(InvalidInput, match="vector"):
        mem.put_embedding("bead", bead.id, "m", ["a", "b"], provider="t", text_hash=H)
    with pytest.raises(InvalidInput, match="text_hash"):
        mem.put_embedding("bead", bead.id, "m", [1.0], provider="t", text_hash="nope")
    with pytest.raises(InvalidInput, match="item_kind"):
        mem.put_embedding("planet", "p", "m", [1.0], provider="t", text_hash=H)
    with pytest.raises(NotFound):
        mem.put_embedding("bead", "missing", "m", [1.0], provider="t", text_hash=H)
    assert mem.version_vector() == {mem.replica_id: 1}


def test_remote_embedding_with_a_wrong_checksum_is_rejected(
    open_memory: Callable[..., Memory],
) -> None:
    a, b = open_memory("a", replica_id="a"), open_memory("b", replica_id="b")
    bead = a.append_bead("x")
    a.put_embedding("bead", bead.id, "m", [1.0, 2.0], provider="t", text_hash=H)
    ops = a.ops_since({})
    ops[1]["data"]["vector"] = np.asarray([9.0, 9.0], "<f4").tobytes()
    with pytest.raises(InvalidInput, match="checksum"):
        b.apply_ops(ops)
    assert b.version_vector() == {}


def _copies(mem: Memory, raw: bytes) -> int:
    """How many values of the replicated databases (op log and views) hold ``raw``."""
    with mem.store.read() as txn:
        dump = mem.store.dump(txn)
    return sum(value.count(raw) for rows in dump.values() for _, value in rows)


def test_a_vector_is_stored_once(open_memory: Callable[..., Memory]) -> None:
    """Once in LMDB, in its op (which sync needs): the view names the op, on the replica that
    wrote it, on one that applied it, after a newer vector wins, and across a reopen."""
    a, b = open_memory("a", replica_id="a"), open_memory("b", replica_id="b")
    bead = a.append_bead("text")
    rng = np.random.default_rng(5)
    first, second = (rng.standard_normal(96).astype("<f2") for _ in range(2))
    a.put_embedding("bead", bead.id, "m96", first, provider="test", text_hash=H)
    assert _copies(a, first.tobytes()) == 1  # stored as float16: these values are exact there
    exchange(a, b)
    assert _copies(b, first.tobytes()) == 1
    assert b.get_embedding("bead", bead.id, "m96").vector == first.astype("<f4").tobytes()
    b.put_embedding("bead", bead.id, "m96", second, provider="test", text_hash=H)
    exchange(a, b)
    for mem in (a, b):  # the loser stays in its op (a replica may not have it yet), once
        assert mem.get_embedding("bead", bead.id, "m96").vector == second.astype("<f4").tobytes()
        assert _copies(mem, second.tobytes()) == 1 and _copies(mem, first.tobytes()) == 1
    assert a.state_digest() == b.state_digest()
    path = a.path
    a.close()
    with Memory.open(path, sync=False) as again:
        assert again.get_embedding("bead", bead.id, "m96").vector == second.astype("<f4").tobytes()


def _stored(mem: Memory) -> bytes:
    """The vector bytes of the last embedding op: what LMDB keeps and sync sends."""
    return bytes(mem.ops_since({})[-1]["data"]["vector"])


def test_vectors_are_stored_as_float16_when_that_keeps_them(mem: Memory) -> None:
    """A unit vector, and one of any ordinary scale, costs two bytes a component and comes
    back within float16's rounding; a vector float16 would damage stays float32, exact."""
    bead = mem.append_bead("text")
    rng = np.random.default_rng(11)
    unit = rng.standard_normal(384).astype(np.float32)
    unit /= np.linalg.norm(unit)
    for scale in (1.0, 250.0, 0.01):
        mem.put_embedding("bead", bead.id, "m", unit * scale, provider="t", text_hash=H)
        assert len(_stored(mem)) == 384 * 2
        back = np.frombuffer(mem.get_embedding("bead", bead.id, "m").vector, "<f4")
        assert np.abs(back - unit * scale).max() <= 1e-3 * scale
        assert float(back @ unit) / scale == pytest.approx(1.0, abs=1e-3)
    huge = unit * 1e6  # past float16's largest value (65,504)
    tiny = unit * 1e-6  # in float16's subnormals: rounding would reorder its neighbours
    lopsided = np.zeros(384, np.float32)
    lopsided[:2] = [1.0, 3e-4]  # a small component float16 keeps well enough (next to 1.0)
    for vector, width in ((huge, 4), (tiny, 4), (lopsided, 2)):
        mem.put_embedding("bead", bead.id, "m", vector, provider="t", text_hash=H)
        assert len(_stored(mem)) == 384 * width
        back = np.frombuffer(mem.get_embedding("bead", bead.id, "m").vector, "<f4")
        if width == 4:
            assert back.tobytes() == vector.astype("<f4").tobytes()


def test_float32_ops_of_older_replicas_still_apply_and_read(
    open_memory: Callable[..., Memory],
) -> None:
    """Ops written before float16 (``dims * 4`` bytes) replicate and read as they were; a
    vector of any other length is refused with both lengths named, and nothing applied."""
    a, b = open_memory("a", replica_id="a"), open_memory("b", replica_id="b")
    bead = a.append_bead("x")
    a.put_embedding("bead", bead.id, "m", [0.25, -0.5, 1.0], provider="t", text_hash=H)
    ops = a.ops_since({})
    old = np.asarray([0.1, 0.2, 0.3], "<f4").tobytes()  # not exact in float16
    ops[1]["data"]["vector"] = old
    ops[1]["data"]["checksum"] = hashlib.sha256(old).hexdigest()
    odd = [dict(ops[0]), {**ops[1], "data": {**ops[1]["data"], "vector": old[:-2]}}]
    odd[1]["data"]["checksum"] = hashlib.sha256(old[:-2]).hexdigest()
    with pytest.raises(InvalidInput, match=r"10 bytes, expected dims\*2 = 6 .* dims\*4 = 12"):
        b.apply_ops(odd)
    assert b.version_vector() == {}
    b.apply_ops(ops)
    assert b.get_embedding("bead", bead.id, "m").vector == old


def test_the_op_log_packs_768_dim_vectors_two_to_a_page(
    open_memory: Callable[..., Memory],
) -> None:
    """A float16 768-dim op (~1.9 KB) fits a leaf page twice; written as ever-growing keys
    with ordinary puts LMDB would split each full page in half and keep one op per 4 KiB.
    Ops of another replica whose id sorts after this one's are still logged (not appended)."""
    a = open_memory("a", replica_id="a")
    z = open_memory("z", replica_id="z")
    beads = a.append_beads([{"content": f"reading {i} of the tide gauge"} for i in range(300)])
    rng = np.random.default_rng(9)
    rows = rng.standard_normal((300, 768)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    a.put_embeddings(
        [{"item_kind": "bead", "item_id": b.id, "model": "m768", "vector": rows[i],
          "provider": "t", "text_hash": H} for i, b in enumerate(beads)]
    )  # fmt: skip
    with a.store.read() as txn:
        stat = txn.stat(a.store.dbs["ops"])
    assert stat["overflow_pages"] == 0
    assert stat["leaf_pages"] <= 300 / 2 + 30  # 300 vectors two a page, the beads' ops besides
    z.append_bead("a note from the other laptop")
    exchange(a, z)  # a logs z's op after its own: an ordinary put, in order
    assert a.version_vector() == z.version_vector() and a.state_digest() == z.state_digest()
    assert a.get_embedding("bead", beads[-1].id, "m768").dims == 768
