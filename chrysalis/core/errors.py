"""The one tree of Chrysalis errors.

Every error Chrysalis raises on purpose is a class here, with its ``code`` (the wire name in
``{"error": {"code": ...}}``) and its ``status`` (the HTTP status the daemon answers with).
Foreign exceptions (pydantic, LMDB, boto3, httpx, Zep) are mapped once, at the boundary where
they occur, with ``raise Mapped(msg) from exc``::

    ChrysalisError                                                        (HTTP 500)
    ├── InvalidInput          bad input: nothing was written              (HTTP 400)
    │   ├── PayloadTooLarge   a field or body over its size limit         (HTTP 413)
    │   ├── MethodNotAllowed  the route exists, the method does not       (HTTP 405)
    │   └── SecretRefused     the text holds a credential and the secrets
    │                         policy is "refuse"; nothing was written     (HTTP 422)
    ├── Forbidden             refused: a browser origin, another user     (HTTP 403)
    ├── NotFound              no such bead, node, edge, skill, blob       (HTTP 404)
    ├── Conflict              the request contradicts stored state        (HTTP 409)
    │   ├── DotConflict       same (replica, seq) with different content:
    │   │                     a cloned or restored data dir               (HTTP 409)
    │   ├── DataDirLocked     another process has the data dir open       (HTTP 409)
    │   ├── SelectionChanged  a forget's match is not the count previewed (HTTP 409)
    │   ├── CloneDetected     another copy of this data dir pushes as us  (HTTP 409)
    │   ├── Decommissioned    this replica was retired; push stops        (HTTP 409)
    │   ├── MemoryDropped     the memory was dropped from its remote by
    │                         one of its laptops; this copy is erased     (HTTP 409)
    │   ├── SyncKeyError      the sync key is missing or not the remote's (HTTP 409)
    │   └── FormatTampered    format.json missing or altered on a remote
    │                         that holds data: repair, never recreate     (HTTP 409)
    ├── Unavailable           a service we need cannot answer now         (HTTP 503)
    │   ├── EmbedderUnavailable  the embedding service cannot answer      (HTTP 503)
    │   ├── ExtractorUnavailable the extraction service cannot answer     (HTTP 503)
    │   ├── NotReady          the daemon is starting or stopping          (HTTP 503)
    │   ├── ClosedError       the Memory was closed                       (HTTP 503)
    │   ├── DaemonNotRunning  (client) nothing answers on the socket      (HTTP 503)
    │   ├── StoreError        LMDB or the blob store failed underneath    (HTTP 503)
    │   └── InsufficientStorage  the disk holding the data dir is (nearly)
    │                         full: writes refused, reads go on           (HTTP 507)
    ├── RemoteError           the sync remote refused what was asked      (HTTP 502)
    │   ├── RemoteUnavailable the remote cannot be reached now            (HTTP 503)
    │   ├── RemoteNotFound    no object under that key                    (HTTP 502)
    │   └── SegmentError      an object that cannot be trusted            (HTTP 502)
    ├── MirrorError           the mirror (Zep) refused or failed          (HTTP 502)
    └── InternalError         the daemon failed; its log says why         (HTTP 500)
        └── DemoFailed        the demo's replicas did not converge (a bug)

`error_class` finds a class by its code from a static table (`BY_CODE`), so a client that
imports only this module still rebuilds every error the daemon sends. `tests/test_errors.py`
checks that this drawing, the table and the classes agree.

A full disk is one error wherever a write meets it (LMDB, a blob, the keyword index, the
vector index, a folder remote, a settings file): `out_of_space` recognises the failure, and
`disk_full` makes the `InsufficientStorage` that names the disk.
"""

from __future__ import annotations

import errno
import os
from typing import Any


