"""Credentials known by their shape: a provider's documented prefix and alphabet.

Pure: no I/O. `SHAPES` is the table `secrets_rules.spans` runs (``ghp_``, ``github_pat_``,
``sk-proj-``, ``sk-ant-``, ``AIza``, ``hf_``, ``xoxb-``, ``nfp_``, JWTs, ...); each shape
names literal hints, one of which a text must hold before its pattern runs (most texts hold
none, so the table costs little). A match runs to the token's end (`TAIL`), not to the
documented length, so no tail of a longer key survives.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["SHAPES", "TAIL", "Shape", "mixed"]

_TOKEN_CHARS = r"A-Za-z0-9_\-"
# The rest of a token after a provider's documented part: its own characters, and a dot,
# slash, plus, equals or tilde inside it (never one that ends a sentence).
TAIL = re.compile(r"(?:[A-Za-z0-9_\-+/=~]|[.](?=[A-Za-z0-9_\-]))*")


@dataclass(frozen=True, slots=True)
class Shape:
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
) -> Shape:
    return Shape(
        kind,
        (hints,) if isinstance(hints, str) else hints,
        re.compile(r"(?<![A-Za-z0-9])" + regex),
        group,
        tail,
        valid,
    )


_B = _TOKEN_CHARS
SHAPES: tuple[Shape, ...] = (
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
    _shape("api-key", "sk-", r"sk-[A-Za-z0-9]{32,}", valid=lambda s: _varied(s) and mixed(s)),
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
    # In the Bot API's URL the token follows "/bot": https://api.telegram.org/bot<token>/...
    _shape("telegram-token", "/bot", r"(?<=/)bot([0-9]{8,10}:AA[A-Za-z0-9_\-]{30,})", group=1),
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
        valid=lambda s: _varied(s) and mixed(s),
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
    _shape(
        "atlassian-token",
        ("ATATT3", "ATCTT3", "ATBB"),
        r"(?:AT[AC]TT3[A-Za-z0-9_\-=]{100,}|ATBB[A-Za-z0-9_\-=]{28,})",
    ),
    _shape("postman-key", "PMAK-", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
    _shape("age-key", "AGE-SECRET-KEY-1", r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
    _shape("doppler-token", "dp.", rf"dp\.(?:st|ct|pt|sa|scim|audit)\.[{_B}.]{{40,}}"),
    _shape("terraform-token", ".atlasv1.", rf"[A-Za-z0-9]{{14}}\.atlasv1\.[{_B}]{{60,}}"),
    _shape("square-token", ("sq0", "EAAA"), rf"(?:sq0(?:atp|csp)-[{_B}]{{22,}}|EAAA[{_B}]{{60,}})"),
    _shape("heroku-key", "HRKU-", rf"HRKU-[{_B}]{{40,}}"),
    _shape("newrelic-key", "NR", r"NR(?:AK|AA|II|JS|RA|SP|IQ)-[A-Za-z0-9]{20,}"),
    _shape("newrelic-key", "NRAL", r"[a-fA-F0-9]{36}NRAL(?![A-Za-z0-9])", tail=False),
    _shape("netlify-token", ("nfp_", "nfc_", "nfo_", "nfu_"), r"nf[pcou]_[A-Za-z0-9]{36,}"),
    _shape("firebase-fcm-key", ":APA91b", rf"AAAA[{_B}]{{7}}:APA91b[{_B}]{{100,}}"),
    _shape("circleci-token", "CCIP", r"CCIP(?:AT|RJ)_[A-Za-z0-9]{16,}_[a-f0-9]{32,}"),
    _shape(
        "paypal-token",
        ("A21AA", "access_token$"),
        rf"(?:A21AA[{_B}]{{50,}}|access_token\$(?:production|sandbox)\$[a-z0-9]{{16}}\$[a-f0-9]{{32}})",
    ),
    _shape("planetscale-token", "pscale_", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-.]{30,}"),
    _shape("resend-key", "re_", r"re_[A-Za-z0-9]{8}_[A-Za-z0-9]{20,}"),
    _shape("posthog-key", "phx_", r"phx_[A-Za-z0-9]{30,}"),
    _shape("langfuse-key", "sk-lf-", r"sk-lf-[a-f0-9\-]{30,}"),
    _shape("nvidia-key", "nvapi-", rf"nvapi-[{_B}]{{40,}}"),
    _shape("tavily-key", "tvly-", r"tvly-(?:dev-|prod-)?[A-Za-z0-9]{24,}"),
    _shape("jina-key", "jina_", r"jina_[A-Za-z0-9_\-]{40,}"),
    _shape("google-refresh-token", "1//0", rf"1//0[{_B}]{{40,}}"),
    _shape("alibaba-key", "LTAI", r"LTAI[A-Za-z0-9]{12,24}(?![A-Za-z0-9])", tail=False),
    _shape("fly-token", "FlyV1 ", r"(?<=FlyV1 )fm[12][a-z]?_[A-Za-z0-9_\-+/=,]{40,}"),
    _shape("pulumi-token", "pul-", r"pul-[a-f0-9]{40}"),
    _shape("tailscale-key", "tskey-", r"tskey-[a-z]+-[A-Za-z0-9]+-[A-Za-z0-9]+"),
    _shape("langsmith-key", "lsv2_", r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}"),
    _shape("pinecone-key", "pcsk_", r"pcsk_[A-Za-z0-9_]{50,}"),
    _shape("onepassword-token", "ops_eyJ", rf"ops_eyJ[{_B}]{{50,}}"),
    _shape("sentry-token", ("sntrys_", "sntryu_"), r"sntry[su]_[A-Za-z0-9+/=_]{40,}"),
    # A URL whose user is a 32-hex key (a Sentry DSN and its like).
    _shape("dsn-key", "://", r"(?<=://)[0-9a-f]{32}(?=@)", tail=False),
    _shape("fireworks-key", "fw_", r"fw_[A-Za-z0-9]{24,}", valid=lambda s: _varied(s) and mixed(s)),
)


def mixed(s: str) -> bool:
    return any(c.isdigit() for c in s) and any(c.isalpha() for c in s)
