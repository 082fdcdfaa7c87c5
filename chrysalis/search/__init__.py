"""Search: the derived indexes and what queries them.

    keyword.py   BM25 over item text in tantivy (`KeywordIndex`)
    vectors.py   FAISS per embedding model (`VectorIndex`)
    indexer.py   the worker keeping both caught up with the op log, making missing vectors
    fusion.py    fused retrieval with provenance (`Retriever`, `Weights`)
    assisted.py  local fusion joined by a mirror's search when local hits are weak

The package reads through `chrysalis.read.reader.Reader` and writes only through a narrow callback
(`indexer.IndexWrites`); it never imports `Memory`.
"""

from chrysalis.search.fusion import Retriever, Weights, above, count_tokens
from chrysalis.search.indexer import Indexer, IndexWrites, text_hash
from chrysalis.search.keyword import KeywordIndex
from chrysalis.search.vectors import VectorIndex

__all__ = [
    "IndexWrites",
    "Indexer",
    "KeywordIndex",
    "Retriever",
    "VectorIndex",
    "Weights",
    "above",
    "count_tokens",
    "text_hash",
]
