"""A million beads: how a memory of a few years' daily use opens, recalls, rebuilds and syncs.

    .venv/bin/python bench/million.py                  # 1,000,000 beads (about 20-30 min)
    .venv/bin/python bench/million.py --quick          # 10,000 beads, the suite's smoke run
    .venv/bin/python bench/million.py --beads 300000 --data-dir /tmp/m300k   # keep, reuse
    .venv/bin/python bench/million.py --json           # the figures as JSON on stdout

1. Build: ``--beads`` notes (`load_bench.sentence`, fixed seed, 50 turns a session, five
   minutes apart) through the library's batch path: ``append_beads`` 1,000 per call with
   ``sync=False``, then the indexes caught up (deterministic 384-dim embedder). With
   ``--data-dir`` the dir is kept, and one that already holds the beads is reused.
2. Open: a fresh process opens the memory as a laptop does after a reboot (indexes on disk)
   and recalls ``--queries`` random queries one at a time (k = 10, fusion). It reports the
   open time (``Memory.open`` returning, then the first recall answered), recall p50 / p95,
   and its resident set (VmRSS after the recalls, VmHWM the peak), split into its own memory
   (RssAnon) and the pages of LMDB and tantivy files it read (RssFile: the page cache).
3. Rebuild: the index directory removed, a fresh process opens the memory and waits until
   keyword and vector indexes are rebuilt from LMDB.
4. Export and import (skipped with ``--no-exchange``): in a fresh process every item is
   written as JSON Lines to a file (``export_lines``, what ``chrysalis export`` writes); in
   another, the file is imported into an empty durable memory (``import_lines``, what
   ``chrysalis import`` has the daemon do: every line checked, then one transaction).
   Wall time, CPU time and peak RSS of each.
5. Compaction: ``Store.compact`` (the op log and every record copied live pages only).
6. Join (skipped with ``--no-join``): the memory pushes to a fresh bucket on moto's S3 server
   on 127.0.0.1 and publishes a snapshot; ``--tail`` more beads are written and pushed after
   it; then an empty replica (a new laptop) pulls: the snapshot's parts, then the tail. Its
   pull is timed (wall and CPU), its state digest must equal the source's, and it must have
   loaded the snapshot (the bench fails if it replayed the op log instead). moto runs in a
   process of its own, so its CPU is not the joiner's (reported apart). Then a recall at the
   moment the join returned, and how long its indexes take to catch up (``--index-wait``).

Goals (DESIGN §18, issue 33): recall p95 <= 15 ms in-process, RSS <= 1.5 GB, open <= 3 s,
join <= 120 s, at 1,000,000 beads. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from load_bench import bead_count, build, log, own_cpu_s, percentile, query, rss_mb, sentence
from sync_bench import S3Process

from chrysalis import Memory
from chrysalis.sync import Sync
from chrysalisd.exchange import export_lines, import_lines

GOALS = {"recall_p95_ms": 15.0, "rss_mb": 1536.0, "open_s": 3.0, "join_s": 120.0}
EMBEDDER = "deterministic"


# ---- 2, 3. measured in a fresh process ------------------------------------------------------


def probe(path: Path, queries: int, seed: int) -> dict[str, Any]:
    """Open, first recall, ``queries`` recalls one at a time, RSS: as a laptop after a boot."""
    t0 = time.perf_counter()
    mem = Memory.open(path, sync=False, embedder=EMBEDDER)
    opened = time.perf_counter() - t0
    rng = random.Random(seed)
    mem.retrieve(query(rng), k=10)
    first = time.perf_counter() - t0
    latencies = []
    for _ in range(queries):
        q = query(rng)
        t = time.perf_counter()
        mem.retrieve(q, k=10)
        latencies.append((time.perf_counter() - t) * 1000)
    latencies.sort()
    rss, peak = rss_mb()
    anon, file = rss_split_mb()
    mem.close()
    return {
        "open_s": opened,
        "first_recall_s": first,
        "recall_p50_ms": percentile(latencies, 50),
        "recall_p95_ms": percentile(latencies, 95),
        "recall_max_ms": latencies[-1],
        "rss_mb": rss,
        "rss_anon_mb": anon,
        "rss_file_mb": file,
        "peak_rss_mb": peak,
        "cpu_s": own_cpu_s(),
    }


def rss_split_mb() -> tuple[float, float]:
    """(RssAnon, RssFile) in MB: the process's own memory, and the pages of mapped files
    (LMDB's, tantivy's) it has touched: the page cache, shared and given back under pressure."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return int(fields["RssAnon"].split()[0]) / 1024, int(fields["RssFile"].split()[0]) / 1024


