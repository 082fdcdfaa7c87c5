"""An embedder switch through the daemon: `embedder = ...` and a restart. The new embedder
(Ollama) does not answer, so the switch stays midway: recall goes on with the old model's
vectors, and GET /v1/status, `chrysalis status` and the inspector's Laptops view say so."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

from tests.daemon_process import DaemonProcess
from tests.eventually import eventually
from tests.test_inspector import browser, page, ready, sign_in  # noqa: F401 - fixtures

NOTES = [
    "the tide tables are pinned above the chart desk",
    "Marguerite mended the jib sail on Thursday",
    "the bilge pump needs a new impeller before spring",
    "we anchored off the lighthouse and watched seals",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_restart_with_another_embedder_switches_in_the_background(
    tmp_path: Path,
    page: Any,  # noqa: F811
) -> None:
    d = DaemonProcess(tmp_path / "data", env={"CHRYSALIS_EMBEDDER": "deterministic:64"})
    d.start()
    try:
        with d.client() as c:
            for text in NOTES:
                c.remember(text, session_id="boat")
            eventually(
                lambda: c.status()["index"]["behind"], timeout=30,
                until=lambda b: b["embed"] == 0 and b["vectors"] == 0, what="the vectors",
            )  # fmt: skip
            before = c.recall("impeller for the pump", k=1, strategy="emb")
    finally:
        d.stop()
    assert before.items and before.items[0].signals["emb"] > 0

    d.env.update(CHRYSALIS_EMBEDDER="ollama:nomic-embed-text",
                 OLLAMA_HOST=f"http://127.0.0.1:{free_port()}")  # fmt: skip
    d.start()
    try:
        with d.client() as c:
            status = c.status()
            switch = status["index"]["switch"]
            assert switch["from"]["model"] == "chrysalis-hash-v1-64"
            assert switch["to"] == {"provider": "ollama", "model": "nomic-embed-text"}
            assert switch["searching"] == "chrysalis-hash-v1-64"
            assert switch["vectors"] == 0 and switch["items"] == 4 and switch["percent"] == 0
            # Ollama is down: recall answers as before, with the old model's vectors
            during = c.recall("impeller for the pump", k=1, strategy="emb")
            assert during.items == before.items
            assert not [n for n in during.notes if n.startswith("emb")], during.notes
            status = eventually(c.status, timeout=30, until=lambda s: s["index"]["last_error"],
                                what="the indexer to report Ollama down")  # fmt: skip
            assert "Ollama" in status["index"]["last_error"]

        out = d.cli("status")
        assert out.returncode == 0, out.stderr
        line = next(x for x in out.stdout.splitlines() if x.startswith("switching"))
        assert line == (
            "switching chrysalis-hash-v1-64 -> nomic-embed-text: 0 of 4 items embedded (0.0%); "
            "recall searches chrysalis-hash-v1-64"
        )
        assert json.loads(d.cli("status", "--json").stdout)["index"]["switch"]["percent"] == 0

        page.goto(sign_in(d) + "#laptops")
        ready(page, "laptops")
        text = page.locator("main").inner_text()
        assert "ollama nomic-embed-text" in text, text
        assert "chrysalis-hash-v1-64 → nomic-embed-text: 0 of 4 items embedded" in text, text
        assert page.errors == [], page.errors
    finally:
        d.stop()
        d.close()
