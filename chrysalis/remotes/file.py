"""``file:///path``: a folder, local or shared (NFS, SMB, a synced folder).

Writes go to a temporary file in the target's folder, are fsynced, then appear under their
name at once: by rename (``put``) or by hard link, which fails if the name is taken
(``put_if_absent``). The folder itself must exist: a shared folder that is not mounted is
unavailable, not silently recreated on the local disk.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path
from urllib.parse import unquote, urlsplit

from chrysalis.core.errors import InvalidInput, disk_full, out_of_space
from chrysalis.remotes import (
    ObjectInfo,
    Remote,
    RemoteError,
    RemoteNotFound,
    RemoteUnavailable,
    check_key,
    register,
)
from chrysalis.store import atomic

TMP = atomic.TMP_PREFIX


def folder_of(url: str) -> Path:
    """The folder a ``file:///absolute/path`` URL names; `InvalidInput` for another form."""
    parts = urlsplit(url)
    path = unquote(parts.path)
    if (
        not url.startswith("file://")
        or parts.netloc not in ("", "localhost")
        or not path.startswith("/")
        or path.rstrip("/") == ""
    ):
        raise InvalidInput(f"remote URL {url!r}: expected file:///absolute/path")
    return Path(path)


def missing_folder(url: str, root: Path) -> str:
    """What to say when the remote's folder is not there. We never create it: a share that
    is not mounted would then become a local folder, and sync would go nowhere unnoticed."""
    return (
        f"{url}: the folder {root} does not exist; make it with `mkdir -p {root}` "
        "(or mount the share it should be); chrysalis does not create it, so an unmounted "
        "share is not mistaken for an empty folder"
    )


class FileRemote(Remote):
    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.root = folder_of(url)

    def _path(self, key: str) -> Path:
        return self.root / check_key(key)

    def _check_root(self) -> None:
        if not self.root.is_dir():
            raise RemoteUnavailable(missing_folder(self.url, self.root))

    def get(self, key: str) -> bytes:
        self.count("get")
        path = self._path(key)
        try:
            return path.read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            self._check_root()
            raise RemoteNotFound(f"{self.url}: no object {key}") from None
        except OSError as exc:
            raise RemoteUnavailable(f"{self.url}: cannot read {key}: {exc}") from exc

    def _write_tmp(self, path: Path, data: bytes) -> Path:
        self._check_root()
        path.parent.mkdir(parents=True, exist_ok=True)
        return atomic.write_tmp(path, data)

    def put(self, key: str, data: bytes) -> None:
        self.count("put")
        path = self._path(key)
        try:
            tmp = self._write_tmp(path, data)
            os.replace(tmp, path)
            atomic.sync_dir(path.parent)
        except RemoteError:
            raise
        except OSError as exc:
            if out_of_space(exc):  # the remote's disk: sync pauses until it has room
                raise disk_full(self.root) from exc
            raise RemoteUnavailable(f"{self.url}: cannot write {key}: {exc}") from exc

    def put_if_absent(self, key: str, data: bytes) -> bool:
        self.count("put")
        path = self._path(key)
        try:
            if path.exists():
                return False
            tmp = self._write_tmp(path, data)
            try:
                os.link(tmp, path)  # atomic, and fails if the name is taken
            except FileExistsError:
                return False
            except OSError as exc:
                if exc.errno in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP):
                    raise RemoteError(
                        f"{self.url}: this folder does not support hard links, "
                        "which create-only writes need"
                    ) from exc
                raise
            finally:
                tmp.unlink(missing_ok=True)
            atomic.sync_dir(path.parent)
            return True
        except RemoteError:
            raise
        except OSError as exc:
            if out_of_space(exc):  # the remote's disk: sync pauses until it has room
                raise disk_full(self.root) from exc
            raise RemoteUnavailable(f"{self.url}: cannot write {key}: {exc}") from exc

    def list(self, prefix: str = "") -> list[ObjectInfo]:
        self.count("list")
        self._check_root()
        folder, _, _ = prefix.rpartition("/")
        base = self.root / check_key(folder) if folder else self.root
        out = []
        try:
            for dirpath, _dirs, files in os.walk(base, onerror=_raise):
                for name in files:
                    if name.startswith(TMP):
                        continue
                    full = os.path.join(dirpath, name)
                    key = os.path.relpath(full, self.root).replace(os.sep, "/")
                    if key.startswith(prefix):
                        with contextlib.suppress(FileNotFoundError):
                            st = os.stat(full)
                            out.append(ObjectInfo(key, st.st_size, st.st_mtime))
        except OSError as exc:
            raise RemoteUnavailable(f"{self.url}: cannot list {prefix!r}: {exc}") from exc
        return sorted(out, key=lambda o: o.key)

    def delete(self, key: str) -> None:
        self.count("delete")
        path = self._path(key)
        self._check_root()
        try:
            path.unlink(missing_ok=True)
        except (IsADirectoryError, NotADirectoryError):
            return  # a folder or a path through an object: no object by that key
        except OSError as exc:
            raise RemoteUnavailable(f"{self.url}: cannot delete {key}: {exc}") from exc


def _raise(exc: OSError) -> None:
    if not isinstance(exc, FileNotFoundError):  # a folder that is not there holds nothing
        raise exc


register("file", check=folder_of)(FileRemote)
