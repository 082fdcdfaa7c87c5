# ruff: noqa: SIM905 - word lists read best as one string
"""Assemble a `Context`: facts first, then evidence, cut where relevance ends.

    1. the time the question is about (`frame`) and the facts that bear on it (`facts`)
    2. fused retrieval (`chrysalis.search.fusion`) of beads and session summaries, the
       question's words widened with those its cued predicates add (`facts.expand`)
    3. left out: ids in ``exclude``, the turn being answered (a bead whose text is the
       question), the session's latest ``recent`` turns (already in the agent's prompt),
       beads below the relevance floor, beads stating a superseded fact when the current one
       is shown; near-duplicates collapse into the best of them
    4. fitted to ``token_budget`` (facts, then items by score; a long bead is cut to the
       sentences that match the question); at most `MAX_ITEMS` passages: a bead within
       `JOIN_GAP` turns of one already shown, in its session, joins that one's passage
       (a question and its answer, a story told over several turns) and is read with it,
       each bead cited; at most `MAX_BEADS` beads in all; then shown in the order the
       question needs: for a question about what holds (a fact bears on it, or it names a
       time), the beads at or before that time newest first, then later ones; else by score.

Tokens are estimated offline (`chrysalis.search.count_tokens`: ~4 characters or 3/4 of a
word per token, the larger), never counted by a model: an estimate within ~20% for English.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from chrysalis.context import facts as facts_mod
from chrysalis.context import timeline
from chrysalis.context.frame import Frame, frame
from chrysalis.core.checks import check_id
from chrysalis.core.errors import EmbedderUnavailable, InvalidInput
from chrysalis.core.models import Bead, Context, ContextFact, ContextItem, RetrievedItem
from chrysalis.core.validity import epoch
from chrysalis.extract.summary import TAG as SUMMARY_TAG
from chrysalis.read.reader import Reader
from chrysalis.search import Retriever, count_tokens
from chrysalis.search.keyword import STOP_WORDS

DEFAULT_BUDGET = 800
MAX_BUDGET = 100_000
MAX_EXCLUDE = 1000
RECENT = 6  # the session's latest turns an agent has in its prompt
POOL = 30  # beads retrieval ranks for a context
# The relevance floor: an item stays when it scores at least this share of the best item and
# matches the question itself (a close vector, any of its words) or stands beside a hit (a
# context or graph signal of `LEAN_MIN`); the best item must be evidence by itself
# (`_direct`), or the context is empty. Picked on a quarter of LongMemEval dev (every 4th
# question) from a handful of round values, checked on LoCoMo dev (docs/benchmarks.md).
RELATIVE_FLOOR = 0.2
EMB_MIN = 0.35  # cosine a vector match needs to count as evidence by itself
COVERAGE_MIN = 0.34  # share of the question's content words a keyword match needs for that
KEYWORD_LEANS = True  # whether any word of the question lets an item above the floor stay
LEAN_MIN = 0.15  # a context/graph signal this strong counts (it leans on a strong hit)
NEAR_DUPLICATE = 0.9  # word-set overlap (Jaccard) past which two beads are one
LATEST = 253_339_228_800.0  # 9998-01-01: a year named beside it must still be a date
EXCERPT_TOKENS = 40  # a bead longer than this shows the sentences matching the question
# Passages a context shows at most: past a handful, more items add tokens faster than
# evidence (picked on every 4th LongMemEval question and two LoCoMo conversations, from
# round values; docs/benchmarks.md).
MAX_ITEMS = 8
MAX_BEADS = 12  # beads and summaries shown at most, those joined into passages included
JOIN_GAP = 2  # turns apart in one session that two shown beads may be and read as one passage

_WORD = re.compile(r"\w+", re.UNICODE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True, slots=True)
class Source:
    """One memory a context reads: its name (None for the memory asked), its read side and
    its retriever."""

    name: str | None
    reader: Reader
    retriever: Retriever


@dataclass(slots=True)
class _Item:
    item: RetrievedItem
    kind: str
    ts: float | None
    session_id: str | None
    memory: str | None
    text: str
    direct: bool = False  # evidence by itself (`_direct`)
    pinned: bool = False  # the user's latest own statement of a value asked (`timeline`)
    aside: bool = False  # names a value of the type asked, not as the user's (`timeline`)
    stale: str | None = None
    # The beads shown with it as one passage, with their offsets from it in the session.
    joined: list[tuple[int, _Item]] = field(default_factory=list)


def build(
    sources: Sequence[Source],
    query: str,
    *,
    token_budget: int = DEFAULT_BUDGET,
    session_id: str | None = None,
    exclude: Iterable[str] = (),
    now: float | datetime | None = None,
    recent: int = RECENT,
) -> Context:
    """The context for ``query`` from ``sources`` (see the module's docstring). Raises
    `InvalidInput` for a bad argument; reads only."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("query must be non-empty text")
    if len(query) > 100_000:
        raise InvalidInput("query is longer than 100000 characters")
    if isinstance(token_budget, bool) or not isinstance(token_budget, int):
        raise InvalidInput("token_budget must be an int")
    if not 1 <= token_budget <= MAX_BUDGET:
        raise InvalidInput(f"token_budget must be from 1 to {MAX_BUDGET}")
    if isinstance(recent, bool) or not isinstance(recent, int) or not 0 <= recent <= 1000:
        raise InvalidInput("recent must be an int from 0 to 1000")
    if session_id is not None:
        check_id(session_id, "session_id")
    if isinstance(exclude, str):
        raise InvalidInput("exclude must be a list of ids, not one string")
    excluded = set()
    for n, item_id in enumerate(exclude):
        if n >= MAX_EXCLUDE:
            raise InvalidInput(f"exclude lists more than {MAX_EXCLUDE} ids")
        if not isinstance(item_id, str) or not item_id:
            raise InvalidInput("exclude must list ids (non-empty strings)")
        excluded.add(item_id)
    at_now = time.time() if now is None else epoch(now, "now")
    if not 0 <= at_now < LATEST:
        raise InvalidInput("now must be a time from 1970 to 9997")
    fr = frame(query, at_now)
    notes: list[str] = []
    echo = _normal(query)
    candidates: list[_Item] = []
    readers = {source.name: source.reader for source in sources}
    all_facts: list[facts_mod.Fact] = []
    groups: dict[tuple[str, str], float] = {}
    about_user: list[tuple[Source, set[str]]] = []  # sources whose user the question asks of
    for source in sources:
        skip = set(excluded)
        if session_id is not None and recent:
            skip.update(b.id for b in source.reader.last_beads(recent, session_id))
        beads: dict[str, Bead] = {}  # the beads retrieval read: not read again
        found = _retrieve(source, query, at_now, notes, beads)
        direct = {i.id for i in found if _direct(i, query)}
        hits = {i.id: i.score for i in found if i.id in direct}
        subjects = facts_mod.subjects(source.reader, query)
        read = facts_mod.read_facts(source.reader, subjects)
        named = {sid for sid, name in subjects if name != facts_mod.USER}
        if not named and any(name == facts_mod.USER for _, name in subjects):
            about_user.append((source, skip))
        bearing = facts_mod.bearing(query, read, hits, named)
        for f in read:
            f.subject_id = _scoped(source.name, f.subject_id)
        groups.update({(_scoped(source.name, s), p): v for (s, p), v in bearing.items()})
        all_facts += read
        for item in found:
            if item.id in skip or item.id not in beads:
                continue
            bead = beads[item.id]
            if _normal(bead.content) == echo:
                continue  # the turn being answered, written before the question was asked
            kind = "summary" if SUMMARY_TAG in bead.tags else "bead"
            candidates.append(
                _Item(
                    item, kind, bead.ts, bead.session_id, source.name, item.text,
                    direct=item.id in direct,
                )
            )  # fmt: skip
    shown, at = facts_mod.order(all_facts, groups, fr, at_now)
    attributes = timeline.asked(query)
    for source, skip in about_user if attributes else ():
        candidates += _timeline(source, attributes, min(at, at_now), candidates, skip, echo)
    items = _relevant(query, candidates)
    items = _collapse(items)
    items = _supersede(items, all_facts, shown, fr)
    facts_out, items_out = _fit(shown, items, token_budget, query, readers)
    text, facts_out, items_out = _compose(facts_out, items_out, fr, at, query)
    return Context(
        query=query,
        text=text,
        facts=[_fact(f) for f in facts_out],
        items=[_out(i) for i in items_out],
        tokens=count_tokens(text) if text else 0,
        token_budget=token_budget,
        now=at_now,
        as_of=at,
        frame=fr.kind,
        notes=notes,
    )


def _retrieve(
    source: Source, query: str, now: float, notes: list[str], beads: dict[str, Bead]
) -> list[RetrievedItem]:
    """The source's best beads and session summaries, best first; ``beads`` receives the
    beads read to rank them (`Retriever.retrieve`'s ``described``)."""
    r = source.retriever
    wide = facts_mod.expand(query)
    vector = None
    if wide != query and r.embedder is not None:
        try:  # the words added widen the keyword search; the vector stays the question's
            vector = r.embed_query(r.embedder, query)
        except EmbedderUnavailable:
            wide = query
    # No kinds filter: with one, the vector search reads ten times as deep (FAISS cannot
    # filter) and fusion scores every hit; at 100k beads that was most of a context's time.
    # The graph's items it ranks beside the beads are dropped here.
    found = r.retrieve(wide, k=POOL, now=now, query_vector=vector, summaries=True, described=beads)
    prefix = f"{source.name}: " if source.name else ""
    notes += [prefix + n for n in found.notes]
    return [i for i in found.items if i.kind == "bead"]


def _timeline(
    source: Source,
    attributes: list[str],
    at: float,
    candidates: list[_Item],
    skip: set[str],
    echo: str,
) -> list[_Item]:
    """Mark the source's candidates by the typed-mention timeline (`timeline`): the user's
    latest own statements of the ``attributes`` by ``at`` pinned, beads naming such a value
    only otherwise set aside; return the pinned statements retrieval did not find."""
    mine = [c for c in candidates if c.memory == source.name]
    pick = timeline.read(source.reader, attributes, at, [c.item.id for c in mine])
    for c in mine:
        c.aside = c.item.id in pick.aside
        if c.item.id in pick.latest:
            c.pinned = c.direct = True
    have = {c.item.id for c in mine}
    missing = [b for b in pick.latest if b not in have and b not in skip]
    if not missing:
        return []
    score = max((c.item.score for c in mine), default=1.0)
    out = []
    for bead_id, (bead, _) in source.reader.beads_with_origin(missing).items():
        if _normal(bead.content) == echo:
            continue
        found = RetrievedItem(
            kind="bead", id=bead_id, text=bead.content, score=score,
            signals={"timeline": 1.0}, provenance={}, tokens=count_tokens(bead.content),
        )  # fmt: skip
        out.append(
            _Item(
                found, "bead", bead.ts, bead.session_id, source.name, bead.content,
                direct=True, pinned=True,
            )
        )  # fmt: skip
    return out


def _scoped(memory: str | None, item_id: str) -> str:
    return item_id if memory is None else f"{memory}\0{item_id}"


def _normal(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def _content_words(text: str) -> set[str]:
    return {w[:5] for w in _WORD.findall(text.lower()) if len(w) >= 3 and w not in STOP_WORDS}


def _direct(item: RetrievedItem, query: str) -> bool:
    """Whether an item is evidence by itself: a close vector, the question's words (at
    least `COVERAGE_MIN` of its content words), or a word that says what the question's
    words cue (`facts.expand`: "relocated" for "where do I live")."""
    s = item.signals
    if s.get("emb", 0.0) >= EMB_MIN:
        return True
    if s.get("keyword", 0.0) <= 0:
        return False
    wanted, extra = _wanted(query)
    words = _content_words(item.text)
    if wanted and len(wanted & words) / len(wanted) >= COVERAGE_MIN:
        return True
    return bool(extra & words)


# Words that say when, not what: a bead need not repeat them to answer.
_TIME_WORDS = frozenset(
    """now currently current these those days day week weeks month months year years ago back
    during since before after last past early late mid moment present lately today yesterday
    spring summer autumn fall winter january february march april may june july august
    september october november december still anymore used""".split()
)


@functools.lru_cache(maxsize=64)
def _wanted(query: str) -> tuple[frozenset[str], frozenset[str]]:
    """The question's content words (5-letter stems, no stop or time words, no numbers) and
    the words its cued predicates add (`facts.expand`)."""
    plain = " ".join(w for w in _WORD.findall(query.lower()) if w not in _TIME_WORDS)
    wanted = {w for w in _content_words(plain) if not w.isdigit()}
    added = facts_mod.expand(query)[len(query) :]
    return frozenset(wanted), frozenset(_content_words(added) - wanted)


def _relevant(query: str, items: list[_Item]) -> list[_Item]:
    """The items above the relevance floor, best first (see `RELATIVE_FLOOR`), and the
    timeline's pinned statements (`timeline`) whatever their score, before them."""

    def leans(i: _Item) -> bool:
        s = i.item.signals
        if i.direct or (KEYWORD_LEANS and s.get("keyword", 0.0) > 0):
            return True
        return any(s.get(k, 0.0) >= LEAN_MIN for k in ("context", "graph"))

    ranked = sorted(items, key=lambda i: -i.item.score)
    best = next((i for i in ranked if i.direct), None)
    if best is None:
        return []
    floor = RELATIVE_FLOOR * best.item.score
    kept = [i for i in ranked if i.pinned or (i.item.score >= floor and leans(i))]
    return sorted(kept, key=lambda i: not i.pinned)  # the timeline's picks are shown first


def _collapse(items: list[_Item]) -> list[_Item]:
    """Near-duplicates collapse into the best one (its ``duplicates`` lists the others): beads
    sharing `NEAR_DUPLICATE` of their words, where no word that differs is a name or a number
    ("I've been seeing Kwame" and "I've been seeing Mateus" are two facts, not one)."""
    kept: list[tuple[_Item, set[str], list[str]]] = []
    for i in items:
        words = set(_WORD.findall(i.text))
        size = len(words)
        for _, other_words, dups in kept:
            # The overlap is at most the smaller set and the union at least the larger: sets
            # whose sizes differ by more than that cannot be near-duplicates (float division
            # is monotonic, so this skips no pair the test below would join).
            other = len(other_words)
            if size != other and min(size, other) / max(size, other) < NEAR_DUPLICATE:
                continue
            # One set operation per pair (a context compares ~400 pairs): the overlap alone
            # gives the Jaccard index; which words differ is looked at only past it.
            both = len(words & other_words)
            union = len(words) + len(other_words) - both
            if (
                union
                and both / union >= NEAR_DUPLICATE
                and not any(w[0].isupper() or w[0].isdigit() for w in words ^ other_words)
            ):
                dups.append(i.item.id)
                break
        else:
            kept.append((i, words, []))
    for i, _, dups in kept:
        i.item.provenance["duplicates"] = dups
    return [i for i, _, _ in kept]


def _supersede(
    items: list[_Item],
    all_facts: Sequence[facts_mod.Fact],
    shown: Sequence[facts_mod.Fact],
    fr: Frame,
) -> list[_Item]:
    """Mark a bead that states a fact no longer holding (and no current one) as stale,
    naming what holds now; about now, leave it out when the current fact is shown."""
    current: dict[tuple[str, str], facts_mod.Fact] = {}
    for f in all_facts:
        key = (f.subject_id, f.predicate)
        if f.current and (key not in current or (f.since or 0) > (current[key].since or 0)):
            current[key] = f
    stale: dict[str, facts_mod.Fact] = {}
    fresh: set[str] = set()
    for f in all_facts:
        key = (f.subject_id, f.predicate)
        for bead_id in f.evidence:
            if f.current:
                fresh.add(bead_id)
            elif key in current and current[key].object != f.object:
                stale[bead_id] = current[key]
    shown_ids = {f.id for f in shown}
    out = []
    for i in items:
        now_fact = stale.get(i.item.id)
        if now_fact is None or i.item.id in fresh:
            out.append(i)
            continue
        if fr.kind == "now" and now_fact.id in shown_ids:
            continue  # the current fact is in the context: the old statement only misleads
        since = f" since {_day(now_fact.since)}" if now_fact.since else ""
        i.stale = f"superseded: {facts_mod.sentence(now_fact)}{since}"
        out.append(i)
    return out


def _fit(
    shown: Sequence[facts_mod.Fact],
    items: list[_Item],
    budget: int,
    query: str,
    readers: dict[str | None, Reader],
) -> tuple[list[facts_mod.Fact], list[_Item]]:
    """Facts, then items best first, while their lines fit ``budget``; a long item shows an
    excerpt; at most `MAX_ITEMS` passages, a bead within `JOIN_GAP` turns of one shown
    joining its passage. A smaller item further down may still fit after a large one did
    not."""
    used = 0
    facts_out = []
    for f in shown:
        cost = count_tokens(_fact_line(f)) + 1
        if used + cost + _HEADER <= budget:
            facts_out.append(f)
            used += cost
    used += _HEADER if facts_out else 0
    wanted = set(_wanted(query)[0])
    near = _Neighbours(readers)
    items_out: list[_Item] = []
    count = 0
    for i in items:
        if count >= MAX_BEADS:
            break
        i.text = _excerpt(i.text, wanted)
        joins = _host(i, items_out, near)
        if joins is not None:  # shown inside the passage of a bead near it
            host, offset = joins
            before = count_tokens(_item_line(host))
            host.joined.append((offset, i))
            host.joined.sort(key=lambda e: e[0])
            cost = count_tokens(_item_line(host)) - before
            if used + cost <= budget:
                used += cost
                count += 1
            else:
                host.joined.remove((offset, i))
            continue
        if len(items_out) >= MAX_ITEMS:
            continue  # a bead further down may still join a passage shown
        cost = count_tokens(_item_line(i)) + 1
        if used + cost + (_HEADER if not items_out else 0) <= budget:
            used += cost + (_HEADER if not items_out else 0)
            items_out.append(i)
            count += 1
    return facts_out, items_out


class _Neighbours:
    """The beads within `JOIN_GAP` turns of a bead in its session, with their offsets from
    it, read when first asked (only the beads a context considers showing are)."""

    def __init__(self, readers: dict[str | None, Reader]) -> None:
        self.readers = readers
        self.known: dict[tuple[str | None, str], dict[str, int]] = {}

    def of(self, i: _Item) -> dict[str, int]:
        key = (i.memory, i.item.id)
        if key not in self.known:
            around = self.readers[i.memory].adjacent_beads(i.item.id, JOIN_GAP)
            self.known[key] = dict(around)
        return self.known[key]


def _host(i: _Item, shown: Sequence[_Item], near: _Neighbours) -> tuple[_Item, int] | None:
    """The shown passage ``i`` belongs in and its offset from that passage's lead bead:
    one within `JOIN_GAP` turns of it (or of a bead joined to it) in its session. A bead
    marked stale stands alone, beside its note."""
    if i.kind != "bead" or i.stale or not i.session_id:
        return None
    hosts = [
        h
        for h in shown
        if h.kind == "bead" and not h.stale and (h.memory, h.session_id) == (i.memory, i.session_id)
    ]
    around = near.of(i) if hosts else {}
    for host in hosts:
        for base, member in [(0, host), *host.joined]:
            offset = around.get(member.item.id)
            if offset is not None:
                return host, base - offset
    return None


_HEADER = 8  # tokens of a section's heading


def _excerpt(text: str, wanted: set[str]) -> str:
    """``text``, or when longer than `EXCERPT_TOKENS`, its sentences that share most words
    with the question (and their neighbours while they fit), elisions marked "…"."""
    if count_tokens(text) <= EXCERPT_TOKENS:
        return text
    parts = [p for p in _SENTENCE.split(text) if p.strip()]
    if len(parts) <= 1:
        words = text.split()
        return " ".join(words[: int(EXCERPT_TOKENS * 0.7)]) + " …"
    scores = [len(wanted & _content_words(p)) for p in parts]
    best = max(range(len(parts)), key=lambda n: (scores[n], -n))
    lo = hi = best
    while True:
        grown = False
        for cand in (hi + 1, lo - 1):
            if 0 <= cand < len(parts):
                a, b = min(lo, cand), max(hi, cand)
                if count_tokens(" ".join(parts[a : b + 1])) <= EXCERPT_TOKENS:
                    lo, hi, grown = a, b, True
        if not grown:
            break
    body = " ".join(p.strip() for p in parts[lo : hi + 1])
    if count_tokens(body) > EXCERPT_TOKENS:
        body = " ".join(body.split()[: int(EXCERPT_TOKENS * 0.7)])
    return ("… " if lo > 0 else "") + body + (" …" if hi < len(parts) - 1 else "")


@functools.lru_cache(maxsize=4096)  # a context formats each item's day several times
def _day(ts: float | None) -> str:
    return "?" if ts is None else datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d")


def _fact_line(f: facts_mod.Fact) -> str:
    if f.since is not None and f.until is not None:
        span = f"{_day(f.since)} to {_day(f.until)}"
    elif f.until is not None:
        span = f"until {_day(f.until)}"
    else:
        span = f"since {_day(f.since)}" if f.since is not None else "time unknown"
    state = "holds now" if f.current else "no longer holds"
    cite = f"fact {f.id}" + (f"; evidence {', '.join(f.evidence[:3])}" if f.evidence else "")
    return f"- {facts_mod.sentence(f)} ({span}; {state}) [{cite}]"


def _item_line(i: _Item) -> str:
    """One item's line: ``- [id, day] text``; a passage cites each of its beads before its
    words, in session order, "…" marking turns left out between them."""
    where = f" in {i.memory}" if i.memory else ""
    stale = f" ({i.stale})" if i.stale else ""
    kind = "summary " if i.kind == "summary" else ""
    if not i.joined:
        return f"- [{kind}{i.item.id}{where}, {_day(i.ts)}] {i.text}{stale}"
    parts = sorted([(0, i), *i.joined], key=lambda e: e[0])
    words = []
    for n, (offset, member) in enumerate(parts):
        if n and offset - parts[n - 1][0] > 1:
            words.append("…")
        words.append(f"[{member.item.id}] {member.text}")
    return f"- [{_day(i.ts)}{where}] " + " ".join(words)


def _compose(
    facts_out: list[facts_mod.Fact], items: list[_Item], fr: Frame, at: float, query: str
) -> tuple[str, list[facts_mod.Fact], list[_Item]]:
    """The text, and the facts and items in the order it shows them.

    About what holds (a fact bears on the question, or it marks its time): one list, latest
    first, of the facts that held at the moment asked about and the beads said by then that
    are evidence by themselves, so a statement newer than every fact (one no extractor read)
    comes before them; then the facts that did not hold then, the beads said later (oldest
    first) and those that only stand beside a hit. Otherwise: the items best first."""
    if not facts_out and not items:
        return "", [], []
    if not (facts_out or fr.marked):
        lines = ["From memory (most relevant first):", *(_item_line(i) for i in items)]
        return "\n".join(lines), [], items
    cited = {b for f in facts_out for b in f.evidence}
    items = [i for i in items if i.item.id not in cited]  # the fact's line cites it
    timed: list[tuple[float, int, str, facts_mod.Fact | _Item]] = []
    later: list[_Item] = []
    beside: list[_Item] = []
    for f in facts_out:
        if f.holds:
            timed.append((f.since if f.since is not None else float("-inf"), 0, f.id, f))
    for i in items:
        if i.ts is not None and i.ts > at:
            later.append(i)
        elif i.direct and not i.aside:
            timed.append((i.ts if i.ts is not None else float("-inf"), 1, i.item.id, i))
        else:
            beside.append(i)
    timed.sort(key=lambda e: (-e[0], e[1], e[2]))
    later.sort(key=lambda i: i.ts or 0.0)
    beside.sort(key=lambda i: -(i.ts or 0.0))
    others = [f for f in facts_out if not f.holds]
    when = f"as of {_day(at)}"
    if fr.kind == "during" and fr.start is not None and fr.end is not None:
        when = f"during {_day(fr.start)} to {_day(fr.end)}"
    lines = [f"What held {when}, latest first:"] if timed else []
    for *_, entry in timed:
        lines.append(_fact_line(entry) if isinstance(entry, facts_mod.Fact) else _item_line(entry))
    if later or beside:
        lines.append("Also from memory:")
        lines += [_item_line(i) for i in [*later, *beside]]
    if others:
        lines.append("Facts that did not hold then:")
        lines += [_fact_line(f) for f in others]
    shown_facts = [e for *_, e in timed if isinstance(e, facts_mod.Fact)] + others
    shown_items = [e for *_, e in timed if isinstance(e, _Item)] + later + beside
    return "\n".join(lines), shown_facts, shown_items


def _fact(f: facts_mod.Fact) -> ContextFact:
    memory, _, _ = f.subject_id.rpartition("\0")
    return ContextFact(
        id=f.id, subject=f.subject, predicate=f.predicate, object=f.object, since=f.since,
        until=f.until, holds=f.holds, current=f.current, evidence=f.evidence,
        memory=memory or None,
    )  # fmt: skip


def _out(i: _Item) -> ContextItem:
    dups: Any = i.item.provenance.get("duplicates", [])
    text = _item_line(i).split("] ", 1)[1] if i.joined else i.text
    return ContextItem(
        kind=i.kind,
        id=i.item.id, text=text, score=round(i.item.score, 6), ts=i.ts,
        session_id=i.session_id, tokens=count_tokens(_item_line(i)), stale=i.stale,
        duplicates=list(dups), memory=i.memory,
        joined=[m.item.id for _, m in sorted(i.joined, key=lambda e: e[0])],
    )  # fmt: skip
