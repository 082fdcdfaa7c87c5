"""Chrysalis: a local-first memory for AI agents.

Embedded use::

    from chrysalis import Memory
    with Memory.open("~/agent-memory") as mem:
        bead = mem.append_bead("the user prefers tea", role="user", session_id="s1")
        mem.last_beads(10)
"""

from .errors import (
    ChrysalisError,
    ClosedError,
    Conflict,
    DataDirLocked,
    DotConflict,
    EmbedderUnavailable,
    InvalidInput,
    NotFound,
    PayloadTooLarge,
    StoreError,
)
from .memory import Memory
from .models import Bead, BlobRef, Edge, Embedding, Neighbor, Node, Persona, Skill, SpanRef
from .store import ApplyResult

__version__ = "0.1.0"

__all__ = [
    "ApplyResult",
    "Bead",
    "BlobRef",
    "ChrysalisError",
    "ClosedError",
    "Conflict",
    "DataDirLocked",
    "DotConflict",
    "Edge",
    "EmbedderUnavailable",
    "Embedding",
    "InvalidInput",
    "Memory",
    "Neighbor",
    "Node",
    "NotFound",
    "PayloadTooLarge",
    "Persona",
    "Skill",
    "SpanRef",
    "StoreError",
    "__version__",
]
