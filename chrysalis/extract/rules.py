# ruff: noqa: RUF001, SIM905 - curly quotes are text here; word lists read best as one string
"""The offline extractor: patterns that are right far more often than wrong, nothing clever.

Entities: names (capitalised word runs not at a sentence start, or at one when the word is no
common word), quoted titles, code identifiers (``snake_case``, ``camelCase``, ``dotted.names``,
backticked code), paths, emails, URLs and dates (ISO, or a month name with a day or a year).

Every candidate passes the quality gate of `chrysalis.extract.entities` (no numbers, flags,
redaction markers, weekday names, greetings, code fragments or capitalised common words).

Facts (`chrysalis.extract.facts`): what a speaker asserts of themselves ("I live in Lisbon",
the subject is the bead's ``source``, else its role) or of someone they name ("Caroline moved
to Boston", "Caroline's brother Tom"), with a verb that names a relation without doubt, and
never from a quote, reported speech, a question, a wish, a condition, a plan, a negation or a
past state. Assistant beads give no facts of their own: its "I" is the assistant, and what it
says of others restates the user or the encyclopaedia, neither dated by the bead. A short one
(at most `RESTATED` characters, no ``source``) gives the user's facts it states of them by
value, the user named as the subject ("Noted - you've settled in Osaka now").
"""

from __future__ import annotations

import re
from collections.abc import Sequence, Set
from datetime import UTC, datetime

from chrysalis.core.models import Bead
from chrysalis.extract import Entity, Extraction, Fact, Mention
from chrysalis.extract.entities import GREETINGS, entity_or_none, lower_words
from chrysalis.extract.facts import DRINK_WORDS
from chrysalis.extract.facts import facts as read_facts
from chrysalis.extract.summary import VERSION as SUMMARY_VERSION
from chrysalis.extract.summary import Summary, extractive
from chrysalis.extract.typed import TYPES, addressed, facts_from, typed_mentions
from chrysalis.extract.values import ORG_HEADS

# 2: third-person facts, the entity gate; 3: facts told by their value; 4: whose words they
# are (pasted messages, stories, hearsay, values taken back); 5: a value told across two
# sentences (a word pointing back, the attribute's words before or after), by contrast, by a
# possessive or "X is my ...", the assistant's notes of the user; 6: with no word of the
# attribute, a statement's wording learned from the read families (`.learned`)
VERSION = "rules/6"
MAX_SCAN_CHARS = 20_000  # an ingested file's first pages say what it is about
MAX_ENTITIES = 24  # per bead: past this it is a list or a table, not prose about things

