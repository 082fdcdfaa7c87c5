"""Beads chosen by what they are, not by id: what a forget by selector forgets.

A `Selector` names any of: a session, an ingested path (a file, or a directory and all
under it), a tag, the words of a query, a time range (``after`` < ts < ``before``) and a
role; a bead matches when every given field holds. An empty selector is refused
(`InvalidInput`): nothing here may ever mean "every bead".

A query selects predictably, never by similarity: the beads whose text, as the keyword index
holds it (content and source), has *every* word of the query, stop words included, matched
case-insensitively and stemmed ("tea" finds "teas"). The index is brought up to every write
made before the call first, so what was just remembered is found.

Selection walks the beads in time order (the session's, if one is given, and only the time
range asked) and answers the first `MAX_SELECT` ids with the count of all matches, so a
caller always learns how many more there are, and a digest of every matched id.

A forget confirms what a person saw, never more (DESIGN §16, "a concurrent client"): the dry
run answers ``expect_digest``, a hash over the sorted ids of every bead that matched, and a
confirm naming it forgets only if the match is still exactly that set (else
`SelectionChanged`, 409, and nothing is forgotten). A count (``expect``) is still checked
when given, but alone it is refused: another client can forget one bead and write another
that matches, and the count is the same while the beads are not.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from chrysalis.core.checks import validate
from chrysalis.core.errors import InvalidInput, NotFound, SelectionChanged, Unavailable
from chrysalis.core.models import Id, Tag, Timestamp
from chrysalis.core.vocab import Role

if TYPE_CHECKING:
    from chrysalis.read.reader import Reader
    from chrysalis.search import Indexer
    from chrysalis.write.writer import Writer

__all__ = [
    "MAX_SELECT",
    "PREVIEW_BEADS",
    "Selection",
    "Selector",
    "forget_where",
    "preview",
    "select_beads",
    "selection_digest",
]

MAX_SELECT = 10_000  # ids one call selects (and one forget forgets); the count goes on
PREVIEW_BEADS = 50  # beads a dry run shows
PREVIEW_CHARS = 80
KEYWORD_WAIT = 10.0  # seconds a query waits for the keyword index to reflect earlier writes
FIELDS = ("session_id", "path", "tag", "query", "before", "after", "role")


class Selector(BaseModel):
    """Which beads: every field given must hold (AND). At least one is required."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    session_id: Id | None = Field(None, description="beads of this session")
    path: Annotated[str, Field(min_length=1, max_length=4096)] | None = Field(
        None, description="beads ingested from this file, or from any file under this directory"
    )
    tag: Tag | None = Field(None, description="beads carrying this tag")
    query: Annotated[str, Field(min_length=1, max_length=1000)] | None = Field(
        None,
        description="beads whose text holds every word of this (case-insensitive, stemmed; "
        "no similarity search)",
    )
    before: Timestamp | None = Field(None, description="beads stamped before this time")
    after: Timestamp | None = Field(None, description="beads stamped after this time")
    role: Role | None = Field(None, description="beads of this role")

    def given(self) -> dict[str, Any]:
        """The fields set, by name."""
        return {k: v for k in FIELDS if (v := getattr(self, k)) is not None}


def selection_digest(ids: Iterable[str]) -> str:
    """The digest of a set of bead ids, whatever their order: ``sha256:`` and the hex SHA-256
    of the sorted distinct ids, one per line. What a dry run answers as ``expect_digest``."""
    h = hashlib.sha256()
    for bead_id in sorted(set(ids)):
        h.update(bead_id.encode() + b"\n")
    return "sha256:" + h.hexdigest()


