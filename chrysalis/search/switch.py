"""Changing the embedder without downtime: which model recall searches while another takes over.

A memory records the embedder recall uses in its meta (``search:serving``: the model, its
dims, the provider, and the spec that opens it again). Opened with another embedder, the
memory switches (`chrysalis.search.indexer.Indexer`):

1. the indexer embeds every item with the new model in the background; its cursor
   (``embed:<model>`` in LMDB meta) is persisted batch by batch, so a restart resumes where it
   stopped, and items that already hold a vector of the model (from another laptop, or from
   before the restart) are skipped by their text hash;
2. meanwhile recall searches the recorded model's vectors, embedding the query with the
   recorded embedder (opened again from its spec), and the indexer keeps embedding new writes
   with it, so recall answers as before, new writes included;
3. when the new model's cursor covers the whole op log and its index is caught up, the record
   names the new model and recall switches at once; the old model's index files are deleted.
   Its vectors stay in LMDB (they replicate: a laptop still configured for it searches them).

When the recorded embedder cannot be opened again (its Ollama model is gone, a custom
`Embedder` without a spec), recall uses the new model's vectors made so far and says so in
its notes.

Replicas switch independently: each searches with the model it is configured for, vectors of
every model replicate, and a laptop embeds only the items that have no vector for its model,
so the second laptop to switch mostly indexes what the first one made.
"""

from __future__ import annotations

import contextlib
import logging
import re
from pathlib import Path
from typing import Any

from chrysalis.core.errors import ChrysalisError
from chrysalis.search.embed import Embedder, make_embedder
from chrysalis.store.keys import unpack

log = logging.getLogger(__name__)

SERVING = "search:serving"  # LMDB meta: the record of the embedder recall searches with


def record(embedder: Embedder) -> dict[str, Any]:
    """What a memory keeps of the embedder recall uses (``SERVING``)."""
    return {
        "model": embedder.model, "dims": embedder.dims, "provider": embedder.provider,
        "spec": embedder.spec,
    }  # fmt: skip


def reopen(rec: dict[str, Any]) -> tuple[Embedder | None, str]:
    """The recorded embedder opened again, or None and why it cannot be: no spec kept, the
    spec fails to open (`EmbedderUnavailable`, `InvalidInput`), or it opens another model."""
    spec = rec.get("spec")
    if not isinstance(spec, str):
        return None, "it was given as an object, not a spec, and cannot be opened again"
    options: dict[str, Any] = {}
    if spec.startswith("sentence-transformers:"):
        options["name"] = rec.get("model")
    try:
        embedder = make_embedder(spec, **options)
    except ChrysalisError as exc:
        return None, str(exc)
    if embedder.model != rec.get("model") or embedder.dims not in (0, rec.get("dims")):
        return None, f"{spec!r} now opens {embedder.model} ({embedder.dims} dims)"
    return embedder, ""


def index_files(directory: Path) -> dict[str, list[Path]]:
    """The saved vector indexes in ``directory``: ``{model: [its meta, its index file]}``
    (a meta that cannot be read is listed under its file name)."""
    out: dict[str, list[Path]] = {}
    for meta in sorted(directory.glob("*.meta")):
        try:
            saved = unpack(meta.read_bytes())
            out[str(saved["model"])] = [meta, directory / str(saved["file"])]
        except Exception:
            out[meta.name] = [meta]
    return out


def remove_other_indexes(directory: Path, keep: set[str]) -> list[str]:
    """Delete the saved vector indexes of models not in ``keep`` (a switch finished, or one
    abandoned before it finished): nothing maintains them, so they would keep vectors of
    items forgotten since. Returns the models removed."""
    removed = []
    for model, paths in index_files(directory).items():
        if model in keep:
            continue
        # every generation of its file, not only the current one (a crash can leave one)
        files = re.escape(re.sub(r"[^A-Za-z0-9._-]", "_", model)) + r"-\d+\.faiss"
        paths += [p for p in directory.glob("*.faiss") if re.fullmatch(files, p.name)]
        for path in paths:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        removed.append(model)
    return removed
