"""Run a bench script as ``python bench/X.py ARGS`` would, without the interpreter's start-up.

Each bench's ``--quick`` run is a smoke test (does it run, does it print its figures), and a
fresh interpreter spends ~0.6 s of CPU on the imports every bench shares (numpy, FAISS,
pydantic, the library) before the bench does anything: over the suite's benches, more than the
smaller of them cost. `BenchForker` runs each in a child forked from an interpreter that has
made those imports (`tests.forker`). The child is still a process of its own (its exit status,
output, children and resources are its own), so what the suite checks is unchanged; the full
runs, which measure, are started by hand as fresh interpreters.
"""

from __future__ import annotations

import os
import subprocess
import sys

from tests.forker import BENCH, ROOT, Forker


def bench_env() -> dict[str, str]:
    """This interpreter's path (the tree under test first), and the bench folder for the
    modules benches import from each other."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(BENCH), *sys.path) if p)
    return env


class BenchForker:
    """`run` is ``subprocess.run([python, script, *args], cwd=ROOT, capture_output=True,
    text=True, timeout=...)`` with the imports already made."""

    def __init__(self) -> None:
        self.forker = Forker.shared()

    def run(self, argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
        """``argv`` (a script and its arguments) run from ROOT: its exit status and output.
        Raises `subprocess.TimeoutExpired` (the child killed) past ``timeout`` seconds."""
        return self.forker.run(argv[1:], bench_env(), script=argv[0], cwd=ROOT, timeout=timeout)
