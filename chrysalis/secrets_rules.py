"""Where the credentials are in a text: `spans(text)`, the rules `secrets_scan` redacts by.

Pure: no I/O. Chosen by measurement (``python bench/secrets_bench.py``, docs/benchmarks.md)
over detect-secrets with every plugin, Kingfisher and Betterleaks: three kinds of rule,

- **provider shapes**: a documented prefix and alphabet (``ghp_``, ``github_pat_``,
  ``sk-proj-``, ``sk-ant-``, ``AIza``, ``hf_``, ``xoxb-``, PEM blocks, JWTs, ...). A match runs
  to the end of the token, not to the documented length, so no tail of a longer key survives.
- **context**: a value given to a name that says key, secret, token, password, passwd, pwd,
  credential or auth, in every syntax people paste (``NAME=v``, ``export NAME="v"``,
  ``name = v``, ``name: v``, ``"name": "v"``, ``name := "v"``, ``'name' => 'v'``,
  ``<password>v</password>``, ``--token v``, ``name is v`` in prose); ``Authorization:``
  headers (Bearer, Basic, Token); a password in a URL of any scheme.
- **what is not a secret**: placeholders (``${VAR}``, ``<your-key>``, ``xxxx``, ``changeme``),
  code (``password = input(...)``, ``os.environ["X"]``, ``settings.KEY``) and words: a
  context value must look made up (digits or symbols, or long and of mixed case).

A span is ``(start, end, kind)``; spans come sorted, overlaps merged.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["keyed_secret", "spans"]

_TOKEN_CHARS = r"A-Za-z0-9_\-"
# The rest of a token after a provider's documented part: its own characters, and a dot,
# slash, plus, equals or tilde inside it (never one that ends a sentence).
_TAIL = re.compile(r"(?:[A-Za-z0-9_\-+/=~]|[.](?=[A-Za-z0-9_\-]))*")


@dataclass(frozen=True, slots=True)
class _Shape:
    kind: str
    hints: tuple[str, ...]  # literal pieces one of which the text must hold (case-sensitive)
    pattern: re.Pattern[str]
    group: int = 0
    tail: bool = True  # extend the match to the token's end
    valid: Callable[[str], bool] | None = None


def _varied(secret: str) -> bool:
    """A made-up body: not one character repeated (``ghp_xxxx...``) nor a short cycle."""
    return len(set(secret)) >= 8


def _shape(
    kind: str,
    hints: str | tuple[str, ...],
    regex: str,
    group: int = 0,
    tail: bool = True,
    valid: Callable[[str], bool] | None = _varied,
) -> _Shape:
    return _Shape(
        kind,
        (hints,) if isinstance(hints, str) else hints,
        re.compile(r"(?<![A-Za-z0-9])" + regex),
        group,
        tail,
        valid,
    )


_B = _TOKEN_CHARS
SHAPES: tuple[_Shape, ...] = (
    _shape(
        "aws-access-key",
        ("AKIA", "ASIA", "AROA", "AIDA", "ANPA", "AGPA", "ABIA", "ACCA"),
        r"(?:AKIA|ASIA|AROA|AIDA|ANPA|AGPA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])",
        tail=False,
    ),
    _shape("aws-session-token", "IQoJb3JpZ2lu", r"IQoJb3JpZ2lu[A-Za-z0-9+/=]{40,}"),
    _shape("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"gh[pousr]_[A-Za-z0-9]{30,}"),
    _shape("github-token", "github_pat_", rf"github_pat_[{_B}]{{30,}}"),
    _shape(
        "gitlab-token",
        "gl",
        r"gl(?:pat|rt|dt|ptt|cbt|ft|imt|oas|soat|ffct|agent)-[A-Za-z0-9_\-]{20,}",
    ),
    _shape("gitlab-token", "GR1348941", r"GR1348941[A-Za-z0-9_\-]{20,}"),
    _shape("slack-token", ("xox", "xapp-"), r"(?:xox[abposrce]|xapp)-[0-9A-Za-z\-]{10,}"),
    _shape(
        "slack-webhook",
        "hooks.slack.com",
        r"(?<=hooks\.slack\.com/)(?:services|workflows|triggers)/[A-Za-z0-9/_\-]+",
    ),
    _shape("stripe-key", "k_", r"[spr]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    _shape("stripe-key", "whsec_", r"whsec_[A-Za-z0-9+/=]{24,}"),
    _shape("anthropic-key", "sk-ant-", rf"sk-ant-[a-z]+\d*-[{_B}]{{20,}}"),
    _shape("openai-key", "sk-", rf"sk-(?:proj|svcacct|admin|None|or-v1)-[{_B}]{{20,}}"),
    _shape("openai-key", "T3BlbkFJ", r"sk-[A-Za-z0-9_\-]{16,}T3BlbkFJ[A-Za-z0-9_\-]{16,}"),
    # Any other sk- key (DeepSeek, Moonshot, many proxies): long, letters and digits.
    _shape("api-key", "sk-", r"sk-[A-Za-z0-9]{32,}", valid=lambda s: _varied(s) and _mixed(s)),
    _shape("google-api-key", "AIza", rf"AIza[{_B}]{{35}}"),
    _shape("google-oauth", ("GOCSPX-", "ya29."), rf"(?:GOCSPX-|ya29\.)[{_B}]{{20,}}"),
    _shape("huggingface-token", ("hf_", "api_org_"), r"(?:hf|api_org)_[A-Za-z]{30,}"),
    _shape("npm-token", "npm_", r"npm_[A-Za-z0-9]{36,}"),
    _shape("pypi-token", "pypi-", rf"pypi-AgE[{_B}]{{40,}}"),
    _shape("sendgrid-key", "SG.", rf"SG\.[{_B}]{{16,32}}\.[{_B}]{{16,64}}"),
    _shape("twilio-key", "SK", r"SK[0-9a-fA-F]{32}(?![A-Za-z0-9])", tail=False),
    _shape("mailgun-key", "key-", r"key-[0-9a-zA-Z]{32}"),
    _shape("mailchimp-key", "-us", r"[0-9a-f]{32}-us[0-9]{1,2}(?![0-9])", tail=False),
    _shape("discord-token", ".", rf"[MNO][A-Za-z0-9_\-]{{23,27}}\.[{_B}]{{6}}\.[{_B}]{{27,40}}"),
    _shape(
        "discord-webhook", "/api/webhooks/", r"(?<=/api/webhooks/)[0-9]{10,20}/[A-Za-z0-9_\-]{30,}"
    ),
    _shape("telegram-token", ":AA", r"[0-9]{8,10}:AA[A-Za-z0-9_\-]{30,}"),
    _shape("jwt", "eyJ", rf"eyJ[{_B}]{{8,}}\.eyJ[{_B}]{{8,}}\.[{_B}]*"),
    _shape("mapbox-token", ("sk.eyJ", "pk.eyJ"), rf"[sp]k\.eyJ[{_B}]{{20,}}\.[{_B}]{{16,}}"),
    _shape("azure-client-secret", "Q~", r"[A-Za-z0-9_~.\-]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}"),
    _shape("digitalocean-token", "_v1_", r"do[por]_v1_[a-f0-9]{64}"),
    _shape("shopify-token", "shp", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    _shape("linear-key", "lin_", r"lin_(?:api|oauth)_[A-Za-z0-9]{32,}"),
    _shape(
        "notion-token",
        ("ntn_", "secret_"),
        r"(?:ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43})",
        valid=lambda s: _varied(s) and _mixed(s),
    ),
    _shape("vault-token", ("hvs.", "hvb.", "hvr."), rf"hv[sbr]\.[{_B}]{{24,}}"),
    _shape("databricks-token", "dapi", r"dapi[a-f0-9]{32}"),
    _shape("groq-key", "gsk_", r"gsk_[A-Za-z0-9]{40,}"),
    _shape("replicate-token", "r8_", r"r8_[A-Za-z0-9]{30,}"),
    _shape("perplexity-key", "pplx-", r"pplx-[A-Za-z0-9]{40,}"),
    _shape("xai-key", "xai-", r"xai-[A-Za-z0-9]{60,}"),
    _shape(
        "supabase-token",
        ("sbp_", "sb_secret_"),
        r"(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_\-]{20,})",
    ),
    _shape("docker-token", "dckr_pat_", rf"dckr_pat_[{_B}]{{20,}}"),
    _shape(
        "grafana-token",
        ("glsa_", "glc_"),
        r"(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/=]{32,})",
    ),
    _shape("atlassian-token", "ATATT3", r"ATATT3[A-Za-z0-9_\-=]{100,}"),
    _shape("postman-key", "PMAK-", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
    _shape("age-key", "AGE-SECRET-KEY-1", r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
    _shape("doppler-token", "dp.", rf"dp\.(?:st|ct|pt|sa|scim|audit)\.[{_B}.]{{40,}}"),
    _shape("terraform-token", ".atlasv1.", rf"[A-Za-z0-9]{{14}}\.atlasv1\.[{_B}]{{60,}}"),
    _shape("square-token", ("sq0", "EAAA"), rf"(?:sq0(?:atp|csp)-[{_B}]{{22,}}|EAAA[{_B}]{{60,}})"),
    _shape("heroku-key", "HRKU-", rf"HRKU-[{_B}]{{40,}}"),
    _shape("newrelic-key", "NRAK-", r"NRAK-[A-Z0-9]{27}"),
    _shape("pulumi-token", "pul-", r"pul-[a-f0-9]{40}"),
    _shape("tailscale-key", "tskey-", r"tskey-[a-z]+-[A-Za-z0-9]+-[A-Za-z0-9]+"),
    _shape("langsmith-key", "lsv2_", r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}"),
    _shape("pinecone-key", "pcsk_", r"pcsk_[A-Za-z0-9_]{50,}"),
    _shape("onepassword-token", "ops_eyJ", rf"ops_eyJ[{_B}]{{50,}}"),
    _shape("sentry-token", ("sntrys_", "sntryu_"), r"sntry[su]_[A-Za-z0-9+/=_]{40,}"),
    # A URL whose user is a 32-hex key (a Sentry DSN and its like).
    _shape("dsn-key", "://", r"(?<=://)[0-9a-f]{32}(?=@)", tail=False),
    _shape(
        "fireworks-key", "fw_", r"fw_[A-Za-z0-9]{24,}", valid=lambda s: _varied(s) and _mixed(s)
    ),
)


def _mixed(s: str) -> bool:
    return any(c.isdigit() for c in s) and any(c.isalpha() for c in s)


# ---- private key blocks ------------------------------------------------------------------------

_KEY_HEADER = re.compile(r"BEGIN[ A-Z0-9_]{0,30}PRIVATE KEY(?: BLOCK)?|PuTTY-User-Key-File-[0-9]")
# A private key is the whole block, not the header line: from the dashes before BEGIN to the
# END line; a block cut short (no END) ends where its base64 lines do (escaped newlines too,
# as in JSON; a last short piece only before the end or a quote), so a sentence that merely
# names the header loses only the header.
_KEY_END = re.compile(r"END [A-Z0-9 ]*(?:KEY|BLOCK) ?-+")
_PUTTY_END = re.compile(r"Private-MAC: *[0-9A-Fa-f]*")
_KEY_BODY = re.compile(
    r"(?: ?-+)?(?:(?:\s|\\[rn])*(?:[A-Za-z0-9+/=]{16,}|[A-Za-z0-9+/=]+(?=\Z|[\"'`])"
    r"|(?:Proc-Type|DEK-Info|Comment|Encryption|Public-Lines|Private-Lines):[^\n]*))*"
)


def _key_blocks(text: str) -> Iterable[tuple[int, int, str]]:
    if "PRIVATE KEY" not in text and "PuTTY" not in text:
        return
    for m in _KEY_HEADER.finditer(text):
        start = m.start()
        while start > 0 and text[start - 1] in "- ":
            start -= 1
        while text[start] == " ":  # the dashes are the key's; a space before them is not
            start += 1
        end_re = _PUTTY_END if m.group().startswith("PuTTY") else _KEY_END
        tail = end_re.search(text, m.end()) or _KEY_BODY.match(text, m.end())
        assert tail is not None  # _KEY_BODY matches the empty string
        yield start, tail.end(), "private-key"


# ---- passwords in URLs, headers, command lines --------------------------------------------------

# A URL's password: everything between ``user:`` and the last ``@`` before a host, whatever
# characters it holds (people paste ``p@ss!&$`` unescaped).
_URL_PASSWORD = re.compile(
    r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@\"'`<>]*:([^\s\"'`<>]+)@[A-Za-z0-9\[][A-Za-z0-9.\-\]]*"
    r"(?=[:/?#\s\"'`<>),;]|\Z)"
)
# A template, a mask or the word itself (``{password}``, ``${PASS}``, ``<pw>``, ``%s``,
# ``****``, ``user:pass@host``) is not a secret: code and docs are full of them.
_PLACEHOLDER = re.compile(
    r"\[REDACTED:[a-z0-9-]+\]|redacted-[a-z0-9-]+|\$\{.*|\$\(.*|\$[A-Za-z_][A-Za-z0-9_]*|%\(?\w*\)?[sdr]|%[A-Za-z_]+%|\{\{.*|<[^<>]*>"
    r"|.*\{[A-Za-z_][\w.]*\}.*|.*\$\{[^}]*\}.*|\**|x+|X+|\.+|pass|password|passwd|pwd|pw|secret"
    r"|token|[a-z]+_?pass|(?:your|my|the)[_\-]?\w*|changeme|change[_\-]me|example\w*|dummy"
    r"|redacted|placeholder|null|none|nil|undefined|true|false|todo|fixme|test|\*+\w*\**",
    re.IGNORECASE,
)
_CURL_USER = re.compile(r"(?:\s-u|--user)[ =]['\"]?[^\s:'\"]+:([^\s'\"]+)")
_SSHPASS = re.compile(r"sshpass\s+-p\s*(['\"]?)([^\s'\"]+)\1")
_NETRC = re.compile(r"\blogin[ \t]+\S+[ \t]+password[ \t]+(\S+)")
_AUTH_SCHEME = re.compile(
    r"\b(?:Bearer|Token|Bot|Digest|token|bearer)[ \t]+"
    r"([A-Za-z0-9_\-~+/]{16,}(?:\.[A-Za-z0-9_\-~+/]+)*=*)"
)
_BASIC = re.compile(r"\b[Bb]asic[ \t]+([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])")


def _basic_valid(value: str) -> bool:
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in raw


# ---- a value given to a secret's name -----------------------------------------------------------

# Where a name may say secret: found fast, then read around by hand.
_STEM = re.compile(
    r"key|secret|token|passw|pass\b|pass_|passphrase|pwd|cred|auth|sig|_pw\b|PASS|KEY|TOKEN|SECRET|AUTH|Key|Token|Secret|Pass|Auth|PWD|Pwd|CRED|Cred|SIG|Sig",
)
_NAME_CHAR = re.compile(r"[A-Za-z0-9_.\-]")
_NAME_TAIL = re.compile(r"[A-Za-z0-9_.\-]*")
_CAMEL = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_SECRET_PARTS = {
    "key", "apikey", "secret", "secrets", "token", "password", "passwd", "pwd", "pw",
    "passphrase", "passcode", "credential", "credentials", "cred", "creds", "auth", "authtoken",
    "authorization", "oauth", "sig", "signature", "accesskey", "secretkey", "privatekey",
    "apitoken", "accesstoken", "refreshtoken", "authkey", "pat", "dsn", "masterkey",
    "secretaccesskey",
}  # fmt: skip
# What may follow the secret's part at the end of a name: ``private_key_id``,
# ``SECRET_KEY_BASE``, ``token_value``, ``key_b64`` (``key_file`` or ``token_type`` name
# something about the secret, not the secret).
_TAIL_PARTS = {
    "base", "b64", "base64", "value", "str", "string", "hex", "data", "raw", "plain",
    "encoded", "enc", "v1", "v2", "secret", "prod", "dev", "live", "test",
}  # fmt: skip
# After the name: a separator, then the value quoted or bare.
_ASSIGN = re.compile(
    r"""(?P<nq>["'`\]]?)(?:[ \t]*\[[^\]\n]{0,24}\])?[ \t]*(?:  # aws configure: Key [None]:
          (?P<op>:=|=>|==|=|:(?=[ \t"'`])|\s+is:?|\s+was:?|\s+are:?)[ \t]*
        | (?P<xml>>)
        | (?P<ws>[ \t]+)
    )(?:
          "(?P<dq>[^"\n]{1,1000})"
        | '(?P<sq>[^'\n]{1,1000})'
        | `(?P<bq>[^`\n]{1,1000})`
        | (?P<bare>[^\s"'`<>]{1,1000})
    )""",
    re.VERBOSE,
)
_TRAILING = ".,;:)]}!?"
# Code, not a value (judged on bare values only: in quotes it is a string).
_CODE_VALUE = re.compile(
    r"[a-z_][\w.]*[(\[].*|[A-Za-z_$][\w$.]*(?:\(.*\)|\(|\[.*)"  # a call, a subscript, a type
    r"|[(\[{].*"  # a tuple, list or dict
    r"|(?:process|os|self|this|cls|config|settings|env|cfg|args|options|opts|ctx|request)\W.*"
    r"|[A-Z][a-z]+(?:[A-Z][a-z]+)*[,)]*"  # a type: password: SecretStr
)
# Not a secret, quoted or not: numbers, words, CONSTANTS, file names, paths, URLs.
_NOT_SECRET = re.compile(
    r"\d+(?:\.\d+)?[a-z%]{0,3}|0x[0-9a-fA-F]+|[a-z]+[a-z_\-]*|[A-Z][A-Z_]*[A-Z]"
    r"|[A-Za-z_$][A-Za-z_]*(?:\.[A-Za-z_][A-Za-z_]*)+"  # settings.SECRET_KEY
    r"|[\w./\-~]*\.(?:pem|key|json|txt|yaml|yml|env|crt|p12|pfx|asc|gpg|p8|jks)"
    r"|/[\w./\-]*|~/[\w./\-]*|[A-Za-z]:\\.*|https?://.*"
)
_SNAKE = re.compile(r"_?[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
_DOTTED = re.compile(r"[A-Za-z_$]\w*(?:\.[A-Za-z_]\w*)+")
_ALPHA_RUN = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_LONE_NAMES = {"key", "auth", "sig", "signature", "cred", "token"}
_WS_NAMES = {"secret", "token", "key", "password", "passwd", "apikey", "api-key", "api_key"}
_SCHEME_WORDS = {"bearer", "basic", "token", "bot", "digest", "apikey", "key"}


def _name_at(text: str, at: int) -> tuple[int, int]:
    """The bounds of the name-like word around position ``at``."""
    start = at
    while start > 0 and _NAME_CHAR.match(text, start - 1):
        start -= 1
    m = _NAME_TAIL.match(text, at)
    assert m is not None
    return start, m.end()


def _secret_name(name: str) -> bool:
    """A name whose last part says secret (``DB_PASSWORD``, ``apiKey``, ``x-api-key``), or
    the one before it with a tail such as ``_id`` of a private key or ``_base``; never a
    public key's."""
    parts = [p.lower() for p in _CAMEL.findall(name)]
    if not parts or "public" in parts:
        return False

    def says(p: str) -> bool:
        return p in _SECRET_PARTS or p.endswith(("secret", "password", "passwd", "token"))

    if says(parts[-1]):
        return True
    if len(parts) >= 2 and says(parts[-2]):
        return parts[-1] in _TAIL_PARTS or (parts[-1] == "id" and "private" in parts)
    return False


