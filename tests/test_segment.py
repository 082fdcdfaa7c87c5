"""The container replicas exchange (chrysalis/sync/segment.py): what decodes, and what is refused."""

from __future__ import annotations

import hashlib
import os
import re
import zlib
from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chrysalis.sync import segment
from chrysalis.sync.segment import (
    CHECKSUM,
    COMPRESSED,
    ENCRYPTED,
    HEADER,
    MAGIC,
    NONCE,
    VERSION,
    Kind,
    SegmentError,
    SyncKeyError,
    decode,
    derive_key,
    encode,
    read_key_file,
)

OBJ = "ops/a1b2/0000000000000001.seg"
KEY = os.urandom(32)
PAYLOAD: Any = {
    "replica": "a1b2",
    "ops": [
        {"seq": 1, "kind": "bead", "text": "héllo wörld", "raw": b"\x00\xff\x00", "n": -(2**63)},
        {"seq": 2, "kind": "forget", "ids": ["b1", "b2"], "big": 2**64 - 1, "none": None},
    ],
    "nested": {"a": [[], {}, [1, [2, [3]]]], 7: "int key", b"bin": True},
    "float": 1.5,
}


def seal(blob: bytes) -> bytes:
    """``blob`` (header + body) with a valid checksum, as an attacker or a bug could write it."""
    return blob + hashlib.blake2b(blob, digest_size=CHECKSUM).digest()


def object_with(
    body: bytes, *, flags: int, kind: int = Kind.SEGMENT, version: int = VERSION
) -> bytes:
    return seal(HEADER.pack(MAGIC, version, flags, kind, 0) + body)


def flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]


# ---- roundtrips --------------------------------------------------------------------------------


@pytest.mark.parametrize("key", [None, KEY], ids=["plain", "encrypted"])
@pytest.mark.parametrize("kind", list(Kind), ids=lambda k: k.name.lower())
def test_encode_then_decode_roundtrips(kind: Kind, key: bytes | None) -> None:
    data = encode(kind, PAYLOAD, object_key=OBJ, key=key)
    assert data[:4] == MAGIC
    assert HEADER.unpack_from(data) == (
        MAGIC,
        VERSION,
        COMPRESSED | (ENCRYPTED if key else 0),
        kind,
        0,
    )
    assert decode(data, kind=kind, object_key=OBJ, key=key) == PAYLOAD


@pytest.mark.parametrize("key", [None, KEY], ids=["plain", "encrypted"])
def test_trivial_payloads_roundtrip(key: bytes | None) -> None:
    for payload in (None, 0, "", b"", [], {}, b"\0" * 100_000):
        data = encode(Kind.BLOB, payload, object_key="blobs/x", key=key)
        assert decode(data, kind=Kind.BLOB, object_key="blobs/x", key=key) == payload


def test_an_uncompressed_plaintext_object_is_read() -> None:
    data = object_with(msgpack.packb(PAYLOAD, use_bin_type=True), flags=0)
    assert decode(data, kind=Kind.SEGMENT, object_key=OBJ, key=None) == PAYLOAD


scalars = (
    st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.text(max_size=20)
    | st.binary(max_size=20)
)
payloads = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(
            st.text(max_size=8) | st.integers(-5, 5) | st.binary(max_size=4), children, max_size=5
        )
    ),
    max_leaves=25,
)


@settings(max_examples=50, deadline=None)
@given(payload=payloads, kind=st.sampled_from(Kind), key=st.binary(min_size=32, max_size=32))
def test_any_payload_roundtrips_with_and_without_a_key(
    payload: Any, kind: Kind, key: bytes
) -> None:
    for k in (None, key):
        data = encode(kind, payload, object_key=OBJ, key=k)
        assert decode(data, kind=kind, object_key=OBJ, key=k) == payload


# ---- corruption --------------------------------------------------------------------------------


@pytest.mark.parametrize("key", [None, KEY], ids=["plain", "encrypted"])
def test_a_flipped_byte_anywhere_is_refused(key: bytes | None) -> None:
    data = encode(Kind.SEGMENT, PAYLOAD, object_key=OBJ, key=key)
    for at in range(len(data)):
        if at < 4:
            expected = "bad magic"
        elif at == 4:
            expected = "format version 0"  # the version is read before the checksum
        else:
            expected = "checksum mismatch"
        with pytest.raises(SegmentError, match=expected):
            decode(flip(data, at), kind=Kind.SEGMENT, object_key=OBJ, key=key)


