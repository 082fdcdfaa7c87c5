"""Forget in the remote: what the rewrite after a forget costs (docs/sync-protocol.md §13).

    .venv/bin/python bench/forget_remote_bench.py             # 100,000 beads
    .venv/bin/python bench/forget_remote_bench.py --beads 10000 --json
    .venv/bin/python bench/forget_remote_bench.py --quick     # 2,000 beads, batches 1 and 100

One replica (`chrysalis.Memory`, ``sync=False``, no embedder) gets ``--beads`` notes of about
150 characters (``append_beads``, 1,000 per call), pushes them to a fresh folder remote
(``file://`` in a temp dir, fsynced writes) in segments of the default size (4,096 ops), and
publishes a snapshot. Then, for each batch size in 1, 100 and 1,000: forget that many beads
spread evenly over the whole log (so a batch of 100 or more touches every segment), pull (the
view blobs are judged from), and time ``Sync.push()``, which pushes the forget ops and then
runs the remote's to-do (`chrysalis.sync.scrub`): read and rewrite each segment holding a
forgotten op, replace our snapshot by one of the erased state. The requests by verb and the
bytes written are counted off the remote; the rewrite alone (``Sync.last_scrub``) is shown
beside the whole push. The run fails if any forgotten note's text is still in a segment.

Times are ``time.perf_counter``; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from chrysalis import Memory
from chrysalis.remotes import open_remote
from chrysalis.sync import Sync
from chrysalis.sync.segment import Kind, decode

WORDS = ["alpha", "brook", "cedar", "delta", "ember", "fjord", "grove", "harbor", "island"]


def note(i: int, rng: random.Random) -> str:
    return f"note {i:07d} " + " ".join(rng.choice(WORDS) for _ in range(22))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--beads", type=int, default=100_000)
    ap.add_argument("--batches", default="1,100,1000")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--quick", action="store_true", help="2,000 beads, batches 1,100 (the suite's)")
    args = ap.parse_args()
    if args.quick:
        args.beads, args.batches = 2_000, "1,100"
    rng = random.Random(7)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "remote"
        root.mkdir()
        url = f"file://{root}"
        mem = Memory.open(Path(tmp) / "a", sync=False)
        t = time.perf_counter()
        for start in range(0, args.beads, 1000):
            n = min(1000, args.beads - start)
            mem.append_beads(
                [{"content": note(start + k, rng), "id": f"n{start + k}"} for k in range(n)]
            )
        print(f"wrote {args.beads} beads in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        sync = Sync(mem, url)
        t = time.perf_counter()
        sync.push()
        sync.snapshot()
        print(f"pushed and snapshotted in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        segments = len(open_remote(url).list("ops/"))
        forgotten: set[int] = set()
        for size in (int(x) for x in args.batches.split(",")):
            step = args.beads // size
            batch = [i for i in range(step // 2, args.beads, step) if i not in forgotten][:size]
            for i in batch:
                mem.forget(f"n{i}")
            forgotten.update(batch)
            sync.pull(force=True)
            before = dict(sync.remote.requests)
            t = time.perf_counter()
            pushed = sync.push()
            took = time.perf_counter() - t
            reqs = {k: v - before.get(k, 0) for k, v in sync.remote.requests.items()}
            scrub = sync.last_scrub or {}
            rows.append(
                {
                    "forgotten": len(batch),
                    "push_and_rewrite_s": round(took, 2),
                    "segments_s": round(scrub.get("seconds", {}).get("segments", 0.0), 2),
                    "snapshot_s": round(scrub.get("seconds", {}).get("snapshots", 0.0), 2),
                    "segments_rewritten": scrub.get("rewritten"),
                    "rewrite_bytes": scrub.get("bytes"),
                    "snapshot_bytes": (scrub.get("snapshot") or {}).get("bytes"),
                    "push_bytes": pushed["bytes"],
                    "requests": {k: v for k, v in sorted(reqs.items()) if v},
                    "pending_after": sync.status()["forget"]["rewrites"],
                }
            )
            print(f"forgot {len(batch)}: {took:.2f} s", file=sys.stderr)
        # Not one forgotten note's text is left in a segment.
        remote = open_remote(url)
        marks = [f"note {i:07d} ".encode() for i in sorted(forgotten)]
        for obj in remote.list("ops/"):
            raw = json.dumps(
                decode(remote.get(obj.key), kind=Kind.SEGMENT, object_key=obj.key, key=None),
                default=str,
            ).encode()
            left = [m for m in marks if m in raw]
            if left:
                print(f"FAIL: {obj.key} still holds {left[:3]}", file=sys.stderr)
                return 1
        sync.close()
        mem.close()
    if args.json:
        print(json.dumps({"beads": args.beads, "segments": segments, "rows": rows}, indent=2))
        return 0
    print(f"{args.beads} beads in {segments} segments, file remote (local disk)")
    head = ("forgotten", "push+scrub s", "rewrite s", "snapshot s", "segments", "rewrite MB")
    print("{:>9} {:>12} {:>9} {:>10} {:>8} {:>10} {:>11}  requests".format(*head, "snapshot MB"))
    for r in rows:
        print(
            f"{r['forgotten']:>9} {r['push_and_rewrite_s']:>12} {r['segments_s']:>9} "
            f"{r['snapshot_s']:>10} {r['segments_rewritten']!s:>8} "
            f"{(r['rewrite_bytes'] or 0) / 1e6:>10.1f} {(r['snapshot_bytes'] or 0) / 1e6:>11.1f}  "
            + ", ".join(f"{k} {v}" for k, v in r["requests"].items())
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
