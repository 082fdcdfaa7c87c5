"""Replicas write, push, pull, snapshot and compact in random interleavings through a real
remote that fails at random: errors, timeouts, and writes that land but whose reply is lost.
At the end every acknowledged op is on every replica exactly once and the digests match."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import pytest

from chrysalis import Memory
from chrysalis.core.errors import ChrysalisError
from chrysalis.remotes import ObjectInfo, Remote, RemoteError, RemoteUnavailable, open_remote
from chrysalis.sync import Sync


class FaultyRemote(Remote):
    """Wraps a real remote; each request may fail before it is made (an error or a timeout)
    or after it was made (the reply is lost: a write has landed)."""

    def __init__(self, inner: Remote, rng: random.Random, rate: float) -> None:
        super().__init__(inner.url)
        self.inner, self.rng, self.rate = inner, rng, rate
        self.faults = {"error": 0, "timeout": 0, "lost_reply": 0}

    def _call(self, verb: str, fn: Callable[[], Any]) -> Any:
        roll = self.rng.random()
        if roll < self.rate / 3:
            self.faults["error"] += 1
            raise RemoteUnavailable(f"injected: {verb} failed (503)")
        if roll < 2 * self.rate / 3:
            self.faults["timeout"] += 1
            time.sleep(0.002)
            raise RemoteUnavailable(f"injected: {verb} timed out")
        result = fn()
        if roll < self.rate:
            self.faults["lost_reply"] += 1
            raise RemoteUnavailable(f"injected: the reply to {verb} was lost")
        return result

    def get(self, key: str) -> bytes:
        return self._call("get", lambda: self.inner.get(key))  # type: ignore[no-any-return]

    def put(self, key: str, data: bytes) -> None:
        self._call("put", lambda: self.inner.put(key, data))

    def put_if_absent(self, key: str, data: bytes) -> bool:
        return self._call("put", lambda: self.inner.put_if_absent(key, data))  # type: ignore[no-any-return]

    def list(self, prefix: str = "") -> list[ObjectInfo]:
        return self._call("list", lambda: self.inner.list(prefix))  # type: ignore[no-any-return]

    def delete(self, key: str) -> None:
        self._call("delete", lambda: self.inner.delete(key))


def random_write(m: Memory, rng: random.Random, step: int, written: dict[str, str]) -> None:
    roll = rng.random()
    if roll < 0.6 or not written:
        bead = f"{m.replica_id[:4]}-{step}"
        text = f"step {step} " + rng.choice(["harbour", "lantern", "orchard", "quartz"]) * 3
        if rng.random() < 0.05:
            text += " " + "blob " * 20_000  # over the blob threshold
        m.append_bead(text, id=bead)
        written[bead] = m.replica_id
    elif roll < 0.7:
        here = [b for b in sorted(written) if _visible(m, b)]  # beads this replica has seen
        if here:
            m.forget(rng.choice(here))
    elif roll < 0.85:
        m.add_node(id=f"n{rng.randrange(6)}", type="thing", name=f"thing {step}")
    else:
        m.update_persona(goals=[f"goal {rng.randrange(5)}"], description=f"as of step {step}")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_interleavings_through_a_failing_remote(
    open_memory: Callable[..., Memory], remote_url: Any, seed: int
) -> None:
    rng = random.Random(seed)
    url = remote_url()
    mems = [open_memory(f"r{i}") for i in range(3)]
    remotes = [FaultyRemote(open_remote(url), random.Random(seed * 10 + i), 0.25) for i in range(3)]
    syncs = [
        Sync(m, r, segment_ops=rng.choice([3, 8, 64])) for m, r in zip(mems, remotes, strict=True)
    ]
    written: dict[str, str] = {}
    failures = 0
    for step in range(160):
        i = rng.randrange(3)
        m, s = mems[i], syncs[i]
        action = rng.choices(
            ["write", "push", "pull", "snapshot", "compact"], weights=[50, 20, 20, 4, 4]
        )[0]
        try:
            if action == "write":
                random_write(m, rng, step, written)
            else:
                getattr(s, action)()
        except RemoteError:
            failures += 1
    acknowledged = {
        m.replica_id: m.version_vector()[m.replica_id]
        for m in mems
        if m.version_vector().get(m.replica_id)
    }
    # the network heals; a fourth laptop joins late
    for r in remotes:
        r.rate = 0.0
    late = open_memory("late")
    everyone = [*zip(mems, syncs, strict=True), (late, Sync(late, url))]
    for _ in range(3):
        for _, s in everyone:
            s.push()
        for _, s in everyone:
            s.pull(force=True)
    for m, s in everyone:
        vv = m.version_vector()
        for replica, seq in acknowledged.items():
            assert vv.get(replica, 0) == seq, (m.replica_id, replica)
        assert m.pending_ops() == 0
        assert m.stats()["ops"] == sum(vv.values())  # each op once in the log
        st = s.status()
        assert st["rejected"] == [] and st["stopped"] is None and st["gaps"] == {}
    assert len({m.state_digest() for m, _ in everyone}) == 1
    assert failures > 0 and all(sum(r.faults.values()) > 0 for r in remotes)
    alive = [b for b in written if _visible(late, b)]
    assert alive and all(_visible(m, b) for m, _ in everyone for b in alive)


def _visible(m: Memory, bead: str) -> bool:
    try:
        m.get_bead(bead)
    except ChrysalisError:
        return False
    return True
