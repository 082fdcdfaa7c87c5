"""Facts told by their value (`chrysalis.extract.typed`): a city, an employer, a drink, a car
or a partner recognised whatever the sentence's shape, only when the user asserts it."""

from __future__ import annotations

import functools

import pytest

from chrysalis.core.models import Bead
from chrysalis.extract import Extraction, Mention
from chrysalis.extract.places import is_city
from chrysalis.extract.rules import RulesExtractor
from chrysalis.extract.typed import typed_facts, typed_mentions
from chrysalis.secrets.scan import redact_extraction


def told(text: str) -> set[tuple[str, str]]:
    return {(f.predicate, f.object) for f in typed_facts(text, "user")}


def extracted(text: str, role: str = "user") -> set[tuple[str, str]]:
    bead = Bead(id="b1", content=text, role=role, ts=1.0, session_id="s")
    return {(f.predicate, f.object) for f in RulesExtractor().extract_one(bead).facts}


def users(text: str) -> set[tuple[str, str]]:
    """The facts ``text`` gives the user (not those of a person it names)."""
    bead = Bead(id="b1", content=text, ts=1.0, session_id="s")
    facts = RulesExtractor().extract_one(bead).facts
    return {(f.predicate, f.object) for f in facts if f.subject == "user"}


def test_the_gazetteer_knows_cities_by_their_names_and_not_everyday_words() -> None:
    for city in ("Utrecht", "Lisboa", "Munich", "Göteborg", "Gothenburg", "Osaka"):
        assert is_city(city), city
    for word in ("Nice", "Reading", "Split", "Best", "Of", "Monday", "Kettle"):
        assert not is_city(word), word


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("signed the tenancy for a tiny studio in Utrecht, bikes everywhere", "Utrecht"),
        ("our landlord in Osaka fixed the boiler within a day", "Osaka"),
        ("the removal van got to Aarhus before we did haha", "Aarhus"),
        ("Changed my postcode on the bank app, it's Tallinn from here on", "Tallinn"),
        ("Notes: the user has relocated and now rents in Ljubljana.", "Ljubljana"),
        ("mi casa nueva en Sevilla tiene un patio, finally unpacked", "Sevilla"),
        ("a flat in Ballinasloe, of all places, is ours since friday", "Ballinasloe"),
    ],
)
def test_a_home_is_a_city_beside_words_of_a_home(text: str, fact: str) -> None:
    assert told(text) == {("lives_in", fact)}


@pytest.mark.parametrize(
    "text",
    [
        "flying out to Osaka for a conference, back sunday",
        "we spent a long weekend in Aarhus, the hotel was lovely",
        "should we rent something in Tallinn? prices look ok",
        "my brother just found a flat in Utrecht",
        "Priya moved to Ljubljana last spring",
        "I'd love an apartment in Sevilla one day",
        "we are not moving to Osaka, no way",
        "I lived in Utrecht when I was a kid",
        "our old flat in Aarhus had mould everywhere",
        "Bob wrote: I live in Tallinn now",
    ],
)
def test_trips_plans_others_and_the_past_give_no_home(text: str) -> None:
    assert "lives_in" not in {p for p, _ in told(text)}, text


@pytest.mark.parametrize(
    ("text", "org"),
    [
        ("HR at Copperleaf Systems sent the payslip template, so it's real", "Copperleaf Systems"),
        ("the standup at Brightwell Dental is at 8:45, brutal", "Brightwell Dental"),
        ("week two of onboarding with Orchard & Vine, my team is tiny", "Orchard & Vine"),
        ("The user's employer since March is Saltmarsh Freight.", "Saltmarsh Freight"),
        ("Ana says I'm the best hire Fernhill Press has made, which is sweet", "Fernhill Press"),
    ],
)
def test_an_employer_is_a_name_beside_words_of_work(text: str, org: str) -> None:
    assert ("works_at", org) in told(text)


@pytest.mark.parametrize(
    "text",
    [
        "Fernhill Press posted a job ad, the salary is a joke",
        "prepping a friend for an interview at Copperleaf Systems",
        "my cousin got hired by Saltmarsh Freight last week",
        "if the contract with Orchard & Vine falls through I'm stuck",
        "Ravi might join Brightwell Dental next year",
        "Ana said I work at Copperleaf Systems, which is not true",
    ],
)
def test_job_ads_interviews_others_and_conditions_give_no_employer(text: str) -> None:
    assert "works_at" not in {p for p, _ in told(text)}, text


@pytest.mark.parametrize(
    ("text", "drink"),
    [
        ("honestly it's iced oolong every afternoon at this point", "iced oolong"),
        ("ditched the espresso habit, barley tea all day now", "barley tea"),
        ("the whole team teases me about my daily kefir", "kefir"),
        ("The user's usual morning cup is now rooibos.", "rooibos"),
    ],
)
def test_a_drink_is_a_drink_word_beside_words_of_a_habit(text: str, drink: str) -> None:
    assert told(text) == {("drinks", drink)}


@pytest.mark.parametrize(
    "text",
    [
        "tried a kombucha at the market, tasted like vinegar",
        "my flatmate drinks oat lattes by the gallon",
        "Jo has green tea every morning, weird",
        "should I switch to decaf? sleep is bad lately",
    ],
)
def test_a_drink_tried_once_or_someone_elses_is_no_habit(text: str) -> None:
    assert "drinks" not in {p for p, _ in told(text)}, text


@pytest.mark.parametrize(
    ("text", "car"),
    [
        ("the Hyundai Ioniq is in the driveway and it's all mine", "Hyundai Ioniq"),
        ("sorted the insurance on my Peugeot 208 this morning", "Peugeot 208"),
        ("The user recently leased a Polestar 2.", "Polestar 2"),
    ],
)
def test_a_car_is_a_make_and_model_beside_words_of_owning(text: str, car: str) -> None:
    assert told(text) == {("drives", car)}


@pytest.mark.parametrize(
    "text",
    [
        "rented a Peugeot 208 for the road trip, fine I guess",
        "my uncle's Hyundai Ioniq is parked in front of our garage",
        "test drove a Polestar 2 just for fun",
    ],
)
def test_rentals_test_drives_and_others_cars_are_not_mine(text: str) -> None:
    assert "drives" not in {p for p, _ in told(text)}, text


def test_a_partner_is_a_name_beside_words_of_a_relationship_of_mine() -> None:
    assert ("partner", "Amara") in told("Amara and I have been dating since the spring fair")
    assert ("partner", "Ruairi") in told("three months with my boyfriend Ruairi today")
    assert "partner" not in {p for p, _ in told("Lotte and her girlfriend visited us")}
    assert "partner" not in {p for p, _ in told("Amara from work is dating a drummer")}


def test_the_extractor_adds_typed_facts_only_where_no_pattern_read_one() -> None:
    assert extracted("I moved to Utrecht, the landlord is nice") == {("lives_in", "Utrecht")}
    assert ("lives_in", "Osaka") in extracted("keys to the Osaka flat are finally ours!!")
    # The assistant's own words ("ours", "I", "we") are not the user's facts.
    assert extracted("keys to the Osaka flat are finally ours!!", role="assistant") == set()


def test_what_the_assistant_restates_of_the_user_is_the_users() -> None:
    said = {
        "Noted - you've settled in Osaka now, so I'll suggest places near there.": (
            "lives_in", "Osaka"),
        "Congratulations on your new role at Initech! How are the first weeks?": (
            "works_at", "Initech"),
        "So your go-to these days is oolong tea, I'll remember that.": ("drinks", "oolong tea"),
        "It's lovely that you and Priya are a couple now.": ("partner", "Priya"),
        # Congratulating names no one, so it is the one the assistant answers.
        "Congratulations on the new role at Initech!": ("works_at", "Initech"),
        "Congrats on joining Vandelay Industries, the team sounds great.": (
            "works_at", "Vandelay Industries"),
    }  # fmt: skip
    for text, fact in said.items():
        assert extracted(text, role="assistant") == {fact}, text
    # Its own first person, its suggestions, questions, conditions and what it says of
    # others are no fact of the user's.
    for text in (
        "I live in Lisbon, as a model would say.",
        "We moved our servers to Frankfurt last year.",
        "If you ever move to Vienna, the coffee houses alone are worth it.",
        "Have you considered moving to Porto? The rent is lower.",
        "You could apply at Initech, they are hiring.",
        "Your sister lives in Ghent, right? She could show you around.",
        "Lisbon is lovely in spring; the trams are worth the trip.",
        "Initech is hiring data engineers, if you're curious.",
        "Congratulations to Sam on the new role at Initech!",  # Sam's, not the user's
        "Choose a format that works for you. Keep your notes short.",
    ):
        assert extracted(text, role="assistant") == set(), text
    # A long answer is advice, with a generic "you": not read for the user's facts.
    long = "Here are some ideas for your weekend. " * 12 + "You've settled in Osaka now."
    assert extracted(long, role="assistant") == set()
    assert extracted(long[-40:], role="assistant") == {("lives_in", "Osaka")}
    # An assistant speaking for a named source is that source's, not the user's.
    bead = Bead(id="b1", content="You've settled in Osaka now.", role="assistant", ts=1.0,
                session_id="s", source="Maria")  # fmt: skip
    assert RulesExtractor().extract_one(bead).facts == ()


def test_odd_and_huge_input_give_nothing_wrong() -> None:
    assert told("") == set()
    assert told("\u0000\u202e flat 🏠 in ??? \ud800".encode("utf-8", "replace").decode()) == set()
    big = "the landlord is fine. " * 5000 + "We got the keys in Utrecht."
    assert told(big) == {("lives_in", "Utrecht")}
    # A credential next to a home cue is no place.
    assert told("my flat wifi password is Hunter2Lisbon, rent is due") == set()


