"""`OllamaExtractor`: entities and typed facts from a local model, through Ollama's
structured output (DESIGN §13).

One ``/api/chat`` call per bead, at temperature 0, with ``format`` set to the JSON schema of
`Reply` (so the model can only answer in that shape) and the reply validated against the
same pydantic model. The prompt is versioned (`PROMPT_VERSION`): ``version`` is
``ollama:MODEL/PROMPT_VERSION`` and every derived item records it.

What the model says is not trusted as is. In code, after parsing:

* speaker: ``stated_by`` is always the bead's speaker (its ``source``, else its role);
  first person (``I``, ``me``; ``my X``) becomes the speaker (``ada``; ``ada's X``); a
  suggestion or a question is not a fact; an assistant's statement about the user (subject
  ``user``, ``you``, ``I``, ``me``, ``your X``) is dropped, since what an assistant suggests
  is not what the user said;
* mood: the same clause classifier as the rules extractor (`chrysalis.extract.mood`) has the
  last word, whatever ``kind`` the model gave: a fact whose object the bead names only in a
  question, a wish, a condition, a plan, a negation or a past state is dropped, and so is a
  fact about the speaker whose object is named only in a quote or in what someone else said
  (a fact about that someone, "Bob lives in Berlin" from Bob's words, is kept). An object the
  bead does not name as written cannot be placed, and is kept;
* quality gate: ``system`` beads and small talk (a greeting, fewer than 3 words) are
  skipped without a call; entities that are pronouns or stopwords, longer than 100
  characters, or restate the whole bead are dropped; so are facts with an empty part or
  the same subject and object, and anything the model copied from the instructions rather
  than from the bead. Each drop is recorded, with its reason, in `Extraction.dropped`.

Errors: Ollama down, a timeout, an HTTP error, a model not pulled, or a reply that is not
the JSON asked for all raise `ExtractorUnavailable` (the worker backs off and retries the
batch; nothing is half-written). A reply that does not validate is treated as the service
failing rather than as an empty answer, so a bead is never marked done on a garbled reply.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ValidationError

from chrysalis.core.errors import ExtractorUnavailable, InvalidInput
from chrysalis.core.models import Bead
from chrysalis.extract import Entity, Extraction, Fact
from chrysalis.extract.mood import ASSERTED, MOODS, QUOTED, REPORTED, Reading
from chrysalis.extract.summary import MAX_BEADS, MIN_BEADS, Summary, header
from chrysalis.net.loopback import check_loopback_service

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_MODEL",
    "ENTITY_TYPES",
    "MAX_CONTENT_CHARS",
    "PROMPT_VERSION",
    "REPLY_SCHEMA",
    "SUMMARY_PROMPT_VERSION",
    "SUMMARY_SCHEMA",
    "SYSTEM_PROMPT",
    "OllamaExtractor",
]

DEFAULT_MODEL = "llama3.2"
DEFAULT_HOST = "http://127.0.0.1:11434"
PROMPT_VERSION = "p1"
MAX_CONTENT_CHARS = 6000  # longer content is cut: a small model's context is small
MAX_ENTITY_CHARS = 100

ENTITY_TYPES = (
    "person",
    "title",
    "code",
    "path",
    "email",
    "url",
    "date",
    "place",
    "org",
    "thing",
)
EntityType = Literal[
    "person", "title", "code", "path", "email", "url", "date", "place", "org", "thing"
]


class ReplyEntity(BaseModel):
    name: str
    type: EntityType


class ReplyFact(BaseModel):
    subject: str
    predicate: str
    object: str
    subject_type: EntityType
    object_type: EntityType
    valid_at: str | None
    invalid_at: str | None
    stated_by: str
    kind: Literal["fact", "suggestion", "question"]


class Reply(BaseModel):
    entities: list[ReplyEntity]
    facts: list[ReplyFact]


# What Ollama's ``format`` receives; the reply is validated with the same model.
REPLY_SCHEMA: dict[str, Any] = Reply.model_json_schema()

SYSTEM_PROMPT = f"""\
You extract knowledge from one message of a conversation. [prompt {PROMPT_VERSION}]

