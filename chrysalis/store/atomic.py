"""Durable file writes, written once: tmp in the target's folder → fsync → rename or link →
fsync of the folder (without the last step a crash may keep the old name or none at all).

Used by the blob store, the file remote and the index files.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

TMP_PREFIX = ".tmp-"  # readers of a folder skip names that start with it


def write_tmp(path: Path, data: bytes, *, mode: int = 0o600) -> Path:
    """Write ``data`` to a new temporary file beside ``path`` and fsync it; returns its path.

    The caller publishes it (`publish` / `publish_new`) or unlinks it.
    """
    tmp = path.with_name(f"{TMP_PREFIX}{secrets.token_hex(6)}-{path.name}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    return tmp


def sync_path(path: Path) -> None:
    """fsync a folder, so the names created or renamed in it survive a crash, or a file that
    someone else wrote (LMDB's copy), so renaming it over another is safe."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


sync_dir = sync_path


def atomic_write(path: Path, data: bytes, *, mode: int = 0o600) -> None:
    """Replace ``path`` with ``data`` atomically and durably: a reader sees the old bytes or
    the new, never a mix, and after a crash the new ones once this returned."""
    tmp = write_tmp(path, data, mode=mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    sync_dir(path.parent)


def create_new(path: Path, data: bytes, *, mode: int = 0o600) -> bool:
    """Create ``path`` with ``data`` only if no file has that name (a hard link fails when
    the name is taken); True if this call created it. Raises the `OSError` of a folder that
    cannot hard-link."""
    tmp = write_tmp(path, data, mode=mode)
    try:
        os.link(tmp, path)
    except FileExistsError:
        return False
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    sync_dir(path.parent)
    return True