@pytest.mark.parametrize("key", [None, KEY], ids=["plain", "encrypted"])
def test_a_truncated_object_is_refused(key: bytes | None) -> None:
    data = encode(Kind.SEGMENT, PAYLOAD, object_key=OBJ, key=key)
    short = HEADER.size + CHECKSUM
    for length in (
        0,
        1,
        3,
        4,
        8,
        short - 1,
        short,
        short + 1,
        len(data) // 2,
        len(data) - CHECKSUM,
        len(data) - 1,
    ):
        expected = "too short" if length < short else "checksum mismatch"
        with pytest.raises(SegmentError, match=expected):
            decode(data[:length], kind=Kind.SEGMENT, object_key=OBJ, key=key)
    with pytest.raises(SegmentError, match="checksum mismatch"):
        decode(data + b"\0", kind=Kind.SEGMENT, object_key=OBJ, key=key)  # a longer one too


def test_wrong_magic_is_refused() -> None:
    data = encode(Kind.SEGMENT, PAYLOAD, object_key=OBJ, key=None)
    forged = seal(b"CHRZ" + data[4:-CHECKSUM])
    with pytest.raises(SegmentError, match=re.escape(f"{OBJ}: not a Chrysalis object")):
        decode(forged, kind=Kind.SEGMENT, object_key=OBJ, key=None)
    with pytest.raises(SegmentError, match="bad magic"):
        decode(b"PK\x03\x04" + bytes(40), kind=Kind.SEGMENT, object_key=OBJ, key=None)


@pytest.mark.parametrize("key", [None, KEY], ids=["plain", "encrypted"])
def test_a_future_version_is_refused_by_the_version_check(key: bytes | None) -> None:
    data = encode(Kind.SEGMENT, PAYLOAD, object_key=OBJ, key=key)
    _, _, flags, kind, reserved = HEADER.unpack_from(data)
    blob = HEADER.pack(MAGIC, VERSION + 1, flags, kind, reserved) + data[HEADER.size : -CHECKSUM]
    with pytest.raises(
        SegmentError, match=f"format version {VERSION + 1}; this build reads {VERSION}"
    ):
        decode(seal(blob), kind=Kind.SEGMENT, object_key=OBJ, key=key)


@pytest.mark.parametrize("key", [None, KEY], ids=["plain", "encrypted"])
def test_the_wrong_kind_is_refused(key: bytes | None) -> None:
    data = encode(Kind.SNAPSHOT, PAYLOAD, object_key=OBJ, key=key)
    with pytest.raises(SegmentError, match="holds a snapshot, expected a segment"):
        decode(data, kind=Kind.SEGMENT, object_key=OBJ, key=key)
    with pytest.raises(SegmentError, match="holds a snapshot, expected a key_check"):
        decode(data, kind=Kind.KEY_CHECK, object_key=OBJ, key=key)
    unknown = object_with(zlib.compress(msgpack.packb(1)), flags=COMPRESSED, kind=9)
    with pytest.raises(SegmentError, match="holds a kind 9, expected a segment"):
        decode(unknown, kind=Kind.SEGMENT, object_key=OBJ, key=None)