def verdicts(text: str) -> dict[tuple[str, str], bool]:
    return {(m.predicate, m.value): m.own for m in typed_mentions(text)}


def test_every_value_named_gets_a_verdict_for_the_timeline() -> None:
    # The user's own, asserted: own. Someone else's, a trip, a plan: named, not own.
    assert verdicts("we've settled into a terraced house in Sheffield") == {
        ("lives_in", "Sheffield"): True
    }
    assert (
        verdicts("my cousin relocated to Tampere, I stayed at her flat")[("lives_in", "Tampere")]
        is False
    )
    assert (
        verdicts("Vesna's new job at Orbital Dynamics sounds exhausting")[
            ("works_at", "Orbital Dynamics")
        ]
        is False
    )
    assert (
        verdicts("might apply to Orbital Dynamics next year, who knows")[
            ("works_at", "Orbital Dynamics")
        ]
        is False
    )
    # A value with no word of its attribute is named, never own.
    assert verdicts("ate lunch by the harbour in Aarhus")[("lives_in", "Aarhus")] is False


def test_a_relationship_told_without_i_is_the_speakers_unless_it_is_someone_elses() -> None:
    assert verdicts("Dorota stayed over the whole weekend, officially a couple now")[
        ("partner", "Dorota")
    ]
    assert not any(v for (p, _), v in verdicts("Pedro and Lucia are a couple now").items())
    assert not any(v for (p, _), v in verdicts("Lucia from the choir is seeing a pilot").items())
    # "a couple of weeks" is a number, not a pair; a name owning a place is no partner.
    assert ("partner", "Fernhill Studio") not in {
        (p, v)
        for (p, v), own in verdicts("I've been at Fernhill Studio a couple of weeks").items()
        if own
    }
    assert ("partner", "Mirek") in told("dating Mirek since the barbecue at Ola's")
    assert ("partner", "Ola") not in told("dating Mirek since the barbecue at Ola's")


def test_not_doing_without_a_drink_is_a_habit_and_not_drinking_it_is_not() -> None:
    assert ("drinks", "yerba mate") in told("honestly I can't face the morning without yerba mate")
    assert ("drinks", "rooibos") in told("these days I never leave home without rooibos")
    assert "drinks" not in {p for p, _ in told("I never drink rooibos these days")}
    assert "drinks" not in {p for p, _ in told("I don't drink rooibos every morning")}


def test_the_extractor_records_mentions_but_not_the_assistants() -> None:
    bead = Bead(id="b1", content="My brother drives a Volvo XC40. I drive a Kia Ceed.", role="user",
                ts=1.0, session_id="s")  # fmt: skip
    got = {(m.predicate, m.value, m.own) for m in RulesExtractor().extract_one(bead).mentions}
    assert ("drives", "Volvo XC40", False) in got and ("drives", "Kia Ceed", True) in got
    # Said by the assistant, its "I" is itself: the values are named, none as the user's.
    said = bead.model_copy(update={"role": "assistant"})
    assert not any(m.own for m in RulesExtractor().extract_one(said).mentions)


def test_a_secret_in_a_mention_is_redacted_like_a_fact() -> None:
    key = "ghp_" + "Qw7eR9tY1u" * 4
    ex = Extraction("b1", mentions=(Mention("works_at", f"Acme {key}", True),))
    (cleaned,) = redact_extraction(ex, "redact").mentions
    assert key not in cleaned.value


def test_a_capitalised_opener_is_no_partner_told_without_i() -> None:
    assert "partner" not in {p for p, _ in told("Love baking bread on rainy days")}
    assert "partner" not in {p for p, _ in told("Stories about love and loss are the best")}
    assert "partner" not in {p for p, _ in told("Dinner at Hana's parents was fun")}


def test_whose_value_and_which_words_are_values_read_generally() -> None:
    # Someone else's, told with a person noun the user owns ("my pal's", "a teammate of").
    for text in (
        "my pal's just started a job at Initech, good for her",
        "My coworker's new flat in Utrecht has a roof terrace.",
        "Read somewhere that Initech is building a campus in Utrecht.",
        "Initech posted record numbers, saw it on the news.",
    ):
        assert extracted(text) == set(), text
    # The user's own, however the sentence runs.
    for text, fact in {
        "my colleagues at Initech threw me a welcome lunch": ("works_at", "Initech"),
        "since I started at Initech I barely get a lunch break": ("works_at", "Initech"),
        "Any hikes near Utrecht? We moved there in May and know nobody.": (
            "lives_in", "Utrecht"),
        "now that I work at Initech, should I change my pension?": ("works_at", "Initech"),
        "Since we relocated to Utrecht, I cycle everywhere, any bike shop tips?": (
            "lives_in", "Utrecht"),
    }.items():  # fmt: skip
        assert extracted(text) == {fact}, text
    # A capitalised everyday word the gazetteer also lists, or a person before whom a
    # relationship word stands, is no place.
    for word in ("Since", "March", "Can", "Much"):
        assert not is_city(word), word
    assert ("lives_in", "Sam") not in extracted("we moved in together, my partner Sam and I")
    # A note about the user in the third person; names that are people, not places or firms.
    assert extracted("User's usual morning drink these days: rooibos.") == {("drinks", "rooibos")}
    assert extracted("Noor from the book club is moving to Utrecht") == set()
    assert ("lives_in", "Initech") not in extracted("I'm on the payroll at Initech, no commute")
    assert ("works_at", "Priya") not in extracted("the whole office knows I'm with Priya now")
    assert extracted("Sam keeps saying we live in Utrecht now, and he is right") == {
        ("lives_in", "Utrecht")
    }


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # The value is the subject of "is my ...", "is mine", "is home": the sentence says whose.
        ("Ingrid is my girlfriend these days, it's official", ("partner", "Ingrid")),
        ("yerba mate is my morning staple now", ("drinks", "yerba mate")),
        ("traded in the old hatchback, so the Kia Niro is mine now", ("drives", "Kia Niro")),
        ("Ballinasloe is home now, the last boxes are gone", ("lives_in", "Ballinasloe")),
        # A possessive presupposes it, in a question or a plan too.
        ("Can you check the winter tyre sizes for my Mazda MX-5?", ("drives", "Mazda MX-5")),
        ("we'll take our trusty Volvo V60 to the coast next week", ("drives", "Volvo V60")),
        ("is there a decent plumber near my flat in Utrecht?", ("lives_in", "Utrecht")),
        ("what should I bring to lunch with my team at Quillsoft?", ("works_at", "Quillsoft")),
        # "I'd" before a past participle is "I had", no plan.
        ("By then I'd already settled in Aarhus, so the paperwork was easy", ("lives_in", "Aarhus")),
        # The new one of a swap, not the old one.
        ("I've replaced my old coffee habit with rooibos", ("drinks", "rooibos")),
        ("swapped the espresso for kombucha this month", ("drinks", "kombucha")),
        # A move to a firm by its name is a job, not a home.
        ("so I've moved over to Lumen Optics, different team, same commute",
         ("works_at", "Lumen Optics")),
        ("honestly i'm at Cobalt Media now, the old place is history", ("works_at", "Cobalt Media")),
        # How often, not which drink ("twice a day" is no part of its name).
        ("I'm having matcha twice a day at the moment", ("drinks", "matcha")),
        # A car does nothing: "picked up", "delivered" are said of it.
        ("Subaru Outback delivered this morning, still smells of plastic", ("drives", "Subaru Outback")),
    ],
)  # fmt: skip
def test_whose_it_is_said_by_the_sentence_around_the_value(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact in extracted(text), text


@pytest.mark.parametrize(
    "text",
    [
        "Lisbon is my favourite city to visit",
        "Meridian Bank is my bank, the app is awful",
        "Kwame is my colleague, he sits next to me",
        "Is Ingrid my girlfriend now? I honestly can't tell",
        "I sold my Mazda MX-5 to a collector in spring",
        "my dad's Volvo V60 is older than me",
        "we nearly bought a Kia Niro but the dealer was rude",
        "We almost rented a place in Utrecht, then the deal fell apart",
        "read that Lumen Optics moved to a new campus",
        "Almost every morning someone at work brings kombucha",
    ],
)
def test_what_the_sentence_around_the_value_does_not_make_mine(text: str) -> None:
    facts = extracted(text)
    assert not {f for f in facts if f[0] in ("lives_in", "works_at", "drinks", "drives",
                                              "partner")}, (text, facts)  # fmt: skip


def test_a_name_after_with_is_a_person_not_a_place() -> None:
    # (Yuki is a town in the gazetteer.)
    assert "lives_in" not in {p for p, _ in extracted("moving in with Yuki next month")}


def test_an_earlier_car_is_the_one_bought() -> None:
    text = "How often does a Toyota Yaris need its oil changed? I bought one last month."
    assert ("drives", "Toyota Yaris") in extracted(text)
    assert not extracted("How often does a Toyota Yaris need its oil changed?")


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # A word pointing back to the value the sentence before named.
        ("Any tips for a first week at Lumen Optics? I start there on Monday.",
         ("works_at", "Lumen Optics")),
        ("How much caffeine does yerba mate have? It's become my afternoon habit.",
         ("drinks", "yerba mate")),
        ("Porto, not Braga, sorry. That's where we live now.", ("lives_in", "Porto")),
        ("Is the Renault Zoe good in snow? I just bought one.", ("drives", "Renault Zoe")),
        ("Planning a surprise for Ingrid. We've been dating since the spring.",
         ("partner", "Ingrid")),
        # The words of a home in the sentence before, the user's own words in this one.
        ("Could you recommend a dentist close to my new flat? I'm in Utrecht now.",
         ("lives_in", "Utrecht")),
        # A name after "but" and "I", or after "someone new".
        ("It was a rough year, but Felix and I are together now.", ("partner", "Felix")),
        ("I'm seeing someone new, Imogen.", ("partner", "Imogen")),
        # A firm after "at" though a verb follows it; a car with the "I" after it left off.
        ("How is the canteen at Quillsoft? I work there now.", ("works_at", "Quillsoft")),
        ("No wait, it's a Kia Niro I drive now.", ("drives", "Kia Niro")),
        # "every morning" says when, not what.
        ("Not tea, I meant chai. That's what I drink every morning now.", ("drinks", "chai")),
    ],
)  # fmt: skip
def test_a_value_told_across_two_sentences(text: str, fact: tuple[str, str]) -> None:
    got = extracted(text)
    assert fact in got, (text, got)
    assert len({p for p, _ in got if p == fact[0]}) == 1, got  # no second value of its kind


