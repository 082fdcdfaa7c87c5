"""An existing install upgrades in place: a data dir written by main before step 13 (several
memories) is served as the default memory, at the same routes, with the same state."""

from __future__ import annotations

import json
import tarfile
import time
from pathlib import Path
from typing import Any

import pytest

from chrysalis.client import Client
from chrysalis.core.errors import NotFound

from .daemon_process import DaemonThread

FIXTURE = Path(__file__).parent / "fixtures" / "datadir-round2.tar.gz"
DIGEST = "43964a3ae5b9011dce3b5afa0e2f9844"  # printed by make_datadir_round2.py when it was made
# The entities rules/1 extracted there, under the unkeyed ids of round 2 (name -> id, evidence).
LEGACY = {
    "Lisbon": ("n-7ae500ca7b7a77e0a5ed879b", "b1"),
    "Tuesdays": ("n-985ce299dc7bc241ce58c314", "b2"),
}


def extracted(c: Client) -> dict[str, dict[str, Any]]:
    """The nodes an extractor made, by id, from an export."""
    lines = [json.loads(line) for line in c.export().splitlines()[1:]]
    return {
        x["item"]["id"]: x["item"]
        for x in lines
        if x["kind"] == "node" and x["item"]["derived_by"] is not None
    }


def test_a_data_dir_from_before_serves_as_the_default_memory(tmp_path: Path) -> None:
    with tarfile.open(FIXTURE) as tar:
        tar.extractall(tmp_path, filter="data")
    data = tmp_path / "data"
    before = sorted(p.relative_to(data).as_posix() for p in data.rglob("*") if p.is_file())
    d = DaemonThread(data).start()
    try:
        with d.client() as c:
            status = c.status()
            assert status["memory"] == "default"
            # Unpacked elsewhere, the dir is a copy: it gets a replica id of its own (datadir's
            # fingerprint), and holds the same state, but for the extracted entities: the
            # knowledge worker moves them to keyed ids (issue 28 C9), in the background (so the
            # first status may come before or after the move).
            assert status["state_digest"] in (DIGEST, c.status()["state_digest"])
            deadline = time.monotonic() + 20
            while (derived := extracted(c)).keys() & {v[0] for v in LEGACY.values()}:
                assert time.monotonic() < deadline, f"not moved to keyed ids: {derived}"
                time.sleep(0.1)
            assert sorted((n["name"], n["evidence"]) for n in derived.values()) == [
                (name, [evidence]) for name, (_, evidence) in sorted(LEGACY.items())
            ]
            assert all(i.startswith("n-") and len(i) == 26 for i in derived)
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
    # Served in place: every file stays, but the indexes' segments, which the scrub after
    # the entities' move rewrites (their old names are erased), are new files.
    kept = {f for f in before if not f.startswith("index/")}
    assert kept <= after and not (data / "memories").exists()
    assert any(f.startswith("index/keyword.tantivy/") for f in after)
