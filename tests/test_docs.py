"""The docs a new user follows say what is true: the API reference lists the statuses the daemon
really answers, a real summary and every field of each route; the README and the deploy files
install what exists and run what they install; shell completion works as documented."""

from __future__ import annotations

import http.server
import json
import os
import re
import shlex
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from chrysalisd.app import create_app
from tests.daemon_process import DaemonProcess

ROOT = Path(__file__).resolve().parent.parent
DOCUMENT: dict[str, Any] = json.loads((ROOT / "schemas" / "openapi.json").read_text())
OPERATIONS = [
    (method, path, op) for path, ops in DOCUMENT["paths"].items() for method, op in ops.items()
]
API_MD = (ROOT / "docs" / "api.md").read_text()
README = (ROOT / "README.md").read_text()
DEPLOY = (ROOT / "deploy" / "README.md").read_text()


def _bad_requests(path: str, op: dict[str, Any]) -> list[tuple[int, str, dict[str, Any]]]:
    """Requests that must fail validation, with the status each must get: a path id over its
    size limit (413), a malformed JSON body or a query parameter of the wrong type (400)."""
    params = op.get("parameters", [])
    fine = re.sub(r"\{[^}]+\}", "x", path)
    bad = []
    if any(p["in"] == "path" for p in params):
        bad.append((413, re.sub(r"\{[^}]+\}", "x" * 300, path), {}))
    if "application/json" in op.get("requestBody", {}).get("content", {}):
        headers = {"Content-Type": "application/json"}
        bad.append((400, fine, {"content": b'{"content": ', "headers": headers}))
    for p in params:
        if p["in"] == "query" and p["schema"].get("type") in ("integer", "boolean"):
            bad.append((400, fine, {"params": {p["name"]: "not-a-number"}}))
        limits = re.findall(r"'maxLength': (\d+)", str(p["schema"]))
        if p["in"] == "query" and limits:
            bad.append((413, fine, {"params": {p["name"]: "x" * (int(limits[0]) + 1)}}))
    return bad


def test_bad_input_answers_what_the_reference_says(daemon: DaemonProcess) -> None:
    """FastAPI would document 422 for every route; the daemon answers bad input with 400, and
    a field over its size limit with 413."""
    transport = httpx.HTTPTransport(uds=str(daemon.socket))
    tried = 0
    with httpx.Client(transport=transport, base_url="http://chrysalis", timeout=30) as http:
        for method, path, op in OPERATIONS:
            for status, url, kw in _bad_requests(path, op):
                body = {"json": {}} if "content" not in kw and method in ("post", "put") else {}
                answer = http.request(method.upper(), url, **kw, **body)
                assert answer.status_code == status, (method, url, kw, answer.text)
                code = {400: "invalid", 413: "too_large"}[status]
                assert answer.json()["error"]["code"] == code
                assert str(status) in op["responses"], (method, path, status)
                tried += 1
    assert tried >= 30  # every route with a path id, a body or a checked query parameter
    assert "### `GET /v1/beads/{id}`" in API_MD and "Answers: 200, 400, 404, 413." in API_MD


def test_422_is_listed_only_where_the_daemon_answers_it() -> None:
    """POST /v1/beads answers 422 with secrets = "refuse"; no route keeps FastAPI's default."""
    with_422 = [(m, p) for m, p, op in OPERATIONS if "422" in op["responses"]]
    assert with_422 == [("post", "/v1/beads")]
    assert "refuse" in DOCUMENT["paths"]["/v1/beads"]["post"]["responses"]["422"]["description"]
    schemas = DOCUMENT["components"]["schemas"]
    assert "HTTPValidationError" not in schemas and "Validation Error" not in API_MD
    for _, _, op in OPERATIONS:
        for code, answer in op["responses"].items():
            if code.startswith(("4", "5")):
                shape = answer["content"]["application/json"]["schema"]
                assert shape == {"$ref": "#/components/schemas/Error"}
    # every JSON body may be too large: the guard's max_body, or a field over its limit
    for _, _, op in OPERATIONS:
        if "application/json" in op.get("requestBody", {}).get("content", {}):
            assert "413" in op["responses"]


def test_the_app_serves_the_corrected_document() -> None:
    assert create_app().openapi() == DOCUMENT


