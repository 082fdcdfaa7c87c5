"""The Extractor contract (chrysalis/extract/__init__.py `Extractor`), run against every kind.

``rules`` needs nothing; ``ollama`` runs the official `ollama` client against the strict fake
``/api/chat`` (tests/fakes/ollama_chat.py), whose "model" answers each bead with what the rules
find in it, plus one fact whose end comes before its start (a model can say that). What only
the Ollama extractor does (its prompt, its quality gate, its dates) is in
tests/test_extract_ollama.py; the rules' patterns in tests/test_rules.py.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from chrysalis.core.errors import ExtractorUnavailable
from chrysalis.core.models import Bead
from chrysalis.extract import Extraction, Extractor, make_extractor
from chrysalis.extract.ollama import ENTITY_TYPES, PROMPT_VERSION, REPLY_SCHEMA, OllamaExtractor
from chrysalis.extract.rules import RulesExtractor
from tests.fakes.ollama_chat import FakeOllamaChat

MAY_7 = datetime(2023, 5, 7, 15, 30, tzinfo=UTC).timestamp()
TYPES = {*ENTITY_TYPES, "name"}  # what `Entity` lists


def bead(id: str, content: str, role: str = "user", source: str | None = None) -> Bead:
    return Bead.model_validate(
        {"id": id, "ts": MAY_7, "role": role, "source": source, "content": content}
    )


BEADS = [
    bead("home", "I live in Lisbon. My sister Maria Silva lives in Porto.", source="ada"),
    bead(
        "notes",
        'Ada Lovelace wrote "Notes on the Analytical Engine" in 1843: see '
        "https://example.org/notes, /home/ada/notes.md and ada@example.org.",
    ),
    bead("move", "I moved to Porto on 2023-05-07 and I work at Acme since 2021.", source="ada"),
    bead(
        "code",
        "Call `parse_when()` from chrysalis/extract/ollama.py, then run make_extractor.",
        role="assistant",
    ),
    bead("system", "You are Max, a helpful assistant living in Berlin.", role="system"),
    bead("blank", "   "),
    bead("dup", "Lisbon, lisbon and LISBON: Lisbon again."),
]


def _iso(ts: float | None) -> str | None:
    return None if ts is None else datetime.fromtimestamp(ts, UTC).date().isoformat()


def rules_answer(user_message: str) -> str:
    """What the fake model answers: the rules' findings in the reply schema, and one fact
    whose end is before its start."""
    header, _, text = user_message.partition("\n\n")
    speaker = header.split("\n")[0].removeprefix("Speaker: ")
    (found,) = RulesExtractor().extract([bead("x", text, source=speaker)])
    typed = lambda t: t if t in ENTITY_TYPES else "thing"  # noqa: E731
    facts: list[dict[str, Any]] = [
        {"subject": f.subject, "predicate": f.predicate.replace("_", " "), "object": f.object,
         "subject_type": typed(f.subject_type), "object_type": typed(f.object_type),
         "valid_at": _iso(f.valid_at), "invalid_at": _iso(f.invalid_at),
         "stated_by": speaker, "kind": "fact"}
        for f in found.facts
    ]  # fmt: skip
    if found.entities:
        first = found.entities[0].name
        facts.append({"subject": speaker, "predicate": "knew of", "object": first,
                      "subject_type": "person", "object_type": "thing",
                      "valid_at": "2023-05-01", "invalid_at": "2020-01-01",
                      "stated_by": speaker, "kind": "fact"})  # fmt: skip
    return json.dumps(
        {"entities": [{"name": e.name, "type": typed(e.type)} for e in found.entities],
         "facts": facts}
    )  # fmt: skip


@dataclass
class Kind:
    extractor: Extractor
    fake: FakeOllamaChat | None = None


@pytest.fixture(params=["rules", "ollama"])
def kind(request: pytest.FixtureRequest) -> Iterator[Kind]:
    if request.param == "rules":
        yield Kind(make_extractor("rules"))  # type: ignore[arg-type]
        return
    with FakeOllamaChat(schema=REPLY_SCHEMA, marker=f"[prompt {PROMPT_VERSION}]") as fake:
        fake.answer = rules_answer
        yield Kind(OllamaExtractor("llama3.2", host=fake.url, timeout=5), fake)
        assert fake.problems == []


def test_one_extraction_per_bead_in_order_named_by_its_id(kind: Kind) -> None:
    out = kind.extractor.extract(BEADS)
    assert [x.bead_id for x in out] == [b.id for b in BEADS]
    assert all(isinstance(x, Extraction) for x in out)
    assert kind.extractor.extract([]) == []
    assert kind.extractor.version.startswith(kind.extractor.name + "/")
    assert isinstance(kind.extractor, Extractor)


def test_entities_and_facts_are_well_formed(kind: Kind) -> None:
    out = {x.bead_id: x for x in kind.extractor.extract(BEADS)}
    for x in out.values():
        names = [e.name.lower() for e in x.entities]
        assert len(names) == len(set(names)), x  # each name once per bead
        for e in x.entities:
            assert e.name.strip() == e.name and e.name and e.type in TYPES, e
        for f in x.facts:
            assert f.subject and f.predicate and f.object and f.stated_by, f
            for when in (f.valid_at, f.invalid_at):
                assert when is None or isinstance(when, float), f
            if f.valid_at is not None and f.invalid_at is not None:
                assert f.valid_at <= f.invalid_at, f  # never ends before it starts
    assert {e.name for e in out["home"].entities} >= {"Lisbon", "Maria Silva"}
    assert any(f.object == "Lisbon" for f in out["home"].facts)
    assert [e.name.lower() for e in out["dup"].entities] == ["lisbon"]


def test_a_system_bead_or_one_without_text_gives_nothing(kind: Kind) -> None:
    out = {x.bead_id: x for x in kind.extractor.extract(BEADS)}
    for quiet in ("system", "blank"):
        assert (out[quiet].entities, out[quiet].facts, out[quiet].calls) == ((), (), 0)


def test_the_same_beads_give_the_same_extractions(kind: Kind) -> None:
    first = kind.extractor.extract(BEADS)
    assert kind.extractor.extract(BEADS) == first
    assert kind.extractor.extract(BEADS[::-1]) == first[::-1]  # each bead on its own
    assert [kind.extractor.extract([b])[0] for b in BEADS] == first


def _closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def test_a_service_that_cannot_answer_is_extractor_unavailable(kind: Kind) -> None:
    if kind.fake is None:
        pytest.skip("the rules ask no service: they cannot be unavailable")
    down = OllamaExtractor("llama3.2", host=_closed_port(), timeout=2)
    with pytest.raises(ExtractorUnavailable):
        down.extract(BEADS[:1])
    absent = OllamaExtractor("no-such-model", host=kind.fake.url, timeout=5)
    with pytest.raises(ExtractorUnavailable):
        absent.extract(BEADS[:1])
    kind.fake.answer = None
    kind.fake.script("{not json", '{"entities": "many"}')
    for _ in range(2):
        with pytest.raises(ExtractorUnavailable):
            kind.extractor.extract(BEADS[:1])
