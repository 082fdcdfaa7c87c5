"""What both integrations share: JSON that survives the daemon's secrets scan, and beads read
newest first past the daemon's page size.

Why the JSON needs care: the daemon scans a bead's text for credentials and replaces each
with ``[REDACTED:<kind>]`` (`chrysalis.secrets.scan`). Over JSON text a match can run across
quotes and escapes (``"key=token: abcd1234efgh5678&x=\\"y\\""``), and the stored text would
no longer parse. So before a value is sent, `safe_json` runs the same rules here: first over
the value's structure (each string, each key, ``{"password": ...}`` pairs), then over the
JSON text it will send, replacing every string a match touches, until the text holds nothing
the rules find. The daemon then stores exactly that text. If its rules still change it (a
daemon of another version), `check_stored` forgets what was stored and raises.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from chrysalis.core.errors import InvalidInput, NotFound, SecretRefused
from chrysalis.core.limits import MAX_CONTENT_CHARS
from chrysalis.secrets.scan import POLICIES, Finding, Policy, describe, scan_item
from chrysalis.secrets.spans import spans

if TYPE_CHECKING:
    from chrysalis.client import Client
    from chrysalis.core.models import Bead

__all__ = ["PAGE", "check_policy", "check_stored", "newest_beads", "safe_json"]

log = logging.getLogger("chrysalis.integrations")

PAGE = 1000  # the most beads GET /v1/beads answers at once
_ROUNDS = 8  # text passes in `safe_json`; each replaces at least one string or fails

Path = tuple[Any, ...]


def check_policy(policy: str) -> Policy:
    if policy not in POLICIES:
        raise InvalidInput(f"secrets must be one of {', '.join(POLICIES)}, not {policy!r}")
    return policy


def _dump(value: Any, path: Path, out: list[str], at: list[int], leaves: list[Any]) -> None:
    """JSON of ``value`` into ``out``, noting where each string, number and key landed:
    ``(start, end, path, is_key)``. Separators as `json.dumps` writes them."""

    def emit(text: str) -> None:
        out.append(text)
        at[0] += len(text)

    if isinstance(value, dict):
        emit("{")
        for n, (key, item) in enumerate(value.items()):
            if n:
                emit(", ")
            start = at[0]
            emit(json.dumps(key, ensure_ascii=False))
            leaves.append((start, at[0], (*path, key), True))
            emit(": ")
            _dump(item, (*path, key), out, at, leaves)
        emit("}")
    elif isinstance(value, list):
        emit("[")
        for n, item in enumerate(value):
            if n:
                emit(", ")
            _dump(item, (*path, n), out, at, leaves)
        emit("]")
    else:
        start = at[0]
        emit(json.dumps(value, ensure_ascii=False, allow_nan=False))
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            leaves.append((start, at[0], path, False))


def _replace(root: Any, path: Path, is_key: bool, marker: str) -> bool:
    """Put ``marker`` in place of the string at ``path`` (or rename the key there); False
    when it already is the marker (nothing left to change)."""
    parent = root
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if not is_key:
        if parent[last] == marker:
            return False
        parent[last] = marker
        return True
    if isinstance(last, str) and last.startswith("[REDACTED:"):
        return False
    name, n = marker, 2
    while name in parent:
        name, n = f"{marker} {n}", n + 1
    # keep the order of the keys: rebuild the mapping with the one renamed
    items = list(parent.items())
    parent.clear()
    parent.update((name if k == last else k, v) for k, v in items)
    return True


def safe_json(value: Any, policy: Policy, what: str) -> tuple[str, list[Finding]]:
    """``value`` as JSON text the daemon's secrets scan leaves as it is, and the findings
    (kinds and where; never the secret). ``"redact"``: each credential becomes
    ``[REDACTED:<kind>]`` (a whole string where the match ran across JSON syntax);
    ``"refuse"``: raises `SecretRefused` naming the kinds, nothing sent; ``"off"``: as is.
    Raises `InvalidInput` when ``value`` is not JSON (NaN, bytes, a non-string key) or its
    text is longer than a bead holds. ``what`` names the value in messages."""
    _string_keys(value, what)
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        value = json.loads(text)  # a copy in plain JSON types (tuples become lists)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(
            f"{what} must be JSON (str keys; no NaN, bytes or objects): {exc}"
        ) from None
    findings: list[Finding] = []
    if policy != "off":
        scanned, findings = scan_item("value", {"value": value}, "redact")
        value = scanned["value"]
        for _ in range(_ROUNDS):
            out: list[str] = []
            leaves: list[Any] = []
            _dump(value, (), out, [0], leaves)
            text = "".join(out)
            found = spans(text)
            if not found:
                break
            changed = False
            for start, end, kind in found:
                for s, e, path, is_key in leaves:
                    if not (s < end and start < e):
                        continue
                    marker = f"[REDACTED:{kind}]"
                    if not path:  # the value itself is one string
                        hit, value = value != marker, marker
                    else:
                        hit = _replace(value, path, is_key, marker)
                    if hit:
                        changed = True
                        findings.append(Finding(kind, _field(path, is_key), 0, len(marker)))
            if not changed:
                raise InvalidInput(
                    f"{what} holds text the secrets rules flag across JSON syntax and no "
                    "single string can be redacted to clear it; nothing was stored"
                )
        else:
            raise InvalidInput(f"{what}: redaction did not settle; nothing was stored")
        if findings and policy == "refuse":
            raise SecretRefused(
                f"refused: {what} holds {describe(findings)} (secrets='refuse'); "
                "nothing was stored",
                details=[f.as_dict() for f in findings],
            )
    if len(text) > MAX_CONTENT_CHARS:
        raise InvalidInput(
            f"{what} is {len(text)} characters as JSON; a bead holds at most {MAX_CONTENT_CHARS}"
        )
    return text, findings


def _string_keys(value: Any, what: str) -> None:
    """`json.dumps` would turn ``{1: x}`` into ``{"1": x}``: a value must come back as given."""
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise InvalidInput(f"{what}: keys must be strings, not {type(k).__name__}")
            _string_keys(v, what)
    elif isinstance(value, list | tuple):
        for v in value:
            _string_keys(v, what)


def _field(path: Path, is_key: bool) -> str:
    name = "value" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
    return f"{name} key" if is_key else name


def check_stored(client: Client, sent: dict[str, str], stored: list[Bead], what: str) -> None:
    """Each bead in ``stored`` whose id is in ``sent`` must hold exactly that text. If the
    daemon changed one (its secrets rules differ from this client's), every bead in
    ``stored`` is forgotten and `SecretRefused` raised: JSON changed in flight may not parse,
    and a caller must not believe it was kept."""
    changed = [b.id for b in stored if b.id in sent and b.content != sent[b.id]]
    if not changed:
        return
    for bead in stored:
        with contextlib.suppress(NotFound):
            client.forget(bead.id)
    raise SecretRefused(
        f"the daemon redacted {what} differently from this client (another version of the "
        "secrets rules?); what it stored was forgotten, nothing was kept. Upgrade the client "
        "to the daemon's version, or remove the credential"
    )


def newest_beads(
    client: Client,
    *,
    tag: str,
    session_id: str | None = None,
    limit: int | None = None,
    first: int = PAGE,
) -> Iterator[Bead]:
    """The live beads with ``tag`` (in one session, if given), newest first, read a page at
    a time (``limit``: at most that many; ``first``: the first page's size, for a caller that
    most likely wants only the newest: the daemon's walk stops when the page is full). Pages
    overlap by one timestamp so that beads stamped alike at a page's edge are not skipped; a
    bead is yielded once."""
    before: float | None = None
    seen: set[str] = set()
    given = 0
    while True:
        # later pages re-read the edge's twins: ask a whole page so that new ones follow
        want = PAGE if before is not None else min(first, PAGE if limit is None else limit)
        page = client.last_beads(want, session_id=session_id, tag=tag, before=before)
        fresh = [b for b in reversed(page) if b.id not in seen]
        for bead in fresh:
            seen.add(bead.id)
            yield bead
            given += 1
            if limit is not None and given >= limit:
                return
        if len(page) < want or not fresh:
            return
        before = page[0].ts + 1e-6  # the oldest stamp again: its twins may be past the page