@dataclass(frozen=True)
class Selection:
    """The first ids matched (oldest first, at most the limit), how many matched in all, and
    (when every match was walked) the set of all of them."""

    ids: list[str] = field(default_factory=list)
    matched: int = 0
    every: frozenset[str] = field(default_factory=frozenset, repr=False, compare=False)

    @property
    def more(self) -> bool:
        """More beads match than ``ids`` holds: another call is needed for the rest."""
        return self.matched > len(self.ids)

    @property
    def digest(self) -> str:
        """`selection_digest` of every bead matched (what a confirm names)."""
        return selection_digest(self.every)

    @property
    def rest_digest(self) -> str:
        """The digest of the beads matched but not in ``ids``: what the next confirm names
        once these are forgotten."""
        return selection_digest(self.every.difference(self.ids))


def as_selector(value: Selector | Mapping[str, Any]) -> Selector:
    """``value`` as a checked `Selector`; `InvalidInput` in plain words when it is empty or
    a field is bad."""
    selector = value if isinstance(value, Selector) else validate(Selector, dict(value), "selector")
    if not selector.given():
        raise InvalidInput(
            "an empty selector would forget every bead: give at least one of " + ", ".join(FIELDS)
        )
    if selector.query is not None:
        from chrysalis.search.keyword import KeywordIndex

        if not KeywordIndex.all_words(selector.query):
            raise InvalidInput(f"query {selector.query[:80]!r} has no words to match")
    if (
        selector.before is not None
        and selector.after is not None
        and selector.after >= selector.before
    ):
        raise InvalidInput("after must be earlier than before: no bead can match both")
    return selector


def path_forms(path: str) -> tuple[str, ...]:
    """The forms under which ingest may have recorded ``path``: absolute with symlinks resolved
    (`ingest.ingest_path` names each file so), and absolute as given."""
    given = os.path.normpath(os.path.abspath(os.path.expanduser(path)))
    return tuple(dict.fromkeys([str(Path(given).resolve()), given]))


def _under(candidate: Any, roots: tuple[str, ...]) -> bool:
    if not isinstance(candidate, str):
        return False
    return any(candidate == r or candidate.startswith(r.rstrip("/") + "/") for r in roots)


def _matcher(
    selector: Selector, query_ids: set[str] | None
) -> Callable[[str, dict[str, Any]], bool]:
    roots = None if selector.path is None else path_forms(selector.path)
    tag, role = selector.tag, selector.role
    after, before = selector.after, selector.before

    def keep(bead_id: str, data: dict[str, Any]) -> bool:
        if query_ids is not None and bead_id not in query_ids:
            return False
        ts = data["ts"]
        if (after is not None and ts <= after) or (before is not None and ts >= before):
            return False
        if role is not None and data.get("role", "user") != role:
            return False
        if tag is not None and tag not in (data.get("tags") or ()):
            return False
        if roots is not None:
            spans = data.get("span_refs") or ()
            if not _under(data.get("source"), roots) and not any(
                _under(s.get("path"), roots) for s in spans
            ):
                return False
        return True

    return keep


def query_ids(indexer: Indexer, query: str) -> set[str]:
    """The ids of the beads whose indexed text holds every word of ``query``, once the keyword
    index reflects every write made before the call (`Unavailable` if it cannot in time)."""
    if not indexer.wait_keyword(KEYWORD_WAIT):
        raise Unavailable(
            "the keyword index is still catching up with recent writes, so a query cannot "
            "select every bead yet; try again in a moment"
        )
    return {key.partition(":")[2] for key in indexer.keyword.match_all(query)}


