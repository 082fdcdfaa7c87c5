"""A held-out credential corpus: ``python bench/secrets_heldout.py [--quick] [--seed N] [--misses]``.

Written apart from `bench/secrets_corpus.py` and without reading `chrysalis/secrets/spans.py`,
to measure how the redaction generalises rather than how well it fits the corpus it was tuned
on. It generates (seeded, random bodies, never real keys) about 90 credential formats across
cloud, AI, developer-tool, payment, messaging and database providers, plus key blocks, JWTs,
headers, cookies and plain passwords, each pasted in the ways people paste them (``.env``,
``export``, shell one-liners, INI, TOML, YAML, JSON, XML, HCL, Kubernetes Secrets with base64
data, Python/JS/Go/Java/C#/PHP/Ruby/Rust, logs, stack traces, prose, chat, tables, fenced
blocks, JSON-escaped strings, URLs), and scores each case **redacted whole**: no piece of 4 or
more characters of any secret in it is left (pieces that also occur in the text around the
secret do not count). It prints recall per format and per paste context, each miss with its
(made-up) text, then false positives: the share of its own negatives (credential-looking text
that is not a credential: commit hashes, UUIDs, digests, data URIs, placeholders, variable
names) and of the dev sets' conversation turns (``$CHRYSALIS_EVAL``, default ``../shared/eval``
beside the repository) that redaction changes, and the cost per KB.

``--quick`` scores one context draw per format and 2,000 turns: what the test suite runs.
"""

# ruff: noqa: E501  (corpus templates are long literal lines)
from __future__ import annotations

import argparse
import base64
import json
import random
import re
import string
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from urllib.parse import quote

from chrysalis.secrets.scan import redact

sys.path.insert(0, str(Path(__file__).parent))
from secrets_bench import turns as dev_turns

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DIG = string.digits
ALNUM = UP + LO + DIG
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
B32 = UP + "234567"


def rs(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def b64(raw: bytes, url: bool = False) -> str:
    enc = base64.urlsafe_b64encode(raw) if url else base64.b64encode(raw)
    return enc.decode()


# ---- formats ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fmt:
    """One credential format: its ``family`` (provider), ``kind``, the names people give it
    (``NAME`` for env, derived lowercase/camel names for code), a body generator, and whether it
    carries a prefix distinctive enough to be found with no name beside it (``bare``)."""

    family: str
    kind: str
    names: tuple[str, ...]
    gen: Callable[[random.Random], str]
    bare: bool = True
    hint: str = "key"  # the word prose uses: key, token, password, secret


def _openai_proj(r: random.Random) -> str:
    return f"sk-proj-{rs(r, B64URL, 74)}T3BlbkFJ{rs(r, B64URL, 74)}"


def _openai_svc(r: random.Random) -> str:
    return f"sk-svcacct-{rs(r, B64URL, 74)}T3BlbkFJ{rs(r, B64URL, 74)}"


def _openai_legacy(r: random.Random) -> str:
    return f"sk-{rs(r, ALNUM, 20)}T3BlbkFJ{rs(r, ALNUM, 20)}"


def _slack_bot(r: random.Random) -> str:
    return f"xoxb-{rs(r, DIG, 12)}-{rs(r, DIG, 13)}-{rs(r, ALNUM, 24)}"


def _slack_user(r: random.Random) -> str:
    return f"xoxp-{rs(r, DIG, 11)}-{rs(r, DIG, 12)}-{rs(r, DIG, 13)}-{rs(r, HEX, 32)}"


def _slack_app(r: random.Random) -> str:
    return f"xapp-1-A{rs(r, UP + DIG, 10)}-{rs(r, DIG, 13)}-{rs(r, HEX, 64)}"


def _discord_bot(r: random.Random) -> str:
    uid = str(r.randint(10**17, 10**19 - 1)).encode()
    return f"{b64(uid).rstrip('=')}.{rs(r, B64URL, 6)}.{rs(r, B64URL, 38)}"


def _jwt(r: random.Random) -> str:
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode(), url=True).rstrip("=")
    body = {
        "sub": rs(r, DIG, 8),
        "role": r.choice(["service_role", "admin", "user"]),
        "iat": r.randint(1_600_000_000, 1_800_000_000),
        "n": rs(r, ALNUM, 12),
    }
    pay = b64(json.dumps(body).encode(), url=True).rstrip("=")
    return f"{head}.{pay}.{rs(r, B64URL, 43)}"


def _prefixed36(prefix: str, r: random.Random) -> str:
    return f"{prefix}_{rs(r, ALNUM, 36)}"


def _password(r: random.Random) -> str:
    words = ["Harbor", "violet", "Maple", "tundra", "Quartz", "pepper", "Orbit", "falcon"]
    sym = "!@#$%^&*?_-+=~"
    parts = [r.choice(words), rs(r, DIG, r.randint(2, 4)), rs(r, sym, r.randint(1, 2))]
    if r.random() < 0.5:
        parts.append(r.choice(words).lower())
    r.shuffle(parts)
    if parts[0][0] in sym:  # a leading # or * is a shell comment or a YAML alias, not a paste
        parts.append(parts.pop(0))
    return "".join(parts)


def _url_password(r: random.Random) -> str:
    # the characters that break naive URL rules: ! $ & * ( ) ; , = ~ and raw # ^ in the wild
    sym = "!$&*();,=~-_.+"
    return rs(r, ALNUM, r.randint(5, 9)) + rs(r, sym, 2) + rs(r, ALNUM, r.randint(3, 6))


def _azure_client_secret(r: random.Random) -> str:
    return f"{rs(r, ALNUM, 3)}8Q~{rs(r, ALNUM + '_.~-', 34)}"


