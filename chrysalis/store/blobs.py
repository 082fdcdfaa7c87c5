"""Large bead content beside LMDB, content-addressed: ``blobs/<sha[:2]>/<sha>``."""

from __future__ import annotations

import contextlib
import hashlib
import re
from pathlib import Path

from chrysalis.core.errors import NotFound, StoreError, disk_full, out_of_space
from chrysalis.store.atomic import atomic_write

_SHA256 = re.compile(r"[0-9a-f]{64}")


class BlobStore:
    """Content-addressed files, written atomically and durably (`atomic.atomic_write`).

    A blob's name is the SHA-256 of its bytes; `get` checks it, so a damaged file is an error,
    never wrong content.
    """

    def __init__(self, root: Path, *, disk: Path | None = None) -> None:
        self.root = root
        self.disk = disk or root  # what a disk-full error names (the data dir)
        root.mkdir(parents=True, exist_ok=True)

    def path(self, sha256: str) -> Path:
        """Where the blob named ``sha256`` lives; `NotFound` for a name that is not a SHA-256
        (an empty one would name the blob folder itself)."""
        if not _SHA256.fullmatch(sha256):
            raise NotFound(f"no blob {sha256[:80]!r}: blob names are 64 hex digits")
        return self.root / sha256[:2] / sha256

    def put(self, data: bytes) -> str:
        """Store ``data``; returns its SHA-256 (a no-op when it is here already). Raises
        `InsufficientStorage` naming the disk when it is full (no partial file is left)."""
        sha = hashlib.sha256(data).hexdigest()
        final = self.path(sha)
        if final.exists():
            return sha
        try:
            final.parent.mkdir(exist_ok=True)
            atomic_write(final, data)
        except OSError as exc:
            if out_of_space(exc):
                raise disk_full(self.disk) from exc
            raise
        return sha

    def get(self, sha256: str) -> bytes:
        """The blob's bytes; `NotFound` when it is not here, `StoreError` when damaged."""
        try:
            data = self.path(sha256).read_bytes()
        except FileNotFoundError:
            raise NotFound(
                f"blob {sha256} is not here (not yet fetched from the remote?)"
            ) from None
        if hashlib.sha256(data).hexdigest() != sha256:
            raise StoreError(f"blob {sha256} is damaged: its content does not match its name")
        return data

    def has(self, sha256: str) -> bool:
        return bool(_SHA256.fullmatch(sha256)) and self.path(sha256).is_file()

    def delete(self, sha256: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path(sha256).unlink()
