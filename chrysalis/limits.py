"""Size limits a client checks before it sends, as plain constants: the CLI imports this
without pydantic or the engine (`chrysalis.models` builds its fields from them)."""

from __future__ import annotations

__all__ = ["MAX_CONTENT_CHARS"]

MAX_CONTENT_CHARS = 8 * 1024 * 1024  # one bead's content; longer text is ingested in chunks
