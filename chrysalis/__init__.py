"""Chrysalis: a local-first memory for AI agents.

Embedded use::

    from chrysalis import Memory
    with Memory.open("~/agent-memory") as mem:
        bead = mem.append_bead("the user prefers tea", role="user", session_id="s1")
        mem.last_beads(10)

Through the daemon (``chrysalis daemon``)::

    from chrysalis import Client
    with Client() as client:
        client.remember("the user prefers tea")
        client.recall("what does the user drink?").items

`Memory` (LMDB, FAISS, numpy), `Client` (httpx) and the models (pydantic) are imported on
first use, so an agent that only talks to the daemon never loads the storage engine.
"""

import importlib as _importlib
import typing as _typing

from chrysalis.core.errors import (
    ChrysalisError,
    ClosedError,
    Conflict,
    DaemonNotRunning,
    DataDirLocked,
    DotConflict,
    EmbedderUnavailable,
    ExtractorUnavailable,
    Forbidden,
    InsufficientStorage,
    InternalError,
    InvalidInput,
    MethodNotAllowed,
    NotFound,
    NotReady,
    PayloadTooLarge,
    SecretRefused,
    SelectionChanged,
    StoreError,
)

if _typing.TYPE_CHECKING:
    from chrysalis.client import AsyncClient, Client
    from chrysalis.core.models import (
        Bead,
        BlobRef,
        Context,
        ContextFact,
        ContextItem,
        Edge,
        Embedding,
        Filters,
        Neighbor,
        Node,
        Persona,
        RetrievalResult,
        RetrievedItem,
        Skill,
        SpanRef,
    )
    from chrysalis.forget.select import Selection, Selector
    from chrysalis.memory import Memory
    from chrysalis.replica import Replica
    from chrysalis.write.op_rules import ApplyResult

__version__ = "0.1.0"

_LAZY = {
    "ApplyResult": "chrysalis.write.op_rules",
    "AsyncClient": "chrysalis.client",
    "Client": "chrysalis.client",
    "Memory": "chrysalis.memory",
    "Replica": "chrysalis.replica",
    "Selection": "chrysalis.forget.select",
    "Selector": "chrysalis.forget.select",
    **dict.fromkeys(
        [
            "Bead",
            "BlobRef",
            "Context",
            "ContextFact",
            "ContextItem",
            "Edge",
            "Embedding",
            "Filters",
            "Neighbor",
            "Node",
            "Persona",
            "RetrievalResult",
            "RetrievedItem",
            "Skill",
            "SpanRef",
        ],
        "chrysalis.core.models",
    ),
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        value = getattr(_importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'chrysalis' has no attribute {name!r}")


__all__ = [
    "ApplyResult",
    "AsyncClient",
    "Bead",
    "BlobRef",
    "ChrysalisError",
    "Client",
    "ClosedError",
    "Conflict",
    "Context",
    "ContextFact",
    "ContextItem",
    "DaemonNotRunning",
    "DataDirLocked",
    "DotConflict",
    "Edge",
    "EmbedderUnavailable",
    "Embedding",
    "ExtractorUnavailable",
    "Filters",
    "Forbidden",
    "InsufficientStorage",
    "InternalError",
    "InvalidInput",
    "Memory",
    "MethodNotAllowed",
    "Neighbor",
    "Node",
    "NotFound",
    "NotReady",
    "PayloadTooLarge",
    "Persona",
    "Replica",
    "RetrievalResult",
    "RetrievedItem",
    "SecretRefused",
    "Selection",
    "SelectionChanged",
    "Selector",
    "Skill",
    "SpanRef",
    "StoreError",
    "__version__",
]
