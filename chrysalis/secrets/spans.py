"""Where the credentials are in a text: `spans(text)`, the rules `secrets_scan` redacts by.

Pure: no I/O. Chosen by measurement (``python bench/secrets_bench.py``, docs/benchmarks.md)
over detect-secrets with every plugin, Kingfisher and Betterleaks: three kinds of rule,

- **provider shapes** (`secrets_shapes.SHAPES`): a documented prefix and alphabet (``ghp_``,
  ``github_pat_``, ``sk-proj-``, ``sk-ant-``, ``AIza``, ``hf_``, ``xoxb-``, ...), and PEM
  blocks here. A match runs to the end of the token, so no tail of a longer key survives.
- **context**: a value given to a name that says key, secret, token, password, passwd, pwd,
  credential or auth, in every syntax people paste (``NAME=v``, ``export NAME="v"``,
  ``name = v``, ``name: v``, ``"name": "v"``, ``name := "v"``, ``'name' => 'v'``,
  ``ENV['NAME'] = 'v'``, ``define('NAME', 'v')``, ``| NAME | v |``, ``\\"v\\"`` inside JSON,
  ``<password>v</password>``, ``--token v``, ``name is v`` / ``set NAME to v`` /
  ``token → v`` / ``the token (v)`` in prose); a name and its value as two fields
  (``- name: X`` / ``value: v``, ``<add key="X" value="v"/>``); a Kubernetes Secret's
  ``data:``; cookies; ``Authorization:`` headers (Bearer, Basic, Token); a password in a
  URL of any scheme, in ``curl -u``, ``auth=(u, p)``, ``mysql -p``, ``docker login -p``.
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
from collections.abc import Iterable

from chrysalis.secrets.shapes import SHAPES, TAIL, mixed

__all__ = ["keyed_secret", "spans"]

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
# characters it holds (people paste ``p@ss!&$`` unescaped). Each part is bounded (a scheme of
# 32, a user and a password of 256, a host of 255): unbounded, every ``x://`` of a long line
# without spaces (a list of ``http://host:port`` joined by commas) scanned to the line's end,
# and a 60 kB line held the daemon 20 s.
_URL_PASSWORD = re.compile(
    r"[A-Za-z][A-Za-z0-9+.\-]{0,31}://[^\s:/@\"'`<>]{0,256}:([^\s\"'`<>]{1,256})@"
    r"[A-Za-z0-9\[][A-Za-z0-9.\-\]]{0,254}(?=[:/?#\s\"'`<>),;]|\Z)"
)
# A template, a mask or the word itself (``{password}``, ``${PASS}``, ``<pw>``, ``%s``,
# ``****``, ``user:pass@host``) is not a secret: code and docs are full of them.
_PLACEHOLDER = re.compile(
    r"\[REDACTED:[a-z0-9-]+\]|redacted-[a-z0-9-]+|\$\{.*|\$\(.*|\$[A-Za-z_][A-Za-z0-9_]*|%\(?\w*\)?[sdr]|%[A-Za-z_]+%|\{\{.*|<[^<>]*>"
    r"|.*\{[A-Za-z_][\w.]*\}.*|.*\$\{[^}]*\}.*|\**|x+|X+|\.+|pass|password|passwd|pwd|pw|secret"
    r"|token|[a-z]+_?pass|(?:your|my|the)(?:[_\-][\w\-]*|[a-z]*(?:key|token|secret|pass\w*|pwd|here)\w*)|changeme|change[_\-]me|example\w*|dummy"
    r"|redacted|placeholder|null|none|nil|undefined|true|false|todo|fixme|test|\*+\w*\**",
    re.IGNORECASE,
)
_CURL_USER = re.compile(r"(?:\s-u|--user)[ =]['\"]?[^\s:'\"]+:([^\s'\"]+)")
_SSHPASS = re.compile(r"sshpass\s+-p\s*(['\"]?)([^\s'\"]+)\1")
_NETRC = re.compile(r"\blogin[ \t]+\S+[ \t]+password[ \t]+(\S+)")
_AUTH_SCHEME = re.compile(
    r"\b(?:Bearer|Token|Bot|Digest|token|bearer)[ \t]+"
    r"([A-Za-z0-9_\-~+/!@#$%^&*]{16,}(?:\.[A-Za-z0-9_\-~+/!@#$%^&*]+)*=*)"
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
    "secretaccesskey", "sessionid", "sessid",
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
    r"""(?P<nq>\\?["'`]\]?|\])?(?:[ \t]*\[[^\]\n]{0,24}\])?[ \t]*(?:  # aws configure: Key [None]:
          (?P<op>:=|=>|==|=|:(?=[ \t"'`\\])|\s+is:?|\s+was:?|\s+are:?|\s+to:?(?=[ \t])
                |[ \t]*(?:->|→|⇒)|(?<=["'])[ \t]*,)[ \t]*  # set X to v; X → v; define('X', 'v')
        | (?P<xml>>)
        | (?P<pipe>[ \t]*\|[ \t]*)  # a table's row: | NAME | value |
        | (?P<ws>[ \t]+\(?)  # the token abc, the token (abc)
    )(?:
          "(?P<dq>[^"\n]{1,1000})"
        | '(?P<sq>[^'\n]{1,1000})'
        | `(?P<bq>[^`\n]{1,1000})`
        | \\"(?P<eq>[^"\\\n]{1,1000})\\"  # inside a JSON string: \"v\"
        | (?P<bare>[^\s"'`<>|]{1,1000})
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
    if parts[-1] == "pass" and len(parts) >= 2:  # SMTP_PASS, dbPass; never "a monthly pass"
        return True
    if parts[-2:] == ["session", "id"]:
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
    # Words split into runs of 3 or more (``ConvertTo``: one short run); a random mix of
    # cases breaks into many runs of 1 or 2 (``BKYPFAdEPycAGWig``: ``Ad``, ``E``, ``AG``).
    short = [r for r in _ALPHA_RUN.findall(value) if len(r) <= 2]
    if len(short) >= 3 and sum(map(len, short)) > 0.2 * len(letters):
        return False
    return sum(c in "aeiouAEIOU" for c in letters) >= 0.25 * len(letters)


