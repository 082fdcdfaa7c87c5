"""Which bytes are text, and in which encoding: what ingest reads a file as.

`decode_text` tries, in order: a byte-order mark (UTF-32, UTF-16, UTF-8), UTF-8 strictly,
UTF-16 without a mark (a file whose NUL bytes all fall on one side of each byte pair, as
ASCII text in UTF-16 has them), then Windows-1252 (a superset of Latin-1's printable
characters: what most older Western text files are) when every character it gives is one a
text holds. Anything else is not text. The caller says which encoding was read, so a
Cyrillic or Japanese legacy file read as cp1252 (it cannot tell those apart) is seen as such.

No statistical detector: the one commonly installed (charset-normalizer) reads short French
or German Latin-1 text as cp1250 ("crčme brűlée"), a worse guess than cp1252 for the files
people have. Pure: bytes in, text out.
"""

from __future__ import annotations

import codecs
import re

__all__ = ["NotText", "binary_head", "decode_text"]

SNIFF = 8192  # bytes looked at for NULs
UTF8 = "utf-8"

# Longest first: the UTF-32 LE mark begins with the UTF-16 LE one.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32"),
    (codecs.BOM_UTF8, "utf-8", "UTF-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16"),
)
# Control characters a text file does not hold: all but tab, newlines, form feed and ESC
# (terminal colours in a log), and the C1 block.
_NOT_TEXT = re.compile("[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f-\x9f]")


class NotText(ValueError):
    """The bytes are not text; ``why`` says so in words a person reads after the file's name."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def decode_text(raw: bytes) -> tuple[str, str]:
    """``(text, encoding)``: the text without a byte-order mark, and the codec it was read
    with (``utf-8``, ``utf-16-le``, ``utf-16-be``, ``utf-32-le``, ``utf-32-be``,
    ``cp1252``). Raises `NotText` saying why not."""
    for bom, codec, label in _BOMS:
        if raw.startswith(bom):
            try:
                return raw[len(bom) :].decode(codec), codec
            except UnicodeDecodeError as exc:
                raise NotText(
                    f"starts with a {label} byte-order mark but is not {label} (invalid bytes "
                    f"at offset {exc.start + len(bom)}), not ingested"
                ) from None
    nul = raw.find(b"\0", 0, SNIFF)
    if nul >= 0:
        unmarked = _utf16_without_bom(raw)
        if unmarked is not None:
            return unmarked
        raise NotText(f"binary file (NUL byte at offset {nul}), not ingested")
    try:
        return raw.decode(UTF8), UTF8
    except UnicodeDecodeError as exc:
        bad = exc.start
    try:
        text = raw.decode("cp1252")
    except UnicodeDecodeError:
        text = ""
    if text and _looks_like_text(text):
        return text, "cp1252"
    raise NotText(
        f"not text: neither UTF-8 nor cp1252/Latin-1 (byte 0x{raw[bad]:02x} at offset {bad}), "
        "not ingested"
    )


def binary_head(head: bytes) -> bool:
    """Whether a file's first `SNIFF` bytes already say binary (a NUL, and no UTF-16/32
    layout): its reader need not read the rest."""
    if b"\0" not in head or head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False  # the UTF-16 marks begin the UTF-32 ones too
    return _utf16_codec(head) is None


def _utf16_codec(head: bytes) -> str | None:
    """The UTF-16 byte order whose layout ``head`` has: every NUL on one side of its pair,
    in at least a quarter of the pairs."""
    even = head[0::2].count(0)
    odd = head[1::2].count(0)
    pairs = len(head) // 2
    for nuls, other, codec in ((odd, even, "utf-16-le"), (even, odd, "utf-16-be")):
        if other == 0 and nuls * 4 >= pairs:
            return codec
    return None


def _utf16_without_bom(raw: bytes) -> tuple[str, str] | None:
    """UTF-16 text with no byte-order mark, or None. Mostly-ASCII UTF-16 has a NUL in every
    other byte, all on one side; binary data has them anywhere."""
    codec = _utf16_codec(raw[:SNIFF]) if len(raw) % 2 == 0 else None
    if codec is None:
        return None
    try:
        text = raw.decode(codec)
    except UnicodeDecodeError:
        return None
    return (text, codec) if _looks_like_text(text) else None


def _looks_like_text(text: str) -> bool:
    """No control character a text would not hold (C1 controls included)."""
    return _NOT_TEXT.search(text) is None
