"""`chrysalis demo`: two in-process laptops converge through a folder, and leave nothing behind."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from chrysalis.memory import Memory
from chrysalisd.demo import DemoFailed, run_demo


def test_demo_converges_recalls_from_the_other_laptop_and_cleans_up() -> None:
    lines: list[str] = []
    t0 = time.perf_counter()
    result = run_demo(echo=lines.append)
    elapsed = time.perf_counter() - t0

    assert elapsed < 15
    digests = result["digests"]
    assert set(digests) == {"laptop-a", "laptop-b"}
    assert digests["laptop-a"] == digests["laptop-b"]
    recalled = result["recalled"]
    assert recalled["provenance"]["origin_replica"] == "laptop-a"
    assert recalled["provenance"]["op"].startswith("laptop-a:")
    assert recalled["id"] in result["written"]["laptop-a"]
    assert result["beads"] == {"laptop-a": 5, "laptop-b": 5}
    moved = result["rounds"][0]
    assert moved["pushed"] == {"laptop-a": 4, "laptop-b": 1}
    assert moved["pulled"] == {"laptop-a": 1, "laptop-b": 4}
    assert not Path(result["workdir"]).exists()
    assert result["remote"].startswith("file://")
    assert set(result["timings"]) >= {"write", "sync", "recall"}

    text = "\n".join(lines)
    assert "laptop-a" in text and "laptop-b" in text
    assert digests["laptop-a"] in text
    assert recalled["id"] in text and "origin replica laptop-a" in text


def test_demo_raises_when_digests_differ_and_still_removes_its_dir(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[str] = []
    real_mkdtemp = tempfile.mkdtemp

    def mkdtemp(*args: Any, **kwargs: Any) -> str:
        path: str = real_mkdtemp(*args, **kwargs)
        made.append(path)
        return path

    real_digest = Memory.state_digest

    def skewed(self: Memory) -> str:
        return f"{real_digest(self)}-{self.replica_id}"

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    monkeypatch.setattr(Memory, "state_digest", skewed)
    with pytest.raises(DemoFailed, match="did not converge"):
        run_demo(echo=lambda _: None)
    assert len(made) == 1
    assert not Path(made[0]).exists()


def test_chrysalis_demo_runs_from_the_cli() -> None:
    import subprocess
    import sys

    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "chrysalisd", "demo"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert time.perf_counter() - started < 15
    assert "origin replica laptop-a" in out.stdout
    digests = [line.split()[-1] for line in out.stdout.splitlines() if "state digest of" in line]
    assert len(digests) == 2 and digests[0] == digests[1]
