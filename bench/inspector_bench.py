"""What the inspector costs at a realistic size: 10,000 beads and 5,000 entities.

    .venv/bin/python bench/inspector_bench.py                 # 10,000 beads, 5,000 nodes
    .venv/bin/python bench/inspector_bench.py --quick         # 600 beads, 300 nodes

Builds the memory through the library (bench/inspector_data.py), starts a daemon on it, and
prints, each the median of ``--runs``:

- the API answers the page reads: ``GET /v1/kg/graph?limit=5000`` (time and bytes) and
  ``GET /v1/beads?limit=200`` (the timeline's first page), over the Unix socket;
- the compact drawing the page reads, ``GET /v1/kg/graph/draw?limit=5000``: made (after a
  write, so not cached), cached, and a 304 for the ETag the page holds;
- in Debian's Chromium (Playwright, headless, SwiftShader WebGL): the timeline's first page
  from navigation to drawn, the next page, the graph (after a write, so the daemon makes the
  drawing anew) from navigation to its first picture
  and to laid out (the bounded ForceAtlas2 worker done), when the page is interactive (the
  end of its last main-thread task of 50 ms or more) and its longest task once drawn, the
  graph again after leaving it (304, layout kept), and a search that focuses a node's
  neighbourhood.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from inspector_data import build  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


# Every main-thread task of 50 ms or more, as [start, end] in the page's clock (Long Tasks
# API; an init script runs before the page's own, and is not subject to its CSP).
LONG_TASKS = """
window.__tasks = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) window.__tasks.push([e.startTime, e.startTime + e.duration]);
}).observe({ type: "longtask", buffered: true });
"""
TASKS = """() => {
  const drawn = +document.querySelector("main").dataset.drawn;
  const tasks = window.__tasks.filter(([, end]) => end <= performance.now());
  const last = Math.max(0, ...tasks.map(([, end]) => end));
  const after = tasks.filter(([start]) => start >= drawn).map(([s, e]) => e - s);
  return [drawn, last, Math.max(0, ...after)];
}"""


def median_ms(times: list[float]) -> str:
    return f"{statistics.median(times) * 1000:8.0f} ms (slowest {max(times) * 1000:.0f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--beads", type=int, default=10_000)
    ap.add_argument("--nodes", type=int, default=5_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="600 beads, 300 nodes, one run")
    args = ap.parse_args()
    if args.quick:
        args.beads, args.nodes, args.runs = 600, 300, 1
    from playwright.sync_api import sync_playwright

    root = Path(tempfile.mkdtemp(prefix="inspector-bench-"))
    sock = Path(tempfile.mkdtemp(prefix="chr-", dir="/tmp")) / "d.sock"
    env = {**os.environ, "CHRYSALIS_SOCKET": str(sock), "CHRYSALIS_EMBEDDER": "deterministic",
           "CHRYSALIS_EXTRACTOR": "none", "CHRYSALIS_DURABLE": "false"}  # fmt: skip
    daemon = None
    try:
        t0 = time.perf_counter()
        build(root / "data", beads=args.beads, nodes=args.nodes)
        print(f"built {args.beads:,} beads, {args.nodes:,} entities in "
              f"{time.perf_counter() - t0:.1f} s (library, not timed below)")  # fmt: skip
        log = open(root / "daemon.log", "w")  # noqa: SIM115 - closed in finally
        daemon = subprocess.Popen(
            [sys.executable, "-m", "chrysalisd", "daemon", "--data-dir", str(root / "data")],
            env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        transport = httpx.HTTPTransport(uds=str(sock))
        with httpx.Client(transport=transport, base_url="http://chrysalis", timeout=30) as api:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if api.get("/_ping").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise SystemExit("the daemon did not start: see " + str(root / "daemon.log"))
                time.sleep(0.1)
            graph_t, beads_t, size = [], [], 0
            draw: dict[str, list[float]] = {"cold": [], "cached": [], "304": []}
            draw_size = 0
            for run in range(args.runs):
                t = time.perf_counter()
                r = api.get(f"/v1/kg/graph?limit={args.nodes}")
                graph_t.append(time.perf_counter() - t)
                size = len(r.content)
                t = time.perf_counter()
                api.get("/v1/beads?limit=200")
                beads_t.append(time.perf_counter() - t)
                # a new fact: a new version, so the next drawing is made, not cached
                api.post("/v1/kg/facts", json={"subject": f"Bench {run}", "predicate": "ran",
                                               "object": "the inspector bench"})  # fmt: skip
                url = f"/v1/kg/graph/draw?limit={args.nodes}"
                t = time.perf_counter()
                r = api.get(url)
                draw["cold"].append(time.perf_counter() - t)
                draw_size = len(r.content)
                t = time.perf_counter()
                api.get(url)
                draw["cached"].append(time.perf_counter() - t)
                t = time.perf_counter()
                same = api.get(url, headers={"if-none-match": r.headers["etag"]})
                draw["304"].append(time.perf_counter() - t)
                assert same.status_code == 304, same.status_code
            print(f"GET /v1/kg/graph ({args.nodes:,} nodes, {size / 1e6:.1f} MB) "
                  f"{median_ms(graph_t)}")  # fmt: skip
            made = f"GET /v1/kg/graph/draw ({draw_size / 1e6:.2f} MB), made"
            print(f"{made:<38} {median_ms(draw['cold'])}")
            print(f"GET /v1/kg/graph/draw, cached          {median_ms(draw['cached'])}")
            print(f"GET /v1/kg/graph/draw, 304 (unchanged) {median_ms(draw['304'])}")
            print(f"GET /v1/beads?limit=200              {median_ms(beads_t)}")

        def address(hash_: str = "") -> str:
            out = subprocess.run(
                [sys.executable, "-m", "chrysalisd", "ui", "--no-browser", "--json"],
                env=env, capture_output=True, text=True, check=True,
            )  # fmt: skip
            return str(json.loads(out.stdout)["url"]) + hash_

        timings: dict[str, list[float]] = {}
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            for _ in range(args.runs):
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.add_init_script(LONG_TASKS)
                page.set_default_timeout(180_000)
                url = address()  # the CLI's start is not the page's
                t = time.perf_counter()
                page.goto(url)
                page.wait_for_selector('main[data-ready="timeline"]')
                timings.setdefault("timeline first page (200 beads)", []).append(
                    time.perf_counter() - t
                )
                t = time.perf_counter()
                page.click("button.more")
                page.wait_for_function(
                    "() => +document.querySelector('.beads').dataset.loaded >= 400"
                )
                timings.setdefault("timeline next page", []).append(time.perf_counter() - t)
                url = address("#graph")
                # a write first: the daemon makes the drawing anew, as after new facts
                with httpx.Client(transport=transport, base_url="http://chrysalis") as api:
                    fact = {"subject": f"Run {time.time_ns()}", "predicate": "ran",
                            "object": "the bench"}  # fmt: skip
                    api.post("/v1/kg/facts", json=fact)
                t = time.perf_counter()
                page.goto(url)
                page.wait_for_selector("main[data-drawn]")
                timings.setdefault("graph first drawn", []).append(time.perf_counter() - t)
                page.wait_for_selector('main[data-layout="done"]')
                timings.setdefault("graph laid out", []).append(time.perf_counter() - t)
                # in the page's clock (from the navigation): when the main thread was last
                # busy for 50 ms or more before the layout ended, and its longest task after
                # the first picture (how long a click may wait while the layout runs)
                drawn, last_end, longest = page.evaluate(TASKS)
                timings.setdefault("graph first drawn, in the page's clock", []).append(
                    drawn / 1000
                )
                timings.setdefault("graph interactive (last long task ends)", []).append(
                    max(drawn, last_end) / 1000
                )
                timings.setdefault("graph: longest task after first drawn", []).append(
                    longest / 1000
                )
                # away and back: the drawing is unchanged (a 304) and its layout kept
                page.click('nav a[data-view="timeline"]')
                page.wait_for_selector('main[data-ready="timeline"]')
                t = time.perf_counter()
                page.click('nav a[data-view="graph"]')
                page.wait_for_selector('main[data-ready="graph"][data-layout="done"][data-drawn]')
                timings.setdefault("graph again (304, layout kept)", []).append(
                    time.perf_counter() - t
                )
                name = page.evaluate(
                    "() => chrysalisGraph.model.getNodeAttribute("
                    "chrysalisGraph.model.nodes()[0], 'label')"
                )
                t = time.perf_counter()
                page.fill('input[name="node"]', name)
                page.press('input[name="node"]', "Enter")
                page.wait_for_selector("#node-panel ul.facts")
                timings.setdefault("find a node and focus it", []).append(time.perf_counter() - t)
                page.close()
            browser.close()
        for what, times in timings.items():
            print(f"{what:<36} {median_ms(times)}")
    finally:
        if daemon is not None:
            daemon.terminate()
            daemon.wait(timeout=30)
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(sock.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
