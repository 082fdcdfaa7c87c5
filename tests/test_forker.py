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

from tests.eventually import eventually
from tests.forker import ROOT, Forked, Forker, differs_at_start


def spawn_script(tmp_path: Path, body: str) -> tuple[Forked, Path]:
    """``body`` as a script run through the forker with this process's environment, from the
    checkout: the child and the file its stdout and stderr go to."""
    script, out = tmp_path / "script.py", tmp_path / "out"
    script.write_text(body)
    child = Forker.shared().spawn(
        script=str(script), args=[], env=dict(os.environ), cwd=ROOT, stdout=out
    )
    return child, out


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
    child, out = spawn_script(tmp_path, body + "\n")
    assert child.wait(30) == status
    if status == 1:
        assert out.read_text().strip().splitlines()[-1] in ("ValueError: boom", "a message")


def test_a_signal_reaches_the_child_and_its_end_is_seen(tmp_path: Path) -> None:
    child, _ = spawn_script(tmp_path, "import time\nprint('up', flush=True)\ntime.sleep(60)\n")
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


# ---- where a forked child differed from a fresh interpreter (each test failed before the fix)


SEED = "import sys\nprint(hash('the lantern'), hash('harbour office'))\n"


@pytest.mark.skipif("PYTHONHASHSEED" in os.environ, reason="a set seed is everyone's")
def test_two_children_in_a_row_do_not_share_a_hash_seed(tmp_path: Path) -> None:
    """A fresh interpreter draws its own str hash seed, which orders sets (and whatever is
    built by iterating them): a daemon and its restart, or two peers started one after the
    other, must not share one, or a digest that depends on that order would pass a
    restart or convergence test (test_restart_keeps_everything_and_sigterm_exits_zero)."""
    script = tmp_path / "seed.py"
    script.write_text(SEED)
    said = []
    for run in range(2):
        out = tmp_path / f"out{run}"
        child = Forker.shared().spawn(
            script=str(script), args=[], env=dict(os.environ), cwd=tmp_path, stdout=out
        )
        assert child.wait(30) == 0
        said.append(out.read_text())
    assert said[0] != said[1]


def test_a_start_variable_set_in_the_test_process_later_needs_a_fresh_interpreter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The forkers started with this process's environment as it was then: a variable read
    at start that a test sets afterwards (monkeypatch) is not theirs."""
    Forker.shared()
    monkeypatch.setenv("PYTHONWARNINGS", "error::UserWarning")
    assert differs_at_start(dict(os.environ))
    monkeypatch.setenv("LC_ALL", "C")  # the interpreter's locale and encodings, set at start
    monkeypatch.delenv("PYTHONWARNINGS")
    assert differs_at_start(dict(os.environ))


ENV_READ = r"""
import importlib, json, os, sys
Environ = type(os.environ)
read = set()
get_item, contains = Environ.__getitem__, Environ.__contains__

def by_name(key):
    caller = sys._getframe(2).f_code  # not a walk over all of them (wsgiref copies them)
    if not ("_collections_abc" in caller.co_filename and caller.co_name == "__iter__"):
        read.add(key)

def __getitem__(self, key):
    by_name(key)
    return get_item(self, key)

def __contains__(self, key):
    by_name(key)
    return contains(self, key)

Environ.__getitem__, Environ.__contains__ = __getitem__, __contains__
sys.modules.setdefault("httpx._main", None)
from tests.forker import PRELOAD
for name in PRELOAD:
    importlib.import_module(name)
