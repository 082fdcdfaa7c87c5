"""An embedder that remembers: vectors of a slow model kept on disk by text digest, so an
evaluation that indexes the same turns again (LongMemEval haystacks share sessions; a second
run, an ablation) embeds each text once. For benchmarks only: the daemon never caches this way.

    CachedEmbedder(make_embedder("sentence-transformers:PATH"), Path("/tmp/emb-cache"))
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from chrysalis.search.embed import Embedder


class CachedEmbedder(Embedder):
    """Wraps ``inner``; its vectors are saved under ``directory`` (one ``.npz`` per model)."""

    def __init__(self, inner: Embedder, directory: Path) -> None:
        self.inner = inner
        self.provider, self.model, self.dims = inner.provider, inner.model, inner.dims
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / (hashlib.sha1(inner.model.encode()).hexdigest()[:16] + ".npz")
        self._lock = threading.Lock()
        self._vectors: dict[bytes, np.ndarray] = {}
        self._queries: dict[str, np.ndarray] = {}
        self._unsaved = 0
        if self.path.exists():
            with np.load(self.path) as saved:
                self._vectors = dict(zip(saved["keys"].tolist(), saved["vectors"], strict=True))

    @staticmethod
    def _key(text: str) -> bytes:
        return hashlib.sha1(text.encode()).digest()

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        keys = [self._key(t) for t in texts]
        with self._lock:
            todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in self._vectors}
        if todo:
            fresh = self.inner.embed_documents(list(todo.values()))
            with self._lock:
                self._vectors.update(zip(todo, fresh, strict=True))
                self._unsaved += len(todo)
                if self._unsaved >= 2000:
                    self._save()
        with self._lock:
            return np.stack([self._vectors[k] for k in keys]).astype(np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        # in memory only: an ablation asks the same question once per configuration
        with self._lock:
            known = self._queries.get(text)
        if known is None:
            known = self.inner.embed_query(text)
            with self._lock:
                self._queries[text] = known
        return known

    def _save(self) -> None:
        keys = np.array(list(self._vectors), dtype="S20")
        np.savez(
            self.path.with_suffix(".tmp.npz"),
            keys=keys,
            vectors=np.stack(list(self._vectors.values())),
        )
        self.path.with_suffix(".tmp.npz").replace(self.path)
        self._unsaved = 0

    def save(self) -> None:
        with self._lock:
            if self._unsaved:
                self._save()
