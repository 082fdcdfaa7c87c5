# ruff: noqa: RUF001 - curly apostrophes are text here
"""The facts that bear on a question, ordered for the time it is about.

A fact is an edge ``subject -[predicate]-> object`` with world-time validity
(`chrysalis.core.validity`). For a question, the facts read are those of its subjects: the people it
names (a node of that name) and, when it speaks in the first or second person or names nobody,
the user. A group of facts (one subject, one predicate) bears on the question when

- the question uses a word of the predicate ("live", "home", "moved" for ``lives_in``; the
  predicate's own words for any other: ``drives`` for "drive", ``sister`` for "sister"),
- the question names one of the group's objects ("do I still work at Acme?"), or
- one of its facts' evidence is among the strongest beads retrieval found for the question
  (so a predicate no word list knows still counts when its evidence matches).

A question that names a person and no predicate gets that person's current facts.

`order` puts first, within each group, the facts that held at the time the question is about
(`frame.Frame`): at ``now``; over a span (the most overlap first); before or after the event
an anchor names (a fact whose object the anchor names, else the latest change of a group the
anchor's words cue, else the change before the current value); or the earliest.
"""

from __future__ import annotations

import functools
import re
import threading
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chrysalis.context.frame import Frame
from chrysalis.core.errors import ChrysalisError
from chrysalis.core.graph_ids import node_id
from chrysalis.core.validity import holds
from chrysalis.read.drawing import GraphChanges
from chrysalis.read.reader import Reader

USER = "user"  # whom a first-person fact is about when the bead names no speaker
MAX_FACTS = 12  # facts a context shows at most (the groups that bear most first)
MAX_SUBJECTS = 6  # people a question may name whose facts are read
EVIDENCE_TOP = 5  # strongest bead hits whose facts count as bearing on the question
EVIDENCE_SHARE = 0.6  # ... and only those at least this share of the best hit's score

# Words of a question that ask about a predicate: stems (a question word starting with one
# matches). Beside these, every predicate's own words cue it (`_cued`).
_CUES: dict[str, tuple[str, ...]] = {
    "lives_in": (
        "live", "living", "home", "house", "flat", "apartment", "resid", "based", "move",
        "moving", "relocat", "city", "town", "country", "address", "neighbo", "stay", "locat",
        "rent", "settl", "zip", "postcode", "timezone", "tz", "hometown",
    ),
    "works_at": (
        "work", "job", "employ", "company", "firm", "office", "workplace", "hired", "boss",
        "career", "join", "salary", "pay", "paying", "paid", "payroll", "hired", "employer",
        "organi", "gig", "clock",
    ),
    "works_as": ("job", "role", "position", "title", "profession", "occupation", "career"),
    "prefers": ("prefer", "drink", "favo", "like", "beverage"),
    "married_to": ("married", "spouse", "wife", "husband"),
    "partner": (
        "partner", "girlfriend", "boyfriend", "wife", "husband", "spouse", "dating", "seeing",
        "relationship", "couple", "together", "half", "going", "significant", "bf", "gf",
        "fianc", "squeeze", "plus-one", "bae", "boo", "hubby", "wifey", "missus", "beloved",
    ),
    "drinks": ("drink", "beverage", "cup", "sip", "mug", "brew", "caffeine", "pick-me-up"),
    "drives": ("car", "driv", "drove", "vehicle", "wheels", "ride", "motor"),
}  # fmt: skip
_FIRST_SECOND = re.compile(r"\b(?:i|me|my|mine|myself|i'm|i've|i'd|we|our|us|you|your|user)\b")
_NAME = re.compile(r"(?<![\w'’])[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+){0,2}")
_WORD = re.compile(r"[a-z0-9][\w'’-]*")
# Words saying an anchor event is an end ("before I left Acme"): its fact's end is the moment.
_ENDING = re.compile(r"\b(?:left|leave|leaving|quit|quitting|moved\s+(?:out|away)|stopp?ed|"
                     r"broke\s+up|split|ended|gave\s+up)\b")  # fmt: skip