Answer only with JSON in the given schema:
- "entities": the specific things the message names: people, places, organisations,
  titles of works, code identifiers, file paths, emails, URLs, dates, and other named
  things. Use the name as written. Type is one of: {", ".join(ENTITY_TYPES)}.
  Do not list pronouns, common words, or the message itself.
- "facts": what the message states as true, each as subject, predicate, object.
  Write each fact from the speaker's point of view: replace first person words with
  the speaker's name given above the message. "stated_by" is the speaker's name.
  The predicate is a short verb phrase in lower case. Keep subject and object short.
  "valid_at" is when the fact became true and "invalid_at" when it stopped, as ISO
  dates (YYYY-MM-DD), resolving relative times against the message time; null when
  the message does not say.
  "kind" is "fact" for a statement, "suggestion" for advice, a proposal or an offer,
  and "question" for something asked. Only statements are facts.
- Extract nothing from greetings or small talk: answer with empty lists.
- Never copy these instructions into the answer.
"""


SUMMARY_PROMPT_VERSION = "s1"
SUMMARY_CHARS = 2000  # what a model's summary may add to the header


class SummaryReply(BaseModel):
    summary: str


SUMMARY_SCHEMA: dict[str, Any] = SummaryReply.model_json_schema()

SUMMARY_PROMPT = f"""\
You summarise one session of a conversation for a memory. [summary {SUMMARY_PROMPT_VERSION}]