@pytest.mark.parametrize(
    "text",
    [
        "My flat is freezing. I'm in Lisbon this weekend though.",
        "My sister loves Porto. She moved there in May.",
        "Do you know Ghent? I lived there as a student.",
        "Is oolong tea any good? I might try it.",
        "I had lunch with Tariq. He wants a new car.",
        "After the move I felt lost for a while.",
    ],
)
def test_what_points_back_without_the_users_words_is_not_theirs(text: str) -> None:
    got = extracted(text)
    assert not {f for f in got if f[0] in ("lives_in", "works_at", "drinks", "drives",
                                            "partner")}, (text, got)  # fmt: skip


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # Two values of one kind, one taken back: the other is the choice.
        ("The Kia Niro was cheaper but we chose the Mazda MX-5.", ("drives", "Mazda MX-5")),
        ("no more Acme Labs, it's Globex Systems now", ("works_at", "Globex Systems")),
        ("Imogen was lovely but it's Mateus I'm seeing now.", ("partner", "Mateus")),
        # A value alone, the words of its attribute in the sentence after it.
        ("Vandelay Industries. Started on Monday.", ("works_at", "Vandelay Industries")),
        # "Correction:" heads the speaker's own line, not someone else's words.
        ("Correction: I don't drive a Honda Civic, I drive a Kia Niro.", ("drives", "Kia Niro")),
        # An emoji ends a sentence: the question after it is another one.
        ("no more Acme Labs, it's Globex Systems now 🎉 can you fix my email signature?",
         ("works_at", "Globex Systems")),
        ("I have now a Volvo V60 since a month, very happy", ("drives", "Volvo V60")),
        ("been basically living on matcha since the exams started", ("drinks", "matcha")),
        ("I'm with Noor now, it's getting serious", ("partner", "Noor")),
    ],
)  # fmt: skip
def test_a_choice_said_by_contrast_or_by_the_sentence_after(
    text: str, fact: tuple[str, str]
) -> None:
    got = extracted(text)
    assert fact in got, (text, got)
    assert len([p for p, _ in got if p == fact[0]]) == 1, got  # the choice only


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("I prefer rooibos these days, espresso makes me shaky.", ("drinks", "espresso")),
        ("no more Porto for my sister, she's in Lisbon now", ("lives_in", "Lisbon")),
        ("Sorry, I wrote Porto but I meant Tallinn.", ("partner", "Tallinn")),
        ("wait, it's Globex Systems not Acme Labs. Acme Labs was the offer I turned down.",
         ("works_at", "Acme Labs")),
    ],
)  # fmt: skip
def test_what_the_contrast_leaves_out(text: str, fact: tuple[str, str]) -> None:
    assert fact not in extracted(text), text


def test_a_value_only_compared_away_leaves_no_choice() -> None:
    # "instead of", "than": the other is no habit of the user's, only today's order.
    for text in (
        "Got an espresso instead of a chai at the airport café",
        "grabbed kombucha rather than cold brew from the vending machine",
    ):
        assert "drinks" not in {p for p, _ in extracted(text)}, text


@pytest.mark.parametrize(
    ("text", "role", "fact"),
    [
        # The assistant's note of the user in the third person, under "Noted:".
        ("Noted: the user now lives in Aarhus.", "assistant", ("lives_in", "Aarhus")),
        ("Noted - the user's usual drink is now rooibos.", "assistant", ("drinks", "rooibos")),
        # "what I said" names no other writer.
        ("Quick fix to what I said earlier: my afternoon drink is kombucha, not cola.", "user",
         ("drinks", "kombucha")),
        # An imperative passes on the speaker's own words.
        ("Please mention in the letter that I'm based in Ghent these days.", "user",
         ("lives_in", "Ghent")),
        # "a couple of weeks" is a number: the pair is still together.
        ("Soledad and I got together a couple of weeks ago.", "user", ("partner", "Soledad")),
        ("Help me write a card for Kwame. We started dating in the spring.", "user",
         ("partner", "Kwame")),
        ("Should a Honda Civic pull left? I've only had mine for a month.", "user",
         ("drives", "Honda Civic")),
        ("Honestly the Fiat Panda is my daily driver now.", "user", ("drives", "Fiat Panda")),
        ("Add oat milk and espresso to the list, that's all I drink at the moment.", "user",
         ("drinks", "espresso")),
    ],
)  # fmt: skip
def test_notes_imperatives_and_pointers_read_as_the_users(
    text: str, role: str, fact: tuple[str, str]
) -> None:
    got = extracted(text, role=role)
    assert fact in got, (text, got)
    assert len([p for p, _ in got if p == fact[0]]) == 1, got


def test_being_official_is_no_partner_and_another_writer_still_reports() -> None:
    assert "partner" not in {
        p for p, _ in extracted("officially a Vienna resident now, keys in hand")
    }
    assert extracted("Bob said I live in Lisbon, which is nonsense.") == set()


def test_many_tiny_sentences_or_distinct_words_cost_no_work_per_attribute(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A paste of 20,000 characters in thousands of empty "sentences" (emoji, dots) or of
    # distinct made-up words (each a typo candidate for every attribute) cost ~105 and
    # ~140 ms of CPU when every sentence was read for every attribute and every word
    # looked up per attribute. Counted here, not timed (the times are in
    # docs/benchmarks.md): no empty sentence is read for values, and each distinct word is
    # looked up once for all attributes.
    import random

    from chrysalis.extract import cues, typed

    rng = random.Random(7)
    words = {
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(6)) for _ in range(2850)
    }
    calls = {"values": 0, "lookups": 0}
    values, lookup = typed._values, cues._attrs_cued_by.__wrapped__

    def counted_values(attr: str, sentence: str) -> list[typed._Value]:
        calls["values"] += 1
        return values(attr, sentence)

    def counted_lookup(w: str) -> frozenset[str]:
        calls["lookups"] += 1
        return lookup(w)

    monkeypatch.setattr(typed, "_values", counted_values)
    monkeypatch.setattr(
        cues, "_attrs_cued_by", functools.lru_cache(maxsize=1 << 16)(counted_lookup)
    )
    for text in ("🎉 " * 10_000, "… " * 10_000):
        assert typed_mentions(text) == []
        assert calls["values"] == 0, text[:4]
    junk = " ".join(sorted(words)) + " flat job tea car girlfriend"
    typed_mentions(junk)
    assert calls["lookups"] <= 2 * (len(words) + 5)  # a word and its two-word phrases


@pytest.mark.parametrize(
    "text",
    [
        # A value alone takes the words of the sentence after only when that one is the
        # speaker's own doing, asserted.
        "Lisbon. My brother moved there.",
        "Globex Systems. My sister started there on Monday.",
        "Tesla Model 3. Bought one? I wish.",
        "Globex Systems. Started on Monday? No idea.",
        # Of a contrast, the value taken back is no one's choice, whoever chose the other.
        "The Kia Niro was cheaper but my dad chose the Mazda MX-5.",
        "Acme Labs was my old job but my sister chose Globex Systems.",
        "Porto was expensive but we picked Lisbon for our honeymoon.",
    ],
)
def test_what_the_sentence_after_or_a_contrast_gives_no_one(text: str) -> None:
    got = extracted(text)
    assert not {f for f in got if f[0] in ("lives_in", "works_at", "drives")}, (text, got)


@pytest.mark.parametrize(
    "text",
    [
        "Congratulations on your sister joining Globex Systems!",
        "Congratulations on Noor moving to Lisbon!",
        "Well done on Tariq's new job at Globex Systems.",
        "Congrats on the Kia Niro your dad bought!",
    ],
)
def test_an_assistant_congratulating_someone_else_gives_the_user_nothing(text: str) -> None:
    got = extracted(text, role="assistant")
    assert not {f for f in got if f[0] in ("lives_in", "works_at", "drives")}, (text, got)


def test_an_assistant_congratulating_the_user_still_gives_the_user_the_value() -> None:
    got = extracted("Congratulations on joining Globex Systems!", role="assistant")
    assert ("works_at", "Globex Systems") in got


@pytest.mark.parametrize(
    ("text", "role", "fact"),
    [
        # "That's", "It's": "is", not an owner's "'s".
        ("Any good bakeries near my place? That's Utrecht now, since the spring.", "user",
         ("lives_in", "Utrecht")),
        ("It's been two months since Felix and I got together.", "user", ("partner", "Felix")),
        # A verb opening the sentence is no one's name.
        ("Brewed kombucha again today, I think that's my thing now.", "user",
         ("drinks", "kombucha")),
        ("It's been matcha every afternoon for me lately.", "user", ("drinks", "matcha")),
        # "moved over to X" is a change of job.
        ("The commute is shorter since I moved over to Quillsoft.", "user",
         ("works_at", "Quillsoft")),
        # An assistant's glad news about the one it answers and one named person: a couple.
        ("What lovely news about you and Yuki! Shall I remember the date?", "assistant",
         ("partner", "Yuki")),
        # A household's car is the speaker's.
        ("We swapped the family car, it's a Renault Zoe now.", "user", ("drives", "Renault Zoe")),
    ],
)  # fmt: skip
def test_contractions_openers_and_pairs(text: str, role: str, fact: tuple[str, str]) -> None:
    got = extracted(text, role=role)
    assert fact in got, (text, got)


