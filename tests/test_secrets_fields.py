"""Secrets never stored, field by field: a credential put in any text field of any item kind
(a bead's content, source, tags, session id, turn id, span path; a node's id, name, labels,
metadata keys and values; a fact's subject and object; the persona; a skill; an ingest
source URL) reaches no file of the data dir, no object of the remote (inflated), no line of
the daemon's log, no summary and no node. A daemon in a subprocess on a real socket, with a
``file://`` remote and the rules extractor and summaries on."""

from __future__ import annotations

import json
import random
import string
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from chrysalis import Memory
from chrysalis.extract import Entity, Extraction, Fact
from chrysalis.secrets.scan import redact_extraction, scan_item
from tests.daemon_process import DaemonProcess, DaemonThread
from tests.test_secrets_daemon import QUIET, _everything, _wait_indexed

_RNG = random.Random(29)


def _body(alphabet: str, n: int) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


# Made at run time (no token-shaped literal in the file), one per field, so a leak names
# its field. Ids take only [A-Za-z0-9._:@-]: an AWS key id fits.
def _aws() -> str:
    return "AKIA" + _body(string.ascii_uppercase + "234567", 16)


def _github() -> str:
    return "ghp_" + _body(string.ascii_letters + string.digits, 36)


def _openai() -> str:
    return "sk-proj-" + _body(string.ascii_letters + string.digits + "_-", 80)


def _password() -> str:
    return "Zq7" + _body(string.ascii_letters + string.digits, 9) + "!&$"


FIELDS = {
    "bead content": _openai(),
    "bead source": _github(),
    "bead tag": _github(),
    "bead session id": _aws(),
    "bead turn id": _aws(),
    "bead span path": _github(),
    "node id": _aws(),
    "node name": _openai(),
    "node label": _github(),
    "node metadata value": _password(),
    "node metadata key": _github(),
    "fact subject": _openai(),
    "fact object": _password(),
    "persona name": _github(),
    "persona goal": _openai(),
    "persona trait": _password(),
    "skill name": _github(),
    "skill example": _openai(),
    "ingest source password": _password(),
    "ingest text": _github(),
}
SECRETS = list(FIELDS.values())


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[DaemonProcess]:
    env = {**QUIET, "CHRYSALIS_EXTRACTOR": "rules", "CHRYSALIS_SUMMARY_AFTER_S": "0.2"}
    d = DaemonThread(tmp_path / "laptop", env=env)
    (tmp_path / "shared").mkdir()
    d.start("--remote", f"file://{tmp_path / 'shared'}")
    yield d
    d.close()


