"""Credentials in incoming text: find them, and redact or refuse them before anything is stored.

Pure: no I/O. The patterns are the high-precision plugins of Yelp's ``detect-secrets``
(provider-shaped keys and tokens, private key blocks, passwords in URLs), read from the plugin
classes and run over the whole text with ``finditer`` rather than through its file-scanning
machinery (which reports values, not where they are). Its entropy and keyword plugins are left
out: they flag ordinary prose and code.

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

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .errors import InvalidInput, SecretRefused

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


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    group: int = 0  # the group that is the secret (0: the whole match)
    valid: Callable[[str], bool] | None = None
    hints: tuple[str, ...] = ()  # run only if the lower-cased text holds one of these


# (plugin module, class, kind, {regex index: secret group}, {regex index: hints}): a regex
# without a group entry is all secret; one with hints runs only when the lower-cased text
# holds one of them (Python's re scans a leading class or IGNORECASE pattern char by char:
# these five were 60 % of the cost on 1 MiB of prose).
_PLUGINS: tuple[tuple[str, str, str, dict[int, int], dict[int, tuple[str, ...]]], ...] = (
    ("aws", "AWSKeyDetector", "aws-access-key", {1: 1}, {1: ("aws",)}),
    ("github_token", "GitHubTokenDetector", "github-token", {}, {}),
    ("gitlab_token", "GitLabTokenDetector", "gitlab-token", {}, {}),
    ("basic_auth", "BasicAuthDetector", "password", {0: 1}, {0: ("://",)}),
    ("slack", "SlackDetector", "slack-token", {}, {0: ("xox",), 1: ("hooks.slack.com",)}),
    ("stripe", "StripeDetector", "stripe-key", {}, {0: ("k_live_",)}),
    ("openai", "OpenAIDetector", "openai-key", {}, {}),
    ("pypi_token", "PypiTokenDetector", "pypi-token", {}, {}),
    ("npm", "NpmDetector", "npm-token", {0: 1}, {0: ("_authtoken",)}),
    ("sendgrid", "SendGridDetector", "sendgrid-key", {}, {}),
    ("square_oauth", "SquareOAuthDetector", "square-oauth-secret", {}, {}),
    ("twilio", "TwilioKeyDetector", "twilio-key", {}, {}),
    ("mailchimp", "MailchimpDetector", "mailchimp-key", {}, {0: ("-us",)}),
    ("azure_storage_key", "AzureStorageKeyDetector", "azure-storage-key", {}, {}),
    ("discord", "DiscordBotTokenDetector", "discord-token", {}, {}),
    ("telegram_token", "TelegramBotTokenDetector", "telegram-token", {}, {}),
)

# A private key is the whole block, not the header line the plugin matches: from the dashes
# before BEGIN to the END line; a block cut short (no END) ends where its base64 lines do
# (escaped newlines too, as in JSON; a last short piece only before the end or a quote), so
# a sentence that merely names the header loses only the header.
_KEY_END = re.compile(r"END [A-Z0-9 ]*(?:KEY|BLOCK) ?-+")
_PUTTY_END = re.compile(r"Private-MAC: *[0-9A-Fa-f]*")
_KEY_BODY = re.compile(
    r"(?: ?-+)?(?:(?:\s|\\[rn])*(?:[A-Za-z0-9+/=]{16,}|[A-Za-z0-9+/=]+(?=\Z|[\"'`])"
    r"|(?:Proc-Type|DEK-Info|Comment|Encryption|Public-Lines|Private-Lines):[^\n]*))*"
)
# (plugin module, regex index) whose secret is of another kind than the plugin's others
_KIND_OF = {("aws", 1): "aws-secret-key"}


# A URL's password that is a template, a mask or the word itself (``{password}``,
# ``${PASS}``, ``<pw>``, ``%s``, ``****``, ``user:pass@host``) is not a secret: code and docs
# are full of them (19 of 22 findings in 4,000 files of site-packages before this).
_PLACEHOLDER = re.compile(
    r"[{<$%].*|.*[}>]|\**|x+|\.+|pass|password|passwd|pwd|pw|secret|token",
    re.IGNORECASE,
)


def _not_placeholder(secret: str) -> bool:
    return _PLACEHOLDER.fullmatch(secret) is None


@functools.cache
def _rules() -> tuple[list[_Rule], list[re.Pattern[str]]]:
    """Read the plugins' patterns once (importing detect-secrets costs ~0.3 s: not at import)."""
    import importlib

    from detect_secrets.plugins.jwt import JwtTokenDetector
    from detect_secrets.plugins.private_key import PrivateKeyDetector

    rules = []
    for module, name, kind, groups, hints in _PLUGINS:
        plugin = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)
        for n, pattern in enumerate(plugin.denylist):
            valid = _not_placeholder if kind == "password" else None
            kind_n = _KIND_OF.get((module, n), kind)
            rules.append(_Rule(kind_n, pattern, groups.get(n, 0), valid, hints.get(n, ())))
    for pattern in JwtTokenDetector.denylist:
        # The plugin's last part is lazy (it only needs to see one); redaction needs it all.
        greedy = re.compile(pattern.pattern.replace("*?", "*"), pattern.flags)
        rules.append(_Rule("jwt", greedy, 0, JwtTokenDetector.is_formally_valid))
    return rules, list(PrivateKeyDetector.denylist)


def _key_blocks(text: str, headers: Iterable[re.Pattern[str]]) -> Iterable[tuple[int, int]]:
    for header in headers:
        for m in header.finditer(text):
            start = m.start()
            while start > 0 and text[start - 1] in "- ":
                start -= 1
            while text[start] == " ":  # the dashes are the key's; a space before them is not
                start += 1
            end_re = _PUTTY_END if m.group().startswith("PuTTY") else _KEY_END
            tail = end_re.search(text, m.end()) or _KEY_BODY.match(text, m.end())
            assert tail is not None  # _KEY_BODY matches the empty string
            yield start, tail.end()


def _spans(text: str) -> list[tuple[int, int, str]]:
    """Where the secrets are: ``(start, end, kind)``, sorted, overlaps merged."""
    rules, key_headers = _rules()
    found = [(s, e, "private-key") for s, e in _key_blocks(text, key_headers)]
    lower = text.lower()
    for rule in rules:
        if rule.hints and not any(h in lower for h in rule.hints):
            continue
        for m in rule.pattern.finditer(text):
            secret = m.group(rule.group)
            if not secret or (rule.valid is not None and not rule.valid(secret)):
                continue
            found.append((m.start(rule.group), m.end(rule.group), rule.kind))
    found.sort(key=lambda f: (f[0], -f[1]))
    merged: list[tuple[int, int, str]] = []
    for start, end, kind in found:
        if merged and start < merged[-1][1]:  # inside or across the previous one: widen it
            prev = merged[-1]
            merged[-1] = (prev[0], max(prev[1], end), prev[2])
        else:
            merged.append((start, end, kind))
    return merged


def redact(text: str, field: str = "content") -> tuple[str, list[Finding]]:
    """``text`` with each secret replaced by ``[REDACTED:<kind>]``, and what was replaced
    (offsets of the markers in the returned text). Text without secrets comes back as is."""
    spans = _spans(text)
    if not spans:
        return text, []
    out: list[str] = []
    findings: list[Finding] = []
    at = length = 0
    for start, end, kind in spans:
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