@pytest.mark.parametrize(
    "text",
    [
        "My in-laws drive a Volvo V60 and never stop talking about it.",
        "Plan a weekend for me and Kwame, we just started dating.",  # no firm called Kwame
        "Dana's new flat in Lisbon is lovely.",
    ],
)
def test_in_laws_a_date_and_an_owner_give_nothing_of_the_kind(text: str) -> None:
    got = extracted(text)
    assert not {f for f in got if f[0] in ("drives", "works_at", "lives_in")}, (text, got)


@pytest.mark.parametrize(
    "text",
    [
        # (the red team's: a pointer into a sentence about someone else, make-believe, a firm
        # one is a customer of)
        "Do you like Porto? It is where my sister lives.",
        "Pretend my flat in Lisbon is on fire, what do I grab first?",
        "I switched to Redwood Insurance for my car cover.",
    ],
)
def test_a_pointer_to_someone_elses_make_believe_and_a_customer_give_nothing(text: str) -> None:
    got = extracted(text)
    assert not {f for f in got if f[0] in ("lives_in", "works_at")}, (text, got)


def test_a_possessive_still_holds_in_a_condition() -> None:
    assert ("drives", "Kia Niro") in extracted("If my Kia Niro breaks down, who do I call?")


def _own(text: str, role: str = "user") -> set[tuple[str, str]]:
    bead = Bead(id="b1", content=text, ts=1_700_000_000.0, role=role)
    (got,) = RulesExtractor().extract([bead])
    return {(m.predicate, m.value) for m in got.mentions if m.own}


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # a sentence opened by "Had my ..." or "Had the ..." is a clipped "I had", no question
        (
            "Had the movers in all morning and I've finally relocated to Galway.",
            ("lives_in", "Galway"),
        ),
        (
            "Had my farewell lunch today and on Monday I start at Pellucid Labs.",
            ("works_at", "Pellucid Labs"),
        ),
        # "change of scene" is an idiom, not a scene of a story
        ("Fancied a change of scene, so I've moved to Utrecht.", ("lives_in", "Utrecht")),
        # a clause after ", and" has its own subject ("his" is the dog's)
        (
            "The cat's off his diet, and Imogen and I are officially together.",
            ("partner", "Imogen"),
        ),
        ("My girlfriend's Noor, since the summer.", ("partner", "Noor")),
        (
            "We're a couple now, Kwame and me, after a couple of months of dates.",
            ("partner", "Kwame"),
        ),
        # "nearly" belongs to what came before "but"
        (
            "I nearly bought a Fiat Panda but I'm driving a Renault Zoe now.",
            ("drives", "Renault Zoe"),
        ),
        ("I drink mate every day now.", ("drinks", "mate")),
    ],
)
def test_readings_of_chatty_messages(text: str, fact: tuple[str, str]) -> None:
    assert fact in _own(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        (
            "A mate of mine got a job at Pellucid Labs, free lunches and all.",
            ("works_at", "Pellucid Labs"),
        ),
        ("Some bloke from my running club just moved to Galway.", ("lives_in", "Galway")),
        ("Yuki from my choir has moved to Utrecht, gutted.", ("lives_in", "Utrecht")),
        ("Soledad from work has moved to Utrecht.", ("lives_in", "Utrecht")),
        ("Ravi still rents in Leith and says hello.", ("lives_in", "Leith")),
        ("Cheers mate, see you at the pub.", ("drinks", "mate")),
        ("My best mate Gav moved to Galway in May.", ("drinks", "mate")),
        ("Met up with Dana at Priya's birthday drinks and it was lovely.", ("partner", "Priya")),
        ("Told my sister about Felix.", ("partner", "Told")),
        ("Took Felix to the vet and he's fine.", ("partner", "Took Felix")),
    ],
)
def test_someone_else_in_a_chatty_message_gives_the_user_nothing(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact not in _own(text)


def test_an_assistant_wishing_luck_in_the_users_new_role_is_the_users_job() -> None:
    got = _own(
        "Good luck in your new role at Pellucid Labs! Here's a plan for week one.", "assistant"
    )
    assert ("works_at", "Pellucid Labs") in got


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        (
            "Receipt: first fuel top-up for my new Skoda Octavia, 40 litres.",
            ("drives", "Skoda Octavia"),
        ),
        ("Keys to my Leith flat came through today, finally.", ("lives_in", "Leith")),
        ("Form for the dentist: home address Leith, since March.", ("lives_in", "Leith")),
        (
            "Went over to oolong tea in the spring and haven't looked back.",
            ("drinks", "oolong tea"),
        ),
        ("Put Yuki down as my next of kin, we're together now.", ("partner", "Yuki")),
        ("Today is my first day at Pellucid Labs, wish me luck.", ("works_at", "Pellucid Labs")),
        (
            "We moved in with Imogen's parents... kidding, Imogen and I moved in with each other.",
            ("partner", "Imogen"),
        ),
    ],
)
def test_errands_and_notes_that_tell_a_value(text: str, fact: tuple[str, str]) -> None:
    assert fact in _own(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # an errand handles a drink or a car; it does not say what the user drinks or drives
        ("Order two crates of kombucha for the team offsite.", ("drinks", "kombucha")),
        ("Book a Renault Zoe for the Lisbon trip next week.", ("drives", "Renault Zoe")),
        # someone told by where the speaker knows them, and a pointer back to their value
        ("Ravi from the gym has bought a Kia Niro. Ask him how it drives.", ("drives", "Kia Niro")),
        ("I'm with Harbor Health now, the commute is shorter.", ("partner", "Harbor Health")),
        ("Bring my bank details for HR, it's my first day at Pellucid Labs.", ("works_at", "HR")),
        ("We moved in on Saturday, address is Leith now.", ("partner", "Leith")),
        ("Add Noor to the guest list.", ("partner", "Add Noor")),
    ],
)
def test_errands_and_others_in_notes_give_the_user_nothing(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact not in _own(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # (the red team's, round 2) "Had the X been ..., I'd ...": an "if" turned round, and
        # the would-clause says it did not happen; not the clipped "I had" of "Had my lunch"
        ("Had the Kia Niro been cheaper I'd have bought it.", ("drives", "Kia Niro")),
        ("Had the job at Acme Corp come through I would be rich.", ("works_at", "Acme Corp")),
        ("Had the flat in Lisbon been free, we'd live there now.", ("lives_in", "Lisbon")),
        ("Had my boyfriend Tom not cheated we'd still be together.", ("partner", "Tom")),
    ],
)
def test_had_opening_a_condition_with_its_would_asserts_nothing(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact not in _own(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # (the red team's, round 2) a character that shows nothing is read as absent: before a
        # name it hid the "with" that makes one name a person ("works_at Priya"), inside one
        # it cut the name in two
        ("I'm with \u200bPriya now.", ("partner", "Priya")),
        ("I'm with \u00adPriya now.", ("partner", "Priya")),
        ("I'm with Pri\u200bya now.", ("partner", "Priya")),
        ("I've been at Bright\x00wave since the spring.", ("works_at", "Brightwave")),
    ],
)
def test_invisible_characters_change_no_reading(text: str, fact: tuple[str, str]) -> None:
    got = extracted(text)
    assert {f for f in got if f[0] in ("partner", "works_at")} == {fact}, (text, got)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # (the red team's, round 2) words of a stay or a use tell the speaker's situation on
        # both sides of a "but" (only "nearly", "tried", an ad ... belong to what came before)
        ("We're on holiday, but I'm in Lisbon now!", ("lives_in", "Lisbon")),
        ("Just visiting but I'm staying in Lisbon now.", ("lives_in", "Lisbon")),
        ("It's a hire car but I drive a Kia Niro this week.", ("drives", "Kia Niro")),
    ],
)
def test_a_stay_or_a_hire_before_but_still_holds_after_it(text: str, fact: tuple[str, str]) -> None:
    assert fact not in _own(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # (the red team's, round 2) "my partner's X" is "my partner is X" only where X ends
        # its clause; before a noun or a verb X is something of the partner's
        ("My partner's Instagram is blowing up.", ("partner", "Instagram")),
        ("My girlfriend's Netflix account got hacked.", ("partner", "Netflix")),
        ("My partner's Gran lives with us now.", ("partner", "Gran")),
        ("My partner's Labrador, Rex, is ill.", ("partner", "Labrador")),
    ],
)
def test_a_partners_thing_or_relative_is_no_partner(text: str, fact: tuple[str, str]) -> None:
    assert fact not in _own(text)


