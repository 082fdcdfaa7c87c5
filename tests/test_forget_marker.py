"""The marker test: a small and a large bead, remembered on laptop A and synced to B, then
forgotten on A. After `chrysalis sync` on every laptop, no file of either data dir and no
object of the remote (decrypted and decompressed) holds their text, and the laptops agree.

Run for a folder and an S3 remote (moto on 127.0.0.1), each with and without a sync key;
the daemons are subprocesses on real Unix sockets."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest

from chrysalis.sync.segment import Kind, decode, derive_key, read_key_file
from tests.daemon_process import DaemonProcess, DaemonThread
from tests.eventually import eventually
from tests.files import files_under, read_if_there
from tests.remote_fixtures import S3Server

# The name is for the extractor: its entity node and the session's summary hold it too.
SMALL = "a small bead about MARMOSET-SMALL-7731 and Zebracorn Quokkaplex, nothing else"
LARGE = "a large bead about MARMOSET-LARGE-4412 " + "filler words here " * 5000  # a blob
MARKERS = (b"MARMOSET-SMALL-7731", b"MARMOSET-LARGE-4412", b"uokkaplex")
SECRET = "correct horse battery staple for the team bucket"


class Remote:
    """One remote for the test: its URL and every object in it, as stored and as decoded."""

    def __init__(self, kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
        self.kind = kind
        if kind == "file":
            self.root = tmp_path / "remote"
            self.root.mkdir()
            self.url = f"file://{self.root}"
        else:
            self.s3: S3Server = request.getfixturevalue("s3_server")
            self.bucket = self.s3.new_bucket()
            self.url = self.s3.url(self.bucket)

    def objects(self) -> dict[str, bytes]:
        if self.kind == "file":
            return {
                str(p.relative_to(self.root)): p.read_bytes()
                for p in self.root.rglob("*")
                if p.is_file()
            }
        prefix = "team/"
        return {k[len(prefix) :]: v for k, v in self.s3.objects(self.bucket).items()}

    def holding(self, key_file: Path | None) -> list[str]:
        """Objects holding a marker, raw or decoded."""
        objects = self.objects()
        data_key = None
        if key_file is not None:
            salt = json.loads(objects["format.json"])["encryption"]["salt"]
            data_key = derive_key(read_key_file(key_file), bytes.fromhex(salt))
        kinds = {"ops/": Kind.SEGMENT, "snapshots/": Kind.SNAPSHOT, "blobs/": Kind.BLOB}
        held = []
        for name, raw in objects.items():
            plain = raw
            kind = next((k for p, k in kinds.items() if name.startswith(p)), None)
            if name.endswith(".part"):  # a snapshot's part
                kind = Kind.SNAPSHOT_PART
            if kind is not None:
                payload = decode(raw, kind=kind, object_key=name, key=data_key)
                plain = payload if isinstance(payload, bytes) else msgpack.packb(payload)
            if any(m in raw or m in plain for m in MARKERS):
                held.append(name)
        return sorted(held)


def holding_files(root: Path) -> list[str]:
    return sorted(
        str(p.relative_to(root))
        for p in files_under(root)
        if p.is_file() and any(m in read_if_there(p) for m in MARKERS)
    )


@pytest.fixture
def laptops(tmp_path: Path) -> Iterator[list[DaemonProcess]]:
    started: list[DaemonProcess] = []
    yield started
    for d in started:
        d.close()


def sync(d: DaemonProcess) -> dict[str, Any]:
    out = d.cli("sync", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    return json.loads(out.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("keyed", [False, True], ids=["plain", "keyed"])
@pytest.mark.parametrize("kind", ["file", "s3"])
def test_forgotten_text_leaves_every_data_dir_and_the_remote(
    kind: str,
    keyed: bool,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    laptops: list[DaemonProcess],
) -> None:
    remote = Remote(kind, tmp_path, request)
    env = {
        "CHRYSALIS_REMOTE": remote.url,
        "CHRYSALIS_PUSH_INTERVAL": "3600",
        "CHRYSALIS_PULL_INTERVAL": "3600",
        "CHRYSALIS_SNAPSHOT_INTERVAL": "3600",
        "CHRYSALIS_SCRUB_DELAY": "0.2",
        "CHRYSALIS_BLOB_GRACE": "1",  # the blob was put seconds before the forget
        "CHRYSALIS_EXTRACTOR": "rules",
        "CHRYSALIS_SUMMARY_AFTER_S": "0",
    }
    key_file = None
    if keyed:
        key_file = tmp_path / "sync.key"
        key_file.write_text(SECRET + "\n")
        env["CHRYSALIS_SYNC_KEY_FILE"] = str(key_file)
    a = DaemonThread(tmp_path / "a", env=env)
    b = DaemonThread(tmp_path / "b", env=env)
    laptops += [a, b]
    a.start()
    b.start()
    small = a.once("remember", SMALL, session_id="chat").id
    large = a.once("remember", LARGE, session_id="chat").id
    kept = a.once("remember", "a bead that stays", session_id="chat").id
    eventually(lambda: a.once("status")["knowledge"],  # an entity, a summary go out too
               until=lambda k: k["summaries"]["written"] >= 1, timeout=30, interval=0.1,
               what="a summary to be written")  # fmt: skip
    for d in (a, b, a):
        sync(d)
    assert b.once("get_bead", large).content == LARGE
    out = b.cli("sync", "--snapshot", "--json")  # a snapshot holding both, as compaction makes
    assert out.returncode == 0, out.stderr
    assert remote.holding(key_file), "the remote should hold the markers before the forget"

    a.once("forget", small)
    a.once("forget", large)
    for d in (a, b, a, b):
        sync(d)

    def holding() -> dict[str, list[Any]]:
        left = {
            "a": holding_files(tmp_path / "a"),
            "b": holding_files(tmp_path / "b"),
            "remote": remote.holding(key_file),
        }
        if any(left.values()):
            for d in (a, b):  # the next look comes after another round of sync
                sync(d)
        return left

    left = eventually(holding, until=lambda left: not any(left.values()), timeout=30,
                      interval=0.5, what="no place to hold the forgotten text")  # fmt: skip
    assert left == {"a": [], "b": [], "remote": []}
    digests = {d.once("status")["state_digest"] for d in (a, b)}
    assert len(digests) == 1
    assert b.once("get_bead", kept).content == "a bead that stays"
    for bead in (small, large):
        out = a.cli("forget", bead, "--json")
        assert out.returncode == 0, out.stderr
        receipt = json.loads(out.stdout)
        assert receipt["clean"], receipt["places"]
