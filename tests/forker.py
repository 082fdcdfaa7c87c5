"""Start ``python -m MODULE ARGS`` or ``python SCRIPT ARGS`` as a process of its own, without
the interpreter's start-up.

A daemon's start costs ~1 s of CPU here, four fifths of it imports (FastAPI and pydantic
building their models, numpy, FAISS, the library), and the suite starts ~100 daemons and
~50 bench runs. `Forker` keeps one interpreter per test process that has made those imports,
and forks a child per start. The child is still a process of its own, with its own pid,
signals, exit status, locks, sockets and children, and it runs the command's real entry point
(``runpy``, as ``-m`` would) under the environment, working directory, umask and resource
limits the test gave, as a child of the test would inherit them. What it does not get is a
fresh interpreter, so what a start imports and what ``/proc/PID/cmdline`` and
``/proc/PID/environ`` show (the forker's) are tested in processes of their own
(`test_daemon_start`, `test_inspector_attacks`, `test_stop`); so is an environment that sets
a variable read as an interpreter starts or the forker imports (`differs_at_start`). Two
forkers take the starts in turn: each interpreter has its own hash seed, so a daemon and its
restart, or two started one after the other, order their sets of str differently, as fresh
interpreters would.

The server (`serve`, in the forked-from process) reads one request a line on stdin and
answers on stdout: ``{"id", "pid"}`` once it forked, ``{"pid", "status"}`` once it reaped that
child (its exit code as `subprocess` gives it: negative for a signal). It runs no thread, so
forking it is safe.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import json
import os
import resource
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"

# What a daemon's start and the benches import between them (the daemon imports its routes,
# the app and the memory on `chrysalis daemon`; a bench, numpy, FAISS and the library).
PRELOAD = (
    "numpy",
    "faiss",
    "pydantic",
    "chrysalisd.cli",
    "chrysalisd.config",
    "chrysalisd.server",
    "chrysalisd.app",
    "chrysalis.memory",
    "chrysalis.client",
    "chrysalis.sync",
)

# Variables the interpreter or a library reads as it starts or as `PRELOAD` imports (the
# locale and encodings; which FAISS build loads, LMDB's binding, numpy's, pydantic's and
# prometheus' switches...): a process that needs its own value of one of these needs a fresh
# interpreter (`differs_at_start`; test_forker checks the list against what the imports read).
_READ_AT_START = (
    "PYTHON", "_PYTHON", "OMP_", "OPENBLAS_", "MKL_", "LD_", "MALLOC", "LANG", "LC_", "FAISS_",
    "NPY_", "NUMPY_", "LMDB_", "MSGPACK_", "PYDANTIC_", "PROMETHEUS_", "prometheus_", "OTEL_",
)  # fmt: skip
# This process's environment and path as the forkers started with them (the first one's
# start): what a child inherits of them is what they were then, not what a test set since.
_started: tuple[dict[str, str], list[str]] | None = None
_started_lock = threading.Lock()


def _start_state() -> tuple[dict[str, str], list[str]]:
    global _started
    with _started_lock:
        if _started is None:
            _started = (dict(os.environ), [str(ROOT), str(BENCH), *sys.path])
        return _started


def differs_at_start(env: dict[str, str]) -> bool:
    """Whether ``env`` sets a variable read at an interpreter's start (or as the forkers
    import) unlike the forkers' environment, or a path they lack (theirs is this process's
    as they started, with the tree and the bench folder first)."""
    base, path = (
        _started if _started is not None else (os.environ, [str(ROOT), str(BENCH), *sys.path])
    )
    entries = {os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p}
    if not entries <= set(path):
        return True
    return any(
        k.startswith(_READ_AT_START) and k != "PYTHONPATH" and env.get(k) != base.get(k)
        for k in {*env, *base}
    )


# ---- the server: in the forked-from process ------------------------------------------------


def serve() -> None:
    """Import `PRELOAD`, then fork a child per request until stdin ends."""
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]  # as launch.main does
    for name in PRELOAD:
        importlib.import_module(name)
    assert threading.active_count() == 1, "the forker must run no thread: it forks"
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # select wakes on the wakeup fd
    pending = b""
    children: set[int] = set()
    while True:
        ready = select.select([0, wake_r], [], [])[0]
        if wake_r in ready:
            while True:
                try:
                    if not os.read(wake_r, 512):
                        break
                except BlockingIOError:
                    break
        _reap(children)
        if 0 not in ready:
            continue
        chunk = os.read(0, 1 << 16)
        if not chunk:  # the test process is gone (it ended, or was killed mid-test)
            _end(children)
            return
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            request = json.loads(line)
            pid = os.fork()
            if pid == 0:
                os.close(wake_r)
                os.close(wake_w)
                _child(request)  # never returns
            children.add(pid)
            _say({"id": request["id"], "pid": pid})


def _say(answer: dict[str, Any]) -> None:
    os.write(1, json.dumps(answer).encode() + b"\n")


def _reap(children: set[int]) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        children.discard(pid)
        with contextlib.suppress(BrokenPipeError):  # the test process may be gone
            _say({"pid": pid, "status": os.waitstatus_to_exitcode(status)})


def _end(children: set[int], grace: float = 10.0) -> None:
    """SIGTERM the children still running, SIGKILL those left after ``grace`` seconds, and
    reap them all. A test process that ends has stopped its daemons; one killed mid-test (an
    xdist worker) would otherwise leave them serving for ever, on a 2-core machine."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + grace
        while children and time.monotonic() < deadline:
            _reap(children)
            time.sleep(0.05)


