"""``chrysalis hooks claude-code`` against a real daemon on a real socket, fed the event JSON
Claude Code sends (tests/fixtures/claude_code/*.json, its documented input schema) and a
transcript shaped like Claude Code's (user/assistant entries with uuid, parentUuid,
sessionId, timestamp, cwd and message blocks; summaries, sidechains, meta entries, a broken
line and a pasted credential among them).

A few runs go through the real command in a subprocess, as Claude Code runs it; the rest call
`claude_hook.run` in this process with the same bytes on stdin (same code, faster)."""

from __future__ import annotations

import io
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chrysalis.client.light import LightClient
from chrysalis.core.errors import NotFound
from chrysalisd import claude_hook

from .daemon_process import DaemonProcess

FIXTURES = Path(__file__).parent / "fixtures" / "claude_code"
SESSION = "5f0c2a7e-31b4-4c1e-9a55-0d7e3c9b1a42"
UUID_HEAD = "a0000000"  # the fixture's turn uuids start so; each test gives them its own
TURNS = [  # the turns of transcript.jsonl kept, in order (the module docstring of
    # chrysalis.importers.claude_code says what is left out and why)
    "0003",
    "0005",
    "0007",
    "0007.1",
    "0008",
    "0009",
    "000a",
    "000a.1",
]


def captured(head: str = UUID_HEAD) -> list[str]:
    """The bead ids of the fixture's turns when their uuids start with ``head``."""
    return [f"cc-{head}-0000-4000-8000-00000000{turn}" for turn in TURNS]


CAPTURED = captured()


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    d = DaemonProcess(tmp_path_factory.mktemp("hook") / "data").start()
    yield d
    d.close()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Claude Code's config folder and our state folder, in this test's own place."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    (tmp_path / "claude" / "projects" / "-home-dev-orchard").mkdir(parents=True)
    return tmp_path


def transcript(
    home: Path, session: str = SESSION, text: str | None = None, head: str = UUID_HEAD
) -> Path:
    """The fixture transcript as session ``session``'s, its turn uuids starting ``head`` (the
    module's daemon keeps what each test captured: uuids are its bead ids)."""
    path = home / "claude" / "projects" / "-home-dev-orchard" / f"{session}.jsonl"
    body = (FIXTURES / "transcript.jsonl").read_text() if text is None else text
    path.write_text(body.replace(SESSION, session).replace(UUID_HEAD, head))
    return path


def event(name: str, home: Path, **changes: Any) -> dict[str, Any]:
    raw = (FIXTURES / f"{name}.json").read_text()
    data: dict[str, Any] = json.loads(raw.replace("$PROJECTS", str(home / "claude" / "projects")))
    data.update(changes)
    return data


def run(daemon: DaemonProcess, payload: bytes | dict[str, Any], *args: str) -> tuple[str, str]:
    """The hook in this process: (stdout, stderr); it must return 0."""
    stdin = io.BytesIO(payload if isinstance(payload, bytes) else json.dumps(payload).encode())
    out, err = io.StringIO(), io.StringIO()
    options = claude_hook.parse_args(["--socket", str(daemon.socket), *args])
    assert options is not None
    assert claude_hook.run(options, stdin, out, err) == 0
    return out.getvalue(), err.getvalue()


def command(
    payload: bytes, socket_path: Path, home: Path, *args: str, timeout: float = 10.0
) -> tuple[subprocess.CompletedProcess[bytes], float]:
    """The hook as Claude Code runs it: the command, the event on stdin; and its seconds."""
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(home / "claude"),
           "XDG_STATE_HOME": str(home / "state"), "CHRYSALIS_SOCKET": str(socket_path)}  # fmt: skip
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "chrysalisd", "hooks", "claude-code", *args],
        input=payload, capture_output=True, env=env, timeout=timeout, check=False,
    )  # fmt: skip
    return done, time.monotonic() - start


def session_beads(daemon: DaemonProcess, session: str = SESSION) -> list[Any]:
    with daemon.client() as c:
        return c.last_beads(1000, session_id=session)


# ---- capture -------------------------------------------------------------------------------


