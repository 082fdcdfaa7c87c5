"""Round 3's red team on the inspector's Markdown (markdown.js), in the real Chromium: a bead's
text may not freeze or break the page that shows it, and the vendored graph bundle is the
one its checksum names, served as JavaScript with nosniff.

Before the fixes: a bead of 200,000 characters of unclosed ``**`` (or ``[a](``, or ``_``)
held the page's one thread for minutes (each opening scanned to the end of its paragraph:
quadratic), and a line of 20,000 ``>`` threw ``RangeError: Maximum call stack size
exceeded``, so the bead could not be shown at all. Worse, any bare address (``see
https://...``) did the same: the label of a bare link was read as Markdown again, matched
itself, and so on, so one such bead among the newest 200 broke the whole timeline."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from .daemon_process import DaemonProcess
from .test_inspector import browser, page, ready, sign_in

__all__ = ["browser", "page"]  # fixtures, used by name

VENDOR = Path(__file__).resolve().parent.parent / "daemon" / "chrysalisd" / "static" / "vendor"
SIZE = 200_000  # characters: a pasted log, well under a bead's 8 MiB
HEAVY = {
    "x-bold": "**a " * (SIZE // 4),
    "x-under": "_a " * (SIZE // 3),
    "x-link": "[a](" * (SIZE // 4),
    "x-code": "`a " * (SIZE // 3),
    "x-http": "http://" * (SIZE // 7),
    "x-quote": ">" * 20_000 + " the deepest quote",
    "x-plain-url": "the runbook is at https://wiki.example.org/orchard/pumps for the night shift",
    "x-mixed": ("> **bold _and [a link](https://example.org/" + "x" * 3000 + ")\n") * 50,
}


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    d = DaemonProcess(tmp_path_factory.mktemp("red19-ui") / "data").start()
    with d.client() as c:
        for bead_id, text in HEAVY.items():
            c.remember(text, session_id="heavy", id=bead_id)
    yield d
    d.stop()
    d.close()


def test_no_bead_text_freezes_or_breaks_the_page(page: Any, daemon: DaemonProcess) -> None:
    page.set_default_timeout(10_000)  # a bead shows in well under a second; before: minutes
    page.goto(sign_in(daemon))
    ready(page, "timeline")
    assert page.locator('.bead[data-session="heavy"]').count() == len(HEAVY)
    for bead_id, text in HEAVY.items():
        page.goto(page.url.split("#")[0] + f"#bead/{bead_id}")
        ready(page, "bead")
        shown = page.locator(".content").text_content() or ""
        assert len(shown) > min(len(text), 10_000) // 2, bead_id  # the text is there
        if bead_id == "x-plain-url":
            link = page.locator(".content a")
            assert link.get_attribute("href") == "https://wiki.example.org/orchard/pumps"
    assert page.locator(".content blockquote").count() <= 20  # depth is bounded
    assert page.errors == [], page.errors


def test_the_vendored_graph_bundle_is_the_one_its_checksum_names(daemon: DaemonProcess) -> None:
    """`scripts/vendor_ui.sh --check` needs npm; this needs nothing: the shipped bundle must
    hash to graph.sha256, and the daemon must serve exactly it, as JavaScript, nosniff."""
    digest, name = (VENDOR / "graph.sha256").read_text().split()
    body = (VENDOR / "graph.js").read_bytes()
    assert name == "graph.js" and hashlib.sha256(body).hexdigest() == digest
    address = sign_in(daemon).split("/signin")[0]
    got = httpx.get(f"{address}/static/vendor/graph.js", timeout=10)
    assert got.status_code == 200 and got.content == body
    assert got.headers["content-type"].split(";")[0] in (
        "text/javascript",
        "application/javascript",
    )
    assert got.headers["x-content-type-options"] == "nosniff"
    csp = got.headers["content-security-policy"]
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp and "default-src 'self'" in csp
