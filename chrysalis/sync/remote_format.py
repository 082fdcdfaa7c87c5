"""``format.json``: the remote's identity and encryption, read (or created) before anything
else; every mismatch fails closed (docs/sync-protocol.md §3)."""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from ..errors import SegmentError, SyncKeyError
from ..remotes import Remote, RemoteNotFound
from ..segment import Kind, decode, derive_key, encode
from .layout import FORMAT_KEY

FORMAT = 1


def open_format(
    remote: Remote, secret: bytes | str | None, created_by: str
) -> tuple[dict[str, Any], bytes | None]:
    """``(format, key)``: the remote's ``format.json`` (created if absent: of racing creators
    the first wins and the others use it) and the data key ``secret`` gives for it (None for
    a plaintext remote). Raises SegmentError for an unknown or damaged format, SyncKeyError
    when the key is missing, wrong, or configured for a plaintext remote."""
    try:
        raw = remote.get(FORMAT_KEY)
    except RemoteNotFound:
        if not remote.put_if_absent(FORMAT_KEY, json.dumps(_new(secret, created_by)).encode()):
            return open_format(remote, secret, created_by)  # another laptop made it first
        raw = remote.get(FORMAT_KEY)
    try:
        fmt = json.loads(raw)
        version = fmt["format"]
    except (ValueError, KeyError, TypeError):
        raise SegmentError(f"{remote.url}: {FORMAT_KEY} is not valid") from None
    if version != FORMAT:
        raise SegmentError(f"{remote.url}: remote format {version}; this build reads {FORMAT}")
    enc = fmt.get("encryption")
    if enc and secret is None:
        raise SyncKeyError(
            f"{remote.url} is encrypted: configure its sync key "
            "(--sync-key-file / CHRYSALIS_SYNC_KEY_FILE)"
        )
    if not enc and secret is not None:
        raise SyncKeyError(
            f"{remote.url} is not encrypted but a sync key is configured: refusing to "
            "exchange plaintext (use a new remote prefix for encrypted sync)"
        )
    if not enc:
        return fmt, None
    assert secret is not None
    key = derive_key(secret, bytes.fromhex(enc["salt"]))
    try:
        decode(bytes.fromhex(enc["check"]), kind=Kind.KEY_CHECK, object_key=FORMAT_KEY, key=key)
    except SegmentError:
        raise SyncKeyError(f"the sync key is not the one {remote.url} was created with") from None
    return fmt, key


def _new(secret: bytes | str | None, created_by: str) -> dict[str, Any]:
    fmt: dict[str, Any] = {
        "format": FORMAT,
        "id": secrets.token_hex(8),
        "created_at": time.time(),
        "created_by": created_by,
        "encryption": None,
    }
    if secret is not None:
        salt = secrets.token_bytes(16)
        key = derive_key(secret, salt)
        check = encode(Kind.KEY_CHECK, "chrysalis", object_key=FORMAT_KEY, key=key)
        fmt["encryption"] = {
            "cipher": "AES-256-GCM",
            "kdf": "scrypt",
            "salt": salt.hex(),
            "check": check.hex(),
        }
    return fmt
