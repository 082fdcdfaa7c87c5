"""Facts from people as they speak (`chrysalis.extract.facts`): statements about named people
in the third person, the speaker's own name from ``source``, and the statements that must give
nothing (negations, quotes, reported speech, questions, conditions, wishes, plans, past)."""

from __future__ import annotations

import pytest

from chrysalis.core.models import Bead
from chrysalis.extract.rules import RulesExtractor


def said(text: str, *, source: str | None = None, role: str = "user") -> set[tuple[str, ...]]:
    bead = Bead(id="b", ts=1.0, role=role, content=text, source=source)
    return {(f.subject, f.predicate, f.object) for f in RulesExtractor().extract_one(bead).facts}


THIRD_PERSON = [
    ("Caroline moved to Boston last spring.", ("Caroline", "lives_in", "Boston")),
    ("Guess what, Dmitri lives in Novosibirsk now!", ("Dmitri", "lives_in", "Novosibirsk")),
    ("Since the divorce, Harriet has relocated to Santa Fe.", ("Harriet", "lives_in", "Santa Fe")),
    ("Aunt Mei is now living in Kuala Lumpur.", ("Mei", "lives_in", "Kuala Lumpur")),
    ("Oh, Farid has been living in Marseille for years.", ("Farid", "lives_in", "Marseille")),
    ("Nadia now works at Siemens Energy.", ("Nadia", "works_at", "Siemens Energy")),
    ("Apparently Joaquín works for the Red Cross", ("Joaquín", "works_at", "Red Cross")),
    ("Our neighbour Kwame joined Deloitte in June.", ("Kwame", "works_at", "Deloitte")),
    ("Beth started at Pixar on Monday.", ("Beth", "works_at", "Pixar")),
    ("Last I heard, Ravi got a new job at Shopify.", ("Ravi", "works_at", "Shopify")),
    ("Lucía married Tomás in a tiny chapel.", ("Lucía", "married_to", "Tomás")),
    ("Svetlana is married to Piotr, who teaches chemistry.", ("Svetlana", "married_to", "Piotr")),
    ("Hamid drinks oat milk lattes.", ("Hamid", "drinks", "oat milk lattes")),
    ("Every morning Greta drinks green tea before work.", ("Greta", "drinks", "green tea")),
    ("Ingrid prefers the night shift.", ("Ingrid", "prefers", "night shift")),
    ("Omar's favourite author is Naguib Mahfouz.", ("Omar", "favourite_author", "Naguib Mahfouz")),
    ("Yesterday Priya's brother Arjun came by.", ("Priya", "brother", "Arjun")),
    ("When Zoe moved to Dublin, she found a flat fast.", ("Zoe", "lives_in", "Dublin")),
]


@pytest.mark.parametrize(("text", "fact"), THIRD_PERSON, ids=[t for t, _ in THIRD_PERSON])
def test_a_statement_about_a_named_person_is_their_fact(text: str, fact: tuple[str, ...]) -> None:
    assert fact in said(text, source="Narrator")


# Each holds a pattern above; none is asserted, so none gives a fact.
NOT_ASSERTED = [
    "Caroline doesn't live in Boston.",  # negations
    "Dmitri never moved to Novosibirsk after all.",
    "Nadia no longer works at Siemens.",
    "Hamid does not drink coffee.",
    "Caroline lives in Boston no more.",
    '"Beth started at Pixar," Joe claimed, but it was a rumour.',  # quotes and reports
    "Tom said that Lucía married Tomás.",
    "“Caroline moved to Boston” was the headline, a joke.",
    "According to Ana, Ravi joined Shopify.",
    "> Kwame joined Deloitte",
    "Did Caroline move to Boston?",  # questions
    "Has Farid moved to Marseille?",
    "Is Svetlana married to Piotr?",
    "Does Greta drink green tea?",
    "If Caroline moved to Boston, we would visit.",  # conditions
    "Suppose Nadia works at Siemens, what then?",
    "I wish Harriet lived in Santa Fe.",  # wishes and plans
    "Hopefully Beth joined Pixar by now.",
    "Ravi might join Shopify next year.",
    "Zoe will move to Dublin in the autumn.",
    "Caroline lived in Boston as a child.",  # past states
    "Nadia worked at Siemens for a decade.",
]


