"""Fault injection for the crash tests: ``CHRYSALIS_FAULT=<point>`` makes the process SIGKILL
itself when it reaches that point (e.g. ``after-segment-put``, between a segment landing in the
remote and the cursor moving). Unset, each check is one string comparison."""

from __future__ import annotations

import logging
import os
import signal

log = logging.getLogger(__name__)
POINT = os.environ.get("CHRYSALIS_FAULT", "")


def fault(point: str) -> None:
    if point == POINT:
        log.warning("fault injection: SIGKILL at %s", point)
        os.kill(os.getpid(), signal.SIGKILL)
