"""``python -m chrysalisd`` is the ``chrysalis`` command."""

from .launch import main

main()
