"""The tests' walk of a live data dir (`tests.files`): a folder that goes mid-walk is skipped,
as a compaction's temporary copy does under the scrub tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.files import files_under, read_if_there


def test_a_folder_gone_between_listing_and_walking_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "lmdb" / "compacting").mkdir(parents=True)
    (tmp_path / "lmdb" / "data.mdb").write_bytes(b"kept")
    (tmp_path / "lmdb" / "compacting" / "data.mdb").write_bytes(b"copy")
    real = os.scandir

    def vanishing(path: object = ".") -> object:
        if str(path).endswith("compacting"):  # listed by its parent, gone when walked
            raise FileNotFoundError(2, "No such file or directory", str(path))
        return real(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", vanishing)
    with pytest.raises(FileNotFoundError):
        list(tmp_path.rglob("*"))  # what the scrub tests walked with, and raced on
    assert files_under(tmp_path) == [tmp_path / "lmdb" / "data.mdb"]
    assert read_if_there(tmp_path / "lmdb" / "compacting" / "gone") == b""