def rebuild(path: Path) -> dict[str, Any]:
    """Open with the index directory gone and wait until both indexes are rebuilt."""
    t0 = time.perf_counter()
    with Memory.open(path, sync=False, embedder=EMBEDDER) as mem:
        mem.wait_indexed(timeout=7200)
        took = time.perf_counter() - t0
        _, peak = rss_mb()
    return {"rebuild_s": took, "rebuild_cpu_s": own_cpu_s(), "rebuild_peak_rss_mb": peak}


def export(path: Path, out: Path) -> dict[str, Any]:
    """Every item to ``out`` as JSON Lines: what ``chrysalis export`` writes (the daemon's
    ``export_lines``), streamed to the file."""
    t0 = time.perf_counter()
    with Memory.open(path, sync=False) as mem, out.open("wb") as f:
        lines = 0
        for line in export_lines(mem):
            f.write(line)
            lines += 1
    return {"export_s": time.perf_counter() - t0, "export_cpu_s": own_cpu_s(),
            "export_lines": lines, "export_mb": out.stat().st_size / 2**20,
            "export_peak_rss_mb": rss_mb()[1]}  # fmt: skip


def import_(source: Path, into: Path) -> dict[str, Any]:
    """The export into an empty, durable memory, as ``chrysalis import`` has the daemon do:
    every line checked, then one transaction. Indexing follows in the background (not
    timed: no embedder here)."""
    t0 = time.perf_counter()
    with Memory.open(into) as mem, source.open("rb") as f:
        got = import_lines(mem, f)
        took = time.perf_counter() - t0
    return {"import_s": took, "import_cpu_s": own_cpu_s(), "import_added": got["added"],
            "import_peak_rss_mb": rss_mb()[1]}  # fmt: skip


def phase(what: str, path: Path, queries: int, seed: int, file: Path | None) -> dict[str, Any]:
    """Run ``what`` (probe, rebuild, export, import) in this process; its figures."""
    if what == "probe":
        return probe(path, queries, seed)
    if what == "rebuild":
        return rebuild(path)
    assert file is not None, f"--{what} needs --file"
    return export(path, file) if what == "export" else import_(file, path)


def in_child(what: str, path: Path, args: argparse.Namespace, *extra: str) -> dict[str, Any]:
    """Run ``what`` (probe, rebuild, export, import) in a fresh interpreter; its figures.

    With ``--quick`` it runs in this process instead: the smoke run checks that the phase
    works and prints its figures, and a fresh interpreter would cost more CPU (its imports)
    than the phase itself. Its open time and RSS are then this process's, not a cold start's:
    the full run's figures are the ones that measure a laptop after a boot."""
    if args.quick:
        file = Path(extra[extra.index("--file") + 1]) if "--file" in extra else None
        return phase(what, path, args.queries, args.seed, file)
    cmd = [sys.executable, __file__, f"--{what}", str(path), "--queries", str(args.queries)]
    cmd += extra
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


# ---- 4, 5 -----------------------------------------------------------------------------------


def compaction(path: Path) -> dict[str, Any]:
    lmdb_file = path / "lmdb" / "data.mdb"
    before = lmdb_file.stat().st_size
    with Memory.open(path, sync=False) as mem:
        t0 = time.perf_counter()
        mem.store.compact()
        took = time.perf_counter() - t0
    return {
        "compact_s": took,
        "lmdb_mb_before": before / 2**20,
        "lmdb_mb_after": lmdb_file.stat().st_size / 2**20,
    }


