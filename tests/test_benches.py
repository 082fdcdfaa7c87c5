"""Every script in bench/ runs: its ``--quick`` mode, here, so that a bench that no longer
works fails the suite instead of rotting until the next measurement.

Parametrised over the folder: a new bench is in this test the moment it is added. A script
(a file with a ``__main__`` block) must take ``--quick`` and exit 0 in a few seconds; exit
status 77 means its data is absent (the LoCoMo and LongMemEval dev sets live outside the
repository) and skips with the reason it printed. A file without a ``__main__`` block is a
module other benches import, and must import. A few benches are run with ``--quick`` by a test
that also checks their figures; those are named in `RUN_ELSEWHERE` and not run twice.

Each script runs in a process of its own, forked from one interpreter (`Forker`) that has
already imported what every bench imports (numpy, pydantic, FAISS, the library): a fresh
interpreter would spend ~0.6 s of CPU per bench on those imports alone, and a quick run
checks the bench, not its start-up (``python bench/X.py`` is what the full runs measure).
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
SKIPPED = 77  # a bench's exit status when its data is absent

# bench -> the test file that runs its --quick mode and checks its figures
RUN_ELSEWHERE = {
    "store_bench.py": "tests/test_public_api.py",
    "load_bench.py": "tests/test_public_api.py",
    "sync_bench.py": "tests/test_public_api.py",
    "graph_rotate_bench.py": "tests/test_public_api.py",
    "secrets_bench.py": "tests/test_secrets.py",
    "secrets_heldout.py": "tests/test_secrets.py",
    "million.py": "tests/test_public_api.py",
    "switch_bench.py": "tests/test_embedder_switch.py",
    "inspector_bench.py": "tests/test_inspector_scale.py",
    "hook_bench.py": "tests/test_import_histories.py",
    "import_bench.py": "tests/test_import_histories.py",
    "retrieve_bench.py": "tests/test_context_bench.py",
    "entity_precision.py": "tests/test_entity_gate.py",
}


def _is_script(path: Path) -> bool:
    return 'if __name__ == "__main__":' in path.read_text()


def _env() -> dict[str, str]:
    """This interpreter's path (the tree under test first), and the bench folder for the
    modules benches import from each other."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(BENCH), *sys.path) if p)
    return env


# The forker: reads one request a line ({"argv", "cwd", "stdout", "stderr"}), forks, and the
# child runs the script as ``python script args`` would (its folder first on sys.path, run as
# __main__, SystemExit's code as the exit status, an exception's traceback on stderr and 1).
# It answers {"pid"} at once, then {"status"} once the child is reaped. The parent starts no
# thread (numpy's BLAS pool is fork-aware), so the child starts clean.
_FORKER = r"""
import json, os, runpy, sys, traceback
import numpy, faiss, pydantic, chrysalis.memory, chrysalis.client, chrysalis.sync
sys.stdout.flush()
for line in sys.stdin:
    req = json.loads(line)
    pid = os.fork()
    if pid == 0:
        os.chdir(req["cwd"])
        for fd, name in ((0, os.devnull), (1, req["stdout"]), (2, req["stderr"])):
            f = os.open(name, os.O_RDONLY if fd == 0 else os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(f, fd)
            os.close(f)
        sys.stdin = open(0, closefd=False)
        sys.argv = req["argv"]
        sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))
        code = 0
        try:
            runpy.run_path(sys.argv[0], run_name="__main__")
        except SystemExit as exc:
            if exc.code is None or isinstance(exc.code, int):
                code = exc.code or 0
            else:
                print(exc.code, file=sys.stderr)
                code = 1
        except BaseException:
            traceback.print_exc()
            code = 1
        import atexit
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    print(json.dumps({"pid": pid}), flush=True)
    _, status = os.waitpid(pid, 0)
    print(json.dumps({"status": os.waitstatus_to_exitcode(status)}), flush=True)
"""


class Forker:
    """`_FORKER` in a subprocess: `run` is ``subprocess.run([python, script, *args])`` without
    the interpreter's start-up and imports."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _FORKER],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=_env(), text=True,
        )  # fmt: skip
        self.pending = b""  # read from the pipe, not yet a whole line

    def _answer(self, timeout: float) -> dict[str, int] | None:
        """The forker's next line, or None if none came in ``timeout`` seconds (read from
        the raw pipe: a buffered reader could hold a line that select would not see)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 4096)
            if not chunk:
                raise AssertionError(f"the forker exited {self.proc.wait()}")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        answer: dict[str, int] = json.loads(line)
        return answer

    def run(self, argv: list[str], out: Path, err: Path, timeout: float) -> int:
        """The exit status of ``argv`` run from ROOT, its output in ``out`` and ``err``;
        killed (and failed) past ``timeout`` seconds."""
        assert self.proc.stdin is not None
        request = {"argv": argv, "cwd": str(ROOT), "stdout": str(out), "stderr": str(err)}
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        started = self._answer(60)
        assert started is not None, "the forker did not fork"
        done = self._answer(timeout)
        if done is None:
            os.kill(started["pid"], signal.SIGKILL)
            self._answer(60)
            pytest.fail(f"{argv[0]} --quick ran longer than {timeout:g} s")
        return done["status"]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
        assert self.proc.stdout is not None
        self.proc.stdout.close()


@pytest.fixture(scope="module")
def forker() -> Iterator[Forker]:
    f = Forker()
    yield f
    f.close()


@pytest.mark.parametrize("path", sorted(BENCH.glob("*.py")), ids=lambda p: p.name)
def test_every_bench_runs_its_quick_mode(
    path: Path, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    text = path.read_text()
    if not _is_script(path):
        out = subprocess.run(
            [sys.executable, "-c", f"import {path.stem}"],
            cwd=BENCH, env=_env(), capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr[-3000:]
        return
    assert '"--quick"' in text, f"{path.name} has no --quick mode"
    if path.name in RUN_ELSEWHERE:
        other = (ROOT / RUN_ELSEWHERE[path.name]).read_text()
        assert path.name in other and "--quick" in other, (
            f"{RUN_ELSEWHERE[path.name]} no longer runs {path.name} --quick"
        )
        return
    forker: Forker = request.getfixturevalue("forker")  # only scripts need it
    stdout, stderr = tmp_path / "stdout", tmp_path / "stderr"
    returncode = forker.run([str(path), "--quick"], stdout, stderr, timeout=240)
    out = subprocess.CompletedProcess(
        [str(path)],
        returncode,
        stdout.read_text(errors="replace"),
        stderr.read_text(errors="replace"),
    )
    if out.returncode == SKIPPED:
        pytest.skip(out.stderr.strip().splitlines()[-1])
    assert out.returncode == 0, f"{path.name} --quick failed:\n{out.stderr[-3000:]}"
    assert out.stdout.strip(), f"{path.name} --quick printed no figures"


def test_a_bench_without_its_data_says_so_and_is_skipped(tmp_path: Path) -> None:
    """The skip is for absent data only, and it names the file it looked for."""
    missing = tmp_path / "nowhere.json"
    out = subprocess.run(
        [sys.executable, str(BENCH / "locomo_eval.py"), "--quick", "--data", str(missing)],
        cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == SKIPPED
    assert str(missing) in out.stderr
