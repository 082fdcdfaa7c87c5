"""The client: what agents import to talk to the daemon over its Unix socket. No storage.

``Client`` (`blocking`) and ``AsyncClient`` (`aio`) have the same methods, one per route; both
build their requests from `routes` and send them through `transport`::

    from chrysalis.client import Client
    with Client() as client:
        client.remember("the user prefers tea")

`light` is a standard-library client for paths that must start fast (the Claude Code hook);
`local_socket` holds the socket-owner checks every client makes. The names below load on first
use, so importing `chrysalis.client.light` never loads httpx.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chrysalis.client.aio import AsyncClient
    from chrysalis.client.blocking import Client
    from chrysalis.client.local_socket import default_socket_path
    from chrysalis.client.routes import Routes

_LAZY = {
    "AsyncClient": "chrysalis.client.aio",
    "Client": "chrysalis.client.blocking",
    "Routes": "chrysalis.client.routes",
    "default_socket_path": "chrysalis.client.local_socket",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'chrysalis.client' has no attribute {name!r}")


__all__ = ["AsyncClient", "Client", "Routes", "default_socket_path"]
