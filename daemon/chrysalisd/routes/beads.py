"""Beads: append, read, forget; ingest files or text as beads; fused retrieval."""

from __future__ import annotations

import contextlib
import dataclasses
import json
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import Response

from chrysalis.client.routes import REDACTED_HEADER
from chrysalis.core.errors import NotFound
from chrysalis.core.models import Bead, RetrievalResult
from chrysalis.core.vocab import Role
from chrysalis.search import above

from ..bodies import BeadsIn, ForgetDone, ForgetIn, ForgetPreview, IngestIn, RetrieveIn
from .common import D, M, PathId, json_answer, json_list

router = APIRouter()

_REDACTED_DOC = {
    REDACTED_HEADER: {
        "description": "present when secrets were redacted: a JSON array of "
        '{"bead": index in the request, "kind", "field", "start", "end"} (offsets of the '
        "marker in the stored field); never the secret",
        "schema": {"type": "string"},
    }
}


@router.post(
    "/v1/beads",
    status_code=201,
    response_model=Bead | list[Bead],
    tags=["beads"],
    responses={201: {"headers": _REDACTED_DOC}, 400: {}, 409: {}, 413: {}, 422: {}},
)
def append_beads(d: D, body: BeadsIn) -> Response:
    """Append a bead, or a batch in one commit.

    A bead is an object, a batch an array; the answer is what was stored. The same id with
    the same fields again is a no-op; with other fields, 409. A credential in the text is
    replaced with ``[REDACTED:<kind>]`` before it is stored and named in the
    ``Chrysalis-Redacted`` header (or, with ``secrets = "refuse"``, answered with 422).
    """
    many = isinstance(body.root, list)
    items = body.root if isinstance(body.root, list) else [body.root]
    rows = [b.model_dump(exclude_none=True) for b in items]
    beads, findings = d.memory.append_beads_with_findings(rows)
    answer = json_list(beads, 201) if many else json_answer(beads[0], 201)
    redacted = [{"bead": n, **f.as_dict()} for n, found in enumerate(findings) for f in found]
    if redacted:
        answer.headers[REDACTED_HEADER] = json.dumps(redacted, separators=(",", ":"))
    return answer


@router.get("/v1/beads", response_model=list[Bead], tags=["beads"], responses={400: {}})
def last_beads(
    d: D,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    session_id: Annotated[str | None, Query(max_length=256)] = None,
    tag: Annotated[str | None, Query(max_length=256)] = None,
    role: Annotated[Role | None, Query()] = None,
    path: Annotated[str | None, Query(max_length=4096)] = None,
    query: Annotated[str | None, Query(max_length=1000)] = None,
    after: Annotated[str | None, Query(max_length=64)] = None,
    before: Annotated[str | None, Query(max_length=64)] = None,
) -> Response:
    """The newest ``limit`` beads that match every filter given, oldest first.

    Filters: a session, a tag, a role, an ingested path (a file or anything under a
    directory), the words of a query (every one, stemmed; not by similarity), a time range
    (``after``, ``before``: ISO 8601 or epoch seconds). A bad filter is refused (400)."""
    filters = {"tag": tag, "role": role, "path": path, "query": query,
               "after": _time(after), "before": _time(before)}  # fmt: skip
    if all(v is None for v in filters.values()):
        return json_list(d.memory.last_beads(limit, session_id=session_id))
    chosen = {k: v for k, v in {"session_id": session_id, **filters}.items() if v is not None}
    ids = d.memory.select_beads(chosen, limit=limit, newest=True, count_all=False).ids
    beads = []
    for bead_id in reversed(ids):
        with contextlib.suppress(NotFound):  # forgotten since it was selected
            beads.append(d.memory.get_bead(bead_id))
    return json_list(beads)


def _time(value: str | None) -> float | str | None:
    """Epoch seconds as a number; ISO 8601 as given, for the selector to read."""
    try:
        return None if value is None else float(value)
    except ValueError:
        return value


@router.get("/v1/sessions", tags=["beads"])
def sessions(d: D) -> list[dict[str, Any]]:
    """Each session with its bead count and its first and last bead's time.

    Times are epoch seconds; the most recently active session comes first. Beads without a
    session are not counted here."""
    return d.memory.session_stats()