def test_stop_captures_each_turn_once_with_its_session_time_and_project(
    daemon: DaemonProcess, home: Path
) -> None:
    transcript(home)
    done, _ = command(json.dumps(event("stop", home)).encode(), daemon.socket, home)
    assert done.returncode == 0, done.stderr
    assert done.stdout == b""  # a Stop hook's stdout would show in Claude Code's transcript
    assert b"1 line(s) of" in done.stderr  # the broken line, named, not fatal
    beads = session_beads(daemon)
    assert [b.id for b in beads] == CAPTURED
    first = beads[0]
    assert first.role == "user" and first.turn_id == CAPTURED[0][3:]
    assert "system-reminder" not in first.content and "sync/vendor.py?" in first.content
    assert first.ts == pytest.approx(1748942100.0)  # 2025-06-03T09:15:00Z, the entry's own
    assert set(first.tags) == {"claude-code", "project:/home/dev/orchard"}
    assert [b.role for b in beads] == ["user", "tool", "assistant", "tool", "tool", "user",
                                       "assistant", "tool"]  # fmt: skip
    # The pasted AWS key and GitHub token never reach the store.
    pasted = next(b for b in beads if b.id == CAPTURED[5]).content
    assert "AKIAJ7QXR2VORCHARD5Z" not in pasted and "ghp_Zq8m" not in pasted
    assert "[REDACTED:" in pasted
    # Stop again (Claude Code fires it after every answer): nothing new, nothing changed.
    again, _ = command(json.dumps(event("stop", home)).encode(), daemon.socket, home)
    assert again.returncode == 0 and again.stderr == b""  # the cursor skips the broken line
    assert [b.model_dump() for b in session_beads(daemon)] == [b.model_dump() for b in beads]


def test_turns_appended_later_are_captured_by_the_next_event(
    daemon: DaemonProcess, home: Path
) -> None:
    session = "6a1d0c55-0000-4000-8000-000000000001"
    path = transcript(home, session, head="a0000001")
    run(daemon, event("pre_compact", home, session_id=session, transcript_path=str(path)))
    before = {b.id for b in session_beads(daemon, session)}
    entry = {
        "parentUuid": "a0000000-0000-4000-8000-00000000000b", "isSidechain": False,
        "type": "user", "uuid": "d0000000-0000-4000-8000-000000000001", "sessionId": session,
        "timestamp": "2025-06-03T10:02:00.000Z", "cwd": "/home/dev/orchard",
        "message": {"role": "user", "content": "Ship the cursor change behind the flag vendor_v3."},
    }  # fmt: skip
    half = json.dumps(entry)
    with path.open("a") as f:
        f.write(half[:40])  # Claude Code is mid-write: the half line waits
    run(daemon, event("stop", home, session_id=session, transcript_path=str(path)))
    assert {b.id for b in session_beads(daemon, session)} == before
    with path.open("a") as f:
        f.write(half[40:] + "\n")
    run(daemon, event("session_end", home, session_id=session, transcript_path=str(path)))
    after = session_beads(daemon, session)
    assert {b.id for b in after} == before | {"cc-d0000000-0000-4000-8000-000000000001"}
    assert after[-1].content == "Ship the cursor change behind the flag vendor_v3."


def test_a_forgotten_turn_stays_forgotten_when_the_transcript_is_read_again(
    daemon: DaemonProcess, home: Path
) -> None:
    session = "6a1d0c55-0000-4000-8000-000000000002"
    path = transcript(home, session, head="a0000002")
    stop = event("stop", home, session_id=session, transcript_path=str(path))
    run(daemon, stop)
    with daemon.client() as c:
        c.forget(_id_in(daemon, session, "staging bucket"))
    shutil.rmtree(home / "state")  # the cursor is lost: the whole transcript is read again
    _, err = run(daemon, stop)
    assert "Conflict" not in err
    contents = [b.content for b in session_beads(daemon, session)]
    assert len(contents) == len(CAPTURED) - 1
    assert not any("staging bucket" in text for text in contents)


def _id_in(daemon: DaemonProcess, session: str, words: str) -> str:
    return next(b.id for b in session_beads(daemon, session) if words in b.content)


def test_a_resumed_sessions_copy_of_earlier_turns_keeps_them_where_they_are(
    daemon: DaemonProcess, home: Path
) -> None:
    """Claude Code's resumed session starts its own transcript with the earlier turns (their
    uuids) under the new session id: those stay in the first session; the new turns come."""
    first = "6a1d0c55-0000-4000-8000-000000000003"
    path = transcript(home, first, head="a0000003")
    run(daemon, event("stop", home, session_id=first, transcript_path=str(path)))
    resumed = "6a1d0c55-0000-4000-8000-000000000004"
    text = path.read_text()
    text = text.replace(f'"sessionId": "{first}"', f'"sessionId": "{resumed}"')
    path = home / "claude" / "projects" / "-home-dev-orchard" / f"{resumed}.jsonl"
    fresh = {"parentUuid": None, "type": "assistant", "uuid": "e0000000-0000-4000-8000-00000000000f",
             "sessionId": resumed, "timestamp": "2025-06-04T08:00:00Z", "cwd": "/home/dev/orchard",
             "message": {"role": "assistant", "content": [{"type": "text",
                         "text": "Resumed: the flag is on in staging."}]}}  # fmt: skip
    path.write_text(text + json.dumps(fresh) + "\n")
    _, err = run(daemon, event("stop", home, session_id=resumed, transcript_path=str(path)))
    assert "error" not in err.lower()
    assert len(session_beads(daemon, first)) == len(CAPTURED)
    assert [b.content for b in session_beads(daemon, resumed)] == [
        "Resumed: the flag is on in staging."
    ]


