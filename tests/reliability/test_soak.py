"""Soak: three daemons (subprocesses, each its own data dir) serve two memories each, the
default and ``team``, and each memory syncs through its own S3 bucket on moto under its own
key, on a short schedule (push and pull every second, snapshots and compaction every 5 s).
Two seeded driver threads write, forget and sync in a random memory of a random daemon; a
chaos thread SIGKILLs daemons (restarting them on the same data dir) and stops S3 for 1-5 s
at a time; in each bucket someone without the key deletes, replays and edits objects.

Then S3 comes back for good, every daemon runs, a fourth daemon joins with an empty data dir
(from the snapshots and the segments compaction left), and sync rounds go on, memory by
memory, until the four state digests are equal and stay equal. The checker then wants, in each
memory, every acknowledged write on every replica exactly once and nothing written to the
other memory, every acknowledged forget everywhere, indexes that agree with LMDB, no rejected
object, no stopped push, nothing pending; and no error in any daemon's log, and daemons that
answer and stop cleanly.

About two minutes by default; ``CHRYSALIS_SOAK_SECONDS=1800`` (or ``pytest tests/reliability
--soak-seconds 1800``) soaks longer. ``CHRYSALIS_SOAK_SEED`` replays the driver's choices (not
the timing). The report is printed (``-s`` shows it) and kept in the test's user_properties.
"""

from __future__ import annotations

import itertools
import json
import logging
import random
import signal
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.soak import (
    DEFAULT,
    SYNC_TIMEOUT,
    Chaos,
    Driver,
    Ledger,
    Place,
    Replica,
    Tamper,
    check,
    converge,
    remote_summary,
    start_s3,
)
from tests.remote_fixtures import S3Server

DRIVERS = 2  # threads writing at once: kills land on calls in flight
MEMORIES = (DEFAULT, "team")  # each with its own bucket and key
# Generous: a late laptop joins in the first round, and on a loaded 2-core machine moto's reads
# time out now and then (one round once took the whole minute). Only a failure waits it out.
CONVERGE_SECONDS = 120.0
ANSWER_SECONDS = 10.0  # "quickly" at the end: a wedged daemon does not answer at all


