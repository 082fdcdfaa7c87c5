"""Two laptops, two memories: `me` syncs through a folder under one key, `team` through S3 on
127.0.0.1 under another. Each converges only through its own remote; the team key cannot read
`me`'s objects; a bead of one is never returned from the other unless asked for."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chrysalis.core.errors import NotFound
from tests.daemon_process import DaemonProcess, DaemonThread
from tests.remote_fixtures import S3Server

QUIET = {"CHRYSALIS_PUSH_INTERVAL": "3600", "CHRYSALIS_PULL_INTERVAL": "3600"}


def config(path: Path, me_remote: str, me_key: Path, team_remote: str, team_key: Path) -> Path:
    path.write_text(
        f'[memories.me]\nremote = "file://{me_remote}"\nsync_key_file = "{me_key}"\n\n'
        f'[memories.team]\nremote = "{team_remote}"\nsync_key_file = "{team_key}"\n'
    )
    return path


def sync(d: DaemonProcess, memory: str) -> dict[str, Any]:
    out = d.cli("--memory", memory, "sync", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    report: dict[str, Any] = json.loads(out.stdout)
    return report


def ids(d: DaemonProcess, memory: str, query: str, **kw: Any) -> set[str]:
    with d.client(memory=memory) as c:
        return {i.id for i in c.recall(query, k=10, **kw).items}


@pytest.fixture
def laptops(tmp_path: Path, s3_server: S3Server) -> Iterator[tuple[DaemonProcess, ...]]:
    me_remote = tmp_path / "me-folder"
    me_remote.mkdir()
    me_key, team_key = tmp_path / "me.key", tmp_path / "team.key"
    me_key.write_text("a passphrase only my laptops know")
    team_key.write_text("the passphrase the whole team shares")
    team_remote = s3_server.url(s3_server.new_bucket())
    started = []
    for name in ("a", "b"):
        cfg = config(tmp_path / f"{name}.toml", str(me_remote), me_key, team_remote, team_key)
        d = DaemonThread(tmp_path / name, env={**QUIET, "CHRYSALIS_CONFIG": str(cfg)})
        started.append(d.start())
    yield tuple(started)
    for d in started:
        d.stop()
        d.close()


def test_each_memory_converges_through_its_own_remote_only(
    laptops: tuple[DaemonProcess, ...], tmp_path: Path, s3_server: S3Server
) -> None:
    a, b = laptops
    with a.client(memory="me") as me, a.client(memory="team") as team:
        me.remember("my private diary mentions the kumquat tree", id="diary")
        team.remember("the team standup moves to nine, kiwi room", id="standup")
    with b.client() as c:
        c.remember("a default note on laptop b about kumquat jam", id="default-b")
    for d in (a, b, a):
        for memory in ("me", "team"):
            report = sync(d, memory)
            assert report["remote"]["ok"], report
    # each memory holds its own, on both laptops, and the digests agree
    assert "diary" in ids(b, "me", "kumquat") and "standup" in ids(b, "team", "kiwi standup")
    assert "diary" not in ids(b, "team", "kumquat")  # me's bead never shows in team
    assert "standup" not in ids(b, "me", "kiwi standup")
    assert ids(a, "default", "kumquat") == set()  # default has no remote: b's stayed on b
    assert {"diary", "standup"}.isdisjoint(ids(b, "default", "kumquat kiwi standup"))
    for memory in ("me", "team"):
        digests = {_digest(d, memory) for d in (a, b)}
        assert len(digests) == 1, (memory, digests)
    # asked for: one ranking over both, each item naming its memory
    with b.client(memory="me") as me:
        both = me.recall("kumquat kiwi", k=10, memories=["me", "team"])
    found = {i.id: i.provenance["memory"] for i in both.items}
    assert found == {"diary": "me", "standup": "team"}  # and not b's default note
    # the folder holds me's objects only, the bucket team's only, both sealed
    folder = b"".join(p.read_bytes() for p in (tmp_path / "me-folder").rglob("*") if p.is_file())
    bucket = b"".join(s3_server.objects(_bucket(s3_server, a)).values())
    for blob in (folder, bucket):
        assert b"kumquat" not in blob and b"kiwi" not in blob  # encrypted at rest
    assert folder and bucket


def test_the_team_key_cannot_read_my_memory(
    laptops: tuple[DaemonProcess, ...], tmp_path: Path
) -> None:
    a, _ = laptops
    with a.client(memory="me") as me:
        me.remember("my private diary mentions the kumquat tree", id="diary")
    assert sync(a, "me")["remote"]["ok"]
    # A laptop that points its "me" at the same folder but holds only the team's key:
    intruder_cfg = tmp_path / "intruder.toml"
    intruder_cfg.write_text(
        f'[memories.me]\nremote = "file://{tmp_path / "me-folder"}"\n'
        f'sync_key_file = "{tmp_path / "team.key"}"\n'
    )
    c = DaemonThread(tmp_path / "c", env={**QUIET, "CHRYSALIS_CONFIG": str(intruder_cfg)})
    try:
        c.start()
        out = c.cli("--memory", "me", "sync", "--json")
        assert out.returncode != 0
        assert "key" in (out.stdout + out.stderr).lower()
        with c.client(memory="me") as me:
            assert me.status()["counts"]["beads"] == 0
    finally:
        c.stop()
        c.close()


def _digest(d: DaemonProcess, memory: str) -> str:
    with d.client(memory=memory) as c:
        digest: str = c.status()["state_digest"]
        return digest


def _bucket(s3_server: S3Server, d: DaemonProcess) -> str:
    [team] = [m for m in d.once("memories") if m["name"] == "team"]
    remote: str = team["remote"]
    return remote.removeprefix("s3://").split("/", 1)[0]


def test_a_memory_dropped_on_one_laptop_is_emptied_where_the_config_file_names_it(
    tmp_path: Path, s3_server: S3Server
) -> None:
    """Through S3 on 127.0.0.1 under a key: A made `team` at run time, B has it as a
    ``[memories.team]`` table. A drops it: the bucket keeps only the drop marker; B's next
    sync erases its copy and, since its config still names the memory, opens it again empty
    (a new replica), with nothing of the old one in the bucket or on B's disk."""
    key = tmp_path / "team.key"
    key.write_text("the passphrase the whole team shares")
    url = s3_server.url(s3_server.new_bucket())
    cfg = tmp_path / "b.toml"
    cfg.write_text(f'[memories.team]\nremote = "{url}"\nsync_key_file = "{key}"\n')
    a = DaemonThread(tmp_path / "a", env=QUIET).start()
    b = DaemonThread(tmp_path / "b", env={**QUIET, "CHRYSALIS_CONFIG": str(cfg)}).start()
    try:
        with a.client() as c:
            c.create_memory("team", remote=url, sync_key_file=str(key))
        with a.client(memory="team") as c:
            c.remember("the kiwi room standup is at nine", id="standup")
            c.put_skill({"id": "kiwi", "name": "kiwi room booking"})
        for d in (a, b):
            assert sync(d, "team")["remote"]["ok"]
        old = _replica(b, "team")
        assert "standup" in ids(b, "team", "kiwi standup")
        with a.client(timeout=60.0) as c:
            receipt = c.drop_memory("team")
        assert receipt["remote"]["ok"] and receipt["replicas"][0]["replica"] == old, receipt
        bucket = url.removeprefix("s3://").split("/", 1)[0]
        assert [k.rsplit("/", 2)[-2] for k in s3_server.objects(bucket)] == ["dropped"]
        # B's sync (this one, or its own pull a second after the memory opened) finds out
        b.cli("--memory", "team", "sync", "--json")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if _replica(b, "team") != old:
                    break
            except NotFound:  # erased, not yet opened again
                pass
            time.sleep(0.2)
        with b.client(memory="team") as c:
            status = c.status()
            assert status["replica_id"] != old and status["counts"]["beads"] == 0
            assert status["counts"]["skill_records"] == 0 and c.list_skills() == []
        assert sync(b, "team")["remote"]["ok"]  # the new, empty memory syncs on
        assert "memory team erased here (dropped on another laptop)" in b.output()
        blob = b"".join(p.read_bytes() for p in (tmp_path / "b").rglob("*") if p.is_file())
        assert b"kiwi" not in blob
    finally:
        for d in (a, b):
            d.stop()
            d.close()


def _replica(d: DaemonProcess, memory: str) -> str:
    with d.client(memory=memory) as c:
        replica: str = c.status()["replica_id"]
        return replica