@pytest.mark.parametrize("text", NOT_ASSERTED)
def test_what_is_not_asserted_gives_no_fact(text: str) -> None:
    assert said(text, source="Narrator") == set()


def test_the_speakers_own_name_is_the_subject_of_their_first_person() -> None:
    assert said("I moved to Boston in May.", source="Caroline") == {
        ("Caroline", "lives_in", "Boston")
    }
    assert ("Melanie", "works_at", "Oxfam") in said(
        "These days I work for Oxfam.", source="Melanie"
    )
    assert said("I got married to Daniel!", source="Jo") == {("Jo", "married_to", "Daniel")}
    # Without a source the speaker is the role.
    assert said("I'm living in Quito.") == {("user", "lives_in", "Quito")}


def test_an_assistant_gives_no_facts_of_its_own_or_of_others() -> None:
    # Its "I" is itself; of others it restates the user or history, not dated by the bead.
    assert said("I live in the cloud and Hemingway moved to Paris.", role="assistant") == set()
    assert said("Mira lives in Oslo.", role="user") == {("Mira", "lives_in", "Oslo")}


def test_pronouns_and_common_words_are_no_subject() -> None:
    for text in (
        "She moved to Boston.",
        "Everyone moved to Zoom during lockdown.",
        "Then Mom moved to Florida.",
        "The Company works with Acme.",
    ):
        assert not {s for s, _, _ in said(text)} - {"user"}, text


def test_objects_are_names_and_things_not_filler() -> None:
    assert said("Lena joined a gym and married young.") == set()
    assert said("Pablo drinks a lot.") == set()
    assert said("Pablo drinks too much coffee.") == set()
    assert said("Ruth moved to the countryside.") == set()


def test_facts_name_their_subject_as_an_entity() -> None:
    bead = Bead(id="b", ts=1.0, role="user", content="Okay so Caroline moved to Boston.")
    names = {e.name: e.type for e in RulesExtractor().extract_one(bead).entities}
    assert names.get("Caroline") in ("person", "name") and names.get("Boston") == "place"


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # Home: a household's move, a home noun with a place.
        ("We finally relocated to Tromsø after the winter.", ("user", "lives_in", "Tromsø")),
        ("Our flat is in Antwerp, two floors up.", ("user", "lives_in", "Antwerp")),
        ("Rented a small house in Cádiz near the beach.", ("user", "lives_in", "Cádiz")),
        # Work: a role at a company, a job taken, a hire.
        ("I'm a data engineer at Fernwood Mills.", ("user", "works_at", "Fernwood Mills")),
        ("Landed a new role with Orbital Freight last month.", ("user", "works_at", "Orbital Freight")),
        ("I was hired by Saltmarsh Studio in spring.", ("user", "works_at", "Saltmarsh Studio")),
        # Drink: a vague verb with a drink named.
        ("I'm obsessed with iced oat lattes this summer.", ("user", "drinks", "iced oat lattes")),
        ("My morning cup is genmaicha tea.", ("user", "drinks", "genmaicha tea")),
        # Partner and car.
        ("Been dating Oskar since the festival.", ("user", "partner", "Oskar")),
        ("Leased a Hyundai Ioniq for the new commute.", ("user", "drives", "Hyundai Ioniq")),
    ],
)  # fmt: skip
def test_the_same_facts_said_in_other_ways(text: str, fact: tuple[str, ...]) -> None:
    assert fact in said(text), said(text)


@pytest.mark.parametrize(
    "text",
    [
        "My cousin just bought a place in Graz.",  # someone else's home
        "Marta rented a flat in Split for the summer.",  # a named someone else
        "We might rent a flat in Split one day.",  # a possibility
        "I've switched to Fedora on my laptop.",  # a vague verb, no drink
        "I got a Kindle for my birthday.",  # a vague verb, no car make
        "Is your office in Ghent these days?",  # a question about you
        "I'm not dating Oskar anymore.",  # a negation
    ],
)
def test_the_wider_patterns_keep_to_the_speakers_assertions(text: str) -> None:
    facts = {
        f for f in said(text) if f[1] in {"lives_in", "works_at", "drinks", "partner", "drives"}
    }
    assert facts == set(), facts
