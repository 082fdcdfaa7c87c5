"""Each memory has a Zep user of its own (issue 28): two memories of one daemon mirroring to
one Zep never meet there, so an agent given one memory cannot read another's text through
an assisted recall, nor get facts Zep derived from it. Two memories set to one Zep user are
refused; a memory mirrored before under the shared user is told where its old text is.
Real daemons on real sockets, the fake Zep that checks the SDK's requests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chrysalis.core.errors import ChrysalisError
from tests.daemon_process import DaemonProcess, DaemonThread
from tests.fakes.zep_server import FakeZep

KEY = "zk-users-secret-7710"
QUIET = {
    "CHRYSALIS_PUSH_INTERVAL": "3600",
    "CHRYSALIS_PULL_INTERVAL": "3600",
    "CHRYSALIS_ZEP_PUSH_INTERVAL": "3600",
    "CHRYSALIS_ZEP_PULL_INTERVAL": "3600",
    "CHRYSALIS_ZEP_BUDGET_MS": "2000",  # a loaded machine must not turn Zep's answer into a note
}
SECRET = "The vault combination is Quokkaberry nineteen"  # default's; team must never see it


@pytest.fixture
def zep() -> Iterator[FakeZep]:
    with FakeZep(api_key=KEY) as fake:
        yield fake
        assert fake.problems == []


def _key_file(tmp_path: Path) -> str:
    key_file = tmp_path / "zep.key"
    key_file.write_text(KEY + "\n")
    return str(key_file)


def _section(tmp_path: Path, zep: FakeZep, **more: Any) -> dict[str, Any]:
    return {
        "zep_url": zep.url,
        "zep_api_key_file": _key_file(tmp_path),
        "zep_push_interval": 3600,
        "zep_pull_interval": 3600,
        "zep_budget_ms": 2000,
        **more,
    }


def _env(tmp_path: Path, zep: FakeZep) -> dict[str, str]:
    return {
        **QUIET,
        "CHRYSALIS_ZEP_URL": zep.url,
        "CHRYSALIS_ZEP_API_KEY_FILE": _key_file(tmp_path),
    }


def _users(zep: FakeZep) -> dict[str, set[str]]:
    """The Zep users holding each bead id, by bead id."""
    with zep.lock:
        found: dict[str, set[str]] = {}
        for s in zep.sessions.values():
            for m in s["messages"]:
                found.setdefault(m["metadata"]["chrysalis_id"], set()).add(s["user_id"])
    return found


def test_a_named_memory_cannot_recall_default_through_zep(tmp_path: Path, zep: FakeZep) -> None:
    d = DaemonThread(tmp_path / "data", env=_env(tmp_path, zep)).start()
    try:
        with d.client() as c:
            c.create_memory("team", **_section(tmp_path, zep))
            c.remember(SECRET, id="secret", session_id="s1")
            assert c.sync()["mirrors"][0]["ok"]
        with d.client(memory="team") as c:
            c.remember("team notes on the offsite agenda", id="agenda", session_id="s1")
            assert c.sync()["mirrors"][0]["ok"]
            # team holds nothing like it: its local hits are weak and Zep is asked
            got = c.recall("vault combination Quokkaberry", k=5)
        assert not any("Quokkaberry" in i.text for i in got.items), got.items
        assert not any("failed" in n or "budget" in n for n in got.notes), got.notes
        users = _users(zep)
        assert users["secret"] == {"chrysalis"}, "default keeps its Zep user"
        assert users["agenda"] == {"team@chrysalis"}, users
        with d.client() as c:  # default still gets its own text back from Zep's side
            assert c.status()["sync"]["mirrors"][0]["user_id"] == "chrysalis"
        with d.client(memory="team") as c:
            assert c.status()["sync"]["mirrors"][0]["user_id"] == "team@chrysalis"
    finally:
        d.stop()
        d.close()


def test_two_memories_set_to_one_zep_user_are_refused(tmp_path: Path, zep: FakeZep) -> None:
    d = DaemonThread(tmp_path / "data", env=_env(tmp_path, zep)).start()
    try:
        with d.client() as c:
            with pytest.raises(ChrysalisError) as refused:
                c.create_memory("team", **_section(tmp_path, zep, zep_user_id="chrysalis"))
            words = refused.value.message
            assert refused.value.status == 409, words
            assert "team" in words and "default" in words and "chrysalis" in words, words
            assert [m["name"] for m in c.memories()] == ["default"]
            assert not (tmp_path / "data" / "memories" / "team").exists()
            # its own user is fine, and then a third memory cannot take that one
            c.create_memory("team", **_section(tmp_path, zep, zep_user_id="ours"))
            with pytest.raises(ChrysalisError) as again:
                c.create_memory("lab", **_section(tmp_path, zep, zep_user_id="ours"))
            assert "team" in again.value.message and "lab" in again.value.message
    finally:
        d.stop()
        d.close()
    # the same in the config file: the daemon does not start, and says why
    config = tmp_path / "chrysalis.toml"
    config.write_text(
        f'[memories.lab]\nzep_url = "{zep.url}"\nzep_api_key_file = "{_key_file(tmp_path)}"\n'
        'zep_user_id = "chrysalis"\n'
    )
    bad = DaemonProcess(
        tmp_path / "data2", env={**_env(tmp_path, zep), "CHRYSALIS_CONFIG": str(config)}
    )
    with pytest.raises(RuntimeError) as failed:
        bad.start()
    out = str(failed.value)
    assert "exited 2" in out and "lab" in out and "default" in out and "chrysalis" in out, out
    bad.close()


def test_a_memory_mirrored_before_under_the_shared_user(tmp_path: Path, zep: FakeZep) -> None:
    """A named memory made before this change mirrored to Zep user ``chrysalis`` (as default
    does). Now it has a user of its own: it sends its beads again there, its doctor says its
    old text stays in ``chrysalis``'s sessions, and default's recall does not show that text."""
    d = DaemonThread(tmp_path / "data", env=QUIET).start()
    try:  # as before: team on user chrysalis (default not mirrored yet, so it is allowed)
        with d.client() as c:
            c.create_memory("team", **_section(tmp_path, zep, zep_user_id="chrysalis"))
        with d.client(memory="team") as c:
            c.remember("Numbatique is the team's launch codename", id="old", session_id="s1")
            assert c.sync()["mirrors"][0]["ok"]
    finally:
        d.stop()
    path = tmp_path / "data" / "memories" / "team" / "memory.json"
    section = json.loads(path.read_text())
    del section["zep_user_id"]  # the old default: no zep_user_id meant chrysalis
    path.write_text(json.dumps(section))
    d.env.update(_env(tmp_path, zep))  # and default mirrors to the same Zep now
    d.start()
    try:
        with d.client(memory="team") as c:
            assert c.sync()["mirrors"][0]["ok"]
            checks = [x for x in c.doctor()["checks"] if x["check"] == "zep"]
        assert _users(zep)["old"] == {"chrysalis", "team@chrysalis"}
        assert len(checks) == 1 and checks[0]["status"] == "warn", checks
        assert "chrysalis" in checks[0]["detail"] and "team@chrysalis" in checks[0]["detail"]
        with d.client() as c:
            c.remember("default's unrelated shopping list", id="mine", session_id="s1")
            assert c.sync()["mirrors"][0]["ok"]
            got = c.recall("Numbatique launch codename", k=5)
            assert not any("Numbatique" in i.text for i in got.items), got.items
            assert next(x for x in c.doctor()["checks"] if x["check"] == "zep")["status"] == "ok"
    finally:
        d.stop()
        d.close()


def test_a_session_of_another_user_is_neither_written_nor_read(
    open_memory: Any, zep: FakeZep
) -> None:
    """Zep session ids are global: user ``a`` with bead session ``b-x`` and user ``a-b`` with
    ``x`` both name ``a-b-x``. Whoever comes second must not write there nor read its facts
    (another laptop or program can pick any user; `check_zep_users` sees one daemon only)."""
    from chrysalis.mirrors import MirrorError
    from chrysalis.mirrors.zep import ZepMirror

    first, second = open_memory("first"), open_memory("second")
    first.append_bead(f"{SECRET} in a's session", id="a1", session_id="b-x")
    second.append_bead("the other user's note", id="b1", session_id="x")
    a = ZepMirror(first, zep.url, KEY, user_id="a")
    ab = ZepMirror(second, zep.url, KEY, user_id="a-b")
    try:
        assert a.push()["ops"] == 1
        with pytest.raises(MirrorError) as refused:
            ab.push()
        assert "a-b-x" in refused.value.message and "Zep user a," in refused.value.message
        with pytest.raises(MirrorError):
            ab.pull()  # its facts are a's
        assert _users(zep) == {"a1": {"a"}}
        assert ab.status()["pending_ops"] == 1  # kept, sent once the owner changes the user
    finally:
        a.close()
        ab.close()
