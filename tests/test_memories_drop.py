"""`memory drop` erases the whole memory everywhere (issue 28, B6): every item kind (beads, a
hand-written fact, extracted facts and entities, persona, a skill, vectors), its data dir, every
object under its remote's prefix, and the copy of every other laptop once it next syncs; a
memory made again under the same name and remote starts empty, even after an old laptop that
had not heard of the drop syncs. Two daemons on real sockets, a folder remote, a sync key."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import msgpack
import pytest

from chrysalis.core.errors import NotFound, Unavailable
from chrysalis.sync.segment import Kind, decode, derive_key, read_key_file
from tests.daemon_process import DaemonProcess, DaemonThread
from tests.files import files_under, read_if_there

QUIET = {"CHRYSALIS_PUSH_INTERVAL": "3600", "CHRYSALIS_PULL_INTERVAL": "3600"}
# One word per item kind, so a find names what survived.
BEAD = "Wombatine"  # a bead's text, and (capitalised) an entity the extractor derives
BIG = "QUOLLBLOB"  # a large bead: its content is a blob
FACT_S, FACT_O = "Numbatsworth", "Dunnartcorp"  # a hand-written fact
PERSONA = "Bilbystrand"
SKILL = "Potoroocraft"
WORK = "Bandicootery"  # "I work at ...": an extracted fact
MARKERS = [w.encode() for w in (BEAD, BIG, FACT_S, FACT_O, PERSONA, SKILL, WORK)]
KINDS = {
    "ops/": Kind.SEGMENT,
    "snapshots/": Kind.SNAPSHOT,
    "blobs/": Kind.BLOB,
    "replicas/": Kind.HEARTBEAT,
}


def _sync(d: DaemonProcess, memory: str) -> dict[str, Any]:
    with d.client(memory=memory, timeout=60.0) as c:
        return c.sync()


def _fill(d: DaemonProcess) -> None:
    with d.client(memory="shared") as c:
        c.remember(f"{BEAD} Tarsier met us at the harbour today", id="b1", session_id="s1")
        c.remember(f"I work at {WORK} since March", id="b2", session_id="s1")
        c.remember(f"a large note about {BIG} " + "filler words here " * 5000, id="big")
        c.add_fact(FACT_S, "founded", FACT_O)
        c.update_persona(name=PERSONA, goals=[f"keep {PERSONA} happy"])
        c.put_skill({"id": "sk1", "name": f"{SKILL} routine", "description": "how we do it"})
        deadline = time.monotonic() + 30  # the extractor's facts and the vectors follow
        while time.monotonic() < deadline:
            status = c.status()
            knowledge, counts = status["knowledge"], status["counts"]
            derived = sum(knowledge["derived"].values())
            if knowledge["ops_behind"] == 0 and derived > 0 and counts["embeddings"] >= 4:
                break
            time.sleep(0.2)
        status = c.status()
        assert sum(status["knowledge"]["derived"].values()) > 0, status["knowledge"]
        assert status["counts"]["embeddings"] >= 4, status["counts"]
        assert status["counts"]["skill_records"] == 1
        assert status["counts"]["edge_records"] >= 2  # the hand-written fact and the extracted


def _files_holding(root: Path) -> list[str]:
    if not root.exists():
        return []
    return sorted(
        str(p.relative_to(root))
        for p in files_under(root)
        if p.is_file() and any(m in read_if_there(p) for m in MARKERS)
    )


def _remote_holding(folder: Path, data_key: bytes) -> list[str]:
    """Objects of the remote holding a marker, raw or decoded with the key (the dropped
    memory's: the format it was made with may be gone)."""
    held = []
    for path in folder.rglob("*"):
        if not path.is_file():
            continue
        name, raw = str(path.relative_to(folder)), path.read_bytes()
        plain = raw
        kind = next((k for p, k in KINDS.items() if name.startswith(p)), None)
        if name.endswith(".part"):  # a snapshot's part
            kind = Kind.SNAPSHOT_PART
        if kind is not None:
            try:
                payload = decode(raw, kind=kind, object_key=name, key=data_key)
            except Exception:  # another memory's object (made again later): not ours
                payload = b""
            plain = payload if isinstance(payload, bytes) else msgpack.packb(payload)
        if any(m in raw or m in plain for m in MARKERS):
            held.append(name)
    return sorted(held)


def _wait_gone(d: DaemonProcess, name: str, directory: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if name not in {m["name"] for m in d.once("memories")} and not directory.exists():
            return
        time.sleep(0.2)
    raise AssertionError(f"{name} still on {d.data_dir}: {d.once('memories')}\n{d.output()}")


def test_a_dropped_memory_is_erased_everywhere_and_its_name_starts_empty_again(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "remote"
    folder.mkdir()
    url = f"file://{folder}"
    key = tmp_path / "shared.key"
    key.write_text("the passphrase of the shared memory")
    env = {**QUIET, "CHRYSALIS_SCRUB_DELAY": "0.2"}
    a, b = (DaemonThread(tmp_path / n, env=env).start() for n in ("a", "b"))
    settings = {"remote": url, "sync_key_file": str(key), "extractor": "rules"}
    try:
        for d in (a, b):
            with d.client() as c:
                c.create_memory("shared", **settings)
        _fill(a)
        for d in (a, b, a):
            assert _sync(d, "shared")["remote"]["ok"]
        with b.client(memory="shared") as c:
            assert c.get_persona().name == PERSONA and c.recall(BEAD, k=5).items
        salt = json.loads((folder / "format.json").read_text())["encryption"]["salt"]
        data_key = derive_key(read_key_file(key), bytes.fromhex(salt))
        assert _remote_holding(folder, data_key), "the remote holds the text before the drop"
        b_id = _replica(b, "shared")
        a_dir, b_dir = (d.data_dir / "memories" / "shared" for d in (a, b))
        assert _files_holding(a_dir) and _files_holding(b_dir)

        assert b.stop() == 0  # B is away while A drops the memory and makes it again
        with a.client(timeout=60.0) as c:
            receipt = c.drop_memory("shared")
        assert receipt["data_dir"] == {"path": str(a_dir), "removed": True}, receipt
        assert not a_dir.exists()
        assert _remote_holding(folder, data_key) == []
        remote = receipt["remote"]
        assert remote["ok"] and remote["url"] == url, receipt
        assert remote["objects_removed"] > 5, receipt
        assert [(r["replica"], r["state"]) for r in receipt["replicas"]] == [(b_id, "pending")]
        assert "next sync" in receipt["replicas"][0]["why"]
        assert [str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()] == [
            remote["marker"]
        ]

        # The name is made again on A with the same remote, before B heard of the drop.
        with a.client() as c:
            c.create_memory("shared", **settings)
        assert _sync(a, "shared")["remote"]["ok"]
        # B comes back and syncs: it learns of the drop and erases its copy instead of pushing
        # it back (its own pull, a second after it starts, may find out first).
        b.start()
        try:
            report = _sync(b, "shared")
            assert not report["remote"]["ok"]
            assert "dropped" in json.dumps(report["remote"]), report
        except NotFound:
            pass  # erased already
        _wait_gone(b, "shared", b_dir)
        for _ in range(2):
            assert _sync(a, "shared")["remote"]["ok"]
        with a.client(memory="shared") as c:
            counts = c.status()["counts"]
            assert {k: counts[k] for k in ("beads", "node_records", "edge_records")} == {
                "beads": 0,
                "node_records": 0,
                "edge_records": 0,
            }, counts
            assert counts["skill_records"] == 0 and counts["embeddings"] == 0, counts
            assert c.recall(f"{BEAD} {WORK} {SKILL}", k=10).items == []
            assert c.get_persona().name == ""
            with pytest.raises(NotFound):
                c.get_bead("b1")
        assert _remote_holding(folder, data_key) == []
        assert _files_holding(a.data_dir) == [] and _files_holding(b.data_dir) == []
        assert "Traceback" not in a.output() + b.output()
    finally:
        for d in (a, b):
            d.stop()
            d.close()


def _replica(d: DaemonProcess, memory: str) -> str:
    with d.client(memory=memory) as c:
        replica: str = c.status()["replica_id"]
        return replica


def test_a_drop_the_remote_cannot_take_changes_nothing(tmp_path: Path) -> None:
    """With its remote unreachable, a drop would erase only this laptop's copy and let the
    others push it all back into a memory made again there: it is refused (503, plain words),
    the memory serves on with its jobs, and once the remote is back the CLI drops it."""
    folder = tmp_path / "remote"
    folder.mkdir()
    d = DaemonThread(tmp_path / "data", env=QUIET).start()
    try:
        with d.client() as c:
            c.create_memory("team", remote=f"file://{folder}")
        with d.client(memory="team") as c:
            c.remember(f"{BEAD} is on the agenda", id="t1")
            assert c.sync()["remote"]["ok"]
        folder.rename(tmp_path / "unmounted")
        with d.client(timeout=60.0) as c, pytest.raises(Unavailable, match="was not dropped"):
            c.drop_memory("team")
        with d.client(memory="team") as c:
            assert c.get_bead("t1").content.startswith(BEAD)
            assert "team/push" in {j["name"] for j in c.status()["jobs"]}
        (tmp_path / "unmounted").rename(folder)
        out = d.cli("memory", "drop", "team", "--yes")
        assert out.returncode == 0, out.stdout + out.stderr
        assert "dropped memory team: 1 bead," in out.stdout
        assert "emptied" in out.stdout and "drop marker dropped/" in out.stdout, out.stdout
        assert [p.parent.name for p in folder.rglob("*") if p.is_file()] == ["dropped"]
    finally:
        d.stop()
        d.close()
