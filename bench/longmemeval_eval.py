"""Turn and session recall@k on LongMemEval_S dev (no network, no LLM).

As ../shared/eval/longmemeval/README.md defines it: each question gets its own empty memory,
one bead per turn of its haystack (id = turn id, session = session_id, role = the turn's role,
time = the session's date plus the turn index in seconds); retrieve the top 25 beads for the
question (asked at its ``question_date``: ``now=``); turn recall@k = |gold_turns ∩ top-k| /
|gold_turns| (k = 5, 10, 25) and session recall@5 = |gold_sessions ∩ the first 5 distinct
sessions of the ranking| / |gold_sessions|, each averaged over questions.

    .venv/bin/python bench/longmemeval_eval.py [--data PATH] [--strategy S] [--embedder SPEC]
        [--weights JSON] [--ablations] [--limit N] [--every N] [--types T,T] [--json]

``--ablations`` runs, on the same memories (indexed once per question), fusion, each signal
alone, fusion minus each signal, and plain BM25 over turns (the README's reference: bm25s-style
tokens, English stop words, Snowball stemming: bm25s itself when installed, else `bm25_rank`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from chrysalis import Memory
from chrysalis.core.models import ID_PATTERN
from chrysalis.search.embed import Embedder, make_embedder

DEFAULT_DATA = (
    Path(__file__).resolve().parents[2] / "shared" / "eval" / "longmemeval" / "lme-dev.json"
)
KS = (5, 10, 25)
SKIPPED = 77  # the exit status that tells tests/test_benches.py its data is absent
SESSION_K = 5
_ID = re.compile(ID_PATTERN)

# (name, strategy, weight overrides): "bm25" is the plain reference, not Chrysalis.
ALL_OFF = {
    "emb": 0.0, "keyword": 0.0, "recency": 0.0, "importance": 0.0, "graph": 0.0, "session": 0.0,
}  # fmt: skip
ABLATIONS: list[tuple[str, str, dict[str, float]]] = [
    ("fusion (default weights)", "fusion", {}),
    ("keyword only (strategy keyword)", "keyword", {}),
    ("vectors only (strategy emb)", "emb", {}),
    ("recency only (strategy beads)", "beads", {}),
    ("session context only", "fusion", {**ALL_OFF, "context": 1.0}),
    ("fusion without keyword", "fusion", {"keyword": 0.0}),
    ("fusion without vectors", "fusion", {"emb": 0.0}),
    ("fusion without context", "fusion", {"context": 0.0}),
    ("fusion without recency, importance", "fusion", {"recency": 0.0, "importance": 0.0}),
    ("fusion without attribution", "fusion", {"attribution": 1.0}),
    ("fusion without session evidence", "fusion", {"session": 0.0}),
    ("fusion without graph", "fusion", {"graph": 0.0}),
    ("fusion with mentions (0.3)", "fusion", {"mentions": 0.3}),
    ("fusion, context whatever the turn length", "fusion", {"context_words": 1_000_000}),
    ("plain BM25 over turns (reference)", "bm25", {}),
]


# ---- the haystack as beads -------------------------------------------------------------------


def bead_id(turn_id: str) -> str:
    """The turn id itself when Chrysalis accepts it as an id, else a stable stand-in."""
    if _ID.match(turn_id):
        return turn_id
    return "t" + hashlib.sha1(turn_id.encode()).hexdigest()[:24]


def session_start(session: dict[str, Any]) -> float:
    """The session's date ('iso', or 'date' as '2023/05/20 (Sat) 07:47') -> epoch seconds, UTC."""
    if session.get("iso"):
        moment = datetime.fromisoformat(session["iso"])
    else:
        moment = datetime.strptime(session["date"], "%Y/%m/%d (%a) %H:%M")
    return moment.replace(tzinfo=UTC).timestamp()


def asked_at(question: dict[str, Any]) -> float:
    """When the question is asked (its ``question_iso``/``question_date``), epoch seconds:
    "last weekend" in it means the weekend before that."""
    return session_start({"iso": question.get("question_iso"), "date": question["question_date"]})


