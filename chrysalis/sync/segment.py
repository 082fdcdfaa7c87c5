"""The objects replicas exchange: segments, snapshots and blobs, in one container format.

    offset  size  field
    0       4     magic  b"CHRS"
    4       1     format version (1)
    5       1     flags: bit 0 zlib-compressed, bit 1 AES-256-GCM encrypted
    6       1     kind: 1 segment, 2 snapshot, 3 blob, 4 key check, 5 heartbeat, 6 drop,
                  7 snapshot part
    7       1     reserved, 0
    8       n     body: msgpack of the payload, compressed if flagged; if encrypted,
                  a 12-byte random nonce + AES-GCM(ciphertext || 16-byte tag)
    8+n     16    BLAKE2b-128 of bytes 0..8+n

The checksum tells corruption and truncation from a wrong key. When encrypted, the associated
data is the 8-byte header followed by the object's key in the remote (``ops/a1/...seg``): a
segment moved to another name, or written under another key, fails authentication.

A sync key is 32 random bytes (a key file holding 64 hex digits) or a passphrase, stretched by
scrypt with the salt the remote's ``format.json`` holds. With a key configured, a plaintext
object is refused (fail closed); without one, an encrypted object is refused with a clear error.
"""

from __future__ import annotations

import functools
import hashlib
import os
import struct
import zlib
from enum import IntEnum
from pathlib import Path
from typing import Any

import msgpack

from chrysalis.core.errors import (
    SegmentError as SegmentError,  # re-exported: they live in errors.py
)
from chrysalis.core.errors import SyncKeyError as SyncKeyError

MAGIC = b"CHRS"
VERSION = 1
HEADER = struct.Struct(">4sBBBB")
CHECKSUM = 16
NONCE = 12
COMPRESSED, ENCRYPTED = 1, 2
MAX_INFLATED = 1 << 31  # a decompression bomb stops here
SCRYPT = {"n": 1 << 15, "r": 8, "p": 1}


class Kind(IntEnum):
    SEGMENT = 1
    SNAPSHOT = 2
    BLOB = 3
    KEY_CHECK = 4
    HEARTBEAT = 5  # with a sync key only: a plaintext remote's heartbeats are JSON
    DROP = 6  # a memory's drop marker (sync/drop.py)
    SNAPSHOT_PART = 7  # one bounded slice of a snapshot's databases (sync/snapshots.py)


def encode(
    kind: Kind, payload: Any, *, object_key: str, key: bytes | None, level: int = 6
) -> bytes:
    """The bytes to store under ``object_key`` for ``payload`` (zlib at ``level``)."""
    body = zlib.compress(msgpack.packb(payload, use_bin_type=True), level)
    flags = COMPRESSED
    if key is not None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        flags |= ENCRYPTED
        header = HEADER.pack(MAGIC, VERSION, flags, kind, 0)
        nonce = os.urandom(NONCE)
        body = nonce + AESGCM(key).encrypt(nonce, body, header + object_key.encode())
    header = HEADER.pack(MAGIC, VERSION, flags, kind, 0)
    blob = header + body
    return blob + hashlib.blake2b(blob, digest_size=CHECKSUM).digest()


