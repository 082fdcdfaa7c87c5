"""``chrysalis import --from chatgpt|claude|claude-code`` through a real daemon: what comes
in, a summary of it, nothing new the second time, forgotten turns stay forgotten, credentials
redacted; and ``recall --memory a,b`` across memories."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from chrysalis.core.errors import NotFound
from chrysalisd.cli import main

from .daemon_process import DaemonProcess

FIXTURES = Path(__file__).parent / "fixtures"
CHATGPT = FIXTURES / "histories" / "chatgpt_conversations.json"
CLAUDE = FIXTURES / "histories" / "claude_conversations.json"
TRANSCRIPT = FIXTURES / "claude_code" / "transcript.jsonl"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    d = DaemonProcess(tmp_path_factory.mktemp("histories") / "data").start()
    yield d
    d.close()


def cli(daemon: DaemonProcess, *args: str) -> Result:
    return CliRunner().invoke(main, ["--socket", str(daemon.socket), *args])


def imported(daemon: DaemonProcess, *args: str) -> dict[str, Any]:
    done = cli(daemon, "import", *args, "--json")
    assert done.exit_code == 0, done.output
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


def test_chatgpt_export_in_then_again_changes_nothing(daemon: DaemonProcess) -> None:
    first = imported(daemon, "--from", "chatgpt", str(CHATGPT), "--memory", "default")
    assert first == {
        "format": "chatgpt", "path": str(CHATGPT), "conversations": 2, "turns": 10,
        "sessions": 2, "added": 10, "unchanged": 0, "forgotten": 0, "redacted": 0,
        "bad_lines": 0, "repeated": 0,
    }  # fmt: skip
    with daemon.client() as c:
        porto = c.last_beads(50, session_id="chatgpt-6601f2a0-1111-4c4c-8d8d-porto0000001")
    assert [b.role for b in porto] == ["user", "tool", "tool", "assistant", "user", "assistant"]
    assert porto[0].ts == 1709290100.0
    again = imported(daemon, "--from", "chatgpt", str(CHATGPT))
    assert (again["added"], again["unchanged"]) == (0, 10)


def test_claude_export_redacts_the_pasted_key_and_says_so(daemon: DaemonProcess) -> None:
    done = cli(daemon, "import", "--from", "claude", str(CLAUDE))
    assert done.exit_code == 0, done.output
    assert "2 conversations, 5 turns in 2 sessions: 5 added, 0 already here" in done.stdout
    assert "redacted 1 secret before storing" in done.stderr
    with daemon.client() as c:
        said = c.get_bead("claude-c1a0d000-bbbb-4bbb-8ccc-invoice00002-n-3").content
    assert "sk_live_" not in said and "[REDACTED:" in said
    assert imported(daemon, "--from", "claude", str(CLAUDE))["unchanged"] == 5


def test_claude_code_folder_with_a_resumed_copy_and_a_forgotten_turn(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    project = tmp_path / "projects" / "-home-dev-orchard"
    project.mkdir(parents=True)
    shutil.copy(TRANSCRIPT, project / "5f0c2a7e-31b4-4c1e-9a55-0d7e3c9b1a42.jsonl")
    resumed = TRANSCRIPT.read_text().replace(
        "5f0c2a7e-31b4-4c1e-9a55-0d7e3c9b1a42", "99990000-0000-4000-8000-000000000001"
    )
    (project / "99990000-0000-4000-8000-000000000001.jsonl").write_text(resumed)
    first = imported(daemon, "--from", "claude-code", str(tmp_path / "projects"))
    assert (first["transcripts"], first["turns"], first["added"]) == (2, 8, 8)
    assert (first["repeated"], first["bad_lines"], first["redacted"]) == (8, 2, 2)
    with daemon.client() as c:
        c.forget("cc-a0000000-0000-4000-8000-000000000009")
    # Another resumed copy, imported alone: the turns stored under the first session stay
    # there (kept as stored), the forgotten one stays forgotten.
    later = tmp_path / "later.jsonl"
    later.write_text(resumed.replace("99990000-0000-4000-8000-000000000001", "later-session"))
    again = imported(daemon, "--from", "claude-code", str(later))
    assert (again["added"], again["unchanged"], again["forgotten"]) == (0, 7, 1)
    with daemon.client() as c:
        assert c.last_beads(50, session_id="later-session") == []
        with pytest.raises(NotFound, match="forgotten"):
            c.get_bead("cc-a0000000-0000-4000-8000-000000000009")


def test_import_refusals_write_nothing(daemon: DaemonProcess, tmp_path: Path) -> None:
    wrong = cli(daemon, "import", "--from", "chatgpt", str(CLAUDE))  # claude's file
    assert wrong.exit_code == 1 and "not a ChatGPT export" in wrong.output
    stdin = cli(daemon, "import", "--from", "chatgpt", "-")
    assert stdin.exit_code == 2 and "not stdin" in stdin.output
    folder = cli(daemon, "import", str(tmp_path))
    assert folder.exit_code == 2 and "is a folder" in folder.output


def test_recall_across_two_memories_names_each_items_memory(daemon: DaemonProcess) -> None:
    with daemon.client() as c:
        for name, text in [("garden", "the fig tree needs repotting in April"),
                           ("kitchen", "the fig jam uses 40 % sugar")]:  # fmt: skip
            c.create_memory(name)
            with daemon.client(memory=name) as m:
                m.remember(text, session_id=f"{name}-notes")
    done = cli(daemon, "recall", "fig", "--memory", "garden,kitchen", "--json")
    assert done.exit_code == 0, done.output
    items = json.loads(done.stdout)["items"]
    assert {i["provenance"]["memory"] for i in items} == {"garden", "kitchen"}
    shown = cli(daemon, "recall", "fig", "--memory", "garden,kitchen")
    assert "· in garden" in shown.stdout and "· in kitchen" in shown.stdout
    across = cli(daemon, "context", "when is the fig tree repotted", "--memory", "garden,kitchen",
                 "--json")  # fmt: skip
    assert across.exit_code == 0, across.output
    cited = {i["id"] for i in json.loads(across.stdout)["items"]}
    with daemon.client(memory="garden") as g, daemon.client(memory="kitchen") as k:
        garden = {b.id for b in g.last_beads(5)}
        kitchen = {b.id for b in k.last_beads(5)}
    assert cited & garden, across.stdout  # the garden's bead, read through the default client
    assert cited <= garden | kitchen
    one = cli(daemon, "remember", "x", "--memory", "garden,kitchen")
    assert one.exit_code == 2 and "several memories go with recall and context only" in one.output
    empty = cli(daemon, "recall", "fig", "--memory", "garden,")
    assert empty.exit_code == 2 and "a memory name is empty" in empty.output


def _bench(name: str) -> Any:
    import importlib.util
    import sys

    path = Path(__file__).resolve().parents[1] / "bench" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_import_bench_quick_mode() -> None:
    """`bench/import_bench.py --quick`: a 1 MB export in, every kept turn added, then again:
    none added (the figures for 50 MB are in docs/benchmarks.md)."""
    out = _bench("import_bench").main(["--quick"])
    assert out["added"] == out["turns"] > 500
    assert (out["second_added"], out["second_unchanged"]) == (0, out["turns"])


def test_the_hook_bench_quick_mode() -> None:
    """`bench/hook_bench.py --quick`: the hook answers with context citing the note it should
    find, and with no daemon exits 0 saying so (its times are in docs/benchmarks.md)."""
    out = _bench("hook_bench").main(["--quick"])
    assert out["up"]["cites_the_note"] and out["up"]["exit_codes"] == [0]
    assert out["down"]["exit_code"] == 0 and "no daemon" in out["down"]["said"]
