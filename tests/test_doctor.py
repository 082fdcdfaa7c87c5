"""`chrysalis doctor` against a real daemon: what is fine, what is wrong, and what to do."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

from tests.daemon_process import DaemonProcess


def doctor(d: DaemonProcess) -> tuple[int, dict[str, dict[str, str]]]:
    out = d.cli("doctor", "--json")
    report = json.loads(out.stdout)
    return out.returncode, {c["check"]: c for c in report["checks"]}


def test_doctor_on_a_healthy_daemon_with_a_remote(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    d = DaemonProcess(tmp_path / "data").start("--remote", f"file://{tmp_path / 'shared'}")
    try:
        d.once("remember", "something to index", id="x")
        assert d.cli("sync").returncode == 0
        code, checks = doctor(d)
        assert code == 0, checks
        for name in ("socket dir", "socket", "data dir", "indexes", "remote", "remote write",
                     "clock", "sync"):  # fmt: skip
            assert checks[name]["status"] in ("ok", "warn"), checks[name]
        assert checks["remote write"]["status"] == "ok"
        # a data dir the daemon made is its user's alone, so the doctor has nothing to say
        assert stat.S_IMODE((tmp_path / "data").stat().st_mode) == 0o700
        assert checks["data dir"]["status"] == "ok", checks["data dir"]
        assert abs(float(checks["clock"]["detail"].split()[0])) < 60
        assert not list((tmp_path / "shared").glob("doctor/*"))  # the probe is cleaned up
        text = d.cli("doctor")
        assert text.returncode == 0 and "remote write" in text.stdout
    finally:
        d.close()


def test_doctor_names_the_problem_and_the_fix(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    d = DaemonProcess(tmp_path / "data").start("--remote", f"file://{shared}")
    try:
        shutil.rmtree(shared)  # the shared folder is unmounted
        code, checks = doctor(d)
        assert code == 1
        assert checks["remote"]["status"] == "error"
        assert "does not exist" in checks["remote"]["detail"] and checks["remote"]["fix"]
        assert checks["indexes"]["status"] in ("ok", "warn")  # the rest is still checked
    finally:
        d.close()
    # and with no daemon at all
    code, checks = doctor(d)
    assert code == 1 and checks["daemon"]["status"] == "error"
    assert "chrysalis daemon" in checks["daemon"]["fix"]
