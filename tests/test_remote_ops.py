"""apply_ops: idempotent, any order, gaps wait; malformed ops and cloned dots change nothing."""

from __future__ import annotations

import copy
import shutil
from collections.abc import Callable
from typing import Any

import pytest

from chrysalis import DotConflict, InvalidInput, Memory
from chrysalis.core.models import OPS


def snapshot(mem: Memory) -> tuple[str, dict[str, int], int]:
    return mem.state_digest(), mem.version_vector(), mem.pending_ops()


@pytest.fixture
def source(open_memory: Callable[..., Memory]) -> Memory:
    src = open_memory("src", replica_id="src")
    src.append_bead("one", id="b1", session_id="s")
    src.add_node("n1", "thing", name="N", labels=["l"])
    src.update_persona(name="P", goals=["g"])
    src.put_skill({"id": "k", "name": "K"})
    return src


def test_local_ops_are_in_canonical_wire_form(source: Memory) -> None:
    source.forget("b1")
    source.remove_node("n1")
    source.delete_skill("k")
    ops = source.ops_since({})
    assert OPS.dump_python(OPS.validate_python(ops), exclude_unset=True) == ops


def test_out_of_order_duplicated_ops_wait_for_gaps(
    source: Memory, open_memory: Callable[..., Memory]
) -> None:
    dst = open_memory("dst")
    ops = source.ops_since({})
    r = dst.apply_ops([ops[3], ops[2]])
    assert (r.applied, r.pending) == (0, 2)
    assert dst.version_vector().get("src", 0) == 0  # nothing visible past a gap
    r = dst.apply_ops([ops[1], ops[1], ops[0]])
    assert (r.applied, r.duplicates, r.pending) == (4, 1, 0)
    r = dst.apply_ops(ops)
    assert (r.applied, r.duplicates) == (0, 4)
    assert dst.state_digest() == source.state_digest()


def test_pending_ops_survive_a_restart(
    source: Memory, open_memory: Callable[..., Memory], tmp_path: Any
) -> None:
    ops = source.ops_since({})
    with Memory.open(tmp_path / "late", sync=False) as dst:
        dst.apply_ops(ops[1:])
    with Memory.open(tmp_path / "late", sync=False) as dst:
        assert dst.pending_ops() == 3
        dst.apply_ops(ops[:1])
        assert dst.state_digest() == source.state_digest()


