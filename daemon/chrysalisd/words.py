"""How the CLI and the doctor say a count: "1 bead", "2 beads", never "1 beads"."""

from __future__ import annotations

__all__ = ["counted"]


def counted(n: int, word: str, many: str | None = None) -> str:
    """``n word``, the word in the plural unless ``n`` is 1, thousands separated ("1,204
    beads"); ``many`` is the plural when it is not word + s ("1 match", "3 matches")."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"
