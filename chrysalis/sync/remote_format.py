"""``format.json``: the remote's identity and encryption, read (or created) before anything
else; every mismatch fails closed (docs/sync-protocol.md §3)."""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from chrysalis.core.errors import FormatTampered, SegmentError, SyncKeyError
from chrysalis.remotes import Remote, RemoteNotFound
from chrysalis.sync.layout import FORMAT_KEY, OPS, REPLICAS, parse_seg_key, segments_of
from chrysalis.sync.segment import Kind, decode, derive_key, encode

FORMAT = 1
CHECK = "chrysalis"  # what the key check holds (before the format's id and salt were bound)
REPAIR = "chrysalis sync --repair-format"
DATA_PREFIXES = (OPS, REPLICAS, "snapshots/")


def open_format(
    remote: Remote,
    secret: bytes | str | None,
    created_by: str,
    known: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], bytes | None]:
    """``(format, key)``: the remote's ``format.json`` (created if absent on an empty remote:
    of racing creators the first wins and the others use it) and the data key ``secret`` gives
    for it (None for a plaintext remote). ``known``: the format this data dir last opened
    there. Raises SegmentError for an unknown or damaged format, SyncKeyError when the key is
    missing, wrong, or configured for a plaintext remote, and FormatTampered when it is
    missing on a remote that holds data, or its id or salt changed under data of ours."""
    try:
        raw = remote.get(FORMAT_KEY)
    except RemoteNotFound:
        if holds_data(remote):
            raise FormatTampered(
                f"{remote.url}: {FORMAT_KEY} is missing but the remote holds data (ops/, "
                "replicas/ or snapshots/): someone deleted it. It is not recreated, which "
                "would give the remote a new identity and make every replica look like a "
                f"clone. Run `{REPAIR}` on a laptop that synced there before"
            ) from None
        if not remote.put_if_absent(FORMAT_KEY, json.dumps(_new(secret, created_by)).encode()):
            return open_format(remote, secret, created_by, known)  # another laptop made it first
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
    key = None if not enc else _check_key(remote.url, fmt, secret)
    if (
        known is not None
        and _identity(known) != _identity(fmt)
        and remote.list(segments_of(created_by))
    ):
        raise FormatTampered(
            f"{remote.url}: {FORMAT_KEY} changed since this replica last synced there (id "
            f"{known.get('id')} is now {fmt.get('id')}) while the remote holds our segments: "
            f"someone rewrote it. Run `{REPAIR}` to put back the one we know"
        )
    return fmt, key


def data_key(url: str, fmt: dict[str, Any], secret: bytes | str | None) -> bytes | None:
    """The data key ``secret`` gives for format ``fmt`` (None for a plaintext one, or when
    no secret is configured: nothing keyed can be read then). Raises as `open_format`."""
    if not fmt.get("encryption") or secret is None:
        return None
    return _check_key(url, fmt, secret)


def _identity(fmt: dict[str, Any]) -> tuple[Any, Any]:
    return fmt.get("id"), (fmt.get("encryption") or {}).get("salt")


def _check_key(url: str, fmt: dict[str, Any], secret: bytes | str | None) -> bytes:
    """The data key for an encrypted format; its key check must decrypt, and when it binds the
    format's id and salt (formats written by this build), they must be the ones it holds."""
    enc = fmt["encryption"]
    assert secret is not None
    try:
        key = derive_key(secret, bytes.fromhex(enc["salt"]))
        check = decode(
            bytes.fromhex(enc["check"]), kind=Kind.KEY_CHECK, object_key=FORMAT_KEY, key=key
        )
    except (SegmentError, ValueError, TypeError):
        raise SyncKeyError(f"the sync key is not the one {url} was created with") from None
    if check != CHECK and check != {"check": CHECK, "id": fmt.get("id"), "salt": enc["salt"]}:
        raise FormatTampered(
            f"{url}: {FORMAT_KEY}'s id or salt is not the one its key check was sealed with: "
            f"someone rewrote it. Run `{REPAIR}` to put back the one we know"
        )
    return key


def holds_data(remote: Remote) -> bool:
    """Does the remote hold any replica's data? (Then its format is never made anew.)"""
    return any(remote.list(prefix) for prefix in DATA_PREFIXES)


REPAIR_PROBES = 10  # segments read to check that a repaired format is this remote's


def repair_format(
    remote: Remote, secret: bytes | str | None, known: dict[str, Any] | None
) -> dict[str, Any]:
    """Put back ``format.json`` as this data dir last opened it (``known``), after checking
    that our key opens it and that the remote's segments are readable under it. Returns
    ``{"repaired": bool, "id"}``; raises FormatTampered when we hold no record of the format,
    or the remote's objects are not readable under it (not our remote: nothing written), and
    SyncKeyError when the key does not fit the known format."""
    if known is None:
        raise FormatTampered(
            f"this data dir never synced with {remote.url}, so it does not know its format: "
            "run the repair on a laptop that did"
        )
    try:
        current: Any = json.loads(remote.get(FORMAT_KEY))
    except RemoteNotFound:
        current = None
    except ValueError:
        current = "damaged"
    if current == known:
        return {"repaired": False, "id": known["id"]}
    enc = known.get("encryption")
    if enc and secret is None:
        raise SyncKeyError(f"{remote.url} is encrypted: configure its sync key to repair it")
    if not enc and secret is not None:
        raise SyncKeyError(f"{remote.url} was not encrypted; remove the sync key to repair it")
    key = None if not enc else _check_key(remote.url, known, secret)
    # One segment that reads under the known format shows the remote is ours. A bucket writer
    # may have damaged a few (the origins replace them, but only once syncing works again),
    # so several are tried and a damaged one alone does not refuse the repair.
    segs = [p for o in remote.list(OPS) if (p := parse_seg_key(o.key))][:REPAIR_PROBES]
    why = ""
    for replica, first, seg in segs:
        try:
            payload = decode(remote.get(seg), kind=Kind.SEGMENT, object_key=seg, key=key)
            if payload.get("replica") != replica or payload.get("first") != first:
                raise SegmentError(f"{seg}: not {replica}'s segment from {first}")
            break
        except (SegmentError, SyncKeyError, AttributeError) as exc:
            why = why or str(exc)
        except RemoteNotFound:
            continue
    else:
        if why:
            raise FormatTampered(
                f"{remote.url}: none of its first {len(segs)} segments reads under the format "
                f"this data dir knows ({why}); not writing {FORMAT_KEY}"
            )
    remote.put(FORMAT_KEY, json.dumps(known).encode())
    return {"repaired": True, "id": known["id"]}


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
        # The check binds the format's id and salt: an edited format.json fails it.
        bound = {"check": CHECK, "id": fmt["id"], "salt": salt.hex()}
        check = encode(Kind.KEY_CHECK, bound, object_key=FORMAT_KEY, key=key)
        fmt["encryption"] = {
            "cipher": "AES-256-GCM",
            "kdf": "scrypt",
            "salt": salt.hex(),
            "check": check.hex(),
        }
    return fmt
