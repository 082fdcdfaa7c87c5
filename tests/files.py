"""Reading a live data dir's files from a test while its daemon or memory works in it: a
compaction's temporary copy, a renamed segment or a folder can go between listing and reading,
and what is gone holds nothing."""

from __future__ import annotations

import os
from pathlib import Path


def files_under(root: Path) -> list[Path]:
    """Every file under ``root`` as listed now; a folder that went while it was walked (a
    compaction's ``lmdb/compacting``) is skipped (`os.walk` ignores a folder it cannot list,
    where `Path.rglob` raises)."""
    return [Path(top, name) for top, _, names in os.walk(root) for name in names]


def read_if_there(path: Path) -> bytes:
    """``path``'s bytes, or none if it went between listing and reading."""
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return b""