@pytest.mark.parametrize(
    "text", ["My partner's Priya.", "My girlfriend's Noor now.", "My partner's Priya, since May."]
)
def test_my_partners_name_ending_the_clause_is_the_partner(text: str) -> None:
    assert {f for f in _own(text) if f[0] == "partner"} and len(_own(text)) == 1, text


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # an answer on its own, then the user's line about it (the assistant asked before)
        ("yep, Harbor Health. signed the contract this morning", ("works_at", "Harbor Health")),
        ("oh, a Volvo V60. picked it up from the dealer friday", ("drives", "Volvo V60")),
        ("yes, Kwame! we're official since the weekend", ("partner", "Kwame")),
        # a possessive in a question presupposes the job
        ("Any tips for my first month at Harbor Health?", ("works_at", "Harbor Health")),
    ],
)
def test_answers_and_premises_tell_a_value(text: str, fact: tuple[str, str]) -> None:
    assert fact in _own(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("Porto. Lived there for six years before the kids.", ("lives_in", "Porto")),
        ("Imogen asked me what to get her other half, any ideas?", ("partner", "Imogen")),
        (
            "whats the quickest way to get to the centre of Porto I arrive late",
            ("lives_in", "Porto"),
        ),
        ("hows the weather in Porto this week I land on friday", ("lives_in", "Porto")),
    ],
)
def test_a_past_state_someone_elses_relationship_or_a_question_without_its_mark(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact not in _own(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # (the red team's, round 3) an answer on its own takes the next line's words only if
        # that line says it holds now: the line's mood as a whole reads how it opens and
        # ends, not a plan, a wish, a near miss, a refusal or an ending inside it
        ("yeah, Porto. would move there in a heartbeat", ("lives_in", "Porto")),
        ("yeah, Porto. planning to move there", ("lives_in", "Porto")),
        ("yeah, Lisbon. moved there in 2019, moved out in 2021", ("lives_in", "Lisbon")),
        ("yeah, Harbor Health. declined the offer yesterday", ("works_at", "Harbor Health")),
        ("yeah, Harbor Health. turned down the offer", ("works_at", "Harbor Health")),
        ("yeah, Harbor Health. nearly signed the contract", ("works_at", "Harbor Health")),
        ("yeah, Harbor Health. started in 2019, left last year", ("works_at", "Harbor Health")),
        ("yeah, a Volvo V60. bought it in 2015, sold it in 2020", ("drives", "Volvo V60")),
        ("yes, Noor! we got together in 2019 but broke up in 2021", ("partner", "Noor")),
    ],
)
def test_an_answer_before_a_line_of_plans_refusals_or_endings_is_no_ones(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact not in _own(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # (the red team's, round 3) a greeting names whom it addresses, not an answer: the
        # line after it does not make the name the speaker's partner or employer, and "this
        # morning" is a time, no pointer back to the name
        ("hey, Kwame! moved in together last week", ("partner", "Kwame")),
        ("hi Kwame! we're official since the weekend", ("partner", "Kwame")),
        ("hey, Noor! signed the contract this morning", ("works_at", "Noor")),
        ("hey Noor. started at the new office that week", ("works_at", "Noor")),
    ],
)
def test_a_name_greeted_is_not_an_answer(text: str, fact: tuple[str, str]) -> None:
    assert fact not in _own(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # (the red team's, round 3) an errand is the speaker's only by a first-person subject;
        # "my" names whose the team, the neighbour or the car in the shop is, not who drinks or
        # drives what the errand handles
        ("Please order kombucha for the office, my team drinks it daily.", ("drinks", "kombucha")),
        ("Get the Tesla Model 3 brochure for my neighbour, he drives one.", ("drives", "Tesla Model 3")),
        ("Book me a Renault Zoe, my car is in the shop.", ("drives", "Renault Zoe")),
    ],
)  # fmt: skip
def test_an_errand_with_only_a_my_in_it_is_no_ones(text: str, fact: tuple[str, str]) -> None:
    assert fact not in _own(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # someone by their tie or their trade is the subject, not the speaker: in-laws, the
        # people who mind, serve or treat the speaker, said with or without "my"
        ("My sister-in-law just started at Harrow Analytics, she loves it.", ("works_at", "Harrow Analytics")),
        ("my father-in-law drinks nothing but oolong tea", ("drinks", "oolong tea")),
        ("The nanny bought a Ford Focus last week, so school runs are sorted.", ("drives", "Ford Focus")),
        ("grandad picked up a Honda Jazz from the dealer on Saturday", ("drives", "Honda Jazz")),
        ("our babysitter is moving to Leeds next month, gutted", ("lives_in", "Leeds")),
        ("Mum's neighbour got a job at Brightwell Foods", ("works_at", "Brightwell Foods")),
        # a relative named by where they are: the place is theirs
        ("my aunt in Porto keeps sending photos of the flat", ("lives_in", "Porto")),
        ("My best friend in Oslo says rent there is brutal.", ("lives_in", "Oslo")),
        # "me" after a verb is whom something is done to, not who does it
        ("the waiter brought me a cortado by mistake and honestly it was fine", ("drinks", "cortado")),
        ("My brother handed me a kombucha at the party", ("drinks", "kombucha")),
        # a name told by where the speaker knows them is a friend, not a partner
        ("Ines from yoga is popping round later, we're making dumplings", ("partner", "Ines")),
        ("Marek from next door came over and we watched the match", ("partner", "Marek")),
        # a drink had by accident, or the best one ever had somewhere, is no habit
        ("grabbed a chai latte by accident this morning, never again", ("drinks", "chai latte")),
        ("That bar in Riga did the best espresso I've ever had.", ("drinks", "espresso")),
        # a job opening is an advert, not a job
        ("Is Corvid Systems any good? They've got a vacancy I noticed.", ("works_at", "Corvid Systems")),
        ("Saw an opening at Larkspur Health, is it a decent place to work?", ("works_at", "Larkspur Health")),
    ],
)  # fmt: skip
def test_someone_elses_a_one_off_or_an_advert_is_not_the_speakers(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact not in extracted(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # ... and the speaker's own still is, beside the same words
        ("My brother-in-law helped us move to Leeds last weekend, we love the new flat.", ("lives_in", "Leeds")),
        ("Our nanny says hi; I started at Harrow Analytics on Monday.", ("works_at", "Harrow Analytics")),
        ("my colleagues at Brightwell Foods threw me a welcome lunch on my first day", ("works_at", "Brightwell Foods")),
        ("our neighbours in Utrecht brought a cake when we moved in", ("lives_in", "Utrecht")),
        ("Me and Dana moved to Lisbon in the spring.", ("lives_in", "Lisbon")),
        ("Ines from yoga and I are officially dating now!", ("partner", "Ines")),
    ],
)  # fmt: skip
def test_the_speakers_own_stands_beside_someone_elses_words(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact in extracted(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # (held15-held18, read; in my own words) someone known from somewhere, a thing done to
        # the speaker, a name after "in" that the gazetteer lacks
        ("Priya from the climbing gym is staying over, we're bingeing a love story series", ("partner", "Priya")),
        ("Soledad from my old team just bought a Mazda CX-5. Must ask how it handles.", ("drives", "Mazda CX-5")),
        ("my barber handed me an oolong tea while I waited, nice touch", ("drinks", "oolong tea")),
        ("workshop accepted! it's in Tralee in the spring", ("works_at", "Tralee")),
        ("my grandparents still live in Kilkenny, driving up at Easter", ("partner", "Kilkenny")),
        ("That's what I drink these days.", ("drinks", "these days")),
    ],
)  # fmt: skip
def test_the_others_of_chatty_messages_are_no_facts(text: str, fact: tuple[str, str]) -> None:
    assert fact not in extracted(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("Priya from the climbing gym and I are officially dating!", ("partner", "Priya")),
        ("Got me a Volvo XC40 last week, love it", ("drives", "Volvo XC40")),
        ("we found a flat in Tralee and signed the lease", ("lives_in", "Tralee")),
    ],
)  # fmt: skip
def test_the_speakers_own_in_chatty_messages_stands(text: str, fact: tuple[str, str]) -> None:
    assert fact in extracted(text)


@pytest.mark.parametrize(
    "text",
    [
        # a change already arranged, told in the future, holds from its telling
        "I'll be joining Halcyon Labs in March.",
        "We'll be living in Lyon from the 3rd.",
        "I'm going to start at Halcyon Labs on Monday.",
        "Next month I'll be driving a Kia Niro, the order is confirmed.",
        "I shall be taking up my new post at Halcyon Labs on the first of May.",
    ],
)
def test_an_arranged_change_told_in_the_future_is_a_fact(text: str) -> None:
    assert extracted(text) & {
        ("works_at", "Halcyon Labs"), ("lives_in", "Lyon"), ("drives", "Kia Niro")
    }  # fmt: skip