_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        "january february march april may june july august september october november "
        "december".split()
    )
}
_MONTH_ABBR = {m[:3]: n for m, n in _MONTHS.items()}
# Words that start sentences or are capitalised for other reasons: never a name by themselves.
_COMMON = (
    frozenset(
        """a an the i i'm i've i'd i'll im ive me my mine we our you your yours he she it they them
    his her its their this that these those there here what when where why how who whom which
    whose yes no not and or but if then so because as at by for from in into of on to with
    about after before during since until while also just only very really maybe perhaps
    please thanks thank hi hello hey ok okay sure great good nice well oh ah wow yeah yep
    cool awesome sorry dear all any some every each both either neither one two three first
    last next new old is are was were be been am do does did have has had will would can could
    should may might must shall let lets let's today tomorrow yesterday tonight now
    monday tuesday wednesday thursday friday saturday sunday mr mrs ms dr sir madam
    january february march april june july august september october november december
    note tip step example see use using make sure remember however therefore although though
    anyway besides btw lol haha omg fyi many much more most such other another several few
    true false none null""".split()
    )
    | GREETINGS
)
_CONNECT = frozenset(
    {"of", "de", "du", "van", "von", "der", "la", "le", "del", "della", "delle", "degli", "dei"}
    | {"di", "da", "des"}
)
# Common words that are part of a name when capitalised inside a sentence ("the Old Testament",
# "Great Britain", "the Contour Next meter"); at a sentence's start they are only its opener.
_NAME_PART = frozenset("new old great grand next first last good true little".split())
# A quoted label after one of these is a button or a menu item ("click "Checkout""), not a title.
_UI_VERB = re.compile(
    r"\b(?:click|clicks|clicked|clicking|tap|taps|tapped|tapping|press|pressed|pressing|hit|"
    r"select|selected|selecting|choose|chose|choosing|pick|toggle|check|uncheck|tick)\b",
    re.IGNORECASE,
)
# A field of study or a degree is a subject, not a thing ("a degree in Computer Science",
# "my Master's degree"): a run after these words, or before "degree".
_STUDY_BEFORE = re.compile(
    r"(?:\b(?:degree|degrees|diploma|major|majors|majored|majoring|minor|minored|phd|ph\.d\.|"
    r"doctorate|masters?|bachelors?|mba|msc|bsc|ba|ma|courses?|classes|studies|studied|"
    r"studying|study)(?:['’]s)?(?:\s+(?:in|of))?\s+)$",
    re.IGNORECASE,
)
_STUDY_AFTER = re.compile(r"(?:['’]s)?\s+(?:degree|diploma|programme|program)\b", re.IGNORECASE)
# A code block: the names in it are a snippet's own (its variables and arguments), not things
# the text is about; a name the prose around it uses is still found there.
# Characters that show nothing (a zero-width space or joiner, a soft hyphen, a direction mark,
# a byte-order mark, a control character but a line's): read as if absent, so "Pri\u200bya"
# is one name and "with \u200bPriya" is still "with Priya".
_INVISIBLE = re.compile(
    "[\x00-\x08\x0e-\x1b\x7f\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)
_FENCE = re.compile(r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)

_URL = re.compile(r"\bhttps?://[^\s<>\"'`)\]]+", re.IGNORECASE)
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_PATH = re.compile(
    r"(?<![\w/.<$%{])(?:~?/(?:[\w.-]+/)*[\w.-]+|(?:\.{1,2}/)?(?:[\w-]+/)+[\w-]+\.[A-Za-z0-9]{1,8})"
    r"(?::\d+)?(?![\w/])"
)
_BACKTICK = re.compile(r"`([^`\n]{2,80})`")
_SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
_CAMEL = re.compile(r"\b(?:[a-z]+|[A-Z][a-z0-9]+)(?:[A-Z][a-z0-9]+)+\b")
_CALL = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\(\)")
_DIGIT = re.compile(r"\d")
_QUOTED = re.compile(r"[\"“]([^\"“”\n]{2,80})[\"”]")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH_DATE = re.compile(
    r"\b(?:(\d{1,2})(?:st|nd|rd|th)?\s+)?(" + "|".join(_MONTHS) + r"|"
    + "|".join(m for m in _MONTH_ABBR if m != "may") + r")\.?"
    r"(?:\s+(\d{1,2})(?:st|nd|rd|th)?)?(?:,?\s+(\d{4}))?\b",
    re.IGNORECASE,
)  # fmt: skip
# A capitalised word, or an initial inside a name after its first word ("Arthur C. Clarke").
_CAP_WORD = r"[A-Z](?:\.(?=[ \t]+[A-Z][a-z])|[\w'’-]*)"
_CAP_RUN = re.compile(
    r"(?<![\w'’-])[A-Z][\w'’-]*(?:\.[a-z]{2,4}(?![\w.]))?"  # "Node.js", "Mehr.ai"
    + r"(?:[ \t]+(?:(?:"
    + "|".join(sorted(_CONNECT))
    + r")[ \t]+(?:the[ \t]+)?"
    + r"|(?:dell|dall|degli|d)['’](?=[A-Z]))?"  # "Gallerie dell'Accademia", "Côte d'Ivoire"
    + _CAP_WORD
    + r")*"
)


def _iso(year: int, month: int, day: int | None) -> str | None:
    try:
        datetime(year, month, day or 1, tzinfo=UTC)
    except ValueError:
        return None
    return f"{year:04d}-{month:02d}" + (f"-{day:02d}" if day else "")


class RulesExtractor:
    """Deterministic entities and first-person facts (see the module's docstring)."""

    name = "rules"
    version = VERSION
    summary_version = SUMMARY_VERSION

    def extract(self, beads: Sequence[Bead]) -> list[Extraction]:
        return [self.extract_one(b) for b in beads]

    def summarize(self, session_id: str, beads: Sequence[Bead]) -> Summary | None:
        """The session's extractive summary (`chrysalis.extract.summary`)."""
        return extractive(session_id, beads)

    def extract_one(self, bead: Bead) -> Extraction:
        if bead.role == "system":  # instructions, not memory
            return Extraction(bead.id, dropped=("system prompt",))
        text = _INVISIBLE.sub("", bead.content[:MAX_SCAN_CHARS])
        found: dict[str, Entity] = {}
        lowered = lower_words(text)

        def add(name: str, type: str) -> bool:
            kept = entity_or_none(name, type, lowered)
            if kept is None or kept.lower() in _COMMON:
                return False
            found.setdefault(kept.lower(), Entity(kept, type))
            return True

        # Each pattern runs only where its telltale character is (most text has none).
        masked = _FENCE.sub(" ", text) if "```" in text or "~~~" in text else text
        for pattern, type, hint in ((_URL, "url", "://"), (_EMAIL, "email", "@")):
            if hint in masked:
                for m in pattern.finditer(masked):
                    add(m.group(0), type)
                masked = pattern.sub(" ", masked)
        if "/" in masked:
            for m in _PATH.finditer(masked):
                if "/" in m.group(0) and not m.group(0).startswith("//"):
                    add(m.group(0), "path")
            masked = _PATH.sub(" ", masked)
        if "`" in masked:
            for m in _BACKTICK.finditer(masked):
                add(m.group(1), "code")
        for pattern, hint in ((_SNAKE, "_"), (_CALL, "()"), (_CAMEL, "")):
            if hint in masked:
                for m in pattern.finditer(masked):
                    add(m.group(0), "code")
        if '"' in masked or "“" in masked:
            for m in _QUOTED.finditer(masked):
                if len(m.group(1).split()) <= 10 and not _ui_label(masked, m.start()):
                    add(m.group(1), "title")
            masked = _QUOTED.sub(" ", masked)
        for name, type in _dates(masked):
            add(name, type)
        speaker = bead.source or bead.role
        mentions: list[Mention] = []
        if bead.role == "assistant":
            # An assistant is no person whose facts we keep: its "I" is itself, and what it
            # says of others is mostly what the user told it or what books say. What it
            # restates of the user it answers ("you've settled in X") in a short turn is the
            # user's, read by value (`.typed.addressed`), the user named as its subject; an
            # assistant speaking for a named source is not.
            said = []
            if bead.source is None and len(text) <= RESTATED:
                speaker = _THE_USER
                # An update it confirms ("Got it, home is X now.", "Added to your profile
                # notes: favourite drink is now X") is the user's with no subject named.
                confirms = _CONFIRMS.match(text) is not None
                mentions = typed_mentions(addressed(text), named_subject=not confirms)
                said = facts_from(mentions, speaker)
        else:
            # ("I'm with Vantage Print now": a firm is no partner)
            said = [f for f in read_facts(text, speaker) if not _a_firm_for_a_person(f)]
            # What no sentence shape gave, a value of a known type may (`.typed`).
            mentions = typed_mentions(text)
            told = {(f.subject, f.predicate) for f in said} | {f.object.lower() for f in said}
            said += [
                f
                for f in facts_from(mentions, speaker)
                if (f.subject, f.predicate) not in told and f.object.lower() not in told
            ]
        # A fact stands only on entities that pass the gate (its subject is a speaker or a
        # name the patterns checked).
        facts = tuple(f for f in said if add(f.object, f.object_type))
        mentions = _timeline(mentions, facts, speaker, lowered)
        for f in facts:
            if f.subject != speaker:
                add(f.subject, "person")
        for name in _names(masked):
            add(name, "person" if bead.source and name == bead.source else "name")
        entities = tuple(found.values())[:MAX_ENTITIES]
        return Extraction(bead.id, entities=entities, facts=facts, mentions=tuple(mentions))


# An assistant's turn that opens by confirming an update to what it keeps of the user.
_CONFIRMS = re.compile(
    r"\W*(?:got\s+it|noted|done|updated|all\s+set|saved|added\s+to\s+your|"
    r"i['’]ve\s+(?:set|updated|saved|noted|added|changed|recorded)\s+your|"
    r"i['’]ll\s+(?:remember|note|keep\s+in\s+mind)\s+that)\b",
    re.IGNORECASE,
)
# An assistant's turn longer than this is an answer (advice, lists, examples, a generic
# "you"), not a restatement of what the user told it: on LongMemEval's dev assistant turns,
# reading them all gave 950 facts of the user's, nearly all wrong ("works_at Choose"); those
# of at most 400 characters gave 6.
RESTATED = 400
# The speaker whose statements are the user's (`chrysalis.context.facts.USER`): a bead with
# no ``source`` and the role "user".
_THE_USER = "user"
# The typed attribute a first-person fact's predicate tells (`prefers`: only of a drink).
_TIMELINE = {
    "lives_in": "lives_in", "works_at": "works_at", "drinks": "drinks", "prefers": "drinks",
    "favourite_drink": "drinks", "drives": "drives", "partner": "partner",
    "married_to": "partner",
}  # fmt: skip


_PERSONAL = frozenset({"partner", "married_to", "girlfriend", "boyfriend", "wife", "husband"})


def _a_firm_for_a_person(fact: Fact) -> bool:
    """Whether ``fact`` gives a partner a firm's name ("... Print", "... Labs")."""
    words = fact.object.lower().split()
    return fact.predicate in _PERSONAL and len(words) > 1 and words[-1] in ORG_HEADS


def _timeline(
    mentions: Sequence[Mention], facts: Sequence[Fact], speaker: str, lowered: Set[str]
) -> list[Mention]:
    """The typed mentions a bead adds to the timeline: its speaker's facts of a typed
    attribute (whatever rule read them) as ``own``, then the typed reader's values, ``own``
    only when the value also passes the entity gate; one per attribute and value. The
    timeline is the user's and has no speaker of its own: a bead of anyone else (a tool's
    output, another ``source``, an ingested file) names values, none ``own``."""
    out: dict[tuple[str, str], Mention] = {}
    if speaker != _THE_USER:
        for m in mentions:
            out.setdefault((m.predicate, m.value.lower()), Mention(m.predicate, m.value, False))
        return list(out.values())
    for f in facts:
        attr = _TIMELINE.get(f.predicate)
        if f.subject != speaker or attr is None:
            continue
        if f.predicate == "prefers" and not set(f.object.lower().split()) & DRINK_WORDS:
            continue  # "I prefer Python": no drink
        out.setdefault((attr, f.object.lower()), Mention(attr, f.object, own=True))
    for m in mentions:
        key = (m.predicate, m.value.lower())
        if key in out:
            continue
        own = m.own and entity_or_none(m.value, TYPES[m.predicate], lowered) is not None
        out[key] = Mention(m.predicate, m.value, own)
    return list(out.values())


def _dates(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    if _DIGIT.search(text) is None:
        return out  # a date here has a day or a year
    for m in _ISO_DATE.finditer(text):
        iso = _iso(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        if iso:
            out.append((iso, "date"))
    lower = text.lower()
    if not any(month in lower for month in _MONTH_ABBR):
        return out
    for m in _MONTH_DATE.finditer(text):
        day_before, month, day_after, year = m.groups()
        day = day_before or day_after
        if not (day or year):
            continue  # "March" alone is as often a verb or a name
        number = _MONTHS.get(month.lower()) or _MONTH_ABBR[month.lower()[:3]]
        if year:
            iso = _iso(int(year), number, int(day) if day else None)
            if iso:
                out.append((iso, "date"))
        else:
            out.append((f"{month.capitalize()} {int(day)}", "date"))
    return out


_GERUND = re.compile(r"[A-Z][a-z]{4,}ing")  # "Learning", "Visiting"; not "Beijing"


def _ui_label(text: str, at: int) -> bool:
    """Whether the quote at ``at`` follows a verb of clicking in its sentence ("Click "Book"
    and then "Flights""): a label on a screen, not a work's title."""
    # The verb is near its label: looked for in the 120 characters before it, not the whole
    # sentence again per quote (2,000 quotes in one sentence took 6 s).
    near = max(0, at - 120)
    start = max(max(text.rfind(c, near, at) for c in ".!?\n") + 1, near)
    return _UI_VERB.search(text, start, at) is not None


def _names(text: str) -> list[str]:
    """Runs of capitalised words (with "of", "de", ... inside), leading common words dropped;
    not a lone word opening a sentence (capitalised for that reason) unless the text also
    capitalises it inside a sentence; none from an itemised list (`_item_lines`)."""
    names: list[str] = []
    openers: list[str] = []
    listed = _item_lines(text)
    for m in _CAP_RUN.finditer(text):
        if listed and text.count("\n", 0, m.start()) in listed:
            continue
        words = [w[:-2] if w.endswith(("'s", "’s")) else w for w in m.group(0).split()]
        if any(len(w) > 6 and w.isupper() for w in words):
            continue  # a shouted heading, not a name
        start = m.start()
        before = text[max(0, start - 12) : start].rstrip(" \t*+-#>\"'“(•0123456789")
        at_start = not before or before[-1] in ".!?:;)]|\n"
        lead = 0
        while lead < len(words) and words[lead].lower() in _COMMON:
            if words[lead] == "New" and lead + 1 < len(words):
                break  # "New York", "New Year": part of the name
            if not at_start and lead + 1 < len(words) and words[lead].lower() in _NAME_PART:
                break  # capitalised inside a sentence: "the Old Testament"
            lead += 1
        if at_start and lead == 0 and len(words) >= 2 and _GERUND.fullmatch(words[0]):
            lead = 1  # "Learning German is hard": the verb opens the sentence, German stays
        words = words[lead:]
        while words and (
            words[-1].lower() in _CONNECT
            or (words[-1].lower() in _COMMON and (len(words) == 1 or words[-1].lower()
                                                  not in _NAME_PART))
        ):  # fmt: skip
            words.pop()
        if not words:
            continue
        if _STUDY_BEFORE.search(text[max(0, start - 40) : start]) or _STUDY_AFTER.match(
            text, m.end()
        ):
            continue  # "a degree in Computer Science", "my Bachelor's degree"
        opening = lead == 0 and at_start
        (openers if len(words) == 1 and opening else names).append(" ".join(words))
    inside = set(names)
    return names + [w for w in openers if w in inside]


_ITEM_LINE = re.compile(
    r"[ \t]*(?:[-*+•]|\d+[.)])?[ \t]*[A-Z][\w'’&-]*(?:[ \t]+[\w'’&()-]+)*[ \t]*"
)


def _item_lines(text: str) -> set[int]:
    """The numbers of the lines in runs of three or more lines that are each one capitalised
    phrase and nothing else (no sentence): an itemised list (groceries, headings, skills),
    whose title-case items are mostly common things, not names."""
    if text.count("\n") < 2:
        return set()
    out: set[int] = set()
    run: list[int] = []
    for i, line in enumerate([*text.split("\n"), ""]):
        words = line.split()
        if (
            _ITEM_LINE.fullmatch(line)
            and len(words) <= 8
            and sum(w[:1].isupper() for w in words) * 2 > len(words)
        ):
            run.append(i)
            continue
        if len(run) >= 3:
            out.update(run)
        run = []
    return out
