"""The learned second opinion on attribute wording (`chrysalis.extract.learned`): what it reads,
what it lets through where no word of the attribute is said, and what it never decides."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from chrysalis.extract import learned
from chrysalis.extract.typed import typed_mentions


def own(text: str) -> set[tuple[str, str]]:
    return {(m.predicate, m.value) for m in typed_mentions(text) if m.own}


def test_features_mask_the_value_names_and_numbers_so_no_name_is_learned() -> None:
    sentence = "Since 2024 I drive a Volvo XC40 like Dana."
    start = sentence.index("Volvo")
    got = learned.features(sentence, start, start + len("Volvo XC40"))
    assert {"w:VAL", "w:NAME", "w:NUM", "w:drive", "L1:a", "L2:drive", "R1:like"} <= got
    assert "LL:drive a" in got
    assert not any("volvo" in f or "dana" in f or "2024" in f for f in got)


def test_the_shipped_model_covers_every_typed_attribute_and_names_its_training() -> None:
    raw = resources.files("chrysalis.extract").joinpath("learned_cues.json").read_text("utf-8")
    data = json.loads(raw)
    assert set(data["attributes"]) == {"lives_in", "works_at", "drinks", "drives", "partner"}
    # the families kept out of the rules' making are kept out of its training
    assert not {"held8", "held10", "held14"} & set(data["trained_on"])
    assert learned.version().startswith("learned/")
    # each attribute's threshold was picked with each training family left out in turn
    assert all(0.5 <= m["min"] < 1 for m in data["attributes"].values())
    assert learned.likely("favourite_colour", "I like Blue.", 7, 11) == 0.0


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("I've been at Brightwave since the spring.", ("works_at", "Brightwave")),
        ("I'm sticking to rooibos from now on.", ("drinks", "rooibos")),
        ("I'm with Priya now.", ("partner", "Priya")),
    ],
)
def test_a_statement_with_no_word_of_the_attribute_is_read_by_its_wording(
    text: str, fact: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert fact in own(text)
    # and it is the learned opinion that reads it: without it, nothing does
    monkeypatch.setattr(learned, "stands", lambda *_: False)
    assert fact not in own(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("Brightwave has been in the news since the spring.", ("works_at", "Brightwave")),
        ("My sister has been at Brightwave since the spring.", ("works_at", "Brightwave")),
        ("Have I been at Brightwave since the spring?", ("works_at", "Brightwave")),
        ("I'm not sticking to rooibos from now on.", ("drinks", "rooibos")),
        ("I'm with Northgate Bank now.", ("partner", "Northgate Bank")),  # a bank: no partner
        ("If I'm with Priya by then, we'll go.", ("partner", "Priya")),
    ],
)
def test_the_rules_still_decide_whose_and_whether_it_is_asserted(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact not in own(text)


def test_a_sentence_without_the_speaker_in_it_is_not_guessed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # scored as a statement, but no "I", "my" or "we": a weaker cue needs the speaker said
    monkeypatch.setattr(learned, "stands", lambda attr, *_: attr == "works_at")
    assert ("works_at", "Brightwave") not in own("At Brightwave now, all good.")
    assert ("works_at", "Brightwave") in own("I'm at Brightwave now, all good.")


def test_the_typed_reader_asks_the_model_only_where_the_attribute_is_unsaid(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[str] = []

    def spy(attr: str, sentence: str, start: int, end: int) -> bool:
        asked.append(sentence)
        return False

    monkeypatch.setattr(learned, "stands", spy)
    assert ("lives_in", "Valencia") in own("We moved to Valencia in May.")  # "moved": a cue
    assert not any("moved" in s for s in asked)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        # (the red team's, round 2) the wording of a statement, told as over
        ("I was at Brightwave until March.", ("works_at", "Brightwave")),
        ("I was at Brightwave till they closed.", ("works_at", "Brightwave")),
        (
            "I've been at Brightwave since the spring but I left last week.",
            ("works_at", "Brightwave"),
        ),
        ("I've been at Brightwave since the spring, until today.", ("works_at", "Brightwave")),
        # "with X now" of a firm one is a customer of, or of a plural "we"
        ("I'm with Vodafone now, way cheaper.", ("partner", "Vodafone")),
        ("I bank with Monzo now.", ("partner", "Monzo")),
        ("I'm with Aviva now for home insurance.", ("partner", "Aviva")),
        ("We're with Priya now, she's our lawyer.", ("partner", "Priya")),
    ],
)
def test_a_state_told_as_over_or_a_firm_one_is_with_is_not_guessed(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact not in own(text)


def test_a_state_still_held_until_later_is_guessed() -> None:
    assert ("works_at", "Brightwave") in own("I'm at Brightwave until I find something better.")


def _shipped() -> dict:
    return json.loads(
        resources.files("chrysalis.extract").joinpath("learned_cues.json").read_text("utf-8")
    )


def _signed(data: dict) -> str:
    import hashlib

    attrs = json.dumps(data["attributes"], sort_keys=True)
    data["version"] = "learned/" + hashlib.sha256(attrs.encode()).hexdigest()[:12]
    return json.dumps(data)


def _zero_threshold() -> str:
    data = _shipped()
    data["attributes"]["partner"]["min"] = 0.0
    return _signed(data)


def _nan_bias() -> str:
    data = _shipped()
    data["attributes"]["partner"]["bias"] = float("nan")
    return _signed(data)


def _huge_bias() -> str:
    data = _shipped()
    data["attributes"]["works_at"]["bias"] = 1e308
    return _signed(data)


def _edited_unsigned() -> str:
    data = _shipped()
    data["attributes"]["partner"]["min"] = 0.55
    return json.dumps(data)


@pytest.mark.parametrize(
    "raw",
    [
        None,  # missing
        "",
        "{oops",
        "[" * 100_000,
        json.dumps({"version": "learned/x"}),
        _zero_threshold(),
        _nan_bias(),
        _huge_bias(),
        _edited_unsigned(),
    ],
    ids=["missing", "empty", "not-json", "deep", "no-attributes", "min-0", "nan", "huge", "edited"],
)
def test_a_missing_or_damaged_weights_file_guesses_nothing_and_says_so(
    raw: str | None, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # (the red team's, round 2) a threshold of 0 or a NaN bias took every sentence with "I"
    # and a name for the user's partner; a missing or broken file raised mid-extraction
    def read() -> str:
        if raw is None:
            raise FileNotFoundError("learned_cues.json")
        return raw

    monkeypatch.setattr(learned, "_read", read)
    learned._weights.cache_clear()
    try:
        assert not learned.stands("partner", "I'm with Priya now.", 9, 14)
        assert own("Brightwave is hiring, I read it in the news today.") == set()
        assert ("partner", "Priya") not in own("I'm with Priya now.")
        assert learned.version() == "learned/none"
        assert "no attribute is guessed" in caplog.text
    finally:
        monkeypatch.undo()
        learned._weights.cache_clear()
    assert learned.stands("partner", "I'm with Priya now.", 9, 14)  # the shipped file again