FORMATS: list[Fmt] = [
    # cloud
    Fmt("aws", "aws-access-key-id", ("AWS_ACCESS_KEY_ID",), lambda r: "AKIA" + rs(r, B32, 16)),
    Fmt("aws", "aws-temp-access-key-id", ("AWS_ACCESS_KEY_ID",), lambda r: "ASIA" + rs(r, B32, 16)),
    Fmt(
        "aws",
        "aws-secret-access-key",
        ("AWS_SECRET_ACCESS_KEY",),
        lambda r: rs(r, B64, 40),
        bare=False,
        hint="secret",
    ),
    Fmt(
        "aws",
        "aws-session-token",
        ("AWS_SESSION_TOKEN",),
        lambda r: "IQoJb3JpZ2luX2Vj" + rs(r, B64, 340),
        bare=False,
        hint="token",
    ),
    Fmt(
        "gcp",
        "google-api-key",
        ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
        lambda r: "AIza" + rs(r, B64URL, 35),
    ),
    Fmt(
        "gcp",
        "google-oauth-client-secret",
        ("GOOGLE_CLIENT_SECRET",),
        lambda r: "GOCSPX-" + rs(r, B64URL, 28),
        hint="secret",
    ),
    Fmt(
        "gcp",
        "google-oauth-access-token",
        ("GOOGLE_ACCESS_TOKEN",),
        lambda r: "ya29." + rs(r, B64URL, 150),
        hint="token",
    ),
    Fmt(
        "azure",
        "azure-client-secret",
        ("AZURE_CLIENT_SECRET",),
        _azure_client_secret,
        bare=False,
        hint="secret",
    ),
    Fmt(
        "azure",
        "azure-storage-key",
        ("AZURE_STORAGE_KEY",),
        lambda r: rs(r, B64, 86) + "==",
        bare=False,
    ),
    Fmt(
        "digitalocean",
        "digitalocean-pat",
        ("DIGITALOCEAN_TOKEN", "DO_TOKEN"),
        lambda r: "dop_v1_" + rs(r, HEX, 64),
        hint="token",
    ),
    Fmt(
        "digitalocean",
        "digitalocean-oauth",
        ("DIGITALOCEAN_ACCESS_TOKEN",),
        lambda r: "doo_v1_" + rs(r, HEX, 64),
        hint="token",
    ),
    Fmt(
        "cloudflare",
        "cloudflare-api-token",
        ("CLOUDFLARE_API_TOKEN", "CF_API_TOKEN"),
        lambda r: rs(r, B64URL, 40),
        bare=False,
        hint="token",
    ),
    Fmt(
        "cloudflare",
        "cloudflare-global-key",
        ("CLOUDFLARE_API_KEY", "CF_API_KEY"),
        lambda r: rs(r, HEX, 37),
        bare=False,
    ),
    Fmt("heroku", "heroku-api-key", ("HEROKU_API_KEY",), lambda r: f"HRKU-AA{rs(r, B64URL, 58)}"),
    Fmt(
        "vercel",
        "vercel-token",
        ("VERCEL_TOKEN",),
        lambda r: rs(r, ALNUM, 24),
        bare=False,
        hint="token",
    ),
    Fmt(
        "netlify",
        "netlify-pat",
        ("NETLIFY_AUTH_TOKEN",),
        lambda r: "nfp_" + rs(r, ALNUM, 40),
        hint="token",
    ),
    Fmt("supabase", "supabase-service-role", ("SUPABASE_SERVICE_ROLE_KEY",), _jwt),
    Fmt(
        "supabase",
        "supabase-secret-key",
        ("SUPABASE_SECRET_KEY",),
        lambda r: "sb_secret_" + rs(r, B64URL, 31),
    ),
    Fmt(
        "supabase",
        "supabase-access-token",
        ("SUPABASE_ACCESS_TOKEN",),
        lambda r: "sbp_" + rs(r, HEX, 40),
        hint="token",
    ),
    Fmt(
        "firebase",
        "fcm-server-key",
        ("FCM_SERVER_KEY",),
        lambda r: f"AAAA{rs(r, B64URL, 7)}:APA91b{rs(r, B64URL, 134)}",
    ),
    # AI APIs
    Fmt("openai", "openai-project-key", ("OPENAI_API_KEY",), _openai_proj),
    Fmt("openai", "openai-service-account-key", ("OPENAI_API_KEY",), _openai_svc),
    Fmt("openai", "openai-legacy-key", ("OPENAI_API_KEY",), _openai_legacy),
    Fmt(
        "anthropic",
        "anthropic-api-key",
        ("ANTHROPIC_API_KEY",),
        lambda r: f"sk-ant-api03-{rs(r, B64URL, 93)}AA",
    ),
    Fmt(
        "anthropic",
        "anthropic-admin-key",
        ("ANTHROPIC_ADMIN_KEY",),
        lambda r: f"sk-ant-admin01-{rs(r, B64URL, 93)}AA",
    ),
    Fmt("mistral", "mistral-api-key", ("MISTRAL_API_KEY",), lambda r: rs(r, ALNUM, 32), bare=False),
    Fmt(
        "cohere",
        "cohere-api-key",
        ("COHERE_API_KEY", "CO_API_KEY"),
        lambda r: rs(r, ALNUM, 40),
        bare=False,
    ),
    Fmt("groq", "groq-api-key", ("GROQ_API_KEY",), lambda r: "gsk_" + rs(r, ALNUM, 52)),
    Fmt(
        "replicate",
        "replicate-token",
        ("REPLICATE_API_TOKEN",),
        lambda r: "r8_" + rs(r, ALNUM, 37),
        hint="token",
    ),
    Fmt(
        "huggingface",
        "hf-token",
        ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"),
        lambda r: "hf_" + rs(r, UP + LO, 34),
        hint="token",
    ),
    Fmt(
        "together", "together-api-key", ("TOGETHER_API_KEY",), lambda r: rs(r, HEX, 64), bare=False
    ),
    Fmt(
        "perplexity",
        "perplexity-key",
        ("PERPLEXITY_API_KEY",),
        lambda r: "pplx-" + rs(r, ALNUM, 48),
    ),
    Fmt("xai", "xai-key", ("XAI_API_KEY",), lambda r: "xai-" + rs(r, ALNUM, 80)),
    Fmt(
        "openrouter",
        "openrouter-key",
        ("OPENROUTER_API_KEY",),
        lambda r: "sk-or-v1-" + rs(r, HEX, 64),
    ),
    Fmt("deepseek", "deepseek-key", ("DEEPSEEK_API_KEY",), lambda r: "sk-" + rs(r, HEX, 32)),
    # developer tools
    *[
        Fmt(
            "github",
            f"github-{p}",
            ("GITHUB_TOKEN", "GH_TOKEN"),
            partial(_prefixed36, p),
            hint="token",
        )
        for p in ("ghp", "gho", "ghu", "ghs", "ghr")
    ],
    Fmt(
        "github",
        "github-fine-grained",
        ("GITHUB_TOKEN", "GITHUB_PAT"),
        lambda r: f"github_pat_11{rs(r, UP + DIG, 20)}_{rs(r, ALNUM, 59)}",
        hint="token",
    ),
    Fmt(
        "gitlab",
        "gitlab-pat",
        ("GITLAB_TOKEN", "CI_JOB_TOKEN_OVERRIDE"),
        lambda r: "glpat-" + rs(r, B64URL, 20),
        hint="token",
    ),
    Fmt(
        "gitlab",
        "gitlab-runner-token",
        ("RUNNER_TOKEN",),
        lambda r: "glrt-" + rs(r, B64URL, 20),
        hint="token",
    ),
    Fmt(
        "gitlab",
        "gitlab-deploy-token",
        ("GITLAB_DEPLOY_TOKEN",),
        lambda r: "gldt-" + rs(r, B64URL, 20),
        hint="token",
    ),
    Fmt(
        "bitbucket",
        "bitbucket-app-password",
        ("BITBUCKET_APP_PASSWORD",),
        lambda r: "ATBB" + rs(r, ALNUM, 32),
        hint="password",
    ),
    Fmt(
        "atlassian",
        "atlassian-api-token",
        ("JIRA_API_TOKEN", "ATLASSIAN_API_TOKEN"),
        lambda r: f"ATATT3xFfGF0{rs(r, B64URL, 170)}={rs(r, HEX.upper(), 8)}",
        hint="token",
    ),
    Fmt(
        "npm",
        "npm-token",
        ("NPM_TOKEN", "NODE_AUTH_TOKEN"),
        lambda r: "npm_" + rs(r, ALNUM, 36),
        hint="token",
    ),
    Fmt(
        "pypi",
        "pypi-token",
        ("PYPI_TOKEN", "TWINE_PASSWORD"),
        lambda r: "pypi-AgEIcHlwaS5vcmc" + rs(r, B64URL, 140),
        hint="token",
    ),
    Fmt(
        "docker",
        "docker-hub-pat",
        ("DOCKERHUB_TOKEN", "DOCKER_PASSWORD"),
        lambda r: "dckr_pat_" + rs(r, B64URL, 27),
        hint="token",
    ),
    Fmt(
        "circleci",
        "circleci-pat",
        ("CIRCLECI_TOKEN", "CIRCLE_TOKEN"),
        lambda r: f"CCIPAT_{rs(r, ALNUM, 22)}_{rs(r, HEX, 40)}",
        hint="token",
    ),
    Fmt(
        "sentry",
        "sentry-user-token",
        ("SENTRY_AUTH_TOKEN",),
        lambda r: "sntryu_" + rs(r, HEX, 64),
        hint="token",
    ),
    Fmt(
        "sentry",
        "sentry-org-token",
        ("SENTRY_AUTH_TOKEN",),
        lambda r: (
            "sntrys_"
            + b64(
                json.dumps(
                    {"iat": r.random(), "url": "https://sentry.io", "org": rs(r, LO, 8)}
                ).encode()
            ).rstrip("=")
            + "_"
            + rs(r, B64, 43)
        ),
        hint="token",
    ),
    Fmt(
        "datadog",
        "datadog-api-key",
        ("DD_API_KEY", "DATADOG_API_KEY"),
        lambda r: rs(r, HEX, 32),
        bare=False,
    ),
    Fmt(
        "datadog",
        "datadog-app-key",
        ("DD_APP_KEY", "DATADOG_APP_KEY"),
        lambda r: rs(r, HEX, 40),
        bare=False,
    ),
    Fmt(
        "newrelic",
        "newrelic-user-key",
        ("NEW_RELIC_API_KEY",),
        lambda r: "NRAK-" + rs(r, UP + DIG, 27),
    ),
    Fmt(
        "newrelic",
        "newrelic-license-key",
        ("NEW_RELIC_LICENSE_KEY",),
        lambda r: rs(r, HEX, 36) + "NRAL",
        bare=False,
    ),
    # payments
    Fmt(
        "stripe",
        "stripe-secret-key",
        ("STRIPE_SECRET_KEY", "STRIPE_API_KEY"),
        lambda r: r.choice(["sk_live_", "sk_test_"]) + rs(r, ALNUM, r.choice([24, 99])),
    ),
    Fmt(
        "stripe",
        "stripe-restricted-key",
        ("STRIPE_RESTRICTED_KEY",),
        lambda r: "rk_live_" + rs(r, ALNUM, r.choice([24, 99])),
    ),
    Fmt(
        "stripe",
        "stripe-webhook-secret",
        ("STRIPE_WEBHOOK_SECRET",),
        lambda r: "whsec_" + rs(r, ALNUM, 32),
        hint="secret",
    ),
    Fmt(
        "paypal",
        "paypal-client-secret",
        ("PAYPAL_CLIENT_SECRET", "PAYPAL_SECRET"),
        lambda r: "E" + rs(r, B64URL, 79),
        bare=False,
        hint="secret",
    ),
    Fmt(
        "paypal",
        "paypal-access-token",
        ("PAYPAL_ACCESS_TOKEN",),
        lambda r: "A21AA" + rs(r, B64URL, 92),
        hint="token",
    ),
    Fmt(
        "square",
        "square-access-token",
        ("SQUARE_ACCESS_TOKEN",),
        lambda r: "EAAA" + rs(r, B64URL, 60),
        hint="token",
    ),
    Fmt(
        "square",
        "square-oauth-secret",
        ("SQUARE_APPLICATION_SECRET",),
        lambda r: "sq0csp-" + rs(r, B64URL, 43),
        hint="secret",
    ),
    Fmt(
        "shopify",
        "shopify-access-token",
        ("SHOPIFY_ACCESS_TOKEN",),
        lambda r: "shpat_" + rs(r, HEX, 32),
        hint="token",
    ),
    Fmt(
        "shopify",
        "shopify-shared-secret",
        ("SHOPIFY_API_SECRET",),
        lambda r: "shpss_" + rs(r, HEX, 32),
        hint="secret",
    ),
    # messaging
    Fmt("slack", "slack-bot-token", ("SLACK_BOT_TOKEN",), _slack_bot, hint="token"),
    Fmt("slack", "slack-user-token", ("SLACK_USER_TOKEN",), _slack_user, hint="token"),
    Fmt("slack", "slack-app-token", ("SLACK_APP_TOKEN",), _slack_app, hint="token"),
    Fmt(
        "discord",
        "discord-bot-token",
        ("DISCORD_TOKEN", "DISCORD_BOT_TOKEN"),
        _discord_bot,
        hint="token",
    ),
    Fmt(
        "twilio",
        "twilio-auth-token",
        ("TWILIO_AUTH_TOKEN",),
        lambda r: rs(r, HEX, 32),
        bare=False,
        hint="token",
    ),
    Fmt(
        "twilio",
        "twilio-api-key-secret",
        ("TWILIO_API_SECRET",),
        lambda r: rs(r, ALNUM, 32),
        bare=False,
        hint="secret",
    ),
    Fmt(
        "sendgrid",
        "sendgrid-key",
        ("SENDGRID_API_KEY",),
        lambda r: f"SG.{rs(r, B64URL, 22)}.{rs(r, B64URL, 43)}",
    ),
    Fmt(
        "mailgun",
        "mailgun-key",
        ("MAILGUN_API_KEY",),
        lambda r: f"{rs(r, HEX, 32)}-{rs(r, HEX, 8)}-{rs(r, HEX, 8)}",
        bare=False,
    ),
    Fmt("mailgun", "mailgun-legacy-key", ("MAILGUN_API_KEY",), lambda r: "key-" + rs(r, HEX, 32)),
    Fmt(
        "postmark",
        "postmark-server-token",
        ("POSTMARK_SERVER_TOKEN", "POSTMARK_API_TOKEN"),
        lambda r: "-".join(rs(r, HEX, n) for n in (8, 4, 4, 4, 12)),
        bare=False,
        hint="token",
    ),
    Fmt(
        "telegram",
        "telegram-bot-token",
        ("TELEGRAM_BOT_TOKEN", "TG_TOKEN"),
        lambda r: f"{r.randint(10**8, 10**10 - 1)}:AA{rs(r, B64URL, 33)}",
        hint="token",
    ),
    # generic
    Fmt("generic", "jwt", ("ACCESS_TOKEN", "AUTH_TOKEN", "ID_TOKEN"), _jwt, hint="token"),
    Fmt(
        "generic",
        "bearer-opaque",
        ("API_TOKEN", "ACCESS_TOKEN"),
        lambda r: rs(r, B64URL, r.randint(32, 64)),
        bare=False,
        hint="token",
    ),
    Fmt(
        "generic",
        "password",
        ("DB_PASSWORD", "ADMIN_PASSWORD", "PASSWORD", "SMTP_PASS"),
        _password,
        bare=False,
        hint="password",
    ),
    Fmt(
        "generic",
        "app-secret",
        ("SECRET_KEY", "APP_SECRET", "JWT_SECRET", "SESSION_SECRET"),
        lambda r: rs(r, ALNUM + "!@#%^*-_=+", r.randint(32, 50)),
        bare=False,
        hint="secret",
    ),
    Fmt(
        "generic",
        "api-key",
        ("API_KEY", "CLIENT_SECRET", "WEBHOOK_SECRET"),
        lambda r: rs(r, HEX, 40),
        bare=False,
    ),
]