def _random_path(value: str) -> bool:
    """A value that looks like a path but is a key: base64 may start with ``/``
    (``/6STnY5Z0pYfYh39/dQGcgFx8``), where a real path's parts are words."""
    return value.startswith("/") and any(
        len(part) >= 12 and mixed(part) and part != part.lower() and not _wordy(part)
        for part in value.split("/")
    )


def _made_up(value: str, strict: bool, password: bool = False, bare: bool = False) -> bool:
    """A value that looks made up, not a word, a placeholder or code. ``strict`` (prose, a
    bare space before it): letters and digits, 12 or more, not words. ``password``: a
    password's name before it, where words with a digit or a symbol are enough."""
    value = value.replace("\\_", "_")  # markdown's escaped underscores: \_wc\_rating
    if len(value) < (12 if strict and not password else 6) or len(value) > 1000:
        return False
    if _PLACEHOLDER.fullmatch(value) or (_NOT_SECRET.fullmatch(value) and not _random_path(value)):
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
    if strict and password:  # "the password is Harbor391$": 8 or more, not only letters
        return len(value) >= 8 and digits > 0 and letters > 0
    if strict:
        mixed_case = any(c.isupper() for c in value) and any(c.islower() for c in value)
        # letters only: a long random mix of cases (a Vercel or Mistral key), never code
        letters_only = len(value) >= 20 and mixed_case and value.isalpha()
        return (digits > 0 or letters_only) and letters > 0 and not _wordy(value)
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
        op = (m.group("op") or "").strip(" \t:")
        if op == "," and m.group("bare") is not None:
            continue  # f(name, value): only two string literals, define('X', 'v')
        if m.group("pipe") is not None and not re.search(r"\|[ \t]*$", text[:n_start]):
            continue  # a table's cell holds the name: | NAME | value |
        group = next(g for g in ("dq", "sq", "bq", "eq", "bare") if m.group(g) is not None)
        v_start, v_end = m.span(group)
        value = m.group(group)
        if group == "bare":
            if _CODE_VALUE.fullmatch(value) and value.lower() not in _SCHEME_WORDS:
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
            or op in ("is", "was", "are", "to", "->", "→", "⇒")
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


