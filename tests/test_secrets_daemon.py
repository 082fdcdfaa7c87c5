"""Secrets never stored, end to end: a daemon in a subprocess on a real socket with a
``file://`` remote takes a bead holding an AWS key, a GitHub token, a private key block and a
password in a URL (through ``chrysalis remember``, the API, ``import`` and ``ingest``), syncs,
stops; no file of the data dir or the remote (segments inflated) and no line of its log holds
any of them."""

from __future__ import annotations

import asyncio
import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chrysalis import Memory
from chrysalis.client import Routes
from chrysalis.core.errors import SecretRefused
from chrysalisd.exchange import export_lines
from tests.daemon_process import DaemonProcess, DaemonThread
from tests.eventually import eventually
from tests.test_secrets import ALL_FOUR, SECRETS

QUIET = {  # sync is driven by `chrysalis sync`; the schedule stays out of the way
    "CHRYSALIS_PUSH_INTERVAL": "3600",
    "CHRYSALIS_PULL_INTERVAL": "3600",
    "CHRYSALIS_LOG_LEVEL": "debug",  # the most the daemon ever says
}
KINDS = ("aws-access-key", "github-token", "private-key", "password")


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[DaemonProcess]:
    d = DaemonThread(tmp_path / "laptop", env=QUIET)
    (tmp_path / "shared").mkdir()  # a file:// remote's folder must exist (a mount, say)
    d.start("--remote", f"file://{tmp_path / 'shared'}")
    yield d
    d.close()


def _readable(path: Path) -> bytes:
    """A file's bytes, and for a compressed remote object (``CHRS``, flag bit 0) its body
    inflated too."""
    data = path.read_bytes()
    if data[:4] == b"CHRS" and data[5] & 1 and not data[5] & 2:
        data += zlib.decompress(data[8:-16])
    return data


def _everything(*roots: Path) -> bytes:
    return b"\n".join(
        _readable(p) for root in roots for p in sorted(root.rglob("*")) if p.is_file()
    )


def _wait_indexed(d: DaemonProcess, timeout: float = 20.0) -> None:
    eventually(lambda: d.once("status")["index"]["behind"], until=lambda b: not any(b.values()),
               timeout=timeout, what="the indexes to catch up")  # fmt: skip


def test_no_secret_reaches_the_data_dir_the_remote_or_the_log(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    out = daemon.cli("remember", ALL_FOUR, "--session", "ops")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("remembered ")
    for kind in KINDS:
        assert f"1 {kind} in content" in out.stderr
    assert out.stderr.startswith("redacted ")

    # the API names what it redacted in a header, per bead of the batch; a large bead too
    big = "filler line\n" * 20_000 + ALL_FOUR  # over the blob threshold
    with daemon.client() as c:
        bead, redacted = c.send(Routes.remember_noting({"content": big, "tags": ["big"]}))
        assert sorted(f["kind"] for f in redacted) == sorted(KINDS)
        assert all(f["bead"] == 0 and f["field"] == "content" for f in redacted)
        for f in redacted:
            assert bead["content"][f["start"] : f["end"]] == f"[REDACTED:{f['kind']}]"
        stored = c.get_bead(bead["id"])
        assert stored.content == bead["content"] and "[REDACTED:password]" in stored.content

    # import: an export made where the policy was off
    leaky = Memory.open(tmp_path / "leaky", sync=False, secrets="off")
    leaky.append_bead(ALL_FOUR, id="imported-1")
    export = tmp_path / "export.jsonl"
    export.write_bytes(b"".join(export_lines(leaky)))
    leaky.close()
    out = daemon.cli("import", str(export), "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["redacted"] == 4

    # ingest: a file holding them
    doc = tmp_path / "docs" / "setup.md"
    doc.parent.mkdir()
    doc.write_text(f"# Setup\n\n{ALL_FOUR}\n")
    out = daemon.cli("ingest", str(doc), "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["redacted"] == 4

    out = daemon.cli("sync", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    _wait_indexed(daemon)
    assert daemon.stop() == 0

    shared = tmp_path / "shared"
    remote = _everything(shared)
    assert b"[REDACTED:aws-access-key]" in remote  # the beads did reach the remote, redacted
    assert b"[REDACTED:aws-access-key]" in _everything(daemon.data_dir)
    log = daemon.log.read_bytes()
    assert log  # it did log (debug)
    for where, data in (("data dir", _everything(daemon.data_dir)), ("remote", remote)):
        for secret in SECRETS:
            assert secret.encode() not in data, f"{secret[:4]}... in the {where}"
    for secret in SECRETS:
        assert secret.encode() not in log, f"{secret[:4]}... in the log"


def test_refuse_answers_422_and_stores_nothing(tmp_path: Path) -> None:
    d = DaemonThread(tmp_path / "strict", env={**QUIET, "CHRYSALIS_SECRETS": "refuse"})
    try:
        d.start()
        with d.client() as c:
            with pytest.raises(SecretRefused) as err:
                c.remember(ALL_FOUR)
            assert c.last_beads(10) == []
        assert "1 aws-access-key in content" in err.value.message
        out = d.cli("remember", ALL_FOUR)
        assert out.returncode != 0 and "refused" in out.stderr
        assert not any(s in err.value.message + out.stderr for s in SECRETS)
        assert d.stop() == 0
        log = d.log.read_bytes()
        assert not any(s.encode() in log for s in SECRETS)
    finally:
        d.close()


def test_mcp_remember_says_what_it_redacted(daemon: DaemonProcess) -> None:
    from tests.test_mcp import payload, session_run

    async def steps(session: Any) -> Any:
        return payload(await session.call_tool("remember", {"content": ALL_FOUR}))

    out = asyncio.run(session_run(daemon.socket, steps))
    assert sorted(f["kind"] for f in out["redacted"]) == sorted(KINDS)
    assert all(set(f) == {"kind", "field", "start", "end"} for f in out["redacted"])
    stored = daemon.once("get_bead", out["id"]).content
    assert not any(s in stored for s in SECRETS) and "[REDACTED:github-token]" in stored