# ---- context -------------------------------------------------------------------------------


def _vendor_memory(daemon: DaemonProcess, name: str) -> None:
    with daemon.client() as c:
        c.create_memory(name)
    with daemon.client(memory=name) as c:
        c.remember(
            "The vendor's v3 API pages orders with an opaque next_cursor token, 500 per page.",
            session_id="earlier-vendor-chat", id="vendor-paging-note",
        )  # fmt: skip
        c.remember("Lunch on Fridays is at the noodle bar.", session_id="earlier-lunch")


def test_prompt_gets_the_context_cited_by_id(daemon: DaemonProcess, home: Path) -> None:
    """As Claude Code runs it: the daemon's ``POST /v1/context`` block, citing the bead."""
    _vendor_memory(daemon, "withcontext")
    prompt = event("user_prompt_submit", home, session_id="brand-new-session",
                   prompt="How does the vendor's API page orders?")  # fmt: skip
    done, _ = command(json.dumps(prompt).encode(), daemon.socket, home, "--memory", "withcontext")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert set(answer) == {"hookSpecificOutput"}
    out = answer["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    assert "[vendor-paging-note, " in out["additionalContext"]  # cited by id and day
    assert "opaque next_cursor token" in out["additionalContext"]
    assert "noodle" not in out["additionalContext"]


def test_prompt_gets_recalled_context_cited_by_id_from_a_daemon_without_the_context_route(
    daemon: DaemonProcess, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A daemon that predates ``POST /v1/context`` answers it "no route": the hook falls back
    to recall (the route is taken away here; everything else is the real daemon)."""
    _vendor_memory(daemon, "fallback")
    real_post = LightClient.post

    def older_daemon(self: LightClient, path: str, body: Any) -> Any:
        if path == "/v1/context":
            raise NotFound("no route POST /v1/context")
        return real_post(self, path, body)

    monkeypatch.setattr(LightClient, "post", older_daemon)
    prompt = event("user_prompt_submit", home, session_id="brand-new-session")
    out, _ = run(daemon, prompt, "--memory", "fallback")
    answer = json.loads(out)
    assert set(answer) == {"hookSpecificOutput"}
    hook = answer["hookSpecificOutput"]
    assert hook["hookEventName"] == "UserPromptSubmit"
    assert "[bead vendor-paging-note] The vendor's v3 API pages orders" in hook["additionalContext"]
    assert "noodle" not in hook["additionalContext"]


def test_the_sessions_own_turns_are_not_given_back_to_it(daemon: DaemonProcess, home: Path) -> None:
    session = "6a1d0c55-0000-4000-8000-000000000005"
    path = transcript(home, session, head="a0000005")
    run(daemon, event("stop", home, session_id=session, transcript_path=str(path)))
    own = {b.id for b in session_beads(daemon, session)}
    out, _ = run(daemon, event("user_prompt_submit", home, session_id=session))
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""
    assert own and not any(bead_id in context for bead_id in own)


def test_session_start_answers_in_its_own_event_name(daemon: DaemonProcess, home: Path) -> None:
    with daemon.client() as c:
        c.create_memory("starting")
    with daemon.client(memory="starting") as c:
        c.remember("orchard: the nightly export runs at 02:00 UTC from jobs/nightly.py",
                   session_id="orchard-notes")  # fmt: skip
    start = event("session_start", home, session_id="another-new-one")
    out, err = run(daemon, start, "--memory", "starting")
    assert err == ""
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["hookEventName"] == "SessionStart"
    assert "02:00 UTC" in answer["additionalContext"]


# ---- no daemon -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["session_start", "user_prompt_submit", "pre_compact", "stop", "session_end"]
)
def test_no_daemon_exits_0_within_a_second_and_says_so(
    name: str, home: Path, tmp_path: Path
) -> None:
    transcript(home)
    payload = json.dumps(event(name, home)).encode()
    done, seconds = command(payload, tmp_path / "nobody.sock", home)
    assert done.returncode == 0 and done.stdout == b""
    assert b"no daemon at" in done.stderr and b"not used" in done.stderr
    assert seconds < 1.0 + _startup()


def test_a_stale_socket_with_nothing_behind_it_is_no_daemon(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "stale.sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))  # bound, never listening: connect is refused
    done, seconds = command(json.dumps(event("user_prompt_submit", home)).encode(), path, home)
    assert done.returncode == 0 and b"no daemon" in done.stderr
    assert seconds < 1.0 + _startup()


def test_a_daemon_that_never_answers_costs_the_prompt_at_most_the_hooks_deadline(
    home: Path, tmp_path: Path
) -> None:
    path = tmp_path / "mute.sock"
    with socket.socket(socket.AF_UNIX) as mute:
        mute.bind(str(path))
        mute.listen(8)  # connects succeed, nobody reads or answers
        done, seconds = command(json.dumps(event("user_prompt_submit", home)).encode(), path, home)
    assert done.returncode == 0 and b"did not answer within 4 s" in done.stderr
    assert seconds < claude_hook.CONTEXT_SECONDS + 1.0 + _startup()


def _startup() -> float:
    """What starting Python costs on this machine, measured (a loaded CI box is slow)."""
    start = time.monotonic()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.monotonic() - start


# ---- attacks on transcript_path ------------------------------------------------------------


OUTSIDE = "0bad0000-0000-4000-8000-000000000000"  # the session of the files the hook must not read


def _refused(daemon: DaemonProcess, home: Path, path: str) -> str:
    _, err = run(daemon, event("stop", home, session_id=OUTSIDE, transcript_path=path))
    assert session_beads(daemon, OUTSIDE) == []
    return err


def _bait(path: Path) -> Path:
    """A transcript at ``path`` whose turns, if read, would land in session OUTSIDE."""
    text = (FIXTURES / "transcript.jsonl").read_text()
    path.write_text(text.replace(SESSION, OUTSIDE).replace(UUID_HEAD, "0bad0000"))
    return path


def test_a_symlink_out_of_the_projects_folder_is_not_followed(
    daemon: DaemonProcess, home: Path
) -> None:
    outside = _bait(home / "elsewhere.jsonl")
    link = home / "claude" / "projects" / "-home-dev-orchard" / "linked.jsonl"
    link.symlink_to(outside)
    err = _refused(daemon, home, str(link))
    assert "not under Claude Code's projects folder" in err
    link.unlink()
    link.symlink_to("/etc/passwd")
    assert "not under" in _refused(daemon, home, str(link))
    folder = home / "claude" / "projects" / "-home-dev-orchard"
    folder.rename(home / "moved")
    folder.symlink_to(home / "moved")  # the project folder itself a link out: same answer
    assert "not under" in _refused(daemon, home, str(folder / "elsewhere.jsonl"))


@pytest.mark.parametrize(
    "path", ["/etc/shadow", "/etc/passwd", "relative/t.jsonl", "", "/dev/zero"]
)
def test_paths_outside_or_not_absolute_are_refused(
    daemon: DaemonProcess, home: Path, path: str
) -> None:
    err = _refused(daemon, home, path)
    assert "nothing captured" in err or "not read" in err


def test_dot_dot_cannot_climb_out(daemon: DaemonProcess, home: Path) -> None:
    path = str(home / "claude" / "projects" / ".." / ".." / "escape.jsonl")
    _bait(home / "escape.jsonl")
    assert "not under" in _refused(daemon, home, path)


def test_a_fifo_or_another_users_file_is_not_read(daemon: DaemonProcess, home: Path) -> None:
    folder = home / "claude" / "projects" / "-home-dev-orchard"
    fifo = folder / "fifo.jsonl"
    os.mkfifo(fifo)  # opening it for reading would wait for a writer forever
    assert "not a regular file" in _refused(daemon, home, str(fifo))
    theirs = _bait(folder / "theirs.jsonl")
    if os.getuid() == 0:  # giving a file away takes root (CI runs as root)
        os.chown(theirs, 65534, 65534)
        assert "not yours" in _refused(daemon, home, str(theirs))


def test_a_huge_transcript_is_taken_in_bounded_steps(
    daemon: DaemonProcess, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = "6a1d0c55-0000-4000-8000-000000000006"
    path = transcript(home, session, head="a0000006")
    monkeypatch.setattr(claude_hook, "MAX_READ_BYTES", 3000)
    stop = event("stop", home, session_id=session, transcript_path=str(path))
    _, err = run(daemon, stop)
    assert "has more to capture" in err
    part = len(session_beads(daemon, session))
    assert 0 < part < len(CAPTURED)
    for _ in range(5):
        _, err = run(daemon, stop)
        if "more" not in err:
            break
    assert [b.id for b in session_beads(daemon, session)] == captured("a0000006")


def test_an_overlong_line_is_skipped_and_the_rest_captured(
    daemon: DaemonProcess, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = "6a1d0c55-0000-4000-8000-000000000007"
    long_entry = json.dumps({"type": "user", "uuid": "f0000000-0000-4000-8000-000000000001",
                             "sessionId": session, "timestamp": "2025-06-03T09:00:00Z",
                             "message": {"role": "user", "content": "x" * 5000}})  # fmt: skip
    body = long_entry + "\n" + (FIXTURES / "transcript.jsonl").read_text()
    path = transcript(home, session, body, head="a0000007")
    monkeypatch.setattr(claude_hook, "MAX_LINE_BYTES", 4096)
    _, err = run(daemon, event("stop", home, session_id=session, transcript_path=str(path)))
    assert "2 line(s)" in err  # the over-long one and the broken one
    assert [b.id for b in session_beads(daemon, session)] == captured("a0000007")


# ---- bad stdin -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "said"),
    [
        (b"", "not JSON"),
        (b"\xff\xfe{", "not JSON"),
        (b"session_id=x", "not JSON"),
        (b"[1, 2]", "no hook_event_name"),
        (b'{"hook_event_name": 7}', "no hook_event_name"),
        (b'{"hook_event_name": "UserPromptSubmit", "prompt": ["a"]}', "prompt is not a string"),
        (b'{"hook_event_name": "Notification", "message": "hi"}', "not an event this hook"),
        (b"{" + b" " * (claude_hook.MAX_INPUT_BYTES + 1) + b"}", "over 4,194,304 bytes"),
    ],
)
def test_bad_stdin_is_named_and_nothing_is_done(
    daemon: DaemonProcess, payload: bytes, said: str
) -> None:
    out, err = run(daemon, payload)
    assert out == "" and said in err


def test_stdin_left_open_does_not_hold_the_agent(home: Path, tmp_path: Path) -> None:
    env = {**os.environ, "CHRYSALIS_SOCKET": str(tmp_path / "none.sock")}
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "chrysalisd", "hooks", "claude-code"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    assert proc.stdin is not None
    proc.stdin.write(b'{"hook_event_name": "Stop"')  # and never closes it
    proc.stdin.flush()
    try:  # wait(), not communicate(): that would close stdin
        proc.wait(timeout=claude_hook.STDIN_SECONDS + 5 + _startup())
    finally:
        proc.kill()
        proc.wait()
        proc.stdin.close()
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    assert proc.returncode == 0 and out == b"" and b"did not end within" in err
    assert time.monotonic() - start < claude_hook.STDIN_SECONDS + 1.5 + _startup()


def test_memory_option_sends_to_that_memory(daemon: DaemonProcess, home: Path) -> None:
    with daemon.client() as c:
        c.create_memory("orchard-work")
    session = "6a1d0c55-0000-4000-8000-000000000008"
    path = transcript(home, session, head="a0000008")
    run(daemon, event("stop", home, session_id=session, transcript_path=str(path)),
        "--memory", "orchard-work")  # fmt: skip
    assert session_beads(daemon, session) == []
    with daemon.client(memory="orchard-work") as c:
        assert [b.id for b in c.last_beads(100, session_id=session)] == captured("a0000008")
    with daemon.client() as c, pytest.raises(NotFound):
        c.get_bead(captured("a0000008")[0])


def test_a_socket_planted_by_another_user_gets_nothing(home: Path, tmp_path: Path) -> None:
    """The hook's light client checks what `Client` checks before sending the prompt."""
    if os.getuid() != 0:
        pytest.skip("giving a socket to another user takes root")
    folder = tmp_path / "sockets"
    folder.mkdir(mode=0o700)
    path = folder / "d.sock"
    with socket.socket(socket.AF_UNIX) as squatter:
        squatter.bind(str(path))
        squatter.listen(8)
        os.chown(path, 65534, 65534)
        done, _ = command(json.dumps(event("user_prompt_submit", home)).encode(), path, home)
        squatter.setblocking(False)
        with pytest.raises(BlockingIOError):
            squatter.accept()  # the hook never connected
    assert done.returncode == 0 and done.stdout == b""
    assert b"belongs to user nobody (uid 65534)" in done.stderr and b"refusing" in done.stderr
