"""Several memories in one daemon (step 13): created at run time or from the config file, each
its own data dir, addressed as /v1/m/<name>/..., recalled together with provenance, dropped
with a receipt. The daemon is a subprocess on a real socket."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chrysalis.core.errors import Conflict, InvalidInput, NotFound

from .daemon_process import DaemonProcess


def test_a_named_memory_is_its_own_and_recalled_with_the_default(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    with daemon.client() as c:
        made = c.create_memory("team")
        assert made["data_dir"] == str(tmp_path / "data" / "memories" / "team")
        mine = c.remember("my dentist appointment is on Thursday", id="mine")
    with daemon.client(memory="team") as team:
        team.remember("the team release is on Thursday", id="ours")
        assert team.status()["memory"] == "team"
        # each memory holds only its own
        assert [i.id for i in team.recall("Thursday", k=5).items] == ["ours"]
        with pytest.raises(NotFound):
            team.get_bead(mine.id)
    with daemon.client() as c:
        assert [i.id for i in c.recall("Thursday", k=5).items] == ["mine"]
        both = c.recall("Thursday", k=5, memories=["default", "team"])
        found = {i.id: i.provenance["memory"] for i in both.items}
        assert found == {"mine": "default", "ours": "team"}
        assert {m["name"] for m in c.memories()} == {"default", "team"}
        status = c.status()
    with daemon.client(memory="team") as team:
        assert team.status()["replica_id"] != status["replica_id"]  # a replica of its own
    # the CLI: --memory, CHRYSALIS_MEMORY, and `memory ls`
    out = daemon.cli("--memory", "team", "recall", "release", "--json")
    assert out.returncode == 0, out.stderr
    assert [i["id"] for i in json.loads(out.stdout)["items"]] == ["ours"]
    listed = daemon.cli("memory", "ls", "--json")
    assert [m["name"] for m in json.loads(listed.stdout)] == ["default", "team"]


def test_a_created_memory_is_there_after_a_restart_and_dropped_with_a_receipt(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    with daemon.client() as c:
        c.create_memory("notes", extractor="none")
    with daemon.client(memory="notes") as notes:
        notes.remember("a note that must go when its memory goes", id="n1")
    assert daemon.stop() == 0
    daemon.start()
    directory = tmp_path / "data" / "memories" / "notes"
    with daemon.client(memory="notes") as notes:
        assert notes.get_bead("n1").content.startswith("a note")
    with daemon.client() as c:
        with pytest.raises(InvalidInput, match="default memory cannot be dropped"):
            c.drop_memory("default")
        receipt = c.drop_memory("notes")
        assert receipt["erased"]["beads"] == 1 and receipt["remote"] is None
        assert receipt["data_dir"] == {"path": str(directory), "removed": True}
        assert not directory.exists()
        assert [m["name"] for m in c.memories()] == ["default"]
    with daemon.client(memory="notes") as gone, pytest.raises(NotFound, match="no memory 'notes'"):
        gone.status()
    assert daemon.stop() == 0
    daemon.start()  # and it stays gone
    assert [m["name"] for m in daemon.once("memories")] == ["default"]


def test_bad_names_and_settings_are_refused_and_change_nothing(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    with daemon.client() as c:
        with pytest.raises(InvalidInput, match="cannot name a memory"):
            c.create_memory("Team Space")
        with pytest.raises(InvalidInput, match=r"memories\.team\.remote"):
            c.create_memory("team", remote="ftp://nowhere")
        with pytest.raises(InvalidInput, match="unknown key 'socket'"):
            c.create_memory("team", socket="/tmp/x.sock")
        with pytest.raises(InvalidInput, match="zep_api_key_file"):
            c.create_memory("team", zep_url="http://127.0.0.1:9", zep_api_key="k")
        assert [m["name"] for m in c.memories()] == ["default"]
        assert not (tmp_path / "data" / "memories" / "team").exists()
        c.create_memory("team")
        with pytest.raises(Conflict, match="exists"):
            c.create_memory("team")


def test_a_memory_section_in_the_config_file(tmp_path: Path) -> None:
    remote = tmp_path / "team-remote"
    remote.mkdir()
    config = tmp_path / "config.toml"
    config.write_text(f'[memories.team]\nremote = "file://{remote}"\n')
    d = DaemonProcess(tmp_path / "data", env={"CHRYSALIS_CONFIG": str(config)}).start()
    try:
        [team] = [m for m in d.once("memories") if m["name"] == "team"]
        assert team["remote"] == f"file://{remote}" and team["from_config"]
        with d.client(memory="team") as c:
            c.remember("pushed to the team's folder only")
            report = c.sync()
        assert report["remote"]["url"] == f"file://{remote}"
        assert any(remote.rglob("*")), "the team memory pushed to its remote"
        with d.client() as c, pytest.raises(Conflict, match="no remote configured"):
            c.sync()  # the default memory has none: it did not inherit the team's
    finally:
        d.stop()
        d.close()
    config.write_text('[memories.team]\nremote = "nope://x"\n')
    bad = subprocess.run(
        [sys.executable, "-m", "chrysalisd", "daemon", "--data-dir", str(tmp_path / "data2")],
        env={**d.env, "CHRYSALIS_CONFIG": str(config)},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert bad.returncode != 0
    assert "memories.team.remote" in bad.stderr + bad.stdout


def test_a_drop_waits_for_the_requests_in_the_memory_and_refuses_the_later_ones(
    tmp_path: Path,
) -> None:
    """Writers, readers and a streaming export run in a memory with a remote while it is
    dropped: each call either completes or answers 404 (none breaks, none answers 500), the
    drop forgets what was acknowledged before it, and the daemon serves on, with no error in
    its log."""
    remote = tmp_path / "remote"
    remote.mkdir()
    env = {"CHRYSALIS_PUSH_INTERVAL": "1", "CHRYSALIS_PULL_INTERVAL": "1"}
    d = DaemonProcess(tmp_path / "data", env=env).start()
    try:
        with d.client() as c:
            c.create_memory("busy", remote=f"file://{remote}")
        with d.client(memory="busy") as busy:
            busy.remember_many([{"content": f"seed bead {n} about lanterns"} for n in range(300)])
        with d.client() as c:  # an export to import into busy, slowly, while it is dropped
            c.create_memory("scratch")
        with d.client(memory="scratch") as scratch:
            scratch.remember_many([{"content": f"imported {n} about harbours"} for n in range(40)])
            lines = scratch.export().splitlines(keepends=True)
        imported: list[Any] = []

        def slow_import() -> None:
            def trickle() -> Iterator[bytes]:
                for line in lines:
                    time.sleep(0.05)
                    yield line

            with d.client(memory="busy", timeout=60.0) as c:
                try:
                    imported.append(c.import_lines(trickle()))
                except Exception as exc:  # the test wants it to complete
                    imported.append(exc)

        outcomes: dict[str, Counter[str]] = {}
        stop = threading.Event()

        def hammer(kind: str) -> None:
            seen = outcomes.setdefault(kind, Counter())
            n = 0
            with d.client(memory="busy", timeout=30.0) as c:
                while not stop.is_set():
                    n += 1
                    try:
                        if kind == "write":
                            c.remember(f"{kind} {n} about lanterns")
                        elif kind == "recall":
                            c.recall("lanterns", k=5)
                        elif kind == "export":
                            assert c.export().count(b"\n") > 300
                        else:
                            c.sync()
                        seen["ok"] += 1
                    except NotFound:
                        seen["404"] += 1
                        time.sleep(0.01)
                    except Exception as exc:  # counted: the test wants none
                        seen[f"{type(exc).__name__}: {exc}"] += 1

        threads = [
            threading.Thread(target=hammer, args=(kind,))
            for kind in ("write", "write", "recall", "export", "sync")
        ]
        threads.append(threading.Thread(target=slow_import))
        for t in threads:
            t.start()
        time.sleep(1.0)  # the import has 1-2 s of its body still to send
        with d.client(timeout=60.0) as c:
            receipt = c.drop_memory("busy")
        time.sleep(0.5)
        stop.set()
        for t in threads:
            t.join(timeout=60)
        assert receipt["data_dir"]["removed"] and receipt["remote"]["ok"], receipt
        # the import began before the drop: the drop waited for it, and erased its beads too
        assert isinstance(imported[0], dict) and imported[0]["added"]["bead"] == 40, imported
        assert receipt["erased"]["beads"] >= 340
        left = [p.relative_to(remote).parts[0] for p in remote.rglob("*") if p.is_file()]
        assert left == ["dropped"]  # and the remote is empty but for the drop marker
        for kind, seen in outcomes.items():
            assert set(seen) == {"ok", "404"}, (kind, seen)
        assert not (tmp_path / "data" / "memories" / "busy").exists()
        with d.client() as c:  # default serves on
            assert c.remember("still here").id
            assert [m["name"] for m in c.memories()] == ["default", "scratch"]
        assert d.proc is not None and d.proc.poll() is None
    finally:
        assert d.stop() == 0
        d.close()
    logged = d.output()
    assert "Traceback" not in logged and '"level": "error"' not in logged, logged[-3000:]


def test_status_and_doctor_cover_every_memory(daemon: DaemonProcess, tmp_path: Path) -> None:
    remote = tmp_path / "team-remote"
    remote.mkdir()
    with daemon.client() as c:
        c.create_memory("team", remote=f"file://{remote}")
        assert c.status()["memories"] == ["default", "team"]
    out = daemon.cli("status")
    assert out.returncode == 0, out.stderr
    assert "memory    default  (also served: team" in out.stdout
    out = daemon.cli("--memory", "team", "status")
    assert out.stdout.startswith("memory    team  (also served: default"), out.stdout
    assert f"file://{remote}" in out.stdout
    doctor = daemon.cli("doctor", "--json")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    names = [c["check"] for c in json.loads(doctor.stdout)["checks"]]
    assert "remote" in names and "team: remote" in names and "team: data dir" in names
    [team_remote] = [c for c in json.loads(doctor.stdout)["checks"] if c["check"] == "team: remote"]
    assert str(remote) in team_remote["detail"]
    one = daemon.cli("--memory", "team", "doctor", "--json")
    assert all(not c["check"].startswith("team: ") for c in json.loads(one.stdout)["checks"])
    metrics = daemon.once("metrics")
    assert 'chrysalis_beads{memory="team"}' in metrics and 'memory="default"' in metrics
