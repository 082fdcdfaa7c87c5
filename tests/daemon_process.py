"""A real daemon on a short Unix socket path, for integration tests: `DaemonProcess` in a
subprocess (for signals, exit statuses, locks, socket ownership, crashes) and `DaemonThread`,
the same server on a thread of the test's process (for routes: the socket, HTTP and every
layer under it are as real; only the process around them is the test's). Both run the CLI
against their socket in-process through click's `CliRunner` (`cli`), except the commands that
start, stop or hand stdio to a process of their own (`PROCESS_COMMANDS`), which get one."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket as pysocket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from chrysalis.client import Client
from chrysalis.core.errors import DaemonNotRunning
from tests.forker import Forked, Forker, differs_at_start

# Commands run as `python -m chrysalisd` even by `cli`: they start a server, signal the daemon
# (whose pid, for a DaemonThread, is the test's own) or serve MCP on stdio.
PROCESS_COMMANDS = frozenset({"daemon", "stop", "mcp"})

_REQUESTS = re.compile(
    r'chrysalis_http_requests_total\{method="(?P<method>[A-Z]+)",route="(?P<route>[^"]*)",'
    r'status="(?P<status>\d+)"\} (?P<n>\d+)(?:\.0)?'  # prometheus_client prints 1.0
)


class DaemonProcess:
    """``chrysalis daemon`` on ``data_dir`` with its socket in a fresh short /tmp dir: a
    process forked from one that made a daemon's imports (`tests.forker`), or with ``fresh``
    (or an environment an interpreter reads as it starts) a fresh interpreter."""

    fresh = False

    def __init__(self, data_dir: Path, *, env: dict[str, str] | None = None) -> None:
        self.data_dir = data_dir
        self.sock_dir = Path(tempfile.mkdtemp(prefix="chr-", dir="/tmp"))
        self.socket = self.sock_dir / "d.sock"
        self.env = {
            **os.environ,
            "CHRYSALIS_SOCKET": str(self.socket),
            "CHRYSALIS_EMBEDDER": "deterministic",
            # Knowledge is tested where it is the subject (test_daemon_knowledge, the soak):
            # elsewhere the rules worker would only add CPU to every daemon test.
            "CHRYSALIS_EXTRACTOR": "none",
            "CHRYSALIS_DURABLE": "false",
            # Pushes when the test syncs or its push_interval says, not seconds after each
            # write (test_first_hour_2 tests that).
            "CHRYSALIS_PUSH_AFTER_WRITE": "0",
            "CHRYSALIS_LOG_LEVEL": "info",
            **(env or {}),
        }
        self.proc: subprocess.Popen[str] | Forked | None = None
        self.log = data_dir.parent / f"{data_dir.name}-daemon.log"

    def start(self, *extra: str, wait: bool = True) -> DaemonProcess:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self._close_log()
        self._log_file = open(self.log, "a")  # noqa: SIM115 - closed in stop()
        args = ["daemon", "--data-dir", str(self.data_dir), *extra]
        if self.fresh or differs_at_start(self.env):
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "chrysalisd", *args],
                env=self.env,
                stdout=self._log_file,
                stderr=subprocess.STDOUT,
                text=True,
            )
        else:  # the same process, forked from one that made the imports (`tests.forker`)
            self.proc = Forker.shared().spawn(
                module="chrysalisd", args=args, env=self.env, cwd=Path.cwd(), stdout=self.log,
                append=True,
            )  # fmt: skip
        if wait:
            self.wait_ready()
        return self

    def wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        with Client(self.socket, timeout=2.0) as client:
            while time.monotonic() < deadline:
                assert self.proc is not None
                if self.proc.poll() is not None:
                    raise RuntimeError(f"daemon exited {self.proc.returncode}:\n{self.output()}")
                try:
                    if client.ping():
                        return
                except DaemonNotRunning:
                    time.sleep(0.05)
        raise TimeoutError(f"daemon not ready in {timeout} s:\n{self.output()}")

    def output(self) -> str:
        return self.log.read_text() if self.log.exists() else ""

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise
        self._close_log()
        return self.proc.returncode

    def _close_log(self) -> None:
        log_file = getattr(self, "_log_file", None)
        if log_file is not None:
            log_file.close()

    def client(self, **kw: Any) -> Client:
        return Client(self.socket, **kw)

    def once(self, method: str, *args: Any, **kw: Any) -> Any:
        """One Client call on a connection closed right after."""
        with self.client() as c:
            return getattr(c, method)(*args, **kw)

    def request_counts(self) -> Counter[tuple[str, str, int]]:
        """Requests answered so far, by (method, route, status), from ``GET /metrics``; the
        metrics requests themselves left out."""
        counts: Counter[tuple[str, str, int]] = Counter()
        for line in self.once("metrics").splitlines():
            m = _REQUESTS.fullmatch(line)
            if m and m["route"] != "/metrics":
                counts[(m["method"], m["route"], int(m["status"]))] = int(m["n"])
        return counts

    def requests_since(
        self, before: Counter[tuple[str, str, int]], timeout: float = 5.0
    ) -> Counter[tuple[str, str, int]]:
        """The requests answered since ``before`` was taken (counted just after each answer
        is sent: wait for the first to show, then a moment for any straggler)."""
        deadline = time.monotonic() + timeout
        while not (self.request_counts() - before) and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.1)
        return self.request_counts() - before

    def cli(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        """``chrysalis ARGS`` with this daemon's environment: in-process (`run_cli`), or as
        a process for `PROCESS_COMMANDS`."""
        return run_cli(args, self.env, input=input)

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.stop(signal.SIGKILL)
        self._close_log()
        shutil.rmtree(self.sock_dir, ignore_errors=True)


def raw_http(socket: Path, timeout: float = 60.0) -> httpx.Client:
    """A plain httpx client on the daemon's socket: requests exactly as written, for tests of
    what the routes accept and answer (the library's `Client` checks and shapes them first)."""
    # A send buffer as large as the kernel allows (it caps it at net.core.wmem_max): httpcore
    # sends a body by slicing what is left after each send, so a 64 MiB body sent ~200 KiB at
    # a time was ~10 GB of copying (~5 s of CPU in the test's own process).
    big_sends = [(pysocket.SOL_SOCKET, pysocket.SO_SNDBUF, 4 << 20)]
    transport = httpx.HTTPTransport(uds=str(socket), socket_options=big_sends)
    return httpx.Client(transport=transport, base_url="http://chrysalis", timeout=timeout)


def command_of(args: tuple[str, ...] | list[str]) -> str | None:
    """The command word in ``args`` (past the group's ``--socket X`` / ``--memory X``)."""
    rest = list(args)
    while rest and rest[0] in ("--socket", "--memory"):
        rest = rest[2:]
    return rest[0] if rest else None


def run_process(
    args: tuple[str, ...] | list[str],
    env: dict[str, str],
    *,
    input: str | None = None,
    cwd: Path | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """``chrysalis ARGS`` as a process of its own (``python -m chrysalisd``): its exit status,
    stdout and stderr; forked from an interpreter that made its imports (`tests.forker`)
    unless ``env`` sets a variable read as an interpreter starts."""
    if differs_at_start(env):
        return subprocess.run(
            [sys.executable, "-m", "chrysalisd", *args], env=env, input=input, cwd=cwd,
            capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip
    return Forker.shared().run(list(args), env, cwd=cwd, input=input, timeout=timeout)


def run_cli(
    args: tuple[str, ...] | list[str],
    env: dict[str, str],
    *,
    input: str | None = None,
    cwd: Path | None = None,
    process: bool | None = None,
) -> subprocess.CompletedProcess[str]:
    """``chrysalis ARGS`` under ``env``, as the shell would run it: exit status, stdout and
    stderr. In-process through click's `CliRunner` (the same command objects, parsing and
    client, at no interpreter start), unless ``process`` is true or it is one of
    `PROCESS_COMMANDS`; in ``cwd`` if given. An exception the command lets escape is a traceback on stderr and
    status 1, as in a process."""
    if process is None:
        process = command_of(args) in PROCESS_COMMANDS
    if process:
        return run_process(args, env, input=input, cwd=cwd)
    from click.testing import CliRunner

    from chrysalisd.cli import main

    # Only what differs from this process's environment (`CliRunner` sets it for the call and
    # puts it back); a variable the caller removed is removed for the call too.
    changed: dict[str, str | None] = {k: v for k, v in env.items() if os.environ.get(k) != v}
    changed.update({k: None for k in os.environ if k not in env})
    before = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)  # tests run one at a time in a process: nothing else sees it
    try:
        result = CliRunner().invoke(
            main, list(args), input=input, env=changed, prog_name="chrysalis"
        )
    finally:
        os.chdir(before)
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        assert result.exc_info is not None
        stderr += "".join(traceback.format_exception(*result.exc_info))
    return subprocess.CompletedProcess(
        ["chrysalis", *args], result.exit_code, result.stdout, stderr
    )


# Variables the daemon reads from its process's environment where it uses them (not through
# its settings): a DaemonThread would read the test process's.
READ_WHERE_USED = frozenset(
    {"CHRYSALIS_FAULT", "OLLAMA_HOST", "ZEP_API_URL", "XDG_RUNTIME_DIR", "HF_HUB_OFFLINE"}
)
_LEVELS: list[int] = []  # the root logger's level before each running DaemonThread


class DaemonThread(DaemonProcess):
    """The daemon's server (`chrysalisd.server.run`) on a thread of this process, on a real
    Unix socket in a fresh short /tmp dir, with the settings ``chrysalis daemon`` would take
    from ``env`` and ``start``'s flags. Its log records (this process's, while it serves) go
    to ``log`` as JSON lines, as a daemon's stderr to a file would. `stop` returns 0 after a
    clean stop, 1 when serving raised (the traceback is in ``output()``); nothing can signal
    it, so tests of signals, exit statuses, locks and crashes use `DaemonProcess`."""

    def __init__(self, data_dir: Path, *, env: dict[str, str] | None = None) -> None:
        super().__init__(data_dir, env=env)
        self.thread: threading.Thread | None = None
        self.failure: BaseException | None = None
        self._stop = threading.Event()
        self._handler: Any = None

    def start(self, *extra: str, wait: bool = True) -> DaemonThread:
        import logging

        from chrysalisd.config import explain_settings
        from chrysalisd.logs import JsonFormatter
        from chrysalisd.server import run

        # The settings come from self.env, but a few variables are read from the process's
        # environment where they are used: those need a process of their own.
        outside = sorted(
            k
            for k in {*self.env, *os.environ}
            if (k in READ_WHERE_USED or k.startswith("AWS_"))
            and self.env.get(k) != os.environ.get(k)
        )
        assert not outside, f"{outside} reach a daemon only in a process: use DaemonProcess"
        flags: dict[str, str] = {}
        rest = ["--data-dir", str(self.data_dir), *extra]
        while rest:
            flag, value, *rest = rest
            assert flag.startswith("--"), f"a flag with its value, not {flag!r}"
            flags[flag[2:].replace("-", "_")] = value
        config = flags.pop("config", None)
        settings = explain_settings(config, flags, self.env).settings
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self._handler = logging.FileHandler(self.log, encoding="utf-8")
        self._handler.setFormatter(JsonFormatter())
        self._handler.setLevel(settings.log_level.upper())
        root = logging.getLogger()
        root.addHandler(self._handler)
        _LEVELS.append(root.level)  # put back when the last DaemonThread stops
        root.setLevel(min(root.level or logging.WARNING, self._handler.level))
        for quiet in ("faiss.loader", "apscheduler"):  # as configure_logging quiets them
            logging.getLogger(quiet).setLevel(logging.WARNING)
        self._stop.clear()
        self.failure = None

        def serve() -> None:
            try:
                run(settings, self._stop)
            except BaseException as exc:
                self.failure = exc
                logging.getLogger("chrysalisd").exception("the daemon's thread failed")

        self.thread = threading.Thread(target=serve, name=f"daemon {self.socket}", daemon=True)
        self.thread.start()
        if wait:
            self.wait_ready()
        return self

    def wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        with Client(self.socket, timeout=2.0) as client:
            while time.monotonic() < deadline:
                assert self.thread is not None
                if not self.thread.is_alive():
                    raise RuntimeError(f"daemon thread ended ({self.failure!r}):\n{self.output()}")
                try:
                    if client.ping():
                        return
                except DaemonNotRunning:
                    time.sleep(0.02)
        raise TimeoutError(f"daemon not ready in {timeout} s:\n{self.output()}")

    def cli(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        # `stop` would signal the pid this daemon's status names: the test's own process
        assert command_of(args) != "stop", "`chrysalis stop` needs a DaemonProcess"
        return super().cli(*args, input=input)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> int:
        """Stop as on SIGTERM (``sig`` is not sent anywhere: there is no process)."""
        assert self.thread is not None
        self._stop.set()
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise TimeoutError(f"daemon thread still serving after {timeout} s")
        self._close_log()
        return 0 if self.failure is None else 1

    def _close_log(self) -> None:
        import logging

        if self._handler is not None:
            root = logging.getLogger()
            root.removeHandler(self._handler)
            level = _LEVELS.pop()
            if not _LEVELS:
                root.setLevel(level)
            self._handler.close()
            self._handler = None

    def close(self) -> None:
        if self.thread is not None and self.thread.is_alive():
            self.stop()
        self._close_log()
        shutil.rmtree(self.sock_dir, ignore_errors=True)