def _child(req: dict[str, Any]) -> None:
    """Become ``python -m MODULE ARGS`` (or ``python SCRIPT ARGS``) as the request says, and
    exit as that interpreter would."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.umask(req["umask"])
    for name, limits in req["limits"].items():
        if resource.getrlimit(getattr(resource, name)) != tuple(limits):
            resource.setrlimit(getattr(resource, name), tuple(limits))
    os.chdir(req["cwd"])
    append = os.O_APPEND if req["append"] else os.O_TRUNC
    for fd, name in ((0, req["stdin"]), (1, req["stdout"]), (2, req["stderr"])):
        if fd == 2 and name == req["stdout"]:
            os.dup2(1, 2)
            continue
        flags = os.O_RDONLY if fd == 0 else os.O_WRONLY | os.O_CREAT | append
        f = os.open(name, flags, 0o644)
        os.dup2(f, fd)
        os.close(f)
    os.environ.clear()
    os.environ.update(req["env"])
    time.tzset()
    code, died_of = 0, 0
    try:
        if req["module"]:
            sys.argv = ["-m", *req["args"]]  # runpy puts the module's path in [0]
            sys.path[0] = os.getcwd()
            import runpy

            runpy.run_module(req["module"], run_name="__main__", alter_sys=True)
        else:
            sys.argv = [req["script"], *req["args"]]
            sys.path[0] = os.path.dirname(os.path.abspath(req["script"]))
            import runpy

            runpy.run_path(req["script"], run_name="__main__")
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException as exc:
        import traceback

        traceback.print_exc()
        code = 1
        if isinstance(exc, KeyboardInterrupt):
            died_of = signal.SIGINT
    # As the interpreter ends: wait for the threads that are not daemons, then atexit.
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    if died_of:  # as an interpreter ends on an uncaught KeyboardInterrupt: killed by SIGINT
        signal.signal(died_of, signal.SIG_DFL)
        os.kill(os.getpid(), died_of)
    os._exit(code & 0xFF)  # sys.exit(-1) is 255, as the kernel keeps the low byte


# ---- the client: in the test's process ----------------------------------------------------

_LIMITS = sorted(n for n in dir(resource) if n.startswith("RLIMIT_"))


def _umask() -> int:
    """This process's umask, read without setting it (`os.umask` sets it to read it: for an
    instant every thread of the test, a daemon's on a thread binding its socket too, would
    make files under another)."""
    with contextlib.suppress(OSError, StopIteration):
        status = Path("/proc/self/status").read_text()
        return int(next(x for x in status.splitlines() if x.startswith("Umask:")).split()[1], 8)
    umask = os.umask(0o22)  # no /proc (macOS): the only other way
    os.umask(umask)
    return umask


class Forked:
    """A forked child as a `subprocess.Popen` is used here: ``pid``, ``returncode``, `poll`,
    `wait`, `send_signal`, `terminate`, `kill`."""

    def __init__(self, forker: Forker, pid: int, args: list[str]) -> None:
        self.forker = forker
        self.pid = pid
        self.args = args
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.forker.status(self.pid, 0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = self.forker.status(self.pid, timeout)
            if self.returncode is None:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            # The forker may have reaped it before its status reached us (a `subprocess`
            # child stays a zombie until waited for): gone is not an error, as in Popen.
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Forker:
    """A forking server; `shared` gives this process's two in turn, started on first use."""

    _pool: list[Forker | None] = [None, None]
    _turn = 0
    _shared_lock = threading.Lock()

    @classmethod
    def shared(cls) -> Forker:
        """The next of this process's two forkers: two interpreters, two hash seeds, so two
        starts in a row never share one (as two fresh interpreters would not)."""
        with cls._shared_lock:
            cls._turn = (cls._turn + 1) % len(cls._pool)
            forker = cls._pool[cls._turn]
            if forker is None or forker.proc.poll() is not None:
                forker = cls._pool[cls._turn] = cls()
                atexit.register(forker.close)
            return forker

    def __init__(self) -> None:
        base, path = _start_state()
        env = dict(base)
        env["PYTHONPATH"] = os.pathsep.join(p for p in path if p)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from tests.forker import serve; serve()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=ROOT,
        )  # fmt: skip
        self._cond = threading.Condition()
        self._pids: dict[int, int] = {}  # request id -> pid
        self._statuses: dict[int, int] = {}  # pid -> exit code
        self._next = 0
        self._ended = False
        threading.Thread(target=self._read, name="forker answers", daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            answer = json.loads(line)
            with self._cond:
                if "id" in answer:
                    self._pids[answer["id"]] = answer["pid"]
                else:
                    self._statuses[answer["pid"]] = answer["status"]
                self._cond.notify_all()
        with self._cond:
            self._ended = True
            self._cond.notify_all()

    def spawn(
        self,
        *,
        module: str | None = None,
        script: str | None = None,
        args: list[str],
        env: dict[str, str],
        cwd: Path | str,
        stdout: Path,
        stderr: Path | None = None,
        append: bool = False,
        stdin: Path | None = None,
    ) -> Forked:
        """``python -m module *args`` (or ``python script *args``) in ``cwd`` under ``env``;
        stdin from the file ``stdin`` (or /dev/null), stdout to the file ``stdout`` (appended to if ``append``),
        stderr to ``stderr`` or with stdout."""
        assert (module is None) != (script is None)
        assert not differs_at_start(env), "a variable read at start differs: use a process"
        assert self.proc.stdin is not None
        umask = _umask()
        with self._cond:
            self._next += 1
            rid = self._next
            request = {
                "id": rid, "module": module, "script": script, "args": args, "env": env,
                "cwd": str(cwd), "stdin": str(stdin or os.devnull), "stdout": str(stdout),
                "stderr": str(stderr or stdout), "append": append, "umask": umask,
                "limits": {name: resource.getrlimit(getattr(resource, name)) for name in _LIMITS},
            }  # fmt: skip
            self.proc.stdin.write(json.dumps(request).encode() + b"\n")
            self.proc.stdin.flush()
            if not self._cond.wait_for(lambda: rid in self._pids or self._ended, 60):
                raise TimeoutError("the forker did not fork in 60 s")
            if self._ended:
                raise RuntimeError(f"the forker exited {self.proc.wait()}")
            pid = self._pids.pop(rid)
        argv = [sys.executable, *(["-m", module] if module else [str(script)]), *args]
        return Forked(self, pid, argv)

    def run(
        self,
        args: list[str],
        env: dict[str, str],
        *,
        script: str | None = None,
        cwd: Path | str | None = None,
        input: str | None = None,
        timeout: float = 60,
    ) -> subprocess.CompletedProcess[str]:
        """``subprocess.run([python, "-m", "chrysalisd", *args], env=env, cwd=cwd,
        input=input, capture_output=True, text=True, timeout=timeout)`` (with ``script``,
        ``[python, script, *args]``), forked: stdin is ``input`` (from a file: the child
        reads it to its end, as from a pipe)."""
        with tempfile.TemporaryDirectory(prefix="chr-run-") as tmp:
            stdin, out, err = Path(tmp, "stdin"), Path(tmp, "stdout"), Path(tmp, "stderr")
            stdin.write_text(input or "")
            child = self.spawn(
                module=None if script else "chrysalisd", script=script, args=args, env=env,
                cwd=cwd or Path.cwd(), stdin=stdin, stdout=out, stderr=err,
            )  # fmt: skip
            try:
                status = child.wait(timeout)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait(60)
                raise subprocess.TimeoutExpired(child.args, timeout) from None
            return subprocess.CompletedProcess(
                child.args, status, out.read_text(errors="replace"), err.read_text(errors="replace")
            )

    def status(self, pid: int, timeout: float | None) -> int | None:
        """``pid``'s exit code once it ended, waiting up to ``timeout`` seconds (None: for
        ever); None if it has not."""
        with self._cond:
            self._cond.wait_for(lambda: pid in self._statuses or self._ended, timeout)
            if pid not in self._statuses and self._ended:
                raise RuntimeError(f"the forker exited {self.proc.poll()} before {pid} did")
            return self._statuses.get(pid)

    def close(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