# ---- paste contexts for a token (a value with a name) -----------------------------------------


def _lower(name: str) -> str:
    return name.lower()


def _camel(name: str) -> str:
    head, *rest = name.lower().split("_")
    return head + "".join(w.capitalize() for w in rest)


def _short(name: str) -> str:
    """What a config file calls it: ``OPENAI_API_KEY`` -> ``api_key``."""
    parts = name.lower().split("_")
    return "_".join(parts[-2:]) if len(parts) > 1 else parts[0]


def _vendor(f: Fmt) -> str:
    return {
        "aws": "AWS",
        "gcp": "Google",
        "openai": "OpenAI",
        "github": "GitHub",
        "huggingface": "Hugging Face",
        "generic": "the",
    }.get(f.family, f.family.capitalize())


Ctx = Callable[[random.Random, Fmt, str, str], "str | tuple[str, list[str]]"]
# (rng, format, NAME, secret) -> text, or (text, needles) when the secret appears transformed


def _k8s(r: random.Random, f: Fmt, n: str, s: str) -> tuple[str, list[str]]:
    enc = b64(s.encode())
    text = (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-credentials\n  namespace: prod\n"
        f"type: Opaque\ndata:\n  {_short(n).replace('_', '-')}: {enc}\n  region: dXMtZWFzdC0x\n"
    )
    return text, [enc]


