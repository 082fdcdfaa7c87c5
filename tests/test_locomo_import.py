"""LoCoMo files as beads: shape, idempotent import, recall, and refusal of other files."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from chrysalis import Memory
from chrysalis.client import Client
from chrysalis.core.errors import Conflict, InvalidInput
from chrysalisd.locomo import import_locomo, locomo_beads, parse_date, safe_id
from tests.daemon_process import DaemonThread

Opener = Callable[..., Memory]
LOCOMO_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "eval" / "locomo"

SAMPLE: dict[str, Any] = {
    "sample_id": "conv-7",
    "conversation": {
        "speaker_a": "Caroline",
        "speaker_b": "Melanie",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel! How have you been?"},
            {"speaker": "Melanie", "dia_id": "D1:2", "text": "Swamped with the kids and work."},
            {
                "speaker": "Caroline",
                "dia_id": "D1:3",
                "text": "I went to an adoption agency meeting yesterday.",
            },
        ],
        "session_2_date_time": "7:55 pm on 9 June, 2023",
        "session_2": [
            {
                "speaker": "Melanie",
                "dia_id": "D2:1",
                "text": "Look what we painted last weekend!",
                "img_url": ["https://example.invalid/sunset.jpg"],
                "blip_caption": "a photo of a painting of a sunset over a lake",
                "query": "sunset painting",
            },
            {"speaker": "Caroline", "dia_id": "D2:2", "text": "That lake looks so calm."},
        ],
        # As in the real file: a date whose session has no turns.
        "session_3_date_time": "10:37 am on 27 June, 2023",
    },
    "qa": [
        {
            "question": "What did Caroline go to?",
            "answer": "an adoption agency meeting",
            "evidence": ["D1:3"],
            "category": 1,
        }
    ],
    "event_summary": {},
    "observation": {},
    "session_summary": {},
}
IDS = [f"locomo-conv-7-{d}" for d in ("D1:1", "D1:2", "D1:3", "D2:1", "D2:2")]


def write(tmp_path: Path, data: Any, name: str = "locomo.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


@pytest.fixture
def sample_file(tmp_path: Path) -> Path:
    return write(tmp_path, [SAMPLE])


def test_one_bead_per_turn_with_ids_sessions_times_and_tags(sample_file: Path) -> None:
    rows = list(locomo_beads(sample_file))
    assert [r["id"] for r in rows] == IDS
    assert [r["session_id"] for r in rows] == ["locomo-conv-7-session_1"] * 3 + [
        "locomo-conv-7-session_2"
    ] * 2
    assert [r["turn_id"] for r in rows] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2"]
    assert {r["role"] for r in rows} == {"user"}
    assert rows[0]["content"] == "Caroline: Hey Mel! How have you been?"
    assert rows[0]["tags"] == ["locomo", "Caroline"]
    assert rows[1]["tags"] == ["locomo", "Melanie"]
    assert rows[3]["content"] == (
        "Melanie: Look what we painted last weekend! "
        "[shares a photo: a photo of a painting of a sunset over a lake]"
    )
    start_1 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC).timestamp()
    start_2 = datetime(2023, 6, 9, 19, 55, tzinfo=UTC).timestamp()
    assert [r["ts"] for r in rows] == [start_1, start_1 + 1, start_1 + 2, start_2, start_2 + 1]


def test_import_into_memory_is_idempotent_and_recallable(
    open_memory: Opener, sample_file: Path
) -> None:
    mem = open_memory()
    counts = import_locomo(mem, sample_file, batch=2)
    assert counts == {
        "turns": 5,
        "added": 5,
        "unchanged": 0,
        "forgotten": 0,
        "conversations": 1,
        "sessions": 2,
        "batches": 3,
    }
    beads = list(mem.all_beads())
    assert [b.id for b in beads] == IDS
    assert [b.ts for b in beads] == sorted(b.ts for b in beads)
    assert len({b.ts for b in beads}) == 5
    assert [b.id for b in mem.last_beads(10, session_id="locomo-conv-7-session_2")] == IDS[3:]
    digest = mem.state_digest()

    again = import_locomo(mem, sample_file)
    assert again["added"] == 0 and again["unchanged"] == 5 and again["batches"] == 0
    assert mem.state_digest() == digest

    mem.wait_indexed(10)
    hits = mem.retrieve("adoption agency meeting", k=3, strategy="keyword").items
    assert hits and hits[0].id == "locomo-conv-7-D1:3"
    assert hits[0].text.startswith("Caroline: ")


def test_a_forgotten_turn_stays_forgotten(open_memory: Opener, sample_file: Path) -> None:
    mem = open_memory()
    import_locomo(mem, sample_file)
    mem.forget("locomo-conv-7-D1:2")
    counts = import_locomo(mem, sample_file)
    assert (counts["added"], counts["unchanged"], counts["forgotten"]) == (0, 4, 1)
    assert len(list(mem.all_beads())) == 4


def test_a_changed_file_conflicts_before_writing(
    open_memory: Opener, tmp_path: Path, sample_file: Path
) -> None:
    mem = open_memory()
    import_locomo(mem, sample_file)
    changed = copy.deepcopy(SAMPLE)
    changed["conversation"]["session_2"][1]["text"] = "That lake looks stormy."
    changed["conversation"]["session_4_date_time"] = "9:00 am on 1 July, 2023"
    changed["conversation"]["session_4"] = [{"speaker": "Melanie", "dia_id": "D4:1", "text": "Hi"}]
    digest = mem.state_digest()
    with pytest.raises(Conflict, match="locomo-conv-7-D2:2"):
        import_locomo(mem, write(tmp_path, [changed], "changed.json"))
    assert mem.state_digest() == digest


def test_a_session_without_a_date_follows_the_one_before(tmp_path: Path) -> None:
    sample = copy.deepcopy(SAMPLE)
    del sample["conversation"]["session_2_date_time"]
    rows = list(locomo_beads(write(tmp_path, sample)))  # one conversation, not in a list
    ts = [r["ts"] for r in rows]
    assert ts == sorted(ts) and len(set(ts)) == 5
    assert ts[3] == ts[2] + 1


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("not json {", "not JSON"),
        ([], "expected a JSON list of conversations"),
        ({"sessions": []}, "expected a JSON list of conversations"),
        ([{"sample_id": "x"}], "no 'conversation' object"),
        ([{"sample_id": "x", "conversation": {"speaker_a": "A"}}], "no session_N lists"),
        ([{"sample_id": "x", "conversation": {"session_1": "hello"}}], "not a list of turns"),
        (
            [{"sample_id": "x", "conversation": {"session_1": [{"speaker": "A", "text": "t"}]}}],
            "session_1 turn 1: dia_id must be a string",
        ),
        (
            [
                {
                    "sample_id": "x",
                    "conversation": {
                        "session_1": [
                            {"speaker": "A", "dia_id": "D1:1", "text": "a"},
                            {"speaker": "B", "dia_id": "D1:1", "text": "b"},
                        ]
                    },
                }
            ],
            "appears twice",
        ),
    ],
)
def test_a_file_that_is_not_locomo_is_refused(
    open_memory: Opener, tmp_path: Path, data: Any, message: str
) -> None:
    mem = open_memory()
    path = write(tmp_path, data)
    with pytest.raises(InvalidInput, match=message):
        import_locomo(mem, path)
    assert list(mem.all_beads()) == []


def test_a_bad_turn_late_in_the_file_writes_nothing(open_memory: Opener, tmp_path: Path) -> None:
    broken = copy.deepcopy(SAMPLE)
    broken["conversation"]["session_2"].append({"speaker": "Melanie", "dia_id": "D2:3"})
    mem = open_memory()
    with pytest.raises(InvalidInput, match="conv-7: session_2 turn 3: text"):
        import_locomo(mem, write(tmp_path, [broken]), batch=1)
    assert list(mem.all_beads()) == []


def test_missing_file_and_bad_batch(open_memory: Opener, tmp_path: Path, sample_file: Path) -> None:
    mem = open_memory()
    with pytest.raises(InvalidInput, match="cannot read"):
        import_locomo(mem, tmp_path / "absent.json")
    with pytest.raises(InvalidInput, match="batch"):
        import_locomo(mem, sample_file, batch=0)


def test_helpers() -> None:
    assert (
        parse_date("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC).timestamp()
    )
    assert parse_date("12:48 am on 1 February, 2023") == (
        datetime(2023, 2, 1, 0, 48, tzinfo=UTC).timestamp()
    )
    assert parse_date("yesterday") is None
    assert safe_id("locomo-conv 26/x_y-D1:1") == "locomo-conv-26-x_y-D1:1"
    assert safe_id("__a") == "a"
    assert len(safe_id("a" * 300)) == 128
    with pytest.raises(InvalidInput):
        safe_id("///")


@pytest.mark.skipif(not LOCOMO_DIR.is_dir(), reason="no ../shared/eval/locomo")
def test_the_first_real_conversation_imports(open_memory: Opener, tmp_path: Path) -> None:
    files = sorted(LOCOMO_DIR.glob("*.json"))
    if not files:
        pytest.skip("no LoCoMo JSON file in ../shared/eval/locomo")
    data = json.loads(files[0].read_text())
    first = data[0]
    conversation = first["conversation"]
    turns = sum(len(v) for k, v in conversation.items() if k.split("_")[-1].isdigit())
    sessions = sum(1 for k, v in conversation.items() if k.split("_")[-1].isdigit() and v)
    mem = open_memory()
    # Only in tmp_path: evaluation data never goes into the repository.
    path = write(tmp_path, [first], "first.json")
    counts = import_locomo(mem, path)
    assert 100 <= counts["added"] == turns <= 5000
    assert counts["sessions"] == sessions and counts["conversations"] == 1
    beads = list(mem.all_beads())  # in time order: the same as the file's
    assert [b.id for b in beads] == [r["id"] for r in locomo_beads(path)]
    assert len({b.id for b in beads}) == turns
    assert all(b.id.startswith(f"locomo-{first['sample_id']}-") for b in beads)
    assert import_locomo(mem, path)["added"] == 0


def test_import_through_the_daemon(tmp_path: Path, sample_file: Path) -> None:
    daemon = DaemonThread(tmp_path / "data")
    try:
        daemon.start()
        with Client(daemon.socket, timeout=30) as client:
            first = import_locomo(client, sample_file)
            assert (first["added"], first["unchanged"]) == (5, 0)
            client.forget(IDS[0])
            again = import_locomo(client, sample_file)
            assert (again["added"], again["unchanged"], again["forgotten"]) == (0, 4, 1)
            assert [b.id for b in client.last_beads(10)] == IDS[1:]
        out = daemon.cli("import", "--format", "locomo", str(sample_file))  # the CLI way
        assert out.returncode == 0, out.stderr
        assert "imported 0 turns" in out.stdout and "4 already here" in out.stdout
        assert daemon.stop() == 0, daemon.output()
    finally:
        daemon.close()
