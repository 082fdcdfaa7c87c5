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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .errors import InvalidInput, SecretRefused
from .secrets_rules import spans

__all__ = ["POLICIES", "Finding", "Policy", "describe", "redact", "scan_bead"]

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


def redact(text: str, field: str = "content") -> tuple[str, list[Finding]]:
    """``text`` with each secret replaced by ``[REDACTED:<kind>]``, and what was replaced
    (offsets of the markers in the returned text). Text without secrets comes back as is."""
    found_spans = spans(text)
    if not found_spans:
        return text, []
    out: list[str] = []
    findings: list[Finding] = []
    at = length = 0
    for start, end, kind in found_spans:
        out.append(text[at:start])
        length += start - at
        marker = f"[REDACTED:{kind}]"
        out.append(marker)
        findings.append(Finding(kind, field, length, length + len(marker)))
        length += len(marker)
        at = end
    out.append(text[at:])
    return "".join(out), findings


def describe(findings: Iterable[Finding]) -> str:
    """Plain words, e.g. ``1 aws-access-key in content, 2 password in content``."""
    counts: dict[tuple[str, str], int] = {}
    for f in findings:
        counts[(f.kind, f.field)] = counts.get((f.kind, f.field), 0) + 1
    return ", ".join(f"{n} {kind} in {field}" for (kind, field), n in counts.items())


def scan_bead(row: Mapping[str, Any], policy: Policy) -> tuple[dict[str, Any], list[Finding]]:
    """Scan a bead's text fields (``content``, ``source``, each tag): returns the row with
    secrets redacted and the findings. ``policy`` ``"off"`` returns the row untouched;
    ``"refuse"`` raises `SecretRefused` naming the kinds and fields (never the secret).
    Fields that are not text are left for validation to reject."""
    if policy not in POLICIES:
        raise InvalidInput(f"secrets policy must be one of {', '.join(POLICIES)}, not {policy!r}")
    item = dict(row)
    if policy == "off":
        return item, []
    findings: list[Finding] = []
    for name in ("content", "source"):
        value = item.get(name)
        if isinstance(value, str):
            item[name], found = redact(value, name)
            findings += found
    tags = item.get("tags")
    if isinstance(tags, list | tuple):
        new_tags = []
        for n, tag in enumerate(tags):
            if isinstance(tag, str):
                tag, found = redact(tag, f"tags[{n}]")
                findings += found
            new_tags.append(tag)
        item["tags"] = new_tags
    if findings and policy == "refuse":
        raise SecretRefused(
            f"refused: the bead holds {describe(findings)} (secrets policy is 'refuse'); "
            "nothing was stored",
            details=[f.as_dict() for f in findings],
        )
    return item, findings
