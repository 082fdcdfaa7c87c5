"""chrysalisd: the long-running daemon serving a `chrysalis.Memory` over a Unix socket.

It imports only the public API of `chrysalis`. The socket server, routes and scheduler
arrive with the daemon issue (step 3); this package holds their place in the layout.
"""

from chrysalis import __version__

__all__ = ["__version__"]
