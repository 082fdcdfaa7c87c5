"""Hard cases found in review, each pinned by its reproduction."""

from __future__ import annotations

import hashlib
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from chrysalis import Conflict, InvalidInput, Memory, NotFound
from chrysalis.core.clock import hlc_pack
from chrysalis.core.models import MAX_HLC

from .conftest import exchange

H = "0" * 64


def sync(dst: Memory, src: Memory) -> None:
    dst.apply_ops(src.ops_since(dst.version_vector()))


def test_forget_erases_every_vector_op_not_only_the_winner(
    open_memory: Callable[..., Memory],
) -> None:
    a, b = open_memory("a", replica_id="a"), open_memory("b", replica_id="b")
    a.append_bead("secret", id="x")
    a.put_embedding("bead", "x", "m", [1.0, 2.0], provider="p", text_hash=H)
    exchange(a, b)
    b.put_embedding("bead", "x", "m", [5.0, 6.0], provider="p", text_hash=H)  # loses or wins
    a.put_embedding("bead", "x", "m", [3.0, 4.0], provider="p", text_hash=H)
    a.forget("x")
    exchange(a, b)
    for m in (a, b):
        vectors = [
            op["data"].get("vector") for op in m.ops_since({}) if op["kind"] == "embedding.put"
        ]
        assert vectors == [None, None, None]
    assert a.state_digest() == b.state_digest()


def test_embedding_tie_is_broken_the_same_everywhere(open_memory: Callable[..., Memory]) -> None:
    vec = struct.pack("<2f", 1.0, 2.0)

    def op(replica: str, provider: str) -> dict:  # type: ignore[type-arg]
        return {"replica": replica, "seq": 1, "hlc": hlc_pack(1000), "kind": "embedding.put", "target": "n1",
                "data": {"item_kind": "node", "model": "m", "dims": 2, "provider": provider, "text_hash": H,
                         "vector": vec, "created_at": 1.0, "checksum": hashlib.sha256(vec).hexdigest()}}  # fmt: skip

    b, c = open_memory("b"), open_memory("c")
    b.apply_ops([op("x", "p1")])
    b.apply_ops([op("y", "p2")])
    c.apply_ops([op("y", "p2")])
    c.apply_ops([op("x", "p1")])
    assert b.state_digest() == c.state_digest()
    assert b.get_embedding("node", "n1", "m") == c.get_embedding("node", "n1", "m")


def test_persona_ops_always_pass_peer_validation(open_memory: Callable[..., Memory]) -> None:
    a, b = open_memory("a", replica_id="a"), open_memory("b", replica_id="b")
    a.put_persona({"name": "p", "traits": {f"k{i}": "v" for i in range(150)}})
    a.put_persona(
        {"name": "p", "traits": {f"j{i}": "v" for i in range(150)}}
    )  # 150 set + 150 deleted
    sync(b, a)
    assert b.get_persona() == a.get_persona()
    for bad in ({"": None}, {"\udc80": None}, {"x" * 200: None}):
        with pytest.raises(InvalidInput, match="traits"):
            a.update_persona(traits=bad)
    sync(b, a)
    assert a.state_digest() == b.state_digest()


def test_after_a_merge_past_the_limit_other_fields_can_still_change(
    open_memory: Callable[..., Memory],
) -> None:
    a, b = open_memory("a", replica_id="a"), open_memory("b", replica_id="b")
    a.update_persona(goals=[f"a{i}" for i in range(200)])
    b.update_persona(goals=[f"b{i}" for i in range(200)])
    exchange(a, b)
    assert len(a.get_persona().goals) == 400
    assert a.update_persona(name="new").name == "new"


def test_a_remote_stamp_at_the_end_of_time_cannot_poison_local_ops(
    open_memory: Callable[..., Memory],
) -> None:
    a, b = open_memory("a", replica_id="a"), open_memory("b", replica_id="b")
    op = {
        "replica": "z",
        "seq": 1,
        "hlc": MAX_HLC,
        "kind": "node.put",
        "target": "n1",
        "data": {"set": {"type": "t"}},
    }
    a.apply_ops([op])
    with pytest.raises(Conflict, match="end of time"):
        a.add_node("n1", "t2")
    a.add_node("n2", "t")
    assert all(o["hlc"] <= MAX_HLC for o in a.ops_since({}))
    b.apply_ops([op])
    b.apply_ops(a.ops_since({"z": 1}))  # peers accept everything a wrote
    assert a.state_digest() == b.state_digest()