@pytest.mark.parametrize(
    "text",
    [
        # ... a hope, a maybe, a condition, a visit, a question or a denial does not
        "I'll probably be joining Halcyon Labs in March.",
        "I might be moving to Lyon in May.",
        "If it works out I'll be moving to Lyon in May.",
        "I'm going to move to Lyon someday.",
        "I'll be visiting Lyon in May.",
        "Will I be joining Halcyon Labs in March?",
        "I'll never be working at Halcyon Labs again.",
        "We're planning to be living in Lyon by the spring.",
        "I hope I'll be driving a Kia Niro next month.",
    ],
)
def test_a_hoped_or_doubtful_future_is_no_fact(text: str) -> None:
    assert not extracted(text) & {
        ("works_at", "Halcyon Labs"), ("lives_in", "Lyon"), ("drives", "Kia Niro")
    }  # fmt: skip


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # (held21, held22, read; in my own words) shorthand and speech: "it's" is "it is",
        # a claim filed is no saying, a choice "ended up with", a new habit "from now on",
        # "been on X", dates, a first piece of work somewhere
        ("ok it's official, Wren and i are a couple. my sister is thrilled", ("partner", "Wren")),
        ("expense claim: i drive my own Skoda Fabia to client sites now, what's the rate", ("drives", "Skoda Fabia")),
        ("right, new rule: it's green tea from now on. sleep has been rubbish", ("drinks", "green tea")),
        ("been on green tea for a fortnight, the coffee machine misses me", ("drinks", "green tea")),
        ("was torn between a Ford Puma and a Seat Arona, ended up with the Seat Arona", ("drives", "Seat Arona")),
        ("my first commit at Brightwell Foods went live today", ("works_at", "Brightwell Foods")),
        ("moving my dentist appointment, Wren and i have a date night on thursday. new relationship!", ("partner", "Wren")),
    ],
)  # fmt: skip
def test_shorthand_and_speech_tell_the_speakers_own(text: str, fact: tuple[str, str]) -> None:
    assert fact in extracted(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("Anouk claims I live in Leeds, which is nonsense", ("lives_in", "Anouk")),
        ("um so Priya at work got promoted and we're doing cake", ("works_at", "Priya")),
        ("okay so my ex's new husband bought a Mazda CX-5 and the kids won't stop talking about it", ("drives", "Mazda CX-5")),
        ("so then the kids grandad bought a Honda Jazz, bright orange", ("drives", "Honda Jazz")),
        ("i've been on a green tea kick for weeks", ("drinks", "green tea kick")),
    ],
)  # fmt: skip
def test_shorthand_and_speech_about_others_are_no_facts(text: str, fact: tuple[str, str]) -> None:
    assert fact not in extracted(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # a pronoun contracted is still someone else ("she's", "they're", "he'll")
        ("she's moving to Bristol in the new year", ("lives_in", "Bristol")),
        ("theyre relocating to Bristol, the kids are gutted", ("lives_in", "Bristol")),
        ("he'll be starting at Brightwell Foods after the summer", ("works_at", "Brightwell Foods")),
        ("they've just bought a Seat Arona, very shiny", ("drives", "Seat Arona")),
        # colleagues by their role or their chat handle, in a developer's shorthand
        ("heads up: pm is relocating to Bristol, standup times shift", ("lives_in", "Bristol")),
        ("@marta got an offer from Brightwell Foods, leaving end of month", ("works_at", "Brightwell Foods")),
        ("new intern lives in Bristol, commutes in twice a week", ("lives_in", "Bristol")),
        ("platform team moved to the Bristol office", ("lives_in", "Bristol")),
    ],
)  # fmt: skip
def test_someone_else_in_shorthand_is_no_fact_of_the_speaker(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact not in extracted(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("started seeing Wren, they're a nurse, we met at a gig", ("partner", "Wren")),
        ("my team at Brightwell Foods took me out for my first day", ("works_at", "Brightwell Foods")),
        ("I joined Brightwell Foods as a dev on Monday", ("works_at", "Brightwell Foods")),
    ],
)  # fmt: skip
def test_the_speaker_beside_roles_and_pronouns_is_still_read(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact in extracted(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # people by nickname, title, family name, idiom; advice given; a name that is a place
        ("roomie is obsessed w oolong tea rn", ("drinks", "oolong tea")),
        ("Mr Adeyemi from number 12 has moved to Bristol.", ("lives_in", "Bristol")),
        ("The Okonkwos have relocated to Bristol.", ("lives_in", "Bristol")),
        ("the other half has started at Brightwell Foods", ("works_at", "Brightwell Foods")),
        ("the other half has started at Brightwell Foods", ("partner", "Brightwell Foods")),
        ("My GP suggested I drink more oolong tea.", ("drinks", "oolong tea")),
        ("Bristol is where my other half and I live now", ("partner", "Bristol")),
    ],
)  # fmt: skip
def test_people_by_nickname_title_or_family_are_someone_else(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact not in extracted(text)


def test_the_leeds_flat_is_a_place_not_a_family() -> None:
    assert ("lives_in", "York") in extracted(
        "we're off to Leeds - actually scratch that, the Leeds flat fell through, it's York"
    )


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # "everyone's lovely" after the value is "everyone is", no owner of it; a firm opening
        # the sentence by taking the speaker on
        ("Started at Brightwell Foods on Monday, everyone's lovely.", ("works_at", "Brightwell Foods")),
        ("Moved to Bristol, everybody's so friendly here", ("lives_in", "Bristol")),
        ("Corvid hired me!! contract signed today", ("works_at", "Corvid")),
        ("Corvid offered me the job and I said yes", ("works_at", "Corvid")),
    ],
)  # fmt: skip
def test_a_statement_with_everyone_after_it_or_a_firm_hiring_is_read(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact in extracted(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # a telling framed as one: the wish, the "may", the "would" are the telling's
        ("I would like to let you know that I have taken up a position at Harrow Analytics.", ("works_at", "Harrow Analytics")),
        ("Just wanted to say I've moved to Bristol!", ("lives_in", "Bristol")),
        ("May I inform you that we have relocated to Bristol.", ("lives_in", "Bristol")),
        ("I must tell you that I have purchased a Seat Arona.", ("drives", "Seat Arona")),
        ("You may wish to note that I now reside in Bristol.", ("lives_in", "Bristol")),
    ],
)  # fmt: skip
def test_a_telling_framed_politely_is_read(text: str, fact: tuple[str, str]) -> None:
    assert fact in extracted(text)


@pytest.mark.parametrize(
    "text",
    [
        "I wanted to tell you that I'm thinking of moving to Bristol.",
        "I'd like to say I live in Bristol but I don't.",
        "Can I say I live in Bristol on the form?",
        "I would like to move to Bristol.",
    ],
)
def test_what_is_told_keeps_its_own_mood(text: str) -> None:
    assert ("lives_in", "Bristol") not in extracted(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # English as a second language: "only X", "my new work is in X", "now I am in X",
        # "his name is X" after the speaker's boyfriend
        ("I am drinking only rooibos now, no more coffee.", ("drinks", "rooibos")),
        ("My new work is in Corvid, I start there in May.", ("works_at", "Corvid")),
        ("I change my job, now I am in Corvid.", ("works_at", "Corvid")),
        ("I have new boyfriend, his name is Tariq.", ("partner", "Tariq")),
    ],
)  # fmt: skip
def test_a_second_languages_statements_are_read(text: str, fact: tuple[str, str]) -> None:
    assert fact in extracted(text)


def test_someone_elses_boyfriends_name_is_not_the_speakers_partner() -> None:
    assert ("partner", "Tariq") not in extracted(
        "My sister has a new boyfriend, his name is Tariq."
    )
    assert ("drinks", "only rooibos") not in extracted("I am drinking only rooibos now.")


@pytest.mark.parametrize(
    ("text", "fact", "role"),
    [
        # gave up the old for the new; a request to update the speaker's record; slang for a
        # car; a wedding of the speaker's; "someone" the speaker sees is the partner; settled on
        ("ditched my old drink for rooibos, never going back", ("drinks", "rooibos"), "user"),
        ("could you update my home city to Bristol? the old one is out of date", ("lives_in", "Bristol"), "user"),
        ("new whip: Seat Arona", ("drives", "Seat Arona"), "user"),
        ("We got married! Wren and me, tiny ceremony", ("partner", "Wren"), "user"),
        ("so i'm seeing someone now, it's Wren and the kids like them", ("partner", "Wren"), "user"),
        ("Mum swears by espresso but I've settled on rooibos", ("drinks", "rooibos"), "user"),
        ("Got it, you and the kids have moved to Bristol.", ("lives_in", "Bristol"), "assistant"),
    ],
)  # fmt: skip
def test_more_ways_of_telling_the_speakers_own(text: str, fact: tuple[str, str], role: str) -> None:
    assert fact in extracted(text, role=role)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("should I change my car to a Seat Arona?", ("drives", "Seat Arona")),
        ("Wren from my choir is getting married in Bristol in June.", ("partner", "Wren")),
        ("Lena joined a gym and got married young.", ("partner", "Lena")),
    ],
)  # fmt: skip
def test_a_question_or_someone_elses_wedding_is_no_fact(text: str, fact: tuple[str, str]) -> None:
    assert fact not in extracted(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # the words of something else count in the value's own clause
        ("a recruiter from Larkspur pinged again, told them I already joined Harrow Analytics", ("works_at", "Harrow Analytics")),
        ("moved on from my ex, seeing Wren now and it's going really well", ("partner", "Wren")),
        ("I tried cocoa at the cafe and it was vile so I had rooibos instead, my everyday drink now", ("drinks", "rooibos")),
    ],
)  # fmt: skip
def test_the_words_of_something_else_count_in_their_own_clause(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact in extracted(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("Wren, our neighbours' youngest, has just got engaged", ("partner", "Wren")),
        ("Got stuck behind a Seat Arona doing thirty on the motorway, nearly lost it.", ("drives", "Seat Arona")),
        ("Help me plan a weekend for me and Wren, we've just started dating.", ("works_at", "Wren")),
        ("Had an interview at Harrow Analytics, fingers crossed", ("works_at", "Harrow Analytics")),
    ],
)  # fmt: skip
def test_the_words_of_something_else_still_hold_in_their_clause(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact not in extracted(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("moved on from my ex, seeing Wren now and it's going really well", ("partner", "Wren")),
        ("I moved in with my sister in Bristol", ("lives_in", "Bristol")),
    ],
)  # fmt: skip
def test_a_person_after_a_preposition_is_no_subject(text: str, fact: tuple[str, str]) -> None:
    assert fact in extracted(text)


