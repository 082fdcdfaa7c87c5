"""`OllamaExtractor` through the real `ollama` client against a strict fake ``/api/chat``."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from chrysalis.core.errors import ExtractorUnavailable, InvalidInput
from chrysalis.core.models import Bead
from chrysalis.extract import Entity, Extractor, make_extractor
from chrysalis.extract.ollama import (
    DEFAULT_MODEL,
    MAX_CONTENT_CHARS,
    PROMPT_VERSION,
    REPLY_SCHEMA,
    SUMMARY_PROMPT_VERSION,
    SUMMARY_SCHEMA,
    SYSTEM_PROMPT,
    OllamaExtractor,
    Reply,
    parse_when,
)

from .fakes.ollama_chat import FakeOllamaChat, chat_body

MAY_7 = datetime(2023, 5, 7, 15, 30, tzinfo=UTC).timestamp()


def epoch(day: str) -> float:
    return datetime.fromisoformat(day).replace(tzinfo=UTC).timestamp()


@pytest.fixture
def fake() -> Iterator[FakeOllamaChat]:
    with FakeOllamaChat(
        schema=REPLY_SCHEMA, marker=f"[prompt {PROMPT_VERSION}]", models=("llama3.2", "qwen2.5")
    ) as server:
        yield server
        assert server.problems == []
        assert not server.replies, "scripted replies left unused"


def extractor(fake: FakeOllamaChat, model: str = DEFAULT_MODEL) -> OllamaExtractor:
    return OllamaExtractor(model, host=fake.url, timeout=5)


def bead(content: str, role: Any = "user", source: str | None = None, id: str = "b1") -> Bead:
    return Bead.model_validate(
        {"id": id, "ts": MAY_7, "role": role, "source": source, "content": content}
    )


def fact(
    subject: str,
    predicate: str,
    obj: str,
    *,
    kind: str = "fact",
    valid_at: str | None = None,
    invalid_at: str | None = None,
    stated_by: str = "user",
    subject_type: str = "person",
    object_type: str = "place",
) -> dict[str, Any]:
    return {
        "subject": subject,
        "predicate": predicate,
        "object": obj,
        "subject_type": subject_type,
        "object_type": object_type,
        "valid_at": valid_at,
        "invalid_at": invalid_at,
        "stated_by": stated_by,
        "kind": kind,
    }


def reply(entities: Sequence[tuple[str, str]] = (), facts: Sequence[dict[str, Any]] = ()) -> str:
    body = {"entities": [{"name": n, "type": t} for n, t in entities], "facts": list(facts)}
    Reply.model_validate(body)  # the script itself is in the schema
    return json.dumps(body)


def test_schema_is_the_pydantic_models() -> None:
    assert Reply.model_json_schema() == REPLY_SCHEMA
    assert REPLY_SCHEMA["required"] == ["entities", "facts"]
    fact_schema = REPLY_SCHEMA["$defs"]["ReplyFact"]
    assert set(fact_schema["required"]) == {
        "subject",
        "predicate",
        "object",
        "subject_type",
        "object_type",
        "valid_at",
        "invalid_at",
        "stated_by",
        "kind",
    }
    assert fact_schema["properties"]["kind"]["enum"] == ["fact", "suggestion", "question"]
    types = REPLY_SCHEMA["$defs"]["ReplyEntity"]["properties"]["type"]["enum"]
    assert "person" in types and "place" in types and "thing" in types


def test_entities_and_facts_through_the_real_client(fake: FakeOllamaChat) -> None:
    ex = extractor(fake)
    assert isinstance(ex, Extractor)
    assert ex.name == "ollama:llama3.2" and ex.version == f"ollama:llama3.2/{PROMPT_VERSION}"
    fake.script(
        reply(
            entities=[("Ada Lovelace", "person"), ("Lisbon", "place"), ("Lisbon", "place")],
            facts=[
                fact(
                    "Ada Lovelace",
                    "lives in",
                    "Lisbon",
                    valid_at="2022-01-01",
                    invalid_at="2023-04-30T12:00:00Z",
                    stated_by="ada",
                )
            ],
        )
    )
    [out] = ex.extract([bead("Ada Lovelace has lived in Lisbon since last year.", source="ada")])
    assert out.bead_id == "b1"
    assert out.entities == (Entity("Ada Lovelace", "person"), Entity("Lisbon", "place"))
    [f] = out.facts
    assert (f.subject, f.predicate, f.object) == ("Ada Lovelace", "lives in", "Lisbon")
    assert (f.subject_type, f.object_type) == ("person", "place")
    assert f.valid_at == epoch("2022-01-01")
    assert f.invalid_at == epoch("2023-04-30T12:00:00")
    assert f.stated_by == "ada"
    assert out.calls == 1 and out.tokens == 11 + 7
    assert out.dropped == ()
    # the request: one chat call, schema, temperature 0, the speaker and the bead's date
    [request] = fake.requests
    assert request["model"] == "llama3.2" and request["stream"] is False
    assert request["format"] == REPLY_SCHEMA and request["options"] == {"temperature": 0}
    system, user = request["messages"]
    assert system == {"role": "system", "content": SYSTEM_PROMPT}
    assert user == {
        "role": "user",
        "content": "Speaker: ada\nTime: 2023-05-07\n\nAda Lovelace has lived in Lisbon since last year.",
    }


def test_speaker_is_the_role_without_a_source_and_long_text_is_cut(fake: FakeOllamaChat) -> None:
    fake.script(reply())
    long = "word " * (MAX_CONTENT_CHARS // 5 + 100)
    [out] = extractor(fake).extract([bead(long, role="assistant")])
    content = fake.requests[0]["messages"][1]["content"]
    assert content.startswith("Speaker: assistant\nTime: 2023-05-07\n\n")
    assert len(content) == len("Speaker: assistant\nTime: 2023-05-07\n\n") + MAX_CONTENT_CHARS
    assert out.dropped == (f"bead: text cut to its first {MAX_CONTENT_CHARS} characters",)


def test_dates_to_epoch() -> None:
    assert parse_when("2023-05-07") == epoch("2023-05-07")
    assert parse_when("2023-05-07T10:00:00+02:00") == epoch("2023-05-07T08:00:00")
    assert parse_when("2023-05-07T10:00:00") == epoch("2023-05-07T10:00:00")
    assert parse_when("2022") == epoch("2022-01-01")
    assert parse_when("2022-03") == epoch("2022-03-01")
    assert parse_when("last year") is None
    assert parse_when("2023-13-45") is None
    assert parse_when("") is None and parse_when(None) is None


def test_unparsable_dates_become_none(fake: FakeOllamaChat) -> None:
    fake.script(
        reply(facts=[fact("user", "moved to", "Porto", valid_at="last spring", invalid_at="soon")])
    )
    [out] = extractor(fake).extract([bead("I moved to Porto last spring, it was great.")])
    [f] = out.facts
    assert f.valid_at is None and f.invalid_at is None


def test_first_person_becomes_the_named_speaker(fake: FakeOllamaChat) -> None:
    fake.script(
        reply(
            facts=[
                fact("I", "works at", "Acme", stated_by="I", object_type="org"),
                fact("Bob", "met", "me", stated_by="caroline", object_type="person"),
            ]
        )
    )
    [out] = extractor(fake).extract(
        [bead("I work at Acme, and Bob met me there.", source="caroline")]
    )
    assert [(f.subject, f.predicate, f.object, f.stated_by) for f in out.facts] == [
        ("caroline", "works at", "Acme", "caroline"),
        ("Bob", "met", "caroline", "caroline"),
    ]


def test_my_becomes_the_speakers(fake: FakeOllamaChat) -> None:
    fake.script(reply(facts=[fact("my sister", "lives in", "Berlin", stated_by="caroline")]))
    [out] = extractor(fake).extract([bead("My sister lives in Berlin now.", source="caroline")])
    assert [(f.subject, f.object) for f in out.facts] == [("caroline's sister", "Berlin")]


def test_assistant_suggestion_about_the_user_is_not_the_users_fact(
    fake: FakeOllamaChat,
) -> None:
    fake.script(
        reply(
            facts=[
                fact("user", "should try", "yoga", kind="suggestion", stated_by="assistant"),
                fact("you", "enjoy", "hiking", stated_by="assistant"),
                fact("user", "likes", "tea", stated_by="assistant"),
                fact("your sister", "lives in", "Sintra", stated_by="assistant"),
                fact("Sintra", "is near", "Lisbon", stated_by="assistant", subject_type="place"),
                fact("user", "visits", "Sintra", kind="question", stated_by="assistant"),
            ]
        )
    )
    [out] = extractor(fake).extract(
        [
            bead(
                "You might enjoy hiking in Sintra, which is near Lisbon. Do you like tea?",
                "assistant",
            )
        ]
    )
    assert [(f.subject, f.object, f.stated_by) for f in out.facts] == [
        ("Sintra", "Lisbon", "assistant")
    ]
    reasons = "\n".join(out.dropped)
    assert "a suggestion, not a statement" in reasons
    assert "a question, not a statement" in reasons
    assert reasons.count("an assistant's statement about the user") == 3


def test_the_same_fact_from_the_user_is_kept(fake: FakeOllamaChat) -> None:
    fake.script(reply(facts=[fact("user", "likes", "tea", stated_by="user")]))
    [out] = extractor(fake).extract([bead("I really like tea in the morning.")])
    assert [(f.subject, f.object, f.stated_by) for f in out.facts] == [("user", "tea", "user")]


def test_system_beads_and_small_talk_make_no_call(fake: FakeOllamaChat) -> None:
    beads = [
        bead("You are a helpful assistant. Be concise.", role="system", id="s"),
        bead("hi", id="g1"),
        bead("Thanks!", id="g2"),
        bead("Good morning everyone!", id="g3"),
        bead("ok sure", id="g4"),
    ]
    out = extractor(fake).extract(beads)
    assert fake.requests == []
    assert [e.bead_id for e in out] == ["s", "g1", "g2", "g3", "g4"]
    assert all(e.calls == 0 and e.tokens == 0 and not e.entities and not e.facts for e in out)
    assert out[0].dropped == ("bead: system text, not extracted",)
    assert {e.dropped for e in out[1:]} == {("bead: small talk, not extracted",)}


def test_junk_entities_and_facts_are_dropped(fake: FakeOllamaChat) -> None:
    question = "Where did Melanie go camping with her kids last summer?"
    fake.script(
        reply(
            entities=[
                ("she", "person"),
                ("the", "thing"),
                ("Melanie", "person"),
                ("x" * 101, "thing"),
                (question, "thing"),
                ("organisations", "org"),  # from the instructions, not the bead
            ],
            facts=[
                fact("Melanie", "went", "", stated_by="user"),
                fact("Melanie", "is", "melanie", stated_by="user"),
                fact("Melanie", "has", "kids", stated_by="user", object_type="person"),
            ],
        )
    )
    [out] = extractor(fake).extract([bead(question)])
    assert out.entities == (Entity("Melanie", "person"),)
    assert [(f.subject, f.object) for f in out.facts] == [("Melanie", "kids")]
    reasons = "\n".join(out.dropped)
    for reason in (
        "'she': a pronoun",
        "'the': a stopword",
        "longer than 100 characters",
        "restates the message",
        "'organisations': copied from the instructions",
        "an empty part",
        "subject and object are the same",
    ):
        assert reason in reasons
    assert out.calls == 1


def test_an_entity_the_bead_itself_names_is_kept_even_if_the_prompt_says_it(
    fake: FakeOllamaChat,
) -> None:
    fake.script(reply(entities=[("organisations", "thing")]))
    [out] = extractor(fake).extract([bead("I study how organisations share knowledge.")])
    assert out.entities == (Entity("organisations", "thing"),)


def test_a_reply_that_is_not_the_json_asked_for_is_unavailable(fake: FakeOllamaChat) -> None:
    ex = extractor(fake)
    fake.script("I think the entities are Ada and Lisbon.")
    with pytest.raises(ExtractorUnavailable, match="did not answer with the JSON asked for"):
        ex.extract([bead("Ada Lovelace lives in Lisbon now.")])
    fake.script(json.dumps({"entities": [{"name": "Ada", "type": "wizard"}], "facts": []}))
    with pytest.raises(ExtractorUnavailable, match="did not answer with the JSON asked for"):
        ex.extract([bead("Ada Lovelace lives in Lisbon now.")])


def test_tokens_and_calls_per_bead(fake: FakeOllamaChat) -> None:
    fake.script(
        chat_body("llama3.2", reply(), prompt_tokens=120, eval_tokens=30),
        {"model": "llama3.2", "message": {"role": "assistant", "content": reply()}, "done": True},
    )
    out = extractor(fake).extract(
        [
            bead("First real message here.", id="a"),
            bead("hello", id="b"),
            bead("Second real one.", id="c"),
        ]
    )
    assert [(e.bead_id, e.calls, e.tokens) for e in out] == [
        ("a", 1, 150),
        ("b", 0, 0),
        ("c", 1, 0),
    ]


def test_missing_model_says_pull(fake: FakeOllamaChat) -> None:
    ex = extractor(fake, "mistral")
    with pytest.raises(ExtractorUnavailable, match="ollama pull mistral"):
        ex.extract([bead("Ada Lovelace lives in Lisbon now.")])


def test_server_error_is_unavailable(fake: FakeOllamaChat) -> None:
    fake.script((500, {"error": "llama runner process has terminated"}))
    with pytest.raises(ExtractorUnavailable, match=r"failed \(500\): llama runner"):
        extractor(fake).extract([bead("Ada Lovelace lives in Lisbon now.")])


def test_timeout_is_bounded() -> None:
    with FakeOllamaChat(
        schema=REPLY_SCHEMA, marker=f"[prompt {PROMPT_VERSION}]", delay=2.0
    ) as fake:
        fake.script(reply())
        ex = OllamaExtractor(host=fake.url, timeout=0.3)
        t0 = time.monotonic()
        with pytest.raises(ExtractorUnavailable, match=r"did not answer within 0\.3 s"):
            ex.extract([bead("Ada Lovelace lives in Lisbon now.")])
        assert time.monotonic() - t0 < 1.5
        assert fake.problems == []


def _closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def test_server_down_is_unavailable_quickly() -> None:
    ex = OllamaExtractor(host=_closed_port(), timeout=2)
    t0 = time.monotonic()
    with pytest.raises(
        ExtractorUnavailable,
        match=r"not running at http://127\.0\.0\.1:\d+: start it with `ollama serve`",
    ):
        ex.extract([bead("Ada Lovelace lives in Lisbon now.")])
    assert time.monotonic() - t0 < 2


def test_messages_never_show_a_password_in_the_host() -> None:
    host = _closed_port().replace("http://", "http://ada:hunter2@")
    with pytest.raises(ExtractorUnavailable) as info:
        OllamaExtractor(host=host, timeout=2).extract([bead("Ada Lovelace lives in Lisbon now.")])
    assert "hunter2" not in str(info.value) and "ada:" not in str(info.value)


def test_a_model_and_a_positive_timeout_are_required() -> None:
    with pytest.raises(InvalidInput):
        OllamaExtractor("")
    with pytest.raises(InvalidInput):
        OllamaExtractor(timeout=0)


def test_host_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:1")
    assert OllamaExtractor().host == "http://127.0.0.1:1"
    monkeypatch.delenv("OLLAMA_HOST")
    assert OllamaExtractor().host == "http://127.0.0.1:11434"


def test_make_extractor_gives_the_model(fake: FakeOllamaChat) -> None:
    ex = make_extractor("ollama:qwen2.5", host=fake.url, timeout=5)
    assert isinstance(ex, OllamaExtractor)
    assert ex.model == "qwen2.5" and ex.name == "ollama:qwen2.5"
    assert ex.version == f"ollama:qwen2.5/{PROMPT_VERSION}"
    default = make_extractor("ollama", host=fake.url)
    assert isinstance(default, OllamaExtractor) and default.model == DEFAULT_MODEL == "llama3.2"
    fake.script(reply(entities=[("Lisbon", "place")]))
    [out] = ex.extract([bead("We flew to Lisbon yesterday.")])
    assert out.entities == (Entity("Lisbon", "place"),)
    assert fake.requests[0]["model"] == "qwen2.5"


# ---- session summaries ---------------------------------------------------------------------


def test_a_session_summary_is_one_call_with_its_own_schema_and_prompt_version() -> None:
    turns = [
        bead("We rode tram 28 through Alfama on Sunday.", source="Bo", id="t1"),
        bead("Did you see the Gulbenkian museum too?", source="Ada", id="t2"),
        bead("Yes, and we ate pasteis de nata every morning.", source="Bo", id="t3"),
    ]
    with FakeOllamaChat(schema=SUMMARY_SCHEMA, marker=f"[summary {SUMMARY_PROMPT_VERSION}]") as f:
        said = "Bo told Ada about riding tram 28 in Lisbon and visiting the Gulbenkian museum."
        f.script(json.dumps({"summary": said}))
        ex = extractor(f)
        summary = ex.summarize("trip", turns)
        assert f.problems == []
        [request] = f.requests
        assert request["model"] == "llama3.2" and request["options"] == {"temperature": 0}
        assert request["format"] == SUMMARY_SCHEMA
        user = request["messages"][1]["content"]
        assert user.splitlines()[0] == "[2023-05-07] Bo: We rode tram 28 through Alfama on Sunday."
        assert summary is not None and summary.calls == 1 and summary.tokens == 18
        assert summary.text == "Session trip, 2023-05-07: 3 turns by Bo, Ada.\n" + said
        assert summary.evidence == ("t1", "t2", "t3")
        assert ex.summary_version == f"ollama:llama3.2/{SUMMARY_PROMPT_VERSION}"
        # Too few turns: no call at all. A reply that is not the JSON asked for: unavailable.
        assert ex.summarize("trip", turns[:2]) is None
        f.script("a summary in prose, not JSON")
        with pytest.raises(ExtractorUnavailable, match="JSON"):
            ex.summarize("trip", turns)
        # The instructions echoed back are no summary.
        f.script(json.dumps({"summary": "say only what the turns say"}))
        assert ex.summarize("trip", turns) is None
        assert f.problems == [] and not f.replies


def test_a_fact_the_bead_does_not_assert_is_dropped_whatever_the_model_says(
    fake: FakeOllamaChat,
) -> None:
    """The model calls each of these a statement; the clause classifier overrules it."""
    cases = [
        ('My colleague Bob wrote: "I live in Berlin now"', fact("I", "lives in", "Berlin")),
        ("I wish I lived in Paris", fact("I", "lives in", "Paris")),
        ("If I moved to Tokyo, I would learn Japanese.", fact("I", "lives in", "Tokyo")),
        ("Do I prefer tea or coffee?", fact("I", "prefers", "tea", object_type="thing")),
        ("I don't live in Madrid, I just visit.", fact("I", "lives in", "Madrid")),
        ("Next year I will work at Initech.", fact("I", "works at", "Initech")),
    ]
    for _, said in cases:
        fake.script(reply(facts=[said]))
    out = extractor(fake).extract([bead(text, id=f"b{i}") for i, (text, _) in enumerate(cases)])
    assert [x.facts for x in out] == [()] * len(cases)
    reasons = [x.dropped[0].split(": ", 1)[1] for x in out]
    assert reasons == [
        "said only in a quote",
        "said only as a wish or a hope",
        "said only in a condition or a supposition",
        "said only in a question",
        "said only in a negation",
        "said only as a plan or a possibility",
    ]


def test_a_fact_the_bead_asserts_is_kept_and_so_is_what_someone_said_of_themselves(
    fake: FakeOllamaChat,
) -> None:
    fake.script(
        reply(
            facts=[
                fact("I", "lives in", "Ghent"),
                fact("Bob", "lives in", "Berlin"),  # Bob's own words: about Bob, kept
                fact("I", "lives in", "Berlin"),  # Bob's "I" is not the speaker's
                fact("my sister", "is named", "Anna", object_type="person"),
                fact("I", "lives near", "the coast"),  # not named as written: kept
            ]
        )
    )
    [out] = extractor(fake).extract(
        [bead('I live in Ghent. Bob wrote: "I live in Berlin". Should my sister Anna visit?')]
    )
    assert [(f.subject, f.predicate, f.object) for f in out.facts] == [
        ("user", "lives in", "Ghent"),
        ("Bob", "lives in", "Berlin"),
        ("user's sister", "is named", "Anna"),
        ("user", "lives near", "the coast"),
    ]
    assert out.dropped == ("fact 'I' 'lives in' 'Berlin': said only in a quote",)