def decode(
    data: bytes,
    *,
    kind: Kind,
    object_key: str,
    key: bytes | None,
    max_inflated: int | None = None,
) -> Any:
    """The payload stored under ``object_key``; `SegmentError` if it cannot be trusted or
    inflates past ``max_inflated`` bytes (default `MAX_INFLATED`)."""
    where = f"{object_key}:"
    if len(data) < HEADER.size + CHECKSUM or data[:4] != MAGIC:
        raise SegmentError(f"{where} not a Chrysalis object (bad magic or too short)")
    _, version, flags, got_kind, _ = HEADER.unpack_from(data)
    if version != VERSION:
        raise SegmentError(f"{where} format version {version}; this build reads {VERSION}")
    blob, digest = data[:-CHECKSUM], data[-CHECKSUM:]
    if hashlib.blake2b(blob, digest_size=CHECKSUM).digest() != digest:
        raise SegmentError(f"{where} checksum mismatch (corrupt or truncated)")
    if got_kind != kind:
        raise SegmentError(
            f"{where} holds a {_kind_name(got_kind)}, expected a {kind.name.lower()}"
        )
    body = blob[HEADER.size :]
    if flags & ENCRYPTED:
        if key is None:
            raise SyncKeyError(
                f"{where} is encrypted and no sync key is configured "
                "(set --sync-key-file / CHRYSALIS_SYNC_KEY_FILE)"
            )
        if len(body) < NONCE + 16:
            raise SegmentError(f"{where} is too short to be encrypted (no nonce and tag)")
        from cryptography.exceptions import InvalidTag
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        try:
            body = AESGCM(key).decrypt(
                body[:NONCE], body[NONCE:], blob[: HEADER.size] + object_key.encode()
            )
        except InvalidTag:
            raise SegmentError(
                f"{where} fails authentication: written under another sync key, moved from "
                "another name, or forged"
            ) from None
    elif key is not None:
        raise SegmentError(f"{where} is not encrypted but a sync key is configured (refused)")
    if flags & COMPRESSED:
        inflater = zlib.decompressobj()
        try:
            body = inflater.decompress(body, max_inflated or MAX_INFLATED)
        except zlib.error as exc:
            raise SegmentError(f"{where} does not decompress: {exc}") from None
        if inflater.unconsumed_tail or not inflater.eof or inflater.unused_data:
            raise SegmentError(
                f"{where} does not decompress whole (truncated, trailing bytes, or too large)"
            )
    try:
        return msgpack.unpackb(body, raw=False, strict_map_key=False)
    except Exception as exc:  # msgpack raises several unrelated types
        raise SegmentError(f"{where} payload is not valid msgpack: {exc}") from None


def _kind_name(value: int) -> str:
    try:
        return Kind(value).name.lower()
    except ValueError:
        return f"kind {value}"


# ---- keys ------------------------------------------------------------------------------------


def read_key_file(path: str | os.PathLike[str]) -> bytes | str:
    """What a key file holds: 32 raw bytes (64 hex digits) or a passphrase (any other text)."""
    p = Path(path).expanduser()
    try:
        text = p.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise SyncKeyError(f"cannot read sync key file {p}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise SyncKeyError(
            f"sync key file {p} is not text (64 hex digits or a passphrase)"
        ) from None
    if not text:
        raise SyncKeyError(f"sync key file {p} is empty")
    if len(text) == 64:
        try:
            return bytes.fromhex(text)
        except ValueError:
            pass
    if len(text) < 12:
        raise SyncKeyError(f"sync key file {p}: a passphrase needs at least 12 characters")
    return text


CACHED_SALT_BYTES = 64  # a longer salt's key is derived and not kept (`derive_key`)


def derive_key(secret: bytes | str, salt: bytes) -> bytes:
    """A 32-byte key: ``secret`` itself if it is one, else scrypt(passphrase, salt)."""
    if isinstance(secret, bytes):
        return secret
    if len(salt) > CACHED_SALT_BYTES:
        # Not ours (ours are 16 bytes): format.json's salt is whatever the bucket's writer
        # put there, and the cache would keep a huge one for as long as the process runs.
        return _scrypt.__wrapped__(secret, salt)
    return _scrypt(secret, salt)


@functools.lru_cache(maxsize=16)
def _scrypt(passphrase: str, salt: bytes) -> bytes:
    """Once a process per passphrase and salt (~0.2 s of CPU each by design): a daemon
    connecting again, or several memories on one team passphrase, derive it once."""
    return hashlib.scrypt(
        passphrase.encode(), salt=salt, n=SCRYPT["n"], r=SCRYPT["r"], p=SCRYPT["p"], dklen=32,
        maxmem=64 << 20,
    )  # fmt: skip