def test_every_route_has_a_real_one_line_summary() -> None:
    """Not FastAPI's placeholder made of the function's name ("Get Bead")."""
    placeholders = set()
    for route in create_app().routes:
        name = getattr(route, "name", "")
        placeholders.add(name.replace("_", " ").title())
        placeholders.add(name.replace("_", " ").title().strip())
    for method, path, op in OPERATIONS:
        summary = op["summary"]
        assert summary not in placeholders, (method, path, summary)
        assert "\n" not in summary and 10 <= len(summary) <= 90, (method, path, summary)
        assert f"**{summary}**" in API_MD
    assert "**Get Bead**" not in API_MD and "**Forget Where**" not in API_MD


def _fields(schema: dict[str, Any], seen: set[str]) -> list[tuple[str, str, dict[str, Any]]]:
    """Every field of every object a body refers to: (model, field, its schema)."""
    schemas = DOCUMENT["components"]["schemas"]
    found = []
    for key in ("anyOf", "oneOf"):
        for sub in schema.get(key, []):
            found += _fields(sub, seen)
    if "items" in schema:
        found += _fields(schema["items"], seen)
    ref = schema.get("$ref", "")
    if ref:
        name = ref.rsplit("/", 1)[-1]
        if name not in seen:
            seen.add(name)
            model = schemas[name]
            found += _fields(model, seen)
            for field, prop in model.get("properties", {}).items():
                found.append((name, field, prop))
                found += _fields(prop, seen)
    return found


def test_every_body_field_and_parameter_is_listed_with_its_meaning() -> None:
    fields = 0
    for method, path, op in OPERATIONS:
        for p in op.get("parameters", []):
            assert p.get("description"), (method, path, p["name"])
            assert f"| `{p['name']}` | {p['in']} |" in API_MD
        for media, spec in op.get("requestBody", {}).get("content", {}).items():
            if media != "application/json":
                assert spec["schema"].get("description"), (method, path, media)
                continue
            for model, field, prop in _fields(spec["schema"], set()):
                assert prop.get("description"), (method, path, model, field)
                assert f"`{model}` fields:" in API_MD
                assert f"| `{field}` |" in API_MD
                fields += 1
    assert fields > 60
    # an example row: the type, the default and the meaning
    assert "| `k` | integer | `10` | at most this many items |" in API_MD


def _pip_installs(text: str) -> list[str]:
    """The requirements named to pip or pipx in a text (flags, paths and URLs left out)."""
    names = []
    for match in re.finditer(r"\bpipx? install ([^`\n#)]*)", text):
        words = shlex.split(match.group(1).replace("\\", " "))
        skip = False
        for word in words:
            if skip or word.startswith("-"):
                skip = word in ("--index-url", "-r", "-c", "--extra-index-url")
                continue
            if word.startswith((".", "/", "~", "git+", "http")) or word in ("&&", ";"):
                continue
            names.append(re.split(r"[\[<>=!~ ]", word, maxsplit=1)[0].lower())
    return names


DOCS = ["README.md", "deploy/README.md", "deploy/Dockerfile", "docs/operations.md",
        "docs/benchmarks.md", "docs/integrations.md"]  # fmt: skip


@pytest.mark.parametrize("name", DOCS)
def test_no_doc_installs_chrysalis_from_pypi(name: str) -> None:
    """`chrysalis-memory` is the dist name in pyproject.toml, not a package on PyPI."""
    text = (ROOT / name).read_text()
    dist = re.search(r'^name = "(.+)"$', (ROOT / "pyproject.toml").read_text(), re.M)
    assert dist and dist.group(1) == "chrysalis-memory"
    assert dist.group(1) not in _pip_installs(text), name
    assert "torch==" not in text.replace("`torch==2.13.0`", ""), name


def test_the_pip_install_parser_sees_what_it_must() -> None:
    assert _pip_installs("`pip install 'chrysalis-memory[zep-cloud]'`") == ["chrysalis-memory"]
    assert _pip_installs("pipx install chrysalis-memory   # or") == ["chrysalis-memory"]
    said = "`pip install torch --index-url https://x/cpu` and `.venv/bin/pip install -e '.[st]'`"
    assert _pip_installs(said) == ["torch"]