def _class(c: str) -> int:
    return 0 if c.islower() else 1 if c.isupper() else 2 if c.isdigit() else 3


def _wordy(value: str) -> bool:
    """Made of words (``sha256WithRSAEncryption``, ``ConvertTo-SecureString``, ``hunter2``):
    few changes of character class (a capital starting a word is none), 70 % of it in runs
    of 3 or more letters, and a quarter of its letters vowels. Measured on random bodies of
    the alphabets keys use: under 1.2 % of 12-character mixed-case ones pass as words."""
    changes = sum(
        _class(a) != _class(b) and not (_class(a) == 1 and _class(b) == 0)
        for a, b in itertools.pairwise(value)
    )
    if changes >= 0.22 * max(len(value) - 1, 1):
        return False
    if sum(len(r) for r in _ALPHA_RUN.findall(value) if len(r) >= 3) < 0.7 * len(value):
        return False
    letters = [c for c in value if c.isalpha()]
    return sum(c in "aeiouAEIOU" for c in letters) >= 0.25 * len(letters)


def _made_up(value: str, strict: bool, password: bool = False, bare: bool = False) -> bool:
    """A value that looks made up, not a word, a placeholder or code. ``strict`` (prose, a
    bare space before it): letters and digits, 12 or more, not words. ``password``: a
    password's name before it, where words with a digit or a symbol are enough."""
    if len(value) < (12 if strict else 6) or len(value) > 1000:
        return False
    if _PLACEHOLDER.fullmatch(value) or _NOT_SECRET.fullmatch(value):
        return False
    if bare and _CODE_VALUE.fullmatch(value):
        return False
    if bare and _SNAKE.fullmatch(value) and not (password and any(c.isdigit() for c in value)):
        return False  # an identifier in code: key = key_b64_encoded
    if not password and _DOTTED.fullmatch(value):
        return False  # a type or an attribute: ed25519.Ed25519PrivateKey
    if len(set(value)) < 5 or " " in value:
        return False
    digits = sum(c.isdigit() for c in value)
    letters = sum(c.isalpha() for c in value)
    symbols = len(value) - digits - letters - sum(value.count(c) for c in "_-.")
    if letters == 0:
        return len(value) >= 12  # a long number: a PIN-like key (not a price: $1,200)
    if strict:
        return digits > 0 and letters > 0 and not _wordy(value)
    if password:
        return digits > 0 or symbols > 0 or not _wordy(value)
    if _wordy(value):
        return False
    mixed_case = any(c.isupper() for c in value) and any(c.islower() for c in value)
    return digits > 0 or symbols > 0 or (len(value) >= 16 and mixed_case)