def test_a_name_one_is_seeing_is_a_person_whatever_the_map_says() -> None:
    assert ("lives_in", "Soledad") not in extracted("moved on from my ex, seeing Soledad now")
    assert ("lives_in", "Soledad") not in extracted("i meant Soledad, Soledad is who im dating")


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # typed in lower case on a phone: a big city after "to"/"in", a car by its make
        ("so um we finally moved to bristol last weekend, boxes everywhere", ("lives_in", "Bristol")),
        ("just moved to new york, tiny apartment lol", ("lives_in", "New York")),
        ("just bought a kia niro, so happy", ("drives", "Kia Niro")),
        ("picked up the new volvo v60 today", ("drives", "Volvo V60")),
    ],
)  # fmt: skip
def test_values_typed_in_lower_case_are_read(text: str, fact: tuple[str, str]) -> None:
    assert fact in extracted(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("my sister lives in bristol", ("lives_in", "Bristol")),
        ("going to bristol for the weekend", ("lives_in", "Bristol")),
        ("went to the honda dealer yesterday", ("drives", "Honda Dealer")),
        ("got a seat on the train at last", ("drives", "Seat On")),
        ("we moved the boxes in the van", ("lives_in", "Van")),
    ],
)  # fmt: skip
def test_lower_case_words_are_no_values_where_they_are_not(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact not in extracted(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("You will be pleased to hear that we have moved to Bristol.", ("lives_in", "Bristol")),
        ("I should mention that I have taken a position at Harrow Analytics.", ("works_at", "Harrow Analytics")),
        ("I'm happy to report that I now drive a Seat Arona.", ("drives", "Seat Arona")),
        ("As you may know, my husband and I have settled in Bristol.", ("lives_in", "Bristol")),
    ],
)  # fmt: skip
def test_more_polite_tellings_are_read(text: str, fact: tuple[str, str]) -> None:
    assert fact in extracted(text)


@pytest.mark.parametrize(
    "text",
    [
        "You will be pleased to hear that we may move to Bristol.",
        "Should I say I live in Bristol?",
        "Would I say I live in Bristol? Not really.",
        "I should move to Bristol.",
    ],
)
def test_a_polite_frame_leaves_a_question_or_a_maybe_as_it_was(text: str) -> None:
    assert ("lives_in", "Bristol") not in extracted(text)


@pytest.mark.parametrize(
    ("text", "right", "wrong"),
    [
        # corrected on the spot, in speech or in a hurry: the one meant, not the slip
        ("we're living in Porto no sorry Bristol now", ("lives_in", "Bristol"), ("lives_in", "Porto")),
        ("we moved to Porto I mean Bristol last month", ("lives_in", "Bristol"), ("lives_in", "Porto")),
        ("i started at Corvid sorry Harrow Analytics last week", ("works_at", "Harrow Analytics"), ("works_at", "Corvid")),
        ("i drink tea no wait rooibos every morning now", ("drinks", "rooibos"), ("drinks", "tea no wait rooibos")),
    ],
)  # fmt: skip
def test_a_slip_corrected_on_the_spot_gives_the_one_meant(
    text: str, right: tuple[str, str], wrong: tuple[str, str]
) -> None:
    got = extracted(text)
    assert right in got and wrong not in got


@pytest.mark.parametrize(
    "text", ["we moved to Bristol no regrets", "I moved to Bristol, no joke", "moved to Bristol, sorry not sorry"]
)  # fmt: skip
def test_no_or_sorry_after_a_value_is_no_correction(text: str) -> None:
    assert ("lives_in", "Bristol") in extracted(text)


@pytest.mark.parametrize(
    ("text", "fact", "role"),
    [
        # an assistant confirming an update it keeps of the user; the speaker's "my" in words
        # they report; an errand whose car is named as the speaker's new one
        ("Got it, home is Bristol now. Shall I redo the school-run timings?", ("lives_in", "Bristol"), "assistant"),
        ("Added to your profile notes: favourite drink is now rooibos.", ("drinks", "rooibos"), "assistant"),
        ("I've set your usual order in the cafe app to rooibos, since you said that's your drink now.", ("drinks", "rooibos"), "assistant"),
        ("my mum says my Seat Arona is the nicest car I've ever had, and she's right", ("drives", "Seat Arona"), "user"),
        ("Get me an insurance quote for the new car, a Seat Arona, bought yesterday.", ("drives", "Seat Arona"), "user"),
    ],
)  # fmt: skip
def test_confirmations_reports_and_errands_of_the_speakers_own(
    text: str, fact: tuple[str, str], role: str
) -> None:
    assert fact in extracted(text, role=role)


@pytest.mark.parametrize(
    ("text", "fact", "role"),
    [
        ("Got it, I'll book a table in Bristol for Saturday.", ("lives_in", "Bristol"), "assistant"),
        ("Noted, your sister lives in Bristol.", ("lives_in", "Bristol"), "assistant"),
        ("Got it. Bristol is lovely in spring, you should visit.", ("lives_in", "Bristol"), "assistant"),
        ("Book a Seat Arona for the trip, pick up at the airport", ("drives", "Seat Arona"), "user"),
        ("Text from Priya: my new Seat Arona is here!", ("drives", "Seat Arona"), "user"),
    ],
)  # fmt: skip
def test_confirmations_reports_and_errands_of_no_ones(
    text: str, fact: tuple[str, str], role: str
) -> None:
    assert fact not in extracted(text, role=role)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # red team, round 3: a request to set something of the speaker's that is no record of
        # theirs (a booking, a reminder, an order, a wallpaper), one refused, one in a story
        ("could you change my booking to Lisbon?", ("lives_in", "Lisbon")),
        ("could you set my reminder to Lisbon?", ("lives_in", "Lisbon")),
        ("could you update my packing list to Lisbon?", ("lives_in", "Lisbon")),
        ("can you change my wallpaper to a Kia Niro?", ("drives", "Kia Niro")),
        ("could you change my order to matcha?", ("drinks", "matcha")),
        ("could you not update my home city to Lisbon?", ("lives_in", "Lisbon")),
        ("can you change my car to a Kia Niro in the story?", ("drives", "Kia Niro")),
    ],
)  # fmt: skip
def test_a_request_to_change_something_else_of_the_speakers_is_no_fact(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact not in extracted(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # red team, round 3: a future told as arranged, but hedged after its value, or a
        # doing on a day rather than a change
        ("I'll be joining Copperleaf Systems in March, hopefully", ("works_at", "Copperleaf Systems")),
        ("I'll be moving to Lisbon in March, touch wood", ("lives_in", "Lisbon")),
        ("I'll be moving to Lisbon in March, assuming the visa comes through", ("lives_in", "Lisbon")),
        ("I'll be moving to Lisbon in March once the visa comes through", ("lives_in", "Lisbon")),
        ("I'll be moving to Lisbon in March lol jk", ("lives_in", "Lisbon")),
        ("I'll be moving to Lisbon in March, or so they keep telling me", ("lives_in", "Lisbon")),
        ("I'll be moving to Lisbon in March, she said", ("lives_in", "Lisbon")),
        ("I'll be moving to Lisbon in March, in the story", ("lives_in", "Lisbon")),
        ("I'll be working at Copperleaf Systems on Monday", ("works_at", "Copperleaf Systems")),
        ("I'll be seeing Dana on Friday", ("partner", "Dana")),
        ("I'll be driving a Kia Niro next week", ("drives", "Kia Niro")),
        ("I'll be drinking matcha at the conference tomorrow", ("drinks", "matcha")),
    ],
)  # fmt: skip
def test_a_future_hedged_after_its_value_or_a_doing_on_a_day_is_no_fact(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact not in extracted(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # red team, round 3: "X hired me" where X is a person hiring for a chore, or a sign-up
        ("Dana hired me to paint her flat", ("works_at", "Dana")),
        ("Dana hired me as her assistant", ("works_at", "Dana")),
        ("Dana offered me a job at her bakery", ("works_at", "Dana")),
        ("Spotify signed me up for their newsletter", ("works_at", "Spotify")),
    ],
)  # fmt: skip
def test_someone_hiring_the_speaker_for_a_chore_is_no_employer(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact not in extracted(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # red team, round 3: lower-case words a big city answers to among its other names
        # ("luck" for Lutsk, "turn" for Angren, "lime" for Lima, "the city" for London), and
        # a car maker's other wares typed in lower case
        ("I'm in luck, the new flat has a garden", ("lives_in", "Luck")),
        ("we moved in turn, first the sofa then the beds", ("lives_in", "Turn")),
        ("moved to rest in my new home", ("lives_in", "Rest")),
        ("painted our new flat in lime green", ("lives_in", "Lime")),
        ("we moved to the city last year", ("lives_in", "The City")),
        ("just got a tesla hoodie", ("drives", "Tesla Hoodie")),
        ("bought a honda lawnmower", ("drives", "Honda Lawnmower")),
        ("bought a bmw bike", ("drives", "BMW Bike")),
        ("bought some fiat money", ("drives", "Fiat Money")),
        ("bought a porsche lego set", ("drives", "Porsche Lego")),
    ],
)  # fmt: skip
def test_everyday_words_and_a_makers_wares_in_lower_case_are_no_values(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact not in extracted(text)


def test_a_sentence_of_hundreds_of_values_reads_no_clause_or_mood_past_the_listed_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # red team, round 3: a paste of 20,000 characters in sentences of 2,000, each naming a
    # value a hundred times ("in lyon in lyon ...", "Dana and Dana and ..."), read every
    # value's clause and mood: a scan of the sentence per value, ~900 ms of CPU where a
    # sentence of single values cost ~100. Counted here, not timed: no more values read
    # than are listed (`MAX_VALUES` per attribute).
    from chrysalis.extract import typed
    from chrysalis.extract.mood import Reading

    calls = {"clause": 0, "mood": 0}
    clause_words, mood = typed._clause_words, Reading.mood

    def counted_clause_words(sentence: str, value: typed._Value) -> set[str]:
        calls["clause"] += 1
        return clause_words(sentence, value)

    def counted_mood(self: Reading, *args: object, **kwargs: object) -> str:
        calls["mood"] += 1
        return mood(self, *args, **kwargs)

    monkeypatch.setattr(typed, "_clause_words", counted_clause_words)
    monkeypatch.setattr(Reading, "mood", counted_mood)
    for unit in (
        "we moved in lyon ",
        "a Kia Niro and ",
        "I live in Lisbon, ",
        "kia niro ",
        "Dana and ",
    ):
        sentence = (unit * (1990 // len(unit)))[:1990]
        calls.update(clause=0, mood=0)
        typed_mentions((sentence + ". ") * 10)
        assert calls["clause"] <= 2 * typed.MAX_VALUES, unit  # (was 110 to 221)
        assert calls["mood"] <= 4 * typed.MAX_VALUES, unit  # (was 141 to 230)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # red team, round 3: a telling framed politely, then told a lie or a joke; the "I" of
        # the frame, no subject of what is told; a label's words ("an ad:") its content's
        ("I'd like to say I live in Lisbon, but that's a lie", ("lives_in", "Lisbon")),
        ("I'd like to say I live in Lisbon, but I'm lying", ("lives_in", "Lisbon")),
        ("I wanted to say I live in Lisbon but couldn't", ("lives_in", "Lisbon")),
        ("I'd like to tell you I live in Lisbon lol jk", ("lives_in", "Lisbon")),
        ("May I mention Lisbon is where Dana lives now", ("lives_in", "Lisbon")),
        ("I saw an ad: work at Copperleaf Systems, great pay", ("works_at", "Copperleaf Systems")),
    ],
)  # fmt: skip
def test_a_telling_denied_or_of_someone_else_or_an_ad_is_no_fact(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact not in told(text)


def test_a_telling_with_a_but_of_something_else_is_still_told() -> None:
    assert ("lives_in", "Lisbon") in told(
        "I just wanted to let you know I moved to Lisbon, but the flat is tiny"
    )


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # red team, round 3: a person after a preposition is still the subject of a relative
        # clause of theirs, of glad news told to them, or of the news about them
        ("to my sister, who lives in Lisbon now", ("lives_in", "Lisbon")),
        ("than my brother, who drives a Kia Niro now", ("drives", "Kia Niro")),
        ("congrats to my brother, just started at Copperleaf Systems", ("works_at", "Copperleaf Systems")),
        ("happy for my sister, just started at Copperleaf Systems", ("works_at", "Copperleaf Systems")),
        ("about my brother - started at Copperleaf Systems on Monday", ("works_at", "Copperleaf Systems")),
    ],
)  # fmt: skip
def test_a_person_after_a_preposition_may_still_be_the_one_told_of(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact not in told(text)


def test_a_drink_from_now_on_for_someone_else_is_not_the_speakers() -> None:
    # red team, round 3: "it's X from now on" is the speaker's, not when it is for others
    assert ("drinks", "matcha") not in extracted("it's matcha from now on for the kids")
    assert ("drinks", "matcha") not in extracted("it's matcha now for Dana")
    assert ("drinks", "matcha") in extracted("it's matcha from now on")


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # (the red team's, round 3, left open; fixed after) a first name that is also a
        # city's, doing what only a person does, is a person
        ("Sam will be moving to Lisbon in March", ("lives_in", "Lisbon")),
        ("Sam lives in Lisbon", ("lives_in", "Sam")),
        ("Florence just started at Harrow Analytics", ("works_at", "Harrow Analytics")),
    ],
)  # fmt: skip
def test_a_name_that_is_a_citys_doing_what_people_do_is_a_person(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact not in users(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # a request to keep what follows: what follows is told, its "?" the request's
        ("Would you kindly note that I have moved to Bristol?", ("lives_in", "Bristol")),
        ("Could you please make a note that my husband and I now reside in Bristol.", ("lives_in", "Bristol")),
        ("Perhaps you would be so kind as to record that I have taken up a post at Harrow Analytics.", ("works_at", "Harrow Analytics")),
        ("Can you note down that I work at Harrow Analytics now", ("works_at", "Harrow Analytics")),
    ],
)  # fmt: skip
def test_a_request_to_note_something_tells_it(text: str, fact: tuple[str, str]) -> None:
    assert fact in extracted(text)