def _k8s_string(r: random.Random, f: Fmt, n: str, s: str) -> str:
    return (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: api\nstringData:\n"
        f'  {n}: "{s}"\n  LOG_LEVEL: info\n'
    )


def _json_escaped(r: random.Random, f: Fmt, n: str, s: str) -> str:
    inner = f'export {n}="{s}"\nnpm run deploy'
    return json.dumps({"role": "user", "content": inner})


TOKEN_CONTEXTS: dict[str, Ctx] = {
    "env": lambda r, f, n, s: f"{n}={s}",
    "env-quoted": lambda r, f, n, s: f'{n}="{s}"',
    "env-file": lambda r, f, n, s: (
        f"# .env.production\nNODE_ENV=production\nPORT=8080\n{n}={s}\nLOG_LEVEL=debug\n"
    ),
    "export": lambda r, f, n, s: f"export {n}={s}",
    "export-quoted": lambda r, f, n, s: f"$ export {n}='{s}'\n$ python main.py",
    "shell-inline": lambda r, f, n, s: f"{n}={s} uvicorn app:main --reload",
    "docker-env": lambda r, f, n, s: f"docker run --rm -e {n}={s} -p 8000:8000 myorg/api:latest",
    "powershell": lambda r, f, n, s: f'PS C:\\app> $env:{n} = "{s}"',
    "ini": lambda r, f, n, s: f"[default]\nregion = us-east-1\n{_lower(n)} = {s}\n",
    "toml": lambda r, f, n, s: f'[service]\nname = "billing"\n{_short(n)} = "{s}"\ntimeout = 30\n',
    "yaml": lambda r, f, n, s: f"service:\n  name: billing\n  credentials:\n    {_short(n)}: {s}\n",
    "yaml-quoted": lambda r, f, n, s: f'env:\n  - name: {n}\n    value: "{s}"\n',
    "gha-yaml": lambda r, f, n, s: (
        f"    steps:\n      - run: ./deploy.sh\n        env:\n          {n}: {s}\n"
    ),
    "json": lambda r, f, n, s: json.dumps({"name": "svc", _camel(n): s, "retries": 3}, indent=2),
    "json-compact": lambda r, f, n, s: json.dumps({"env": {n: s}}),
    "json-escaped": _json_escaped,
    "xml": lambda r, f, n, s: (
        f'<appSettings>\n  <add key="{_camel(n)}" value="{s}" />\n</appSettings>'
    ),
    "xml-element": lambda r, f, n, s: f"<config>\n  <{_camel(n)}>{s}</{_camel(n)}>\n</config>",
    "hcl": lambda r, f, n, s: f'provider "{f.family}" {{\n  {_short(n)} = "{s}"\n}}',
    "k8s-secret": _k8s,
    "k8s-stringdata": _k8s_string,
    "python": lambda r, f, n, s: (
        f'import os\n\n{_short(n).upper()} = "{s}"\nclient = Client({_short(n)}={_short(n).upper()})'
    ),
    "python-environ": lambda r, f, n, s: f"os.environ['{n}'] = '{s}'",
    "python-kwarg": lambda r, f, n, s: (
        f'client = Client(\n    {_short(n)}="{s}",\n    timeout=30,\n)'
    ),
    "js": lambda r, f, n, s: (
        f"const {_camel(n)} = '{s}';\nfetch(url, {{ headers: {{ key: {_camel(n)} }} }});"
    ),
    "js-object": lambda r, f, n, s: (
        f'module.exports = {{\n  {_camel(n)}: "{s}",\n  debug: false,\n}};'
    ),
    "go": lambda r, f, n, s: (
        f'func main() {{\n\t{_camel(n)} := "{s}"\n\tfmt.Println(len({_camel(n)}))\n}}'
    ),
    "java": lambda r, f, n, s: f'private static final String {n} = "{s}";',
    "csharp": lambda r, f, n, s: f'var {_camel(n)} = "{s}";',
    "php": lambda r, f, n, s: f"define('{n}', '{s}');",
    "ruby": lambda r, f, n, s: f"ENV['{n}'] = '{s}'",
    "rust": lambda r, f, n, s: f'let {_lower(n)} = "{s}";',
    "log": lambda r, f, n, s: (
        f"2024-11-02T09:14:55.120Z DEBUG config loaded {_lower(n)}={s} region=eu-west-1"
    ),
    "stack-trace": lambda r, f, n, s: (
        'Traceback (most recent call last):\n  File "/srv/app/main.py", line 42, in <module>\n'
        f"    client.auth({_short(n)}='{s}')\nAuthError: 401 Unauthorized"
    ),
    "prose": lambda r, f, n, s: (
        f"Here's my {_vendor(f)} {f.hint}: {s} — can you see why the call fails?"
    ),
    "prose-named": lambda r, f, n, s: f"I set {n} to {s} but it still says unauthorized.",
    "chat-arrow": lambda r, f, n, s: f"ok use this {f.hint} → {s}",
    "fenced": lambda r, f, n, s: f'Running this:\n\n```bash\nexport {n}="{s}"\n./run.sh\n```\n',
    "table": lambda r, f, n, s: (
        f"| variable | value |\n|---|---|\n| {n} | {s} |\n| REGION | eu-west-1 |"
    ),
    "backticks": lambda r, f, n, s: f"my {f.hint} is `{s}`, is it the wrong scope?",
    "quoted-comma": lambda r, f, n, s: f'{_short(n)}: "{s}",',
    "parens": lambda r, f, n, s: f"The {f.hint} ({s}) expired yesterday.",
    "curl-bearer": lambda r, f, n, s: (
        f'curl -s https://api.example.com/v1/me -H "Authorization: Bearer {s}"'
    ),
    "curl-header": lambda r, f, n, s: (
        f"curl https://api.example.com/v2/items -H 'X-API-Key: {s}' -H 'Accept: application/json'"
    ),
    # a value in a query string is percent-encoded, as a client sends it
    "url-query": lambda r, f, n, s: (
        f"GET https://api.example.com/v1/data?{r.choice(['api_key', 'access_token', 'key', 'token'])}={quote(s, safe='')}&limit=10",
        [quote(s, safe="")],
    ),
}