print(json.dumps(sorted(read)))
"""
# Read by name as the forker imports, and the same in every child whatever it is given:
# HOME by sysconfig for the user site, which a venv has none of; ANDROID_DATA by sysconfig,
# on Android only.
HARMLESS = {"HOME", "ANDROID_DATA"}


def test_every_variable_read_as_the_forker_imports_needs_a_fresh_interpreter() -> None:
    """What a preloaded module reads from the environment as it is imported (which build of
    FAISS loads, LMDB's binding, numpy's and pydantic's switches, the locale...) was read
    once, in the forker: a child given another value needs a process of its own."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])}
    out = subprocess.run(
        [sys.executable, "-c", ENV_READ], env=env, cwd=ROOT, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    read = set(json.loads(out.stdout))
    assert {"FAISS_OPT_LEVEL", "LMDB_FORCE_CFFI"} <= read  # the recorder sees the reads
    missed = sorted(
        k for k in read - HARMLESS if not differs_at_start({**os.environ, k: "other value"})
    )
    assert missed == []


def test_a_child_that_exits_negative_ends_as_an_interpreter_would(tmp_path: Path) -> None:
    script = tmp_path / "minus.py"
    script.write_text("import sys\nsys.exit(-1)\n")
    fresh = subprocess.run([sys.executable, str(script)], timeout=30)
    child, _ = spawn_script(tmp_path, script.read_text())
    assert child.wait(30) == fresh.returncode == 255


def test_an_interrupted_child_prints_its_traceback(tmp_path: Path) -> None:
    child, out = spawn_script(tmp_path, "raise KeyboardInterrupt\n")
    assert child.wait(30) == -signal.SIGINT
    said = out.read_text()
    assert said.startswith("Traceback") and said.endswith("KeyboardInterrupt\n")


def test_a_signal_to_a_child_already_reaped_is_no_error() -> None:
    """The forker reaps a child as it ends, so its pid is gone before the test hears of it
    (a `subprocess` child stays a zombie until the test waits): signalling it then must do
    nothing, as `Popen.send_signal` does, not raise ProcessLookupError in `stop`."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(30)  # reaped: its pid names no process, as a child the forker reaped
    child = Forked(Forker.shared(), gone.pid, ["gone"])  # whose end is not heard of yet
    assert child.poll() is None
    child.terminate()
    child.kill()


def test_a_child_gets_every_resource_limit_of_the_test(tmp_path: Path) -> None:
    script = tmp_path / "limits.py"
    script.write_text(
        "import resource\nprint(*resource.getrlimit(resource.RLIMIT_CORE))\n"
        "print(*resource.getrlimit(resource.RLIMIT_FSIZE))\n"
    )
    out = tmp_path / "out"
    core, fsize = (
        resource.getrlimit(resource.RLIMIT_CORE),
        resource.getrlimit(resource.RLIMIT_FSIZE),
    )
    Forker.shared()  # started before the limits change, as for a test in the middle of a run
    resource.setrlimit(resource.RLIMIT_CORE, (0, core[1]))
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 30, fsize[1]))
    try:
        child = Forker.shared().spawn(
            script=str(script), args=[], env=dict(os.environ), cwd=ROOT, stdout=out
        )
    finally:
        resource.setrlimit(resource.RLIMIT_CORE, core)
        resource.setrlimit(resource.RLIMIT_FSIZE, fsize)
    assert child.wait(30) == 0
    assert out.read_text().split() == ["0", str(core[1]), str(1 << 30), str(fsize[1])]


def test_a_start_leaves_the_test_process_umask_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not even for an instant: a daemon on a thread of the test binds its socket under the
    umask it set, and the test's own files are made under its."""
    script = tmp_path / "umask.py"
    script.write_text("import os\nprint(oct(os.umask(0)))\n")
    out = tmp_path / "out"
    set_to: list[int] = []
    umask = os.umask

    def noted(mask: int) -> int:
        set_to.append(mask)
        return umask(mask)

    before = umask(0o027)
    try:
        monkeypatch.setattr(os, "umask", noted)
        child = Forker.shared().spawn(
            script=str(script), args=[], env=dict(os.environ), cwd=ROOT, stdout=out
        )
        monkeypatch.undo()
    finally:
        umask(before)
    assert set_to == []
    assert child.wait(30) == 0 and out.read_text() == "0o27\n"


ORPHAN = """
import os, signal, sys
from pathlib import Path
from tests.forker import Forker
child = Forker.shared().spawn(
    script=sys.argv[1], args=[], env=dict(os.environ), cwd=sys.argv[2],
    stdout=Path(sys.argv[2]) / "out",
)
print(child.pid, flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # a test process that dies: an xdist worker killed
"""


def test_a_test_process_that_dies_leaves_no_child_running(tmp_path: Path) -> None:
    """As with `subprocess`, a child outlived a test process killed mid-test; here its
    server, which sees the test process go (its requests end), ends what it started."""
    script = tmp_path / "sleeps.py"
    script.write_text("import time\ntime.sleep(120)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])}
    out = subprocess.run(
        [sys.executable, "-c", ORPHAN, str(script), str(tmp_path)], env=env, cwd=ROOT,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == -signal.SIGKILL, out.stderr
    pid = int(out.stdout)

    def running() -> bool:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return False
        return state != "Z"

    eventually(lambda: not running(), timeout=30, what=f"the orphaned child {pid} to end")


@pytest.mark.parametrize("args", [["--version"], ["no-such-command"], ["daemon", "--bogus"]])
def test_a_forked_command_says_what_a_fresh_one_says(args: list[str]) -> None:
    env = dict(os.environ)
    fresh = subprocess.run(
        [sys.executable, "-m", "chrysalisd", *args], env=env, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    forked = Forker.shared().run(args, env, input="ignored\n")
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        fresh.returncode, fresh.stdout, fresh.stderr,
    )  # fmt: skip
