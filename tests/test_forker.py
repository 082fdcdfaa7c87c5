"""The forker (`tests.forker`) gives a child what a child process of the test would get, and
reports its end as `subprocess` would."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.forker import ROOT, Forker, differs_at_start

SAYS = """
import json, os, resource, sys
said = {"argv": sys.argv[1:], "cwd": os.getcwd(), "var": os.environ.get("FORKER_VAR"),
        "umask": os.umask(0), "nofile": list(resource.getrlimit(resource.RLIMIT_NOFILE)),
        "ppid_is_test": os.getppid() == int(sys.argv[1])}
print(json.dumps(said))
print("to stderr", file=sys.stderr)
sys.exit(int(sys.argv[2]))
"""


def test_a_child_gets_the_tests_environment_folder_umask_and_limit(tmp_path: Path) -> None:
    script = tmp_path / "says.py"
    script.write_text(SAYS)
    out, err = tmp_path / "out", tmp_path / "err"
    env = {**os.environ, "FORKER_VAR": "qu'oted \u00e9"}
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    before = os.umask(0o077)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, 512), hard))
    try:
        child = Forker.shared().spawn(
            script=str(script), args=[str(os.getpid()), "3"], env=env, cwd=tmp_path,
            stdout=out, stderr=err,
        )  # fmt: skip
    finally:
        os.umask(before)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert child.wait(30) == 3 and child.returncode == 3
    said = json.loads(out.read_text())
    assert said["argv"] == [str(os.getpid()), "3"]
    assert said["cwd"] == str(tmp_path)
    assert said["var"] == "qu'oted \u00e9"
    assert said["umask"] == 0o077
    assert said["nofile"] == [min(soft, 512), hard]
    assert not said["ppid_is_test"]  # its parent is the forker: what a test may not assume
    assert err.read_text() == "to stderr\n"


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", -signal.SIGKILL),
        ("raise KeyboardInterrupt", -signal.SIGINT),
        ("raise ValueError('boom')", 1),
        ("import sys; sys.exit('a message')", 1),
        ("import threading, time; threading.Thread(target=time.sleep, args=(0.3,)).start()", 0),
    ],
)
def test_a_child_ends_as_an_interpreter_would(tmp_path: Path, body: str, status: int) -> None:
    script = tmp_path / "ends.py"
    script.write_text(body + "\n")
    fresh = subprocess.run([sys.executable, str(script)], capture_output=True, timeout=30)
    assert fresh.returncode == status
    out = tmp_path / "out"
    child = Forker.shared().spawn(
        script=str(script), args=[], env=dict(os.environ), cwd=ROOT, stdout=out
    )
    assert child.wait(30) == status
    if status == 1:
        assert out.read_text().strip().splitlines()[-1] in ("ValueError: boom", "a message")


def test_a_signal_reaches_the_child_and_its_end_is_seen(tmp_path: Path) -> None:
    script = tmp_path / "waits.py"
    script.write_text("import time\nprint('up', flush=True)\ntime.sleep(60)\n")
    out = tmp_path / "out"
    child = Forker.shared().spawn(
        script=str(script), args=[], env=dict(os.environ), cwd=ROOT, stdout=out
    )
    with pytest.raises(subprocess.TimeoutExpired):
        child.wait(0.2)
    assert child.poll() is None
    child.terminate()
    assert child.wait(30) == -signal.SIGTERM
    assert child.poll() == -signal.SIGTERM


def test_a_variable_read_at_start_needs_a_fresh_interpreter() -> None:
    assert not differs_at_start(dict(os.environ))
    assert differs_at_start({**os.environ, "PYTHONHASHSEED": "7"})
    assert differs_at_start({**os.environ, "PYTHONPATH": "/somewhere/else"})
    assert not differs_at_start({**os.environ, "PYTHONPATH": str(ROOT)})