@dataclass(slots=True)
class Fact:
    """One fact as a context shows it."""

    id: str
    subject_id: str
    subject: str
    predicate: str
    object: str
    since: float | None
    until: float | None
    evidence: list[str]
    holds: bool = False
    current: bool = False
    key: tuple[float, ...] = field(default=())  # its place in its group (smaller first)


def subjects(reader: Reader, query: str) -> list[tuple[str, str]]:
    """``(node id, name)`` of the subjects a question is about: the present nodes named by
    capitalised runs of the question, and the user's nodes (both are looked up: a name has one
    node whichever wrote it first) when it speaks in the first or second person or names
    nobody."""
    names: list[str] = []
    for m in _NAME.finditer(query):
        words = m.group(0).split()
        for n in range(len(words), 0, -1):  # "Anna Berg", then "Anna"
            names.append(" ".join(words[:n]))
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    named = False
    for name in names[: 3 * MAX_SUBJECTS]:
        found = _nodes(reader, name)
        named = named or bool(found)
        for nid in found:
            if nid not in seen and len(out) < MAX_SUBJECTS:
                seen.add(nid)
                out.append((nid, name))
    if not named or _FIRST_SECOND.search(query.lower()):
        for nid in _nodes(reader, USER):
            if nid not in seen:
                seen.add(nid)
                out.append((nid, USER))
    return out


class _Known:
    """What this module read of one memory's graph, kept while the graph is unchanged: every
    context asks for the user's facts and looks up the same names, and at 100k beads reading
    them was ~1 ms of a context's ~15. An entry holds the `GraphChanges.version` taken before
    it was read, and counts only while that is still the version: a commit of node or edge
    ops between the read and the store leaves it unused, never stale."""

    LIMIT = 4096  # entries kept at most (a memory's people and the names asked about)

    def __init__(self, reader: Reader) -> None:
        self.changes = GraphChanges(reader.store)
        self.entries: dict[tuple[str, str], tuple[str, Any]] = {}

    def get(self, kind: str, key: str, read: Callable[[], Any]) -> Any:
        version = self.changes.version
        hit = self.entries.get((kind, key))
        if hit is not None and hit[0] == version:
            return hit[1]
        value = read()
        if len(self.entries) >= self.LIMIT:
            self.entries.clear()
        self.entries[(kind, key)] = (version, value)
        return value


_KNOWN: weakref.WeakKeyDictionary[Reader, _Known] = weakref.WeakKeyDictionary()
_KNOWN_LOCK = threading.Lock()


def _known(reader: Reader) -> _Known:
    with _KNOWN_LOCK:
        if (known := _KNOWN.get(reader)) is None:
            known = _KNOWN[reader] = _Known(reader)
        return known


def _nodes(reader: Reader, name: str) -> list[str]:
    """Every present node named ``name``: by id, by `graph_ids.node_id` (hand-written facts), by
    the memory's entity naming (extracted ones)."""
    return list(_known(reader).get("nodes", name, lambda: _read_nodes(reader, name)))


def _read_nodes(reader: Reader, name: str) -> tuple[str, ...]:
    candidates = [name, node_id(name)]
    if reader.entities is not None:
        candidates.append(reader.entities.id(name))
    out = []
    for candidate in dict.fromkeys(c for c in candidates if c):
        try:
            reader.get_node(candidate)
        except ChrysalisError:  # absent, or no valid id
            continue
        out.append(candidate)
    return tuple(out)


def read_facts(reader: Reader, subject_ids: Iterable[tuple[str, str]]) -> list[Fact]:
    """Every fact (edge out of the subject) of these subjects, ended ones too, each with its
    end as resolved against the facts that supersede it. New `Fact` objects on every call
    (a context marks them); what they are made of is read once per change of the graph."""
    known = _known(reader)
    out: list[Fact] = []
    for sid, name in subject_ids:
        read = functools.partial(_read_facts, reader, sid)
        for eid, predicate, obj, since, until, evidence in known.get("facts", sid, read):
            out.append(Fact(eid, sid, name, predicate, obj, since, until, list(evidence)))
    return out


def _read_facts(
    reader: Reader, sid: str
) -> tuple[tuple[str, str, str, float | None, float | None, tuple[str, ...]], ...]:
    return tuple(
        (e.id, e.predicate, node.name or node.id, e.valid_at, e.invalid_at, tuple(e.evidence))
        for e, node in reader.facts_of(sid)
    )


