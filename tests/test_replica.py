"""`chrysalis.Replica` embedded, without a daemon: two replicas in one process share a folder
remote, converge, and give a forget receipt for every place (this data dir, the remote's
segments, the other replica), pending until the other replica syncs, then clean."""

from __future__ import annotations

from pathlib import Path

import pytest

from chrysalis import Memory, Replica
from chrysalis.core.errors import Conflict, SyncKeyError
from chrysalis.forget.receipt import ForgetReceipt, Place
from tests.eventually import eventually

MARK = "OKAPI-REPLICA-4417"


def place(r: ForgetReceipt, kind: str, name: str = "") -> list[Place]:
    return [p for p in r.places if p.place == kind and name in p.name]


def test_two_replicas_on_a_folder_remote_converge_and_receipt_every_place(
    tmp_path: Path,
) -> None:
    (tmp_path / "shared").mkdir()
    key = tmp_path / "sync.key"
    key.write_text("correct horse battery staple, replica test\n")
    remote = f"file://{tmp_path / 'shared'}"

    def open_replica(name: str) -> Replica:
        return Replica.open(
            tmp_path / name, remote=remote, sync_key_file=key, host=f"laptop-{name}",
            replica_id=name, sync=False, scrub_delay=0.1,
        )  # fmt: skip

    with open_replica("a") as a, open_replica("b") as b:
        bead = a.memory.append_bead(f"the code word is {MARK}", session_id="chat")
        a.memory.append_bead("a bead that stays", session_id="chat")
        b.memory.append_bead("b was here too", session_id="chat")
        for r in (a, b, a):
            done = r.sync()
            assert done["ok"], done
            assert done["remote"]["url"] == remote and done["mirrors"] == []
        assert a.memory.state_digest() == b.memory.state_digest()
        assert b.memory.get_bead(bead.id).content == f"the code word is {MARK}"
        assert [i.id for i in b.retrieve(MARK, k=1).items] == [bead.id]

        a.memory.forget(bead.id)
        assert a.sync()["ok"]  # the remote takes the forget; b has not synced since
        r = a.forget_receipt(bead.id)
        assert r.replica == "a" and r.by is not None and not r.settled and not r.clean
        segments = place(r, "remote", "ops/a/")
        assert segments and all(p.state == "gone" for p in segments), r.places
        (laptop,) = place(r, "replica", "b")
        assert laptop.state == "pending" and "pending on b" in laptop.why
        assert place(r, "local", "a (here)")

        # b syncs: it pulls and applies the forget, scrubs, and its next heartbeat says so.
        def receipt_after_b_syncs() -> ForgetReceipt:
            assert b.sync()["ok"]
            return a.forget_receipt(bead.id)

        r = eventually(receipt_after_b_syncs, until=lambda r: r.clean, timeout=30,
                       interval=0.3, what="a clean receipt")  # fmt: skip
        assert place(r, "replica", "b")[0].state == "gone"
        assert a.memory.state_digest() == b.memory.state_digest()
        assert b.forget_receipt(bead.id).by == r.by
    for name in ("a", "b", "shared"):
        root = tmp_path / name
        held = [p for p in root.rglob("*") if p.is_file() and MARK.encode() in p.read_bytes()]
        assert held == [], held


def test_a_replica_without_a_remote_is_its_memory(tmp_path: Path) -> None:
    with Replica.open(tmp_path / "m", sync=False, scrub_delay=0.1) as r:
        bead = r.memory.append_bead("no remote here")
        with pytest.raises(Conflict, match="nothing to sync with"):
            r.sync()
        with pytest.raises(Conflict, match="decommission needs a remote"):
            r.sync(decommission="x")
        r.memory.forget(bead.id)
        assert r.forget_receipt(bead.id) == r.memory.forget_receipt(bead.id)
    with Memory.open(tmp_path / "m", sync=False) as m:
        assert m.stats()["bead_time"] == 0


def test_a_missing_sync_key_file_opens_nothing(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    with pytest.raises(SyncKeyError, match="cannot read sync key file"):
        Replica.open(
            tmp_path / "m", remote=f"file://{tmp_path / 'shared'}",
            sync_key_file=tmp_path / "none",
        )  # fmt: skip
    assert not (tmp_path / "m").exists()


def test_a_bead_forgotten_before_any_push_is_pending_on_no_other_laptop(tmp_path: Path) -> None:
    """b never received what a forgot before sending it: the receipt says b is gone, not
    pending. What a did send stays pending on b until b applies the forget."""
    (tmp_path / "shared").mkdir()
    key = tmp_path / "sync.key"
    key.write_text("a sync key for the unsent-bead test\n")
    remote = f"file://{tmp_path / 'shared'}"

    def open_replica(name: str) -> Replica:
        return Replica.open(
            tmp_path / name, remote=remote, sync_key_file=key, replica_id=name, sync=False,
            scrub_delay=0.1,
        )  # fmt: skip

    with open_replica("a") as a, open_replica("b") as b:
        a.memory.append_bead("a first note, sent", session_id="s")
        for r in (a, b, a):
            assert r.sync()["ok"]
        sent = a.memory.append_bead("the boat leaves from pier nine", session_id="s")
        assert a.sync()["ok"]  # pushed; b has not pulled it
        unsent = a.memory.append_bead("the safe is behind the painting", session_id="s")
        a.memory.forget(unsent.id)
        a.memory.forget(sent.id)
        for bead_id in (unsent.id, sent.id):  # before and after a pushes the forgets
            (laptop,) = place(a.forget_receipt(unsent.id), "replica", "b")
            assert laptop.state == "gone" and "never received it" in laptop.why, laptop
            (other,) = place(a.forget_receipt(sent.id), "replica", "b")
            assert other.state == "pending" and "never received" not in other.why, other
            assert bead_id and a.sync()["ok"]
        assert not a.forget_receipt(sent.id).settled
