"""Reading a live data dir's files from a test while its daemon or memory works in it."""

from __future__ import annotations

from pathlib import Path


def read_if_there(path: Path) -> bytes:
    """``path``'s bytes, or none if it went between listing and reading (a compaction's
    temporary copy, a renamed segment): a file that is gone holds nothing."""
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return b""