def haystack(question: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """One bead row per turn, in order, and a map from bead id back to turn id."""
    rows: list[dict[str, Any]] = []
    back: dict[str, str] = {}
    for session in question["sessions"]:
        start = session_start(session)
        for i, turn in enumerate(session["turns"]):
            bid = bead_id(turn["id"])
            if bid in back:
                raise ValueError(f"two turns map to bead id {bid!r}")
            back[bid] = turn["id"]
            rows.append({
                "id": bid, "content": turn["content"] or " ", "role": turn["role"],
                "session_id": bead_id(session["session_id"]), "ts": start + i,
            })  # fmt: skip
    return rows, back


def turn_sessions(question: dict[str, Any]) -> dict[str, str]:
    """Turn id -> session id."""
    return {t["id"]: s["session_id"] for s in question["sessions"] for t in s["turns"]}


# ---- the metric ------------------------------------------------------------------------------


def turn_recall(ranked: Sequence[str], gold: Sequence[str], k: int) -> float:
    """|gold ∩ top-k| / |gold|."""
    gold_set = set(gold)
    return len(gold_set & set(ranked[:k])) / len(gold_set)


def first_sessions(ranked: Sequence[str], session_of: dict[str, str], n: int) -> list[str]:
    """The first ``n`` distinct sessions of a ranking of turns."""
    out: list[str] = []
    for turn in ranked:
        session = session_of.get(turn)  # None for a session summary: no turn of one
        if session is not None and session not in out:
            out.append(session)
            if len(out) == n:
                break
    return out


def session_recall(
    ranked: Sequence[str], session_of: dict[str, str], gold_sessions: Sequence[str], n: int
) -> float:
    """|gold_sessions ∩ the first n distinct sessions of the ranking| / |gold_sessions|."""
    gold = set(gold_sessions)
    return len(gold & set(first_sessions(ranked, session_of, n))) / len(gold)


def score(ranked: Sequence[str], question: dict[str, Any]) -> dict[str, float]:
    """One question's figures for one ranking of turn ids (best first, at least 25 long)."""
    session_of = turn_sessions(question)
    out = {f"turn@{k}": turn_recall(ranked, question["gold_turns"], k) for k in KS}
    out[f"session@{SESSION_K}"] = session_recall(
        ranked, session_of, question["gold_sessions"], SESSION_K
    )
    return out


# ---- plain BM25, the README's reference ------------------------------------------------------


def reference_tokenizer() -> tuple[Callable[[str], list[str]], str]:
    """bm25s's default tokenisation (words of 2+ characters, lowercased, its English stop
    words) with Snowball English stemming (PyStemmer); without those packages, Chrysalis's
    stop words and no stemming (then the figures are not the README's)."""
    pattern = re.compile(r"(?u)\b\w\w+\b")
    try:
        import Stemmer  # type: ignore[import-not-found, import-untyped, unused-ignore]
        from bm25s.stopwords import STOPWORDS_EN  # type: ignore[import-not-found, import-untyped, unused-ignore]
    except ImportError:
        from chrysalis.search.keyword import STOP_WORDS

        def plain(text: str) -> list[str]:
            return [w for w in pattern.findall(text.lower()) if w not in STOP_WORDS]

        return plain, "no bm25s/PyStemmer: Chrysalis stop words, no stemming"
    stop = frozenset(STOPWORDS_EN)
    stem = Stemmer.Stemmer("english").stemWord
    cache: dict[str, str] = {}

    def tokens(text: str) -> list[str]:
        out = []
        for w in pattern.findall(text.lower()):
            if w in stop:
                continue
            s = cache.get(w)
            if s is None:
                s = cache[w] = stem(w)
            out.append(s)
        return out

    return tokens, "bm25s itself: stop words (en), Snowball stemming (PyStemmer)"


def bm25_rank(
    docs: Sequence[str],
    query: str,
    tokenize: Callable[[str], list[str]],
    k: int,
    k1: float = 1.5,
    b: float = 0.75,
) -> list[int]:
    """The ``k`` best documents (indexes) for ``query`` by BM25, Lucene's variant as bm25s
    computes it by default (idf = ln(1 + (N - df + 0.5) / (df + 0.5)), each query token
    counted, repeats too); ties by position."""
    tokenized = [Counter(tokenize(d)) for d in docs]
    n = len(docs)
    avgdl = statistics.fmean(sum(c.values()) for c in tokenized) if n else 0.0
    df: Counter[str] = Counter()
    for c in tokenized:
        df.update(c.keys())
    scores = [0.0] * n
    for term, times in Counter(tokenize(query)).items():  # a repeated query word counts twice
        if term not in df:
            continue
        idf = times * math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
        for i, c in enumerate(tokenized):
            tf = c.get(term)
            if tf:
                dl = sum(c.values())
                scores[i] += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / (avgdl or 1)))
    return sorted(range(n), key=lambda i: (-scores[i], i))[:k]


