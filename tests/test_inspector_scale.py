"""The inspector at a realistic size (issue 34), in the real Chromium: a memory of 10,000 beads
and a knowledge graph of 5,000 entities, built through the library (bench/inspector_data.py),
served by a real daemon.

- the timeline pages back through every bead (a button and scrolling), newest first, the
  beads stamped at one same time split across pages neither lost nor doubled;
- Markdown is rendered, and no HTML from a bead runs: a script, an image's onerror, a
  javascript: link, clicked, set nothing;
- the graph draws all 5,000 nodes laid out (not piled on the borders), finds a node by name,
  centres its neighbourhood, shows its facts and evidence, and hides a type from the legend;
- search results are compact rows with their provenance shown.

Screenshots go to ``CHRYSALIS_UI_SCREENSHOTS`` (docs/ui) as in test_inspector.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from .daemon_process import DaemonProcess
from .test_inspector import NODE_SPOTS, browser, page, ready, shots, sign_in

__all__ = ["browser", "page", "shots"]  # fixtures, used by name

# Building the 10,000-bead memory takes half a minute per worker that runs one of these: they
# run in CI's second step (`pytest -m slow`, .ci/run), beside the soak and the S3 copies.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
BEADS, NODES = 10_000, 5_000
FIRST_SHOWN = 1_000  # app.js: the nodes drawn zoomed out
TIES = 260  # beads stamped at one same time, newer than the rest: a page boundary falls inside
HOSTILE = {
    "x-script": "a note <script>window.pwned = 'script'</script> with a script",
    "x-img": "a picture <img src=x onerror=\"window.pwned = 'img'\"> that never loads",
    "x-link": "a [tempting link](javascript:window.pwned='link') and **bold** words",
    "x-image-md": "![a cat](javascript:window.pwned='image') and <iframe src=x></iframe>",
    "x-html-link": "<a href=\"javascript:window.pwned='a'\">raw anchor</a> in `code <b>x</b>`",
}


def _data_module() -> Any:
    spec = importlib.util.spec_from_file_location(
        "inspector_data", ROOT / "bench" / "inspector_data.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    root = tmp_path_factory.mktemp("inspector-scale")
    from chrysalis import Memory

    built = _data_module().build(root / "data", beads=BEADS, nodes=NODES)
    assert built["stats"]["nodes"] == NODES
    with Memory.open(root / "data", sync=False, extractor="none") as m:
        last = m.last_beads(1)[0].ts
        m.append_beads(
            [{"id": f"tie{i:03d}", "ts": last + 3600, "content": f"tied bead {i}",
              "session_id": "ties"} for i in range(TIES)]
            + [{"id": k, "ts": last + 7200 + n, "content": v, "session_id": "hostile"}
               for n, (k, v) in enumerate(HOSTILE.items())]
        )  # fmt: skip
    d = DaemonProcess(root / "data").start()
    yield d
    d.stop()
    d.close()


def test_the_timeline_pages_back_through_ten_thousand_beads(
    page: Any, big: DaemonProcess, shots: Path
) -> None:
    page.goto(sign_in(big))
    ready(page, "timeline")
    loaded = page.locator(".beads")
    assert loaded.get_attribute("data-loaded") == "200"
    assert "200 of 10,265 beads" in page.locator("main h2").first.inner_text()
    page.screenshot(path=str(shots / "timeline-10k.png"))
    page.click("button.more")  # the boundary falls among the tied beads
    page.wait_for_selector('.beads[data-loaded="400"]')
    page.locator("button.more").scroll_into_view_if_needed()  # scrolling loads the next
    page.wait_for_selector('.beads[data-loaded="600"]')
    shown = page.locator(".bead").evaluate_all("els => els.map(e => e.dataset.id)")
    with big.client() as c:
        newest = [b.id for b in reversed(c.last_beads(600))]
    assert len(shown) == len(set(shown)) == 600
    assert set(shown) == set(newest)  # none lost at a page boundary, none twice
    assert [x for x in shown if x.startswith("tie")] == [x for x in newest if x.startswith("tie")]
    # a session alone, from its link
    page.locator('.bead[data-session="ties"] a.session').first.click()
    page.wait_for_selector('.beads[data-loaded="200"]')
    ready(page, "timeline")
    assert set(page.locator(".bead").evaluate_all("els => els.map(e => e.dataset.session)")) == {
        "ties"
    }  # fmt: skip
    page.mouse.wheel(0, 100_000)  # to its end: the rest loads
    page.wait_for_selector(f'.beads[data-loaded="{TIES}"]')
    assert page.locator("button.more").is_hidden()  # the end of the session
    assert page.errors == [], page.errors


def test_markdown_is_rendered_and_no_html_from_a_bead_runs(
    page: Any, big: DaemonProcess, shots: Path
) -> None:
    page.on("dialog", lambda dialog: dialog.dismiss())
    page.goto(sign_in(big))
    ready(page, "timeline")
    for bead_id in HOSTILE:
        row = page.locator(f'.bead[data-id="{bead_id}"]')
        assert row.count() == 1
    link = page.locator('.bead[data-id="x-link"] .text')
    assert link.locator("strong").text_content() == "bold"
    assert link.locator("a").count() == 0  # a javascript: target is shown as text
    assert "javascript:window.pwned" in (link.text_content() or "")
    assert "<script>" in (page.locator('.bead[data-id="x-script"] .text').text_content() or "")
    assert page.locator("main img, main script, main iframe").count() == 0
    page.locator('.bead[data-id="x-html-link"] .text').click()  # opens the bead
    ready(page, "bead")
    page.locator(".content").click()
    assert page.locator(".content code").text_content() == "code <b>x</b>"
    page.goto(page.url.split("#")[0] + "#bead/x-link")
    ready(page, "bead")
    page.locator(".content").get_by_text("tempting link", exact=False).click()
    # a Markdown bead, rendered
    with big.client() as c:
        md = next(b for b in c.last_beads(400) if b.content.startswith("## Plan"))
    page.goto(page.url.split("#")[0] + f"#bead/{md.id}")
    ready(page, "bead")
    assert page.locator(".content h4").count() == 1 and page.locator(".content li").count() == 3
    assert page.locator(".content a").get_attribute("href", timeout=1000).startswith("https://")
    page.screenshot(path=str(shots / "bead-markdown.png"))
    assert page.evaluate("() => window.pwned") is None
    assert page.errors == [], page.errors


def test_the_graph_of_five_thousand_entities(page: Any, big: DaemonProcess, shots: Path) -> None:
    page.goto(sign_in(big) + "#graph")
    ready(page, "graph")
    page.wait_for_selector("main[data-drawn]")  # the first picture, before the layout
    # level of detail: the 1,000 most connected are drawn zoomed out, the rest on zoom
    assert page.evaluate("() => chrysalisGraph.drawn") == NODES
    assert page.evaluate("() => chrysalisGraph.model.order") == FIRST_SHOWN
    assert "showing the 1,000 most connected" in page.locator(".lod").inner_text()
    page.wait_for_selector('main[data-layout="done"]', timeout=120_000)
    spots = page.evaluate(NODE_SPOTS)
    box = page.locator(".kg").bounding_box()
    edge = [
        p for p in spots.values() if min(p[0], p[1], box["width"] - p[0], box["height"] - p[1]) < 3
    ]
    assert len(edge) < FIRST_SHOWN * 0.01, len(edge)  # not piled along the borders
    distinct = {(round(x), round(y)) for x, y in spots.values()}
    assert len(distinct) > FIRST_SHOWN * 0.9, len(distinct)  # spread, not stacked
    page.screenshot(path=str(shots / "graph-5k.png"))

    with httpx.Client(transport=httpx.HTTPTransport(uds=str(big.socket))) as raw:
        graph = raw.get(f"http://chrysalis/v1/kg/graph?limit={NODES}").json()  # every fact
    degree: dict[str, int] = {}
    for e in graph["edges"]:
        degree[e["source"]] = degree.get(e["source"], 0) + 1
    # zoomed in, every node is drawn
    for _ in range(3):
        page.click('button[title="zoom in"]')
        page.wait_for_timeout(400)
    page.wait_for_selector(f'.kg[data-shown="{NODES}"]')
    assert page.evaluate("() => chrysalisGraph.model.order") == NODES
    assert page.locator(".lod").inner_text() == ""
    page.click('button[title="see it all"]')
    page.wait_for_selector(f'.kg[data-shown="{FIRST_SHOWN}"]')

    # a node of few facts, not drawn zoomed out, found by its name: it and its neighbours are
    page.goto(sign_in(big) + "#graph")
    ready(page, "graph")
    assert page.evaluate("() => chrysalisGraph.model.order") == FIRST_SHOWN
    quiet = next(n for n in reversed(graph["nodes"]) if degree.get(n["id"]))  # a fact or two
    assert not page.evaluate("id => chrysalisGraph.model.hasNode(id)", quiet["id"])
    page.fill('input[name="node"]', quiet["name"])
    page.press('input[name="node"]', "Enter")
    page.wait_for_selector(f'#node-panel[data-node="{quiet["id"]}"]')
    shown = page.evaluate(
        """id => [id, ...chrysalisGraph.model.neighbors(id)].every(n =>
            !chrysalisGraph.renderer.getNodeDisplayData(n).hidden)""",
        quiet["id"],
    )
    assert shown

    # find an entity by name: it is chosen, its neighbourhood centred, its facts listed
    hub = max(degree, key=lambda n: degree[n])
    name = next(n["name"] for n in graph["nodes"] if n["id"] == hub)
    page.fill('input[name="node"]', name)
    page.press('input[name="node"]', "Enter")
    page.wait_for_selector(f'.kg[data-chosen="{hub}"]')
    page.wait_for_selector(f'#node-panel[data-node="{hub}"]')
    facts = page.locator("#node-panel ul.facts li")
    assert facts.count() >= degree[hub]
    page.wait_for_timeout(600)  # the camera's move
    near = page.evaluate(
        """id => [id, ...chrysalisGraph.model.neighbors(id)].map(n => {
            const r = chrysalisGraph.renderer;
            return r.framedGraphToViewport(r.getNodeDisplayData(n));
        })""",
        hub,
    )
    assert all(0 <= p["x"] <= box["width"] and 0 <= p["y"] <= box["height"] for p in near), near
    page.screenshot(path=str(shots / "graph-5k-focus.png"))
    evidence = page.locator("#node-panel a.evidence").first
    target = evidence.text_content()
    evidence.click()
    ready(page, "bead")
    assert target in page.locator("main h2").first.inner_text()
    page.go_back()
    ready(page, "graph")
    page.wait_for_selector('main[data-layout="done"]')  # at once: the drawing is unchanged
    # a type switched off in the legend leaves the picture
    person = page.locator('.legend input[data-type="person"]')
    person.uncheck()
    people = page.evaluate(
        """() => chrysalisGraph.model.filterNodes((n, a) => a.kind === "person").map(n =>
            chrysalisGraph.renderer.getNodeDisplayData(n).hidden)"""
    )
    assert people and all(people)
    others = page.evaluate(
        """() => chrysalisGraph.model.filterNodes((n, a) => a.kind !== "person").filter(n =>
            !chrysalisGraph.renderer.getNodeDisplayData(n).hidden).length"""
    )
    assert others > 0
    assert page.errors == [], page.errors


def test_the_graph_is_drawn_again_from_what_the_page_holds(page: Any, big: DaemonProcess) -> None:
    """Leaving the graph and coming back costs a 304 and no layout; a write to the memory
    makes the page read the new drawing."""
    page.goto(sign_in(big) + "#graph")
    ready(page, "graph")
    page.wait_for_selector('main[data-layout="done"]', timeout=120_000)
    answers: list[int] = []
    page.on("response", lambda r: answers.append(r.status) if "/kg/graph/draw" in r.url else None)
    page.click('nav a[data-view="timeline"]')
    ready(page, "timeline")
    page.click('nav a[data-view="graph"]')
    ready(page, "graph")
    assert page.locator("main").get_attribute("data-layout") == "done"  # no layout to run
    assert answers == [304], answers
    with big.client() as c:
        c.add_fact("Ottilie Brandt", "maintains", "Project Heron 1")
    page.click('nav a[data-view="timeline"]')
    ready(page, "timeline")
    page.click('nav a[data-view="graph"]')
    ready(page, "graph")
    assert answers == [304, 200], answers
    page.fill('input[name="node"]', "Ottilie Brandt")
    page.press('input[name="node"]', "Enter")
    page.wait_for_selector('#node-panel[data-node="ottilie-brandt"]')
    assert "maintains" in page.locator("#node-panel").inner_text()
    assert page.errors == [], page.errors


def test_search_results_are_compact_rows(page: Any, big: DaemonProcess, shots: Path) -> None:
    page.goto(sign_in(big) + "#search/who is flying to Lisbon for the workshop")
    ready(page, "search")
    page.wait_for_selector("article.result")
    rows = page.locator("article.result")
    assert rows.count() == 20
    heights = rows.evaluate_all("els => els.map(e => e.getBoundingClientRect().height)")
    assert max(heights) < 110, heights
    tops = rows.evaluate_all("els => els.map(e => e.getBoundingClientRect().top)")
    in_view = [h for h, top in zip(heights, tops, strict=True) if top + h < 800]
    assert len(in_view) >= 7, heights
    assert rows.first.locator(".provenance .prov").count() >= 3
    page.screenshot(path=str(shots / "search-10k.png"))
    assert page.errors == [], page.errors


def test_the_bench_runs_quick() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "inspector_bench.py"), "--quick"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    assert "graph laid out" in out.stdout and "timeline first page" in out.stdout, out.stdout