def select_beads(
    reader: Reader,
    selector: Selector | Mapping[str, Any],
    indexer: Indexer | None = None,
    *,
    limit: int = MAX_SELECT,
    newest: bool = False,
    count_all: bool = True,
) -> Selection:
    """The live beads ``selector`` matches: the first ``limit`` ids, oldest first (``newest``:
    the last ``limit``, newest first), and the count of all (``count_all=False``: of those
    found, the walk stopping at ``limit``). A query needs the ``indexer`` (its keyword
    index)."""
    selector = as_selector(selector)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 0 <= limit <= MAX_SELECT:
        raise InvalidInput(f"limit must be an int from 0 to {MAX_SELECT}")
    words = None
    if selector.query is not None:
        if indexer is None:
            raise InvalidInput("a query needs the keyword index: this memory has none open")
        words = query_ids(indexer, selector.query)
        if not words:
            return Selection()
    keep, every = _matcher(selector, words), set()

    def kept(bead_id: str, data: dict[str, Any]) -> bool:
        if keep(bead_id, data):
            every.add(bead_id)
            return True
        return False

    ids, matched = reader.scan_beads(
        kept,
        limit=limit,
        session_id=selector.session_id,
        after=selector.after,
        before=selector.before,
        newest=newest,
        count_all=count_all,
    )
    return Selection(ids, matched, frozenset(every))


def forget_where(
    reader: Reader,
    writer: Writer,
    selector: Selector | Mapping[str, Any],
    indexer: Indexer | None = None,
    *,
    expect: int | None = None,
    expect_digest: str | None = None,
    limit: int = MAX_SELECT,
) -> tuple[list[str], Selection]:
    """Forget the beads ``selector`` matches, at most ``limit`` (the oldest) in one commit;
    answers the ids forgotten now and the selection they came from (``more``: some are left
    for another call, confirmed with its ``rest_digest``).

    With ``expect_digest`` (a dry run's `Selection.digest`), the beads that match now must
    be exactly those it was computed over, and with ``expect`` too they must count that
    many; else `SelectionChanged` is raised and nothing is forgotten, so a bead that arrived
    since the preview is never forgotten unseen. ``expect`` without ``expect_digest`` raises
    `InvalidInput`: a count cannot tell which beads were seen. With neither, whatever
    matches is forgotten (a caller that previewed nothing asked for no check).
    """
    if expect is not None and (
        not isinstance(expect, int) or isinstance(expect, bool) or expect < 0
    ):
        raise InvalidInput("expect must be a non-negative int (the count a dry run showed)")
    if expect_digest is not None and not isinstance(expect_digest, str):
        raise InvalidInput("expect_digest must be the text a dry run answered")
    if expect is not None and expect_digest is None:
        raise InvalidInput(
            "expect (a count) alone cannot say which beads the preview showed: another "
            "client may have forgotten one and written another since. Pass expect_digest, "
            "the value the dry run answered, to forget exactly those beads; nothing was "
            "forgotten"
        )
    selection = select_beads(reader, selector, indexer, limit=limit)
    now = selection.matched
    if expect is not None and now != expect:
        raise SelectionChanged(
            f"the selection changed since the preview: {now} bead(s) match now, "
            f"{expect} were expected; nothing was forgotten. Preview again and confirm what "
            "it shows.",
            details={"matched": now, "expected": expect},
        )
    if expect_digest is not None and selection.digest != expect_digest:
        raise SelectionChanged(
            f"the selection changed since the preview: the {now} bead(s) that match now are "
            "not the ones the preview showed (one was forgotten or written meanwhile); "
            "nothing was forgotten. Preview again and confirm what it shows.",
            details={"matched": now, "expect_digest": expect_digest},
        )
    return writer.forget_many(selection.ids), selection


def preview(reader: Reader, ids: Sequence[str], n: int = PREVIEW_BEADS) -> list[dict[str, Any]]:
    """The first ``n`` of ``ids`` as a dry run shows them: id, ts, session, role and the first
    `PREVIEW_CHARS` characters of the content on one line (beads forgotten meanwhile are
    left out)."""
    out = []
    for bead_id in ids[:n]:
        try:
            bead = reader.get_bead(bead_id)
        except NotFound:
            continue
        text = " ".join(bead.content.split())
        if len(text) > PREVIEW_CHARS:
            text = text[: PREVIEW_CHARS - 1] + "…"
        out.append(
            {"id": bead.id, "ts": bead.ts, "session_id": bead.session_id, "role": bead.role,
             "preview": text}
        )  # fmt: skip
    return out
