"""Where replicas meet: a few verbs over an object store, one implementation per URL scheme.

Every implementation passes the contract suite in ``tests/contracts/test_remote.py``. Keys are
``/``-separated relative paths (``ops/a1b2/0000000000000001.seg``); values are bytes. The
contracts:

- ``get(key)`` returns the whole object as last written, or raises `RemoteNotFound`.
- ``put(key, data)`` writes the object whole: a reader sees the old bytes or the new, never
  a mix. Used only for keys one replica owns (its heartbeat) and the ``changed`` marker.
- ``put_if_absent(key, data)`` creates the object only if the key is free, atomically:
  of two racing creators exactly one gets True; a False leaves the existing object as it was.
  Segments, snapshots, blobs and ``format.json`` are written this way, once.
- ``list(prefix)`` returns every key under ``prefix`` (a key prefix, not only a folder),
  sorted, with its size; objects being written appear only once complete.
- ``delete(key)`` removes the object; deleting a missing key is not an error.

Any failure to reach the store raises `RemoteUnavailable` (retried by the caller's schedule).
Each remote counts the requests it makes (`requests`), so a benchmark can see what an idle
replica costs.
"""

from __future__ import annotations

import abc
import collections
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from chrysalis.core.errors import InvalidInput
from chrysalis.core.errors import RemoteError as RemoteError  # re-exported: they live in errors.py
from chrysalis.core.errors import RemoteNotFound as RemoteNotFound
from chrysalis.core.errors import RemoteUnavailable as RemoteUnavailable


@dataclass(frozen=True)
class ObjectInfo:
    key: str
    size: int
    # when the store says it was written (its clock, not ours); not part of equality
    mtime: float | None = field(default=None, compare=False)


class Remote(abc.ABC):
    """An object store holding one shared memory under one prefix."""

    url: str

    def __init__(self, url: str) -> None:
        self.url = url
        self.requests: collections.Counter[str] = collections.Counter()
        self._count_lock = threading.Lock()

    def count(self, verb: str) -> None:
        with self._count_lock:
            self.requests[verb] += 1

    @abc.abstractmethod
    def get(self, key: str) -> bytes: ...

    @abc.abstractmethod
    def put(self, key: str, data: bytes) -> None: ...

    @abc.abstractmethod
    def put_if_absent(self, key: str, data: bytes) -> bool: ...

    @abc.abstractmethod
    def list(self, prefix: str = "") -> list[ObjectInfo]: ...

    @abc.abstractmethod
    def delete(self, key: str) -> None: ...

    def close(self) -> None:  # noqa: B027 - optional: most remotes hold no connections
        """Release connections."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.url}>"


_SCHEMES: dict[str, Callable[[str], Remote]] = {}
_CHECKS: dict[str, Callable[[str], object]] = {}


def register(
    scheme: str, check: Callable[[str], object] | None = None
) -> Callable[[Callable[[str], Remote]], Callable[[str], Remote]]:
    """Make ``open_remote`` open ``scheme://`` URLs with the decorated factory, and
    `check_url` check their form with ``check`` (no I/O; raises `InvalidInput`)."""

    def deco(factory: Callable[[str], Remote]) -> Callable[[str], Remote]:
        _SCHEMES[scheme] = factory
        if check is not None:
            _CHECKS[scheme] = check
        return factory

    return deco


def check_key(key: str) -> str:
    """A relative, normalized ``/`` path: no empty, ``.`` or ``..`` parts, no backslash."""
    parts = key.split("/")
    if not key or "\\" in key or any(p in ("", ".", "..") for p in parts):
        raise InvalidInput(f"invalid remote key {key!r}")
    return key


def check_url(url: str) -> str:
    """``url`` if its form names a remote `open_remote` can open; `InvalidInput` saying
    what is wrong otherwise. Opens nothing and reaches nothing (the settings use it, so a
    bad URL is refused with the setting's name before anything starts)."""
    from chrysalis.remotes import file, s3  # noqa: F401 - they register their schemes

    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        # urlsplit drops tabs and newlines silently: "file:///x\n" would open /x while the
        # settings keep the URL with its newline.
        raise InvalidInput(f"remote URL {url!r}: control characters (a newline?) in it")
    scheme = urlsplit(url).scheme
    if scheme not in _SCHEMES:
        known = ", ".join(f"{s}://" for s in sorted(_SCHEMES))
        raise InvalidInput(f"remote URL {url!r}: unknown scheme {scheme!r} (known: {known})")
    if scheme in _CHECKS:
        _CHECKS[scheme](url)
    return url


def open_remote(url: str) -> Remote:
    """Open the remote named by ``url``: ``file:///path`` or ``s3://bucket/prefix``."""
    check_url(url)
    return _SCHEMES[urlsplit(url).scheme](url)
