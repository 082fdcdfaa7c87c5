"""A real daemon in a subprocess, on a short socket path, for integration tests."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from chrysalis.client import Client
from chrysalis.core.errors import DaemonNotRunning

_REQUESTS = re.compile(
    r'chrysalis_http_requests_total\{method="(?P<method>[A-Z]+)",route="(?P<route>[^"]*)",'
    r'status="(?P<status>\d+)"\} (?P<n>\d+)(?:\.0)?'  # prometheus_client prints 1.0
)


class DaemonProcess:
    """``chrysalis daemon`` on ``data_dir`` with its socket in a fresh short /tmp dir."""

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
        self.proc: subprocess.Popen[str] | None = None
        self.log = data_dir.parent / f"{data_dir.name}-daemon.log"

    def start(self, *extra: str, wait: bool = True) -> DaemonProcess:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self._close_log()
        self._log_file = open(self.log, "a")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "chrysalisd",
                "daemon",
                "--data-dir",
                str(self.data_dir),
                *extra,
            ],
            env=self.env,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            text=True,
        )
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
        return subprocess.run(
            [sys.executable, "-m", "chrysalisd", *args],
            env=self.env,
            input=input,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.stop(signal.SIGKILL)
        self._close_log()
        shutil.rmtree(self.sock_dir, ignore_errors=True)
