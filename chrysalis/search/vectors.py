"""Vectors of one embedding model in FAISS, searchable by inner product (= cosine).

Derived from LMDB and disposable: the index remembers the version vector of the op log it
reflects (its watermark), catches up from there, and is rebuilt from LMDB when its files are
missing or damaged. Items are named by a *key*, ``"<kind>:<id>"``.

The index holds compressed codes, not the vectors: LMDB holds each vector once, in its op,
and a second float32 copy in the saved index was a third of the data dir. Exact search keeps
float16 codes (what the ops store for any embedding, `chrysalis.core.vector_bytes`); IVF keeps
8-bit codes (a quarter of float32) and re-ranks its best candidates with the stored vectors.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from chrysalis.core.errors import disk_full, out_of_space
from chrysalis.store.atomic import atomic_write
from chrysalis.store.keys import pack, unpack

log = logging.getLogger(__name__)

# Bumped when what the saved file holds changes: an index saved in another format is rebuilt
# from LMDB at open (once), as a damaged one is. 2: float16 / IVF 8-bit codes (was float32).
FORMAT = 2
# IVF search takes k + REFINE_MIN candidates from its 8-bit codes and ranks them exactly by the
# stored vectors: the codes misplace a neighbour by a few ranks, not by k (reading 4k vectors
# from LMDB cost more than the search: 14 ms p95 at 100k). At 100k clustered 768-dim vectors,
# k + 10 found the same top 10 and top 30 as k + 40 (recall 0.9995 / 0.9993 against float32
# brute force, docs/benchmarks.md); 20 keeps a margin, and each one more is an LMDB read.
REFINE_MIN = 20
# Vectors a rebuild decodes at a time (30 MB at 384 dims)
REBUILD_CHUNK = 20_000

# The stored vectors of some keys (those still stored): what IVF candidates are ranked by.
StoredVectors = Callable[[Sequence[str]], dict[str, np.ndarray]]


@dataclass(slots=True)  # a context's search makes ~200: one object each, no __dict__
class VectorHit:
    key: str
    score: float  # inner product of unit vectors: cosine similarity


class VectorIndex:
    """Vectors of one embedding model in FAISS, searchable by inner product (= cosine).

    Exact (float16 codes, every vector compared) up to ``exact_limit`` vectors; past it,
    rebuilt as IVF (8-bit scalar-quantised codes, ``nprobe`` lists searched, the best
    ``k + REFINE_MIN`` re-ranked by the vectors ``stored`` returns; without ``stored``, by their
    codes alone). IVF, unlike HNSW, supports ``remove_ids``,
    so a forgotten item leaves the index at once instead of waiting for a rebuild. Ids are
    assigned sequentially and kept with the index. Saved as ``<dir>/<name>-<gen>.faiss`` plus
    ``<dir>/<name>.meta`` (watermark, ids, the current file), the meta written last and
    atomically: a crash leaves the previous consistent pair.
    """

    def __init__(
        self,
        directory: Path,
        model: str,
        dims: int,
        *,
        exact_limit: int = 50_000,
        nprobe: int = 32,
        stored: StoredVectors | None = None,
    ) -> None:
        import faiss  # the library stays importable without touching FAISS until needed

        # One OpenMP thread: a single-query search on the exact index spread over 2 threads
        # stalls when the cores are busy (p50 7-15 ms instead of 0.6 ms, bench/peers.py); on
        # the IVF index one thread is as fast. Training gets slower, but it runs in the
        # background worker.
        faiss.omp_set_num_threads(1)
        self._faiss = faiss
        self.directory = directory
        self.model = model
        self.dims = dims
        self.exact_limit = exact_limit
        self.nprobe = nprobe
        self.stored = stored
        self.name = re.sub(r"[^A-Za-z0-9._-]", "_", model)
        self._lock = threading.RLock()
        self._ids: dict[str, int] = {}
        self._keys: dict[int, str] = {}
        self._next_id = 1
        self._generation = 0
        self.watermark: dict[str, int] = {}
        self.dirty = 0
        self.removed = 0  # since the last save: a forgotten vector must leave the file soon
        self._index = self._new_flat()

    def _new_flat(self) -> Any:
        faiss = self._faiss
        codes = faiss.IndexScalarQuantizer(
            self.dims, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT
        )
        return faiss.IndexIDMap2(codes)

    @property
    def kind(self) -> str:
        return "ivf" if self._is_ivf() else "exact"

    def _is_ivf(self) -> bool:
        return isinstance(self._index, self._faiss.IndexIVF)

    def __len__(self) -> int:
        return len(self._ids)

    # ---- changes -------------------------------------------------------------------------

    def upsert(self, keys: Sequence[str], vectors: np.ndarray) -> None:
        if not len(keys):
            return
        vectors = np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(keys), self.dims)
        with self._lock:
            self.remove(keys)
            ids = np.arange(self._next_id, self._next_id + len(keys), dtype=np.int64)
            self._next_id += len(keys)
            for key, i in zip(keys, ids.tolist(), strict=True):
                self._ids[key] = i
                self._keys[i] = key
            self._index.add_with_ids(vectors, ids)
            self.dirty += len(keys)
            if not self._is_ivf() and len(self._ids) > self.exact_limit:
                ids = np.asarray(sorted(self._keys), dtype=np.int64)
                flat = np.vstack([self._index.reconstruct(int(i)) for i in ids])
                self._index = self._build(flat, ids)

    def remove(self, keys: Iterable[str]) -> None:
        with self._lock:
            gone = [self._ids.pop(k) for k in keys if k in self._ids]
            self.removed += len(gone)
            if gone:
                for i in gone:
                    self._keys.pop(i, None)
                self._index.remove_ids(np.asarray(gone, dtype=np.int64))
                self.dirty += len(gone)

    def rebuild_from(self, keys: Sequence[str], vectors: np.ndarray) -> None:
        """Replace everything with these vectors: exact or IVF by size (`rebuild`)."""
        matrix = np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(keys), self.dims)
        position = {k: i for i, k in enumerate(keys)}
        self.rebuild(keys, lambda some: {k: matrix[position[k]] for k in some})

    def rebuild(self, keys: Sequence[str], read: StoredVectors) -> None:
        """Replace everything with the vectors of ``keys`` as ``read`` returns them (LMDB's):
        exact or IVF by their number, IVF trained first on a sample. At most the sample and
        `REBUILD_CHUNK` vectors are in memory at a time (a million 384-dim vectors at once
        were 6 GB of arrays and copies). A key ``read`` leaves out (forgotten since the keys
        were listed) is left out. Searches go on with the old index until the new one is
        whole."""

        def sample(positions: np.ndarray) -> np.ndarray:
            picked = [keys[i] for i in positions.tolist()]
            found: dict[str, np.ndarray] = {}
            for start in range(0, len(picked), REBUILD_CHUNK):
                found.update(read(picked[start : start + REBUILD_CHUNK]))
            return self._matrix([found[k] for k in picked if k in found])

        index = self._empty(len(keys), sample)
        ids: dict[str, int] = {}
        for start in range(0, len(keys), REBUILD_CHUNK):
            chunk = keys[start : start + REBUILD_CHUNK]
            found = read(chunk)
            present = [k for k in chunk if k in found]
            if not present:
                continue
            numbers = np.arange(len(ids) + 1, len(ids) + 1 + len(present), dtype=np.int64)
            index.add_with_ids(self._matrix([found[k] for k in present]), numbers)
            ids.update(zip(present, numbers.tolist(), strict=True))
        with self._lock:
            self._index = index
            self._ids = ids
            self._keys = {i: k for k, i in ids.items()}
            self._next_id = len(ids) + 1
            self.dirty += 1

    def _matrix(self, rows: Sequence[np.ndarray]) -> np.ndarray:
        if not rows:
            return np.zeros((0, self.dims), np.float32)
        return np.ascontiguousarray(np.vstack(rows), dtype=np.float32).reshape(-1, self.dims)

    def _build(self, vectors: np.ndarray, ids: np.ndarray) -> Any:
        index = self._empty(len(ids), lambda positions: vectors[positions])
        if len(ids):
            index.add_with_ids(vectors, ids)
        return index

    def _empty(self, n: int, sample: Callable[[np.ndarray], np.ndarray]) -> Any:
        """An empty index for ``n`` vectors: exact up to ``exact_limit``, else IVF trained on
        ``sample(positions)``, the vectors at those positions (a fixed-seed random pick)."""
        faiss = self._faiss
        if n <= self.exact_limit:
            return self._new_flat()
        # ~4·sqrt(n) lists, but at least 39 training points per list (FAISS's floor)
        nlist = int(max(8, min(4096, 4 * np.sqrt(n), n // 39)))
        quantizer = faiss.IndexFlatIP(self.dims)
        ivf = faiss.IndexIVFScalarQuantizer(
            quantizer, self.dims, nlist, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
        )
        ivf.train(sample(np.random.default_rng(0).permutation(n)[: nlist * 64]))
        ivf.nprobe = self.nprobe
        return ivf  # IVF keeps ids itself and supports remove_ids

    # ---- queries -------------------------------------------------------------------------

    def search(self, vector: np.ndarray, k: int, exact: int | None = None) -> list[VectorHit]:
        """The ``k`` nearest items, best first. Past ``exact_limit`` the candidates are ranked
        by their stored vectors, read outside the lock (a candidate no longer stored is
        dropped: it was forgotten since). ``exact`` (default ``k``) bounds how many of the
        best are: the codes' ``exact + REFINE_MIN`` best are re-ranked and the ``exact`` best
        of those lead; any further hits keep their codes' scores (within ~0.002 of the
        cosine at 100k: docs/benchmarks.md) and are not checked against the store, so a
        caller asking for fewer exact hits than ``k`` checks what it shows (fusion reads
        every item it describes). A re-rank reads each vector from LMDB, ~10-20 us apiece:
        a pool that only feeds a fused ranking need not read them all."""
        query = np.ascontiguousarray(vector, dtype=np.float32).reshape(1, self.dims)
        with self._lock:
            n = len(self._ids)
            if n == 0 or k <= 0:
                return []
            refine = self.stored is not None and self._is_ivf()
            wanted = k if exact is None else max(0, min(k, exact))
            fetch = min(n, max(k, wanted + REFINE_MIN) if refine else k)
            scores, ids = self._index.search(query, fetch)
            found = [
                VectorHit(key, float(score))
                for score, i in zip(scores[0].tolist(), ids[0].tolist(), strict=True)
                if (key := self._keys.get(i)) is not None
            ]
        if refine and self.stored is not None and found:
            head, tail = found[: wanted + REFINE_MIN], found[wanted + REFINE_MIN :]
            vectors = self.stored([h.key for h in head])
            keys = [h.key for h in head if h.key in vectors]
            rows = [vectors[key] for key in keys]
            exact_scores = (np.vstack(rows) @ query[0]).tolist() if rows else []
            found = [VectorHit(key, s) for key, s in zip(keys, exact_scores, strict=True)]
            found.sort(key=lambda h: -h.score)
            found = found[:wanted] + sorted(found[wanted:] + tail, key=lambda h: -h.score)
        return found[:k]

    def has(self, key: str) -> bool:
        return key in self._ids

    # ---- persistence ---------------------------------------------------------------------

    @property
    def meta_path(self) -> Path:
        return self.directory / f"{self.name}.meta"

    def save(self) -> None:
        """Write the index to a new file and point the meta at it, then drop the old file.
        A failure leaves the saved index as it was (the new file is removed) and raises:
        `InsufficientStorage` naming the disk when it is full."""
        with self._lock:
            old = self.directory / f"{self.name}-{self._generation}.faiss"
            path = self.directory / f"{self.name}-{self._generation + 1}.faiss"
            meta = {
                "format": FORMAT, "model": self.model, "dims": self.dims, "file": path.name,
                "generation": self._generation + 1, "next_id": self._next_id,
                "watermark": self.watermark, "ids": self._ids,
            }  # fmt: skip
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
                self._faiss.write_index(self._index, str(path))
                atomic_write(self.meta_path, pack(meta))
            except (OSError, RuntimeError) as exc:  # FAISS raises RuntimeError for I/O
                path.unlink(missing_ok=True)
                if out_of_space(exc):
                    raise disk_full(self.directory) from exc
                raise
            self._generation += 1
            with contextlib.suppress(FileNotFoundError):
                old.unlink()
            self.dirty = 0
            self.removed = 0

    def load(self) -> bool:
        """Load the saved index; False (and an empty index) when missing, damaged or stale."""
        try:
            meta = unpack(self.meta_path.read_bytes())
            if meta["model"] != self.model or meta["dims"] != self.dims:
                raise ValueError(f"saved for {meta['model']}/{meta['dims']}")
            if meta.get("format") != FORMAT:
                log.info("vector index for %s was saved in an older format: rebuilding it",
                         self.model)  # fmt: skip
                return False
            index = self._faiss.read_index(str(self.directory / meta["file"]))
            if index.ntotal != len(meta["ids"]) or index.d != self.dims:
                raise ValueError("index and its meta disagree")
        except FileNotFoundError:
            return False
        except Exception as exc:
            log.warning("vector index for %s is damaged (%s): rebuilding it", self.model, exc)
            return False
        with self._lock:
            self._index = index
            self._ids = dict(meta["ids"])
            self._keys = {i: k for k, i in self._ids.items()}
            self._next_id = meta["next_id"]
            self._generation = meta["generation"]
            self.watermark = dict(meta["watermark"])
            if self._is_ivf():
                self._index.nprobe = self.nprobe
            self.dirty = 0
        return True
