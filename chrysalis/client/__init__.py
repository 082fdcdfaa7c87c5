"""The client: what agents import to talk to the daemon over its Unix socket. No storage.

``Client`` (`blocking`) and ``AsyncClient`` (`aio`) have the same methods, one per route; both
build their requests from `routes` and send them through `transport`::

    from chrysalis.client import Client
    with Client() as client:
        client.remember("the user prefers tea")
"""

from chrysalis.client.aio import AsyncClient
from chrysalis.client.blocking import Client
from chrysalis.client.routes import Routes
from chrysalis.client.transport import default_socket_path

__all__ = ["AsyncClient", "Client", "Routes", "default_socket_path"]
