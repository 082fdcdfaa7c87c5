"""Credentials in incoming text: find them, and redact or refuse them before anything is stored.

Pure: no I/O. Where the secrets are is `secrets_rules.spans` (provider shapes, values given to
a secret's name in every paste syntax, headers, URLs, key blocks), chosen by measurement over
detect-secrets, Kingfisher and Betterleaks (``bench/secrets_bench.py --compare``).

A redacted secret becomes ``[REDACTED:<kind>]`` and the text around it stays, so
``https://ada:hunter2@host`` becomes ``https://ada:[REDACTED:password]@host``. A `Finding`
says what kind was redacted, in which field and where the marker now sits; it never holds the
secret or anything derived from it (no hash, no prefix, no length).

The write side calls `scan_bead` on every bead it is given (remember, import, ingest, MCP
through the HTTP API) before the op is made, so the op log, the blobs, the remote and the
daemon's log never see the secret. Ops pulled from other replicas are not scanned again: they
were scanned where they were written.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from chrysalis.core.errors import InvalidInput, SecretRefused
from chrysalis.secrets.spans import keyed_secret, spans

if TYPE_CHECKING:
    from chrysalis.extract import Extraction

__all__ = [
    "POLICIES",
    "Finding",
    "Policy",
    "describe",
    "redact",
    "redact_extraction",
    "scan_bead",
    "scan_item",
]

Policy = Literal["redact", "refuse", "off"]
POLICIES: tuple[Policy, ...] = ("redact", "refuse", "off")


@dataclass(frozen=True, slots=True)
class Finding:
    """One redacted secret: its ``kind`` (e.g. ``aws-access-key``), the ``field`` it was in
    (``content``, ``source``, ``tags[2]``), and ``start``/``end``, the character offsets of
    its marker in the redacted field (under ``refuse`` too: where the marker would be)."""

    kind: str
    field: str
    start: int
    end: int

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "field": self.field, "start": self.start, "end": self.end}


def redact(text: str, field: str = "content", *, as_id: bool = False) -> tuple[str, list[Finding]]:
    """``text`` with each secret replaced by ``[REDACTED:<kind>]``, and what was replaced
    (offsets of the markers in the returned text). Text without secrets comes back as is.
    ``as_id``: the marker is ``redacted-<kind>``, so an id stays a valid id."""
    if len(text) < _SHORTEST:
        return text, []
    found_spans = spans(text)
    if not found_spans:
        return text, []
    out: list[str] = []
    findings: list[Finding] = []
    at = length = 0
    for start, end, kind in found_spans:
        out.append(text[at:start])
        length += start - at
        marker = f"redacted-{kind}" if as_id else f"[REDACTED:{kind}]"
        out.append(marker)
        findings.append(Finding(kind, field, length, length + len(marker)))
        length += len(marker)
        at = end
    out.append(text[at:])
    return "".join(out), findings


# The shortest text that can hold a secret a rule finds (``pw=hunter2``): ids and tags of
# a few characters are passed without running the rules.
_SHORTEST = 10


def describe(findings: Iterable[Finding]) -> str:
    """Plain words, e.g. ``1 aws-access-key in content, 2 password in content``."""
    counts: dict[tuple[str, str], int] = {}
    for f in findings:
        counts[(f.kind, f.field)] = counts.get((f.kind, f.field), 0) + 1
    return ", ".join(f"{n} {kind} in {field}" for (kind, field), n in counts.items())


# Per item kind: the fields that are ids (redacted with an id's marker) and those the
# scan leaves alone (numbers, times, hashes, enum words). Every other field is text, walked
# into lists and mappings (keys too: a metadata key can hold a secret as well as a value).
_ID_FIELDS = {
    "bead": {"id", "session_id", "turn_id", "derived_from"},
    "node": {"id", "evidence"},
    "edge": {"id", "source", "target", "evidence"},
    "persona": {"id", "skills"},
    "skill": {"id"},
    "fact": {"evidence"},
}
_SKIP_FIELDS = {"role", "importance", "ts", "blob", "derived_by", "weight", "valid_at",
                "invalid_at", "start_line", "end_line"}  # fmt: skip


def _walk(value: Any, field: str, as_id: bool, findings: list[Finding]) -> Any:
    if isinstance(value, str):
        out, found = redact(value, field, as_id=as_id)
        findings += found
        return out
    if isinstance(value, list | tuple):
        return [_walk(v, f"{field}[{n}]", as_id, findings) for n, v in enumerate(value)]
    if isinstance(value, Mapping):
        walked = {}
        for key, v in value.items():
            kind = keyed_secret(key, v) if isinstance(key, str) and isinstance(v, str) else None
            key = _walk(key, f"{field} key", as_id, findings)
            if kind is not None:  # {"password": "..."}: the whole value
                marker = f"[REDACTED:{kind}]"
                findings.append(Finding(kind, f"{field}.{key}", 0, len(marker)))
                walked[key] = marker
                continue
            walked[key] = _walk(v, f"{field}.{key}", as_id, findings)
        return walked
    return value


def scan_item(
    kind: str, row: Mapping[str, Any], policy: Policy
) -> tuple[dict[str, Any], list[Finding]]:
    """Scan every text field of an item of ``kind`` (``bead``, ``node``, ``edge``,
    ``persona``, ``skill``, ``fact``): returns the row with secrets redacted and the findings
    (``field`` names where, e.g. ``metadata.note``, ``span_refs[0].path``; never the secret).
    ``"off"`` returns the row untouched; ``"refuse"`` raises `SecretRefused` naming the
    kinds and fields. Fields that are not text are left for validation to reject."""
    if policy not in POLICIES:
        raise InvalidInput(f"secrets policy must be one of {', '.join(POLICIES)}, not {policy!r}")
    item = dict(row)
    if policy == "off":
        return item, []
    ids = _ID_FIELDS.get(kind, {"id"})
    findings: list[Finding] = []
    for name, value in item.items():
        if name in _SKIP_FIELDS or value is None or isinstance(value, int | float):
            continue
        item[name] = _walk(value, name, name in ids, findings)
    if findings and policy == "refuse":
        raise SecretRefused(
            f"refused: the {kind} holds {describe(findings)} (secrets policy is 'refuse'); "
            "nothing was stored",
            details=[f.as_dict() for f in findings],
        )
    return item, findings


def scan_bead(row: Mapping[str, Any], policy: Policy) -> tuple[dict[str, Any], list[Finding]]:
    """`scan_item` of a bead: content, source, tags, session and turn ids, span paths, the
    id and what it is derived from."""
    return scan_item("bead", row, policy)


def redact_extraction(ex: Extraction, policy: Policy) -> Extraction:
    """An extraction's entity names, fact ends and typed mentions with secrets redacted
    (``"off"``: as is): what an extractor read from a bead stored before this scan, or under
    ``"off"`` and scanned now, never names a node or a timeline entry after a secret."""
    if policy == "off":
        return ex

    def clean(text: str) -> str:
        return redact(text)[0]

    return dataclasses.replace(
        ex,
        entities=tuple(dataclasses.replace(e, name=clean(e.name)) for e in ex.entities),
        facts=tuple(
            dataclasses.replace(f, subject=clean(f.subject), object=clean(f.object))
            for f in ex.facts
        ),
        mentions=tuple(dataclasses.replace(m, value=clean(m.value)) for m in ex.mentions),
    )
