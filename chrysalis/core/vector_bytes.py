"""How a vector is stored in an embedding op: little-endian float16 when that keeps it, else
float32, told apart by length (``dims * 2`` or ``dims * 4`` bytes).

Float16 halves the op and, for a 768-dim vector, keeps it inside an LMDB leaf page instead of
a 4 KiB overflow page of its own (3,072 bytes plus the op's fields do not fit in a leaf): the
largest saving of disk there is. Cosine and inner-product rankings read vectors relative to
their largest component, so a vector is stored as float16 only when no component moves by
more than ``TOLERANCE`` of the largest one's magnitude: any embedding a model produces (unit
length or scaled), never a vector whose values overflow float16 (65,504) or sit so close to
zero that its rounding would reorder neighbours. Ops written before (always
float32) read as they are.

Pure: no I/O.
"""

from __future__ import annotations

import numpy as np

TOLERANCE = 1e-3  # float16 rounds by at most 2**-11 ~ 4.9e-4 of a value in its normal range


def encode(vector: np.ndarray) -> bytes:
    """The stored bytes of a finite float32 vector: float16 when that keeps every component
    within ``TOLERANCE`` of the largest magnitude, else float32 as given."""
    exact = np.ascontiguousarray(vector, dtype="<f4").reshape(-1)
    with np.errstate(over="ignore"):
        half = exact.astype("<f2")
    scale = float(np.abs(exact).max(initial=0.0))
    if np.isfinite(half).all():
        error = float(np.abs(half.astype("<f4") - exact).max(initial=0.0))
        if error <= TOLERANCE * scale:
            return half.tobytes()
    return exact.tobytes()


def decode(raw: bytes, dims: int) -> np.ndarray:
    """The float32 vector of stored bytes (``dims * 2`` bytes: float16; ``dims * 4``: float32).
    Raises ValueError for any other length."""
    if len(raw) == dims * 2:
        return np.frombuffer(raw, dtype="<f2").astype(np.float32)
    if len(raw) == dims * 4:
        return np.frombuffer(raw, dtype="<f4")
    raise ValueError(f"vector has {len(raw)} bytes, expected dims*2 or dims*4 = {dims * 4}")
