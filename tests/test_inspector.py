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
import itertools
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
from chrysalis.core.errors import NotFound
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
# Where sigma draws each node, in pixels of the graph's canvas: {id: [x, y]}.
NODE_SPOTS = """() => Object.fromEntries(chrysalisGraph.model.nodes().map(id => {
    const d = chrysalisGraph.renderer.getNodeDisplayData(id);
    const p = chrysalisGraph.renderer.framedGraphToViewport(d);
    return [id, [p.x, p.y]];
}))"""

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
        # pushes only when asked (a bead the page forgets below must not go out unasked)
        c.create_memory("team", remote=f"file://{remote}", push_interval=3600, pull_interval=3600)
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


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium for a module's page tests (a launch costs ~1 s of CPU); each test's page
    is in a browser context of its own, so no cookie, storage or cache passes between them.
    Every module that borrows it skips without the browser, as this one does."""
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1200, "height": 800})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.dialogs = []  # type: ignore[attr-defined]
    page.errors = []  # type: ignore[attr-defined]
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.on("console", lambda m: m.type == "error" and page.errors.append(m.text))
    yield page
    context.close()


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
    beads = page.locator(".bead")
    assert set(beads.evaluate_all("els => els.map(e => e.dataset.session)")) == {
        "morning", "evening", "docs"
    }  # fmt: skip
    # newest first; the time on one line; the ingested chunk names its file and lines
    ids = beads.evaluate_all("els => els.map(e => e.dataset.id)")
    assert ids.index("locker") < ids.index("lantern")
    times = page.locator(".bead time")
    assert all(re.fullmatch(r"\d\d:\d\d", t) for t in times.all_text_contents())
    assert {t["height"] < 30 for t in times.evaluate_all(
        "els => els.map(e => e.getBoundingClientRect().toJSON())")} == {True}  # fmt: skip
    assert "notes.md:1-3" in page.locator(".bead .span").all_text_contents()
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
    names = first.locator(".signals > span").all_text_contents()
    with daemon.client() as c:
        top = c.recall("orchard lanterns", k=20).items[0]
    assert first.get_attribute("data-id") == top.id
    assert sorted(names) == sorted(top.signals), (names, top.signals)
    # the provenance is shown, not folded away; each result is a compact row
    shown = first.locator(".provenance .prov").evaluate_all("els => els.map(e => e.dataset.key)")
    assert set(top.provenance) - {"span_refs"} <= set(shown), (shown, top.provenance)
    page.screenshot(path=str(shots / "search.png"), full_page=True)
    heights = page.locator("article.result").evaluate_all(
        "els => els.map(e => e.getBoundingClientRect().height)"
    )
    assert max(heights) < 110, heights

    ingested = page.locator("article.result", has_text="three lanterns").first
    ingested.locator(".text").click()
    ready(page, "bead")
    assert page.locator("ul.spans li").all_text_contents() == ["notes.md:1-3"]
    page.screenshot(path=str(shots / "bead.png"), full_page=True)

    page.click('nav a[data-view="graph"]')
    ready(page, "graph")
    page.wait_for_selector('main[data-layout="done"]')
    with httpx.Client(transport=httpx.HTTPTransport(uds=str(daemon.socket))) as raw:
        expected = raw.get("http://chrysalis/v1/kg/graph").json()
    drawn = page.evaluate("() => [chrysalisGraph.model.order, chrysalisGraph.model.size]")
    assert drawn == [len(expected["nodes"]), len(expected["edges"])]
    assert page.locator(".kg canvas").count() >= 2  # sigma's WebGL layers
    # every node within the picture, none piled on a border, none on top of another
    spots = page.evaluate(NODE_SPOTS)
    box = page.locator(".kg").bounding_box()
    for x, y in spots.values():
        assert 5 < x < box["width"] - 5 and 5 < y < box["height"] - 5, spots
    pairs = itertools.combinations(spots.values(), 2)
    assert all(abs(a[0] - b[0]) + abs(a[1] - b[1]) > 8 for a, b in pairs), spots

    def holding(at: float) -> int:
        return sum(
            (e["valid_at"] or 0) <= at and (e["invalid_at"] is None or e["invalid_at"] > at)
            for e in expected["edges"]
        )

    # now: all but Bob at Orchard (he left); in 2023 it held too
    assert page.locator(".kg").get_attribute("data-holding") == str(len(expected["edges"]) - 1)
    page.fill('input[name="as-of"]', "1700000000")
    page.dispatch_event('input[name="as-of"]', "input")
    assert page.locator(".kg").get_attribute("data-holding") == str(holding(1_700_000_000))
    assert holding(1_700_000_000) == len(expected["edges"])
    page.fill('input[name="as-of"]', page.get_attribute('input[name="as-of"]', "max") or "")
    page.dispatch_event('input[name="as-of"]', "input")
    x, y = spots["bob"]
    page.mouse.click(box["x"] + x, box["y"] + y)  # a click on Bob, where he is drawn
    page.wait_for_selector('.kg[data-chosen="bob"]')
    page.wait_for_selector('#node-panel[data-node="bob"]')  # its facts, read when chosen
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
    before = page.locator('#memory option[value="default"]').text_content()
    page.locator('.bead[data-id="locker"]').click()
    ready(page, "bead")
    assert "4471" in page.locator("main").inner_text()
    page.click("button.danger")
    page.wait_for_selector(".badge.clean", timeout=30_000)
    places = page.locator("table.receipt td:nth-child(3)").all_text_contents()
    assert places and set(places) == {"gone"}, places
    # what the page shows now is what the memory holds: no text, no Forget, the new count
    shown = page.locator("main").inner_text()
    assert "4471" not in shown and "forgotten" in shown, shown
    assert page.locator("button.danger").count() == 0
    count = int(re.search(r"\((\d+)\)", before or "").group(1))  # type: ignore[union-attr]
    after = page.locator('#memory option[value="default"]')
    eventually(after.text_content, until=lambda t: t == f"default ({count - 1})", timeout=10,
               what="the header's count to drop by one")  # fmt: skip
    page.screenshot(path=str(shots / "forget.png"), full_page=True)
    with daemon.client() as c, pytest.raises(NotFound):
        c.get_bead("locker")
    page.reload()  # and opened again, it is a forgotten bead with its receipt
    ready(page, "bead")
    assert "4471" not in page.locator("main").inner_text()
    page.wait_for_selector(".badge.clean")
    assert page.locator("button.danger").count() == 0
    # the one error is the browser's own line for the 404 that says the bead is gone
    assert [e for e in page.errors if "404" not in e] == [], page.errors


def test_a_bead_forgotten_before_it_was_pushed_is_pending_on_no_other_laptop(
    page: Any, daemon: DaemonProcess
) -> None:
    with daemon.client(memory="team") as team:
        team.sync()  # the other laptop's heartbeat is known; this bead then stays here
        team.remember("the spare key is under the blue flowerpot", id="flowerpot")
        peer = team.status()["sync"]["remote"]["peers"][0]["replica"]
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(sign_in(daemon, "--memory", "team") + "#bead/flowerpot")
    ready(page, "bead")
    page.click("button.danger")
    row = page.locator(f'table.receipt tr[data-place="replica"]:has-text("{peer}")')
    row.wait_for()
    state, why = row.locator("td").nth(2).text_content(), row.locator("td").nth(3).text_content()
    assert state == "gone" and "never received it" in (why or ""), (state, why)
    assert "flowerpot" not in page.locator("main").inner_text().replace("Bead flowerpot", "")
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


def test_a_narrow_window_shows_every_tab_and_the_laptops(
    page: Any, daemon: DaemonProcess, shots: Path
) -> None:
    page.set_viewport_size({"width": 420, "height": 800})
    page.goto(sign_in(daemon, "--memory", "team") + "#laptops")
    ready(page, "laptops")
    for tab in page.locator("nav a").all():
        box = tab.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 420, box
    wide = page.evaluate("() => document.documentElement.scrollWidth")
    assert wide <= 420, wide  # nothing pushes the page sideways; a wide table scrolls itself
    page.screenshot(path=str(shots / "laptops-420.png"), full_page=True)
    page.click('nav a[data-view="timeline"]')
    ready(page, "timeline")
    times = page.locator(".bead time").evaluate_all(
        "els => els.map(e => e.getBoundingClientRect().height)"
    )
    assert times and max(times) < 30, times  # the time on one line
    page.screenshot(path=str(shots / "timeline-420.png"), full_page=True)
    assert page.errors == [], page.errors
