"""bench/longmemeval_eval.py on a tiny synthetic haystack: the beads it writes and the metric's
arithmetic (never the real data, which CI may not have)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def lme() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "longmemeval_eval", ROOT / "bench" / "longmemeval_eval.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _question() -> dict[str, Any]:
    def session(sid: str, iso: str, texts: list[tuple[str, str]]) -> dict[str, Any]:
        return {
            "session_id": sid,
            "date": "",
            "iso": iso,
            "turns": [
                {"id": f"{sid}:{i}", "role": role, "content": text}
                for i, (role, text) in enumerate(texts)
            ],
        }

    return {
        "question_id": "q1",
        "question_type": "single-session-user",
        "question": "Which marathon did I run in Lisbon?",
        "answer": "the EDP Lisbon marathon",
        "question_date": "2023/05/30 (Tue) 10:18",
        "question_iso": "2023-05-30T10:18:00",
        "sessions": [
            session("s_a", "2023-05-01T09:00:00", [
                ("user", "I need a recipe for banana bread."),
                ("assistant", "Mash three ripe bananas, add flour, sugar and an egg."),
            ]),
            session("s_b", "2023-05-02T09:00:00", [
                ("user", "I ran the EDP marathon in Lisbon last October, my first one."),
                ("assistant", "Congratulations on finishing your first marathon in Lisbon!"),
                ("user", "Now I want to train for a trail race."),
            ]),
            session("s_b@2", "2023-05-03T09:00:00", [
                ("user", "Tell me about tide pools."),
                ("assistant", ""),  # an empty turn still becomes a bead
            ]),
        ],
        "gold_turns": ["s_b:0", "s_b:1"],
        "gold_sessions": ["s_b", "s_a"],
    }  # fmt: skip


def test_haystack_beads_ids_and_times(lme: ModuleType) -> None:
    q = _question()
    rows, back = lme.haystack(q)
    assert [r["id"] for r in rows] == [
        "s_a:0", "s_a:1", "s_b:0", "s_b:1", "s_b:2", "s_b@2:0", "s_b@2:1",
    ]  # fmt: skip
    assert all(back[r["id"]] == r["id"] for r in rows)  # valid ids map to themselves
    assert rows[3]["ts"] - rows[2]["ts"] == 1.0  # session date + turn index in seconds
    assert rows[2]["session_id"] == "s_b" and rows[1]["role"] == "assistant"
    assert rows[-1]["content"] == " "
    odd = lme.bead_id("sess/1:0")  # not a Chrysalis id: a stable stand-in
    assert odd != "sess/1:0" and odd == lme.bead_id("sess/1:0")


def test_metric_arithmetic(lme: ModuleType) -> None:
    q = _question()
    session_of = lme.turn_sessions(q)
    ranked = ["s_b@2:0", "s_b:1", "s_a:0", "s_a:1", "s_b@2:1", "s_b:2", "s_b:0"]
    assert lme.turn_recall(ranked, q["gold_turns"], 5) == 0.5
    assert lme.turn_recall(ranked, q["gold_turns"], 10) == 1.0
    assert lme.first_sessions(ranked, session_of, 2) == ["s_b@2", "s_b"]
    # the first two distinct sessions hold s_b (a repeat, s_b@2, is another session)
    assert lme.session_recall(ranked, session_of, q["gold_sessions"], 2) == 0.5
    figures = lme.score(ranked, q)
    assert figures == {"turn@5": 0.5, "turn@10": 1.0, "turn@25": 1.0, "session@5": 1.0}


def test_evaluate_on_a_tiny_haystack(lme: ModuleType) -> None:
    q = _question()
    configs: list[tuple[str, str, dict[str, float]]] = [
        ("keyword", "keyword", {}),
        ("bm25", "bm25", {}),
    ]
    figures = lme.evaluate([q], configs=configs, embedder=None, details=True)
    assert figures["questions"] == 1
    for name in ("keyword", "bm25"):
        ranked = figures["per_question"][name][0]["ranked"]
        assert set(ranked[:2]) == {"s_b:0", "s_b:1"}  # both name the marathon in Lisbon
        f = figures["configs"][name]
        assert f["turn@5"] == 1.0 and f["n"] == 1
        assert f["by_type"]["single-session-user"]["turn@10"] == 1.0
        # s_b is first; s_a holds no query word: keyword search never ranks it
        assert f["session@5"] == (0.5 if name == "keyword" else 1.0)
