"""Session summaries (DESIGN §14): a bead per rested session, made from its turns, naming
them as evidence; a forget of any of them forgets the summary and its origin writes it again
from what is left; the summary itself is content a forget erases everywhere."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from chrysalis import Memory
from chrysalis.core.models import Bead
from chrysalis.extract.summary import MIN_BEADS, extractive
from tests.conftest import exchange

T0 = 1_683_500_000.0  # 2023-05-07: long rested
TURNS = [
    ("Ada", "Hi Bo, how was the trip to Lisbon?"),
    ("Bo", "We visited the Gulbenkian museum and ate pasteis de nata every morning."),
    ("Ada", "Did you ride the famous yellow tram 28 through the old town?"),
    ("Bo", "Yes, we rode tram 28 through Alfama twice, crowded but beautiful."),
    ("Ada", "I want to see Lisbon next spring with my sister Anna."),
    ("Bo", "Sounds good!"),
]


def talk(mem: Memory, session: str = "trip", t0: float = T0) -> list[Bead]:
    return [
        mem.append_bead(text, session_id=session, ts=t0 + 60 * i, source=who)
        for i, (who, text) in enumerate(TURNS)
    ]


def summaries(mem: Memory, session: str = "trip") -> list[Bead]:
    return [b for b in mem.last_beads(100, session_id=session) if b.derived_by is not None]


def test_extractive_summary_keeps_speakers_order_and_every_turn_as_evidence() -> None:
    beads = [
        Bead(id=f"b{i}", ts=T0 + i, content=text, source=who, session_id="trip")
        for i, (who, text) in enumerate(TURNS)
    ]
    system = Bead(id="sys", ts=T0, content="You are a helpful assistant always.", role="system")
    summary = extractive("trip", [system, *beads])
    assert summary is not None
    lines = summary.text.splitlines()
    assert lines[0] == "Session trip, 2023-05-07: 6 turns by Ada, Bo."
    assert "Bo: Yes, we rode tram 28 through Alfama twice, crowded but beautiful." in lines
    assert lines[-1].startswith("Topics: ") and "lisbon" in lines[-1] and "tram" in lines[-1]
    body = lines[1:-1]
    assert body == sorted(
        body, key=lambda line: [t for _, t in TURNS].index(line.split(": ", 1)[1])
    )
    assert "Sounds good" not in summary.text  # too short to say anything alone
    assert "helpful assistant" not in summary.text  # instructions are not the conversation
    assert summary.evidence == tuple(b.id for b in beads)
    assert extractive("trip", [system, *beads]) == summary  # deterministic
    assert extractive("trip", beads[: MIN_BEADS - 1]) is None


def test_a_rested_session_gets_a_summary_and_a_live_one_waits(
    open_memory: Callable[..., Memory],
) -> None:
    mem = open_memory(extractor="rules", summary_after=600.0)
    old = talk(mem, "trip")
    live = talk(mem, "now", t0=time.time() - 120)
    assert mem.wait_learned(30)
    [summary] = summaries(mem, "trip")
    assert summaries(mem, "now") == []
    assert summary.tags == ["summary"] and summary.role == "note"
    assert summary.derived_by == "summary/1"
    assert summary.derived_from == [b.id for b in old]
    assert summary.ts == old[-1].ts  # it sits at the session's end
    assert "Alfama" in summary.content
    status = mem.knowledge.status()["summaries"]
    assert status == {"written": 1, "sessions_waiting": 1}
    assert live  # its session waits until it rests
    # Retrieval lists it when asked for summaries, and says what it stands on; otherwise it
    # leaves the slots to the turns.
    query = "what did Ada and Bo talk about in the Lisbon trip session"
    result = mem.retrieve(query, k=10, filters={"tags": ["summary"]})
    [item] = [i for i in result.items if i.id == summary.id]
    assert item.provenance["derived_by"] == "summary/1"
    assert item.provenance["derived_from"] == len(old)
    plain = mem.retrieve(query, k=10)
    assert summary.id not in {i.id for i in plain.items}
    assert {b.id for b in old} & {i.id for i in plain.items}


def test_forgetting_a_turn_forgets_the_summary_and_writes_it_again(
    open_memory: Callable[..., Memory],
) -> None:
    mem = open_memory(extractor="rules", summary_after=0.0)
    beads = talk(mem)
    assert mem.wait_learned(30)
    [first] = summaries(mem)
    mem.forget(beads[3].id)  # the Alfama turn
    assert mem.wait_learned(30)
    [second] = summaries(mem)
    assert second.id != first.id
    assert "Alfama" not in second.content
    assert beads[3].id not in second.derived_from
    assert mem.reader.bead_states([first.id]) == {first.id: "forgotten"}
    receipt = mem.forget_receipt(beads[3].id)
    [knowledge] = [p for p in receipt.places if p.name.endswith("knowledge")]
    assert knowledge.state == "gone", knowledge
    # Forget the session: nothing is left to summarise, and no summary stays.
    mem.forget_where({"session_id": "trip"})
    assert mem.wait_learned(30)
    assert mem.last_beads(100, session_id="trip") == []
    assert mem.knowledge.status()["summaries"]["sessions_waiting"] == 0


def test_a_summary_is_erased_from_every_file_with_its_turn(
    open_memory: Callable[..., Memory],
) -> None:
    mem = open_memory(extractor="rules", summary_after=0.0, scrub_delay=3600)
    beads = talk(mem)
    secret = mem.append_bead(
        "The vault code word is ZEBRACORN41 and the boat is moored at the marina.",
        session_id="trip", ts=T0 + 3600, source="Bo",
    )  # fmt: skip
    assert mem.wait_learned(30)
    [summary] = summaries(mem)
    assert "ZEBRACORN41" in summary.content
    mem.forget(secret.id)
    assert mem.wait_learned(30)
    mem.wait_indexed(30)
    mem.scrubber.run()
    held = [
        str(p)
        for p in Path(mem.path).rglob("*")
        if p.is_file() and b"ZEBRACORN41" in p.read_bytes()
    ]
    assert held == []
    [again] = summaries(mem)
    assert "ZEBRACORN41" not in again.content and len(again.derived_from) == len(beads)


def test_a_forget_on_another_laptop_reaches_the_summary_and_its_origin_rewrites_it(
    tmp_path: Path,
) -> None:
    a = Memory.open(tmp_path / "a", sync=False, extractor="rules", summary_after=0.0)
    b = Memory.open(tmp_path / "b", sync=False, extractor="rules", summary_after=0.0)
    try:
        beads = talk(a)
        assert a.wait_learned(30)
        exchange(a, b)
        assert b.wait_learned(30)
        [summary] = summaries(b)
        assert summary.derived_by == "summary/1"  # b writes none of its own: not its turns
        b.forget(beads[1].id)  # the Gulbenkian turn, forgotten while a is away
        assert b.wait_learned(30)
        assert summaries(b) == []  # b forgot a's summary too: it held the turn's words
        exchange(a, b)
        assert a.wait_learned(30)
        exchange(a, b)
        assert b.wait_learned(30)
        [again_a], [again_b] = summaries(a), summaries(b)
        assert again_a == again_b and "Gulbenkian" not in again_a.content
        assert a.state_digest() == b.state_digest()
    finally:
        a.close()
        b.close()