def reference_rank(
    docs: Sequence[str], query: str, tokenize: Callable[[str], list[str]], k: int
) -> list[int]:
    """The README's reference ranking: bm25s itself when installed (its defaults, English stop
    words, Snowball stemming), else `bm25_rank` (the same top 10 on 98 of the 100 dev
    questions; ties and float32 sums differ)."""
    try:
        import bm25s  # type: ignore[import-not-found, import-untyped, unused-ignore]
        import Stemmer
    except ImportError:
        return bm25_rank(docs, query, tokenize, k)
    stemmer = Stemmer.Stemmer("english")
    quiet = {"show_progress": False}
    model = bm25s.BM25()
    model.index(bm25s.tokenize(list(docs), stopwords="en", stemmer=stemmer, **quiet), **quiet)
    question = bm25s.tokenize([query], stopwords="en", stemmer=stemmer, **quiet)
    found, _ = model.retrieve(question, k=min(k, len(docs)), **quiet)
    return [int(i) for i in found[0]]


# ---- the run ---------------------------------------------------------------------------------


def evaluate(
    data: list[dict[str, Any]],
    *,
    configs: Sequence[tuple[str, str, dict[str, float]]],
    embedder: str | Embedder | None,
    extractor: str | None = None,
    details: bool = False,
    cache: Path | None = None,
) -> dict[str, Any]:
    """Every configuration on every question; figures overall and per question type."""
    if isinstance(embedder, str):
        embedder = make_embedder(embedder)  # once: a real model loads in seconds
    if embedder is not None and cache is not None:
        sys.path.insert(0, str(Path(__file__).parent))
        from embed_cache import CachedEmbedder

        embedder = CachedEmbedder(embedder, cache)
    k = max(KS)
    per: dict[str, list[dict[str, Any]]] = defaultdict(list)
    latencies: dict[str, list[float]] = defaultdict(list)
    tokenize, _ = reference_tokenizer()
    index_seconds = 0.0
    for q in data:
        rows, back = haystack(q)
        need_memory = any(strategy != "bm25" for _, strategy, _ in configs)
        with tempfile.TemporaryDirectory(prefix="lme-") as tmp:
            mem = (
                Memory.open(Path(tmp) / "m", sync=False, embedder=embedder, extractor=extractor)
                if need_memory
                else None
            )
            try:
                if mem is not None:
                    t0 = time.perf_counter()
                    mem.append_beads(rows)
                    mem.wait_indexed(timeout=600)
                    mem.wait_learned(timeout=600)
                    index_seconds += time.perf_counter() - t0
                    defaults = mem.weights
                for name, strategy, weights in configs:
                    t0 = time.perf_counter()
                    if strategy == "bm25":
                        top = reference_rank(
                            [r["content"] for r in rows], q["question"], tokenize, k
                        )
                        ranked = [back[rows[i]["id"]] for i in top]
                    else:
                        assert mem is not None
                        if strategy == "emb" and embedder is None:
                            continue
                        mem.weights = defaults.model_copy(update=weights)
                        result = mem.retrieve(
                            q["question"], k=k, strategy=strategy, filters={"kinds": ["bead"]},
                            now=asked_at(q),
                        )  # fmt: skip
                        # A session summary is no turn: a miss here, in its slot.
                        ranked = [back.get(item.id, f"summary:{item.id}") for item in result.items]
                    latencies[name].append((time.perf_counter() - t0) * 1000)
                    row: dict[str, Any] = {
                        "question_id": q["question_id"],
                        "question_type": q["question_type"],
                        **score(ranked, q),
                    }
                    if details:
                        row["ranked"] = ranked
                    per[name].append(row)
            finally:
                if mem is not None:
                    mem.close()
    if cache is not None and embedder is not None:
        embedder.save()  # type: ignore[attr-defined]  # the CachedEmbedder made above
    return {
        "questions": len(data),
        "index_seconds": round(index_seconds, 1),
        "configs": {name: summarise(rows, latencies[name]) for name, rows in per.items()},
        **({"per_question": dict(per)} if details else {}),
    }


