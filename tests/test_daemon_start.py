"""The daemon's start-up and lifecycle as a person meets them (step 14's first-hour list): the
log's form, one form for every failed start, nothing left behind, typos named, `config`,
`daemon --detach` and `stop`. All through the real CLI in a subprocess."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chrysalis.client import Routes
from chrysalisd.config import known_variables
from tests.daemon_process import DaemonProcess, run_cli, run_process

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def no_user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def start(d: DaemonProcess, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """``chrysalis daemon`` in the foreground until it exits: its status and its stderr."""
    out = run_process(["daemon", "--data-dir", str(d.data_dir), *args], {**d.env, **(env or {})})
    return out.returncode, out.stderr


# ---- 1. the log's form -----------------------------------------------------------------------


def read_until(fd: int, needle: str, timeout: float = 30.0) -> str:
    seen = ""
    deadline = time.monotonic() + timeout
    while needle not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                seen += os.read(fd, 4096).decode(errors="replace")
            except OSError:  # the other side closed
                break
    return seen


@pytest.mark.parametrize(("setting", "form"), [(None, "text"), ("json", "json")])
def test_a_terminal_gets_text_logs_unless_told(
    tmp_path: Path, setting: str | None, form: str
) -> None:
    d = DaemonProcess(tmp_path / "data")
    env = dict(d.env)
    if setting is not None:
        env["CHRYSALIS_LOG_FORMAT"] = setting
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "chrysalisd", "daemon", "--data-dir", str(d.data_dir)],
        env=env, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
    )  # fmt: skip
    os.close(slave)
    d.proc = proc
    try:
        d.wait_ready()  # its signal handlers are in place: SIGTERM stops it cleanly
        seen = read_until(master, "listening on")
    finally:
        proc.terminate()
        status = proc.wait(30)
        os.close(master)
        d.close()
    assert status == 0, seen
    line = next((x for x in seen.splitlines() if "listening on" in x), seen)
    if form == "text":
        assert re.match(r"^\d\d:\d\d:\d\d info     chrysalis daemon: replica ", line), line
    else:
        assert json.loads(line)["msg"].startswith("chrysalis daemon: replica ")


def test_a_pipe_gets_json_logs_and_text_can_be_forced(tmp_path: Path) -> None:
    d = DaemonProcess(tmp_path / "data", env={"CHRYSALIS_LOG_FORMAT": "text"})
    try:
        d.start()
    finally:
        d.stop()
        d.close()
    assert re.search(r"^\d\d:\d\d:\d\d info     chrysalis daemon: ", d.output(), re.M)
    assert "{" not in d.output().splitlines()[0]
    d = DaemonProcess(tmp_path / "data2")  # auto, to a file: JSON
    try:
        d.start()
    finally:
        d.stop()
        d.close()
    assert all(json.loads(line) for line in d.output().splitlines())


# ---- 2, 3, 4. one form for a failed start; nothing left behind -------------------------------


def test_a_bad_setting_is_one_plain_line_and_status_2(tmp_path: Path) -> None:
    d = DaemonProcess(tmp_path / "new" / "data")
    status, err = start(d, env={"CHRYSALIS_PUSH_INTERVAL": "often"})
    assert status == 2
    assert err == (
        "error: invalid configuration: CHRYSALIS_PUSH_INTERVAL: expected a number of seconds "
        "(got 'often')\n"
    )
    assert not (tmp_path / "new").exists()


def test_a_bad_remote_url_is_named_once_with_its_flag(tmp_path: Path) -> None:
    d = DaemonProcess(tmp_path / "data")
    status, err = start(d, "--remote", "file://host/shared")
    assert status == 2
    assert err == (
        "error: invalid configuration: --remote: remote URL 'file://host/shared': "
        "expected file:///absolute/path\n"
    )
    assert not d.data_dir.exists()


def test_a_second_daemon_on_the_data_dir_fails_in_the_same_form(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    other = DaemonProcess(daemon.data_dir)
    try:
        status, err = start(other)  # stderr is a pipe: a JSON log, which does not repeat it
        assert status == 1
        lines = err.splitlines()
        assert lines[-2].startswith(f"error: data dir {daemon.data_dir} is in use by another")
        assert lines[-1] == "hint: data_dir came from flag --data-dir"
        assert err.count("is in use by another process") == 1
        status, err = start(other, env={"CHRYSALIS_LOG_FORMAT": "text"})  # a person's form
        assert status == 1 and err.count("is in use by another process") == 1
        assert err.splitlines()[-2].startswith("error: data dir ")
    finally:
        other.close()
    same_socket = DaemonProcess(tmp_path / "other", env={"CHRYSALIS_SOCKET": str(daemon.socket)})
    try:
        status, err = start(same_socket, env={"CHRYSALIS_LOG_FORMAT": "text"})
        assert (status, err) == (1, (
            f"error: a daemon is already listening on {daemon.socket}; stop it first (one per "
            f"socket): chrysalis --socket {daemon.socket} stop\n"
            "hint: socket came from env CHRYSALIS_SOCKET\n"
        ))  # fmt: skip
        assert not same_socket.data_dir.exists()
    finally:
        same_socket.close()
    assert daemon.once("ping") and (daemon.data_dir / "lmdb").is_dir()  # untouched


def test_a_failed_start_removes_only_the_folders_it_made(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    no_key = ("--remote", f"file://{shared}", "--sync-key-file", str(tmp_path / "no-key"))
    d = DaemonProcess(tmp_path / "made")  # its parent must exist (test_first_hour_2)
    status, err = start(d, *no_key, env={"CHRYSALIS_LOG_FORMAT": "text"})
    assert (status, err.splitlines()[-2:]) == (1, [
        f"error: cannot read sync key file {tmp_path / 'no-key'}: No such file or directory",
        "hint: sync_key_file came from flag --sync-key-file",
    ])  # fmt: skip
    assert not (tmp_path / "made").exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    status, _ = start(DaemonProcess(mine), *no_key)
    assert status == 1 and (mine / "notes.txt").read_text() == "keep me"


# ---- 5. a file:// remote's folder is never made for you ---------------------------------------


def test_a_missing_remote_folder_says_mkdir_and_is_not_made(tmp_path: Path) -> None:
    folder = tmp_path / "not-mounted"
    d = DaemonProcess(
        tmp_path / "data",
        env={"CHRYSALIS_PUSH_INTERVAL": "3600", "CHRYSALIS_PULL_INTERVAL": "3600"},
    )
    try:
        d.start("--remote", f"file://{folder}")
        out = d.cli("sync")
        assert out.returncode == 1
        assert (
            f"the folder {folder} does not exist; make it with `mkdir -p {folder}` (or mount "
            "the share it should be)" in out.stdout + out.stderr
        )
        assert not folder.exists()
        folder.mkdir()
        assert d.cli("sync").returncode == 0
    finally:
        d.stop()
        d.close()


# ---- 6. typos in CHRYSALIS_* ------------------------------------------------------------------


def test_an_unknown_variable_is_warned_with_the_closest_name(tmp_path: Path) -> None:
    d = DaemonProcess(tmp_path / "data", env={"CHRYSALIS_EMBEDER": "ollama"})
    try:
        d.start()
    finally:
        d.stop()
        d.close()
    warned = [json.loads(x)["msg"] for x in d.output().splitlines() if "EMBEDER" in x]
    assert warned == [
        "CHRYSALIS_EMBEDER is set but is not a chrysalis setting: it is ignored; "
        "did you mean CHRYSALIS_EMBEDDER?"
    ]
    assert "CHRYSALIS_SOCKET" not in d.output()  # ours are not warned about


def test_every_variable_the_project_names_is_known() -> None:
    named: set[str] = set()
    for folder in ("chrysalis", "daemon", "tests", "bench", "deploy", "docs", ".ci", "README.md"):
        for path in [ROOT / folder, *(ROOT / folder).rglob("*")]:
            if path.is_file() and path.suffix in {"", ".py", ".md", ".sh", ".yaml", ".service"}:
                text = path.read_text(errors="replace")
                named |= set(re.findall(r"\bCHRYSALIS_[A-Z][A-Z0-9_]*[A-Z0-9]\b", text))
    # typos made on purpose
    examples = {"CHRYSALIS_X", "CHRYSALIS_EMBEDER", "CHRYSALIS_NOPE", "CHRYSALIS_SYNCKEYFILE"}
    assert "CHRYSALIS_UI_SCREENSHOTS" in named and "CHRYSALIS_SOCKET" in named
    assert named - examples <= known_variables(), sorted(named - examples - known_variables())


# ---- 8. chrysalis config ----------------------------------------------------------------------


def test_config_shows_each_setting_and_where_it_came_from(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    key_file = tmp_path / "zep.key"
    key_file.write_text("zep-secret-in-a-file")
    cfg.write_text(
        f'pull_interval = 30\nzep_api_key_file = "{key_file}"\n'
        '[memories.team]\nremote = "file:///srv/team"\npush_interval = 5\n'
    )
    env = {
        **os.environ, "CHRYSALIS_EMBEDDER": "deterministic", "CHRYSALIS_SOCKET": "/tmp/x.sock",
        "CHRYSALIS_ZEP_API_KEY": "zep-secret-in-env", "XDG_CONFIG_HOME": str(tmp_path),
    }  # fmt: skip
    data = tmp_path / "data"
    args = ["config", "--config", str(cfg), "--data-dir", str(data)]
    out = run_cli([*args, "--json"], env)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["config_file"] == str(cfg)
    s = got["settings"]
    assert s["data_dir"] == {"value": str(data), "from": "flag --data-dir"}
    assert s["embedder"] == {"value": "deterministic", "from": "env CHRYSALIS_EMBEDDER"}
    assert s["socket"] == {"value": "/tmp/x.sock", "from": "env CHRYSALIS_SOCKET"}
    assert s["pull_interval"] == {"value": 30.0, "from": f"file {cfg}"}
    assert s["push_interval"] == {"value": 60.0, "from": "default"}
    assert s["zep_api_key"] == {"value": "set", "from": "env CHRYSALIS_ZEP_API_KEY"}
    assert s["zep_api_key_file"]["value"] == str(key_file)
    assert got["memories"] == {
        "team": {
            "push_interval": {"value": 5.0, "from": f"file {cfg}"},
            "remote": {"value": "file:///srv/team", "from": f"file {cfg}"},
        }
    }
    assert "zep-secret" not in out.stdout + out.stderr
    text = run_cli(["--socket", "/tmp/y.sock", *args], env)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0] == f"config file: {cfg}"
    assert re.search(r"^socket +/tmp/y\.sock  \(flag --socket\)$", text.stdout, re.M)
    assert re.search(r"^zep_api_key +set  \(env CHRYSALIS_ZEP_API_KEY\)$", text.stdout, re.M)
    assert re.search(r"^remote +-  \(default\)$", text.stdout, re.M)
    assert lines[lines.index("[memories.team]") + 2].split() == [
        "remote", "file:///srv/team", "(file", f"{cfg})"
    ]  # fmt: skip
    assert "zep-secret" not in text.stdout + text.stderr and not data.exists()
    cfg.write_text("[memories.team]\nremote = 5\n")
    bad = run_cli(args, env)
    assert bad.returncode == 2
    assert bad.stderr == (
        f"error: invalid configuration: {cfg}: memories.team.remote: expected text (got 5)\n"
    )


# ---- 9. daemon --detach and stop --------------------------------------------------------------


def test_detach_status_stop_and_again(tmp_path: Path) -> None:
    d = DaemonProcess(tmp_path / "data", env={"CHRYSALIS_DATA_DIR": str(tmp_path / "data")})
    try:
        out = d.cli("daemon", "--detach", "--data-dir", str(d.data_dir))
        assert out.returncode == 0, out.stderr
        log = d.data_dir / "daemon.log"
        m = re.fullmatch(rf"daemon running, pid (\d+), socket {d.socket}, log {log}\n", out.stdout)
        assert m, out.stdout
        assert (log.stat().st_mode & 0o777) == 0o600
        assert d.once("status")["pid"] == int(m[1])
        d.once("remember", "kept across a stop", session_id="s1")
        again = d.cli("daemon", "--detach", "--data-dir", str(d.data_dir))
        assert again.returncode == 1
        assert again.stderr.startswith(f"error: a daemon is already running on {d.socket} (pid")
        stopped = d.cli("stop")
        assert (stopped.returncode, stopped.stdout) == (0, f"stopped (pid {m[1]})\n")
        assert not d.socket.exists()
        nothing = d.cli("stop")
        assert (nothing.returncode, nothing.stderr) == (
            1, f"error: no daemon answers on {d.socket}, and no process holds the data dir "
            f"{d.data_dir}: nothing to stop\n",
        )  # fmt: skip
        assert d.cli("daemon", "--detach", "--data-dir", str(d.data_dir)).returncode == 0
        assert d.once("status")["counts"]["beads"] == 1
        assert d.cli("stop").returncode == 0
    finally:
        d.cli("stop")
        d.close()


def test_detach_with_a_bad_start_prints_its_error_and_leaves_nothing(tmp_path: Path) -> None:
    d = DaemonProcess(tmp_path / "data")
    try:
        bad = d.cli("daemon", "--detach", "--data-dir", str(d.data_dir), "--remote", "ftp://x")
        assert bad.returncode == 2
        assert bad.stderr == (
            "error: invalid configuration: --remote: remote URL 'ftp://x': unknown scheme "
            "'ftp' (known: file://, s3://)\n"
        )
        no_key = ("--remote", f"file://{tmp_path}", "--sync-key-file", str(tmp_path / "none"))
        failed = d.cli("daemon", "--detach", "--data-dir", str(d.data_dir), *no_key)
        assert failed.returncode == 1
        assert failed.stderr == (
            f"error: cannot read sync key file {tmp_path / 'none'}: No such file or directory\n"
            "hint: sync_key_file came from flag --sync-key-file\n"
        )
        assert not d.data_dir.exists() and not d.socket.exists()
        assert d.cli("stop").returncode == 1  # no daemon left running
    finally:
        d.close()


@pytest.mark.parametrize("form", ["json", "text"])
def test_detach_prints_the_start_warnings_on_the_terminal(tmp_path: Path, form: str) -> None:
    """A misspelt CHRYSALIS_SYNC_KEY_FILE and a remote: the daemon starts unencrypted, and
    `--detach` says so on stderr before it returns, not only in daemon.log (issue 28, G15),
    whichever form the log has; a start that fails shows them too, before its error."""
    shared = tmp_path / "shared"
    shared.mkdir()
    key = tmp_path / "sync.key"
    key.write_text("correct horse battery staple")
    typo = {"CHRYSALIS_SYNCKEYFILE": str(key), "CHRYSALIS_LOG_FORMAT": form}
    d = DaemonProcess(tmp_path / "data", env=typo)
    misspelt = (
        "warning: CHRYSALIS_SYNCKEYFILE is set but is not a chrysalis setting: it is ignored; "
        "did you mean CHRYSALIS_SYNC_KEY_FILE?\n"
    )
    try:
        remote = ("--remote", f"file://{shared}")
        out = d.cli("daemon", "--detach", "--data-dir", str(d.data_dir), *remote)
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith("daemon running, pid ")
        assert out.stderr == misspelt + (
            f"warning: remote file://{shared} has no sync key (sync_key_file): what this "
            "laptop pushes there is not encrypted, readable by anyone who can read the remote\n"
        )
        assert d.cli("stop").returncode == 0
        no_key = ("--sync-key-file", str(tmp_path / "none"))
        failed = d.cli("daemon", "--detach", "--data-dir", str(d.data_dir), *remote, *no_key)
        assert failed.returncode == 1
        assert failed.stderr == misspelt + (
            f"error: cannot read sync key file {tmp_path / 'none'}: No such file or directory\n"
            "hint: sync_key_file came from flag --sync-key-file\n"
        )
    finally:
        d.cli("stop")
        d.close()


# ---- 10. what a start costs ------------------------------------------------------------------


def test_a_daemon_serves_without_the_http_client(tmp_path: Path) -> None:
    """A daemon of its own starts, answers each kind of request and stops without importing
    httpx (the client's library, ~0.1 s of CPU, which every start paid before) nor, without
    a remote, the sync engine. The cyclic collector, off while it starts, is on while it
    serves (left off, the garbage cycles of every request would pile up)."""
    d = DaemonProcess(tmp_path / "data")
    said = tmp_path / "said.json"
    watch = (
        "import atexit, gc, json, pathlib, runpy, sys;"
        "said = pathlib.Path(sys.argv[1]);"
        "seen = {};"
        "atexit.register(lambda: said.write_text(json.dumps({**seen, 'modules': sorted("
        "m for m, v in sys.modules.items()"
        " if v and (m.startswith('httpx') or m == 'chrysalis.sync.engine')"
        ")})));"
        # a collection of its own, once the start-up heap is frozen: it is on again
        "gc.callbacks.append(lambda phase, info: gc.get_freeze_count() and gc.isenabled()"
        " and seen.update(collected=True));"
        "sys.argv = ['chrysalis', *sys.argv[2:]];"
        "runpy.run_module('chrysalisd', run_name='__main__')"
    )
    d.proc = subprocess.Popen(
        [sys.executable, "-c", watch, str(said), "daemon", "--data-dir", str(d.data_dir)],
        env=d.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        d.wait_ready()
        with d.client() as c:
            for i in range(40):  # enough new objects for the collector to run on its own
                c.remember(f"parcel {i} comes on Thursday", session_id="s1")
            assert c.recall("when does the courier come?")
            c.status()
            assert c.raw(Routes.memories)["memories"]  # a router mounted late
        assert d.stop() == 0
    finally:
        d.close()
    assert json.loads(said.read_text()) == {"modules": [], "collected": True}