def bearing(
    query: str, facts: Sequence[Fact], hits: Mapping[str, float], named: Iterable[str]
) -> dict[tuple[str, str], float]:
    """The groups ``(subject id, predicate)`` that bear on ``query``, each with how much (1.0
    a cue word, 0.9 an object named, else its evidence's share of the best bead hit).
    ``hits`` are bead scores of retrieval, best first; ``named`` the subjects the question
    names by name (not the user)."""
    words = _WORD.findall(query.lower())
    text = " ".join(words)
    top = [(b, s) for b, s in list(hits.items())[:EVIDENCE_TOP]]
    best = top[0][1] if top else 0.0
    strong = {b: s / best for b, s in top if best > 0 and s >= EVIDENCE_SHARE * best}
    out: dict[tuple[str, str], float] = {}
    groups: dict[tuple[str, str], list[Fact]] = defaultdict(list)
    for f in facts:
        groups[(f.subject_id, f.predicate)].append(f)
    for key, group in groups.items():
        value = 0.0
        if _cued(key[1], words):
            value = 1.0
        elif any(_names(f.object.lower(), text) for f in group):
            value = 0.9
        else:
            value = max((strong.get(b, 0.0) * 0.8 for f in group for b in f.evidence), default=0)
        if value > 0:
            out[key] = value
    if any(v >= 0.9 for v in out.values()):  # words of the question name what it asks
        out = {k: v for k, v in out.items() if v >= 0.9}
    else:  # no word of it does: "where" asks for a place, "who" for a person
        asked = next((_ASKS[w] for w in words[:4] if w in _ASKS), ())
        for key in groups:
            if key[1] in asked:
                out[key] = max(out.get(key, 0.0), 0.85)
    named = set(named)
    if not any(sid in named for sid, _ in out):
        for key, group in groups.items():  # "tell me about Anna": what holds of her
            if key[0] in named and any(f.until is None for f in group):
                out.setdefault(key, 0.5)
    return out


# What a question asks for by its question word alone, when none of its words cues a
# predicate ("where do I clock in these days?", "who's the one for me now?").
_ASKS: dict[str, tuple[str, ...]] = {
    "where": ("lives_in", "works_at"),
    "who": ("partner", "married_to"),
    "whom": ("partner", "married_to"),
}


# Words that say the same as a cued predicate, added to the words a context searches with:
# a move is told as "relocated", "signed a lease", a new job as "accepted the offer".
EXPAND: dict[str, str] = {
    "lives_in": "live moved relocated home apartment flat lease based settled",
    "works_at": "work job joined started offer employer company hired onboarding",
    "prefers": "drink prefer favourite switched usual",
    "partner": "partner dating girlfriend boyfriend seeing together",
    "married_to": "married wife husband wedding",
    "drives": "car drive bought vehicle traded dealer",
}


def expand(query: str) -> str:
    """``query`` and, when its words cue a predicate, the words that say the same."""
    words = _WORD.findall(query.lower())
    extra = [EXPAND[p] for p in EXPAND if _cued(p, words)]
    return " ".join([query, *extra])


def _cued(predicate: str, words: Sequence[str]) -> bool:
    """Whether a question word is a cue of ``predicate`` or shares its first five letters
    with one of the predicate's own words ("drive" for ``drives``); "who am I with?" asks
    for a partner."""
    stems = _CUES.get(predicate, ())
    if stems and any(w.startswith(stems) for w in words):
        return True
    if (
        predicate == "partner"
        and words[:1] in (["who"], ["who's"], ["whos"])
        and ("with" in words[1:5] or "person" in words[1:5])
    ):
        return True  # "who am I with now?", "who's my person these days?"
    own = {w[:5] for w in predicate.lower().split("_") if len(w) >= 3 and w not in _GLUE}
    return any(len(w) >= 3 and w[:5] in own for w in words)


_GLUE = frozenset({"has", "the", "and", "for", "with", "from", "into"})


def _names(name: str, text: str) -> bool:
    """Whether ``text`` (lower-cased words) names ``name`` as whole words."""
    words = " ".join(_WORD.findall(name))
    return len(words) >= 3 and re.search(r"\b" + re.escape(words) + r"\b", text) is not None


