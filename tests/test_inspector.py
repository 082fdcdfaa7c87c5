"""The memory inspector (`chrysalis ui`) in a real headless browser: Debian's chromium driven by
Playwright, against a daemon the test starts. Sign in through the page `chrysalis ui` hands the
browser (or the address --no-browser prints), see the timeline, search and read each result's
signals, open a bead and its span refs, open the graph, forget a bead and watch its receipt
turn clean, switch memories. And the attacks: no session, a wrong or old token, a foreign Host
(DNS rebinding), a foreign Origin, a CORS read: all refused (the red team's attacks of issue 28
are in test_inspector_attacks).

``CHRYSALIS_UI_SCREENSHOTS=docs/ui`` makes the run write each view's screenshot there (they
are checked in when they change); otherwise they go to the test's tmp dir.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from chrysalis import Memory
from chrysalis.errors import NotFound
from chrysalis.sync import Sync

from .daemon_process import DaemonProcess, DaemonThread
from .eventually import eventually

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# As the machine's notes say: without the background-networking flags, Chromium keeps trying
# to reach Google's hosts, which this closed network refuses.
CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
HOSTILE = '<img src=x onerror="alert(1)"> and <script>alert(2)</script> in a bead'
TIMEOUT_MS = 20_000

sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (.ci/run installs it)"
)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    root = tmp_path_factory.mktemp("inspector")
    d = DaemonThread(root / "data", env={"CHRYSALIS_SCRUB_DELAY": "0.2"}).start()
    with d.client() as c:
        c.remember("the lantern hangs in the harbour office", session_id="morning", id="lantern")
        c.remember("we moved the copper kettle to the shelf", session_id="morning", id="kettle")
        c.remember(HOSTILE, session_id="evening", id="hostile")
        c.remember("forget me: the old locker code was 4471", session_id="evening", id="locker")
        c.ingest(
            text="# Notes\nthe orchard lantern list\nthree lanterns for the orchard path\n",
            source="notes.md",
            session_id="docs",
        )
        c.add_fact("Alice", "works at", "Harbour Office", valid_at=1_700_000_000)
        c.add_fact("Alice", "likes", "copper kettles")
        c.add_fact("Bob", "works at", "Orchard", valid_at=1_690_000_000, invalid_at=1_760_000_000)
        c.add_fact("Bob", "knows", "Alice")
        # team syncs through a folder with a second laptop, so its Laptops view has a peer
        remote = root / "remote"
        remote.mkdir()
        c.create_memory("team", remote=f"file://{remote}")
    with Memory.open(root / "other-laptop", sync=False) as other:
        other.append_bead("the other laptop keeps the violin room keys", id="keys")
        Sync(other, f"file://{remote}").push()
    with d.client(memory="team") as team:
        team.remember("the team standup is at nine in the violin room", id="standup")
        team.sync()
    yield d
    d.stop()
    d.close()


def sign_in(daemon: DaemonProcess, *flags: str) -> str:
    """A fresh one-time sign-in address, as ``chrysalis [flags] ui --no-browser`` prints it."""
    out = daemon.cli(*flags, "ui", "--no-browser", "--json")
    assert out.returncode == 0, out.stderr
    url: str = json.loads(out.stdout)["url"]
    assert url.startswith("http://127.0.0.1:") and "/signin?token=" in url
    assert urlsplit(url).query.split("=", 1)[1].split("&")[0] not in daemon.output()  # not logged
    return url


@pytest.fixture
def address(daemon: DaemonProcess) -> str:
    return sign_in(daemon)


@pytest.fixture
def signin_page(daemon: DaemonProcess, tmp_path: Path) -> str:
    """What `chrysalis ui` hands the browser: a local page that posts its one-time token."""
    given, browser = tmp_path / "given", tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf %s "$1" > {given}\n')
    browser.chmod(0o700)
    out = subprocess.run(
        [sys.executable, "-m", "chrysalisd", "ui"],
        env={**daemon.env, "BROWSER": str(browser)},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 0 and "open in your browser" in out.stdout, out.stderr
    page = given.read_text()
    assert page.startswith("file:///") and "token" not in page
    return page


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    wanted = os.environ.get("CHRYSALIS_UI_SCREENSHOTS")
    path = Path(wanted) if wanted else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def page() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1200, "height": 800})
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.dialogs = []  # type: ignore[attr-defined]
        page.errors = []  # type: ignore[attr-defined]
        page.on("pageerror", lambda exc: page.errors.append(str(exc)))
        page.on("console", lambda m: m.type == "error" and page.errors.append(m.text))
        yield page
        context.close()
        browser.close()


def ready(page: Any, view: str) -> None:
    page.wait_for_selector(f'main[data-ready="{view}"]')
    assert page.locator("#error").is_hidden(), page.locator("#error").text_content()


def test_the_views_in_a_browser(
    page: Any, signin_page: str, daemon: DaemonProcess, shots: Path
) -> None:
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(signin_page)  # it posts the token and lands on the inspector, signed in
    ready(page, "timeline")
    assert urlsplit(page.url).path == "/" and not urlsplit(page.url).query
    assert page.context.cookies() == []  # the session is in sessionStorage, not a cookie
    assert page.locator('meta[name="chrysalis-session"]').count() == 0  # nor left in the page
    page.reload()  # a reload keeps the session (this tab's own)
    ready(page, "timeline")
    sessions = page.locator("section.session")
    assert set(sessions.evaluate_all("els => els.map(e => e.dataset.session)")) == {
        "morning", "evening", "docs"
    }  # fmt: skip
    # markup in a bead is shown as text, never run
    assert page.locator('.bead[data-id="hostile"] .text').text_content().startswith(HOSTILE)
    assert page.dialogs == [] and page.locator("img").count() == 0
    page.screenshot(path=str(shots / "timeline.png"), full_page=True)

    page.click('nav a[data-view="search"]')
    ready(page, "search")
    page.fill('input[name="q"]', "orchard lanterns")
    page.press('input[name="q"]', "Enter")
    page.wait_for_selector("article.result")
    ready(page, "search")
    first = page.locator("article.result").first
    bars = first.locator(".signals .bar span")
    assert bars.count() >= 2
    widths = bars.evaluate_all("els => els.map(e => parseFloat(e.style.width))")
    assert all(0 <= w <= 100 for w in widths) and max(widths) > 0
    names = first.locator(".signals > span:nth-child(3n+1)").all_text_contents()
    with daemon.client() as c:
        top = c.recall("orchard lanterns", k=10).items[0]
    assert first.get_attribute("data-id") == top.id
    assert sorted(names) == sorted(top.signals), (names, top.signals)
    first.locator("details summary").click()
    assert first.locator("dl.meta dt").count() >= 1  # the provenance
    page.screenshot(path=str(shots / "search.png"), full_page=True)

    ingested = page.locator("article.result", has_text="three lanterns").first
    ingested.locator(".text").click()
    ready(page, "bead")
    assert page.locator("ul.spans li").all_text_contents() == ["notes.md:1-3"]
    page.screenshot(path=str(shots / "bead.png"), full_page=True)

    page.click('nav a[data-view="graph"]')
    ready(page, "graph")
    with httpx.Client(transport=httpx.HTTPTransport(uds=str(daemon.socket))) as raw:
        expected = raw.get("http://chrysalis/v1/kg/graph").json()
    assert page.locator("svg.kg circle").count() == len(expected["nodes"])
    assert page.locator("svg.kg line").count() == len(expected["edges"])
    assert page.locator("svg.kg line.invalid").count() == 1  # Bob stopped working at Orchard
    page.locator('svg.kg circle[data-id="bob"]').click()
    facts = page.locator("#node-panel ul.facts li").all_text_contents()
    assert any("works at" in f and "Orchard" in f and "now" not in f for f in facts), facts
    page.screenshot(path=str(shots / "graph.png"), full_page=True)

    page.click('nav a[data-view="laptops"]')
    ready(page, "laptops")
    replica = daemon.once("status")["replica_id"]
    assert replica in page.locator("main").text_content()
    assert "No remote: this memory lives on this laptop only." in page.locator("main").inner_text()
    assert page.errors == [], page.errors


def test_forget_from_the_page_shows_its_receipt_turn_clean(
    page: Any, address: str, daemon: DaemonProcess, shots: Path
) -> None:
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(address)
    ready(page, "timeline")
    page.locator('.bead[data-id="locker"]').click()
    ready(page, "bead")
    page.click("button.danger")
    page.wait_for_selector(".badge.clean", timeout=30_000)
    places = page.locator("table.receipt td:nth-child(3)").all_text_contents()
    assert places and set(places) == {"gone"}, places
    page.screenshot(path=str(shots / "forget.png"), full_page=True)
    with daemon.client() as c, pytest.raises(NotFound):
        c.get_bead("locker")
    assert page.errors == [], page.errors


def test_one_view_per_memory(page: Any, address: str, daemon: DaemonProcess) -> None:
    page.goto(address)
    ready(page, "timeline")
    page.select_option("#memory", "team")
    page.wait_for_selector('.bead[data-id="standup"]')
    assert page.locator(".bead").count() == 2  # and the other laptop's, pulled
    page.goto(sign_in(daemon, "--memory", "team"))  # `chrysalis --memory team ui` opens it there
    page.wait_for_selector('.bead[data-id="standup"]')
    assert page.locator("#memory").input_value() == "team"


def test_laptops_shows_the_remote_and_the_other_laptop(
    page: Any, address: str, daemon: DaemonProcess, shots: Path
) -> None:
    with daemon.client(memory="team") as team:
        # what the memory wrote after its first sync (its entities renamed under the
        # remote's graph key) goes out with the next push: push until nothing waits
        def pending() -> int:
            team.sync()
            return int(team.status()["sync"]["remote"]["pending_ops"])

        eventually(pending, timeout=20, what="team to have nothing to push", until=lambda n: n == 0)
    page.goto(sign_in(daemon, "--memory", "team") + "#laptops")
    ready(page, "laptops")
    with daemon.client(memory="team") as team:
        remote = team.status()["sync"]["remote"]
    text = page.locator("main").inner_text()
    assert remote["url"] in text and "0 ops to push" in text, text
    peers = page.locator("table.peers tr").all_inner_texts()
    assert len(peers) == 2 and len(remote["peers"]) == 1  # a header and the other laptop
    other = remote["peers"][0]
    assert other["replica"] in peers[1] and "\t0\t" in peers[1]  # its lag: nothing missing
    page.screenshot(path=str(shots / "laptops.png"), full_page=True)
    assert page.errors == [], page.errors


# ---- the attacks ------------------------------------------------------------------------


@contextlib.contextmanager
def signed_in(address: str) -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10.0) as client:
        r = client.get(address)
        assert r.status_code == 200 and "set-cookie" not in r.headers
        found = re.search(r'<meta name="chrysalis-session" content="([^"]+)">', r.text)
        assert found, r.text
        client.headers["X-Chrysalis-Session"] = found.group(1)
        yield client


def test_requests_without_the_token_or_from_elsewhere_are_refused(
    address: str, daemon: DaemonProcess
) -> None:
    port = urlsplit(address).port
    base = f"http://127.0.0.1:{port}"
    with httpx.Client(timeout=10.0) as stranger:
        for path in ("/api/v1/status", "/api/v1/beads", "/api/v1/memories"):
            r = stranger.get(base + path)
            assert r.status_code == 401, (path, r.status_code)
            assert "chrysalis ui" in r.json()["error"]["message"]
            guessed = stranger.get(base + path, headers={"X-Chrysalis-Session": "A" * 43})
            assert guessed.status_code == 401, (path, guessed.status_code)
        for path in ("/", "/static/app.js"):  # the app itself holds nothing secret
            r = stranger.get(base + path)
            assert r.status_code == 200 and '<meta name="chrysalis-session"' not in r.text
        wrong = stranger.get(base + "/signin?token=" + "A" * 43)
        assert wrong.status_code == 401 and "chrysalis-session" not in wrong.text
        assert "run `chrysalis ui` again" in wrong.json()["error"]["message"]

    with signed_in(address) as me:
        assert me.get(base + "/api/v1/status").json()["replica_id"]
        # DNS rebinding: a page of evil.example that resolves to 127.0.0.1 sends its own Host
        rebound = me.get(base + "/api/v1/beads", headers={"Host": f"evil.example:{port}"})
        assert rebound.status_code == 403 and "lantern" not in rebound.text
        # another site's page sending the session: its Origin gives it away
        before = daemon.once("status")["counts"]["beads"]
        forged = me.delete(base + "/api/v1/beads/kettle", headers={"Origin": "http://evil.example"})
        assert forged.status_code == 403
        assert daemon.once("status")["counts"]["beads"] == before
        # no CORS, ever: no other origin may read an answer
        for origin in ("http://evil.example", f"http://127.0.0.1:{port}"):
            r = me.get(base + "/api/v1/status", headers={"Origin": origin})
            assert not [h for h in r.headers if h.lower().startswith("access-control-")]
        preflight = me.options(
            base + "/api/v1/beads",
            headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"},
        )
        assert preflight.status_code == 403
        # the page's own requests go through, without the Origin the socket API refuses
        own = me.post(
            base + "/api/v1/retrieve",
            json={"query": "lantern", "k": 3},
            headers={"Origin": f"http://127.0.0.1:{port}"},
        )
        assert own.status_code == 200, own.text
        assert me.post(base + "/api/v1/ui").status_code == 403  # a sign-in: socket only
        page = me.get(base + "/")
        assert "default-src 'self'" in page.headers["content-security-policy"]
        assert page.headers["x-frame-options"] == "DENY"


def test_an_old_token_stops_working_when_the_daemon_restarts(tmp_path: Path) -> None:
    d = DaemonThread(tmp_path / "data").start()
    try:
        first = json.loads(d.cli("ui", "--no-browser", "--json").stdout)["url"]
        assert d.stop() == 0  # the inspector closes with the daemon
        d.start()
        second = json.loads(d.cli("ui", "--no-browser", "--json").stdout)["url"]
        assert first != second
        old, new = urlsplit(first), urlsplit(second)
        with httpx.Client(timeout=10.0) as c:
            r = c.get(f"http://127.0.0.1:{new.port}/signin?{old.query}")
            assert r.status_code == 401 and "chrysalis-session" not in r.text
            assert "not one this daemon gave" in r.json()["error"]["message"]
            if old.port != new.port:  # and the old listener is gone
                with pytest.raises(httpx.ConnectError):
                    c.get(f"http://127.0.0.1:{old.port}/signin?{old.query}")
    finally:
        d.stop()
        d.close()