def test_a_credential_in_any_field_reaches_no_file_no_remote_no_log(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    f = FIELDS
    with daemon.client() as c:
        c.remember(
            f"deploy notes: the key is {f['bead content']} and Ada met Grace",
            session_id=f"ops-{f['bead session id']}",
            turn_id=f"t-{f['bead turn id']}",
            tags=["ops", f"tok {f['bead tag']}"],
            source=f"https://example.com/?token={f['bead source']}",
            span_refs=[{"path": f"notes/{f['bead span path']}.md", "start_line": 1, "end_line": 2}],
        )
        c.remember("Ada said the deploy went fine", session_id=f"ops-{f['bead session id']}")
        c.add_node(
            f"n-{f['node id']}",
            "thing",
            name=f"key {f['node name']}",
            labels=[f"token {f['node label']}"],
            metadata={"password": f["node metadata value"], f["node metadata key"]: "x"},
        )
        c.add_fact(f"token {f['fact subject']}", "unlocks", f"password: {f['fact object']}")
        c.update_persona(
            name=f"bot {f['persona name']}",
            goals=[f"use {f['persona goal']}"],
            traits={"db": f"password={f['persona trait']}"},
        )
        c.put_skill(
            {
                "id": "deploy",
                "name": f"deploy with {f['skill name']}",
                "examples": [f"export OPENAI_API_KEY={f['skill example']}"],
            }
        )
        got = c.ingest(
            text=f"setup: token {f['ingest text']}\n",
            source=f"https://ada:{f['ingest source password']}@git.example.com/notes.md",
        )
        assert got["redacted"] == 2  # the password in the source URL, the token in the text
        assert f["ingest source password"] not in str(got)
    _wait_indexed(daemon)
    time.sleep(1.0)  # let the summary worker see a quiet session
    _wait_indexed(daemon)
    out = daemon.cli("sync", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    assert daemon.stop() == 0

    data, remote = _everything(daemon.data_dir), _everything(tmp_path / "shared")
    log = daemon.log.read_bytes()
    assert b"REDACTED" in remote  # the items did reach the remote, redacted
    for field, secret in FIELDS.items():
        for where, blob in (("data dir", data), ("remote", remote), ("log", log)):
            assert secret.encode() not in blob, f"the {field} reached the {where}"


def test_every_field_of_every_kind_is_scanned() -> None:
    """The scan itself, kind by kind (the daemon test above shows the stores)."""
    secret = _github()
    rows = {
        "bead": {"content": "c", "source": secret, "tags": [secret], "session_id": _aws(),
                 "turn_id": _aws(), "span_refs": [{"path": secret, "start_line": 1,
                                                   "end_line": 1}]},
        "node": {"id": _aws(), "type": "thing", "name": secret, "labels": [secret],
                 "metadata": {"a": {"b": [secret]}, secret: 1}},
        "edge": {"id": _aws(), "source": _aws(), "target": _aws(), "predicate": secret,
                 "metadata": {"note": secret}},
        "persona": {"name": secret, "description": secret, "goals": [secret],
                    "norms": [secret], "skills": [_aws()], "traits": {"k": secret}},
        "skill": {"id": _aws(), "name": secret, "description": secret, "signature": secret,
                  "examples": [secret], "tags": [secret]},
        "fact": {"subject": secret, "predicate": "p", "object": secret},
    }  # fmt: skip
    for kind, row in rows.items():
        item, found = scan_item(kind, row, "redact")
        text = repr(item)
        assert "ghp_" not in text and "AKIA" not in text, kind
        assert found and all("ghp_" not in x.field and "AKIA" not in x.field for x in found)
        if "id" in row:
            assert item["id"].startswith("redacted-aws-access-key"), kind  # still an id


def test_knowledge_from_a_bead_stored_before_the_scan_names_no_secret(tmp_path: Path) -> None:
    """A bead written under ``off`` (or before this scan) holds the secret; what the
    extractor derives from it is redacted on the way to the graph."""
    secret = _openai()
    ex = Extraction(
        "b1",
        entities=(Entity(secret, "thing"),),
        facts=(Fact("Ada", "uses", f"key {secret}"),),
    )
    clean = redact_extraction(ex, "redact")
    assert secret not in repr(clean) and "[REDACTED:openai-key]" in clean.entities[0].name
    assert redact_extraction(ex, "off") is ex
    mem = Memory.open(tmp_path / "m", sync=False)
    try:
        mem.add_fact(f"token {secret}", "unlocks", "the bucket")
        assert all(secret not in (n.name or "") for n in mem.all_nodes())
    finally:
        mem.close()


def test_secrets_audit_finds_what_off_stored_and_forgets_it_with_receipts(
    tmp_path: Path,
) -> None:
    leaked, clean = _github(), "plain words about tea"
    d = DaemonThread(tmp_path / "loose", env={**QUIET, "CHRYSALIS_SECRETS": "off"})
    try:
        d.start()
        with d.client() as c:
            bad = c.remember(f"the CI token {leaked}", session_id="ops").id
            good = c.remember(clean).id
        out = d.cli("secrets", "audit", "--json")
        assert out.returncode == 0, out.stderr
        found = json.loads(out.stdout)["found"]
        assert [(f["kind"], f["id"]) for f in found] == [("bead", bad)]
        assert found[0]["found"] == [{"kind": "github-token", "field": "content"}]
        assert leaked not in out.stdout
        out = d.cli("secrets", "audit", "--forget", "--json")
        assert out.returncode == 0, out.stderr
        got = json.loads(out.stdout)
        assert got["forgotten"] == [bad] and got["receipts"][0]["bead_id"] == bad
        assert leaked not in out.stdout
        with d.client() as c:
            assert [b.id for b in c.last_beads(10)] == [good]
        again = d.cli("secrets", "audit")
        assert again.returncode == 0 and "no stored credential found" in again.stdout
        assert d.stop() == 0
        assert leaked.encode() not in _everything(d.data_dir)
    finally:
        d.close()