# A name and its value given as two fields: a Kubernetes env entry (``- name: X`` then
# ``value: v``), .NET's ``<add key="X" value="v" />``, JSON ``{"name": "X", "value": "v"}``.
_PAIR = re.compile(
    r"""\b(?:name|key|Name|Key|NAME|KEY)["']?[ \t]*[:=][ \t]*
        ["']?(?P<name>[A-Za-z0-9_.\-]{2,100})["']?[ \t]*[,;]?[ \t]*(?:\r?\n[ \t\-]*)?
        ["']?(?:value|Value|VALUE)["']?[ \t]*[:=][ \t]*
        (?:"(?P<dq>[^"\n]{1,1000})"|'(?P<sq>[^'\n]{1,1000})'|(?P<bare>[^\s"'`<>,}]{1,1000}))""",
    re.VERBOSE,
)


def _pairs(text: str) -> Iterable[tuple[int, int, str]]:
    if "alue" not in text and "ALUE" not in text:
        return
    for m in _PAIR.finditer(text):
        group = next(g for g in ("dq", "sq", "bare") if m.group(g) is not None)
        kind = keyed_secret(m.group("name"), m.group(group), bare=group == "bare")
        if kind is not None:
            yield (*m.span(group), kind)


# A Kubernetes Secret's ``data:`` holds base64 values, whatever their names: each is secret.
_K8S_DATA = re.compile(r"^(?P<indent>[ \t]*)data:[ \t]*\r?\n", re.MULTILINE)
_K8S_ITEM = re.compile(
    r"(?P<indent>[ \t]+)[A-Za-z0-9_.\-]+:[ \t]+(?P<v>[A-Za-z0-9+/]{4,}={0,2})[ \t]*$"
)


def _k8s_data(text: str) -> Iterable[tuple[int, int, str]]:
    if "data:" not in text or not re.search(r"kind:[ \t]*[\"']?Secret\b", text):
        return
    for block in _K8S_DATA.finditer(text):
        at, indent = block.end(), None
        for line in text[at:].splitlines(keepends=True):
            m = _K8S_ITEM.match(line.rstrip("\r\n"))
            if m is None or len(m.group("indent")) <= len(block.group("indent")):
                break
            if indent is not None and m.group("indent") != indent:
                break
            indent = m.group("indent")
            yield at + m.start("v"), at + m.end("v"), "secret"
            at += len(line)


# Cookies: every pair in a ``Cookie:`` header, the first of a ``Set-Cookie:``, ``curl -b``,
# ``document.cookie = "..."`` (a session id has no telling name: ``sid``, ``connect.sid``).
_COOKIE = re.compile(
    r"(?:\b[Ss]et-[Cc]ookie|\b[Cc]ookie)[ \t]*:[ \t]*(?P<h>[^\n\"'`]+)"
    r"|(?:\s(?:-b|--cookie)[ \t]+|\bcookie[ \t]*=[ \t]*)[\"'](?P<q>[^\"'\n]+)"
)
_COOKIE_PAIR = re.compile(r"(?:^|;)[ \t]*[A-Za-z0-9_.\-]+=(?P<v>[^;\s]+)")
_COOKIE_ATTRS = re.compile(r"(?i)(?:path|domain|expires|max-age|samesite|priority|version)")


