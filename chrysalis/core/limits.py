"""Size limits a client checks before it sends, as plain constants: the CLI imports this
without pydantic or the engine (`chrysalis.core.models` builds its fields from them)."""

from __future__ import annotations

__all__ = ["ID_PATTERN", "ID_RULE", "MAX_CONTENT_CHARS"]

MAX_CONTENT_CHARS = 8 * 1024 * 1024  # one bead's content; longer text is ingested in chunks
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$"  # every id: bead, session, node, edge...
# Python must apply it with `re.fullmatch`: under `re.match` its "$" also matches before a
# trailing newline. (pydantic's Rust engine and JSON Schema read "$" as the end.)
ID_RULE = "1 to 128 letters, digits or . _ : @ -, the first a letter or digit"