def test_the_drift_clamp_holds_across_a_restart(tmp_path: Path) -> None:
    far = hlc_pack(int(time.time() * 1000) + 10 * 365 * 86_400_000)
    op = {
        "replica": "z",
        "seq": 1,
        "hlc": far,
        "kind": "node.put",
        "target": "n1",
        "data": {"set": {"type": "t"}},
    }
    with Memory.open(tmp_path / "a", sync=False) as a:
        a.apply_ops([op])
    with Memory.open(tmp_path / "a", sync=False) as a:
        a.append_bead("after restart", id="b2")
        mine = [o for o in a.ops_since({}) if o["replica"] == a.replica_id]
        assert mine[-1]["hlc"] < hlc_pack(int(time.time() * 1000) + 3_600_000)


def test_a_forget_racing_an_append_of_the_same_large_content(
    open_memory: Callable[..., Memory],
) -> None:
    a = open_memory(blob_threshold=1024)
    big = "B" * 100_000
    a.append_bead(big, id="x")
    slow = threading.Thread(target=lambda: a.store.write(lambda ctx: time.sleep(0.3)))
    slow.start()
    time.sleep(0.05)
    forget = threading.Thread(target=lambda: a.forget("x"))
    forget.start()
    time.sleep(0.05)
    a.append_bead(big, id="y")  # shares the blob file the forget wants to delete
    slow.join()
    forget.join()
    assert a.get_bead("y").content == big
    assert [b.id for b in a.last_beads(5)] == ["y"]


def test_an_erased_copy_arriving_after_the_full_one_still_forgets(
    open_memory: Callable[..., Memory],
) -> None:
    a, b, c = (open_memory(n, replica_id=n) for n in ("a", "b", "c"))
    a.append_bead("hello", id="x1")
    a.append_bead("secret", id="X")
    sync(b, a)
    b.forget("X")
    c.apply_ops([a.ops_since({})[1]])  # the full a:2 waits in pending (a gap at a:1)
    c.apply_ops([o for o in b.ops_since({}) if o["replica"] == "a"])  # a:1, and a:2 erased
    with pytest.raises(NotFound):
        c.get_bead("X")
    assert all("secret" not in str(o["data"]) for o in c.ops_since({}))
    d = open_memory("d", replica_id="d")
    d.apply_ops(a.ops_since({}))  # the full copy is logged...
    d.apply_ops([o for o in b.ops_since({}) if o["replica"] == "a"])  # ...then the erased one
    with pytest.raises(NotFound):
        d.get_bead("X")
    exchange(a, b, c, d)
    assert len({m.state_digest() for m in (a, b, c, d)}) == 1


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.get_bead(""),
        lambda m: m.get_node(""),
        lambda m: m.get_edge("a/b"),
        lambda m: m.neighbors(""),
        lambda m: m.forget(""),
        lambda m: m.remove_node(""),
        lambda m: m.delete_skill(7),
        lambda m: m.last_beads(3, session_id=5),
        lambda m: m.ops_since({"a": -5}),
        lambda m: m.add_node("n1", "t", metadata={"k": -(2**64)}),
    ],
)
def test_bad_arguments_are_invalid_input(mem: Memory, call: Callable[[Memory], object]) -> None:
    with pytest.raises(InvalidInput):
        call(mem)


def test_a_bad_call_never_fails_another_writer_in_the_same_commit(mem: Memory) -> None:
    slow = threading.Thread(target=lambda: mem.store.write(lambda ctx: time.sleep(0.3)))
    slow.start()
    time.sleep(0.05)
    errors: list[BaseException] = []

    def bad() -> None:
        try:
            mem.update_persona(traits={"\udc80": None})
        except BaseException as exc:
            errors.append(exc)

    t = threading.Thread(target=bad)
    t.start()
    mem.append_bead("important", id="v")
    t.join()
    slow.join()
    assert mem.get_bead("v").content == "important"
    assert len(errors) == 1 and isinstance(errors[0], InvalidInput)


def test_returned_beads_never_share_lists_with_the_cache(mem: Memory) -> None:
    mem.append_bead(
        "hello", id="x", tags=["t1"], span_refs=[{"path": "f", "start_line": 1, "end_line": 2}]
    )
    mem.last_beads(1)[0].tags.append("INJECTED")
    assert mem.last_beads(1)[0].tags == ["t1"]


def test_presence_dots_do_not_pile_up(mem: Memory) -> None:
    for i in range(50):
        mem.add_node("n", "t", name=f"v{i}")
    record = mem.reader.record("node", "n")
    assert record is not None and len(record["p"]) == 1
    mem.remove_node("n")
    assert len(mem.ops_since({})[-1]["data"]["remove"]) == 1