# contexts that show no name at all: fair only for formats with a distinctive prefix
BARE_CONTEXTS: dict[str, Ctx] = {
    "bare-prose": lambda r, f, n, s: f"I rotated it this morning, the new one is {s}.",
    "bare-line": lambda r, f, n, s: s,
    "bare-log": lambda r, f, n, s: f"[worker-3] WARN retrying with {s} after 429",
    "bare-angle": lambda r, f, n, s: f"<{s}>",
    "bare-arrow": lambda r, f, n, s: f"→ {s}",
}


# ---- structural cases: URLs, key blocks, headers, cookies, webhooks --------------------------


@dataclass
class Case:
    family: str
    kind: str
    context: str
    text: str
    needles: list[str] = field(default_factory=list)


def _pem(r: random.Random, label: str, lines: int) -> tuple[str, list[str]]:
    body = [rs(r, B64, 64) for _ in range(lines)] + [rs(r, B64, r.randint(10, 60)) + "=="]
    return f"-----BEGIN {label}-----\n" + "\n".join(body) + f"\n-----END {label}-----", body


def _openssh(r: random.Random) -> tuple[str, list[str]]:
    body = ["b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"]
    body += [rs(r, B64, 70) for _ in range(5)] + [rs(r, B64, 20) + "="]
    return (
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
        + "\n".join(body)
        + "\n-----END OPENSSH PRIVATE KEY-----",
        body[1:],
    )


def _pgp(r: random.Random) -> tuple[str, list[str]]:
    body = [rs(r, B64, 64) for _ in range(8)] + [rs(r, B64, 30)]
    crc = "=" + rs(r, B64, 4)
    text = (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nComment: exported by gpg\n\n"
        + "\n".join(body)
        + f"\n{crc}\n-----END PGP PRIVATE KEY BLOCK-----"
    )
    return text, body


