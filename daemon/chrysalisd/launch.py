"""The ``chrysalis`` command's entry point: the Claude Code hook without the CLI, the CLI for
everything else.

Claude Code waits for ``chrysalis hooks claude-code`` on every prompt, and importing the CLI
(click, httpx and every command's module) costs more than the hook's whole work. So the
hook's own command line (`claude_hook.parse_args`) is served here with only what it needs;
any other command line, or one the hook's parser does not take, goes to `chrysalisd.cli`.
"""

from __future__ import annotations

import sys

__all__ = ["main"]

HOOK = ["hooks", "claude-code"]


def main() -> None:
    # httpx imports its own command-line client (`httpx._main`: click's help formatting, rich
    # and pygments, ~0.1 s of CPU) whenever those are installed. This process is ours and
    # never runs httpx's CLI: a None entry makes that import fail, which httpx expects.
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    args = sys.argv[1:]
    if args[:2] == HOOK and "-h" not in args and "--help" not in args:
        from .claude_hook import parse_args, run

        options = parse_args(args[2:])
        if options is not None:
            sys.exit(run(options))
    from .cli import main as cli_main

    cli_main()
