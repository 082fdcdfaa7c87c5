"""Embedding vectors: stored as float32 bytes, LWW per (item, model), replicated, forgotten."""

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
