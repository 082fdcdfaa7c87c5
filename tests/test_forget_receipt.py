"""Forget receipts across two daemons (subprocesses) sharing a folder remote and a fake Zep:
a receipt names the laptop that has not synced yet and Zep while it is down, and turns clean
once both have caught up."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chrysalis.core.errors import Conflict, NotFound
from tests.daemon_process import DaemonProcess, DaemonThread
from tests.eventually import eventually
from tests.fakes.zep_server import FakeZep
from tests.files import files_under, read_if_there

KEY = "zk-receipt-secret-5521"
MARK = "PANGOLIN-RECEIPT-93"


@pytest.fixture
def zep() -> Iterator[FakeZep]:
    with FakeZep(api_key=KEY) as fake:
        yield fake


def start(tmp_path: Path, name: str, zep: FakeZep | None = None) -> DaemonProcess:
    env = {
        "CHRYSALIS_REMOTE": f"file://{tmp_path / 'shared'}",
        "CHRYSALIS_PUSH_INTERVAL": "3600",
        "CHRYSALIS_PULL_INTERVAL": "3600",
        "CHRYSALIS_SCRUB_DELAY": "0.2",
    }
    if zep is not None:
        key_file = tmp_path / "zep.key"
        key_file.write_text(KEY + "\n")
        env |= {
            "CHRYSALIS_ZEP_URL": zep.url,
            "CHRYSALIS_ZEP_API_KEY_FILE": str(key_file),
            "CHRYSALIS_ZEP_PUSH_INTERVAL": "3600",
            "CHRYSALIS_ZEP_PULL_INTERVAL": "3600",
        }
    return DaemonThread(tmp_path / name, env=env).start()


def sync(d: DaemonProcess) -> dict[str, Any]:
    out = d.cli("sync", "--json")
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def receipt(d: DaemonProcess, bead_id: str) -> dict[str, Any]:
    out = d.cli("forget", bead_id, "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def place(r: dict[str, Any], kind: str, name: str = "") -> dict[str, Any]:
    return next(p for p in r["places"] if p["place"] == kind and name in p["name"])


def test_receipt_pending_on_an_offline_laptop_and_zep_down(tmp_path: Path, zep: FakeZep) -> None:
    (tmp_path / "shared").mkdir()
    a, b = start(tmp_path, "a", zep), start(tmp_path, "b")
    try:
        bead = a.once("remember", f"the code word is {MARK}", session_id="chat").id
        a.once("remember", "a bead that stays", session_id="chat")
        for d in (a, b, a):
            assert sync(d)["ok"]
        assert any(m["metadata"]["chrysalis_id"] == bead for m in zep.messages())
        b_id = b.once("status")["replica_id"]
        b.stop()  # laptop b goes offline
        zep.fail(503, times=50)  # and Zep is down
        a.once("forget", bead)
        sync(a)  # the remote takes the forget; Zep refuses
        r = receipt(a, bead)
        assert not r["settled"] and not r["clean"]
        laptop = place(r, "replica", b_id)
        assert laptop["state"] == "pending" and f"pending on {b_id}" in laptop["why"]
        mirror = place(r, "zep")
        assert mirror["state"] == "pending" and "failed" in mirror["why"]
        human = a.cli("forget", bead)
        assert f"pending on {b_id}" in human.stdout and "zep" in human.stdout
        waited = a.cli("forget", bead, "--wait", "1")
        assert waited.returncode == 3, waited.stdout  # still pending: not clean

        zep._failures.clear()  # Zep is back
        b.start()  # b comes back and syncs: it applies the forget, scrubs, and says so
        assert sync(b)["ok"]
        assert sync(a)["ok"]
        r = eventually(lambda: receipt(a, bead), until=lambda r: r["clean"], timeout=30,
                       interval=0.5, what="a clean receipt")  # fmt: skip
        assert r["clean"], r["places"]
        assert place(r, "replica", b_id)["state"] == "gone"
        assert place(r, "zep")["state"] == "gone"
        assert all(m["metadata"]["chrysalis_id"] != bead for m in zep.messages())
        done = a.cli("forget", bead, "--wait", "5")
        assert done.returncode == 0 and "gone everywhere" in done.stdout
        # b's own receipt agrees, and neither data dir holds the text any more
        assert receipt(b, bead)["by"] == r["by"]
        for d in ("a", "b"):
            root = tmp_path / d
            held = [p for p in files_under(root) if MARK.encode() in read_if_there(p)]
            assert held == [], held
    finally:
        a.close()
        b.close()


def test_receipt_errors(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    d = start(tmp_path, "solo")
    try:
        live = d.once("remember", "still here").id
        with d.client() as c:
            with pytest.raises(Conflict, match="not forgotten"):
                c.forget_receipt(live)
            with pytest.raises(NotFound, match="unknown here"):
                c.forget_receipt("never-seen")
        out = d.cli("forget", "never-seen")
        assert out.returncode == 1 and "no bead 'never-seen'" in out.stderr
    finally:
        d.close()