@pytest.mark.slow
def test_soak_three_daemons_two_memories_through_s3_with_crashes_and_outages(
    s3_server: S3Server,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    soak_seconds: float,
    soak_seed: int,
) -> None:
    started = time.monotonic()
    rng = random.Random(soak_seed)
    report: dict[str, Any] = {"seed": soak_seed, "chaos_s": soak_seconds}
    request.node.user_properties.append(("soak", report))
    print(f"\nsoak: seed {soak_seed} (CHRYSALIS_SOAK_SEED={soak_seed}), {soak_seconds:g} s")

    werkzeug = logging.getLogger("werkzeug")  # moto's request log: thousands of lines
    werkzeug_level = werkzeug.level
    werkzeug.setLevel(logging.WARNING)
    # Keyed memories, each its own bucket and key: the tampering actor can write to the
    # buckets but has no key.
    buckets = {m: s3_server.new_bucket() for m in MEMORIES}
    places = {}
    for n, m in enumerate(MEMORIES):
        key_file = tmp_path / f"{m}.key"
        key_file.write_text(random.Random(soak_seed + n).randbytes(32).hex() + "\n")
        key_file.chmod(0o600)
        places[m] = Place(s3_server.url(buckets[m]), key_file)
    others = {m: p for m, p in places.items() if m != DEFAULT}

    def replica(name: str) -> Replica:
        return Replica(name, tmp_path / name, places[DEFAULT], others)

    replicas = [replica(name) for name in ("a", "b", "c")]
    stats: Counter[str] = Counter()
    ledgers = {m: Ledger() for m in MEMORIES}
    stop = threading.Event()
    chaos_stats: Counter[str] = Counter()
    chaos = Chaos(replicas, s3_server, random.Random(rng.getrandbits(64)), chaos_stats, stop)
    tamper_stats = {m: Counter[str]() for m in MEMORIES}
    tampers = [
        Tamper(s3_server, buckets[m], "team", random.Random(rng.getrandbits(64)),
               tamper_stats[m], stop)
        for m in MEMORIES
    ]  # fmt: skip
    seen: Counter[str] = Counter()  # anomalies the daemons' status showed while it ran
    watcher = threading.Thread(
        target=watch_anomalies, args=(replicas, seen, stop), name="soak-watch", daemon=True
    )
    try:
        replicas[0].start()
        for m in MEMORIES:  # one replica makes each format.json: no race
            assert replicas[0].call("sync", memory=m)["ok"]
        for r in replicas[1:]:
            r.start()
        report["startup_s"] = round(time.monotonic() - started, 1)
        chaos.start()
        for tamper in tampers:
            tamper.start()
        watcher.start()
        lock, ids = threading.Lock(), itertools.count(1)
        drivers = [
            Driver(replicas, ledgers, random.Random(rng.getrandbits(64)), stats, lock, ids)
            for _ in range(DRIVERS)
        ]
        threads = [
            threading.Thread(target=d.run, args=(soak_seconds, stop), name=f"soak-driver-{i}")
            for i, d in enumerate(drivers)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for d in drivers:
            assert d.error is None, f"a driver failed:\n{d.error}"
        stop.set()
        joined = time.monotonic()
        chaos.join(timeout=300)
        assert not chaos.is_alive(), "the chaos thread did not finish"
        assert chaos.error is None, f"chaos failed:\n{chaos.error}"
        for tamper in tampers:
            tamper.join(timeout=60)
            assert tamper.error is None, f"tampering failed:\n{tamper.error}"
        watcher.join(timeout=60)
        report["tampering"] = {m: dict(t) for m, t in tamper_stats.items()}
        report["anomalies_seen"] = dict(seen)
        report["chaos_join_s"] = round(time.monotonic() - joined, 1)
        report["kill_exit_codes"] = dict(chaos.kill_codes)
        assert set(chaos.kill_codes) <= {-signal.SIGKILL}, chaos.kill_codes

        # Convergence: S3 up, every daemon up, sync until the digests agree and stay. A
        # fourth laptop joins now, from the remote alone (a snapshot, then segments): what
        # compaction left there must be the whole memory.
        start_s3(s3_server)
        problems: list[str] = []
        for r in replicas:
            if not r.running():  # chaos restarts the daemons it kills: this one died alone
                assert r.proc.proc is not None
                problems.append(f"{r.name} exited {r.proc.proc.returncode} on its own")
                r.start()
        if stats["failed:NotReady"]:
            problems.append(f"{stats['failed:NotReady']} calls found no answer in 30 s (wedged?)")
        # Tampering has stopped; repair what it broke: a deleted format.json is never made
        # again silently, so the repair verb puts it back (a no-op when it is intact).
        for m in MEMORIES:
            if tamper_stats[m]["delete_format"]:
                repaired = replicas[0].call(
                    "sync", repair_format=True, timeout=SYNC_TIMEOUT, memory=m
                )
                report[f"format_repair:{m}"] = (repaired.get("remote") or {}).get("repair_format")
        if sum(sum(t.values()) for t in tamper_stats.values()):
            problems.extend(
                [] if sum(seen.values()) else ["tampering went on, yet no status showed it"]
            )
        late = replica("late")
        replicas.append(late)
        late.start()
        bound = max(CONVERGE_SECONDS, soak_seconds / 10)
        digests = {}
        for m in MEMORIES:
            seconds, rounds, statuses = converge(replicas, bound, m)
            figures = report[m] = {"converge_s": round(seconds, 1), "converge_rounds": rounds}
            digests[m] = figures["digest"] = statuses[0]["state_digest"]
            figures["remote"] = remote_summary(s3_server, buckets[m])
            checking = time.monotonic()
            problems += check(replicas, ledgers[m], statuses, rng, figures, m)
            problems += [f"{m}: unexpected error: {e}" for e in ledgers[m].unexpected]
            figures["check_s"] = round(time.monotonic() - checking, 1)
        if len(set(digests.values())) != len(MEMORIES):
            problems.append(f"two memories have one state: {digests}")

        # No daemon wedged: each answers at once, and SIGTERM stops it with status 0. The
        # memories are still where the checks left them (nothing syncs into the wrong one).
        for r in replicas:
            assert r.call("ping", timeout=ANSWER_SECONDS), r.name
            for m in MEMORIES:
                status = r.call("status", timeout=ANSWER_SECONDS, memory=m)
                assert status["state_digest"] == digests[m], (r.name, m)
        for r in replicas:
            code = r.proc.stop(signal.SIGTERM, timeout=60)
            if code != 0:
                problems.append(f"{r.name}: exit status {code} on SIGTERM")
        cancelled = 0
        for r in replicas:
            lines, at_shutdown = r.error_lines()
            # An object the tampering actor damaged is rejected, loudly: expected, not a bug.
            lines = [line for line in lines if not _rejection(line)]
            problems += [f"{r.name} logged: {line[:1000]}" for line in lines]
            cancelled += at_shutdown
        report["jobs_cancelled_at_shutdown"] = cancelled
        assert not problems, "soak found problems:\n" + "\n".join(problems)
    finally:
        stop.set()
        if chaos.is_alive():
            chaos.join(timeout=120)
        start_s3(s3_server)  # whatever happened: other tests share the server
        werkzeug.setLevel(werkzeug_level)
        report.update(
            total_s=round(time.monotonic() - started, 1),
            ops_acked=sum(
                stats[k] for k in ("beads_acked", "forgets_acked", "nodes_acked", "edges_acked")
            ),
            beads_acked=stats["beads_acked"],
            batches_acked=stats["batches_acked"],
            forgets_acked=stats["forgets_acked"],
            nodes_acked=stats["nodes_acked"],
            edges_acked=stats["edges_acked"],
            unsure_writes=sum(len(x.unsure) + len(x.unsure_forgets) for x in ledgers.values()),
            failed_calls={k[7:]: v for k, v in stats.items() if k.startswith("failed:")},
            calls=stats["calls"],
            kills=chaos_stats["kills"],
            restarts=chaos_stats["restarts"],
            s3_outages=chaos_stats["s3_outages"],
            s3_down_s=round(chaos_stats["s3_outage_ms"] / 1000, 1),
            syncs=stats["syncs"],
            syncs_ok=stats["syncs_ok"],
            syncs_not_ok=stats["syncs_not_ok"],
            cli_syncs=stats["cli_syncs"],
            sync_errors={k[11:]: v for k, v in stats.items() if k.startswith("sync_error:")},
            mean_ms={
                k[3:]: round(stats[k] / stats["n:" + k[3:]]) for k in stats if k.startswith("ms:")
            },
        )
        print("soak report:")
        for key, value in report.items():
            print(f"  {key:18} {value}")
        for r in replicas:
            r.close()


def watch_anomalies(replicas: list[Replica], seen: Counter[str], stop: threading.Event) -> None:
    """Poll the daemons' status while tampering goes on: what each showed (gaps, tampered or
    rejected objects, a stopped push, a failing sync) is counted by kind."""
    rng = random.Random(7)
    while not stop.wait(1.0):
        r = rng.choice(replicas)
        try:
            remote = r.call("status", timeout=5.0, memory=rng.choice(MEMORIES))["sync"]["remote"]
        except Exception:  # down (chaos), or busy: look again later
            continue
        for kind in ("gaps", "tampered", "rejected"):
            if remote.get(kind):
                seen[kind] += 1
        if remote.get("stopped"):
            seen["stopped"] += 1
        if remote.get("last_error") and remote.get("consecutive_errors"):
            seen["sync_error"] += 1


def _rejection(line: str) -> bool:
    """A log line saying an object from the remote was rejected (tampering does that)."""
    try:
        return str(json.loads(line).get("msg", "")).startswith("rejected ")
    except ValueError:
        return False