def test_the_service_files_run_the_venv_the_deploy_readme_makes() -> None:
    unit = (ROOT / "deploy" / "chrysalis.service").read_text()
    exec_start = re.search(r"^ExecStart=(\S+) daemon$", unit, re.M)
    assert exec_start, "ExecStart runs `<venv>/bin/chrysalis daemon`"
    program = exec_start.group(1).replace("%h", "~")
    venv = program.removesuffix("/bin/chrysalis")
    assert venv == "~/.local/share/chrysalis-venv"
    plist = (ROOT / "deploy" / "com.chrysalis.daemon.plist").read_text()
    assert f"<string>{program.replace('~', '/Users/USER')}</string>" in plist
    for text in (DEPLOY, unit, plist):
        assert f"python3 -m venv {venv}\n" in text
        assert f"{venv}/bin/pip install ." in text
    assert "deploy/README.md" in README


def test_shell_completion_works_as_the_readme_says() -> None:
    """Each documented `_CHRYSALIS_COMPLETE=<shell>_source chrysalis` prints a script that
    completes the real command's names."""
    entry = Path(sys.executable).parent / "chrysalis"
    if not entry.exists():
        pytest.skip("no `chrysalis` entry point beside this Python (not pip-installed)")
    lines = re.findall(r"^_CHRYSALIS_COMPLETE=(\w+)_source chrysalis > \S+", README, re.M)
    assert sorted(lines) == ["bash", "fish", "zsh"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for shell in lines:
        run = [str(entry)]
        script = subprocess.run(
            run, env={**env, "_CHRYSALIS_COMPLETE": f"{shell}_source"},
            capture_output=True, text=True, timeout=60, check=True,
        ).stdout  # fmt: skip
        assert "_chrysalis_completion" in script and "_CHRYSALIS_COMPLETE" in script, shell
    words = {"COMP_WORDS": "chrysalis rem", "COMP_CWORD": "1"}
    answer = subprocess.run(
        [str(entry)], env={**env, **words, "_CHRYSALIS_COMPLETE": "bash_complete"},
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    assert "plain,remember" in answer.splitlines()


def test_the_readme_says_what_the_tests_need_and_take() -> None:
    """The test command's time, and the browser tests' chromium (skipped without it)."""
    top = README.split("## ", 1)[0]
    assert "4 minutes on two idle cores" in top and "four workers" in top
    assert "-n 4" in (ROOT / "pyproject.toml").read_text()
    assert "pytest -m slow" in top and "-m 'not slow'" in (ROOT / "pyproject.toml").read_text()
    inspector = (ROOT / "tests" / "test_inspector.py").read_text()
    count = len(re.findall(r"^def test_", inspector, re.M))
    assert (
        f"{['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'][count].capitalize()} of its"
        in top
    )
    assert "skipif" in inspector and "skipped" in top and "`chromium`" in top


def test_every_folder_remote_shown_says_to_make_the_folder() -> None:
    """The daemon never creates a `file://` folder: where the docs show one, they say mkdir."""
    shown = 0
    for text in (README, DEPLOY):
        for folder in re.findall(r'(?:--remote |remote = "|`)file://(/[^"`\s]+)', text):
            assert f"mkdir -p {folder}" in text, folder
            shown += 1
    assert shown >= 3
    assert "A `file://` folder must exist: `mkdir -p" in README


DESIGN = (ROOT / "docs" / "DESIGN.md").read_text()


def test_the_named_databases_the_design_lists_are_the_stores() -> None:
    from chrysalis.store.keys import DB_NAMES

    listed = re.search(r"named databases ((?:`\w+`,?\s*)+)\.", DESIGN)
    assert listed, "DESIGN.md lists the named databases"
    assert re.findall(r"`(\w+)`", listed.group(1)) == list(DB_NAMES)


def test_the_mcp_tools_the_docs_count_and_name_are_the_servers() -> None:
    import asyncio

    from chrysalisd.mcp_server import build

    tools = [t.name for t in asyncio.run(build("/nonexistent/chrysalis.sock").list_tools())]
    said = re.search(r"serves\s+(\d+) tools over stdio", DESIGN)
    assert said, "DESIGN.md counts the MCP tools in figures"
    assert int(said.group(1)) == len(tools)
    named = re.search(r"reaches the running daemon \(tools: ([^)]*)\)", README)
    assert named and re.findall(r"`(\w+)`", named.group(1)) == tools


def test_the_contract_suites_the_design_names_exist() -> None:
    """Each interface DESIGN.md says has a conformance suite has one in tests/contracts/."""
    suites = {p.stem for p in (ROOT / "tests" / "contracts").glob("test_*.py")}
    assert suites >= {"test_remote", "test_mirror", "test_embedder", "test_extractor",
                      "test_keyword_index"}  # fmt: skip
    for name in ("`Remote`", "`Mirror`", "`Embedder`", "`Extractor`", "keyword\nindex"):
        assert name in DESIGN.split("## 3.")[0], name


def test_every_test_the_docs_cite_exists() -> None:
    """A test moved or renamed leaves no dead reference in the docs (security.md cites many)."""
    cited = 0
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for path, name in re.findall(r"(tests/[\w/]+\.py)::(\w+)", doc.read_text()):
            assert (ROOT / path).is_file(), f"{doc.name} cites {path}"
            assert f"def {name}(" in (ROOT / path).read_text(), f"{doc.name} cites {path}::{name}"
            cited += 1
    assert cited >= 5


# ---- docs/integrations.md: each set-up runs as written -------------------------------------

INTEGRATIONS = (ROOT / "docs" / "integrations.md").read_text()


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, re.M | re.S)


class _Responses(threading.Thread):
    """OpenAI's Responses API on 127.0.0.1, as much of it as `Runner.run` uses: it records
    each request the SDK sends and answers from what the request's input says."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(
                    (self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
                said = json.dumps(body.get("input"))
                text = "On Friday morning." if "Oslo on Friday" in said else "I do not know."
                answer = json.dumps(_response(text)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def run(self) -> None:
        self.server.serve_forever()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _response(text: str) -> dict[str, Any]:
    n = len(text)
    return {
        "id": f"resp_{n}", "object": "response", "created_at": 0, "model": "gpt-test",
        "status": "completed", "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        "output": [{"id": f"msg_{n}", "type": "message", "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}],
        "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
                  "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                  "output_tokens_details": {"reasoning_tokens": 0}},
    }  # fmt: skip


def test_the_integration_set_ups_run_as_written(daemon: DaemonProcess) -> None:
    """Each Python block of docs/integrations.md, pasted into a fresh Python beside a running
    daemon, runs and prints what its comments say; the Agents SDK's model is OpenAI's
    Responses API, served here on loopback (nothing leaves the machine)."""
    blocks = _python_blocks(INTEGRATIONS)
    assert len(blocks) == 2 and "ChrysalisStore()" in blocks[0]
    assert "ChrysalisSession(" in blocks[1]
    fake = _Responses()
    fake.start()
    env = {
        **daemon.env,
        "PYTHONPATH": os.pathsep.join(sys.path),
        "OPENAI_BASE_URL": fake.url,
        "OPENAI_API_KEY": "sk-test-not-a-key",
        "OPENAI_AGENTS_DISABLE_TRACING": "1",
    }
    try:
        outs = [
            subprocess.run(
                [sys.executable, "-c", block],
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            for block in blocks
        ]
    finally:
        fake.close()
    for out in outs:
        assert out.returncode == 0, out.stderr
    assert outs[0].stdout == "['Ada prefers window seats']\n"
    assert outs[1].stdout == "On Friday morning.\n"
    # the second run sent the first turn and its reply with the new question
    (path, headers, first), (_, _, second) = fake.requests
    assert path == "/v1/responses" and headers["authorization"] == "Bearer sk-test-not-a-key"
    assert first["instructions"] == "Reply in one sentence."
    said = [item.get("content") for item in second["input"]]
    assert said[0] == "I fly to Oslo on Friday morning." and said[-1] == "When do I fly?"
    assert second["input"][1]["role"] == "assistant" and len(said) == 3
    with daemon.client() as client:
        beads = client.last_beads(10, session_id="ada-travel")
        assert [b.content for b in beads if b.role == "user"] == [
            "I fly to Oslo on Friday morning.",
            "When do I fly?",
        ]