class ChrysalisError(Exception):
    """Base of every error Chrysalis raises on purpose."""

    code = "error"
    status = 500

    def __init__(self, message: str, *, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class InvalidInput(ChrysalisError, ValueError):
    """The input is malformed; nothing was changed."""

    code = "invalid"
    status = 400


class PayloadTooLarge(InvalidInput):
    """A field or body is over its size limit; nothing was changed."""

    code = "too_large"
    status = 413


class MethodNotAllowed(InvalidInput):
    """The route exists but not with this HTTP method."""

    code = "method_not_allowed"
    status = 405


class SecretRefused(InvalidInput):
    """The text holds a credential (an API key, a token, a private key, a password in a URL)
    and the secrets policy is ``refuse``; nothing was changed. The message and ``details``
    name the kinds and fields, never the secret."""

    code = "secret_refused"
    status = 422


class Forbidden(ChrysalisError, PermissionError):
    """Refused on principle: a request from a browser page, or a peer of another user."""

    code = "forbidden"
    status = 403


class NotFound(ChrysalisError, LookupError):
    """The named item does not exist (or was forgotten)."""

    code = "not_found"
    status = 404


class Conflict(ChrysalisError):
    """The request contradicts stored state; nothing was changed."""

    code = "conflict"
    status = 409


class DotConflict(Conflict):
    """An op arrived whose dot we hold with different content.

    Two replicas issued the same ``(replica, seq)``: a data dir was cloned or restored from a
    backup and kept writing. Nothing was applied; the copy must start a new generation.
    """

    code = "dot_conflict"


class DataDirLocked(Conflict):
    """Another process (or another Memory in this process) has the data dir open."""

    code = "locked"


class SelectionChanged(Conflict):
    """A forget by selector matched another number of beads than the preview showed (one
    arrived or went since); nothing was forgotten."""

    code = "selection_changed"


class CloneDetected(Conflict):
    """Another copy of this data dir writes under our replica id; push stops."""

    code = "clone_detected"


class Decommissioned(Conflict):
    """This replica was retired by a decommission; push stops."""

    code = "decommissioned"


class MemoryDropped(Conflict):
    """One of the memory's laptops dropped it: the remote holds its drop marker. Sync stops
    for good (nothing is pushed back) and this copy is to be erased."""

    code = "memory_dropped"


class SyncKeyError(Conflict):
    """The sync key is missing, unreadable, or not the one the remote was made with."""

    code = "sync_key"


class FormatTampered(Conflict):
    """The remote's ``format.json`` is missing or altered while the remote holds data; it is
    never recreated silently (``chrysalis sync --repair-format`` rewrites it)."""

    code = "format_tampered"


class Unavailable(ChrysalisError):
    """Something we need cannot answer now; retrying later may work."""

    code = "unavailable"
    status = 503


class EmbedderUnavailable(Unavailable):
    """The embedder cannot answer (Ollama down, model not pulled, timeout); says what to do."""

    code = "embedder_unavailable"


class ExtractorUnavailable(Unavailable):
    """The extractor cannot answer (Ollama down, model not pulled, timeout, a reply that is not
    the JSON asked for); the knowledge worker backs off and retries."""

    code = "extractor_unavailable"


class NotReady(Unavailable):
    """The daemon is starting or shutting down; retry shortly."""

    code = "not_ready"


class ClosedError(Unavailable):
    """The Memory was closed."""

    code = "closed"


class DaemonNotRunning(Unavailable, ConnectionError):
    """Nothing answers on the daemon's socket (raised by the client)."""

    code = "no_daemon"


class StoreError(Unavailable):
    """LMDB or the blob store failed underneath us."""

    code = "store_error"


class InsufficientStorage(Unavailable):
    """The disk holding the data dir is below its free-space floor (or full): the write was
    refused before it was acknowledged; reads go on, and writes resume when space returns."""

    code = "disk_full"
    status = 507


class RemoteError(ChrysalisError):
    """A remote refused or could not do what was asked."""

    code = "remote_error"
    status = 502


class RemoteUnavailable(RemoteError):
    """The remote cannot be reached now (network, permissions, a folder not mounted)."""

    code = "remote_unavailable"
    status = 503


class RemoteNotFound(RemoteError, LookupError):
    """No object under that key."""

    code = "remote_not_found"


class SegmentError(RemoteError):
    """An object from the remote that cannot be trusted: corrupt, forged or under another key."""

    code = "bad_segment"


class MirrorError(ChrysalisError):
    """The mirror refused or could not do what was asked."""

    code = "mirror_error"
    status = 502


class InternalError(ChrysalisError):
    """The daemon failed while serving the request; its log has the traceback."""

    code = "internal"
    status = 500


class DemoFailed(InternalError):
    """The demo's replicas did not converge (a bug: please report it)."""

    code = "demo_failed"


BY_CODE: dict[str, type[ChrysalisError]] = {
    cls.code: cls
    for cls in (
        ChrysalisError, InvalidInput, PayloadTooLarge, MethodNotAllowed, SecretRefused, Forbidden,
        NotFound,
        Conflict, DotConflict, DataDirLocked, CloneDetected, Decommissioned, MemoryDropped,
        SyncKeyError,
        FormatTampered, SelectionChanged,
        Unavailable, EmbedderUnavailable, ExtractorUnavailable, NotReady, ClosedError,
        DaemonNotRunning, StoreError,
        InsufficientStorage, RemoteError, RemoteUnavailable, RemoteNotFound, SegmentError,
        MirrorError, InternalError, DemoFailed,
    )
}  # fmt: skip


# ENOSPC, and EDQUOT (a quota is a full disk for this user); bindings that flatten an OSError
# into a message (LMDB's, tantivy's, FAISS's) are recognised by its words.
OUT_OF_SPACE = (errno.ENOSPC, errno.EDQUOT)
_OUT_OF_SPACE_WORDS = tuple(os.strerror(code).lower() for code in OUT_OF_SPACE)


def out_of_space(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it was raised from) is a write refused for want of space."""
    seen: BaseException | None = exc
    for _ in range(4):  # the chain of causes, briefly
        if seen is None:
            return False
        if isinstance(seen, InsufficientStorage):
            return True
        if isinstance(seen, OSError) and seen.errno in OUT_OF_SPACE:
            return True
        text = str(seen).lower()
        if any(words in text for words in _OUT_OF_SPACE_WORDS):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def disk_full(path: Any, *, floor: int = 0, free: int | None = None) -> InsufficientStorage:
    """The `InsufficientStorage` for the disk holding ``path`` (the data dir, or the folder
    the write went to), with its ``free`` bytes (measured now when not given); ``floor`` is
    the free-space floor that refused the write (0: the disk itself refused it)."""
    if free is None:
        try:
            st = os.statvfs(path)
            free = st.f_bavail * st.f_frsize
        except OSError:
            free = 0
    why = (
        f"writes are refused below {floor // 2**20} MiB (min_free_disk_bytes) and resume"
        if floor > 0
        else "the write could not be committed; writes resume"
    )
    return InsufficientStorage(
        f"the disk holding {path} has {free // 2**20} MiB free; {why} when space is freed "
        "(reads go on)"
    )


def error_class(code: str) -> type[ChrysalisError]:
    """The error class whose ``code`` is ``code`` (`ChrysalisError` for an unknown one)."""
    return BY_CODE.get(code, ChrysalisError)


def from_pydantic(exc: Any, what: str, *, batch: bool = False, within: str = "") -> InvalidInput:
    """A pydantic ``ValidationError`` as an `InvalidInput` (`PayloadTooLarge` for a field over
    its size limit) in plain words, naming each bad field as the user wrote it
    (`explain.sentences`): ``content must not be empty``; in a ``batch`` (a list of
    ``what``), ``bead 2: content must not be empty``. ``within``: the object the fields are
    in (``filters``). ``details``: ``[{"loc", "msg", "type"}]``, ``msg`` in plain words."""
    from chrysalis.core.explain import (  # here: a client that imports errors never needs it
        sentence,
        sentences,
    )

    found = exc.errors(include_url=False)  # with the inputs: their lengths are told, never them
    if not batch:  # a list of one: its index says nothing
        found = [{**e, "loc": _unindexed(e.get("loc", ()))} for e in found]
    item = what if batch else None
    too_large = any(e.get("type") in TOO_LARGE for e in found)
    details = [
        {
            "loc": list(e.get("loc", ())),
            "msg": sentence(e, item=item, within=within, whole=what),
            "type": e.get("type"),
        }
        for e in found
    ]
    cls = PayloadTooLarge if too_large else InvalidInput
    return cls(_joined(sentences(found, item=item, within=within, whole=what)), details=details)


def _unindexed(loc: Any) -> tuple[Any, ...]:
    return tuple(loc[1:]) if loc and isinstance(loc[0], int) else tuple(loc)


TOO_LARGE = frozenset({"string_too_long", "too_long", "bytes_too_long"})


def _joined(parts: list[str]) -> str:
    """At most five problems in a message (``details`` has them all)."""
    return "; ".join(parts[:5]) + ("; ..." if len(parts) > 5 else "")
