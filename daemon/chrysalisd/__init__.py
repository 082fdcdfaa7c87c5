"""chrysalisd: the daemon serving a `chrysalis.Memory` over a Unix socket, and the CLI.

Modules: `config` (settings), `app` (routes, errors, guard), `server` (socket, lifecycle),
`jobs` (scheduler), `state` (what a running daemon holds), `exchange` (export/import),
`cli` (the ``chrysalis`` command). Client commands import none of the storage engine.
"""

from chrysalis import __version__

__all__ = ["__version__"]