def summarise(rows: list[dict[str, Any]], latencies: list[float]) -> dict[str, Any]:
    metrics = [f"turn@{k}" for k in KS] + [f"session@{SESSION_K}"]

    def means(subset: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "n": len(subset),
            **{m: round(statistics.fmean(r[m] for r in subset), 4) for m in metrics},
        }

    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_type[r["question_type"]].append(r)
    return {
        **means(rows),
        "by_type": {t: means(by_type[t]) for t in sorted(by_type)},
        "retrieve_ms_p50": round(statistics.median(latencies), 2),
        "retrieve_ms_p95": round(sorted(latencies)[int(0.95 * len(latencies))], 2),
    }


def print_tables(figures: dict[str, Any]) -> None:
    configs = figures["configs"]
    print("| configuration | turn@5 | turn@10 | turn@25 | session@5 | p50 ms |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, f in configs.items():
        print(
            f"| {name} | {f['turn@5']:.3f} | {f['turn@10']:.3f} | {f['turn@25']:.3f} "
            f"| {f['session@5']:.3f} | {f['retrieve_ms_p50']} |"
        )
    print()
    names = list(configs)[:1] + [n for n in list(configs)[1:] if "BM25" in n]
    head = " | ".join(f"{n.split(' (')[0]} turn@10 | session@5" for n in names)
    print(f"| question type | n | {head} |")
    print("| --- | ---: |" + " ---: | ---: |" * len(names))
    for qtype in configs[names[0]]["by_type"]:
        cells = " | ".join(
            f"{configs[n]['by_type'][qtype]['turn@10']:.3f} "
            f"| {configs[n]['by_type'][qtype]['session@5']:.3f}"
            for n in names
        )
        print(f"| {qtype} | {configs[names[0]]['by_type'][qtype]['n']} | {cells} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LongMemEval JSON file")
    parser.add_argument(
        "--strategy", default="fusion", help="fusion, emb, keyword, kg, beads or bm25"
    )
    parser.add_argument(
        "--embedder",
        default="deterministic",
        help="none, deterministic or sentence-transformers:PATH (any spec Memory takes)",
    )
    parser.add_argument(
        "--weights", type=json.loads, help="fusion weights, e.g. '{\"context\": 0.5}'"
    )
    parser.add_argument("--ablations", action="store_true", help="every configuration + BM25")
    parser.add_argument("--limit", type=int, help="only the first N questions")
    parser.add_argument("--every", type=int, default=1, help="only every Nth question")
    parser.add_argument("--types", help="only these question types, comma-separated")
    parser.add_argument("--json", action="store_true", help="print JSON only")
    parser.add_argument("--extractor", help="knowledge extractor: rules, ollama[:MODEL]")
    parser.add_argument("--details", type=Path, help="write per-question rankings here (JSON)")
    parser.add_argument(
        "--embed-cache", type=Path,
        help="keep the embedder's vectors in this directory (a real model embeds each text once)",
    )  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="the first two questions")
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"skipped: {args.data} is not there (LongMemEval dev)", file=sys.stderr)
        return SKIPPED
    if args.quick:
        args.limit = 2
    data = json.loads(args.data.read_text())
    if args.types:
        wanted = set(args.types.split(","))
        data = [q for q in data if q["question_type"] in wanted]
    data = data[:: args.every]
    if args.limit is not None:
        data = data[: args.limit]
    embedder = None if args.embedder == "none" else args.embedder
    weights = args.weights or {}
    configs = (
        ABLATIONS
        if args.ablations
        else [(f"{args.strategy} {json.dumps(weights)}", args.strategy, weights)]
    )
    t0 = time.perf_counter()
    figures = evaluate(
        data, configs=configs, embedder=embedder, extractor=args.extractor,
        details=bool(args.details), cache=args.embed_cache,
    )  # fmt: skip
    figures["seconds"] = round(time.perf_counter() - t0, 1)
    figures["bm25_tokens"] = reference_tokenizer()[1]
    if args.details:
        args.details.write_text(json.dumps(figures.pop("per_question")))
    if args.json:
        print(json.dumps(figures))
    else:
        print(f"LongMemEval_S turn recall, {args.data.name}")
        print(
            f"  embedder={args.embedder} extractor={args.extractor} "
            f"questions={figures['questions']} "
            f"seconds={figures['seconds']} (indexing {figures['index_seconds']})"
        )
        print(f"  BM25 reference tokens: {figures['bm25_tokens']}")
        print()
        print_tables(figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
