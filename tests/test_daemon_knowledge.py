"""Knowledge in the daemon (DESIGN §13): the rules extractor by default, its progress in
status, metrics and doctor, a failing extractor named with the fix, and a bad setting refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from chrysalis.core.errors import NotFound
from tests.eventually import eventually

from .daemon_process import DaemonProcess, DaemonThread


def wait_caught_up(d: DaemonProcess, timeout: float = 5.0) -> dict[str, object]:
    with d.client() as c:
        k = eventually(lambda: c.status()["knowledge"],
                       until=lambda k: k["ops_behind"] == 0 and k["extracted"],
                       timeout=timeout, what="the knowledge worker to catch up")  # fmt: skip
        return k  # type: ignore[no-any-return]


def knowledge_place(d: DaemonProcess, bead_id: str) -> dict[str, str]:
    places = d.once("forget_receipt", bead_id).model_dump()["places"]
    (place,) = [p for p in places if p["name"].endswith(": knowledge")]
    return place  # type: ignore[no-any-return]


def test_rules_by_default_derive_entities_and_facts(tmp_path: Path) -> None:
    d = DaemonThread(tmp_path / "data")
    d.env.pop("CHRYSALIS_EXTRACTOR", None)  # the default
    d.start()
    try:
        with d.client() as c:
            bead = c.remember("I live in Lisbon and work at Acme Corp", session_id="s")
        k = wait_caught_up(d)
        assert k["extractor"] == "rules/6" and k["last_error"] is None
        with d.client() as c:
            lisbon = c.get_node("lisbon")
            assert lisbon.name == "Lisbon" and bead.id in lisbon.evidence
            assert lisbon.derived_by == "rules/6"
            around = {n.node.name for n in c.neighbors("user")}  # found by name
        assert "Lisbon" in around
        metrics = d.once("metrics")
        assert 'chrysalis_knowledge_behind_ops{memory="default"} 0.0' in metrics
        assert 'chrysalis_knowledge_derived{kind="nodes",memory="default"}' in metrics
        text = d.cli("status")
        assert text.returncode == 0 and "knowledge rules/6: 0 ops behind" in text.stdout
        doctor = {c["check"]: c for c in d.once("doctor")["checks"]}
        assert doctor["knowledge"]["status"] == "ok", doctor["knowledge"]
        # forgotten: what only it supported is retracted, and the receipt says so
        d.once("forget", bead.id)

        def knowledge_state() -> str:
            place = knowledge_place(d, bead.id)
            assert place["state"] in ("pending", "gone"), place
            return place["state"]

        eventually(knowledge_state, until=lambda s: s == "gone", timeout=5,
                   what="the receipt's knowledge place to be gone")  # fmt: skip
        with d.client() as c, pytest.raises(NotFound):
            c.get_node("lisbon")
    finally:
        d.close()


def test_a_failing_extractor_is_a_doctor_warning_with_the_fix(tmp_path: Path) -> None:
    env = {"CHRYSALIS_EXTRACTOR": "ollama:qwen3:4b", "OLLAMA_HOST": "http://127.0.0.1:9"}
    d = DaemonProcess(tmp_path / "data", env=env).start()
    try:
        d.once("remember", "I live in Lisbon")
        k = eventually(lambda: d.once("status")["knowledge"], until=lambda k: k["paused_for_s"],
                       timeout=5, what="the knowledge worker to pause")  # fmt: skip
        assert k["last_error"] and k["ops_behind"] > 0
        check = {c["check"]: c for c in d.once("doctor")["checks"]}["knowledge"]
        assert check["status"] == "warn" and "paused" in check["detail"], check
        assert "ollama serve" in check["fix"] and 'extractor = "rules"' in check["fix"]
    finally:
        d.close()


def test_a_bad_extractor_setting_stops_the_start(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('extractor = "olama"\n')
    d = DaemonProcess(tmp_path / "data", env={"CHRYSALIS_CONFIG": str(config)})
    d.env.pop("CHRYSALIS_EXTRACTOR", None)  # the file's setting, not the tests' default
    try:
        d.start(wait=False)
        assert d.proc is not None and d.proc.wait(20) == 2
        out = d.output()
        assert f"{config}: extractor: unknown extractor 'olama'" in out, out
        assert "use rules, ollama[:MODEL] or none" in out
        flag = d.cli("daemon", "--data-dir", str(tmp_path / "data"), "--extractor", "rules:x")
        assert flag.returncode == 2 and "--extractor: unknown extractor 'rules:x'" in flag.stderr
    finally:
        d.close()


def test_a_bad_as_of_is_400_naming_it_and_the_daemon_serves_on(tmp_path: Path) -> None:
    import httpx

    d = DaemonThread(tmp_path / "data", env={"CHRYSALIS_EXTRACTOR": "rules"})
    d.start()
    try:
        with d.client() as c:
            c.remember("I live in Lisbon", session_id="s")
        wait_caught_up(d)
        transport = httpx.HTTPTransport(uds=str(d.socket))
        with httpx.Client(transport=transport, base_url="http://chrysalis", timeout=30) as h:
            before = h.get("/v1/status").json()["state_digest"]
            r = h.post("/v1/retrieve", json={"query": "where", "as_of": "last tuesday"})
            assert r.status_code == 400 and "as_of" in r.json()["error"]["message"], r.text
            r = h.get("/v1/kg/nodes/user/neighbors", params={"as_of": "soon"})
            assert r.status_code == 400 and "as_of" in r.json()["error"]["message"], r.text
            assert h.get("/v1/status").json()["state_digest"] == before
            ok = h.get("/v1/kg/nodes/user/neighbors", params={"as_of": "2000-01-01T00:00:00Z"})
            assert ok.status_code == 200 and ok.json() == []  # nothing held then
            ok = h.get("/v1/kg/nodes/user/neighbors", params={"include_invalid": "true"})
            assert [n["node"]["name"] for n in ok.json()] == ["Lisbon"]
    finally:
        d.close()
