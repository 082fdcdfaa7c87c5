"""`memory drop` takes the memory out of its Zep mirror too (issue 28, B6): every session this
laptop sent beads to goes (messages and the facts Zep derived), on the laptop that drops and on
each other laptop when it erases its copy; a session that also holds another memory's messages
(another memory's or program's, on the same Zep user: one mirrored before memories had users of
their own, or another laptop's)
keeps them and has ours marked; with Zep down the drop is refused and nothing changes.
Real daemons on real sockets, the fake Zep that checks the SDK's requests."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chrysalis.core.errors import NotFound, Unavailable
from tests.daemon_process import DaemonProcess, DaemonThread
from tests.fakes.zep_server import FakeZep

KEY = "zk-drop-secret-5521"
QUIET = {
    "CHRYSALIS_PUSH_INTERVAL": "3600",
    "CHRYSALIS_PULL_INTERVAL": "3600",
    "CHRYSALIS_ZEP_PUSH_INTERVAL": "3600",
    "CHRYSALIS_ZEP_PULL_INTERVAL": "3600",
}
WORD = "Wallabytine"  # in every bead of the dropped memory: a find names what survived


@pytest.fixture
def zep() -> Iterator[FakeZep]:
    with FakeZep(api_key=KEY) as fake:
        yield fake
        assert fake.problems == []


def _section(tmp_path: Path, zep: FakeZep, **more: Any) -> dict[str, Any]:
    key_file = tmp_path / "zep.key"
    key_file.write_text(KEY + "\n")
    return {
        "zep_url": zep.url,
        "zep_api_key_file": str(key_file),
        "zep_push_interval": 3600,
        "zep_pull_interval": 3600,
        **more,
    }


def _held(zep: FakeZep) -> list[str]:
    """Where the fake Zep still holds the dropped memory's words (unmarked), by place."""
    with zep.lock:
        places = [
            f"session {sid}: {m['content']}"
            for sid, s in zep.sessions.items()
            for m in s["messages"]
            if WORD in m["content"] and not m["metadata"].get("chrysalis_forgotten")
        ]
        places += [f"fact {f['fact']}" for f in zep.facts.values() if WORD in f["fact"]]
        places += [
            f"thread {t['uuid']}: {m['content']}"
            for t in zep.threads.values()
            for m in t["messages"]
            if WORD in m["content"]
        ]
        places += [f"edge {e['fact']}" for e in zep.edges.values() if WORD in e["fact"]]
    return places


def _fill(d: DaemonProcess, memory: str, prefix: str, sessions: tuple[str, ...]) -> None:
    with d.client(memory=memory) as c:
        for s in sessions:
            c.remember(f"{WORD} {prefix} likes tea in {s}", id=f"{prefix}-{s}-1", session_id=s)
            c.remember(f"{WORD} {prefix} note two in {s}", id=f"{prefix}-{s}-2", session_id=s)
        report = c.sync()
        assert report["mirrors"][0]["ok"], report


def test_a_dropped_memory_leaves_nothing_in_zep(tmp_path: Path, zep: FakeZep) -> None:
    d = DaemonThread(tmp_path / "data", env=QUIET).start()
    try:
        with d.client() as c:
            c.create_memory("team", **_section(tmp_path, zep))
        _fill(d, "team", "t", ("s1", "s2"))
        assert len(_held(zep)) == 6, "both sessions' messages and the derived facts"

        with d.client(timeout=60.0) as c:
            receipt = c.drop_memory("team")
        assert _held(zep) == []
        place = receipt["zep"]
        assert place["state"] == "gone", receipt
        assert place["url"] == zep.url and sorted(place["sessions"]) == [
            "team@chrysalis-s1",
            "team@chrysalis-s2",
        ]
        out = d.cli("memory", "ls")
        assert "team" not in out.stdout
        assert KEY not in json.dumps(receipt) and KEY not in d.output()
    finally:
        d.stop()
        d.close()


def test_a_session_another_memory_shares_keeps_its_messages(tmp_path: Path, zep: FakeZep) -> None:
    """Another laptop's default memory and this laptop's team both mirror to Zep user
    ``chrysalis`` (one daemon refuses two memories on one user; two daemons cannot tell):
    their beads of session s1 meet in one Zep session. Dropping team must not take theirs."""
    section = _section(tmp_path, zep)
    env = {
        **QUIET,
        "CHRYSALIS_ZEP_URL": zep.url,
        "CHRYSALIS_ZEP_API_KEY_FILE": section["zep_api_key_file"],
    }
    other = DaemonThread(tmp_path / "other", env=env).start()
    d = DaemonThread(tmp_path / "data", env=QUIET).start()
    try:
        with other.client() as c:
            c.remember("the default memory's own note in s1", id="mine", session_id="s1")
            assert c.sync()["mirrors"][0]["ok"]
        with d.client() as c:
            c.create_memory("team", **section, zep_user_id="chrysalis")
        _fill(d, "team", "t", ("s1", "s2"))
        with d.client(timeout=60.0) as c:
            receipt = c.drop_memory("team")
        place = receipt["zep"]
        assert place["state"] == "marked", receipt
        assert place["sessions"] == ["chrysalis-s2"]
        assert [k["session"] for k in place["kept"]] == ["chrysalis-s1"]
        assert "another memory" in place["why"]
        theirs = [m for m in zep.messages() if m["metadata"]["chrysalis_id"] == "mine"]
        assert len(theirs) == 1 and not theirs[0]["metadata"].get("chrysalis_forgotten")
        assert _held(zep) == [f"fact {WORD} t likes tea in s1"]  # Zep v2: facts per session
        with other.client() as c:  # the other memory's mirror goes on
            assert c.sync()["mirrors"][0]["ok"]
    finally:
        for x in (d, other):
            x.stop()
            x.close()


