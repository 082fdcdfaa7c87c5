"""Ingest text, Markdown and source files as beads: chunked on natural boundaries, each chunk
one ``note`` bead whose span ref names the file and its line range; idempotent.

Chunking lives in `chrysalis.ingest.chunking`; its public names are re-exported here.

``ingest_text`` / ``ingest_path`` store, per source, the hash of what was ingested and the
bead ids it gave (meta ``ingest:<source>``). Ingesting unchanged input again writes nothing.
The ids about to be added are recorded first, so an interrupted ingest leaves no bead that
the next ingest of the source does not account for.
Changed input appends the beads of new chunks, forgets the beads of chunks that are gone
and keeps the rest: a bead id derives from the source, the chunk's text and its line range,
so a chunk keeps its bead while it keeps its text and its lines (a chunk that only moved
gets a new bead: its span ref must name the lines where it is now).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chrysalis.core.errors import InvalidInput, NotFound, SecretRefused
from chrysalis.core.limits import ID_PATTERN, ID_RULE
from chrysalis.core.models import MAX_SHORT_CHARS
from chrysalis.ingest.chunking import (
    CHUNKER_VERSION,
    DEFAULT_MAX_CHARS,
    KINDS,
    Chunk,
    chunk,
    iter_files,
    kind_of,
    read_text,
    read_text_file,
)
from chrysalis.secrets.scan import Finding, describe, redact

if TYPE_CHECKING:
    from chrysalis.memory import Memory

__all__ = [
    "KINDS",
    "Chunk",
    "IngestResult",
    "chunk",
    "forget_source",
    "ingest_path",
    "ingest_text",
    "iter_files",
    "kind_of",
    "read_text_file",
]

_BATCH = 256  # beads per append_beads commit

Progress = Callable[[int, int], None]
_ID_CHARS = re.compile(r"[^A-Za-z0-9._:@-]+")
_ID = re.compile(ID_PATTERN)


@dataclass(frozen=True, slots=True)
class IngestResult:
    """What one ingest did to one source (a CLI prints it)."""

    source: str
    chunks: int  # chunks the input gives now
    added: int  # beads appended
    unchanged: int  # chunks whose bead was already there
    removed: int  # beads of the previous version forgotten
    skipped: bool  # the input was unchanged: nothing was written
    kind: str = "text"
    bead_ids: list[str] = field(default_factory=list)  # one per chunk, in order
    redacted: int = 0  # secrets replaced with [REDACTED:<kind>] (see `ingest_text`)
    encoding: str = "utf-8"  # what a file was read as (`chrysalis.ingest.encoding`)


# ---- reading and walking ----------------------------------------------------------------------


def _meta_key(prefix: str, name: str) -> str:
    key = f"{prefix}:{name}"
    if len(key.encode()) <= 400:  # LMDB keys stop at 511 bytes
        return key
    return f"{prefix}:#{hashlib.sha256(name.encode()).hexdigest()}"


def _session_for(source: str) -> str:
    """``ingest:<source>`` made into a valid id (other characters become ``-``)."""
    tail = _ID_CHARS.sub("-", source).strip("-.")
    sid = f"ingest:{tail}" if tail else "ingest"
    if len(sid) > 128:
        digest = hashlib.sha256(source.encode()).hexdigest()[:12]
        sid = f"ingest:{digest}-{tail[-(128 - 20) :].lstrip('-.')}"
    return sid


def _check_source(source: Any) -> str:
    if not isinstance(source, str) or not source:
        raise InvalidInput("source must be a non-empty string")
    if len(source) > MAX_SHORT_CHARS:
        raise InvalidInput(f"source longer than {MAX_SHORT_CHARS} characters: {source[:80]!r}...")
    try:
        source.encode()
    except UnicodeEncodeError:
        raise InvalidInput(f"source is not valid Unicode: {source!r}") from None
    return source


def _forget_all(memory: Memory, ids: Sequence[str]) -> None:
    for bead_id in ids:
        with contextlib.suppress(NotFound):  # never reached this replica: nothing to erase
            memory.forget(bead_id)


def _bead_id(parts: Sequence[str], salt: int) -> str:
    h = hashlib.sha256("\0".join([*parts, str(salt)]).encode()).hexdigest()
    return f"ing-{h[:32]}"


def ingest_text(
    memory: Memory,
    text: str,
    *,
    source: str,
    kind: str | None = None,
    session_id: str | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
    progress: Progress | None = None,
) -> IngestResult:
    """Ingest ``text`` as the current content of ``source`` (a path or any name).

    ``kind`` defaults to `kind_of(source)`; ``session_id`` to ``ingest:<source>`` (made a
    valid id). ``progress(done, total)`` is called in chunks as beads are written.
    Raises `InvalidInput` for a bad source, kind or session id; nothing is written then.

    The text passes the memory's secrets policy whole, before it is chunked: chunks, their
    ids and the recorded digest are of the redacted text, so a secret split across two
    chunks is still caught and nothing derived from it is kept. Under ``refuse`` a text
    holding one raises `SecretRefused` naming the source.
    """
    if not isinstance(text, str):
        raise InvalidInput("text must be a string")
    redacted = 0
    policy = memory.writer.secrets
    if policy != "off":
        found: list[Finding] = []
        # The source first: the session id, the span paths and the ingest record are
        # derived from it (a URL may hold a password).
        if isinstance(source, str):
            source, found = redact(source, "source")
        if isinstance(session_id, str):
            session_id, in_session = redact(session_id, "session_id", as_id=True)
            found += in_session
        text, in_text = redact(text, "content")
        found += in_text
        if found and policy == "refuse":
            raise SecretRefused(
                f"{source}: refused: it holds {describe(found)} (secrets policy is 'refuse'); "
                "nothing was stored",
                details=[f.as_dict() for f in found],
            )
        redacted = len(found)
    try:
        raw = text.encode()
    except UnicodeEncodeError:
        raise InvalidInput(f"{source}: text contains a lone surrogate") from None
    result = _ingest(
        memory,
        text,
        hashlib.sha256(raw).hexdigest(),
        source=source,
        kind=kind,
        session_id=session_id,
        max_chars=max_chars,
        progress=progress,
    )
    return dataclasses.replace(result, redacted=redacted) if redacted else result


def _ingest(
    memory: Memory,
    text: str,
    sha: str,
    *,
    source: str,
    kind: str | None,
    session_id: str | None,
    max_chars: int,
    progress: Progress | None,
) -> IngestResult:
    source = _check_source(source)
    if not isinstance(max_chars, int) or isinstance(max_chars, bool) or max_chars < 1:
        raise InvalidInput("max_chars must be a positive int")
    kind = kind_of(source) if kind is None else kind
    if kind not in KINDS:
        raise InvalidInput(f"unknown kind {kind!r}: one of {', '.join(KINDS)}")
    if session_id is None:
        session_id = _session_for(source)
    elif not isinstance(session_id, str) or not _ID.fullmatch(session_id):
        raise InvalidInput(f"invalid session id {str(session_id)[:80]!r}: an id is {ID_RULE}")
    key = _meta_key("ingest", source)
    prev = memory.store.get_meta(key)
    prev = prev if isinstance(prev, dict) else {}
    old_ids = [i for i in prev.get("beads", ()) if isinstance(i, str)]
    # Beads an interrupted ingest may have added: forgotten below unless produced again.
    stray = [i for i in prev.get("pending", ()) if isinstance(i, str)]
    settings: dict[str, Any] = {
        "kind": kind,
        "session_id": session_id,
        "max_chars": max_chars,
        "chunker": CHUNKER_VERSION,
    }
    same = prev.get("sha256") == sha and all(prev.get(k) == v for k, v in settings.items())
    if same and not stray:
        if progress is not None:
            progress(len(old_ids), len(old_ids))
        return IngestResult(source, len(old_ids), 0, len(old_ids), 0, True, kind, old_ids)

    chunks = chunk(text, kind, max_chars)
    total = len(chunks)
    if progress is not None:
        progress(0, total)
    # Ids: source, session, kind, lines and text (and, for equal pieces of one long line,
    # which one). A forgotten id is never reused: the salt moves on past it.
    seen: dict[tuple[int, int, str], int] = {}
    parts: list[list[str]] = []
    for c in chunks:
        nth = seen.get((c.start_line, c.end_line, c.text), 0)
        seen[(c.start_line, c.end_line, c.text)] = nth + 1
        parts.append([source, session_id, kind, str(c.start_line), str(c.end_line), str(nth)])
        parts[-1].append(c.text)
    salts = [0] * total
    ids = [_bead_id(p, 0) for p in parts]
    states = memory.reader.bead_states(ids)
    while any(states[i] == "forgotten" for i in ids):
        for n, bead_id in enumerate(ids):
            if states[bead_id] == "forgotten":
                salts[n] += 1
                ids[n] = _bead_id(parts[n], salts[n])
        states.update(memory.reader.bead_states([i for i in ids if i not in states]))

    rows = [
        {
            "id": bead_id,
            "content": c.text,
            "role": "note",
            "source": source,
            "session_id": session_id,
            "tags": ["ingest", kind],
            "span_refs": [{"path": source, "start_line": c.start_line, "end_line": c.end_line}],
        }
        for c, bead_id in zip(chunks, ids, strict=True)
        if states[bead_id] != "live"
    ]
    unchanged = total - len(rows)
    done = unchanged
    if rows:  # before appending: a crash from here on leaves no bead unaccounted for
        memory.store.put_meta(key, {**prev, "pending": list(dict.fromkeys([*stray, *ids]))})
    for at in range(0, len(rows), _BATCH):
        batch = rows[at : at + _BATCH]
        memory.append_beads(batch)
        done += len(batch)
        if progress is not None:
            progress(done, total)

    keep = set(ids)
    gone = [i for i in dict.fromkeys(old_ids) if i not in keep]
    keep.update(gone)
    gone += [i for i in dict.fromkeys(stray) if i not in keep]
    _forget_all(memory, gone)
    memory.store.put_meta(key, {"source": source, "sha256": sha, "beads": ids, **settings})
    return IngestResult(source, total, len(rows), unchanged, len(gone), False, kind, ids)


def forget_source(memory: Memory, source: str) -> IngestResult:
    """Forget every bead an ingest of ``source`` made, and the ingest record."""
    source = _check_source(source)
    key = _meta_key("ingest", source)
    prev = memory.store.get_meta(key)
    prev = prev if isinstance(prev, dict) else {}
    old_ids = [i for i in dict.fromkeys(prev.get("beads", ())) if isinstance(i, str)]
    stray = [i for i in prev.get("pending", ()) if isinstance(i, str) and i not in old_ids]
    _forget_all(memory, [*old_ids, *dict.fromkeys(stray)])
    if prev:
        memory.store.put_meta(key, None)
    kind = prev.get("kind") if isinstance(prev.get("kind"), str) else "text"
    return IngestResult(source, 0, 0, 0, len(old_ids), not prev, str(kind), [])


def _inside(path: Path, base: Path) -> Path:
    """``path`` resolved, when that is still under ``base``: a link in a tree someone else
    made (a clone, an unpacked archive) must not pull in ``~/.ssh/id_ed25519``; the owner
    who means the file ingests it by name."""
    try:
        real = path.resolve(strict=True)
    except OSError:
        raise NotFound(f"{path}: a link to nothing") from None
    if not real.is_relative_to(base):
        raise InvalidInput(
            f"{path}: a link to {real}, outside the directory being ingested (skipped: "
            "ingest that file by name if you mean it)"
        )
    return real


def _source_of(path: Path) -> str:
    return str(path.resolve())


def ingest_path(
    memory: Memory,
    path: str | os.PathLike[str],
    *,
    kind: str | None = None,
    session_id: str | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
    progress: Progress | None = None,
    on_skip: Callable[[Path, str], None] | None = None,
) -> list[IngestResult]:
    """Ingest a file, or every file under a directory (see `iter_files`), one source per
    file named by its absolute path.

    A file's encoding is found by `chrysalis.ingest.encoding.decode_text` (each result says
    which). A file given by name that is not text raises `InvalidInput` naming it; under a
    directory such files are skipped, as are hidden files and folders and the others
    `iter_files` leaves out (each told to ``on_skip(path, why)``; ``why`` does not repeat
    the path). Files ingested
    from this directory before that are now gone (deleted, hidden, binary) have their
    beads forgotten. A file refused by the secrets policy (`SecretRefused`) raises when
    given by name and is skipped under a directory. ``progress(done, total)`` is called in
    bytes of input.
    """
    root = Path(path)
    if not root.exists():
        raise NotFound(f"no such file or directory: {root}")
    if not root.is_dir():
        size = root.stat().st_size
        text, encoding = read_text(root)

        def file_progress(done: int, total: int) -> None:
            if progress is not None:
                progress(size * done // total if total else size, size)

        result = ingest_text(
            memory,
            text,
            source=_source_of(root),
            kind=kind,
            session_id=session_id,
            max_chars=max_chars,
            progress=file_progress,
        )
        return [dataclasses.replace(result, encoding=encoding)]

    files = list(iter_files(root, on_skip))
    base = root.resolve()
    sizes = []
    for f in files:
        try:
            sizes.append(f.stat().st_size)
        except OSError:
            sizes.append(0)
    total = sum(sizes)
    done = 0
    results: list[IngestResult] = []
    for f, size in zip(files, sizes, strict=True):

        def step(d: int, t: int, base: int = done, size: int = size) -> None:
            if progress is not None:
                progress(base + (size * d // t if t else size), total)

        try:
            real = _inside(f, base)
            source = _check_source(str(real))
            text, encoding = read_text(real, follow=False)
        except (InvalidInput, NotFound) as exc:
            if on_skip is not None:  # the why alone: the path is told beside it
                on_skip(f, exc.message.removeprefix(f"{f}: "))
        else:
            try:
                result = ingest_text(
                    memory,
                    text,
                    source=source,
                    kind=kind,
                    session_id=session_id,
                    max_chars=max_chars,
                    progress=step,
                )
            except SecretRefused as exc:  # under a directory a refused file is skipped
                if on_skip is not None:
                    on_skip(f, exc.message)
            else:
                results.append(dataclasses.replace(result, encoding=encoding))
        done += size
        if progress is not None:
            progress(done, total)

    dir_key = _meta_key("ingest-dir", _source_of(root))
    before = memory.store.get_meta(dir_key)
    now_sources = [r.source for r in results]
    current = set(now_sources)
    for old in before if isinstance(before, list) else ():
        if isinstance(old, str) and old not in current:
            results.append(forget_source(memory, old))
    if before != now_sources:
        memory.store.put_meta(dir_key, now_sources)
    return results
