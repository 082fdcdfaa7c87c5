"""Every script in bench/ runs: its ``--quick`` mode, here, so that a bench that no longer
works fails the suite instead of rotting until the next measurement.

Parametrised over the folder: a new bench is in this test the moment it is added. A script
(a file with a ``__main__`` block) must take ``--quick`` and exit 0 in a few seconds; exit
status 77 means its data is absent (the LoCoMo and LongMemEval dev sets live outside the
repository) and skips with the reason it printed. A file without a ``__main__`` block is a
module other benches import, and must import. A few benches are run with ``--quick`` by a test
that also checks their figures; those are named in `RUN_ELSEWHERE` and not run twice.

Each script runs in a process of its own, forked from an interpreter that has already imported
what every bench imports (`tests.bench_forker`): a quick run checks the bench, not the
interpreter's start-up.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench_forker import BenchForker, bench_env

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


@pytest.mark.parametrize("path", sorted(BENCH.glob("*.py")), ids=lambda p: p.name)
def test_every_bench_runs_its_quick_mode(path: Path, request: pytest.FixtureRequest) -> None:
    text = path.read_text()
    if not _is_script(path):
        out = subprocess.run(
            [sys.executable, "-c", f"import {path.stem}"],
            cwd=BENCH, env=bench_env(), capture_output=True, text=True, timeout=60,
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
    forker: BenchForker = request.getfixturevalue("bench_forker")  # only scripts need it
    out = forker.run([str(path), "--quick"], timeout=240)
    if out.returncode == SKIPPED:
        pytest.skip(out.stderr.strip().splitlines()[-1])
    assert out.returncode == 0, f"{path.name} --quick failed:\n{out.stderr[-3000:]}"
    assert out.stdout.strip(), f"{path.name} --quick printed no figures"


def test_a_bench_without_its_data_says_so_and_is_skipped(tmp_path: Path) -> None:
    """The skip is for absent data only, and it names the file it looked for."""
    missing = tmp_path / "nowhere.json"
    out = subprocess.run(
        [sys.executable, str(BENCH / "locomo_eval.py"), "--quick", "--data", str(missing)],
        cwd=ROOT, env=bench_env(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == SKIPPED
    assert str(missing) in out.stderr
