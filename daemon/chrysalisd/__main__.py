"""``python -m chrysalisd`` is the ``chrysalis`` command."""

from .cli import main

main()
