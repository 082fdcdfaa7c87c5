from __future__ import annotations

import compileall
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from chrysalis import Memory
from tests.bench_forker import BenchForker
from tests.daemon_process import DaemonProcess, DaemonThread

pytest_plugins = ["tests.remote_fixtures"]

# Properties, not timings: a suite running four workers on two cores makes an example slow now
# and then, and hypothesis's default 200 ms deadline then fails a correct test (seen on
# test_sync_protocol's compaction property). Speed lives in bench/.
settings.register_profile("chrysalis", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("chrysalis")

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def open_memory(tmp_path: Path) -> Iterator[Callable[..., Memory]]:
    """Open Memories in fresh data dirs under tmp_path (sync off: these tests are not about fsync)."""
    opened: list[Memory] = []

    def factory(name: str = "m", **kwargs: object) -> Memory:
        kwargs.setdefault("sync", False)
        mem = Memory.open(tmp_path / name, **kwargs)  # type: ignore[arg-type]
        opened.append(mem)
        return mem

    yield factory
    for mem in opened:
        mem.close()


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[DaemonProcess]:
    """A daemon of its own for one test, served on a thread of this process (modules that
    share one define their own ``daemon``; `daemon_process` where the process matters)."""
    d = DaemonThread(tmp_path / "data").start()
    yield d
    d.stop()
    d.close()


@pytest.fixture
def daemon_process(tmp_path: Path) -> Iterator[DaemonProcess]:
    """A daemon of its own for one test, in a process of its own: for signals, exit
    statuses, locks and crashes."""
    d = DaemonProcess(tmp_path / "data").start()
    yield d
    d.stop()
    d.close()


@pytest.fixture(scope="session")
def bench_forker() -> Iterator[BenchForker]:
    """Runs bench scripts' quick modes without an interpreter's start-up each
    (`tests.bench_forker`); started by the first test that asks."""
    yield BenchForker()


@pytest.fixture
def mem(open_memory: Callable[..., Memory]) -> Memory:
    return open_memory("main")


def exchange(*replicas: Memory) -> None:
    """Full exchange: every replica gets every op the others have."""
    for _ in range(2):
        for a in replicas:
            for b in replicas:
                if a is not b:
                    b.apply_ops(a.ops_since(b.version_vector()))


# The one end-to-end test that runs through S3 by default: daemons converging through moto.
# S3's behaviour is the Remote contract's subject (tests/contracts/, every test on both kinds);
# elsewhere a test's S3 copy repeats its folder copy through a slower remote, so it is `slow`.
S3_END_TO_END = "tests/test_sync_daemon.py::test_three_daemons_work_offline_then_converge[s3]"


def pytest_configure(config: pytest.Config) -> None:
    """Compile the packages' modules once, before the workers start. Every daemon, CLI and
    bench process the tests start imports them; where PYTHONDONTWRITEBYTECODE is set (as on
    this project's machines) none of those processes writes what it compiled, so each one
    compiled them all again (~0.15 s of CPU a process, a few hundred processes a run)."""
    if hasattr(config, "workerinput"):
        return  # an xdist worker: the controller did it
    for folder in ("chrysalis", "daemon", "bench", "tests"):
        compileall.compile_dir(ROOT / folder, quiet=1)
    _cache_rewritten_tests(config)


def _cache_rewritten_tests(config: pytest.Config) -> None:
    """Write pytest's assertion-rewritten pyc of every test module once, in the controller.

    pytest caches a rewritten module only where bytecode may be written, so under
    PYTHONDONTWRITEBYTECODE every xdist worker rewrote and compiled all ~130 test modules
    itself: ~4.6 s of CPU a worker, half its collection. The calls are pytest's own (private:
    if they change, this does nothing and the workers rewrite as before)."""
    try:
        from _pytest.assertion import rewrite

        state = config.stash[rewrite.assertstate_key]
        for fn in sorted((ROOT / "tests").rglob("*.py")):
            if not (
                fn.name.startswith("test_") or fn.name in ("conftest.py", "remote_fixtures.py")
            ):
                continue
            pyc = rewrite.get_cache_dir(fn) / (fn.name[:-3] + rewrite.PYC_TAIL)
            if rewrite._read_pyc(fn, pyc, state.trace) is None and rewrite.try_makedirs(pyc.parent):
                source_hash, code = rewrite._rewrite_test(fn, config)
                rewrite._write_pyc(state, code, source_hash, pyc)
    except (AttributeError, ImportError, KeyError, TypeError):
        return  # another pytest (or --assert=plain): the workers rewrite as before


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark `slow` the S3 (and MinIO) copies of tests outside tests/contracts/, but for
    `S3_END_TO_END`. The default run leaves `slow` out (pyproject's addopts); ``pytest -m
    slow`` runs them, as .ci/run does."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is None or item.nodeid.startswith("tests/contracts/"):
            continue
        kinds = {callspec.params.get("remote_url"), callspec.params.get("kind")}
        if kinds & {"s3", "minio"} and item.nodeid != S3_END_TO_END:
            item.add_marker(pytest.mark.slow)
