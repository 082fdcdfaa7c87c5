"""Red team of round 3, session 6 (issue 30, a fast suite): the product paths it changed.

scrypt is now derived once a process per passphrase (and salt); the `daemon` command starts
with the cyclic collector off; the server mounts its routers' routes itself; `chrysalis.sync`
loads its names on first use. Each test is an attack on one of those.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import subprocess
import sys
import textwrap
import tracemalloc
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest

from chrysalis import Memory
from chrysalis.core import graph_ids
from chrysalis.sync import Sync
from chrysalis.sync.segment import SCRYPT, SyncKeyError, derive_key
from tests.daemon_process import DaemonThread, raw_http

ROOT = Path(__file__).resolve().parent.parent
Opener = Callable[..., Memory]


# ---- 1. scrypt once a process ----------------------------------------------------------------

# One passphrase and texts that look like it, in the forms people get by accident: another
# Unicode normal form (macOS keyboards write NFD), a letter's case, a zero-width space pasted
# in, a character's look-alike (a Cyrillic e, U+0435). None may open what the first one sealed.
PHRASE = "the kettle sings at café midnight"
LOOKALIKES = [
    unicodedata.normalize("NFD", PHRASE),
    PHRASE.replace("kettle", "Kettle"),
    PHRASE.replace("sings", "si\u200bngs"),
    PHRASE.replace("the", "th\u0435", 1),
]


def test_a_cached_derivation_is_the_uncached_one_and_no_lookalike_shares_it() -> None:
    salt = b"\x07" * 16
    keys = {}
    for phrase in [PHRASE, *LOOKALIKES, PHRASE]:  # the last: from the cache
        key = derive_key(phrase, salt)
        expected = hashlib.scrypt(
            phrase.encode(), salt=salt, n=SCRYPT["n"], r=SCRYPT["r"], p=SCRYPT["p"],
            dklen=32, maxmem=64 << 20,
        )  # fmt: skip
        assert key == expected, ascii(phrase)
        keys[phrase] = key
    assert len(set(keys.values())) == 1 + len(LOOKALIKES)
    assert derive_key(PHRASE, b"\x08" * 16) != keys[PHRASE]  # the salt is part of the key
    graph = {graph_ids.graph_key(p) for p in [PHRASE, *LOOKALIKES, PHRASE]}
    assert len(graph) == 1 + len(LOOKALIKES)


def test_a_lookalike_passphrase_opens_nothing_after_the_real_one_was_derived(
    open_memory: Opener, remote_url: Callable[[], str], tmp_path: Path
) -> None:
    """Two memories of one process, one after the other: the first derives the team's
    passphrase (now cached); the second, given a passphrase that only looks the same, is
    refused and receives nothing, as it was before the cache."""
    url = remote_url()
    right = tmp_path / "right"
    right.write_text(PHRASE + "\r\n")  # a key file's line ending is not part of it
    a = open_memory("a")
    a.append_bead("the spare key is under the blue flowerpot", id="k")
    Sync(a, url, key_file=right).push()
    b = open_memory("b")
    for i, phrase in enumerate(LOOKALIKES):
        wrong = tmp_path / f"wrong{i}"
        wrong.write_text(phrase + "\n")
        with pytest.raises(SyncKeyError, match="not the one"):
            Sync(b, url, key_file=wrong).pull()
        assert b.version_vector() == {}, ascii(phrase)
    Sync(b, url, key_file=right).pull()
    assert b.get_bead("k").content == "the spare key is under the blue flowerpot"


def test_a_salt_from_the_bucket_is_not_kept_by_the_cache() -> None:
    """format.json's salt is whatever the bucket's writer put there: a derivation for a huge
    one (its key check then fails) must not pin it in the daemon's memory until it exits."""
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        for i in range(3):  # each a new salt: what a writer rotating format.json gives
            derive_key(PHRASE, bytes([i]) * (4 << 20))
        gc.collect()
        kept, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert kept - before < 1 << 20, kept - before


# ---- 2. the daemon's start -------------------------------------------------------------------


def test_a_failed_daemon_start_in_a_host_process_leaves_its_collector_on(tmp_path: Path) -> None:
    """The CLI run inside another program (click's ``standalone_mode=False``, a test's
    CliRunner): a start that fails must give the host its cyclic collector back; the `daemon`
    command turned it off counting on a failed start to end the process."""
    host = textwrap.dedent(
        """
        import gc, json, os, sys
        from chrysalisd.cli import main
        starts = {
            "bad setting": (["daemon"], {"CHRYSALIS_PUSH_INTERVAL": "often"}),
            "bad data dir": (["daemon", "--data-dir", sys.argv[1]], {}),
            "bad config file": (["daemon", "--config", sys.argv[2]], {}),
            "second memory fails": (["daemon", "--data-dir", sys.argv[4], "--config", sys.argv[5]], {}),
        }
        seen = {}
        for what, (args, env) in starts.items():
            gc.enable()  # each start on its own
            os.environ.update(env)
            try:  # click returns the exit status of ctx.exit, raises what it reports
                seen[what + " failed"] = main(["--socket", sys.argv[3], *args], standalone_mode=False)
            except Exception as exc:
                seen[what + " failed"] = type(exc).__name__
            for key in env:
                del os.environ[key]
            seen[what] = gc.isenabled()
        print(json.dumps(seen))
        """
    )
    bad_toml = tmp_path / "bad.toml"
    bad_toml.write_text("data_dir = [unterminated\n")
    two = tmp_path / "two.toml"  # the default memory opens; the second cannot (no key file)
    (tmp_path / "team-remote").mkdir()
    two.write_text(
        f'[memories.team]\nremote = "{(tmp_path / "team-remote").as_uri()}"\n'
        f'sync_key_file = "{tmp_path / "no-such-key"}"\n'
    )
    out = subprocess.run(
        [sys.executable, "-c", host, str(tmp_path / "no" / "such" / "data"), str(bad_toml),
         str(tmp_path / "d.sock"), str(tmp_path / "data"), str(two)],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
        env={**os.environ, "CHRYSALIS_EMBEDDER": "deterministic", "CHRYSALIS_EXTRACTOR": "none"},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.splitlines()[-1])
    starts = ("bad setting", "bad data dir", "bad config file", "second memory fails")
    assert all(seen[f"{what} failed"] for what in starts), json.dumps(seen)  # each did fail
    assert all(seen[what] for what in starts), seen