def join(path: Path, tmp: Path, tail: int, seed: int, index_wait: float) -> dict[str, Any]:
    """Push the memory to moto's S3 (its own process), snapshot, write and push ``tail`` more
    beads; then an empty replica (a new laptop) pulls: the snapshot's parts, then the tail. It
    must end with the same digest, and must have loaded the snapshot (not replayed the op
    log). Then, up to ``index_wait`` seconds: how long until its indexes caught up, and what a
    recall answers at the moment the join returned."""
    s3 = S3Process()
    try:
        url = s3.new_url()
        with Memory.open(path, sync=False) as a:
            sa = Sync(a, url)
            try:
                t0 = time.perf_counter()
                pushed = sa.push()
                push_s = time.perf_counter() - t0
                t0 = time.perf_counter()
                snap = sa.snapshot()
                snapshot_s = time.perf_counter() - t0
                rng = random.Random(seed + 7)
                a.append_beads(
                    {"content": sentence(rng), "session_id": "tail"} for _ in range(tail)
                )
                sa.push()
                digest = a.state_digest()
            finally:
                sa.close()
        moto_cpu0 = s3.cpu_s()
        with Memory.open(tmp / "new-laptop", sync=False, embedder=EMBEDDER) as c:
            sc = Sync(c, url)
            try:
                # The peak RSS from here on is the joiner's, not the source's push before it
                # (Linux: writing 5 to clear_refs resets VmHWM).
                with contextlib.suppress(OSError):
                    Path("/proc/self/clear_refs").write_text("5")
                cpu0, t0 = own_cpu_s(), time.perf_counter()
                pulled = sc.pull()
                join_s = time.perf_counter() - t0
                join_cpu_s = own_cpu_s() - cpu0
                moto_cpu_s = s3.cpu_s() - moto_cpu0
                _, join_peak = rss_mb()
            finally:
                sc.close()
            converged = c.state_digest() == digest
            log(f"   joined in {join_s:.1f} s ({join_cpu_s:.1f} s CPU) from {pulled['snapshot']}")
            rng = random.Random(seed + 11)
            t = time.perf_counter()
            answer = c.retrieve(query(rng), k=10)
            hits = len(answer.items)
            first_recall_ms = (time.perf_counter() - t) * 1000
            # Indexes catching up, timed in a thread, while this one asks what the laptop
            # answers at the goal's mark (120 s after the join started; not in --quick).
            mark: dict[str, Any] | None = None
            index_s: list[float] = []

            def wait() -> None:
                with contextlib.suppress(TimeoutError):
                    c.wait_indexed(timeout=index_wait)
                    index_s.append(time.perf_counter() - t0 - join_s)

            waiter = threading.Thread(target=wait)
            if index_wait > 0:
                waiter.start()
                time.sleep(max(0.0, t0 + GOALS["join_s"] - time.perf_counter()))
                at_mark = c.retrieve(query(rng), k=10)
                status = c.indexer.status()
                mark = {"hits": len(at_mark.items), "notes": at_mark.notes,
                        "behind": status["behind"], "keyword_items": status["keyword"]["items"],
                        "vector_items": (status["vectors"] or {}).get("items", 0)}  # fmt: skip
                waiter.join()
    finally:
        s3.stop()
    if not converged:
        raise RuntimeError("the new laptop's state differs from the source's after the join")
    if not pulled.get("snapshot"):
        raise RuntimeError("the new laptop replayed the op log: no snapshot was loaded")
    return {
        "push_s": push_s,
        "push_ops": pushed["ops"],
        "snapshot_s": snapshot_s,
        "snapshot_mb": snap.get("bytes", 0) / 2**20,
        "snapshot_parts": snap.get("parts"),
        "tail_beads": tail,
        "join_s": join_s,
        "join_cpu_s": join_cpu_s,
        "join_moto_cpu_s": moto_cpu_s,
        "join_peak_rss_mb": join_peak,
        "join_ops": pulled["ops"],
        "join_from": pulled["snapshot"],
        "recall_hits_at_join": hits,
        "recall_ms_at_join": first_recall_ms,
        "recall_notes_at_join": answer.notes,
        "indexed_after_join_s": index_s[0] if index_s else None,
        "at_goal_mark": mark,
        "converged": converged,
    }


