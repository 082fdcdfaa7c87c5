# ruff: noqa: RUF001 - curly quotes are text here
"""Facts only from what the speaker asserts (`chrysalis.extract.mood`): the rules extractor
over a table of sentences, each either a plain statement (its fact must come out) or a quote,
reported speech, question, wish, condition, plan, negation or past state (nothing may)."""

from __future__ import annotations

import pytest

from chrysalis.core.models import Bead
from chrysalis.extract.facts import PATTERNS
from chrysalis.extract.mood import (
    BLANK,
    CONDITION,
    NEGATED,
    PAST,
    PLAN,
    QUESTION,
    QUOTED,
    REPORTED,
    WISH,
    Reading,
)
from chrysalis.extract.rules import RulesExtractor


def facts(text: str) -> set[tuple[str, str]]:
    bead = Bead(id="b", ts=1.0, role="user", content=text)
    return {(f.predicate, f.object) for f in RulesExtractor().extract_one(bead).facts}


# The speaker asserts it: the fact comes out.
ASSERTIONS = [
    ("I live in Lisbon.", ("lives_in", "Lisbon")),
    ("I live in Lisbon, and you?", ("lives_in", "Lisbon")),
    ("I live in Kansas City, Missouri. Oh, and hi!", ("lives_in", "Kansas City")),
    ("No, I live in Porto now.", ("lives_in", "Porto")),
    ("Honestly I'm based in Utrecht these days.", ("lives_in", "Utrecht")),
    ("I've been living in Tokyo since March.", ("lives_in", "Tokyo")),
    ("Last spring I moved to Austin from NYC and love it.", ("lives_in", "Austin")),
    ("As I said, I work at Initech.", ("works_at", "Initech")),
    ("I told you already: I work at Globex.", ("works_at", "Globex")),
    ("I have to tell you, I work at Hooli.", ("works_at", "Hooli")),
    ("I joined Umbrella last week.", ("works_at", "Umbrella")),
    ("Even if it rains, I work at Tyrell on Fridays.", ("works_at", "Tyrell")),
    ("I think I prefer green tea.", ("prefers", "green tea")),
    ("I prefer aisle seats; window seats make me restless.", ("prefers", "aisle seats")),
    ("My favourite band is Portishead.", ("favourite_band", "Portishead")),
    ("Bob said hi, and I live in Ghent.", ("lives_in", "Ghent")),
    ("Can you help me? I live in Graz.", ("lives_in", "Graz")),
    ('I read "Dune" twice. I prefer audiobooks.', ("prefers", "audiobooks")),
    ("My sister Anna lives nearby.", ("sister", "Anna")),
    ("Should I invite my friend Rachel?", ("friend", "Rachel")),  # presupposed
    ("I wish my dog Max would stop barking.", ("dog", "Max")),  # presupposed
    ("If my brother Tom calls, tell him.", ("brother", "Tom")),  # presupposed
    # "I'd" before a past participle is "I had": no plan
    ("By spring I'd moved to Ghent for good.", ("lives_in", "Ghent")),
    ("We'd just relocated to Graz when the job came up.", ("lives_in", "Graz")),
]

# The speaker does not assert it: no fact about them comes out.
NOT_ASSERTED = [
    # quotes
    ('Bob wrote: "I live in Berlin now"', QUOTED),
    ("She texted me “I work at Acme, finally!”", QUOTED),
    ("The sign said ‘I prefer cats’ in big letters.", QUOTED),
    ("Her note: 'I live in Oslo.'", QUOTED),
    ("> I live in Madrid\n\nThat's what the forum post claimed.", QUOTED),
    ("Type `I live in Rome` into the box.", QUOTED),
    ("```\nprint('I work at Initech')\nI live in Cairo\n```", QUOTED),
    ('He wrote: "I moved to Lima. Come visit', QUOTED),  # never closed: still his
    # reported speech
    ("Bob wrote: I live in Berlin now", REPORTED),
    ("Bob said I live in Berlin, which is wrong.", REPORTED),
    ("According to my mother, I live in Narnia.", REPORTED),
    ("My boss thinks I prefer remote work.", REPORTED),
    ("The recruiter told me that I work at Acme already on paper.", REPORTED),
    # questions
    ("Do I prefer tea or coffee?", QUESTION),
    ("Do I prefer tea or coffee", QUESTION),
    ("Should I say I live in Paris", QUESTION),
    ("I prefer which one, the red or the blue?", QUESTION),
    ("So I live in Vienna now?", QUESTION),
    ("My favourite colour is blue?", QUESTION),
    ("I live in Lisbon, right?", QUESTION),
    # wishes
    ("I wish I lived in Paris.", WISH),
    ("I'd love it if I worked at Pixar.", WISH),
    ("If only I lived in Kyoto.", WISH),
    ("Hopefully I work at NASA by 2030.", WISH),
    ("My dream is that I live in Lisbon one day.", WISH),
    # conditions and suppositions
    ("If I moved to Tokyo, I'd learn Japanese.", CONDITION),
    ("Suppose I moved to Denver.", CONDITION),
    ("Imagine I lived in Reykjavik.", CONDITION),
    ("Let's say I work at Google.", CONDITION),
    ("If the visa works out, I live in Canada from May.", CONDITION),
    ("I work at Acme if they hire me.", CONDITION),
    ("Unless I moved to Leeds, nothing changes.", CONDITION),
    # plans and possibilities
    ("Next year I'm probably going to say I live in Rome.", PLAN),
    ("Maybe I prefer the blue one.", PLAN),
    ("I might as well say I prefer jazz.", PLAN),
    # negations
    ("Not that I live in Paris.", NEGATED),
    ("It's not true that I work at Acme.", NEGATED),
    ("I work at Acme no longer.", NEGATED),
    ("I never said I work at Acme.", NEGATED),
    # a state in the simple past: no longer so
    ("I lived in Holland when I was a child.", PAST),
    ("I worked for Goldman Sachs for almost 10 years.", PAST),
]


