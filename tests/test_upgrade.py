"""An existing install upgrades in place: a data dir written by main before step 13 (several
memories) is served as the default memory, at the same routes, with the same state."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from chrysalis.errors import NotFound

from .daemon_process import DaemonProcess

FIXTURE = Path(__file__).parent / "fixtures" / "datadir-round2.tar.gz"
DIGEST = "43964a3ae5b9011dce3b5afa0e2f9844"  # printed by make_datadir_round2.py when it was made


def test_a_data_dir_from_before_serves_as_the_default_memory(tmp_path: Path) -> None:
    with tarfile.open(FIXTURE) as tar:
        tar.extractall(tmp_path, filter="data")
    data = tmp_path / "data"
    before = sorted(p.relative_to(data).as_posix() for p in data.rglob("*") if p.is_file())
    d = DaemonProcess(data).start()
    try:
        with d.client() as c:
            status = c.status()
            assert status["memory"] == "default"
            # Unpacked elsewhere, the dir is a copy: it gets a replica id of its own (datadir's
            # fingerprint), and holds the same state.
            assert status["state_digest"] == DIGEST
            assert c.get_bead("b1").content == "Ada moved to Lisbon in March"
            with pytest.raises(NotFound):
                c.get_bead("b3")  # forgotten before the upgrade, still forgotten
            assert [n.node.id for n in c.neighbors("ada")] == ["lisbon"]
            assert c.get_persona().name == "Helper"
            assert [m["name"] for m in c.memories()] == ["default"]
        with d.client(memory="default") as same:  # the prefixed form reaches the same memory
            assert same.get_bead("b2").content == "the deploy pipeline runs on Tuesdays"
    finally:
        assert d.stop() == 0
        d.close()
    after = {p.relative_to(data).as_posix() for p in data.rglob("*") if p.is_file()}
    assert set(before) <= after and not (data / "memories").exists()