def structural(r: random.Random) -> list[Case]:
    out: list[Case] = []

    def add(fam: str, kind: str, ctx: str, text: str, needles: list[str]) -> None:
        out.append(Case(fam, kind, ctx, text, needles))

    # key blocks
    for label in ("RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "ENCRYPTED PRIVATE KEY"):
        kind = "pem-" + label.lower().replace(" ", "-")
        text, body = _pem(r, label, 6)
        add("keys", kind, "raw", text, body)
        add("keys", kind, "fenced", f"here is the key file:\n```\n{text}\n```", body)
        add(
            "keys",
            kind,
            "json-escaped-newlines",
            json.dumps(
                {
                    "type": "service_account",
                    "private_key_id": rs(r, HEX, 40),
                    "private_key": text + "\n",
                    "client_email": "ci@proj.iam.gserviceaccount.com",
                }
            ),
            body,
        )
        add("keys", kind, "env-quoted-multiline", f'PRIVATE_KEY="{text}"', body)
        add("keys", kind, "yaml-block", "tls:\n  key: |\n    " + text.replace("\n", "\n    "), body)
        cut = text.split("\n")[:4]
        add("keys", kind, "truncated-paste", "\n".join(cut) + "\n...", body[:3])
    text, body = _openssh(r)
    add("keys", "openssh-private-key", "raw", text, body)
    add(
        "keys",
        "openssh-private-key",
        "prose",
        f"my ~/.ssh/id_ed25519 is\n\n{text}\n\nwhy does ssh say bad permissions?",
        body,
    )
    add("keys", "openssh-private-key", "json-escaped-newlines", json.dumps({"key": text}), body)
    text, body = _pgp(r)
    add("keys", "pgp-private-key", "raw", text, body)
    add("keys", "pgp-private-key", "fenced", f"```\n{text}\n```", body)
    # a GCP service account's private_key_id is a credential too
    pkid = rs(r, HEX, 40)
    add(
        "gcp",
        "gcp-private-key-id",
        "json",
        json.dumps(
            {"type": "service_account", "project_id": "acme-prod", "private_key_id": pkid}, indent=2
        ),
        [pkid],
    )

    # connection strings
    hosts = [
        "db.internal",
        "10.0.3.12",
        "cluster0.ab1cd.mongodb.net",
        "redis-12345.c1.cloud.redislabs.com",
    ]
    for scheme, port, path in (
        ("postgres", 5432, "/app"),
        ("postgresql", 5432, "/app?sslmode=require"),
        ("postgresql+psycopg2", 5432, "/analytics"),
        ("mysql", 3306, "/shop"),
        ("mysql+pymysql", 3306, "/shop?charset=utf8mb4"),
        ("mongodb+srv", None, "/?retryWrites=true&w=majority"),
        ("mongodb", 27017, "/admin"),
        ("redis", 6379, "/0"),
        ("rediss", 6380, ""),
        ("amqp", 5672, "/vhost"),
        ("amqps", 5671, "/"),
        ("mssql", 1433, "/master"),
        ("ftp", 21, "/pub"),
        ("smtp", 587, ""),
    ):
        for variant in ("plain", "odd", "encoded"):
            pw = _password(r) if variant == "plain" else _url_password(r)
            shown = quote(pw, safe="") if variant == "encoded" else pw
            if variant == "plain":
                shown = shown.replace("#", "").replace("@", "").replace("/", "").replace("?", "")
                pw = shown
            user = (
                ""
                if scheme.startswith("redis") and variant == "odd"
                else r.choice(["admin", "app_user", "root", "svc"])
            )
            host = r.choice(hosts)
            netloc = f"{user}:{shown}@{host}" + (f":{port}" if port else "")
            url = f"{scheme}://{netloc}{path}"
            ctx = r.choice(["env", "yaml", "python", "prose", "json", "cli"])
            text = {
                "env": f"DATABASE_URL={url}",
                "yaml": f"spring:\n  datasource:\n    url: {url}\n",
                "python": f'engine = create_engine("{url}")',
                "prose": f"connection string is {url} if that helps",
                "json": json.dumps({"connectionString": url}),
                "cli": f"psql '{url}' -c 'select 1'",
            }[ctx]
            add("db", f"url-{scheme}", f"{ctx}/{variant}", text, [shown])
    # other URLs with credentials
    for kind, tmpl in (
        ("git-clone-github", "git clone https://{u}:{t}@github.com/acme/infra.git"),
        (
            "git-remote-gitlab",
            "git remote set-url origin https://oauth2:{t}@gitlab.com/acme/api.git",
        ),
        (
            "pip-index",
            "pip install --extra-index-url https://{u}:{t}@pypi.acme.dev/simple/ internal-lib",
        ),
        ("npmrc", "//registry.npmjs.org/:_authToken={t}"),
        ("webhook-auth", "POST https://{u}:{t}@hooks.acme.io/deploy"),
    ):
        tok = (
            _password(r)
            if kind == "webhook-auth"
            else r.choice(
                [
                    f"ghp_{rs(r, ALNUM, 36)}",
                    f"glpat-{rs(r, B64URL, 20)}",
                    f"npm_{rs(r, ALNUM, 36)}",
                    rs(r, ALNUM, 32),
                ]
            )
        )
        add(
            "urls",
            kind,
            "shell",
            tmpl.format(u=r.choice(["ci-bot", "x-access-token", "deploy"]), t=tok),
            [tok],
        )
    # webhooks: the URL path is the secret
    for i in range(3):
        t1, t2, t3 = "T" + rs(r, UP + DIG, 9), "B" + rs(r, UP + DIG, 10), rs(r, ALNUM, 24)
        url = f"https://hooks.slack.com/services/{t1}/{t2}/{t3}"
        ctx, text = [
            ("env", f"SLACK_WEBHOOK_URL={url}"),
            (
                "curl",
                f"curl -X POST -H 'Content-type: application/json' --data '{{\"text\":\"hi\"}}' {url}",
            ),
            ("prose", f"the webhook is {url}, posting works from curl"),
        ][i]
        add("slack", "slack-webhook", ctx, text, [t3])
        wid, wtok = rs(r, DIG, 19), rs(r, B64URL, 68)
        url = f"https://discord.com/api/webhooks/{wid}/{wtok}"
        ctx, text = [
            ("env", f"DISCORD_WEBHOOK={url}"),
            ("python", f'requests.post("{url}", json={{"content": "deploy ok"}})'),
            ("prose", f"webhook: {url}"),
        ][i]
        add("discord", "discord-webhook", ctx, text, [wtok])
        tg = f"{r.randint(10**8, 10**10 - 1)}:AA{rs(r, B64URL, 33)}"
        text = [
            f"curl https://api.telegram.org/bot{tg}/sendMessage -d chat_id=123 -d text=hi",
            f"BOT_URL = 'https://api.telegram.org/bot{tg}/getUpdates'",
            f"webhook set to https://api.telegram.org/bot{tg}/setWebhook?url=https://x.io",
        ][i]
        add(
            "telegram", "telegram-bot-url", ["curl", "python", "prose"][i], text, [tg.split(":")[1]]
        )
        # Azure storage connection string, SAS
        key = rs(r, B64, 86) + "=="
        cs = f"DefaultEndpointsProtocol=https;AccountName=acme{rs(r, LO, 4)};AccountKey={key};EndpointSuffix=core.windows.net"
        text = [
            f'AZURE_STORAGE_CONNECTION_STRING="{cs}"',
            json.dumps({"Values": {"AzureWebJobsStorage": cs}}),
            f"conn = BlobServiceClient.from_connection_string('{cs}')",
        ][i]
        add("azure", "azure-connection-string", ["env", "json", "python"][i], text, [key])
        sig = rs(r, B64, 43) + "="
        sas = f"https://acme.blob.core.windows.net/backups?sv=2022-11-02&ss=b&srt=co&sp=rl&se=2025-01-01T00:00:00Z&sig={quote(sig, safe='')}"
        add(
            "azure",
            "azure-sas-url",
            ["env", "prose", "cli"][i],
            [
                f"BACKUP_SAS_URL={sas}",
                f"use this SAS url: {sas}",
                f'azcopy copy "{sas}" ./out --recursive',
            ][i],
            [quote(sig, safe="")],
        )
        # AWS credentials file, aws configure
        akid, sk = "AKIA" + rs(r, B32, 16), rs(r, B64, 40)
        text = [
            f"[default]\naws_access_key_id = {akid}\naws_secret_access_key = {sk}\nregion = us-east-1",
            f"$ aws configure\nAWS Access Key ID [None]: {akid}\nAWS Secret Access Key [None]: {sk}\nDefault region name [None]: us-east-1",
            f'boto3.client("s3", aws_access_key_id="{akid}", aws_secret_access_key="{sk}")',
        ][i]
        add(
            "aws",
            "aws-key-pair",
            ["credentials-file", "aws-configure", "python"][i],
            text,
            [akid, sk],
        )
    # headers
    for i in range(6):
        user, pw = r.choice(["admin", "ci", "ada@acme.io"]), _password(r)
        basic = b64(f"{user}:{pw}".encode())
        ctx, text = [
            ("curl-H", f'curl -H "Authorization: Basic {basic}" https://jenkins.acme.io/api/json'),
            (
                "http-dump",
                f"GET /api/v1/users HTTP/1.1\nHost: internal.acme.io\nAuthorization: Basic {basic}\nAccept: */*",
            ),
            ("python", f"headers = {{'Authorization': 'Basic {basic}'}}"),
            ("js", f'fetch(u, {{ headers: {{ Authorization: "Basic {basic}" }} }})'),
            (
                "log",
                f"2024-05-01 12:00:01 INFO request headers={{'authorization': 'Basic {basic}', 'user-agent': 'python-requests/2.31'}}",
            ),
            ("prose", f"the header I send is Authorization: Basic {basic} and it 403s"),
        ][i]
        add("http", "basic-auth-header", ctx, text, [basic])
        ctx, text = [
            ("curl-u", f"curl -u {user}:{pw} https://api.acme.io/v1/builds"),
            ("curl-u-quoted", f"curl --user '{user}:{pw}' https://nexus.acme.io/repository/"),
            ("wget", f"wget --user={user} --password='{pw}' https://files.acme.io/dump.sql.gz"),
            ("requests", f"requests.get(url, auth=('{user}', '{pw}'))"),
            ("httpie", f"http -a {user}:{pw} GET https://api.acme.io/me"),
            ("mysql-cli", f"mysql -h db.acme.io -u {user} -p'{pw}' shop"),
        ][i]
        add("http", "cli-password", ctx, text, [pw])
        tok = r.choice([rs(r, B64URL, 40), _jwt(r), rs(r, HEX, 64)])
        ctx, text = [
            (
                "http-dump",
                f"POST /graphql HTTP/2\nhost: api.acme.io\nauthorization: Bearer {tok}\ncontent-type: application/json",
            ),
            ("python", f'headers = {{"Authorization": f"Bearer {tok}"}}'),
            (
                "devtools",
                f"Request Headers\n:authority: app.acme.io\naccept: */*\nauthorization: Bearer {tok}\n",
            ),
            ("log", f"[http] -> GET /me Authorization=Bearer {tok}"),
            ("token-header", f"curl -H 'Authorization: token {tok}' https://api.github.com/user"),
            ("prose", f"my bearer token is {tok}"),
        ][i]
        add("http", "bearer-header", ctx, text, [tok])
        # cookies and sessions
        sid = rs(r, B64URL, r.randint(26, 48))
        ctx, text = [
            ("cookie-header", f"Cookie: sessionid={sid}; csrftoken={rs(r, ALNUM, 32)}"),
            ("set-cookie", f"Set-Cookie: session={sid}; Path=/; HttpOnly; Secure; SameSite=Lax"),
            ("curl-b", f"curl -b 'connect.sid=s%3A{sid}' https://app.acme.io/dashboard"),
            ("php", f"Cookie: PHPSESSID={sid}"),
            ("js", f'document.cookie = "auth_token={sid}; path=/";'),
            ("prose", f"my session id is {sid}, the server keeps logging me out"),
        ][i]
        add("http", "session-cookie", ctx, text, [sid])
    # passwords spoken about: ssh, sudo, app logins, docker login, PGPASSWORD
    for i in range(8):
        pw = _password(r)
        ctx, text = [
            ("sshpass", f"sshpass -p '{pw}' ssh deploy@10.0.0.5"),
            ("prose-ssh", f"ssh root@203.0.113.7, password is {pw}"),
            ("prose-login", f"the admin login is admin / password: {pw}"),
            ("docker-login", f"docker login -u acmebot -p {pw} registry.acme.io"),
            ("pgpassword", f"PGPASSWORD={pw} psql -h db.acme.io -U app -d prod"),
            ("chat", f"wifi pass → {pw}"),
            (
                "yaml-compose",
                f"services:\n  db:\n    environment:\n      POSTGRES_PASSWORD: {pw}\n      POSTGRES_USER: app",
            ),
            ("mysql-env", f"MYSQL_ROOT_PASSWORD='{pw}'"),
        ][i]
        add("passwords", "password-in-use", ctx, text, [pw])
    return out


# ---- the corpus ------------------------------------------------------------------------------


def cases(seed: int = 0, quick: bool = False) -> list[Case]:
    """The corpus for ``seed``: every format in every context (``quick``: 6 contexts each)."""
    r = random.Random(seed)
    out: list[Case] = []
    for f in FORMATS:
        ctxs = dict(TOKEN_CONTEXTS)
        if f.hint == "password":  # a password is not sent as a bearer token or an API key
            for c in ("curl-bearer", "curl-header", "url-query"):
                del ctxs[c]
        if f.bare:
            ctxs.update(BARE_CONTEXTS)
        names = sorted(ctxs)
        if quick:
            names = r.sample(names, 6)
        for cname in names:
            s = f.gen(r)
            got = ctxs[cname](r, f, r.choice(f.names), s)
            text, needles = got if isinstance(got, tuple) else (got, [s])
            out.append(Case(f.family, f.kind, cname, text, needles))
    st = structural(r)
    out += r.sample(st, len(st) // 3) if quick else st
    return out


_MARKER = re.compile(r"\[REDACTED:[^\]]*\]|redacted-[a-z0-9-]+")


def survivors(case: Case, redacted: str) -> list[str]:
    """Pieces (4+ characters) of the case's secrets left in ``redacted``, leaving out pieces
    also found in the text around them (a label or a host name is not a leak)."""
    around = case.text
    for n in sorted(case.needles, key=len, reverse=True):
        around = around.replace(n, "\0")
    out = _MARKER.sub("\0", redacted)
    left: set[str] = set()
    for n in case.needles:
        for i in range(len(n) - 3):
            piece = n[i : i + 4]
            if piece in out and piece not in around:
                left.add(piece)
    return sorted(left)


# ---- negatives: credential-looking, not credentials ------------------------------------------


def negatives(seed: int = 0) -> list[str]:
    r = random.Random(seed + 1000)
    out: list[str] = []
    for _ in range(8):
        sha = rs(r, HEX, 40)
        out += [
            f"fixed in commit {sha}, see the PR",
            f"git checkout {sha[:12]} -- src/app.py",
            f"image: ghcr.io/acme/api@sha256:{rs(r, HEX, 64)}",
            f'"integrity": "sha512-{rs(r, B64, 86)}=="',
            f"request_id={'-'.join(rs(r, HEX, n) for n in (8, 4, 4, 4, 12))} status=200 took=41ms",
            f"user {'-'.join(rs(r, HEX, n) for n in (8, 4, 4, 4, 12))} logged in",
            f'<img src="data:image/png;base64,iVBORw0KGgo{rs(r, B64, 200)}=" alt="logo">',
            f"md5sum dump.sql -> {rs(r, HEX, 32)}",
            f"the color is #{rs(r, HEX, 6)} and the fallback #{rs(r, HEX, 6)}",
            f"trace_id={rs(r, HEX, 32)} span_id={rs(r, HEX, 16)}",
            f"sha256: {rs(r, HEX, 64)}  python-3.12.tar.xz",
            f"Run ID {rs(r, DIG, 10)} finished, artifact {rs(r, ALNUM, 10)}.zip",
        ]
    out += [
        "OPENAI_API_KEY=sk-...",
        "export OPENAI_API_KEY=<your-key>",
        "export ANTHROPIC_API_KEY=${ANTHROPIC_API_KEY}",
        "api_key = os.environ['OPENAI_API_KEY']",
        'api_key=os.getenv("STRIPE_SECRET_KEY")',
        "const token = process.env.GITHUB_TOKEN;",
        "token: ${{ secrets.GITHUB_TOKEN }}",
        'password: "{{ vault_db_password }}"',
        "DB_PASSWORD=changeme",
        "API_KEY=your-api-key-here",
        "API_KEY=xxxxxxxxxxxxxxxxxxxxxxxx",
        "AWS_SECRET_ACCESS_KEY=<redacted>",
        "password: ********",
        "SECRET_KEY = os.environ.get('SECRET_KEY', '')",
        "Authorization: Bearer <token>",
        "Authorization: Bearer $TOKEN",
        'curl -H "Authorization: Bearer ${API_TOKEN}" https://api.example.com',
        "postgres://user:password@localhost:5432/db",
        "postgres://localhost/mydb",
        "mongodb://mongo:27017/app",
        "redis://localhost:6379/0",
        "https://user@github.com/acme/repo.git",
        "git clone https://github.com/acme/repo.git",
        "I clicked the password reset link but never got the email.",
        "The key takeaway is that tokens per second matter more than latency.",
        "def test_password_is_hashed_with_argon2(): ...",
        "def test_expired_token_is_rejected(client): ...",
        "max_tokens=1024, temperature=0.2",
        "token_count = len(tokenizer.encode(text))",
        "if not api_key: raise ValueError('missing API key')",
        "password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt())",
        "auth: true\nsecure: false",
        "the secret sauce is caching the embeddings",
        "keyboard shortcuts: ctrl+k opens the palette",
        "My password manager is 1Password, the vault is shared with my wife.",
        "Use `gh auth login` and paste a token when asked.",
        "Tokens look like ghp_ followed by 36 characters.",
        "The AWS access key id starts with AKIA and the secret is 40 characters long.",
        "set GITHUB_TOKEN in the repository settings, never in the code",
        "api_key=None",
        "password = getpass.getpass('Password: ')",
        "jwt.decode(token, key, algorithms=['HS256'])",
        "The JWT header is eyJhbGciOi... and the payload follows the dot.",
        "const secret = await vault.read('kv/app');",
        "secret_name = 'prod/db/credentials'",
        "KeyError: 'api_key'",
        "ssh-keygen -t ed25519 -C 'ada@acme.io'",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGfQ3J8r9YkQd2ZpYxV1bY0pP4r3m0wzQ4p6cJ8F2Lq ada@laptop",
        "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
        "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ\n-----END CERTIFICATE-----",
        "fixture: tests/fixtures/fake_token.json",
        "stripe_test_fixture_customer_id = 'cus_NffrFeUfNV2Hib'",
        "pk_test_ publishable keys are safe in the browser",
        "The IPv6 address is 2001:db8:85a3::8a2e:370:7334",
        "MAC 00:1B:44:11:3A:B7 on eth0",
        "I walked 12,000 steps and my heart rate was 72bpm",
        "Let's meet at 3pm; bring the key to the storage unit.",
        "Passwords must be at least 12 characters long.",
        "What's the best way to rotate secrets in Kubernetes?",
        "hashlib.sha1(b'abc').hexdigest() == 'a9993e364706816aba3e25717850c26c9cd0d89d'",
        "SELECT password_hash, token_expires_at FROM users WHERE id = 42;",
        "export PATH=$HOME/.local/bin:$PATH",
        "export NODE_OPTIONS=--max-old-space-size=4096",
        "SESSION_COOKIE_SECURE=True",
        "token_type: bearer\nexpires_in: 3600",
        "npm install jsonwebtoken bcryptjs dotenv",
        "The book 'The Secret History' by Donna Tartt.",
        "slack_channel: '#deploys'",
        "webhook_url = settings.SLACK_WEBHOOK_URL",
    ]
    return out


# ---- the dev sets' turns ---------------------------------------------------------------------


def turns(limit: int | None = None) -> list[str]:
    """The dev sets' conversation turns, each once (`secrets_bench.turns`, its own draw)."""
    return dev_turns(limit, seed=3)


# ---- scoring ---------------------------------------------------------------------------------


def score(seed: int, quick: bool) -> dict[str, object]:
    corpus = cases(seed, quick)
    t0 = time.perf_counter()
    red = [redact(c.text)[0] for c in corpus]
    corpus_s = time.perf_counter() - t0
    per: dict[str, dict[str, list[int]]] = {
        "format": defaultdict(lambda: [0, 0]),
        "context": defaultdict(lambda: [0, 0]),
        "family": defaultdict(lambda: [0, 0]),
    }
    misses: list[dict[str, object]] = []
    for c, text in zip(corpus, red, strict=True):
        left = survivors(c, text)
        for axis, key in (
            ("format", c.kind),
            ("context", c.context.split("/")[0]),
            ("family", c.family),
        ):
            per[axis][key][1] += 1
            per[axis][key][0] += not left
        if left:
            partial = any(m in text for m in ("[REDACTED", "redacted-"))
            misses.append(
                {
                    "kind": c.kind,
                    "context": c.context,
                    "partial": partial,
                    "left": left[:6],
                    "text": c.text,
                    "redacted": text,
                }
            )
    negs = negatives(seed)
    neg_changed = [t for t in negs if redact(t)[0] != t]
    real = turns(2000 if quick else None)
    t0 = time.perf_counter()
    real_red = [redact(t)[0] for t in real]
    turns_s = time.perf_counter() - t0
    changed = [(a, b) for a, b in zip(real, real_red, strict=True) if a != b]
    kb = (sum(len(c.text) for c in corpus) + sum(len(t) for t in real)) / 1024
    return {
        "seed": seed,
        "cases": len(corpus),
        "whole": len(corpus) - len(misses),
        "formats": len({c.kind for c in corpus}),
        "per": {k: dict(v) for k, v in per.items()},
        "misses": misses,
        "negatives": len(negs),
        "negatives_changed": neg_changed,
        "turns": len(real),
        "turns_changed": len(changed),
        "changed_turns": changed,
        "ms_per_kb": (corpus_s + turns_s) * 1000 / max(kb, 1e-9),
    }


def _show(text: str, width: int = 160) -> str:
    one = text.replace("\n", "⏎")
    return one if len(one) <= width else one[: width - 1] + "…"


def main(argv: list[str] | None = None) -> dict[str, object]:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a small slice (the test suite's)")
    ap.add_argument("--seed", type=int, default=0, help="the corpus seed (default 0)")
    ap.add_argument("--misses", action="store_true", help="print every miss with its text")
    ap.add_argument(
        "--by",
        choices=["format", "context", "family"],
        action="append",
        help="print recall per format / context / family (repeatable)",
    )
    args = ap.parse_args(argv)
    r = score(args.seed, args.quick)
    whole, n = r["whole"], r["cases"]
    assert isinstance(whole, int) and isinstance(n, int)
    negs = r["negatives_changed"]
    assert isinstance(negs, list)
    print(
        f"held-out corpus seed {r['seed']}: {n} cases, {r['formats']} formats;"
        f" redacted whole {whole}/{n} ({whole / n:.1%});"
        f" negatives changed {len(negs)}/{r['negatives']};"
        f" turns changed {r['turns_changed']}/{r['turns']}; {r['ms_per_kb']:.3f} ms/KB"
    )
    per = r["per"]
    assert isinstance(per, dict)
    for axis in args.by or []:
        print(f"-- per {axis}")
        for key, (ok, tot) in sorted(per[axis].items(), key=lambda kv: kv[1][0] / kv[1][1]):
            print(f"    {key:<30} {ok:>4}/{tot:<4} {ok / tot:6.1%}")
    misses = r["misses"]
    assert isinstance(misses, list)
    if args.misses:
        for m in misses:
            tag = "PARTIAL" if m["partial"] else "MISSED"
            print(f"  {tag} {m['kind']} / {m['context']} left={m['left']}")
            print(f"      in:  {_show(m['text'])}")
            print(f"      out: {_show(m['redacted'])}")
        for t in negs:
            print(f"  FALSE POSITIVE (negative): {_show(t)} -> {_show(redact(t)[0])}")
        changed = r["changed_turns"]
        assert isinstance(changed, list)
        for a, b in changed:
            print(f"  FALSE POSITIVE (turn): {_show(a)} -> {_show(b)}")
    return r


if __name__ == "__main__":
    main()
