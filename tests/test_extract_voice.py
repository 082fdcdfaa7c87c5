"""Whose words a user's bead holds (`chrysalis.extract.mood`, `chrysalis.extract.typed`): a
pasted message, reported speech, a story or an example, a plan, a correction, a negation and
another person's things are not the user's own statement of where they live, work, what they
drink or drive; the user's own lines under their own heads still are.

Every sentence here is written for these tests (none is a bench wording): each class of
reading gets several shapes, so a rule fitted to one wording fails the others."""

from __future__ import annotations

import pytest

from chrysalis.core.models import Bead
from chrysalis.extract.mood import EXAMPLE, REPORTED, RETRACTED, Reading
from chrysalis.extract.rules import RulesExtractor


def own(text: str) -> set[tuple[str, str]]:
    """The (attribute, value) pairs the user's bead puts in the timeline as their own."""
    got = RulesExtractor().extract_one(Bead(id="v1", content=text, ts=1.0, session_id="s"))
    return {(m.predicate, m.value) for m in got.mentions if m.own}


@pytest.mark.parametrize(
    "text",
    [
        # a chat log's line under someone's name, with or without a time stamp
        "[07:05] Ottilie: finally got the keys to my flat in Aarhus",
        "2025-02-11 21:14 - Bram: signed my contract with Veldhuis Logistics, start Monday",
        "copied out of the group chat -- Sunniva: I work at Tidewater Analytics now",
        # a message introduced as someone else's
        "Text from Priya: my new flat in Porto has a balcony",
        "Voicemail from Aunt Rosa: I moved to Seville, the flat is lovely",
        "DM from jules: living in Lyon now, the rent is brutal",
        "Kemal's message: we finally got the keys to our flat in Izmir",
        "Her reply: I work at Fennick Labs now, the onboarding was fine",
        "Got this from Noor this morning: home base is Bergen now, the flat is cold",
        # a head that ends its line governs the paragraph under it
        "Forwarding what Dad sent:\nI live in Malaga now, the flat is by the sea",
        "What my cousin posted:\n\nmoved to Lisbon, the flat is tiny",
    ],
)
def test_a_message_pasted_under_another_writer_is_theirs(text: str) -> None:
    assert own(text) == set(), text


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("Update: I live in Bergen now, the flat is cold", ("lives_in", "Bergen")),
        ("Note to self: new job at Fennick Labs starts Monday, badge collected",
         ("works_at", "Fennick Labs")),
        ("My reply to Ilse: I live in Bergen now, come and visit the flat",
         ("lives_in", "Bergen")),
        ("Big news from work: I signed the contract with Nordlicht today",
         ("works_at", "Nordlicht")),
        ("New Job: I started at Fennick Labs today, the badge works",
         ("works_at", "Fennick Labs")),
        ("Me: just moved into a flat in Oulu", ("lives_in", "Oulu")),
        ("Long story short: I live in Bergen now, the flat is cold", ("lives_in", "Bergen")),
        ("For example, I live in Bergen now and the rent is high.", ("lives_in", "Bergen")),
        ("I told Mia about my job at Vesterlund, she was impressed",
         ("works_at", "Vesterlund")),
        ("In May I moved to Leipzig and the flat is great", ("lives_in", "Leipzig")),
        ("see https://example.org/flat: I live in Tromsø now, the flat is cold",
         ("lives_in", "Tromsø")),
    ],
)  # fmt: skip
def test_the_users_own_lines_under_their_own_heads_stay_theirs(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact in own(text), text


@pytest.mark.parametrize(
    "text",
    [
        "Sample story for the class: I live in Kyoto now and my flat faces a temple",
        "Here is an example sentence: I moved to Oslo last spring and love the flat.",
        "Translate into German: I live in Munich now and my flat is small.",
        "Exercise 3. Rewrite in the past tense: I drink oat latte every morning.",
        "In the short story I'm drafting, the narrator lives in Tbilisi now in a tiny flat.",
        "My character in the campaign just got a job at Ironhold Forge, the pay is gold",
    ],
)
def test_a_story_or_an_example_is_not_the_users_life(text: str) -> None:
    assert own(text) == set(), text


@pytest.mark.parametrize(
    "text",
    [
        "the move to Tallinn fell through, we're staying put in our flat",
        "we didn't move to Tallinn after all, the flat fell through",
        "the job at Orbix Systems was called off, the contract never came",
        "we may end up renting a flat in Dresden",
        "might move to Porto next year if the flat works out",
        "Rumour at work is that I'm moving to Lille, no idea where that came from",
    ],
)
def test_a_move_that_did_not_happen_or_is_only_talk_is_no_home(text: str) -> None:
    assert not {v for a, v in own(text) if a in {"lives_in", "works_at"}}, text


@pytest.mark.parametrize(
    "text",
    [
        "my partner works at Morrow Bakery now, the shifts are early",
        "my flatmate just got a job at Quillon, she starts Monday",
        "went to see Sam's new flat in Cork, very cute",
        "my brother's new job at Halvard Systems starts Monday",
        "helped my friend move into her flat in Ghent on Saturday",
    ],
)
def test_another_persons_home_or_job_is_not_the_users(text: str) -> None:
    assert not {v for a, v in own(text) if a in {"lives_in", "works_at"}}, text


@pytest.mark.parametrize(
    ("text", "taken_back", "kept"),
    [
        ("I live in Graz now. Scratch that, it's Linz, the flat is in Linz.", "Graz", "Linz"),
        ("new flat in Graz, sorry I mean Linz, autocorrect", "Graz", "Linz"),
        ("moved into a flat in Turku -- oh wait, my mistake, Tampere", "Turku", "Tampere"),
    ],
)
def test_a_value_taken_back_is_not_the_users(text: str, taken_back: str, kept: str) -> None:
    homes = {v for a, v in own(text) if a == "lives_in"}
    assert taken_back not in homes and kept in homes, (text, homes)


def test_the_classifier_names_who_spoke() -> None:
    cases = [
        ("[18:40] Noor: home base is Bergen now", "Bergen", REPORTED),
        ("Sample story for the class: I live in Kyoto now", "Kyoto", EXAMPLE),
        ("I live in Graz. Scratch that, Linz.", "Graz", RETRACTED),
    ]
    for text, value, mood in cases:
        at = text.index(value)
        assert Reading(text).mood(at, at + len(value)) == mood, text


def test_a_head_governs_only_its_paragraph() -> None:
    """After a blank line the user speaks again: the pasted paragraph ends there."""
    text = "Message from Ilse:\nI live in Bergen now, the flat is cold\n\nI live in Tromsø now, the flat is cold"
    assert own(text) == {("lives_in", "Tromsø")}


def test_a_huge_pasted_log_is_read_in_bounded_time() -> None:
    """A long chat log of many labelled lines: every one is someone else's, and reading it
    does not blow up (each line's head is read once, at most 120 characters of it)."""
    line = "[12:01] Wen: home base is Bergen now, the flat is cold" + ":" * 50 + "\n"
    assert own(line * 3000) == set()