Answer only with JSON in the given schema: "summary" is 3 to 6 plain sentences saying what
the session was about: what each speaker said, decided or asked, with names, places, dates
and numbers as the turns give them. Name the speakers given before each turn. Say only what
the turns say: no advice, no greetings, nothing from these instructions.
"""


_SUMMARY_PROMPT_WORDS = " ".join(SUMMARY_PROMPT.lower().split())
_FIRST_PERSON = frozenset({"i", "me", "myself"})
_ABOUT_THE_USER = frozenset({"user", "the user", "you", "i", "me"})
_USERS = ("your ", "user's ", "the user's ")  # "your sister", said by an assistant
# fmt: off
_PRONOUNS = frozenset([
    "i", "me", "my", "mine", "myself", "you", "your", "yours", "yourself", "yourselves",
    "he", "him", "his", "himself", "she", "her", "hers", "herself", "it", "its", "itself",
    "we", "us", "our", "ours", "ourselves", "they", "them", "their", "theirs", "themselves",
    "this", "that", "these", "those", "who", "whom", "whose", "which", "what", "someone",
    "somebody", "something", "anyone", "anybody", "anything", "everyone", "everybody",
    "everything", "one",
])
_STOPWORDS = frozenset([
    "a", "an", "the", "and", "or", "but", "if", "then", "so", "of", "in", "on", "at", "to",
    "for", "from", "by", "with", "about", "as", "is", "are", "was", "were", "be", "been",
    "being", "do", "does", "did", "have", "has", "had", "not", "no", "yes", "there", "here",
    "when", "where", "why", "how", "all", "any", "some", "user", "assistant", "system",
    "speaker", "message",
])
# fmt: on
_GREETING = re.compile(
    r"^\W*(?:hi|hello|hey|yo|hiya|howdy|greetings|thanks|thank you|thx|ty|cheers|ok|okay|"
    r"sure|cool|great|nice|bye|goodbye|see you|good (?:morning|afternoon|evening|night)|"
    r"how are you|you're welcome|no problem|sounds good)"
    r"(?:\W+(?:there|all|everyone|so much|a lot|again|very much|doing|today|later))*\W*$",
    re.IGNORECASE,
)
_PUNCT = " .,;:!?\"'"
_ISO_PARTIAL = re.compile(r"^(\d{4})(?:-(\d{2}))?$")


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


_PROMPT_NORM = _norm(SYSTEM_PROMPT)


def _in_prompt(text: str) -> bool:
    """The whole words of ``text`` occur, in order, in the system prompt."""
    lowered = _norm(text)
    return (
        bool(lowered) and re.search(rf"(?<!\w){re.escape(lowered)}(?!\w)", _PROMPT_NORM) is not None
    )


def _speaker(bead: Bead) -> str:
    return bead.source or bead.role


def _safe_host(host: str) -> str:
    """The host without any user:password it may carry (never in a message)."""
    try:
        parts = urlsplit(host if "://" in host else f"http://{host}")
    except ValueError:
        return "the configured host"
    netloc = parts.hostname or ""
    if parts.port:
        netloc = f"{netloc}:{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def parse_when(value: str | None) -> float | None:
    """An ISO date or date-time as epoch seconds (UTC when it names no zone); ``YYYY`` and
    ``YYYY-MM`` mean their first day. Anything else is None."""
    if not value or not isinstance(value, str):
        return None
    text = value.strip()
    partial = _ISO_PARTIAL.match(text)
    try:
        if partial:
            moment = datetime(int(partial[1]), int(partial[2] or 1), 1, tzinfo=UTC)
        else:
            moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _about_the_user(subject: str) -> bool:
    lowered = _norm(subject)
    return lowered in _ABOUT_THE_USER or lowered.startswith(_USERS)


def _as_speaker(text: str, speaker: str) -> str:
    """First person resolved to the speaker: ``I`` -> ``ada``, ``my sister`` -> ``ada's
    sister``."""
    lowered = _norm(text)
    if lowered in _FIRST_PERSON:
        return speaker
    if lowered.startswith("my ") and len(lowered) > 3:
        return f"{speaker}'s {text.strip()[3:].strip()}"
    return text


def _mood_of(reading: Reading, obj: str, *, about_speaker: bool) -> str | None:
    """How the bead states ``obj``: `ASSERTED` if it is named in a clause the speaker asserts
    (for a fact about someone else, a quote or a report of their words counts), else the mood
    where it is first named; None when the bead does not name it as written."""
    words = obj.split()
    if not words:
        return None
    pattern = re.compile(
        r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words) + r"(?!\w)", re.IGNORECASE
    )
    first = None
    for m in pattern.finditer(reading.text):
        owned = _POSSESSED.search(reading.text, 0, m.start()) is not None
        mood = reading.mood(m.start(), m.end(), noun_phrase=owned)
        if mood == ASSERTED or (not about_speaker and mood in (QUOTED, REPORTED)):
            return ASSERTED
        first = first or mood
    return first


# A possessed noun phrase is presupposed, not asserted: it holds in a question or a wish too
# ("my sister Anna", "where did Mel go with her kids?").
_POSSESSED = re.compile(
    r"\b(?:my|your|his|her|their|our|\w+['\u2019]s)\s+(?:\w+(?:['\u2019]s name is|,)?\s+)?\Z",
    re.IGNORECASE,
)


def _small_talk(content: str) -> bool:
    return len(content.split()) < 3 or bool(_GREETING.match(content.strip()))


def _echoed(text: str, content_lower: str) -> bool:
    """Copied from the instructions, not from the bead."""
    return _in_prompt(text) and _norm(text) not in content_lower


class OllamaExtractor:
    """Entities and facts from an Ollama model with structured output.

    ``host`` defaults to ``$OLLAMA_HOST``, else ``http://127.0.0.1:11434``; ``timeout`` (in
    seconds) bounds each call (the client's own default waits forever).
    """

    def __init__(
        self, model: str = DEFAULT_MODEL, *, host: str | None = None, timeout: float = 60.0
    ) -> None:
        import ollama  # here, not at import time: client commands stay light

        if not model or not isinstance(model, str):
            raise InvalidInput("an Ollama extractor needs a model name, e.g. llama3.2")
        if not timeout > 0:
            raise InvalidInput(f"timeout must be positive seconds, not {timeout!r}")

        self.model = model
        self.name = f"ollama:{model}"
        self.version = f"ollama:{model}/{PROMPT_VERSION}"
        self.summary_version = f"ollama:{model}/{SUMMARY_PROMPT_VERSION}"
        self.host = host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST
        self.timeout = timeout
        self._client = ollama.Client(host=self.host, timeout=timeout)
        self._response_error = ollama.ResponseError

    def extract(self, beads: Sequence[Bead]) -> list[Extraction]:
        """One `Extraction` per bead, in order. Raises `ExtractorUnavailable` at the first
        bead Ollama cannot answer for: nothing of the batch is returned, the worker retries
        it whole (beads already answered cost their calls again)."""
        return [self._extract_one(bead) for bead in beads]

    # -- one bead --

    def _extract_one(self, bead: Bead) -> Extraction:
        if bead.role == "system":
            return Extraction(bead.id, dropped=("bead: system text, not extracted",))
        content = bead.content
        if not content.strip():
            return Extraction(bead.id, dropped=("bead: no text",))
        if _small_talk(content):
            return Extraction(bead.id, dropped=("bead: small talk, not extracted",))
        dropped: list[str] = []
        if len(content) > MAX_CONTENT_CHARS:
            content = content[:MAX_CONTENT_CHARS]
            dropped.append(f"bead: text cut to its first {MAX_CONTENT_CHARS} characters")
        reply, tokens = self._call(bead, content)
        entities = self._entities(reply, bead, content, dropped)
        facts = self._facts(reply, bead, content, dropped)
        return Extraction(
            bead.id,
            entities=tuple(entities),
            facts=tuple(facts),
            calls=1,
            tokens=tokens,
            dropped=tuple(dropped),
        )

    def user_message(self, bead: Bead, content: str) -> str:
        when = datetime.fromtimestamp(bead.ts, UTC).date().isoformat()
        return f"Speaker: {_speaker(bead)}\nTime: {when}\n\n{content}"

    def summarize(self, session_id: str, beads: Sequence[Bead]) -> Summary | None:
        """A session's summary in the model's words, under `summary.header`: one ``chat``
        call over the session's latest turns (up to `MAX_CONTENT_CHARS`; those are its
        evidence). None for fewer than `summary.MIN_BEADS` turns."""
        turns = [b for b in beads if b.role != "system" and b.content and b.derived_by is None]
        used: list[Bead] = []
        size = 0
        for bead in reversed(turns[-MAX_BEADS:]):
            size += min(len(bead.content), 500) + 40
            if used and size > MAX_CONTENT_CHARS:
                break
            used.append(bead)
        used.reverse()
        if len(used) < MIN_BEADS:
            return None
        lines = [
            f"[{datetime.fromtimestamp(b.ts, UTC).date().isoformat()}] {_speaker(b)}: "
            + " ".join(b.content[:500].split())
            for b in used
        ]
        text, tokens = self._chat(SUMMARY_PROMPT, "\n".join(lines), SUMMARY_SCHEMA)
        try:
            reply = SummaryReply.model_validate_json(text)
        except ValidationError:
            raise ExtractorUnavailable(
                f"Ollama model {self.model!r} did not answer with the JSON asked for; "
                "try another model"
            ) from None
        said = " ".join(reply.summary.split())[:SUMMARY_CHARS]
        if not said or said.lower() in _SUMMARY_PROMPT_WORDS:  # the instructions echoed
            return None
        body = f"{header(session_id, used)}\n{said}"
        return Summary(body, tuple(b.id for b in used), calls=1, tokens=tokens)

    def _call(self, bead: Bead, content: str) -> tuple[Reply, int]:
        text, tokens = self._chat(SYSTEM_PROMPT, self.user_message(bead, content), REPLY_SCHEMA)
        try:
            reply = Reply.model_validate_json(text)
        except ValidationError as exc:
            raise ExtractorUnavailable(
                f"Ollama model {self.model!r} did not answer with the JSON asked for "
                f"({exc.error_count()} problems); try another model"
            ) from None
        return reply, tokens

    def _chat(self, system: str, user: str, schema: dict[str, Any]) -> tuple[str, int]:
        """One ``chat`` call at temperature 0 with ``schema`` as the format: the reply's
        text and the tokens read and written. Every failure is `ExtractorUnavailable`."""
        import httpx

        host = _safe_host(self.host)
        check_loopback_service(self.host, "Ollama", ExtractorUnavailable)
        try:
            response = self._client.chat(
                model=self.model,
                messages=[
                    {"role": "system", "content": system},
                    {"role": "user", "content": user},
                ],
                format=schema,
                options={"temperature": 0},
            )
        except ConnectionError as exc:
            raise ExtractorUnavailable(
                f"Ollama is not running at {host}: start it with `ollama serve`, "
                "or use the rules extractor"
            ) from exc
        except httpx.TimeoutException as exc:
            raise ExtractorUnavailable(
                f"Ollama at {host} did not answer within {self.timeout:g} s"
            ) from exc
        except self._response_error as exc:
            status = exc.status_code
            if status == 404 or "not found" in str(exc.error).lower():
                raise ExtractorUnavailable(
                    f"Ollama has no model {self.model!r}: run `ollama pull {self.model}`"
                ) from exc
            if status >= 500:
                raise ExtractorUnavailable(
                    f"Ollama at {host} failed ({status}): {exc.error}; see its log"
                ) from exc
            raise ExtractorUnavailable(
                f"Ollama refused the request ({status}): {exc.error}"
            ) from exc
        except httpx.HTTPError as exc:
            raise ExtractorUnavailable(f"Ollama at {host} failed: {type(exc).__name__}") from exc
        tokens = (response.prompt_eval_count or 0) + (response.eval_count or 0)
        return response.message.content or "", tokens

    # -- the quality gate --

    def _entities(self, reply: Reply, bead: Bead, content: str, dropped: list[str]) -> list[Entity]:
        content_lower = _norm(content)
        seen: set[tuple[str, str]] = set()
        out: list[Entity] = []
        for item in reply.entities:
            name = item.name.strip()
            lowered = _norm(name)
            reason = None
            if not lowered:
                reason = "empty"
            elif lowered in _PRONOUNS:
                reason = "a pronoun"
            elif lowered in _STOPWORDS:
                reason = "a stopword"
            elif len(name) > MAX_ENTITY_CHARS:
                reason = f"longer than {MAX_ENTITY_CHARS} characters"
            elif lowered.strip(_PUNCT) == content_lower.strip(_PUNCT) or lowered.endswith("?"):
                reason = "restates the message"
            elif _echoed(name, content_lower):
                reason = "copied from the instructions"
            if reason:
                dropped.append(f"entity {name[:40]!r}: {reason}")
                continue
            key = (lowered, item.type)
            if key not in seen:
                seen.add(key)
                out.append(Entity(name, item.type))
        return out

    def _facts(self, reply: Reply, bead: Bead, content: str, dropped: list[str]) -> list[Fact]:
        speaker = _speaker(bead)
        content_lower = _norm(content)
        reading = Reading(content)
        seen: set[tuple[str, str, str]] = set()
        out: list[Fact] = []
        for item in reply.facts:
            subject, predicate, obj = (
                item.subject.strip(),
                item.predicate.strip(),
                item.object.strip(),
            )
            label = f"fact {subject[:30]!r} {predicate[:30]!r} {obj[:30]!r}"
            reason = None
            if item.kind != "fact":
                reason = f"a {item.kind}, not a statement"
            elif not (subject and predicate and obj):
                reason = "an empty part"
            elif bead.role == "assistant" and _about_the_user(subject):
                reason = "an assistant's statement about the user"
            valid_at, invalid_at = parse_when(item.valid_at), parse_when(item.invalid_at)
            ends_first = valid_at is not None and invalid_at is not None and invalid_at < valid_at
            if reason is None and ends_first:
                reason = "it ends before it starts"
            if reason is None:
                subject, obj = _as_speaker(subject, speaker), _as_speaker(obj, speaker)
                if _norm(subject) == _norm(obj):
                    reason = "subject and object are the same"
                elif _in_prompt(f"{subject} {predicate} {obj}") or any(
                    _norm(part) != _norm(speaker) and _echoed(part, content_lower)
                    for part in (subject, obj)
                ):
                    reason = "copied from the instructions"
                else:
                    own = _norm(subject) == _norm(speaker) or _norm(subject).startswith(
                        _norm(speaker) + "'s "
                    )
                    mood = _mood_of(reading, obj, about_speaker=own)
                    if mood is not None and mood != ASSERTED:
                        reason = f"said only {MOODS[mood]}"
            if reason:
                dropped.append(f"{label}: {reason}")
                continue
            key = (_norm(subject), _norm(predicate), _norm(obj))
            if key in seen:
                continue
            seen.add(key)
            out.append(
                Fact(
                    subject=subject,
                    predicate=predicate,
                    object=obj,
                    subject_type=item.subject_type,
                    object_type=item.object_type,
                    valid_at=valid_at,
                    invalid_at=invalid_at,
                    stated_by=speaker,
                )
            )
        return out
