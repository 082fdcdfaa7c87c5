"""Extractors: beads in, knowledge out (DESIGN §13).

An `Extractor` reads beads and says which entities each one names and which facts it
states; it never writes. The knowledge worker (`chrysalis.extract.worker`) runs it off the
write path, on the beads this replica originated, and writes what it says as ordinary node
and edge ops with their evidence (`chrysalis.write.knowledge`).

    RulesExtractor   offline, deterministic: names, quoted titles, code identifiers, paths,
                     emails, URLs, dates, through a quality gate (`.entities`); asserted
                     facts in the first and third person ("I live in Lisbon", "Caroline
                     moved to Boston": `.facts`)
    OllamaExtractor  entities and typed facts with time qualifiers through Ollama's structured
                     output (`chrysalis.extract.ollama`)

Choose one like an embedder: ``make_extractor("rules" | "ollama[:MODEL]" | "none")``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from chrysalis.core.errors import InvalidInput
from chrysalis.core.models import Bead

__all__ = [
    "Entity",
    "Extraction",
    "Extractor",
    "Fact",
    "Mention",
    "make_extractor",
]


@dataclass(frozen=True, slots=True)
class Entity:
    """A thing a bead names: its text as written and a coarse type (``person``, ``title``,
    ``code``, ``path``, ``email``, ``url``, ``date``, ``place``, ``org``, ``thing``; the rules
    say ``name`` for a capitalised name they cannot type). Its node id is
    `chrysalis.core.graph_ids.node_id` of the name, so every laptop derives the same node."""

    name: str
    type: str


@dataclass(frozen=True, slots=True)
class Fact:
    """``subject -[predicate]-> object`` as stated in a bead.

    ``valid_at`` / ``invalid_at`` are world time as the bead states it (epoch seconds), None
    when it does not say (the writer then takes the bead's time for ``valid_at``, unless the
    fact ended before that: its start stays unknown).
    ``stated_by`` is who said it: the bead's speaker (its ``source``, or its role).
    """

    subject: str
    predicate: str
    object: str
    subject_type: str = "entity"
    object_type: str = "entity"
    valid_at: float | None = None
    invalid_at: float | None = None
    stated_by: str | None = None


@dataclass(frozen=True, slots=True)
class Mention:
    """A value of a typed attribute that a bead names (a city for ``lives_in``, a company for
    ``works_at``, a drink, a car, a first name for ``partner``), and whether the bead asserts
    it as its speaker's value now (``own``: the speaker's, cued, asserted, not past) or names
    it otherwise (someone else's, a trip, an ad, a plan, a negation, no word of the
    attribute). The typed-mention timeline (`chrysalis.read.mentions`) is made of these."""

    predicate: str
    value: str
    own: bool


@dataclass(frozen=True, slots=True)
class Extraction:
    """What an extractor found in one bead, and what finding it cost (for the budget)."""

    bead_id: str
    entities: tuple[Entity, ...] = ()
    facts: tuple[Fact, ...] = ()
    calls: int = 0  # model calls made for this bead
    tokens: int = 0  # tokens the model read and wrote for it
    dropped: tuple[str, ...] = field(default=())  # what the quality gate refused, and why
    mentions: tuple[Mention, ...] = ()  # typed values it names, each with its verdict


@runtime_checkable
class Extractor(Protocol):
    """Turns beads into entities and facts. Implementations are thread-safe.

    ``version`` names the extractor and its prompt or rule set, ``<name>/<set>``
    (``"rules/1"``): every derived item records it, and a new version re-extracts nothing by
    itself (the worker's cursor is not per version: re-extracting old beads would be a
    deliberate command, which does not exist yet, not a side effect of an upgrade).

    Every implementation passes the contract suite in ``tests/contracts/test_extractor.py``:

    - ``extract(beads)`` returns one `Extraction` per bead, in order, its ``bead_id`` the
      bead's id (the evidence the writer records); ``[]`` for ``[]``. It never writes.
    - Entities have a non-empty name, one of the types `Entity` lists, each name once per
      bead (case aside). Facts have a non-empty subject, predicate and object and
      ``stated_by``; ``valid_at`` and ``invalid_at`` are epoch seconds or None, and a fact
      never ends before it starts.
    - A system bead, or one with no text, gives nothing (``dropped`` may say why).
    - The same beads give the same extractions (rules by construction, a model at
      temperature 0 answering the same).
    - ``extract`` raises `chrysalis.core.errors.ExtractorUnavailable` when its service cannot
      answer; the worker backs off and retries, nothing is lost.
    """

    name: str
    version: str

    def extract(self, beads: Sequence[Bead]) -> list[Extraction]: ...


def make_extractor(spec: str | Extractor | None, **options: Any) -> Extractor | None:
    """An extractor from a spec: ``rules``, ``ollama``, ``ollama:MODEL``, ``none`` (None), or
    an `Extractor` (returned as is)."""
    if spec is None or isinstance(spec, Extractor):
        return spec
    if not isinstance(spec, str):
        raise InvalidInput(f"extractor must be text, not {type(spec).__name__}")
    name, _, arg = spec.partition(":")
    if name == "none" and not arg:
        return None
    if name == "rules" and not arg:
        from chrysalis.extract.rules import RulesExtractor

        return RulesExtractor(**options)
    if name == "ollama":
        from chrysalis.extract.ollama import DEFAULT_MODEL, OllamaExtractor

        extractor: Extractor = OllamaExtractor(arg or DEFAULT_MODEL, **options)
        return extractor
    raise InvalidInput(f"unknown extractor {spec!r}: use rules, ollama[:MODEL] or none")