def test_a_drop_with_zep_down_changes_nothing(tmp_path: Path, zep: FakeZep) -> None:
    d = DaemonThread(tmp_path / "data", env=QUIET).start()
    try:
        with d.client() as c:
            c.create_memory("team", **_section(tmp_path, zep))
        _fill(d, "team", "t", ("s1",))
        zep.fail(503, times=20)
        with d.client(timeout=60.0) as c, pytest.raises(Unavailable, match="was not dropped"):
            c.drop_memory("team")
        with d.client(memory="team") as c:
            assert c.get_bead("t-s1-1").content.startswith(WORD)
            assert "team/zep-push" in {j["name"] for j in c.status()["jobs"]}
        assert len(_held(zep)) == 3
        with zep.lock:
            zep._failures.clear()
        out = d.cli("memory", "drop", "team", "--yes")
        assert out.returncode == 0, out.stdout + out.stderr
        assert f"zep {zep.url}: gone" in out.stdout, out.stdout
        assert _held(zep) == []
    finally:
        d.stop()
        d.close()


def test_the_other_laptop_takes_its_sessions_out_of_zep(tmp_path: Path, zep: FakeZep) -> None:
    """B wrote session sb and pushed it to Zep, but had not synced it to the remote when A
    dropped the memory: A cannot know sb. B's erase, at its next sync, takes sb out."""
    folder = tmp_path / "remote"
    folder.mkdir()
    a, b = (DaemonThread(tmp_path / n, env=QUIET).start() for n in ("a", "b"))
    section = _section(tmp_path, zep, remote=f"file://{folder}")
    try:
        for d in (a, b):
            with d.client() as c:
                c.create_memory("shared", **section)
        _fill(a, "shared", "a", ("s1",))
        for d in (a, b):
            with d.client(memory="shared") as c:
                assert c.sync()["ok"]
        folder.rename(tmp_path / "unmounted")  # B's next sync reaches Zep, not the remote
        with b.client(memory="shared", timeout=60.0) as c:
            c.remember(f"{WORD} b alone in sb", id="b-sb", session_id="sb")
            report = c.sync()
            assert report["mirrors"][0]["ok"] and not report["remote"]["ok"], report
        (tmp_path / "unmounted").rename(folder)
        assert b.stop() == 0
        assert any("shared@chrysalis-sb" in p for p in _held(zep))

        with a.client(timeout=60.0) as c:
            receipt = c.drop_memory("shared")
        assert receipt["zep"]["state"] == "gone" and receipt["zep"]["sessions"] == [
            "shared@chrysalis-s1"
        ], receipt
        assert [p for p in _held(zep) if "shared@chrysalis-sb" not in p] == []
        assert _held(zep), "sb: only B knows it"

        # B comes back while Zep is down: it keeps its copy until Zep takes the erase
        zep.fail(503, times=10_000, route="/sessions")
        b.start()  # its first pull finds the drop marker
        try:
            with b.client(memory="shared", timeout=60.0) as c:
                c.sync()
        except NotFound:
            pass  # erased already
        directory = b.data_dir / "memories" / "shared"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and "cannot take it out of Zep" not in b.output():
            time.sleep(0.2)
        assert "cannot take it out of Zep" in b.output() and directory.exists()
        assert "shared" not in {m["name"] for m in b.once("memories")}
        with zep.lock:
            zep._failures.clear()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (directory.exists() or _held(zep)):
            time.sleep(0.2)
        assert _held(zep) == [] and not directory.exists(), b.output()
        assert "zep" in b.output() and "Traceback" not in a.output() + b.output()
    finally:
        for d in (a, b):
            d.stop()
            d.close()


def test_a_dropped_memory_leaves_zep_cloud_threads_and_its_facts(
    tmp_path: Path, zep: FakeZep
) -> None:
    d = DaemonThread(tmp_path / "data", env=QUIET).start()
    cloud = _section(tmp_path, zep, zep_flavour="zep-cloud", zep_url=zep.url + "/api/v4")
    try:
        with d.client() as c:
            c.create_memory("team", **cloud)
        with d.client(memory="team") as c:
            c.add_fact(f"{WORD} Station", "founded", "Numbat Bay")
        _fill(d, "team", "t", ("s1", "s2"))
        assert len(zep.threads) == 2 and len(_held(zep)) == 7, _held(zep)

        with d.client(timeout=60.0) as c:
            receipt = c.drop_memory("team")
        # the derived facts ("... likes tea ...") cannot be traced to a thread: counted, named
        assert _held(zep) == [f"edge {WORD} t likes tea in s{i}" for i in (1, 2)], receipt
        place = receipt["zep"]
        assert zep.threads == {}
        assert place["state"] == "kept" and place["kept"] == [
            {"graph": "team@chrysalis", "facts": 2}
        ]
        assert sorted(place["sessions"]) == ["s1", "s2"] and place["edges_deleted"] == 1
        assert "2 facts Zep derived" in place["why"], place
    finally:
        d.stop()
        d.close()
