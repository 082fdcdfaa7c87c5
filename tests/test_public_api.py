"""The public surface: what `chrysalis` exports, and the bench script still runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import chrysalis
from tests.bench_forker import BenchForker

ROOT = Path(__file__).resolve().parent.parent


def test_all_names_exist_and_every_public_name_is_listed() -> None:
    for name in chrysalis.__all__:
        assert hasattr(chrysalis, name), name
    public = {n for n in vars(chrysalis) if not n.startswith("_") and not _is_module(n)}
    assert public <= set(chrysalis.__all__), public - set(chrysalis.__all__)


def _is_module(name: str) -> bool:
    return type(getattr(chrysalis, name)).__name__ == "module"


def test_errors_form_one_tree() -> None:
    for name in chrysalis.__all__:
        obj = getattr(chrysalis, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, chrysalis.ChrysalisError)


def test_readme_test_command_is_what_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    command = next(line for line in ci.splitlines() if line.startswith("python3 -m venv"))
    assert command in readme[:400], "the README must open with the CI test command"


def test_store_bench_quick_run_prints_its_figures(bench_forker: BenchForker) -> None:
    out = bench_forker.run(
        [
            str(ROOT / "bench" / "store_bench.py"),
            "--quick",
            "--json",
            "--seconds",
            "0.2",
        ],
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    figures = {f["key"]: f for f in json.loads(out.stdout)["figures"]}
    assert {"append_bead_8t", "append_beads", "apply_ops", "last_beads_p95", "state_digest"} <= set(
        figures
    )
    assert all(f["value"] > 0 for f in figures.values())


def test_async_client_has_every_route_of_the_sync_client() -> None:
    def routes(cls: type) -> set[str]:
        return {n for n in vars(cls) if not n.startswith("_")} - {"close", "aclose", "raw"}

    assert routes(chrysalis.Client) == routes(chrysalis.AsyncClient)


def test_every_name_chrysalis_sync_exports_resolves() -> None:
    import chrysalis.sync

    # its names load on first use: a name listed where it does not live fails here
    assert all(getattr(chrysalis.sync, name) is not None for name in chrysalis.sync.__all__)


def test_the_client_imports_no_storage_module() -> None:
    code = "import sys; from chrysalis.client import AsyncClient, Client; print(sorted(m for m in sys.modules if m.startswith('chrysalis')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    loaded = set(json.loads(out.stdout.replace("'", '"')))
    assert loaded == {
        "chrysalis", "chrysalis.client", "chrysalis.client.aio", "chrysalis.client.blocking",
        "chrysalis.client.local_socket",
        "chrysalis.client.routes", "chrysalis.client.transport", "chrysalis.core",
        "chrysalis.core.errors", "chrysalis.core.vocab",
    }  # fmt: skip


def test_load_bench_quick_run_prints_its_figures(bench_forker: BenchForker) -> None:
    out = bench_forker.run(
        # smaller than --quick's own defaults: the suite checks that it runs and what it
        # prints, not the figures
        [
            str(ROOT / "bench" / "load_bench.py"),
            "--quick",
            "--json",
            "--beads",
            "500",
            "--clients",
            "4",
            "--procs",
            "2",
            "--seconds",
            "0.5",
            "--open-seconds",
            "1",
        ],
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout)
    for phase in ("closed", "open"):
        figures = report[phase]
        assert figures["errors"] == 0, figures["error_messages"]
        assert figures["recalls"] > 0 and figures["remembers"] > 0
        assert 0 < figures["recall_p50_ms"] <= figures["recall_p95_ms"] <= figures["recall_p99_ms"]
        assert 0 < figures["daemon_cpu_ms_per_request"] < 1000
    assert report["daemon_exit_code"] == 0


def test_million_bench_quick_run_prints_its_figures(bench_forker: BenchForker) -> None:
    out = bench_forker.run(
        [
            str(ROOT / "bench" / "million.py"),
            "--quick",
            "--json",
            "--beads",
            "3000",
            "--queries",
            "20",
            "--tail",
            "100",
        ],
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout)
    assert report["build"]["built"] and report["beads"] == 3_000
    opened = report["open"]
    assert 0 < opened["open_s"] <= opened["first_recall_s"]
    assert 0 < opened["recall_p50_ms"] <= opened["recall_p95_ms"] <= opened["recall_max_ms"]
    assert 0 < opened["rss_mb"] <= opened["peak_rss_mb"]
    assert report["rebuild"]["rebuild_s"] > 0 and report["compaction"]["compact_s"] > 0
    assert opened["rss_anon_mb"] > 0 and opened["rss_file_mb"] > 0
    exchanged = report["exchange"]
    assert exchanged["export_lines"] >= 3_001 and exchanged["import_added"]["bead"] == 3_000
    joined = report["join"]
    assert joined["converged"] and joined["join_ops"] == joined["push_ops"] + 100
    assert joined["join_from"].startswith("snapshots/") and joined["snapshot_parts"] >= 1
    assert joined["join_cpu_s"] > 0 and joined["join_moto_cpu_s"] > 0
    assert set(report["met"]) == {"recall_p95_ms", "rss_mb", "open_s", "join_s"}


def test_sync_bench_quick_run_converges(bench_forker: BenchForker) -> None:
    out = bench_forker.run(
        [str(ROOT / "bench" / "sync_bench.py"), "--quick", "--json",
         "--remote", "file", "--beads", "2000", "--rounds", "3"],
        timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout)["file"]
    rep = report["replication"]
    assert rep["converged"] and len(set(rep["digests"].values())) == 1
    assert rep["ops"] == 2000 and rep["push_ops_per_s"] > 0 and rep["replay_ops_per_s"] > 0
    assert rep["idle_pull_requests"]["list"] == 0
    assert report["end_to_end"]["latency_max_s"] > 0


def test_compose_file_runs_two_daemons_on_one_bucket_on_loopback() -> None:
    import yaml

    compose = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())
    services = compose["services"]
    assert {"minio", "bucket", "ollama", "laptop-a", "laptop-b"} <= set(services)
    a, b = services["laptop-a"]["environment"], services["laptop-b"]["environment"]
    assert a["CHRYSALIS_REMOTE"] == b["CHRYSALIS_REMOTE"].replace("laptop-b", "laptop-a")
    assert a["CHRYSALIS_REMOTE"].startswith("s3://chrysalis/")
    assert a["CHRYSALIS_REPLICA_ID"] != b["CHRYSALIS_REPLICA_ID"]
    ports = [p for s in services.values() for p in s.get("ports", [])]
    assert ports and all(p.startswith("127.0.0.1:") for p in ports)
    assert (ROOT / "deploy" / "Dockerfile").exists()


def test_graph_rotate_bench_quick_run_prints_its_figures(bench_forker: BenchForker) -> None:
    out = bench_forker.run(
        [str(ROOT / "bench" / "graph_rotate_bench.py"), "--quick", "--json"],
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    row = json.loads(out.stdout)
    assert row["ops_by_rotation"] > 0 and row["ops_per_live_item"] == 2.0  # a move: put + remove
