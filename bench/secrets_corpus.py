"""A corpus of credentials as people paste them to agents, generated: `cases(seed)`.

Every credential is built from its provider's documented shape (prefix, alphabet, length)
with a random body drawn from ``random.Random(seed)``: no real key, and a new seed gives a new
corpus of the same kind (the bench scores one seed, tests another). Each credential is then
rendered in every way it gets pasted: a ``.env`` line, ``export``, INI, YAML, JSON, TOML,
code in three languages, prose, a fenced block, a URL, a header, a curl command, a CLI flag.

A `Case` holds the text and the ``secrets`` in it: the pieces of which nothing may survive
(for a connection string, its password; for a PEM block, its base64 lines). `survivors`
says which of them left a trace of 4 or more characters in a redacted text.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["Case", "cases", "survivors"]

ALNUM = string.ascii_letters + string.digits
UPPER_NUM = string.ascii_uppercase + string.digits
B32 = string.ascii_uppercase + "234567"
HEX = "0123456789abcdef"
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"
LOWER_NUM = string.ascii_lowercase + string.digits


@dataclass(frozen=True)
class Case:
    kind: str  # the credential's kind, e.g. "openai-project-key"
    style: str  # how it was pasted, e.g. "env", "yaml", "prose"
    text: str
    secrets: tuple[str, ...]


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _password(rng: random.Random) -> str:
    """A password a person picks: words, digits and symbols (incl. URL-hostile ones)."""
    words = ["Sup3r", "blue", "Horse", "batt3ry", "Winter", "dragon", "Mango", "kitten", "Zeb"]
    symbols = "!$&*#%^@()+=,;?~-_."
    shape = rng.randrange(4)
    if shape == 0:
        return rng.choice(words) + _r(rng, string.digits, 2) + rng.choice(symbols) + "pass"
    if shape == 1:
        return _r(rng, ALNUM + symbols, rng.randrange(10, 24))
    if shape == 2:
        return (
            rng.choice(words) + rng.choice(symbols) + rng.choice(words) + _r(rng, "0123456789", 3)
        )
    return _r(rng, ALNUM, rng.randrange(12, 20)) + rng.choice("!$&*#%@")


def _pem(rng: random.Random, label: str, lines: int) -> tuple[str, list[str]]:
    body = [_r(rng, B64, 64) for _ in range(lines - 1)] + [_r(rng, B64, 40) + "=="]
    block = "\n".join([f"-----BEGIN {label}-----", *body, f"-----END {label}-----"])
    return block, body


def _jwt(rng: random.Random) -> str:
    def part(obj: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

    head = part({"alg": "HS256", "typ": "JWT"})
    body = part({"sub": _r(rng, string.digits, 10), "name": "Ada", "iat": 1516239022})
    return f"{head}.{body}.{_r(rng, URLSAFE, 43)}"


# ---- the credentials: (kind, variable name, a describing phrase, value maker) -----------------
# A value maker returns (value, secrets): what gets pasted and what must not survive.
Maker = Callable[[random.Random], tuple[str, tuple[str, ...]]]


def _token(fn: Callable[[random.Random], str]) -> Maker:
    def make(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        v = fn(rng)
        return v, (v,)

    return make


def _openai_project(rng: random.Random) -> str:
    return f"sk-proj-{_r(rng, URLSAFE, 74)}T3BlbkFJ{_r(rng, URLSAFE, 74)}"


def _db_url(scheme: str, port: int) -> Maker:
    def make(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        pw = _password(rng)
        user = rng.choice(["app", "admin", "ada", "svc_api", "postgres"])
        host = rng.choice(["db.internal", "10.0.3.12", "prod-db.example.com", "localhost"])
        return f"{scheme}://{user}:{pw}@{host}:{port}/{rng.choice(['app', 'main', 'prod'])}", (pw,)

    return make


def _azure_conn(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    key = _r(rng, B64, 86) + "=="
    return (
        f"DefaultEndpointsProtocol=https;AccountName=acme{_r(rng, LOWER_NUM, 6)};"
        f"AccountKey={key};EndpointSuffix=core.windows.net",
        (key,),
    )


def _slack_webhook(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    tail = _r(rng, ALNUM, 24)
    path = f"T{_r(rng, UPPER_NUM, 8)}/B{_r(rng, UPPER_NUM, 10)}/{tail}"
    return f"https://hooks.slack.com/services/{path}", (tail,)


def _discord_webhook(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    tail = _r(rng, URLSAFE, 68)
    return f"https://discord.com/api/webhooks/{_r(rng, string.digits, 18)}/{tail}", (tail,)


def _sentry_dsn(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    key = _r(rng, HEX, 32)
    return (
        f"https://{key}@o{_r(rng, string.digits, 6)}.ingest.sentry.io/{_r(rng, string.digits, 7)}",
        (key,),
    )


def _basic(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    raw = f"ada:{_password(rng)}"
    enc = base64.b64encode(raw.encode()).decode()
    return f"Basic {enc}", (enc,)


def _bearer(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    tok = rng.choice([_r(rng, ALNUM, 40), _r(rng, URLSAFE, 32) + "." + _r(rng, URLSAFE, 20)])
    return f"Bearer {tok}", (tok,)


CREDENTIALS: tuple[tuple[str, str, str, Maker], ...] = (
    (
        "aws-access-key-id",
        "AWS_ACCESS_KEY_ID",
        "AWS access key id",
        _token(lambda r: "AKIA" + _r(r, B32, 16)),
    ),
    (
        "aws-temp-key-id",
        "AWS_ACCESS_KEY_ID",
        "AWS access key",
        _token(lambda r: "ASIA" + _r(r, B32, 16)),
    ),
    (
        "aws-secret-key",
        "AWS_SECRET_ACCESS_KEY",
        "AWS secret access key",
        _token(lambda r: _r(r, B64, 40)),
    ),
    (
        "aws-session-token",
        "AWS_SESSION_TOKEN",
        "AWS session token",
        _token(lambda r: "IQoJb3JpZ2luX2Vj" + _r(r, B64, 300)),
    ),
    ("github-classic", "GITHUB_TOKEN", "GitHub token", _token(lambda r: "ghp_" + _r(r, ALNUM, 36))),
    ("github-oauth", "GH_TOKEN", "GitHub OAuth token", _token(lambda r: "gho_" + _r(r, ALNUM, 36))),
    (
        "github-app",
        "GITHUB_APP_TOKEN",
        "GitHub app token",
        _token(lambda r: r.choice(["ghu_", "ghs_"]) + _r(r, ALNUM, 36)),
    ),
    (
        "github-refresh",
        "GITHUB_REFRESH_TOKEN",
        "GitHub refresh token",
        _token(lambda r: "ghr_" + _r(r, ALNUM, 76)),
    ),
    (
        "github-long",
        "GITHUB_TOKEN",
        "GitHub token",
        _token(lambda r: "ghp_" + _r(r, ALNUM, r.randrange(40, 60))),
    ),
    (
        "github-fine-grained",
        "GITHUB_PAT",
        "GitHub fine-grained token",
        _token(lambda r: f"github_pat_{_r(r, ALNUM, 22)}_{_r(r, ALNUM, 59)}"),
    ),
    (
        "gitlab-pat",
        "GITLAB_TOKEN",
        "GitLab token",
        _token(lambda r: "glpat-" + _r(r, URLSAFE, r.choice([20, 20, 38]))),
    ),
    (
        "gitlab-other",
        "CI_JOB_TOKEN",
        "GitLab token",
        _token(lambda r: r.choice(["glrt-", "gldt-", "glptt-", "glcbt-"]) + _r(r, URLSAFE, 20)),
    ),
    (
        "slack-bot",
        "SLACK_BOT_TOKEN",
        "Slack bot token",
        _token(
            lambda r: (
                f"xoxb-{_r(r, string.digits, 12)}-{_r(r, string.digits, 13)}-{_r(r, ALNUM, 24)}"
            )
        ),
    ),
    (
        "slack-user",
        "SLACK_TOKEN",
        "Slack user token",
        _token(
            lambda r: (
                f"xoxp-{_r(r, string.digits, 12)}-{_r(r, string.digits, 12)}-"
                f"{_r(r, string.digits, 13)}-{_r(r, HEX, 32)}"
            )
        ),
    ),
    (
        "slack-app",
        "SLACK_APP_TOKEN",
        "Slack app token",
        _token(
            lambda r: f"xapp-1-A{_r(r, UPPER_NUM, 10)}-{_r(r, string.digits, 13)}-{_r(r, HEX, 64)}"
        ),
    ),
    ("slack-webhook", "SLACK_WEBHOOK_URL", "Slack webhook", _slack_webhook),
    (
        "stripe-secret",
        "STRIPE_SECRET_KEY",
        "Stripe secret key",
        _token(lambda r: r.choice(["sk_live_", "sk_test_"]) + _r(r, ALNUM, r.choice([24, 99]))),
    ),
    (
        "stripe-restricted",
        "STRIPE_KEY",
        "Stripe restricted key",
        _token(lambda r: r.choice(["rk_live_", "rk_test_"]) + _r(r, ALNUM, r.choice([24, 99]))),
    ),
    (
        "stripe-webhook",
        "STRIPE_WEBHOOK_SECRET",
        "Stripe webhook secret",
        _token(lambda r: "whsec_" + _r(r, ALNUM, 32)),
    ),
    (
        "openai-legacy",
        "OPENAI_API_KEY",
        "OpenAI key",
        _token(lambda r: f"sk-{_r(r, ALNUM, 20)}T3BlbkFJ{_r(r, ALNUM, 20)}"),
    ),
    ("openai-project", "OPENAI_API_KEY", "OpenAI key", _token(_openai_project)),
    (
        "openai-service",
        "OPENAI_API_KEY",
        "OpenAI service account key",
        _token(lambda r: f"sk-svcacct-{_r(r, URLSAFE, 74)}T3BlbkFJ{_r(r, URLSAFE, 74)}"),
    ),
    (
        "openai-admin",
        "OPENAI_ADMIN_KEY",
        "OpenAI admin key",
        _token(lambda r: f"sk-admin-{_r(r, URLSAFE, 74)}T3BlbkFJ{_r(r, URLSAFE, 74)}"),
    ),
    (
        "anthropic",
        "ANTHROPIC_API_KEY",
        "Anthropic key",
        _token(lambda r: f"sk-ant-api03-{_r(r, URLSAFE, 93)}AA"),
    ),
    (
        "anthropic-admin",
        "ANTHROPIC_ADMIN_KEY",
        "Anthropic admin key",
        _token(lambda r: f"sk-ant-admin01-{_r(r, URLSAFE, 93)}AA"),
    ),
    (
        "openrouter",
        "OPENROUTER_API_KEY",
        "OpenRouter key",
        _token(lambda r: "sk-or-v1-" + _r(r, HEX, 64)),
    ),
    (
        "google-api",
        "GOOGLE_API_KEY",
        "Google API key",
        _token(lambda r: "AIza" + _r(r, URLSAFE, 35)),
    ),
    (
        "google-oauth-secret",
        "GOOGLE_CLIENT_SECRET",
        "Google client secret",
        _token(lambda r: "GOCSPX-" + _r(r, URLSAFE, 28)),
    ),
    (
        "huggingface",
        "HF_TOKEN",
        "Hugging Face token",
        _token(lambda r: "hf_" + _r(r, string.ascii_letters, 34)),
    ),
    ("npm", "NPM_TOKEN", "npm token", _token(lambda r: "npm_" + _r(r, ALNUM, 36))),
    (
        "pypi",
        "PYPI_TOKEN",
        "PyPI token",
        _token(lambda r: "pypi-AgEIcHlwaS5vcmc" + _r(r, URLSAFE, 160)),
    ),
    (
        "sendgrid",
        "SENDGRID_API_KEY",
        "SendGrid key",
        _token(lambda r: f"SG.{_r(r, URLSAFE, 22)}.{_r(r, URLSAFE, 43)}"),
    ),
    ("twilio-api-key", "TWILIO_API_KEY", "Twilio API key", _token(lambda r: "SK" + _r(r, HEX, 32))),
    (
        "twilio-auth-token",
        "TWILIO_AUTH_TOKEN",
        "Twilio auth token",
        _token(lambda r: _r(r, HEX, 32)),
    ),
    ("mailgun", "MAILGUN_API_KEY", "Mailgun key", _token(lambda r: "key-" + _r(r, LOWER_NUM, 32))),
    (
        "mailchimp",
        "MAILCHIMP_API_KEY",
        "Mailchimp key",
        _token(lambda r: _r(r, HEX, 32) + "-us" + str(r.randrange(1, 21))),
    ),
    (
        "discord-bot",
        "DISCORD_TOKEN",
        "Discord bot token",
        _token(lambda r: f"M{_r(r, ALNUM, 25)}.{_r(r, URLSAFE, 6)}.{_r(r, URLSAFE, 38)}"),
    ),
    ("discord-webhook", "DISCORD_WEBHOOK", "Discord webhook", _discord_webhook),
    (
        "telegram-bot",
        "TELEGRAM_BOT_TOKEN",
        "Telegram bot token",
        _token(lambda r: f"{_r(r, string.digits, 10)}:AA{_r(r, URLSAFE, 33)}"),
    ),
    ("jwt", "ACCESS_TOKEN", "access token", _token(_jwt)),
    (
        "azure-storage",
        "AZURE_STORAGE_CONNECTION_STRING",
        "Azure storage connection string",
        _azure_conn,
    ),
    (
        "azure-client-secret",
        "AZURE_CLIENT_SECRET",
        "Azure client secret",
        _token(lambda r: f"{_r(r, ALNUM, 3)}{r.randrange(10)}Q~{_r(r, URLSAFE + '.~', 34)}"),
    ),
    (
        "digitalocean",
        "DIGITALOCEAN_TOKEN",
        "DigitalOcean token",
        _token(lambda r: "dop_v1_" + _r(r, HEX, 64)),
    ),
    (
        "shopify",
        "SHOPIFY_ACCESS_TOKEN",
        "Shopify token",
        _token(lambda r: r.choice(["shpat_", "shpca_", "shppa_", "shpss_"]) + _r(r, HEX, 32)),
    ),
    ("linear", "LINEAR_API_KEY", "Linear key", _token(lambda r: "lin_api_" + _r(r, ALNUM, 40))),
    (
        "notion",
        "NOTION_TOKEN",
        "Notion token",
        _token(lambda r: r.choice(["secret_" + _r(r, ALNUM, 43), "ntn_" + _r(r, ALNUM, 46)])),
    ),
    ("vault", "VAULT_TOKEN", "Vault token", _token(lambda r: "hvs." + _r(r, URLSAFE, 90))),
    (
        "databricks",
        "DATABRICKS_TOKEN",
        "Databricks token",
        _token(lambda r: "dapi" + _r(r, HEX, 32)),
    ),
    ("groq", "GROQ_API_KEY", "Groq key", _token(lambda r: "gsk_" + _r(r, ALNUM, 52))),
    (
        "replicate",
        "REPLICATE_API_TOKEN",
        "Replicate token",
        _token(lambda r: "r8_" + _r(r, ALNUM, 37)),
    ),
    (
        "perplexity",
        "PERPLEXITY_API_KEY",
        "Perplexity key",
        _token(lambda r: "pplx-" + _r(r, ALNUM, 48)),
    ),
    ("xai", "XAI_API_KEY", "xAI key", _token(lambda r: "xai-" + _r(r, ALNUM, 80))),
    (
        "supabase",
        "SUPABASE_ACCESS_TOKEN",
        "Supabase token",
        _token(lambda r: "sbp_" + _r(r, HEX, 40)),
    ),
    (
        "docker-hub",
        "DOCKERHUB_TOKEN",
        "Docker Hub token",
        _token(lambda r: "dckr_pat_" + _r(r, URLSAFE, 27)),
    ),
    (
        "grafana",
        "GRAFANA_TOKEN",
        "Grafana token",
        _token(lambda r: "glsa_" + _r(r, ALNUM, 32) + "_" + _r(r, HEX, 8)),
    ),
    (
        "atlassian",
        "JIRA_API_TOKEN",
        "Atlassian API token",
        _token(lambda r: "ATATT3xFfGF0" + _r(r, URLSAFE, 170) + "=" + _r(r, HEX, 8).upper()),
    ),
    (
        "postman",
        "POSTMAN_API_KEY",
        "Postman key",
        _token(lambda r: f"PMAK-{_r(r, HEX, 24)}-{_r(r, HEX, 34)}"),
    ),
    ("datadog", "DD_API_KEY", "Datadog API key", _token(lambda r: _r(r, HEX, 32))),
    (
        "cloudflare",
        "CLOUDFLARE_API_TOKEN",
        "Cloudflare API token",
        _token(lambda r: _r(r, URLSAFE, 40)),
    ),
    (
        "age",
        "SOPS_AGE_KEY",
        "age secret key",
        _token(
            lambda r: "AGE-SECRET-KEY-1" + _r(r, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L".upper(), 58)
        ),
    ),
    ("sentry-dsn", "SENTRY_DSN", "Sentry DSN", _sentry_dsn),
    ("postgres-url", "DATABASE_URL", "database URL", _db_url("postgresql", 5432)),
    ("mysql-url", "DATABASE_URL", "database URL", _db_url("mysql", 3306)),
    ("mongodb-url", "MONGO_URI", "Mongo connection string", _db_url("mongodb+srv", 27017)),
    ("redis-url", "REDIS_URL", "Redis URL", _db_url("rediss", 6380)),
    ("amqp-url", "BROKER_URL", "broker URL", _db_url("amqp", 5672)),
    ("generic-password", "DB_PASSWORD", "password", _token(_password)),
    (
        "generic-secret",
        "APP_SECRET",
        "secret",
        _token(lambda r: _r(r, ALNUM + "-_", r.randrange(24, 48))),
    ),
    ("generic-api-key", "API_KEY", "API key", _token(lambda r: _r(r, ALNUM, r.randrange(24, 48)))),
    ("bearer", "AUTHORIZATION", "bearer token", _bearer),
    ("basic-auth", "AUTHORIZATION", "basic auth header", _basic),
)

# Values found only by what they are assigned to (no prefix of their own): never pasted bare.
CONTEXTUAL = {
    "aws-secret-key", "twilio-auth-token", "datadog", "cloudflare", "generic-password",
    "generic-secret", "generic-api-key", "bearer", "basic-auth", "azure-client-secret",
}  # fmt: skip
# Values with a scheme of their own (URLs, connection strings, header values).
URLISH = {
    "slack-webhook", "discord-webhook", "sentry-dsn", "postgres-url", "mysql-url",
    "mongodb-url", "redis-url", "amqp-url",
}  # fmt: skip


def _lower(name: str) -> str:
    return name.lower()


def _camel(name: str) -> str:
    head, *rest = name.lower().split("_")
    return head + "".join(p.title() for p in rest)


def _styles(
    kind: str, name: str, desc: str, v: str, rng: random.Random
) -> Iterator[tuple[str, str]]:
    """(style, text) for one credential value ``v`` named ``name``."""
    low, camel = _lower(name), _camel(name)
    yield "env", f"# .env\nDEBUG=false\n{name}={v}\nPORT=8080"
    yield "env-quoted", f'{name}="{v}"\n'
    yield "export", f'export {name}="{v}"'
    yield "export-bare", f"$ export {name}={v}\n$ python app.py"
    yield "ini", f"[default]\nregion = us-east-1\n{low} = {v}\n"
    yield "yaml", f"services:\n  api:\n    environment:\n      {name}: {v}\n      LOG_LEVEL: info"
    yield "yaml-quoted", f'{low}: "{v}"\nretries: 3'
    yield "json", json.dumps({"name": "prod", low: v, "enabled": True}, indent=2)
    yield "json-compact", json.dumps({camel: v})
    yield "toml", f'[api]\n{low} = "{v}"\ntimeout = 30'
    yield "python", f'client = Client(\n    {low}="{v}",\n)\n'
    yield "python-assign", f"{name} = '{v}'"
    yield "js", f'const {camel} = "{v}";\nfetch(url, {{ headers }});'
    yield "go", f'{camel} := "{v}"'
    yield "docker", f"docker run -e {name}={v} -p 8080:8080 acme/api"
    yield (
        "fenced",
        f"Here is my config, why does it fail?\n```bash\nexport {name}={v}\n```\nThanks!",
    )
    if kind in CONTEXTUAL and kind not in ("bearer", "basic-auth"):
        yield "prose", f"my {desc} is {v} if you need it"
        yield "prose-colon", f"Here's the {desc}: {v}"
    elif kind in ("bearer", "basic-auth"):
        yield "header", f"Authorization: {v}"
        yield "curl", f"curl -s -H 'Authorization: {v}' https://api.example.com/v1/me"
        yield "python-headers", f'headers = {{"Authorization": "{v}"}}'
        yield "http", f"GET /v1/items HTTP/1.1\nHost: api.example.com\nAuthorization: {v}\n"
    else:
        yield "prose", f"my {desc} is {v} can you check why it fails?"
        yield "prose-colon", f"Here's the {desc}: {v}"
        yield "bare", f"{v}"
        yield "sentence-end", f"I rotated it, the new one is {v}."
        if kind not in URLISH:
            yield "header", f"Authorization: Bearer {v}"
            yield (
                "curl",
                (f'curl https://api.example.com/v1/models \\\n  -H "Authorization: Bearer {v}"'),
            )
            yield "x-api-key", f"x-api-key: {v}"
            yield "url-query", f"https://api.example.com/v1/data?api_key={v}&format=json"
            yield "cli-flag", f"mytool deploy --token {v} --region eu"
            yield "markdown", f"| name | value |\n|---|---|\n| {name} | `{v}` |"


def _pem_cases(rng: random.Random) -> Iterator[Case]:
    for label, lines, kind in (
        ("RSA PRIVATE KEY", 6, "pem-rsa"),
        ("OPENSSH PRIVATE KEY", 5, "pem-openssh"),
        ("EC PRIVATE KEY", 3, "pem-ec"),
        ("PRIVATE KEY", 6, "pem-pkcs8"),
        ("ENCRYPTED PRIVATE KEY", 4, "pem-encrypted"),
    ):
        block, body = _pem(rng, label, lines)
        secrets = tuple(body)
        escaped = block.replace("\n", "\\n")
        yield Case(kind, "raw", f"my key:\n{block}\n", secrets)
        yield Case(kind, "fenced", f"```\n{block}\n```\nis this key in the right format?", secrets)
        yield Case(kind, "json-escaped", json.dumps({"private_key": block + "\n"}), secrets)
        yield Case(kind, "env-escaped", f'PRIVATE_KEY="{escaped}"', secrets)
        yield Case(
            kind, "yaml-block", "tls:\n  key: |\n    " + block.replace("\n", "\n    "), secrets
        )
        yield Case(kind, "indented", "    " + block.replace("\n", "\n    "), secrets)
    # A GCP service account file: the key block (escaped) and its id.
    block, body = _pem(rng, "PRIVATE KEY", 8)
    key_id = _r(rng, HEX, 40)
    sa = {
        "type": "service_account",
        "project_id": "acme-prod",
        "private_key_id": key_id,
        "private_key": block + "\n",
        "client_email": "ci@acme-prod.iam.gserviceaccount.com",
        "client_id": _r(rng, string.digits, 21),
    }
    yield Case("gcp-service-account", "json", json.dumps(sa, indent=2), (*body, key_id))
    yield Case("gcp-service-account", "json-compact", json.dumps(sa), (*body, key_id))


def _special_cases(rng: random.Random) -> Iterator[Case]:
    """Pastes whose secret sits in a shape of its own: AWS credentials files, URLs, curl -u."""
    kid, sec = "AKIA" + _r(rng, B32, 16), _r(rng, B64, 40)
    yield Case(
        "aws-credentials-file",
        "ini",
        f"[default]\naws_access_key_id = {kid}\naws_secret_access_key = {sec}\nregion = eu-west-1",
        (kid, sec),
    )
    yield Case(
        "aws-credentials-file",
        "prose",
        f"I set the access key {kid} and the secret {sec} but boto3 still says denied",
        (kid, sec),
    )
    kid, sec = "AKIA" + _r(rng, B32, 16), _r(rng, B64, 40)
    yield Case(
        "aws-credentials-file",
        "aws-configure",
        f"$ aws configure\nAWS Access Key ID [None]: {kid}\n"
        f"AWS Secret Access Key [None]: {sec}\nDefault region name [None]: eu-west-1",
        (kid, sec),
    )
    pw = _password(rng)
    yield Case(
        "url-password", "git", f"git clone https://ada:{pw}@git.example.com/team/repo.git", (pw,)
    )
    yield Case("url-password", "curl-u", f"curl -u ada:{pw} https://api.example.com/v1/me", (pw,))
    pw = _password(rng)
    yield Case(
        "url-password",
        "pip",
        f"pip install --index-url https://__token__:{pw}@pypi.example.com/simple pkg",
        (pw,),
    )
    pw = _password(rng)
    yield Case("cli-password", "mysql", f"mysql -h db.internal -u root --password={pw} app", (pw,))
    pw = _password(rng)
    yield Case("cli-password", "sshpass", f"sshpass -p '{pw}' ssh deploy@10.0.0.5", (pw,))
    pw = _password(rng)
    yield Case(
        "xml-password",
        "xml",
        f"<connection>\n  <user>app</user>\n  <password>{pw}</password>\n</connection>",
        (pw,),
    )
    pw = _password(rng)
    yield Case(
        "php-password", "php", f"$config = ['db_password' => '{pw}', 'host' => 'localhost'];", (pw,)
    )
    pw = _password(rng)
    yield Case("powershell", "ps", f'$env:DB_PASSWORD = "{pw}"', (pw,))
    tok = "ghp_" + _r(rng, ALNUM, 36)
    yield Case("npmrc", "npmrc", f"//registry.npmjs.org/:_authToken={tok}", (tok,))
    tok = _r(rng, URLSAFE, 40)
    yield Case("netrc", "netrc", f"machine api.example.com login ada password {tok}", (tok,))
    sig = _r(rng, B64, 43) + "%3D"
    yield Case(
        "azure-sas",
        "url",
        f"https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&sp=r&se=2030-01-01&sig={sig}",
        (sig,),
    )


_SLOT = "@@VALUE@@"  # where the value goes (survives json.dumps as it is)


def cases(seed: int = 0) -> list[Case]:
    """The corpus for ``seed``: every credential in every style, plus the shaped ones."""
    rng = random.Random(seed)
    out: list[Case] = []
    for kind, name, desc, make in CREDENTIALS:
        for style, text in _styles(kind, name, desc, _SLOT, rng):
            value, secrets = make(rng)  # a fresh value per case
            out.append(Case(kind, style, text.replace(_SLOT, value), secrets))
    out += _pem_cases(rng)
    out += _special_cases(rng)
    return out


_MARKER = re.compile(r"\[REDACTED:[a-z0-9-]+\]")


def survivors(case: Case, redacted: str, n: int = 4) -> list[str]:
    """The secrets of ``case`` of which a piece of ``n`` or more characters is left in
    ``redacted`` (pieces the text held anyway, outside the secret, do not count)."""
    around = case.text
    for s in case.secrets:
        around = around.replace(s, "\0")
    kept = _MARKER.sub("\0", redacted)
    out = []
    for s in case.secrets:
        for i in range(len(s) - n + 1):
            piece = s[i : i + n]
            if piece in kept and piece not in around:
                out.append(s)
                break
    return out
