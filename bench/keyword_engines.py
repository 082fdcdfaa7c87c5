"""Keyword engines side by side: Chrysalis's keyword index (tantivy), plain tantivy and bm25s.

Standalone (no `Memory`): each engine indexes the same texts and answers the same queries.

- speed: the moderate workload of `retrieve_bench.py --workload moderate` (each bead two words
  of a 500-word vocabulary, so each is in ~0.4 % of documents, among ten Zipf-spread filler
  words; a query is four of those words): index build time, top-10 latency p50/p95, delete
  latency (one document deleted and made invisible, per delete), and whether the deleted text
  leaves the index files (a marker word is grepped for in them after the delete);
- quality: turn recall@10 on LongMemEval dev (``/work/shared/eval/longmemeval/lme-dev.json``),
  one index per question over its turns, the question as the query (no Chrysalis fusion).

Engines: ``chrysalis`` is `chrysalis.search.keyword.KeywordIndex` itself (tantivy, stop words,
the stored fields filters and a rewrite need; a delete rewrites the segments that held the
document, as a forget needs; the SQLite FTS5 index it replaced was measured by this script at
commit 8966cc6, docs/benchmarks.md); ``tantivy`` (``en_stem`` tokenizer, OR of the non-stop
words, block-max WAND top-k); ``bm25s`` (PyStemmer English, its English stop words; a delete
is a weight mask, the index itself is immutable).

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python bench/keyword_engines.py --docs 1000,100000,1000000 --quality
    .venv/bin/python bench/keyword_engines.py --quick   # 1,000 docs, 20 queries (the suite's)

An engine whose package is not installed is left out with a message (``bm25s`` is in the
``bench`` extra only).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from retrieve_bench import MODERATE, moderate_text

from chrysalis.search.keyword import KeywordIndex

LME = Path("/work/shared/eval/longmemeval/lme-dev.json")
MARKER = "zqxjvkmarker"  # a word no other document holds: grepped for after its delete


def terms(text: str) -> list[str]:
    return KeywordIndex.query_terms(text)


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))], 3)


def grep_dir(path: Path, needle: str) -> list[str]:
    raw = needle.encode()
    return sorted(f.name for f in path.rglob("*") if f.is_file() and raw in f.read_bytes())


# ---- engines: build(keys, texts, dir) -> engine with search(query, k) and delete(key) ------


class Chrysalis:
    """`chrysalis.search.keyword.KeywordIndex` itself: tantivy, and a delete that rewrites the
    segments that held the document, so its words leave the files (the verifiable forget)."""

    name = "chrysalis"

    def __init__(self, keys: list[str], texts: list[str], where: Path | None) -> None:
        self.dir = (where or Path(tempfile.mkdtemp(prefix="kw-chrysalis-"))) / "keyword.tantivy"
        self.index = KeywordIndex(self.dir)
        for start in range(0, len(keys), 10_000):
            rows = [
                (keys[i], texts[i], {"session": "s", "ts": float(i)})
                for i in range(start, min(len(keys), start + 10_000))
            ]
            self.index.apply(rows, [], {"r": start})

    def search(self, query: str, k: int) -> list[str]:
        return [h.key for h in self.index.search(query, k)]

    def delete(self, key: str) -> None:
        self.index.apply([], [key], {"r": -1})

    def holds_term(self, word: str) -> bool:
        """Whether the index still holds ``word``: its files, its live texts, or the term
        list of a deleted document (`KeywordIndex.has_text`)."""
        return self.index.has_text(word)

    def close(self) -> None:
        self.index.close()


class Tantivy:
    name = "tantivy"

    def __init__(self, keys: list[str], texts: list[str], where: Path | None) -> None:
        import tantivy

        self.t = tantivy
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("key", stored=True, tokenizer_name="raw")
        builder.add_text_field("text", stored=False, tokenizer_name="en_stem", index_option="freq")
        self.schema = builder.build()
        self.dir = where
        self.index = tantivy.Index(self.schema, path=None if where is None else str(where))
        self.writer = self.index.writer(heap_size=256_000_000, num_threads=1)
        for key, text in zip(keys, texts, strict=True):
            self.writer.add_document(tantivy.Document(key=key, text=text))
        self.writer.commit()
        self.index.reload()
        self.searcher = self.index.searcher()

    def search(self, query: str, k: int) -> list[str]:
        words = terms(query)
        if not words:
            return []
        q = self.index.parse_query(" ".join(words), ["text"])  # words only: never syntax
        hits = self.searcher.search(q, k).hits
        return [self.searcher.doc(addr)["key"][0] for _, addr in hits]

    def delete(self, key: str) -> None:
        self.writer.delete_documents_by_term("key", key)
        self.writer.commit()
        self.index.reload()
        self.searcher = self.index.searcher()

    def holds_term(self, word: str) -> bool:
        """Whether the term dictionary still holds ``word`` (doc_freq counts deleted docs
        until a merge drops them; the files are compressed, so a grep does not see it)."""
        return self.searcher.doc_freq("text", word) > 0

    def close(self) -> None:
        self.writer.wait_merging_threads()  # merges what its policy merges, then ends
        self.writer = None


class Bm25s:
    name = "bm25s"

    def __init__(self, keys: list[str], texts: list[str], where: Path | None) -> None:
        import bm25s
        import Stemmer

        self.bm25s = bm25s
        self.stemmer = Stemmer.Stemmer("english")
        self.keys = keys
        self.dir = where
        tokens = bm25s.tokenize(
            texts, stopwords="en", stemmer=self.stemmer, show_progress=False, return_ids=True
        )
        self.vocab = tokens.vocab
        self.retriever = bm25s.BM25()
        self.retriever.index(tokens, show_progress=False)
        self.mask = np.ones(len(keys), dtype=np.float32)
        self.row = {key: i for i, key in enumerate(keys)}
        if where is not None:
            self.retriever.save(str(where))

    def search(self, query: str, k: int) -> list[str]:
        words = self.bm25s.tokenize(
            query, stopwords="en", stemmer=self.stemmer, show_progress=False, return_ids=False
        )[0]
        ids = [self.vocab[w] for w in words if w in self.vocab]
        if not ids:
            return []
        k = min(k, len(self.keys))
        docs, scores = self.retriever.retrieve(
            [ids], k=k, show_progress=False, n_threads=0, weight_mask=self.mask
        )
        return [self.keys[int(d)] for d, s in zip(docs[0], scores[0], strict=True) if s > 0]

    def delete(self, key: str) -> None:
        self.mask[self.row[key]] = 0.0  # hidden at once; the index holds its words still
        if self.dir is not None:
            np.save(self.dir / "deleted_mask.npy", self.mask)

    def holds_term(self, word: str) -> bool:
        return word in self.vocab

    def close(self) -> None:
        pass


ENGINES: dict[str, Callable[..., Any]] = {
    "chrysalis": Chrysalis,
    "tantivy": Tantivy,
    "bm25s": Bm25s,
}


# ---- speed ---------------------------------------------------------------------------------


def speed(n_docs: int, queries: int, deletes: int, engines: list[str]) -> list[dict[str, Any]]:
    rng = np.random.default_rng(42)
    texts = [moderate_text(i, rng) for i in range(n_docs)]
    keys = [f"bead:b{i}" for i in range(n_docs)]
    texts[n_docs // 2] += f" {MARKER}"  # the document the delete check forgets
    qrng = np.random.default_rng(7)
    qs = [
        " ".join(MODERATE[m] for m in qrng.choice(len(MODERATE), 4, replace=False))
        for _ in range(queries)
    ]
    victims = [keys[n_docs // 2]] + [keys[int(i)] for i in qrng.integers(0, n_docs, deletes - 1)]
    out = []
    for name in engines:
        with tempfile.TemporaryDirectory(prefix=f"kw-{name}-") as tmp:
            where = Path(tmp)
            t = time.perf_counter()
            engine = ENGINES[name](keys, texts, where)
            row: dict[str, Any] = {"engine": name, "docs": n_docs}
            row["build_s"] = round(time.perf_counter() - t, 2)
            for q in qs[:5]:
                engine.search(q, 10)
            lat = []
            for q in qs:
                t = time.perf_counter()
                found = engine.search(q, 10)
                lat.append((time.perf_counter() - t) * 1000)
                assert found, q
            row["query_ms_p50"] = round(statistics.median(lat), 3)
            row["query_ms_p95"] = pct(lat, 0.95)
            row["marker_in_files_before"] = bool(grep_dir(where, MARKER))
            dl = []
            for key in dict.fromkeys(victims):
                t = time.perf_counter()
                engine.delete(key)
                dl.append((time.perf_counter() - t) * 1000)
            row["delete_ms_p50"] = round(statistics.median(dl), 2)
            row["delete_ms_max"] = round(max(dl), 2)
            row["deleted_invisible"] = keys[n_docs // 2] not in engine.search(MARKER, 10)
            row["term_in_index_after_delete"] = engine.holds_term(MARKER)
            row["marker_in_files_after_delete"] = grep_dir(where, MARKER)
            engine.close()
            row["marker_in_files_after_close"] = grep_dir(where, MARKER)
            row["index_mib"] = round(
                sum(f.stat().st_size for f in where.rglob("*") if f.is_file()) / 2**20, 1
            )
            out.append(row)
            print(json.dumps(row), flush=True)
    return out


# ---- quality -------------------------------------------------------------------------------


def quality(engines: list[str]) -> dict[str, Any]:
    data = json.loads(LME.read_text())
    names = engines
    recall: dict[str, list[float]] = {n: [] for n in names}
    overlap: dict[str, list[float]] = {n: [] for n in names}
    for entry in data:
        keys, texts = [], []
        for session in entry["sessions"]:
            for turn in session["turns"]:
                keys.append(turn["id"])
                texts.append(turn["content"])
        gold = set(entry["gold_turns"])
        tops: dict[str, list[str]] = {}
        with tempfile.TemporaryDirectory(prefix="kw-lme-") as tmp:
            for name in engines:
                engine = ENGINES[name](keys, texts, Path(tmp) if name == "chrysalis" else None)
                tops[name] = engine.search(entry["question"], 10)
                engine.close()
        for name in names:
            recall[name].append(len(gold & set(tops[name])) / len(gold))
            ref = tops[names[0]]
            overlap[name].append(len(set(ref) & set(tops[name])) / max(1, len(ref)))
    result = {
        name: {
            "turn_recall@10": round(statistics.mean(recall[name]), 3),
            f"top10_overlap_with_{names[0]}": round(statistics.mean(overlap[name]), 3),
        }
        for name in names
    }
    result["questions"] = len(data)  # type: ignore[assignment]
    return result


def _installed(engine: str) -> bool:
    """Whether an engine's package imports; says so on stderr when it does not."""
    needs = {"bm25s": ("bm25s", "Stemmer"), "tantivy": ("tantivy",)}.get(engine, ())
    for module in needs:
        try:
            __import__(module)
        except ImportError:
            print(f"leaving {engine} out: {module} is not installed (pip install -e '.[bench]')",
                  file=sys.stderr)  # fmt: skip
            return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", default="1000,100000")
    parser.add_argument("--engines", default="chrysalis,tantivy,bm25s")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--deletes", type=int, default=10)
    parser.add_argument("--quality", action="store_true", help="LongMemEval dev recall@10")
    parser.add_argument("--no-speed", action="store_true")
    parser.add_argument("--quick", action="store_true", help="1,000 docs, 20 queries, 2 deletes")
    args = parser.parse_args(argv)
    if args.quick:
        args.docs, args.queries, args.deletes = "1000", 20, 2
    engines = [e for e in args.engines.split(",") if _installed(e)]
    if not args.no_speed:
        for n in (int(float(x)) for x in args.docs.split(",")):
            speed(n, args.queries, args.deletes, engines)
    if args.quality:
        print(json.dumps({"lme_dev": quality(engines)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
