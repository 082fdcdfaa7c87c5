"""Forget by selector end to end: the daemon as a subprocess on a real Unix socket, reached
through the HTTP API (`POST /v1/forget`), the client and the ``chrysalis forget`` command.
(The MCP tool is driven in tests/test_mcp.py.)"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from chrysalis import Memory
from chrysalis.core.errors import InvalidInput, NotFound, SelectionChanged
from chrysalis.sync import Sync

from .daemon_process import DaemonProcess, DaemonThread


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    d = DaemonThread(tmp_path_factory.mktemp("forget") / "data").start()
    yield d
    d.close()


def post(daemon: DaemonProcess, body: dict[str, Any]) -> tuple[int, Any]:
    """``POST /v1/forget`` by hand, as curl --unix-socket would send it."""
    transport = httpx.HTTPTransport(uds=str(daemon.socket))
    with httpx.Client(transport=transport, base_url="http://chrysalis") as http:
        r = http.post("/v1/forget", json=body)
    return r.status_code, r.json()


def seed(daemon: DaemonProcess, session: str, *texts: str, **fields: Any) -> list[str]:
    with daemon.client() as c:
        return [c.remember(t, session_id=session, **fields).id for t in texts]


def live(daemon: DaemonProcess, ids: list[str]) -> list[str]:
    out = []
    with daemon.client() as c:
        for bead_id in ids:
            try:
                c.get_bead(bead_id)
                out.append(bead_id)
            except NotFound:
                pass
    return out


def test_api_by_session_dry_run_changes_nothing_then_expect_guards(
    daemon: DaemonProcess,
) -> None:
    ids = seed(daemon, "api-s", "first turn about sailing", "second turn", "third turn")
    other = seed(daemon, "api-other", "a turn elsewhere")
    status, seen = post(daemon, {"session_id": "api-s"})  # a dry run unless told otherwise
    assert status == 200 and seen["matched"] == 3 and seen["more"] is False
    assert [b["id"] for b in seen["beads"]] == ids
    assert seen["beads"][0]["preview"] == "first turn about sailing"
    assert seen["beads"][0]["session_id"] == "api-s" and seen["beads"][0]["role"] == "user"
    assert live(daemon, ids) == ids  # the dry run changed nothing

    ids += seed(daemon, "api-s", "a turn that arrived after the preview")
    confirm = {"session_id": "api-s", "dry_run": False, "expect_digest": seen["expect_digest"]}
    status, err = post(daemon, {**confirm, "expect": 3})
    assert status == 409 and err["error"]["code"] == "selection_changed"
    assert (
        "4 bead(s) match now, 3 were expected; nothing was forgotten" in (err["error"]["message"])
    )
    assert live(daemon, ids) == ids
    with daemon.client() as c, pytest.raises(SelectionChanged):
        c.forget_where(session_id="api-s", dry_run=False, expect_digest=seen["expect_digest"])

    status, seen = post(daemon, {"session_id": "api-s"})  # previewed again: all four shown
    assert seen["matched"] == 4
    status, done = post(daemon, {**confirm, "expect": 4, "expect_digest": seen["expect_digest"]})
    assert status == 200
    empty = "sha256:" + hashlib.sha256(b"").hexdigest()  # nothing left to confirm
    assert done == {"forgotten": 4, "ids": ids, "matched": 4, "more": False,
                    "expect_digest": empty}  # fmt: skip
    assert live(daemon, ids) == [] and live(daemon, other) == other
    with daemon.client() as c:
        assert not [i for i in c.recall("sailing", k=10).items if i.id in ids]
        assert c.forget_where(session_id="api-s")["matched"] == 0


def test_api_refuses_bad_selectors_in_plain_words(daemon: DaemonProcess) -> None:
    ids = seed(daemon, "api-bad", "kept whatever is sent")
    cases = [
        ({}, "an empty selector would forget every bead"),
        ({"dry_run": False}, "an empty selector would forget every bead"),
        ({"session_id": None, "dry_run": False}, "an empty selector"),
        ({"path": "docs/a.md"}, "path must be absolute"),
        ({"query": "!!"}, "has no words to match"),
        ({"role": "robot"}, "role"),
        ({"colour": "red"}, "colour"),
        ({"after": "yesterday"}, "not an ISO 8601 timestamp"),
        ({"session_id": "api-bad", "expect": -1, "dry_run": False}, "expect"),
        ({"session_id": "api-bad", "expect": 1, "dry_run": False}, "Pass expect_digest"),
        ({"session_id": "api-bad", "expect_digest": "", "dry_run": False}, "expect_digest"),
    ]
    for body, words in cases:
        status, err = post(daemon, body)
        assert status == 400, body
        assert words in err["error"]["message"], (body, err)
    assert live(daemon, ids) == ids
    with daemon.client() as c, pytest.raises(InvalidInput, match="empty selector"):
        c.forget_where(dry_run=False)


def test_api_by_path_forgets_one_ingested_file(daemon: DaemonProcess, tmp_path: Path) -> None:
    keep, drop = tmp_path / "keep.md", tmp_path / "drop.md"
    keep.write_text("# Keep\n\nthe harbour opens at dawn\n")
    drop.write_text("# Drop\n\nthe old wifi password\n\n# More\n\nand its router\n")
    with daemon.client() as c:
        c.ingest(path=str(keep))
        c.ingest(path=str(drop))
        seen = c.forget_where(path=str(drop))
        assert seen["matched"] == 2
        assert all(b["session_id"].startswith("ingest:") for b in seen["beads"])
        done = c.forget_where(path=str(drop), dry_run=False, expect_digest=seen["expect_digest"])
        assert done["forgotten"] == 2
        assert c.forget_where(path=str(drop))["matched"] == 0
        assert c.forget_where(path=str(keep))["matched"] == 1
        assert c.forget_where(path=str(tmp_path))["matched"] == 1  # a directory: all under it
        texts = [i.text for i in c.recall("wifi password router", k=10).items]
    assert not any("wifi" in t or "router" in t for t in texts)


def test_api_by_query_needs_every_word(daemon: DaemonProcess) -> None:
    hit = seed(daemon, "api-q", "the staging token is abc123", tags=["secret"])
    near = seed(daemon, "api-q", "the staging server is down")
    with daemon.client() as c:
        assert c.forget_where(query="staging token")["matched"] == 1
        assert c.forget_where(query="staging", tag="secret")["matched"] == 1  # AND
        seen = c.forget_where(query="STAGING tokens")  # stemmed
        assert seen["matched"] == 1
        done = c.forget_where(
            query="STAGING tokens", dry_run=False, expect_digest=seen["expect_digest"]
        )
    assert done["ids"] == hit
    assert live(daemon, hit + near) == near


def test_cli_previews_asks_once_and_forgets(daemon: DaemonProcess) -> None:
    ids = seed(daemon, "cli-s", "cli bead one", "cli bead two")
    out = daemon.cli("forget", "--session", "cli-s", "--dry-run")
    assert out.returncode == 0, out.stderr
    assert "2 beads match" in out.stdout and "cli bead one" in out.stdout
    assert ids[0] in out.stdout and live(daemon, ids) == ids

    out = daemon.cli("forget", "--session", "cli-s", input="n\n")
    assert out.returncode == 1, out.stderr  # declined: as every command that asks
    assert (
        "Forget 2 beads? [y/N]" in out.stdout and out.stderr == "cancelled: nothing was changed\n"
    )
    assert live(daemon, ids) == ids

    out = daemon.cli("forget", "--session", "cli-s", input="y\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("Forget 2 beads? [y/N]") == 1  # one confirmation
    assert "forgot 2 beads" in out.stdout
    assert live(daemon, ids) == []

    out = daemon.cli("forget", "--session", "cli-s", "--yes")
    assert out.returncode == 0 and "no bead matches" in out.stdout


def test_cli_by_path_and_query_with_yes_and_json(daemon: DaemonProcess, tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("notes about the lighthouse keeper\n")
    b.write_text("notes about the ferry timetable\n")
    for f in (a, b):
        assert daemon.cli("ingest", str(f)).returncode == 0
    out = daemon.cli("forget", "--path", str(a), "--yes", "--json")
    assert out.returncode == 0, out.stderr
    done = json.loads(out.stdout)
    assert done["forgotten"] == 1 and len(done["ids"]) == 1
    with daemon.client() as c:
        assert c.forget_where(path=str(a))["matched"] == 0
        assert c.forget_where(path=str(b))["matched"] == 1
    out = daemon.cli("forget", "--query", "ferry timetable", "--dry-run", "--json")
    assert json.loads(out.stdout)["matched"] == 1
    out = daemon.cli("forget", "--query", "ferry timetable", "--json", input="y\n")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["forgotten"] == 1  # the prompt went to stderr
    assert "Forget 1 bead? [y/N]" in out.stderr


def test_cli_single_id_and_usage_errors(daemon: DaemonProcess) -> None:
    (bead,) = seed(daemon, "cli-id", "forget me by id")
    out = daemon.cli("forget", bead)
    assert out.returncode == 0 and f"forget receipt for {bead}" in out.stdout
    assert live(daemon, [bead]) == []
    out = daemon.cli("forget", bead, "--wait", "20")  # forgetting again: the receipt only
    assert out.returncode == 0 and "gone everywhere Chrysalis knows of" in out.stdout, out.stdout
    out = daemon.cli("forget", "--session", "cli-id", "--dry-run", "--wait")
    assert out.returncode == 2 and "--wait goes with a forget, not a --dry-run" in out.stderr
    out = daemon.cli("forget")
    assert out.returncode == 2 and "give a bead ID, or a selector" in out.stderr
    out = daemon.cli("forget", bead, "--session", "cli-id")
    assert out.returncode == 2 and "not both" in out.stderr
    out = daemon.cli("forget", "--session", "cli-id", "--before", "yesterday", "--dry-run")
    assert out.returncode == 2 and "'yesterday' is not a time" in out.stderr  # checked here


# ---- issue 28 C8: a confirm forgets exactly what the preview showed --------------------------


def race(daemon: DaemonProcess, session: str) -> tuple[dict[str, Any], list[str], str]:
    """Preview {a, b, c}; then another client forgets a and writes a matching d. Answers the
    preview, [a, b, c] and d."""
    ids = seed(daemon, session, "old a", "old b", "old c")
    status, seen = post(daemon, {"session_id": session})
    assert status == 200 and seen["matched"] == 3
    with daemon.client() as other:
        other.forget(ids[0])
        (unseen,) = seed(daemon, session, "new unseen")
    return seen, ids, unseen


def test_a_confirm_with_the_preview_digest_refuses_a_changed_match(
    daemon: DaemonProcess,
) -> None:
    seen, (_a, b, c), d = race(daemon, "race-digest")
    status, err = post(
        daemon,
        {"session_id": "race-digest", "dry_run": False, "expect_digest": seen["expect_digest"]},
    )
    assert status == 409 and err["error"]["code"] == "selection_changed", err
    assert "not the ones the preview showed" in err["error"]["message"]
    assert "nothing was forgotten" in err["error"]["message"]
    assert live(daemon, [b, c, d]) == [b, c, d]  # nothing forgotten, d least of all
    # Previewed again, the new digest forgets exactly the new set.
    status, again = post(daemon, {"session_id": "race-digest"})
    assert again["expect_digest"] != seen["expect_digest"]
    status, done = post(
        daemon,
        {"session_id": "race-digest", "dry_run": False, "expect_digest": again["expect_digest"]},
    )
    assert status == 200 and done["ids"] == [b, c, d], done
    assert live(daemon, [b, c, d]) == []


def test_a_count_alone_never_forgets_a_bead_the_preview_did_not_show(
    daemon: DaemonProcess,
) -> None:
    _seen, (_a, b, c), d = race(daemon, "race-count")
    status, err = post(daemon, {"session_id": "race-count", "dry_run": False, "expect": 3})
    assert (
        status == 400
        and "alone cannot say which beads the preview showed" in (err["error"]["message"])
    ), err
    assert live(daemon, [b, c, d]) == [b, c, d]


# ---- issue 28 C10: a forget by selector prints its receipt and honours --wait ---------------


def test_cli_forget_by_selector_prints_the_receipt_and_waits(daemon: DaemonProcess) -> None:
    ids = seed(daemon, "cli-r", "receipt bead one", "receipt bead two")
    out = daemon.cli("forget", "--session", "cli-r", "--yes", "--wait", "20")
    assert out.returncode == 0, out.stdout + out.stderr
    first = out.stdout.splitlines()[0]
    assert first.startswith("forgot 2 beads; forget receipt (from "), out.stdout
    assert first.endswith("gone everywhere Chrysalis knows of"), out.stdout
    assert "✓ local" in out.stdout and "2 gone" in out.stdout
    assert live(daemon, ids) == []

    more = seed(daemon, "cli-rj", "json receipt bead")
    out = daemon.cli("forget", "--session", "cli-rj", "--yes", "--json", "--wait", "20")
    assert out.returncode == 0, out.stderr
    done = json.loads(out.stdout)
    assert done["forgotten"] == 1 and done["ids"] == more and done["clean"] is True
    assert [r["bead_id"] for r in done["receipts"]] == more
    assert all(p["state"] == "gone" for p in done["receipts"][0]["places"])


def test_cli_forget_by_selector_wait_exits_3_while_a_place_holds_it(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    env = {
        "CHRYSALIS_REMOTE": f"file://{tmp_path / 'shared'}",
        "CHRYSALIS_PUSH_INTERVAL": "3600",
        "CHRYSALIS_PULL_INTERVAL": "3600",
        "CHRYSALIS_SCRUB_DELAY": "0.2",
    }
    d = DaemonThread(tmp_path / "a", env=env).start()
    try:
        ids = seed(d, "held", "pushed before the forget", "and this one too")
        assert json.loads(d.cli("sync", "--json").stdout)["ok"]  # the remote holds them now
        # another laptop pulls them and says so in its heartbeat, then goes offline: its
        # copy holds the text until it syncs again
        with Memory.open(tmp_path / "b", embedder="deterministic") as b:
            laptop = Sync(b, env["CHRYSALIS_REMOTE"])
            laptop.pull()
            laptop.push()
            other = b.replica_id
        assert json.loads(d.cli("sync", "--json").stdout)["ok"]  # a reads b's heartbeat
        out = d.cli("forget", "--session", "held", "--yes", "--wait", "1")
        assert out.returncode == 3, out.stdout + out.stderr  # b's copy remains
        assert "forgot 2 beads; forget receipt" in out.stdout
        assert "pending on" in out.stdout and other in out.stdout, out.stdout
        assert live(d, ids) == []
    finally:
        d.close()