@pytest.mark.parametrize(("text", "fact"), ASSERTIONS, ids=[t for t, _ in ASSERTIONS])
def test_an_assertion_gives_its_fact(text: str, fact: tuple[str, str]) -> None:
    assert fact in facts(text)


@pytest.mark.parametrize(("text", "mood"), NOT_ASSERTED, ids=[t for t, _ in NOT_ASSERTED])
def test_what_the_speaker_does_not_assert_gives_no_fact(text: str, mood: str) -> None:
    assert facts(text) == set(), f"{text!r} is {mood}, not a statement"


def test_the_red_team_sentences_give_no_fact_of_the_speaker() -> None:
    """Only "my colleague Bob" is the speaker's (a presupposed relation): Berlin is Bob's."""
    assert facts('My colleague Bob wrote: "I live in Berlin now"') == {("colleague", "Bob")}
    assert facts("My colleague Bob wrote: I live in Berlin now") == {("colleague", "Bob")}
    for text in ("I wish I lived in Paris", "If I moved to Tokyo…", "Do I prefer tea or coffee?"):
        assert facts(text) == set(), text


def test_a_statement_beside_a_non_statement_keeps_only_the_statement() -> None:
    text = (
        'I live in Ghent. Bob wrote: "I live in Berlin." I wish I lived in Paris, '
        "but I work at Acme. Do I prefer tea? If I moved to Tokyo I would prefer sake."
    )
    assert facts(text) == {("lives_in", "Ghent"), ("works_at", "Acme")}


@pytest.mark.parametrize(("text", "mood"), NOT_ASSERTED, ids=[t for t, _ in NOT_ASSERTED])
def test_the_classifier_names_the_mood(text: str, mood: str) -> None:
    """Each sentence of the table holds a first-person pattern (the extractor without the
    classifier took it as a fact); the classifier says why it is not one (the reason the
    Ollama extractor gives when it drops such a fact)."""
    reading = Reading(text)
    found = [
        (m.start(), m.end(), predicate == "rel")
        for pattern, predicate, _ in PATTERNS
        for m in pattern.finditer(text)
    ]
    assert found, f"{text!r} holds no first-person pattern: it attacks nothing"
    first = min(found)
    assert reading.mood(first[0], first[1], noun_phrase=first[2]) == mood


def test_offsets_survive_unquoting() -> None:
    text = 'A "quoted" word and `code` here.\n> block\nend'
    plain = Reading(text).plain
    assert len(plain) == len(text) and plain.count("\n") == text.count("\n")
    assert "quoted" not in plain and "code" not in plain and "block" not in plain
    assert BLANK in plain and " " not in plain[2:10]  # a quote does not end a phrase
    assert plain.endswith("end") and "word and" in plain


def test_inches_open_no_quote_and_a_quote_ends_no_phrase() -> None:
    assert facts('I have a 15" laptop. I prefer a backpack style, thanks.') == {
        ("prefers", "backpack style")
    }
    assert facts('I think my favorite song is probably "Way Down Hadestown".') == set()


def test_apostrophes_are_not_quotes() -> None:
    reading = Reading("I'm sure the dogs' bowl is fine and I live in Leeds, it's true.")
    assert reading.plain == reading.text
    assert facts(reading.text) == {("lives_in", "Leeds")}


@pytest.mark.parametrize(
    ("text", "mood"),
    [
        ("By spring I'd moved to Ghent for good.", "asserted"),
        ("I'd already signed with Initech by then.", "asserted"),
        ("I'd move to Oslo tomorrow if they let me.", CONDITION),
        ("I'd live in Oslo, honestly.", PLAN),
        ("We almost moved to Oslo last year.", NEGATED),
        ("I nearly joined Initech in March.", NEGATED),
        ("Almost every week I'm in Oslo for work.", "asserted"),
    ],
)
def test_had_would_and_a_close_call(text: str, mood: str) -> None:
    """ "I'd" is "I had" before a past participle and "I would" otherwise; what "almost" or
    "nearly" happened did not."""
    value = next(w for w in ("Oslo", "Ghent", "Initech") if w in text)
    at = text.index(value)
    assert Reading(text).mood(at, at + len(value)) == mood
