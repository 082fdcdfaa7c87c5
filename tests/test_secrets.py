"""Secrets never stored: the scan per kind, no false alarm on prose and code, and the policy
(redact, refuse, off) on every way a bead comes in (append, import, ingest)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from chrysalis import Memory
from chrysalis.core.errors import BY_CODE, InvalidInput, SecretRefused
from chrysalis.ingest.files import ingest_path, ingest_text
from chrysalis.secrets.scan import Finding, describe, redact, scan_bead
from chrysalisd.config import load_settings
from chrysalisd.exchange import export_lines, import_lines

# Made up at run time, so this file holds no token-shaped literal for a scanner to flag.
AWS_KEY = "AKIA" + "IOSFODNN7" + "QWERTY1"
GITHUB_TOKEN = "ghp_" + "x1Y2z3W4" * 4 + "AbCd"
KEY_BODY = ["MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM6wPbx", "q9ZtH0aJnTk/8Ui7sWxGm2EH5wLj0Rc=="]
PRIVATE_KEY = "\n".join(
    ["-----BEGIN RSA PRIVATE KEY-----", *KEY_BODY, "-----END RSA PRIVATE KEY-----"]
)
PASSWORD = "hunter2pass"
URL = f"https://ada:{PASSWORD}@example.com/repo.git"
SECRETS = [AWS_KEY, GITHUB_TOKEN, *KEY_BODY, PASSWORD]

ALL_FOUR = (
    f"Deploy notes. The key id is {AWS_KEY} and the CI token {GITHUB_TOKEN}.\n"
    f"Clone from {URL} with this key:\n{PRIVATE_KEY}\nThat is all."
)


def test_an_aws_key_is_redacted_and_the_text_around_it_kept() -> None:
    text, found = redact(f"export AWS_ACCESS_KEY_ID={AWS_KEY} # ci")
    assert text == "export AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key] # ci"
    assert found == [Finding("aws-access-key", "content", 25, 50)]
    assert text[25:50] == "[REDACTED:aws-access-key]"  # offsets are of the marker


def test_a_github_token_is_redacted_whole() -> None:
    text, found = redact(f"token: {GITHUB_TOKEN}")
    assert text == "token: [REDACTED:github-token]"
    assert [f.kind for f in found] == ["github-token"]


def test_a_private_key_is_redacted_as_a_whole_block() -> None:
    text, found = redact(f"my key:\n{PRIVATE_KEY}\nkeep it safe")
    assert text == "my key:\n[REDACTED:private-key]\nkeep it safe"
    assert [f.kind for f in found] == ["private-key"]


def test_a_private_key_cut_short_is_redacted_to_the_end_of_its_lines() -> None:
    text, _ = redact(f"oops: {PRIVATE_KEY[:75]}")
    assert text == "oops: [REDACTED:private-key]"
    text, _ = redact(f"oops: {PRIVATE_KEY[:73]}\nand the rest of the note")
    assert text == "oops: [REDACTED:private-key]\nand the rest of the note"
    as_json = json.dumps({"key": PRIVATE_KEY, "user": "ada"})  # escaped newlines
    assert redact(as_json)[0] == '{"key": "[REDACTED:private-key]", "user": "ada"}'
    assert redact(json.dumps({"key": PRIVATE_KEY[:75]}))[0] == '{"key": "[REDACTED:private-key]"}'


def test_a_sentence_naming_the_header_loses_only_the_header() -> None:
    text, _ = redact("A PEM file starts with -----BEGIN PRIVATE KEY----- and then base64.")
    assert text == "A PEM file starts with [REDACTED:private-key] and then base64."


def test_an_aws_secret_access_key_is_its_own_kind() -> None:
    secret = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYzEXAMPLEKEY"[:18]
    text, found = redact(f'aws_secret_access_key = "{secret}"')
    assert text == 'aws_secret_access_key = "[REDACTED:aws-secret-key]"'
    assert [f.kind for f in found] == ["aws-secret-key"]


def test_a_password_in_a_url_keeps_the_url_around_it() -> None:
    text, found = redact(f"see {URL} now")
    assert text == "see https://ada:[REDACTED:password]@example.com/repo.git now"
    assert [(f.kind, f.start, f.end) for f in found] == [("password", 16, 35)]


def test_all_four_in_one_text() -> None:
    text, found = redact(ALL_FOUR)
    assert not any(s in text for s in SECRETS)
    assert sorted(f.kind for f in found) == [
        "aws-access-key", "github-token", "password", "private-key",
    ]  # fmt: skip
    for f in found:
        assert text[f.start : f.end] == f"[REDACTED:{f.kind}]"
    assert redact(text) == (text, [])  # a marker is not a secret: redacting twice is a no-op


PROSE = """\
The user prefers green tea in the morning and asked us to deploy on Tuesdays. Her password
manager is 1Password; she said the secret to good coffee is patience. See
https://example.com/docs:intro and http://localhost:8080/api for details. Key ideas:
eventual consistency, vector clocks, AKIA is how AWS key ids begin. Call 555-0100.
"""

CODE = """\
import getpass