@router.get("/v1/beads/{id}", response_model=Bead, tags=["beads"], responses={404: {}})
def get_bead(d: D, id: PathId) -> Response:
    """One bead by its id."""
    return json_answer(d.memory.get_bead(id))


@router.delete("/v1/beads/{id}", status_code=204, tags=["beads"], responses={404: {}})
def forget(d: D, id: PathId) -> Response:
    """Forget a bead: its content leaves this replica and, through sync, every other."""
    d.memory.forget(id)
    return Response(status_code=204)


@router.post(
    "/v1/forget",
    response_model=ForgetPreview | ForgetDone,
    tags=["beads"],
    responses={400: {}, 409: {}, 503: {}},
)
def forget_where(d: D, body: ForgetIn) -> dict[str, Any]:
    """Forget the beads a selector matches (a dry run by default).

    Forget beads by what they are: a session, an ingested path (a file or everything under
    a directory), a tag, a query (beads holding every word of it; never by similarity), a
    time range (``after``, ``before``), a role; every field given must hold, and an empty
    selector is refused (400). A dry run is the default: it answers how many match and the
    first 50, and ``expect_digest``, a hash of every matched id; it changes nothing. With
    ``"dry_run": false`` the oldest 10,000 matches are forgotten in one commit (``more``:
    call again for the rest, with the ``expect_digest`` answered). With ``expect_digest``,
    unless exactly the beads the dry run saw match now, 409 and nothing is forgotten.
    ``expect`` (the count shown) may go with it; alone it is refused (400): a count cannot
    tell which beads were seen."""
    from chrysalis.forget.select import preview

    selector = body.selector()
    if body.dry_run:
        selection = d.memory.select_beads(selector)
        beads = preview(d.memory.reader, selection.ids)
        return {"matched": selection.matched, "more": selection.more, "beads": beads,
                "expect_digest": selection.digest}  # fmt: skip
    forgotten, selection = d.memory.forget_where(
        selector, expect=body.expect, expect_digest=body.expect_digest
    )
    return {"forgotten": len(forgotten), "ids": forgotten, "matched": selection.matched,
            "more": selection.more, "expect_digest": selection.rest_digest}  # fmt: skip


@router.post("/v1/retrieve", response_model=RetrievalResult, tags=["retrieval"])
def retrieve(d: D, m: M, body: RetrieveIn) -> Response:
    """Recall the items that best answer a query, each with why and whence.

    Fused retrieval: recent beads, vector and keyword hits, graph expansion; each
    item says why it matched (``signals``) and where it came from (``provenance``). With
    ``memories``, one ranking over those memories, each item's provenance naming its own."""
    ask: dict[str, Any] = {
        "k": body.k, "token_budget": body.token_budget, "strategy": body.strategy,
        "filters": body.filters, "now": body.now, "as_of": body.as_of,
    }  # fmt: skip
    if not body.memories:
        return json_answer(above(d.retrieve(body.query, **ask), body.min_score))
    return json_answer(above(m.retrieve_across(body.memories, body.query, **ask), body.min_score))


@router.post("/v1/ingest", tags=["beads"], responses={400: {}, 404: {}})
def ingest(d: D, body: IngestIn) -> dict[str, Any]:
    """Ingest files or text as beads, chunked, with span refs.

    Files (text, Markdown, source code) or text as beads, chunked on natural boundaries
    (headings, paragraphs, functions), each with a span ref (path, lines). Unchanged input
    changes nothing; a changed file replaces its old chunks; under a directory, binary
    files are skipped and files gone since the last ingest are forgotten."""
    from chrysalis.ingest.files import ingest_path, ingest_text

    skipped: list[dict[str, str]] = []
    if body.path is not None:
        results = ingest_path(
            d.memory, body.path, kind=body.kind, session_id=body.session_id,
            on_skip=lambda p, why: skipped.append({"path": str(p), "why": why}),
        )  # fmt: skip
    else:
        assert body.text is not None
        results = [
            ingest_text(
                d.memory, body.text, source=body.source or "stdin", kind=body.kind,
                session_id=body.session_id,
            )
        ]  # fmt: skip
    files = [{k: v for k, v in dataclasses.asdict(r).items() if k != "bead_ids"} for r in results]
    counts = ("chunks", "added", "unchanged", "removed", "redacted")
    totals = {k: sum(f[k] for f in files) for k in counts}
    return {"files": files, "skipped_files": skipped, **totals}
