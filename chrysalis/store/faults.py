"""Fault injection for the crash tests: ``CHRYSALIS_FAULT=<point>`` makes the process SIGKILL
itself when it reaches that point (e.g. ``after-segment-put``, between a segment landing in the
remote and the cursor moving). Read at each check (a few per push or mirror send, never per
write), so the variable is the process's as it runs, not as it imported this module."""

from __future__ import annotations

import logging
import os
import signal

log = logging.getLogger(__name__)


def fault(point: str) -> None:
    if point == os.environ.get("CHRYSALIS_FAULT"):
        log.warning("fault injection: SIGKILL at %s", point)
        os.kill(os.getpid(), signal.SIGKILL)