def test_a_daemon_on_a_thread_of_its_host_never_turns_its_collector_off(tmp_path: Path) -> None:
    assert gc.isenabled()
    seen: list[bool] = []
    gc.callbacks.append(lambda phase, info: seen.append(gc.isenabled()))
    d = DaemonThread(tmp_path / "data").start()
    try:
        with d.client() as c:
            c.remember("the plumber comes on Friday", session_id="s")
            assert gc.isenabled()
        gc.collect()
    finally:
        d.stop()
        d.close()
        gc.callbacks.pop()
    assert gc.isenabled() and seen and all(seen)


def test_every_route_is_behind_the_guard_now_that_routes_are_mounted_by_hand(
    tmp_path: Path,
) -> None:
    """The routers' routes are put into the app one by one (not `include_router`): each
    route, with and without a memory's prefix, still refuses a browser's page and a body over
    the cap before its handler runs, and a missing route or method still answers as before."""
    from fastapi.routing import APIRoute

    from chrysalisd.app import create_app

    routes = [r for r in create_app(None).routes if isinstance(r, APIRoute)]
    assert len(routes) > 30  # every router's
    daemon = DaemonThread(tmp_path / "data", env={"CHRYSALIS_MAX_BODY_BYTES": "4096"}).start()
    over = b'{"content": "%s"}' % (b"x" * 4096)
    with raw_http(daemon.socket) as http:
        for route in routes:
            path = route.path.replace("{", "").replace("}", "")  # a value for each parameter
            for method in sorted(route.methods):
                wheres = [path]
                if path.startswith("/v1/") and not path.startswith("/v1/memories"):
                    wheres.append("/v1/m/default/" + path.removeprefix("/v1/"))
                for where in wheres:
                    page = http.request(method, where, headers={"Referer": "http://evil.example/"})
                    assert page.status_code == 403, (method, where, page.text)
                    # an import streams, of any size, by design (the guard's docstring)
                    if method in ("POST", "PUT", "PATCH") and path != "/v1/import":
                        big = http.request(method, where, content=over)
                        assert big.status_code == 413, (method, where, big.text)
        assert http.get("/v1/no-such-route").json()["error"]["code"] == "not_found"
        assert http.get("/v1/m/default/status").json()["memory"] == "default"  # routed
        gone = http.request("DELETE", "/v1/status")
        assert (gone.status_code, gone.json()["error"]["code"]) == (405, "method_not_allowed")
    daemon.stop()
    daemon.close()


def test_every_name_of_chrysalis_sync_imports_in_a_fresh_process() -> None:
    """`chrysalis.sync`'s names now load on first use: each one first, in a process that
    imported nothing else of it (an import cycle would show here), then all the others."""
    import chrysalis.sync

    firsts = [f"from chrysalis.sync import {n}" for n in chrysalis.sync.__all__]
    script = (
        "import sys; exec(sys.argv[1]); import chrysalis.sync as s;"
        "assert [getattr(s, n) for n in s.__all__];"
        "from chrysalis.sync import *"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-W", "error", "-c", script, first],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for first in firsts
    ]
    failed = {}
    for first, proc in zip(firsts, procs, strict=True):
        _, err = proc.communicate(timeout=60)
        if proc.returncode:
            failed[first] = err.strip().splitlines()[-1:]
    assert not failed


# ---- 3. the rewritten test modules the controller caches ---------------------------------------


def test_a_cached_rewritten_test_module_is_never_run_for_an_edited_source(
    tmp_path: Path, pytestconfig: pytest.Config
) -> None:
    """conftest writes pytest's rewritten pycs ahead of the workers. One written for a source
    is not read for another that kept its size and mtime (an edit within the same second), nor
    by another pytest (its version is in the name)."""
    from _pytest.assertion import rewrite

    source = tmp_path / "test_edited.py"
    source.write_text("def test_it():\n    assert 6 * 7 == 42\n")
    stat = source.stat()
    pyc = tmp_path / ("test_edited" + rewrite.PYC_TAIL)
    state = pytestconfig.stash[rewrite.assertstate_key]
    source_hash, code = rewrite._rewrite_test(source, pytestconfig)
    assert rewrite._write_pyc(state, code, source_hash, pyc)
    assert rewrite._read_pyc(source, pyc) is not None  # as written: read back
    source.write_text("def test_it():\n    assert 6 * 7 == 41\n")  # same size
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # and the same time
    assert rewrite._read_pyc(source, pyc) is None
    assert f"pytest-{pytest.__version__}" in rewrite.PYC_TAIL