@pytest.mark.parametrize(
    "text",
    [
        "Could you note that I might move to Bristol?",
        "Can you remember where I live? Bristol or Bath?",
        "Would you note that my sister moved to Bristol?",
    ],
)
def test_a_request_to_note_keeps_what_it_notes_as_it_was(text: str) -> None:
    assert ("lives_in", "Bristol") not in users(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # a name told as a relative or a friend is no partner, beside the partner named
        ("The second passenger is Wren, my partner, not Ines. Ines is my cousin.", ("partner", "Ines")),
        ("no, Wren, not Ines - Ines is my cousin. Wren is the one I'm seeing.", ("partner", "Ines")),
        # a drink for one evening is no habit
        ("I'm having a rooibos tonight with Sam", ("drinks", "rooibos")),
        ("doing the school run tomorrow, so cocoa before nine", ("drinks", "cocoa")),
    ],
)  # fmt: skip
def test_a_relative_named_or_a_drink_for_one_evening_is_no_fact(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact not in extracted(text)


def test_the_partner_named_beside_a_cousin_is_still_read() -> None:
    assert ("partner", "Wren") in extracted(
        "The second passenger is Wren, my partner, not Ines. Ines is my cousin."
    )


@pytest.mark.parametrize(
    "text",
    [
        # what is asked of the memory is a question, not a request to keep
        "Can you remember whether I live in Bristol?",
        "Could you note whether I moved to Bristol?",
        "Could you remember which city I live in, Bristol?",
        "Could you remember to tell me whether I live in Bristol?",
        # the request itself asked about
        "Why would you note that I moved to Bristol?",
        "How could you remember that I live in Bristol?",
    ],
)
def test_asking_what_the_memory_keeps_tells_nothing(text: str) -> None:
    assert ("lives_in", "Bristol") not in extracted(text)


@pytest.mark.parametrize(
    ("text", "city"),
    [
        # what a place does too, after a city's name, leaves it a place
        ("Florence lives up to its name, I moved there in May.", "Florence"),
        ("Sydney has finally started to feel like home, I moved there last year.", "Sydney"),
    ],
)
def test_a_city_doing_what_a_place_does_is_still_a_home(text: str, city: str) -> None:
    assert ("lives_in", city) in extracted(text)


@pytest.mark.parametrize(
    "text",
    [
        # someone of a partner's is not the partner
        "Ines is my partner's cousin.",
        "Ines is my girlfriend's cousin.",
    ],
)
def test_a_partners_relative_is_no_partner(text: str) -> None:
    assert ("partner", "Ines") not in extracted(text)


def test_a_partner_told_by_name_is_still_read() -> None:
    assert ("partner", "Ines") in extracted("Ines is my girlfriend's name.")
    assert ("partner", "Ines") in extracted("Ines is my girlfriend.")


@pytest.mark.parametrize(
    "text",
    [
        # a tag, an alternative or a doubt after what a request would keep asks about it
        "Would you note that I live in Bristol, don't I?",
        "Could you note that I live in Bristol, right?",
        "Could you remember that I live in Bristol - do I though?",
        "Would you note that I live in Bristol or Bath?",
        "Can you remember that I live in Bristol? Or was it Bath?",
    ],
)
def test_a_request_to_note_with_its_content_in_doubt_tells_nothing(text: str) -> None:
    assert ("lives_in", "Bristol") not in extracted(text)


@pytest.mark.parametrize(
    "text",
    [
        "Could you note that I live in Bristol, please?",
        "Could you make a note that I moved to Bristol, if you don't mind?",
        "Would you note that I moved to Bristol? Right, next thing.",
    ],
)
def test_a_courteous_request_to_note_still_tells(text: str) -> None:
    assert ("lives_in", "Bristol") in extracted(text)


@pytest.mark.xfail(
    strict=True,
    reason="open (red team 3b): 'tomorrow' in a later comma clause counts against the drink, "
    "as a clause runs on past a comma forward",
)
def test_a_daily_drink_told_before_a_plan_for_tomorrow_is_still_a_habit() -> None:
    assert ("drinks", "Matcha") in extracted(
        "Matcha is my daily drink now, I'll bring some tomorrow."
    )


@pytest.mark.parametrize(
    ("text", "fact", "mine"),
    [
        # (the red team's, round 3b, left open; fixed after) whose a place is, said after it
        ("Bristol is where my sister lives.", ("lives_in", "Bristol"), False),
        ("Bristol is where my big brother lives", ("lives_in", "Bristol"), False),
        ("Someone I know lives in Bristol.", ("lives_in", "Bristol"), False),
        ("Wren and I broke up, she moved to Bristol", ("lives_in", "Wren"), False),
        ("Bristol is where my girlfriend and I live now", ("lives_in", "Bristol"), True),
        ("Jo told everyone I relocated to Bristol before I could post about it", ("lives_in", "Bristol"), True),
        ("Just joined Corvid and my new manager already said I can work from home", ("works_at", "Corvid"), True),
    ],
)  # fmt: skip
def test_whose_a_place_is_when_told_after_it(text: str, fact: tuple[str, str], mine: bool) -> None:
    assert (fact in users(text)) is mine


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("gave up on coffee completely, it's rooibos all the way", ("drinks", "rooibos")),
        ("addr change: Bristol. done w/ the old place", ("lives_in", "Bristol")),
    ],
)  # fmt: skip
def test_shorthand_for_an_address_and_a_drink_all_the_way(text: str, fact: tuple[str, str]) -> None:
    assert fact in extracted(text)


def test_an_acronym_before_a_verb_is_no_one_doing_it() -> None:
    # "PR" is no person who merged: the speaker's first piece of work at the firm
    assert ("works_at", "Harrow Analytics") in extracted("first PR merged at Harrow Analytics 🚀")
