"""Property: replicas that exchange ops in any order, with loss, duplication and late gaps,
converge to the same state once every op has reached every replica."""

from __future__ import annotations

import os
import random
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chrysalis import ChrysalisError, Memory

EXAMPLES = int(os.environ.get("CHRYSALIS_PROPERTY_EXAMPLES", "100"))

BEAD_IDS = ["b0", "b1", "b2", "b3"]
NODE_IDS = ["n0", "n1", "n2"]  # few ids: concurrent ops on the same id are the point
EDGE_IDS = ["e0", "e1"]
WORDS = ["alpha", "beta", "gamma", "delta"]

replica_ix = st.integers(0, 4)
local_op = st.one_of(
    st.tuples(st.just("bead"), replica_ix, st.sampled_from(BEAD_IDS), st.sampled_from(WORDS), st.sampled_from(["s1", "s2", None])),
    st.tuples(st.just("forget"), replica_ix, st.integers(0, 7)),
    st.tuples(st.just("node"), replica_ix, st.sampled_from(NODE_IDS), st.sampled_from(WORDS), st.lists(st.sampled_from(WORDS), max_size=3)),
    st.tuples(st.just("rm_node"), replica_ix, st.integers(0, 7)),
    st.tuples(st.just("edge"), replica_ix, st.sampled_from(EDGE_IDS), st.integers(0, 7), st.integers(0, 7), st.sampled_from(WORDS)),
    st.tuples(st.just("rm_edge"), replica_ix, st.integers(0, 7)),
    st.tuples(st.just("persona_name"), replica_ix, st.sampled_from(WORDS)),
    st.tuples(st.just("persona_goals"), replica_ix, st.lists(st.sampled_from(WORDS), max_size=3), st.booleans()),
    st.tuples(st.just("persona_trait"), replica_ix, st.sampled_from(["tone", "pace"]), st.sampled_from([*WORDS, None])),
    st.tuples(st.just("skill"), replica_ix, st.sampled_from(["k0", "k1"]), st.sampled_from(WORDS), st.lists(st.sampled_from(WORDS), max_size=2)),
    st.tuples(st.just("rm_skill"), replica_ix, st.integers(0, 7)),
    st.tuples(st.just("embed"), replica_ix, st.integers(0, 7), st.integers(0, 3)),
)  # fmt: skip
delivery = st.tuples(
    st.just("deliver"),
    replica_ix,
    replica_ix,
    st.lists(st.integers(0, 10_000), max_size=8),
    st.randoms(use_true_random=False),
)
# One origin's ops only, in order: what a pull of one replica's segments does. It makes ops
# arrive before ops they depend on from other origins (a remove before the add it saw).
stream = st.tuples(st.just("stream"), replica_ix, replica_ix, replica_ix, st.integers(1, 6))
sync = st.tuples(st.just("sync"), replica_ix, replica_ix)  # everything one has, to another
steps = st.lists(st.one_of(local_op, local_op, delivery, stream, sync), min_size=1, max_size=50)


def pick(items: list[str], k: int) -> str:
    """Removes and edges aim at what the replica holds (picked by index), or miss."""
    return items[k % len(items)] if items else "missing"


