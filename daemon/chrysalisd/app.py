"""The daemon's HTTP API (DESIGN §9), put together: the routes (`routes/`, one module per
area), their request bodies (`bodies`), one error shape (`http_errors`) and the guard in front
of every route (`guard`).

Every answer carries ``Chrysalis-Version``; every error is
``{"error": {"code": "...", "message": "...", "details": ...}}`` with the status its class
names (its `status`). Handlers are plain functions run on the server's thread pool: the memory is
thread-safe and concurrent writers share group commits.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.routing import APIRoute

import chrysalis

from .apidoc import document
from .guard import Guard
from .http_errors import add_error_handlers, error_response, status_of
from .memories import Memories
from .routes import ROUTERS
from .state import Daemon, Metrics

__all__ = ["VERSION", "create_app", "error_response", "status_of"]

VERSION = chrysalis.__version__


def create_app(daemon: Memories | Daemon | None = None) -> FastAPI:
    """The ASGI app serving the memories (one `Daemon`: as default; None: only to render the
    OpenAPI document)."""
    memories = Memories.single(daemon) if isinstance(daemon, Daemon) else daemon
    app = FastAPI(
        title="Chrysalis daemon",
        version=VERSION,
        summary="Local-first agent memory over a Unix socket.",
        description="Every route under /v1/ except /v1/memories is also served per named "
        "memory as /v1/m/{name}/...; without the prefix a route means the default memory.",
        redirect_slashes=False,
        docs_url=None,
        redoc_url=None,
    )
    app.state.memories = memories
    add_error_handlers(app)
    max_body = memories.settings.max_body_bytes if memories else 32 * 1024 * 1024
    counters = memories.metrics if memories else Metrics()
    app.add_middleware(Guard, max_body=max_body, metrics=counters, memories=memories)

    for router in ROUTERS:
        # Their routes themselves, not `include_router`: FastAPI (0.16x) analyses an included
        # router's routes again, at the first request that passes it (~45 ms of CPU, paid by
        # a daemon's first requests), to apply what the inclusion adds: here nothing (no
        # prefix, tags, dependencies or responses), so each route is served as it was built.
        assert all(isinstance(route, APIRoute) for route in router.routes), router
        app.router.routes.extend(router.routes)
    app.openapi = lambda: document(app)  # type: ignore[method-assign]  # as the daemon answers
    return app