def login(user: str) -> dict[str, str]:
    password = input("password: ")
    token = os.environ["GITHUB_TOKEN"]
    secret_key = getpass.getpass()
    aws_secret = settings.AWS_SECRET_ACCESS_KEY
    url = f"https://{user}:{password}@example.com"
    # e.g. postgres://user:pass@localhost/db or https://user:****@host
    return {"user": user, "sha": "3f786850e387550fdab836ed7e6dc881de23001b"}
"""


# What the held-out corpus (bench/secrets_heldout.py) found missing on main, one per family;
# the secret is the part in each case that must not survive (made up here, at run time).
_B64 = "QUtJQV" + "pRN0VYQU1QTEVLRVkyMzQ="
_LETTERS = "BKYPFAdEPyc" + "AGWigTwfOPbiD"
HELD_OUT_MISSES = {
    "kubernetes Secret data": (f"kind: Secret\ndata:\n  key-id: {_B64}\n", _B64),
    "k8s env name/value": (f'env:\n  - name: VERCEL_TOKEN\n    value: "{_LETTERS}"\n', _LETTERS),
    ".NET add key/value": (f'<add key="cfApiToken" value="{_LETTERS}9x" />', _LETTERS),
    "os.environ subscript": (f"os.environ['DD_API_KEY'] = '{_LETTERS}42'", _LETTERS),
    "PHP define": (f"define('TWILIO_AUTH_TOKEN', '{_LETTERS}7');", _LETTERS),
    "markdown table": (f"| name | value |\n|---|---|\n| COHERE_API_KEY | {_LETTERS}1 |", _LETTERS),
    "set X to v": (f"I set MISTRAL_API_KEY to {_LETTERS}3 and it fails", _LETTERS),
    "json-escaped export": (json.dumps({"c": f'export API_KEY="{_LETTERS}5"'}), _LETTERS),
    "token in parens": (f"The token ({_LETTERS}8) expired.", _LETTERS),
    "chat arrow": (f"use this token → {_LETTERS}", _LETTERS),
    "prose key, letters only": (f"Here's my Vercel token: {_LETTERS}", _LETTERS),
    "base64 starting with /": (f'awsSecretAccessKey: "/6STnY5Z0pYfYh39/{_LETTERS}"', _LETTERS),
    "netlify": ("nfp_" + _LETTERS + "0123456789abcdefghij", _LETTERS),
    "telegram bot url": (
        f"https://api.telegram.org/bot123456789:AA{_LETTERS}xyz12345/getMe",
        _LETTERS,
    ),
    "cookie header": (f"Cookie: sessionid={_LETTERS}x1; theme=dark", _LETTERS),
    "curl -b": (f"curl -b 'connect.sid=s%3A{_LETTERS}' https://x.io", _LETTERS),
    "requests auth tuple": ("requests.get(u, auth=('ada', 'Harbor391$=x'))", "Harbor391$=x"),
    "mysql -p": ("mysql -h db -u ci -p'4172quartz!!Q' shop", "4172quartz!!Q"),
    "docker login -p": ("docker login -u bot -p orbit05pepper#$ registry.io", "orbit05pepper#$"),
    "password in prose": ("my password is `Harbor391$=`, wrong scope?", "Harbor391$="),
    "smtp_pass": ('smtp_pass = "pepper^+589"', "pepper^+589"),
    "bearer with symbols": ('-H "Authorization: Bearer 835*Harbor"', "835*Harbor"),
}


@pytest.mark.parametrize("case", HELD_OUT_MISSES.values(), ids=list(HELD_OUT_MISSES))
def test_what_the_held_out_corpus_found_missing_is_redacted_whole(case: tuple[str, str]) -> None:
    text, secret = case
    out, found = redact(text)
    assert found and secret not in out and secret[:6] not in out and secret[-6:] not in out, out


@pytest.mark.parametrize("text", [PROSE, CODE], ids=["prose", "code"])
def test_no_false_alarm_on_prose_and_code(text: str) -> None:
    assert redact(text) == (text, [])


def test_scan_bead_covers_source_and_tags_and_policies() -> None:
    row = {"content": "hi", "source": URL, "tags": ["ok", GITHUB_TOKEN]}
    item, found = scan_bead(row, "redact")
    assert item["source"] == "https://ada:[REDACTED:password]@example.com/repo.git"
    assert item["tags"] == ["ok", "[REDACTED:github-token]"]
    assert describe(found) == "1 password in source, 1 github-token in tags[1]"
    assert scan_bead(row, "off") == (row, [])
    with pytest.raises(SecretRefused) as err:
        scan_bead(row, "refuse")
    assert "password in source" in err.value.message
    assert not any(s in err.value.message + json.dumps(err.value.details) for s in SECRETS)
    with pytest.raises(InvalidInput, match="secrets policy must be one of"):
        scan_bead(row, "maybe")  # type: ignore[arg-type]


def test_secret_refused_is_in_the_error_tree() -> None:
    assert issubclass(SecretRefused, InvalidInput)
    assert BY_CODE["secret_refused"] is SecretRefused and SecretRefused.status == 422


# ---- the policy on the write side ------------------------------------------------------------


def _stored_bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file())


def _assert_nowhere(path: Path) -> None:
    data = _stored_bytes(path)
    for secret in SECRETS:
        assert secret.encode() not in data, secret[:4]


def test_redact_is_the_default_and_nothing_reaches_the_data_dir(
    open_memory: Callable[..., Memory],
) -> None:
    mem = open_memory()
    beads, findings = mem.append_beads_with_findings([{"content": ALL_FOUR, "id": "b1"}])
    assert len(findings[0]) == 4 and all(f.field == "content" for f in findings[0])
    stored = mem.get_bead("b1").content
    assert "[REDACTED:private-key]" in stored and beads[0].content == stored
    assert not any(s in stored for s in SECRETS)
    # the same bead again (a retried remember) is the same bead, not a conflict
    assert mem.append_bead(ALL_FOUR, id="b1").content == stored
    path = mem.path
    mem.close()
    _assert_nowhere(path)


def test_a_large_bead_is_redacted_before_it_becomes_a_blob(
    open_memory: Callable[..., Memory],
) -> None:
    mem = open_memory(blob_threshold=1024)
    bead = mem.append_bead("filler line\n" * 2000 + ALL_FOUR)
    assert bead.blob is not None
    assert "[REDACTED:aws-access-key]" in mem.get_bead(bead.id).content
    path = mem.path
    mem.close()
    _assert_nowhere(path)


def test_refuse_stores_nothing_and_names_the_kinds(open_memory: Callable[..., Memory]) -> None:
    mem = open_memory(secrets="refuse")
    with pytest.raises(SecretRefused) as err:
        mem.append_beads([{"content": "fine"}, {"content": ALL_FOUR}])
    for kind in ("aws-access-key", "github-token", "private-key", "password"):
        assert f"1 {kind} in content" in err.value.message
    assert not any(s in str(err.value) for s in SECRETS)
    assert mem.last_beads(10) == []
    assert mem.append_bead("no secret here").content == "no secret here"


def test_off_stores_the_text_as_given(open_memory: Callable[..., Memory]) -> None:
    mem = open_memory(secrets="off")
    assert mem.append_bead(ALL_FOUR).content == ALL_FOUR


def test_a_bad_policy_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="secrets must be one of redact, refuse, off"):
        Memory.open(tmp_path / "m", secrets="sometimes")  # type: ignore[arg-type]


def test_the_daemon_setting_names_its_key() -> None:
    assert load_settings(None, None, {}).secrets == "redact"
    assert load_settings(None, None, {"CHRYSALIS_SECRETS": "refuse"}).secrets == "refuse"
    with pytest.raises(InvalidInput) as err:
        load_settings(None, None, {"CHRYSALIS_SECRETS": "maybe"})
    assert "CHRYSALIS_SECRETS: expected one of 'redact', 'refuse' or 'off'" in err.value.message


# ---- import and ingest -----------------------------------------------------------------------


def _export_with_secret(open_memory: Callable[..., Memory]) -> bytes:
    source = open_memory("source", secrets="off")
    source.append_bead(ALL_FOUR, id="leaky")
    lines = b"".join(export_lines(source))
    source.close()
    assert AWS_KEY.encode() in lines
    return lines


def test_import_redacts_counts_and_is_idempotent(open_memory: Callable[..., Memory]) -> None:
    lines = _export_with_secret(open_memory)
    mem = open_memory("target")
    got = import_lines(mem, lines)
    assert got["added"]["bead"] == 1 and got["redacted"] == 4
    again = import_lines(mem, lines)  # compared as it would be stored: no conflict
    assert again["added"]["bead"] == 0 and again["unchanged"]["bead"] == 1
    path = mem.path
    mem.close()
    _assert_nowhere(path)


def test_import_of_a_large_bead_redacts_its_blob_too(open_memory: Callable[..., Memory]) -> None:
    source = open_memory("source", secrets="off", blob_threshold=1024)
    big = source.append_bead("filler line\n" * 2000 + ALL_FOUR, id="big")
    assert big.blob is not None  # exported with its content and a blob ref of the secret
    lines = b"".join(export_lines(source))
    source.close()
    mem = open_memory("target", blob_threshold=1024)
    assert import_lines(mem, lines)["redacted"] == 4
    stored = mem.get_bead("big")
    assert stored.blob is not None and stored.blob.sha256 != big.blob.sha256
    assert "[REDACTED:private-key]" in stored.content
    assert import_lines(mem, lines)["unchanged"]["bead"] == 1
    path = mem.path
    mem.close()
    _assert_nowhere(path)


def test_import_under_refuse_names_the_line(open_memory: Callable[..., Memory]) -> None:
    lines = _export_with_secret(open_memory)
    mem = open_memory("target", secrets="refuse")
    with pytest.raises(SecretRefused, match=r"^line \d+: refused: the bead holds"):
        import_lines(mem, lines)
    assert mem.last_beads(10) == []


def test_ingest_redacts_before_chunking(open_memory: Callable[..., Memory], tmp_path: Path) -> None:
    doc = tmp_path / "notes.md"
    doc.write_text(f"# Setup\n\n{ALL_FOUR}\n\n# Other\n\nplain words\n")
    mem = open_memory()
    (result,) = ingest_path(mem, doc, max_chars=40)  # small chunks: the key block spans many
    assert result.redacted == 4 and result.added >= 2
    texts = [mem.get_bead(i).content for i in result.bead_ids]
    assert any("[REDACTED:private-key]" in t for t in texts)
    assert ingest_path(mem, doc, max_chars=40)[0].skipped  # unchanged input: nothing written
    path = mem.path
    mem.close()
    _assert_nowhere(path)


def test_ingest_under_refuse(open_memory: Callable[..., Memory], tmp_path: Path) -> None:
    mem = open_memory(secrets="refuse")
    with pytest.raises(SecretRefused, match="stdin: refused: it holds 1 github-token"):
        ingest_text(mem, f"token {GITHUB_TOKEN}", source="stdin")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "leaky.txt").write_text(ALL_FOUR)
    (tmp_path / "d" / "fine.txt").write_text("plain words")
    skipped: list[str] = []
    results = ingest_path(mem, tmp_path / "d", on_skip=lambda p, why: skipped.append(p.name))
    assert [Path(r.source).name for r in results] == ["fine.txt"] and skipped == ["leaky.txt"]


# ---- the bench's quick mode: the corpus and the false alarms -------------------------------


def test_the_bench_quick_mode_on_a_corpus_seed_the_rules_were_not_tuned_on() -> None:
    """`bench/secrets_bench.py --quick` on seed 7 (the rules were tuned on seed 0): 99 % of
    the pasted credentials redacted whole; at most 0.5 % of the dev sets' turns changed."""
    import importlib.util
    import sys

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location(
        "secrets_bench", root / "bench" / "secrets_bench.py"
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    ours = bench.main(["--quick", "--seed", "7"])["chrysalis"]
    assert ours["whole"] >= 0.99 * ours["cases"], ours["misses"]
    assert ours["turns_changed"] <= 0.005 * ours["turns"]
    assert ours["files_changed"] <= 0.05 * ours["files"]


def test_the_held_out_corpus_quick_mode_on_a_seed_not_used_for_tuning() -> None:
    """`bench/secrets_heldout.py --quick` (a corpus written apart from the rules) on seed 7
    (the rules' fixes were made against seeds 0-4): 99 % of pasted credentials redacted
    whole; none of its credential-looking negatives and at most 0.5 % of real turns changed."""
    import importlib.util
    import sys

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location(
        "secrets_heldout", root / "bench" / "secrets_heldout.py"
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    r = bench.main(["--quick", "--seed", "7"])
    assert r["whole"] >= 0.99 * r["cases"], r["misses"]
    assert r["negatives_changed"] == []
    assert r["turns_changed"] <= 0.005 * r["turns"]
