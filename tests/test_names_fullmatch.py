"""Names and ids are validated whole (issue 28, B7): a pattern written ``^...$`` and applied
with `re.match` lets a trailing newline through (``$`` matches just before one), so
``"team\\n"`` named a memory and made a folder with a newline in its name. Every check is a
full match; each is attacked here with the trailing newline, through the socket where the
check guards the API."""

from __future__ import annotations

from pathlib import Path

import pytest

from chrysalis import Memory
from chrysalis.core.checks import check_id
from chrysalis.core.errors import InvalidInput
from chrysalis.ingest.files import ingest_text
from chrysalis.remotes import check_url
from chrysalisd.config import Settings, check_memory_name

from .daemon_process import DaemonProcess


@pytest.mark.parametrize("name", ["team\n", "default\n", "team\r\n", "\nteam"])
def test_a_memory_name_with_a_newline_is_refused_and_makes_no_folder(
    daemon: DaemonProcess, tmp_path: Path, name: str
) -> None:
    with daemon.client() as c:
        with pytest.raises(InvalidInput, match="cannot name a memory"):
            c.create_memory(name)
        with pytest.raises(InvalidInput, match="cannot name a memory"):
            c.drop_memory(name)
        assert [m["name"] for m in c.memories()] == ["default"]
    root = tmp_path / "data" / "memories"
    assert not root.exists() or list(root.iterdir()) == []


def test_ids_with_a_trailing_newline_are_refused_through_the_socket(
    daemon: DaemonProcess,
) -> None:
    with daemon.client() as c:
        c.remember("a bead whose id is plain", id="plain")
        for call in (
            lambda: c.get_bead("plain\n"),
            lambda: c.forget("plain\n"),
            lambda: c.forget_receipt("plain\n"),
        ):
            with pytest.raises(InvalidInput, match=r"invalid bead id 'plain\\n'"):
                call()
        with pytest.raises(InvalidInput, match="id"):
            c.remember("a bead with a bad id", id="bad\n")
        assert c.get_bead("plain").content == "a bead whose id is plain"  # not forgotten
        assert c.status()["counts"]["beads"] == 1


def test_an_ingest_session_id_with_a_trailing_newline_is_refused(mem: Memory) -> None:
    with pytest.raises(InvalidInput, match=r"invalid session id 's1\\n'"):
        ingest_text(mem, "one paragraph of notes", source="notes.md", session_id="s1\n")
    assert mem.stats()["bead_time"] == 0


@pytest.mark.parametrize(
    "check",
    [
        lambda: check_id("bead-1\n", "bead"),
        lambda: check_memory_name("team\n"),
        lambda: check_url("file:///tmp/remote\n"),
        lambda: check_url("s3://bucket\n/prefix"),
        lambda: Settings(replica_id="abcd\n"),
        lambda: Settings(zep_user_id="me\n"),
    ],
    ids=["id", "memory", "file-url", "s3-url", "replica", "zep-user"],
)
def test_every_name_check_refuses_a_trailing_newline(check: object) -> None:
    with pytest.raises((InvalidInput, ValueError)):
        check()  # type: ignore[operator]


def test_a_predicate_name_is_stripped_before_it_is_checked() -> None:
    """Predicate names are split on commas and stripped (a flag, a variable), so a newline
    around one is not part of the name; one inside is refused."""
    assert Settings(functional_predicates=["lives_in\n"]).functional_predicates == ["lives_in"]
    with pytest.raises(ValueError, match="not a predicate name"):
        Settings(functional_predicates=["lives\nin"])
