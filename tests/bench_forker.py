"""Run a bench script as ``python bench/X.py ARGS`` would, without the interpreter's start-up.

Each bench's ``--quick`` run is a smoke test (does it run, does it print its figures), and a
fresh interpreter spends ~0.6 s of CPU on the imports every bench shares (numpy, FAISS,
pydantic, the library) before the bench does anything: over the suite's benches, more than the
smaller of them cost. `BenchForker` keeps one interpreter that has made those imports, and
forks a child per run. The child is still a process of its own (its exit status, output,
children and resources are its own), so what the suite checks is unchanged; the full runs,
which measure, are started by hand as fresh interpreters.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"

# Reads one request a line ({"argv", "cwd", "stdout", "stderr"}), forks, and the child runs
# the script as ``python script args`` would: its folder first on sys.path, run as __main__,
# SystemExit's code as the exit status (a message on stderr and 1), an exception's traceback
# on stderr and 1, atexit handlers run. It answers {"pid"} at once, then {"status"} once the
# child is reaped. It starts no thread of its own (numpy's BLAS pool handles fork).
_SERVE = r"""
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


def bench_env() -> dict[str, str]:
    """This interpreter's path (the tree under test first), and the bench folder for the
    modules benches import from each other."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(BENCH), *sys.path) if p)
    return env


class BenchForker:
    """`run` is ``subprocess.run([python, script, *args], cwd=ROOT, capture_output=True,
    text=True, timeout=...)`` with the imports already made. One run at a time."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _SERVE],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=bench_env(),
        )  # fmt: skip
        self.pending = b""  # read from the pipe, not yet a whole line

    def _answer(self, timeout: float) -> dict[str, int] | None:
        """The server's next line, or None if none came in ``timeout`` seconds (read from the
        raw pipe: a buffered reader could hold a line that select would not see)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 4096)
            if not chunk:
                raise AssertionError(f"the bench forker exited {self.proc.wait()}")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        answer: dict[str, int] = json.loads(line)
        return answer

    def run(self, argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
        """``argv`` (a script and its arguments) run from ROOT: its exit status and output.
        Raises `subprocess.TimeoutExpired` (the child killed) past ``timeout`` seconds."""
        assert self.proc.stdin is not None
        with tempfile.TemporaryDirectory(prefix="chr-bench-run-") as tmp:
            out, err = Path(tmp) / "stdout", Path(tmp) / "stderr"
            request = {"argv": argv, "cwd": str(ROOT), "stdout": str(out), "stderr": str(err)}
            self.proc.stdin.write(json.dumps(request).encode() + b"\n")
            self.proc.stdin.flush()
            started = self._answer(60)
            assert started is not None, "the bench forker did not fork"
            done = self._answer(timeout)
            if done is None:
                os.kill(started["pid"], signal.SIGKILL)
                self._answer(60)
                raise subprocess.TimeoutExpired(argv, timeout)
            return subprocess.CompletedProcess(
                argv,
                done["status"],
                out.read_text(errors="replace"),
                err.read_text(errors="replace"),
            )

    def close(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
        self.proc.stdout.close()