def _cookies(text: str) -> Iterable[tuple[int, int, str]]:
    if "ookie" not in text and " -b " not in text:
        return
    for m in _COOKIE.finditer(text):
        group = "h" if m.group("h") is not None else "q"
        base = m.start(group)
        for pair in _COOKIE_PAIR.finditer(m.group(group)):
            name = pair.group(0).lstrip("; \t").split("=", 1)[0]
            value = pair.group("v")
            if _COOKIE_ATTRS.fullmatch(name) or not _made_up(value, False, True):
                continue
            yield base + pair.start("v"), base + pair.end("v"), "session"


# Passwords given to a tool as its arguments: ``auth=('user', 'pw')``, ``HTTPBasicAuth(...)``,
# httpie ``-a user:pw``, ``mysql -p'pw'``, ``docker login -p pw``.
# (hint, pattern): each is run only on a text holding its hint (most texts hold none).
_ARG_PASSWORDS = (
    (
        "Auth",
        re.compile(
            r"""\b(?:auth[ \t]*=[ \t]*\(|\w*BasicAuth\()[ \t]*(["'])[^"'\n]*\1[ \t]*,"""
            r"""[ \t]*(["'])(?P<v>[^"'\n]+)\2""",
            re.IGNORECASE,
        ),
    ),
    (
        "http",
        re.compile(
            r"""\bhttps?[ \t]+(?:-\S+[ \t]+)*(?:-a|--auth)[ \t=]+['"]?[^\s:'"]+:(?P<v>[^\s'"]+)"""
        ),
    ),
    (
        "mysql",
        re.compile(
            r"""\bmysql(?:dump|admin|sh)?\b[^\n]*?[ \t]-p(?P<q>['"]?)(?P<v>[^\s'"]+)(?P=q)"""
        ),
    ),
    (
        "login",
        re.compile(
            r"""\b(?:docker|podman|helm\s+registry|oras)\s+login\b[^\n]*?"""
            r"""[ \t](?:-p|--password)[ \t=]+(?P<q>['"]?)(?P<v>[^\s'"]+)(?P=q)"""
        ),
    ),
)


# "my session id is ...": a session's id, token or cookie named in prose.
_SESSION_PROSE = re.compile(
    r"\b[Ss]ession[ _\-]?(?:id|ID|token|cookie|key)[ \t]*(?:[:=]|is|was)[ \t]*"
    r"[\"'`]?(?P<v>[A-Za-z0-9_\-%.+/=]+)"
)


def _arg_passwords(text: str) -> Iterable[tuple[int, int, str]]:
    for m in _SESSION_PROSE.finditer(text) if "ession" in text else ():
        value = m.group("v").rstrip(_TRAILING)
        if _made_up(value, True):
            yield m.start("v"), m.start("v") + len(value), "session"
    for hint, pattern in _ARG_PASSWORDS:
        if hint not in text and hint.lower() not in text:
            continue
        for m in pattern.finditer(text):
            if _PLACEHOLDER.fullmatch(m.group("v")) is None and len(m.group("v")) >= 4:
                yield (*m.span("v"), "password")


def keyed_secret(name: str, value: str, *, bare: bool = False) -> str | None:
    """The kind of secret ``value`` is when a mapping gives it under ``name`` (metadata
    ``{"password": "..."}``, ``{"api_key": "..."}``), else None. ``bare``: the value was
    not quoted, so it may be code (``value: os.environ["X"]``)."""
    if not _secret_name(name) or " " in value.strip():
        return None
    lower = name.lower()
    password = "pass" in lower or "pwd" in lower or lower.endswith("pw")
    strict = lower in _LONE_NAMES
    if not _made_up(value.strip(), strict, password, bare):
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
                tail = TAIL.match(text, end)
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
    found += _pairs(text)
    found += _k8s_data(text)
    found += _cookies(text)
    found += _arg_passwords(text)
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