def order(
    facts: Sequence[Fact], groups: Mapping[tuple[str, str], float], frame: Frame, now: float
) -> tuple[list[Fact], float]:
    """The facts of the bearing ``groups``, at most `MAX_FACTS`: first those that held at the
    time the question is about (the most bearing group first), then the others of each group
    (the latest first); and that time (epoch seconds; for a span, its end or now)."""
    by_group: dict[tuple[str, str], list[Fact]] = defaultdict(list)
    for f in facts:
        if (f.subject_id, f.predicate) in groups:
            by_group[(f.subject_id, f.predicate)].append(f)
    at = _moment(facts, by_group, frame, now)
    for group in by_group.values():
        for f in group:
            f.current = holds(f.since, f.until, now)
            if frame.kind == "during" and frame.start is not None and frame.end is not None:
                lo, hi = f.since or float("-inf"), f.until or float("inf")
                overlap = min(hi, frame.end) - max(lo, frame.start)
                f.holds = overlap > 0
                f.key = (0.0 if f.holds else 1.0, -min(overlap, 1e12), -(f.since or 0.0))
            else:
                f.holds = holds(f.since, f.until, at)
                # held then first (the latest started first); then those that ended nearest
                distance = min(abs(at - (f.until or at)), abs(at - (f.since or at)))
                f.key = (0.0 if f.holds else 1.0, -(f.since or 0.0) if f.holds else distance)
        group.sort(key=lambda f: (f.key, f.id))
    ranked = sorted(by_group, key=lambda k: (-groups[k], k))
    first = [g[0] for k in ranked for g in [by_group[k]] if g[0].holds]
    rest = [f for k in ranked for f in by_group[k] if f not in first]
    return (first + rest)[:MAX_FACTS], at


def _moment(
    facts: Sequence[Fact],
    by_group: Mapping[tuple[str, str], list[Fact]],
    frame: Frame,
    now: float,
) -> float:
    """The moment the question is about (for ``during``, the span's end, at most ``now``)."""
    if frame.kind == "during" and frame.end is not None:
        return min(frame.end, now)
    if frame.kind == "first":
        starts = [f.since for g in by_group.values() for f in g if f.since is not None]
        return min(starts) if starts else now
    if frame.kind in ("before", "after"):
        anchored = _anchor(facts, frame)
        if anchored is not None:
            return anchored
        if frame.kind == "after":
            return now
        # The change before the current value of what the question asks about (or of what
        # the anchor's words cue: "before I moved" is before the latest move).
        words = _WORD.findall(frame.anchor)
        cued = [k for k in by_group if words and _cued(k[1], words)]
        groups = [by_group[k] for k in cued] or list(by_group.values())
        starts = [
            f.since
            for g in groups
            for f in g
            if f.since is not None and holds(f.since, f.until, now)
        ]
        if starts:
            return max(starts) - 1.0
        ended = [f.until for g in groups for f in g if f.until is not None and f.until <= now]
        if ended:
            return max(ended) - 1.0
    return now


def _anchor(facts: Sequence[Fact], frame: Frame) -> float | None:
    """The moment of the event the anchor names: the start of a fact whose object it names
    (its end with "left", "quit" ...), less or plus a second."""
    if not frame.anchor:
        return None
    text = " ".join(_WORD.findall(frame.anchor))
    ending = _ENDING.search(text) is not None
    found = [f for f in facts if _names(f.object.lower(), text)]
    for f in sorted(found, key=lambda f: -(f.since or 0.0)):
        moment = f.until if ending else f.since
        if moment is not None:
            return moment - 1.0 if frame.kind == "before" else moment + 1.0
    return None


def sentence(f: Fact) -> str:
    """The fact in words: "user lives in Berlin", "user's sister: Anna"."""
    words = f.predicate.replace("_", " ").strip()
    first = words.split()[0] if words else ""
    if (first.endswith("s") and not first.endswith("ss")) or first in ("is", "has"):
        return f"{f.subject} {words} {f.object}"
    return f"{f.subject}'s {words}: {f.object}"