def test_a_body_that_is_not_zlib_is_refused() -> None:
    garbage = object_with(b"this is not a zlib stream at all", flags=COMPRESSED)
    with pytest.raises(SegmentError, match="does not decompress"):
        decode(garbage, kind=Kind.SEGMENT, object_key=OBJ, key=None)
    stream = zlib.compress(msgpack.packb(PAYLOAD, use_bin_type=True))
    cut = object_with(stream[: len(stream) // 2], flags=COMPRESSED)  # a valid start, no end
    with pytest.raises(SegmentError, match="does not decompress whole"):
        decode(cut, kind=Kind.SEGMENT, object_key=OBJ, key=None)


def test_a_body_that_is_not_msgpack_is_refused() -> None:
    for body in (b"\xc1", b"\x92\x01", msgpack.packb(1) + b"extra"):  # never-used, short, extra
        for flags, stored in ((0, body), (COMPRESSED, zlib.compress(body))):
            with pytest.raises(SegmentError, match="not valid msgpack"):
                decode(
                    object_with(stored, flags=flags), kind=Kind.SEGMENT, object_key=OBJ, key=None
                )


@pytest.mark.parametrize("key", [None, KEY], ids=["plain", "encrypted"])
def test_a_decompression_bomb_is_refused(
    monkeypatch: pytest.MonkeyPatch, key: bytes | None
) -> None:
    monkeypatch.setattr(segment, "MAX_INFLATED", 64 << 10)
    small = {"b": b"\0" * 1000}
    assert (
        decode(
            encode(Kind.BLOB, small, object_key="b", key=key),
            kind=Kind.BLOB,
            object_key="b",
            key=key,
        )
        == small
    )
    bomb = encode(Kind.BLOB, {"b": b"\0" * (4 << 20)}, object_key="b", key=key)
    assert len(bomb) < 16 << 10  # 4 MiB of zeros: a few KiB on the wire
    with pytest.raises(SegmentError, match="does not decompress whole"):
        decode(bomb, kind=Kind.BLOB, object_key="b", key=key)


# ---- authentication ----------------------------------------------------------------------------


def test_a_moved_or_swapped_segment_fails_authentication() -> None:
    first = encode(Kind.SEGMENT, {"seq": 1}, object_key="ops/a/1.seg", key=KEY)
    second = encode(Kind.SEGMENT, {"seq": 2}, object_key="ops/a/2.seg", key=KEY)
    for data, where in ((first, "ops/a/2.seg"), (second, "ops/a/1.seg"), (first, "ops/b/1.seg")):
        with pytest.raises(SegmentError, match=re.escape(f"{where}: fails authentication")):
            decode(data, kind=Kind.SEGMENT, object_key=where, key=KEY)
    assert decode(first, kind=Kind.SEGMENT, object_key="ops/a/1.seg", key=KEY) == {"seq": 1}


def test_an_object_under_another_key_fails_authentication() -> None:
    data = encode(Kind.SEGMENT, PAYLOAD, object_key=OBJ, key=KEY)
    with pytest.raises(SegmentError, match="fails authentication: written under another sync key"):
        decode(data, kind=Kind.SEGMENT, object_key=OBJ, key=os.urandom(32))


def test_an_encrypted_object_without_a_key_is_a_key_error() -> None:
    data = encode(Kind.SEGMENT, PAYLOAD, object_key=OBJ, key=KEY)
    with pytest.raises(SyncKeyError, match="is encrypted and no sync key is configured"):
        decode(data, kind=Kind.SEGMENT, object_key=OBJ, key=None)


def test_a_plaintext_object_with_a_key_is_refused() -> None:
    data = encode(Kind.SEGMENT, PAYLOAD, object_key=OBJ, key=None)
    with pytest.raises(SegmentError, match="is not encrypted but a sync key is configured"):
        decode(data, kind=Kind.SEGMENT, object_key=OBJ, key=KEY)
    # the same with the encryption flag stripped off a real encrypted object
    enc = encode(Kind.SEGMENT, PAYLOAD, object_key=OBJ, key=KEY)
    stripped = object_with(enc[HEADER.size : -CHECKSUM], flags=COMPRESSED)
    with pytest.raises(SegmentError, match="is not encrypted but a sync key is configured"):
        decode(stripped, kind=Kind.SEGMENT, object_key=OBJ, key=KEY)


def test_a_forged_object_with_a_recomputed_checksum_fails_authentication() -> None:
    data = encode(Kind.SEGMENT, PAYLOAD, object_key=OBJ, key=KEY)
    blob = data[:-CHECKSUM]
    body = HEADER.size + NONCE
    for at in (HEADER.size, body, body + 5, len(blob) - 1):  # nonce, ciphertext, tag
        with pytest.raises(SegmentError, match="fails authentication"):
            decode(seal(flip(blob, at)), kind=Kind.SEGMENT, object_key=OBJ, key=KEY)
    # the header is authenticated too: drop the compression flag, or relabel the kind
    for header in (
        HEADER.pack(MAGIC, VERSION, ENCRYPTED, Kind.SEGMENT, 0),
        HEADER.pack(MAGIC, VERSION, ENCRYPTED | COMPRESSED, Kind.SEGMENT, 1),
    ):
        with pytest.raises(SegmentError, match="fails authentication"):
            decode(seal(header + blob[HEADER.size :]), kind=Kind.SEGMENT, object_key=OBJ, key=KEY)
    relabeled = seal(
        HEADER.pack(MAGIC, VERSION, ENCRYPTED | COMPRESSED, Kind.SNAPSHOT, 0) + blob[HEADER.size :]
    )
    with pytest.raises(SegmentError, match="fails authentication"):
        decode(relabeled, kind=Kind.SNAPSHOT, object_key=OBJ, key=KEY)
    with pytest.raises(SegmentError, match="too short to be encrypted"):  # no room for a tag
        decode(
            object_with(b"\0" * NONCE, flags=ENCRYPTED | COMPRESSED),
            kind=Kind.SEGMENT,
            object_key=OBJ,
            key=KEY,
        )


def test_an_encrypted_object_too_short_for_a_nonce_is_refused() -> None:
    for size in (0, 1, 7):
        forged = object_with(b"\0" * size, flags=ENCRYPTED | COMPRESSED)
        with pytest.raises(SegmentError):
            decode(forged, kind=Kind.SEGMENT, object_key=OBJ, key=KEY)


def test_encrypted_output_does_not_contain_the_plaintext() -> None:
    marker = "chrysalis-secret-" + os.urandom(16).hex()
    payload = {"text": marker, "raw": marker.encode()}
    packed = msgpack.packb(payload, use_bin_type=True)
    compressed = zlib.compress(packed, 6)

    plain = encode(Kind.SEGMENT, payload, object_key=OBJ, key=None)
    assert compressed in plain  # the control: without a key the body is just zlib
    assert marker.encode() in zlib.decompress(plain[HEADER.size : -CHECKSUM])

    first = encode(Kind.SEGMENT, payload, object_key=OBJ, key=KEY)
    second = encode(Kind.SEGMENT, payload, object_key=OBJ, key=KEY)
    for data in (first, second):
        assert marker.encode() not in data
        assert marker.encode().hex().encode() not in data
        assert packed not in data
        assert compressed not in data
        assert compressed[2:12] not in data  # not even a stretch of the deflate stream
        with pytest.raises(zlib.error):
            zlib.decompress(data[HEADER.size + NONCE : -CHECKSUM])
    assert first[HEADER.size : HEADER.size + NONCE] != second[HEADER.size : HEADER.size + NONCE]
    assert first != second  # a fresh nonce each time
    assert decode(first, kind=Kind.SEGMENT, object_key=OBJ, key=KEY) == payload
    assert decode(second, kind=Kind.SEGMENT, object_key=OBJ, key=KEY) == payload


# ---- keys --------------------------------------------------------------------------------------


def test_a_key_file_with_64_hex_digits_is_a_raw_key(tmp_path: Path) -> None:
    raw = os.urandom(32)
    path = tmp_path / "sync.key"
    path.write_text(raw.hex() + "\n")
    assert read_key_file(path) == raw
    path.write_text("  " + raw.hex().upper() + "\r\n\n")
    assert read_key_file(str(path)) == raw
    data = encode(Kind.KEY_CHECK, "ok", object_key="keycheck", key=raw)
    assert decode(data, kind=Kind.KEY_CHECK, object_key="keycheck", key=read_key_file(path)) == "ok"


def test_a_key_file_with_other_text_is_a_passphrase(tmp_path: Path) -> None:
    path = tmp_path / "sync.key"
    path.write_text("  correct horse battery staple \n")
    assert read_key_file(path) == "correct horse battery staple"
    path.write_text("x" * 12)  # the shortest accepted
    assert read_key_file(path) == "x" * 12
    path.write_text("z" * 64)  # 64 characters but not hex: a passphrase
    assert read_key_file(path) == "z" * 64
    path.write_text("ab" * 31 + "a")  # 63 hex digits: a passphrase, not a key
    assert read_key_file(path) == "ab" * 31 + "a"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param(b"", "is empty", id="empty"),
        pytest.param(b" \n\t\n", "is empty", id="blank"),
        pytest.param(b"short pass!", "a passphrase needs at least 12 characters", id="short"),
        pytest.param(b"\xff\xfe\x00\x80 key \xc3\x28", "is not text", id="not-utf8"),
        pytest.param(None, "cannot read sync key file", id="missing"),
    ],
)
def test_a_bad_key_file_is_refused_naming_the_file(
    tmp_path: Path, content: bytes | None, message: str
) -> None:
    path = tmp_path / "keys" / "sync.key"
    if content is not None:
        path.parent.mkdir()
        path.write_bytes(content)
    with pytest.raises(SyncKeyError, match=message) as info:
        read_key_file(path)
    assert str(path) in str(info.value)


def test_a_key_file_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SyncKeyError, match=re.escape(f"cannot read sync key file {tmp_path}")):
        read_key_file(tmp_path)


def test_derive_key_is_deterministic_per_passphrase_and_salt() -> None:
    salt, other_salt = b"s" * 16, b"t" * 16
    key = derive_key("correct horse battery staple", salt)
    assert isinstance(key, bytes)
    assert len(key) == 32
    assert derive_key("correct horse battery staple", salt) == key
    assert derive_key("correct horse battery staple", other_salt) != key
    assert derive_key("correct horse battery stapler", salt) != key
    data = encode(Kind.KEY_CHECK, "ok", object_key="keycheck", key=key)
    assert (
        decode(
            data,
            kind=Kind.KEY_CHECK,
            object_key="keycheck",
            key=derive_key("correct horse battery staple", salt),
        )
        == "ok"
    )


def test_derive_key_returns_a_raw_key_unchanged() -> None:
    raw = os.urandom(32)
    assert derive_key(raw, b"any salt") is raw
    assert derive_key(raw, b"another") == raw
