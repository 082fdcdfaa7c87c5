"""The benches that measure `context` still run and print their figures (not their values:
those are quoted in docs/benchmarks.md, measured on a quiet machine)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.bench_forker import BenchForker

ROOT = Path(__file__).resolve().parent.parent


def test_retrieve_bench_quick_times_context(bench_forker: BenchForker) -> None:
    out = bench_forker.run(
        [str(ROOT / "bench" / "retrieve_bench.py"), "--quick", "--queries", "20", "--json"],
        timeout=900,
    )
    out.check_returncode()
    figures = json.loads(out.stdout)
    assert figures["beads"] == 2_000  # --quick (bench/retrieve_bench.py)
    assert figures["context_ms_p95"] > 0 and figures["context_items"] > 0
    # CPU per call, what a recall costs a core (issue 33): a median is at most the p95
    for name in ("retrieve", "context"):
        assert 0 < figures[f"{name}_cpu_ms_p50"] <= figures[f"{name}_cpu_ms_p95"]
    assert 0 < figures["context_tokens"] <= 800