def run_local(mem: Memory, step: tuple[Any, ...]) -> None:
    kind, _, *args = step
    nodes = [n.id for n in mem.all_nodes()]
    try:
        if kind == "bead":
            bead_id, word, session = args
            mem.append_bead(f"{word} from {mem.replica_id}", id=bead_id, session_id=session)
        elif kind == "forget":
            mem.forget(pick([b.id for b in mem.all_beads()], args[0]))
        elif kind == "node":
            node_id, word, labels = args
            mem.add_node(node_id, "thing", name=word, labels=labels)
        elif kind == "rm_node":
            mem.remove_node(pick(nodes, args[0]))
        elif kind == "edge":
            edge_id, src, dst, pred = args
            mem.add_edge(
                pick(nodes, src),
                pick(nodes, dst),
                pred,
                id=edge_id,
                evidence=[f"{mem.replica_id}-{pred}"],
            )
        elif kind == "rm_edge":
            mem.remove_edge(pick([e.id for e in mem.all_edges()], args[0]))
        elif kind == "persona_name":
            mem.update_persona(name=args[0])
        elif kind == "persona_goals":
            words, keep_old = args
            old = mem.get_persona().goals if keep_old else []
            mem.update_persona(goals=[*old, *words])
        elif kind == "persona_trait":
            mem.update_persona(traits={args[0]: args[1]})
        elif kind == "skill":
            skill_id, word, tags = args
            mem.put_skill({"id": skill_id, "name": word, "tags": tags, "examples": [word]})
        elif kind == "embed":
            k, v = args
            bead_id = pick([b.id for b in mem.all_beads()], k)
            mem.put_embedding(
                "bead", bead_id, "m", [float(v), 1.0], provider=mem.replica_id, text_hash="0" * 64
            )
        elif kind == "rm_skill":
            mem.delete_skill(pick([k.id for k in mem.list_skills()], args[0]))
    except ChrysalisError as exc:  # NotFound / Conflict are local answers, not failures
        assert exc.code in {"not_found", "conflict"}, exc


def deliver(src: Memory, dst: Memory, picks: list[int], rnd: random.Random) -> None:
    ops = src.ops_since(dst.version_vector())
    if not ops or not picks:
        return
    chosen = [ops[p % len(ops)] for p in picks]  # a random subset, some twice
    rnd.shuffle(chosen)
    dst.apply_ops(chosen)


def deliver_stream(src: Memory, dst: Memory, origin: str, count: int) -> None:
    ops = [op for op in src.ops_since(dst.version_vector()) if op["replica"] == origin]
    dst.apply_ops(ops[:count])


def full_exchange(replicas: list[Memory]) -> None:
    for _ in range(len(replicas) + 1):
        for a in replicas:
            for b in replicas:
                if a is not b:
                    b.apply_ops(a.ops_since(b.version_vector()))


def visible(mem: Memory) -> dict[str, Any]:
    return {
        "beads": [b.model_dump() for b in mem.all_beads()],
        "nodes": [n.model_dump() for n in mem.all_nodes()],
        "edges": [e.model_dump() for e in mem.all_edges()],
        "persona": mem.get_persona().model_dump(),
        "skills": [s.model_dump() for s in mem.list_skills()],
        "vectors": {b.id: _vector(mem, b.id) for b in mem.all_beads()},
    }


def _vector(mem: Memory, bead_id: str) -> bytes | None:
    try:
        return mem.get_embedding("bead", bead_id, "m").vector
    except ChrysalisError:
        return None


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 5), program=steps)
def test_replicas_converge(n: int, program: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        replicas = [
            Memory.open(Path(tmp) / f"r{i}", sync=False, replica_id=f"r{i}") for i in range(n)
        ]
        try:
            for step in program:
                if step[0] == "deliver":
                    _, src, dst, picks, rnd = step
                    if src % n != dst % n:
                        deliver(replicas[src % n], replicas[dst % n], picks, rnd)
                elif step[0] == "sync":
                    _, src, dst = step
                    if src % n != dst % n:
                        replicas[dst % n].apply_ops(
                            replicas[src % n].ops_since(replicas[dst % n].version_vector())
                        )
                elif step[0] == "stream":
                    _, src, dst, origin, count = step
                    if src % n != dst % n:
                        deliver_stream(
                            replicas[src % n], replicas[dst % n], f"r{origin % n}", count
                        )
                else:
                    run_local(replicas[step[1] % n], step)
            full_exchange(replicas)
            vvs = [m.version_vector() for m in replicas]
            assert all(v == vvs[0] for v in vvs)
            assert all(m.pending_ops() == 0 for m in replicas)
            digests = {m.state_digest() for m in replicas}
            assert len(digests) == 1, digests
            first = visible(replicas[0])
            for m in replicas[1:]:
                assert visible(m) == first
            # the same ops, re-delivered in full and reversed, change nothing
            everything = replicas[0].ops_since({})
            replicas[-1].apply_ops(list(reversed(everything)))
            assert replicas[-1].state_digest() in digests
        finally:
            for m in replicas:
                m.close()