def _assignments(text: str) -> Iterable[tuple[int, int, str]]:
    seen_end = -1
    for stem in _STEM.finditer(text):
        if stem.start() < seen_end:
            continue
        n_start, n_end = _name_at(text, stem.start())
        seen_end = n_end
        name = text[n_start:n_end].strip(".-").rsplit(".", 1)[-1]
        if not _secret_name(name):
            continue
        m = _ASSIGN.match(text, n_end)
        if m is None:
            continue
        if m.group("xml") is not None and (
            n_start == 0 or text[n_start - 1] != "<" or not text.startswith("</", m.end())
        ):
            continue
        if m.group("ws") is not None and not (name.startswith("-") or name.lower() in _WS_NAMES):
            continue  # ``the secret sauce``: a bare space only after a flag or the word alone
        group = next(g for g in ("dq", "sq", "bq", "bare") if m.group(g) is not None)
        v_start, v_end = m.span(group)
        value = m.group(group)
        if group == "bare":
            if _CODE_VALUE.fullmatch(value):
                continue  # judged before trailing brackets go: FuncSignature(args)
            # In a query string or a connection string a value ends at the next pair.
            if n_start > 0 and text[n_start - 1] in "?&;":
                cut = re.search(r"[&;#]", value)
                if cut:
                    v_end = v_start + cut.start()
            while v_end > v_start and text[v_end - 1] in _TRAILING:
                v_end -= 1
            value = text[v_start:v_end]
        if m.group("xml") is not None and group == "bare":
            close = text.find("<", v_start)
            v_end = close if close != -1 else v_end
            value = text[v_start:v_end]
        # A scheme word first (``Authorization: Bearer abc``): the token after it.
        words = value.split(None, 1)
        scheme = bool(words) and words[0].lower() in _SCHEME_WORDS
        if scheme:
            if len(words) == 1:
                after = re.match(r"[ \t]+([^\s\"'`<>,;]+)", text[v_end:])
                if after is None:
                    continue
                v_start, v_end = v_end + after.start(1), v_end + after.end(1)
                value = after.group(1)
            else:
                v_start += len(value) - len(words[1])
                value = words[1]
        # A bare space or prose before the value, or a name that is only ``key``, ``auth``,
        # ``sig`` (a dict's key, a header's): the value must be a random mix to count.
        strict = (
            m.group("ws") is not None
            or (m.group("op") or "").strip(" \t:") in ("is", "was", "are")
            or name.lower() in _LONE_NAMES
        )
        lower = name.lower()
        password = "pass" in lower or "pwd" in lower or lower.endswith("pw")
        lenient = password or scheme  # a token after Bearer may hold dots
        if (
            value.startswith("--")
            or len(value) <= 3
            or not _made_up(value, strict, lenient, group == "bare")
        ):
            continue
        if password:
            kind = "password"
        elif "aws" in lower and "secret" in lower:
            kind = "aws-secret-key"
        else:
            kind = "secret"
        yield v_start, v_start + len(value), kind


