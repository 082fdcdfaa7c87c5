"""`chrysalis doctor` against a real daemon: what is fine, what is wrong, and what to do."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import stat
from pathlib import Path

import pytest

from tests.daemon_process import DaemonProcess, DaemonThread, run_cli


def doctor(d: DaemonProcess) -> tuple[int, dict[str, dict[str, str]]]:
    out = d.cli("doctor", "--json")
    report = json.loads(out.stdout)
    return out.returncode, {c["check"]: c for c in report["checks"]}


def test_doctor_on_a_healthy_daemon_with_a_remote(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    d = DaemonThread(tmp_path / "data").start("--remote", f"file://{tmp_path / 'shared'}")
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
    d = DaemonThread(tmp_path / "data").start("--remote", f"file://{shared}")
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


# ---- a shared socket directory: never "chmod /tmp" (issue 28, G14) ---------------------------


@pytest.mark.parametrize("shared", ["/tmp", "/dev/shm"])
def test_doctor_never_advises_chmod_on_a_shared_directory(tmp_path: Path, shared: str) -> None:
    if not Path(shared).is_dir():
        pytest.skip(f"no {shared} here")
    sock = Path(shared) / f"chr-doctor-{secrets.token_hex(4)}.sock"
    env = {**os.environ, "XDG_RUNTIME_DIR": str(tmp_path / "run")}
    env.pop("CHRYSALIS_SOCKET", None)
    run = ["--socket", str(sock), "doctor"]
    out = run_cli([*run, "--json"], env)
    checks = {c["check"]: c for c in json.loads(out.stdout)["checks"]}
    mode = stat.S_IMODE(Path(shared).stat().st_mode)
    private = tmp_path / "run" / "chrysalis" / "chrysalis.sock"
    assert checks["socket dir"] == {
        "check": "socket dir", "status": "warn",
        "detail": f"{shared} is a shared directory (mode {mode:o}): other users can see the "
        "socket's name and make files beside it",
        "fix": f"leave {shared}'s mode alone (other users and programs need it); give the socket "
        f"a private directory: `chrysalis --socket {private} daemon` (the daemon makes "
        f"{private.parent} mode 700)",
    }  # fmt: skip
    text = run_cli(run, env)
    assert "chmod" not in text.stdout + text.stderr
    assert f"--socket {private}" in text.stdout


def test_doctor_on_a_shared_data_dir_advises_a_folder_of_its_own(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # a team drop folder, like /tmp
    d = DaemonThread(shared).start()
    try:
        _, checks = doctor(d)
    finally:
        d.close()
    assert checks["data dir"]["status"] == "warn"
    assert checks["data dir"]["detail"].startswith(f"{shared} is a shared directory (mode 1777)")
    assert "chmod" not in checks["data dir"]["fix"]
    assert "--data-dir" in checks["data dir"]["fix"]
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777  # and nobody changed it