def mangle(op: dict[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    op = copy.deepcopy(op)
    target = op
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return op


BAD = [
    (["data", "content"], KeyError, "content"),
    (["data", "content"], 7, "content"),
    (["data", "content"], "lone \udc80", "lone surrogate"),
    (["data", "importance"], "high", "importance"),
    (["data", "extra"], 1, "extra"),
    (["kind"], "bead.explode", "kind"),
    (["replica"], "Not A Replica", "replica"),
    (["seq"], 0, "seq"),
    (["seq"], "1", "seq"),
    (["hlc"], -1, "hlc"),
    (["target"], "../../etc", "target"),
    (["target"], "other-id", "is not the bead id"),
    (["data"], KeyError, "data"),
]


@pytest.mark.parametrize(("path", "value", "fragment"), BAD)
def test_malformed_remote_op_is_rejected_without_touching_state(
    source: Memory, open_memory: Callable[..., Memory], path: list[Any], value: Any, fragment: str
) -> None:
    dst = open_memory("dst")
    good = source.ops_since({})
    dst.apply_ops(good[:1])
    before = snapshot(dst)
    bad = mangle(good[0], path, value)
    bad["seq"] = bad["seq"] + 1 if path != ["seq"] else bad["seq"]
    with pytest.raises(InvalidInput) as info:
        dst.apply_ops([*good[1:], bad])  # good ops in the same batch are not applied either
    assert fragment in str(info.value)
    assert snapshot(dst) == before


def test_malformed_payload_inside_record_ops(
    source: Memory, open_memory: Callable[..., Memory]
) -> None:
    dst = open_memory("dst")
    ops = source.ops_since({})
    node_put = next(op for op in ops if op["kind"] == "node.put")
    for path, value in [
        (["data", "set", "type"], None),
        (["data", "add", "labels"], "not-a-list"),
        (["data", "drop"], {"labels": {"x": ["not a dot"]}}),
        (["data", "set", "metadata"], {"k": float("inf")}),
    ]:
        with pytest.raises(InvalidInput):
            dst.apply_ops([mangle(node_put, path, value)])
    assert snapshot(dst) == (Memory.state_digest(dst), {}, 0)


def test_copied_data_dir_starts_a_new_generation(
    open_memory: Callable[..., Memory], tmp_path: Any
) -> None:
    a = open_memory("a", replica_id="a")
    a.append_bead("before the copy", id="x")
    a.close()
    shutil.copytree(tmp_path / "a", tmp_path / "a-copy")
    a = open_memory("a")
    copy = open_memory("a-copy")
    assert a.replica_id == "a" and a.store.generation == 1  # the original keeps its identity
    assert copy.replica_id != "a" and copy.store.generation == 2
    assert copy.store.get_meta("lineage")[0] | {"at": 0} == {
        "replica": "a", "upto": 1, "at": 0, "why": "the data dir was copied or restored"
    }  # fmt: skip
    a.append_bead("written on the original", id="y1")
    copy.append_bead("written on the copy", id="y2")
    b = open_memory("b")
    b.apply_ops(a.ops_since({}))
    b.apply_ops(copy.ops_since({}))  # no conflict: the copy writes under its own id
    a.apply_ops(copy.ops_since(a.version_vector()))
    copy.apply_ops(a.ops_since(copy.version_vector()))
    assert a.state_digest() == b.state_digest() == copy.state_digest()
    copy.close()
    assert open_memory("a-copy").replica_id == copy.replica_id  # reopened in place: the same


def test_cloned_data_dir_is_a_dot_conflict(
    open_memory: Callable[..., Memory], tmp_path: Any
) -> None:
    a = open_memory("a", replica_id="a")
    a.append_bead("before the clone", id="x")
    a.close()
    shutil.copytree(tmp_path / "a", tmp_path / "a-clone")
    a = open_memory("a", replica_id="a")
    clone = open_memory("a-clone", replica_id="a")  # pinned: a clone that escaped detection
    a.append_bead("written on the original", id="y1")
    clone.append_bead("written on the clone", id="y2")  # same dot a:2, other content
    b = open_memory("b")
    b.apply_ops(a.ops_since({}))
    before = snapshot(b)
    with pytest.raises(DotConflict, match="a:2 arrived with content different"):
        b.apply_ops(clone.ops_since({}))
    assert snapshot(b) == before
    # the same in the pending table: a conflicting dot that waits for a gap
    c = open_memory("c")
    c.apply_ops(a.ops_since({})[1:])
    with pytest.raises(DotConflict):
        c.apply_ops(clone.ops_since({})[1:])
    # and ops claiming to be ours beyond what we wrote
    a.append_bead("more on the original", id="y3")
    with pytest.raises(DotConflict, match="claims to be ours"):
        clone.apply_ops(a.ops_since({"a": 2}))


def test_erased_and_full_versions_of_one_op_are_not_a_conflict(
    open_memory: Callable[..., Memory],
) -> None:
    a, b = open_memory("a", replica_id="a"), open_memory("b", replica_id="b")
    a.append_bead("secret", id="s1")
    full = a.ops_since({})
    b.apply_ops(full)
    b.forget("s1")
    a.apply_ops(b.ops_since(a.version_vector()))
    r = b.apply_ops(full)  # the old full copy arrives again after the forget
    assert r.duplicates == 1
    r = a.apply_ops(b.ops_since({}))  # and the erased copy where the full one was
    assert r.duplicates == 2
    assert a.state_digest() == b.state_digest()