def keyed_secret(name: str, value: str) -> str | None:
    """The kind of secret ``value`` is when a mapping gives it under ``name`` (metadata
    ``{"password": "..."}``, ``{"api_key": "..."}``), else None."""
    if not _secret_name(name) or " " in value.strip():
        return None
    lower = name.lower()
    password = "pass" in lower or "pwd" in lower or lower.endswith("pw")
    strict = lower in _LONE_NAMES
    if not _made_up(value.strip(), strict, password):
        return None
    return "password" if password else "secret"


# ---- all of it ----------------------------------------------------------------------------------


_GENERIC = {"token", "secret", "password"}  # kinds a provider's own name beats when both match


def spans(text: str) -> list[tuple[int, int, str]]:
    """Where the secrets in ``text`` are: ``(start, end, kind)``, sorted, overlaps merged
    (the first kind found at a place names the merged span)."""
    found = list(_key_blocks(text))
    for shape in SHAPES:
        if not any(h in text for h in shape.hints):
            continue
        for m in shape.pattern.finditer(text):
            start, end = m.span(shape.group)
            if shape.tail:
                tail = _TAIL.match(text, end)
                assert tail is not None
                end = tail.end()
            if shape.valid is not None and not shape.valid(text[start:end]):
                continue
            found.append((start, end, shape.kind))
    if "://" in text:
        for m in _URL_PASSWORD.finditer(text):
            if _PLACEHOLDER.fullmatch(m.group(1)) is None:
                found.append((*m.span(1), "password"))
    if "-u" in text or "--user" in text:
        for m in _CURL_USER.finditer(text):
            if _PLACEHOLDER.fullmatch(m.group(1)) is None:
                found.append((*m.span(1), "password"))
    if "sshpass" in text:
        found += [(*m.span(2), "password") for m in _SSHPASS.finditer(text)]
    if "login" in text:
        found += [(*m.span(1), "password") for m in _NETRC.finditer(text)]
    for m in _AUTH_SCHEME.finditer(text):
        if _made_up(m.group(1), False, True):
            found.append((*m.span(1), "token"))
    for m in _BASIC.finditer(text):
        if _basic_valid(m.group(1)):
            found.append((*m.span(1), "password"))
    found += _assignments(text)
    found.sort(key=lambda f: (f[0], -f[1]))
    merged: list[tuple[int, int, str]] = []
    for start, end, kind in found:
        if merged and start < merged[-1][1]:  # inside or across the previous one: widen it
            prev = merged[-1]
            named = kind if prev[2] in _GENERIC and kind not in _GENERIC else prev[2]
            merged[-1] = (prev[0], max(prev[1], end), named)
        else:
            merged.append((start, end, kind))
    return merged