# ---- main -----------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10,000 beads, 30 queries")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--beads", type=int, help="beads to build (default 1,000,000)")
    parser.add_argument("--data-dir", type=Path, help="build here and keep it; reuse if built")
    parser.add_argument("--queries", type=int, help="recalls timed (default 300)")
    parser.add_argument("--tail", type=int, help="beads written after the snapshot (1,000)")
    parser.add_argument("--no-join", action="store_true", help="skip the S3 join")
    parser.add_argument("--no-rebuild", action="store_true", help="skip the index rebuild")
    parser.add_argument("--no-exchange", action="store_true", help="skip export and import")
    parser.add_argument("--index-wait", type=float, default=None,
                        help="after the join, wait this long for the indexes (default: 0 "
                        "with --quick, else 600 s)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--probe", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--rebuild", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--export", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--import", dest="import_", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--file", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.beads = args.beads or (10_000 if args.quick else 1_000_000)
    args.queries = args.queries or (30 if args.quick else 300)
    args.tail = args.tail if args.tail is not None else (200 if args.quick else 1000)
    if args.index_wait is None:
        args.index_wait = 0.0 if args.quick else 600.0
    return args


def run(args: argparse.Namespace) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="chrysalis-million-", dir="/tmp"))
    path = args.data_dir or tmp / "data"
    out: dict[str, Any] = {"beads": args.beads, "goals": GOALS}
    try:
        have = bead_count(path)
        if have >= args.beads:
            log(f"reusing {path}: {have:,} beads")
            out["build"] = {"built": False, "beads_found": have}
        elif have:
            raise SystemExit(f"{path} holds {have:,} beads, fewer than {args.beads:,}")
        else:
            log(f"1. building {args.beads:,} beads in {path} ...")
            sessions = max(1, args.beads // 50)
            out["build"] = {"built": True, **build(path, args.beads, sessions, args.seed)}
        where = "in this process (--quick)" if args.quick else "in a fresh process"
        log(f"2. open and recall {where} ...")
        out["open"] = in_child("probe", path, args)
        log(f"   {json.dumps(out['open'])}")
        if not args.no_rebuild:
            log("3. index rebuild from LMDB ...")
            shutil.rmtree(path / "index", ignore_errors=True)
            out["rebuild"] = in_child("rebuild", path, args)
            log(f"   {json.dumps(out['rebuild'])}")
        if not args.no_exchange:
            log("4. export, then import into an empty memory ...")
            jsonl = tmp / "export.jsonl"
            out["exchange"] = in_child("export", path, args, "--file", str(jsonl))
            out["exchange"].update(in_child("import", tmp / "imported", args, "--file", str(jsonl)))
            if out["exchange"]["import_added"]["bead"] < args.beads:
                raise RuntimeError(f"import added {out['exchange']['import_added']}")
            shutil.rmtree(tmp / "imported")
            jsonl.unlink()
            log(f"   {json.dumps(out['exchange'])}")
        log("5. compaction ...")
        out["compaction"] = compaction(path)
        log(f"   {json.dumps(out['compaction'])}")
        if not args.no_join:
            log("6. a new laptop joins through S3 (moto) from a snapshot ...")
            out["join"] = join(path, tmp, args.tail, args.seed, args.index_wait)
            log(f"   {json.dumps(out['join'])}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    figures = {**out["open"], **out.get("join", {})}
    out["met"] = {k: figures[k] <= goal for k, goal in GOALS.items() if k in figures}
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    for what, path in [("probe", args.probe), ("rebuild", args.rebuild),
                       ("export", args.export), ("import", args.import_)]:  # fmt: skip
        if path is not None:  # a phase run by `in_child` in a fresh interpreter
            print(json.dumps(phase(what, path, args.queries, args.seed, args.file)))
            return 0
    out = run(args)
    env = {"python": platform.python_version(), "cpu_count": os.cpu_count()}
    if args.json:
        print(json.dumps({"environment": env, "quick": args.quick, **out}, indent=2))
        return 0
    print(f"python {env['python']}, {env['cpu_count']} CPUs; {args.beads:,} beads")
    b = out["build"]
    if b["built"]:
        print(f"build: {b['total_s']:.0f} s ({b['write_s']:.0f} s appending, "
              f"{b['index_s']:.0f} s indexing)")  # fmt: skip
    rows = [
        ("open (Memory.open returns)", out["open"]["open_s"], "s", "open_s"),
        ("open to first recall answered", out["open"]["first_recall_s"], "s", None),
        ("recall p50, in-process", out["open"]["recall_p50_ms"], "ms", None),
        ("recall p95, in-process", out["open"]["recall_p95_ms"], "ms", "recall_p95_ms"),
        ("RSS after the recalls", out["open"]["rss_mb"], "MB", "rss_mb"),
        ("  of which its own (RssAnon)", out["open"]["rss_anon_mb"], "MB", None),
        ("  of which mapped files read (RssFile)", out["open"]["rss_file_mb"], "MB", None),
        ("RSS peak", out["open"]["peak_rss_mb"], "MB", None),
    ]
    if "rebuild" in out:
        rows += [
            ("index rebuild from LMDB", out["rebuild"]["rebuild_s"], "s", None),
            ("RSS peak while rebuilding", out["rebuild"]["rebuild_peak_rss_mb"], "MB", None),
        ]
    if "exchange" in out:
        e = out["exchange"]
        rows += [
            (f"export ({e['export_mb']:,.0f} MB of JSON Lines)", e["export_s"], "s", None),
            ("RSS peak while exporting", e["export_peak_rss_mb"], "MB", None),
            ("import into an empty memory", e["import_s"], "s", None),
            ("RSS peak while importing", e["import_peak_rss_mb"], "MB", None),
        ]
    c = out["compaction"]
    rows += [
        ("compaction (LMDB copy, live pages)", c["compact_s"], "s", None),
        ("LMDB size before", c["lmdb_mb_before"], "MB", None),
        ("LMDB size after", c["lmdb_mb_after"], "MB", None),
    ]
    if "join" in out:
        j = out["join"]
        rows += [
            ("push (all ops) to S3", j["push_s"], "s", None),
            ("snapshot", j["snapshot_s"], "s", None),
            (f"new laptop joins (snapshot + {j['tail_beads']} tail)", j["join_s"], "s", "join_s"),
            ("  its CPU (all threads)", j["join_cpu_s"], "s", None),
            ("  moto's CPU meanwhile (own process)", j["join_moto_cpu_s"], "s", None),
            ("  RSS peak of the process", j["join_peak_rss_mb"], "MB", None),
        ]
        if j["indexed_after_join_s"] is not None:
            rows.append(("indexes caught up, after the join", j["indexed_after_join_s"], "s", None))
    if "join" in out:
        j = out["join"]
        if j["at_goal_mark"] is not None:
            at = json.dumps(j["at_goal_mark"])
            print(f"{GOALS['join_s']:.0f} s after the join started: {at}")
        print(f"join loaded {j['join_from']} ({j['snapshot_parts']} parts, "
              f"{j['snapshot_mb']:,.0f} MB); a recall at that moment: {j['recall_hits_at_join']}"
              f" hits in {j['recall_ms_at_join']:.0f} ms")  # fmt: skip
    print(f"{'figure':<44} {'value':>10} {'unit':<4} {'goal':>9}  met")
    for label, value, unit, goal_key in rows:
        goal = "" if goal_key is None else f"<= {GOALS[goal_key]:g}"
        met = "-" if goal_key is None else ("yes" if out["met"][goal_key] else "NO")
        print(f"{label:<44} {value:>10,.1f} {unit:<4} {goal:>9}  {met}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
