"""Load benchmark: the daemon under many concurrent clients, end to end over its Unix socket.

    .venv/bin/python bench/load_bench.py              # full run (100k beads, 32 clients)
    .venv/bin/python bench/load_bench.py --quick      # smoke run (5k beads, 8 clients, 3 s)
    .venv/bin/python bench/load_bench.py --json       # the figures as JSON on stdout
    .venv/bin/python bench/load_bench.py --data-dir /tmp/chrysalis-load-100k   # keep, reuse

1. Build: a data dir of varied English-ish sentences (word lists, fixed seed) spread over
   sessions of 50 turns, written in-process with ``append_beads`` (1,000 per call,
   ``sync=False``) and indexed with the deterministic 384-dim embedder. With ``--data-dir``
   the dir is kept, and a dir that already holds the beads is used as it is.
2. Serve: ``chrysalis daemon`` on that dir as a subprocess, durable writes on, its socket in
   a fresh short /tmp dir; the phases start once its indexes are caught up.
3. Closed loop: ``--clients`` clients (one AsyncClient each, spread over ``--procs`` worker
   processes so that they do not share one GIL) each send a request as soon as the previous
   one is answered, for ``--seconds``: a recall (k=10, random vocabulary words) with
   probability ``--recall-share``, else a remember of a new sentence.
4. Open loop: the same mix at ``--rate`` requests/s in all, on a fixed schedule spread over
   the clients (request j is due at j / rate, on client j mod clients); latency counts from
   the due time, so a late answer also delays, and is charged to, that client's next request.
5. Stop: SIGTERM, and the daemon must exit 0.

Latency is ``time.perf_counter`` around the client call, answer parsed. Any exception is an
error, counted, and the client goes on. The clients run on the same machine as the daemon
and their CPU time competes with it: the table shows both shares. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import platform
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from chrysalis.client import AsyncClient, Client
from chrysalis.core.errors import DaemonNotRunning

GOAL_P95_MS = 25.0
GOAL = f"p95 recall <= {GOAL_P95_MS:g} ms end to end, zero errors"
BATCH_ROWS = 1000
TURNS_PER_SESSION = 50
TURN_SPACING_S = 300.0  # five minutes between turns: 100k beads span about a year
READY_TIMEOUT_S = 600.0
PROGRESS_S = 30.0  # how often a long build says how far it is


# ---- the text -------------------------------------------------------------------------------


def words(text: str) -> list[str]:
    return text.split()


def phrases(text: str) -> list[str]:
    return [p.strip() for p in text.split(",")]


NAMES = words(
    """Alice Ben Chloe Dmitri Elena Farid Grace Hiro Ines Jonas Kofi Lena Mateo Nadia Omar
Priya Quinn Rosa Sven Tara Ugo Vera Wei Yusuf Zoe Amara Bruno Carmen Diego Esther"""
)
SUBJECTS = NAMES + phrases(
    """I, we, the user, my manager, the team, our client, the landlord, my sister, the doctor,
    the accountant, my neighbour"""
)
VERBS = words(
    """prefers booked cancelled mentioned forgot finished scheduled bought recommended
returned ordered postponed repaired painted reviewed approved rejected borrowed shipped renewed
moved tested cleaned packed lost found liked hated compared measured priced"""
)
ADJECTIVES = words(
    """quiet cheap expensive blue green red heavy light spicy sweet bitter early late
broken shiny old new vintage organic wooden tiny huge comfortable noisy urgent optional weekly
monthly annual remote local fragile waterproof digital paper electric crowded empty fresh
frozen warm cold gluten-free vegan strong mild"""
)
NOUNS = words(
    """window seat laptop invoice contract passport ticket apartment bicycle guitar kettle
sofa umbrella backpack camera printer charger router dentist appointment flight hotel train
meeting deadline budget report presentation dinner lunch breakfast coffee tea wine recipe
garden balcony kitchen bathroom roof heater fridge tyre battery insurance mortgage salary
refund subscription newsletter password keyboard monitor headphones jacket boots scarf gift
birthday wedding anniversary vacation conference workshop interview project roadmap release
bug feature dashboard database server backup license warranty parcel package letter
medicine prescription vitamin gym yoga swim marathon piano lesson tutor homework exam
painting sculpture novel podcast playlist concert museum restaurant bakery market pharmacy
library"""
)
CITIES = words(
    """Berlin Lisbon Osaka Nairobi Toronto Lima Oslo Cairo Austin Dublin Seoul Hanoi
Porto Kyoto Zurich Denver Accra Quito Riga Perth"""
)
PLACES = [f"in {c}" for c in CITIES] + phrases(
    "at home, at the office, downstairs, near the station, in the car, at the airport"
)
TIMES = phrases(
    """today, yesterday, tomorrow, last week, next week, on Monday, on Friday, this morning,
    tonight, at the weekend, next month, before the holidays, after lunch, in March, in October"""
)
QUERY_WORDS = [*NAMES, *ADJECTIVES, *NOUNS, *CITIES, *VERBS]


def sentence(rng: random.Random) -> str:
    """One note as an agent would keep it: who did what to which thing, where, when."""
    s, v, name = rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(NAMES)
    a, a2, n, n2 = *rng.sample(ADJECTIVES, 2), *rng.sample(NOUNS, 2)
    p, t = rng.choice(PLACES), rng.choice(TIMES)
    match rng.randrange(6):
        case 0:
            return f"{s} {v} the {a} {n} {p} {t}."
        case 1:
            return f"{name} said the {n} is {a} and we need a {a2} {n2} {t}."
        case 2:
            ticket = rng.randrange(10_000)
            return f"Reminder: the {n} for {name} is due {t}; keep it {a}, ticket #{ticket}."
        case 3:
            return f"{name} thinks the {a} {n} {p} was too {a2}, so {s} will try the {n2} instead."
        case 4:
            return f"Note {t}: {s} spent {rng.randrange(5, 2000)} dollars on a {a} {n} {p}."
        case _:
            return f"{s} asked whether the {n} {p} is still {a}; {name} {v} the {n2} {t}."


def query(rng: random.Random) -> str:
    return " ".join(rng.sample(QUERY_WORDS, rng.randint(2, 4)))


# ---- helpers --------------------------------------------------------------------------------


def log(msg: str) -> None:
    """Progress goes to stderr so that ``--json`` leaves stdout clean."""
    print(msg, file=sys.stderr, flush=True)


def percentile(sorted_values: list[float], pct: float) -> float:
    """Nearest-rank percentile of an ascending list (NaN when empty)."""
    if not sorted_values:
        return float("nan")
    rank = max(1, round(pct / 100 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def process_cpu_s(pid: int) -> float:
    """User plus system CPU seconds of a process, all its threads (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def own_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# ---- 1. build -------------------------------------------------------------------------------


def bead_count(path: Path) -> int:
    """Beads in a data dir (0 when there is none), without starting its indexer."""
    if not path.exists() or not any(path.iterdir()):
        return 0
    from chrysalis import Memory  # here, not at the top: see `build`

    with Memory.open(path, sync=False) as mem:
        return mem.stats()["beads"]


def rss_mb() -> tuple[float, float]:
    """(VmRSS, VmHWM) of this process in MB (Linux /proc)."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def build(path: Path, n_beads: int, sessions: int, seed: int) -> dict[str, float]:
    """``n_beads`` sentences over ``sessions`` sessions, appended and then fully indexed.

    Progress every ``PROGRESS_S`` on stderr: beads appended and their rate, ops each index is
    behind, this process's CPU time and resident set. Returns wall and CPU seconds per stage
    and the peak resident set."""
    # Imported here: the client worker processes (spawned, so they import this module afresh)
    # need only the client, and the storage stack would cost each of them ~0.7 s of CPU.
    from chrysalis import Memory

    rng = random.Random(seed)
    start_ts = time.time() - n_beads * TURN_SPACING_S
    t0, c0 = time.perf_counter(), own_cpu_s()
    with Memory.open(path, sync=False, embedder="deterministic") as mem:
        shown = t0

        def progress(what: str) -> None:
            status = mem.indexer.status()
            vectors = (status["vectors"] or {}).get("items", 0)
            rss, _ = rss_mb()
            took = time.perf_counter() - t0
            # ops behind count the vectors' own ops too: items indexed show the progress
            log(f"  {took:6.0f} s  {what}; indexed: {status['keyword']['items']:,} keyword, "
                f"{vectors:,} vectors; cpu {own_cpu_s() - c0:.0f} s; rss {rss:.0f} MB")  # fmt: skip

        for start in range(0, n_beads, BATCH_ROWS):
            mem.append_beads(
                {
                    "content": sentence(rng),
                    "session_id": f"s{i // TURNS_PER_SESSION % sessions}",
                    "role": "user" if i % 2 == 0 else "assistant",
                    "ts": start_ts + i * TURN_SPACING_S,
                }
                for i in range(start, min(n_beads, start + BATCH_ROWS))
            )
            if time.perf_counter() - shown >= PROGRESS_S:
                shown = time.perf_counter()
                done = start + BATCH_ROWS
                progress(f"{done:,} beads appended ({done / (shown - t0):,.0f}/s)")
        write_s, write_cpu = time.perf_counter() - t0, own_cpu_s() - c0
        log(f"  appended {n_beads:,} beads in {write_s:.1f} s; indexing ...")
        t1 = time.perf_counter()
        while True:
            try:
                mem.wait_indexed(timeout=PROGRESS_S)
                break
            except TimeoutError:
                if time.perf_counter() - t1 > 7200:
                    raise
                progress("indexing")
        index_s = time.perf_counter() - t1
    total_s, total_cpu = time.perf_counter() - t0, own_cpu_s() - c0
    log(f"  indexed in {index_s:.1f} s; build {total_s:.1f} s in all (close included), "
        f"{total_cpu:.0f} s CPU")  # fmt: skip
    return {
        "write_s": write_s,
        "index_s": index_s,
        "total_s": total_s,
        "write_cpu_s": write_cpu,
        "total_cpu_s": total_cpu,
        "peak_rss_mb": rss_mb()[1],
    }


# ---- 2. the daemon --------------------------------------------------------------------------


class Daemon:
    """``chrysalis daemon`` on ``data_dir``, durable, its socket and log in a fresh /tmp dir."""

    def __init__(self, data_dir: Path, extractor: str = "rules") -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="chr-load-", dir="/tmp"))
        self.socket = self.dir / "d.sock"
        self.log = self.dir / "daemon.log"
        env = {
            **os.environ,
            "CHRYSALIS_SOCKET": str(self.socket),
            "CHRYSALIS_EMBEDDER": "deterministic",
            "CHRYSALIS_DURABLE": "true",
            "CHRYSALIS_LOG_LEVEL": "info",
            "CHRYSALIS_EXTRACTOR": extractor,
        }
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "chrysalisd", "daemon", "--data-dir", str(data_dir)],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def output(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text().splitlines()[-lines:])

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> None:
        """Until it answers a ping and its indexes have taken in every op."""
        deadline = time.monotonic() + timeout
        with Client(self.socket, timeout=30.0) as client:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"daemon exited {self.proc.returncode}:\n{self.output()}")
                try:
                    if client.ping() and index_lag(self.metrics(client)) == 0:
                        return
                except DaemonNotRunning:
                    pass
                time.sleep(0.2)
        raise TimeoutError(f"daemon not ready in {timeout:g} s:\n{self.output()}")

    def metrics(self, client: Client | None = None) -> dict[str, float]:
        """The daemon's ``/metrics`` samples, keyed by name and labels as written."""
        if client is None:
            with Client(self.socket) as client:
                return self.metrics(client)
        lines = client.metrics().splitlines()
        return {k: float(v) for k, v in (x.rsplit(" ", 1) for x in lines if x[:1] not in "#")}

    def stop(self, timeout: float = 120.0) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def index_lag(metrics: dict[str, float]) -> int:
    """Ops the daemon's indexes have still to take in (0 when caught up)."""
    return int(sum(v for k, v in metrics.items() if k.startswith("chrysalis_index_behind_ops")))


def handler_ms(before: dict[str, float], after: dict[str, float], method: str, route: str) -> float:
    """Mean time in the daemon's ASGI app (threadpool wait included) per request between two
    ``/metrics`` readings: the end-to-end latency less what the socket, HTTP and client add."""
    key = f'{{method="{method}",route="{route}"}}'
    total, count = (
        after.get(f"chrysalis_http_request_seconds_{s}{key}", 0.0)
        - before.get(f"chrysalis_http_request_seconds_{s}{key}", 0.0)
        for s in ("sum", "count")
    )
    return 1000 * total / count if count else float("nan")


# ---- 3, 4. the clients, in worker processes -------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """What one worker process runs: some of the clients of one phase."""

    socket: str
    clients: tuple[int, ...]  # global client numbers
    total_clients: int
    seconds: float
    rate: float | None  # None: closed loop
    recall_share: float
    sessions: int
    seed: int


@dataclass
class Samples:
    """One worker's record of a phase (latencies in ms)."""

    recall: list[float] = field(default_factory=list)
    remember: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=lambda: {"recall": 0, "remember": 0})
    error_messages: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    cpu_s: float = 0.0


async def client_loop(
    number: int, client: AsyncClient, plan: Plan, t0: float, samples: Samples
) -> None:
    """Closed loop: back to back until the end. Open loop: request j at t0 + j / rate."""
    rng = random.Random(plan.seed * 100_003 + number)
    end = t0 + plan.seconds
    j = number
    while True:
        if plan.rate is None:
            due = time.perf_counter()
            if due >= end:
                return
        else:
            due = t0 + j / plan.rate
            if due >= end:
                return
            j += plan.total_clients
            if (wait := due - time.perf_counter()) > 0:
                await asyncio.sleep(wait)
        kind = "recall" if rng.random() < plan.recall_share else "remember"
        try:
            if kind == "recall":
                await client.recall(query(rng), k=10)
            else:
                await client.remember(sentence(rng), session_id=f"s{rng.randrange(plan.sessions)}")
        except Exception as exc:
            samples.errors[kind] += 1
            if len(samples.error_messages) < 5:
                samples.error_messages.append(f"{kind}: {type(exc).__name__}: {exc}"[:300])
            continue
        getattr(samples, kind).append((time.perf_counter() - due) * 1000)


async def run_clients(plan: Plan, barrier: Any) -> Samples:
    clients = [AsyncClient(plan.socket, timeout=60.0) for _ in plan.clients]
    try:
        # connect every client and warm this process's imports before the clock starts
        await asyncio.gather(*(c.ping() for c in clients))
        await clients[0].recall(query(random.Random(plan.seed)), k=10)
        barrier.wait(timeout=120)
        samples = Samples()
        cpu0, t0 = own_cpu_s(), time.perf_counter()
        await asyncio.gather(
            *(
                client_loop(n, c, plan, t0, samples)
                for n, c in zip(plan.clients, clients, strict=True)
            )
        )
        samples.elapsed_s = time.perf_counter() - t0
        samples.cpu_s = own_cpu_s() - cpu0
        return samples
    finally:
        await asyncio.gather(*(c.aclose() for c in clients))


def worker_main(plan: Plan, barrier: Any, results: Any) -> None:
    results.put(asdict(asyncio.run(run_clients(plan, barrier))))


def run_phase(
    daemon: Daemon, args: argparse.Namespace, seconds: float, rate: float | None
) -> dict[str, Any]:
    """One phase across the worker processes; the merged samples and the CPU shares."""
    clients, procs = args.clients, min(args.procs, args.clients)
    ctx = mp.get_context("spawn")  # no fork: the workers start clean, without our threads
    barrier, results = ctx.Barrier(procs + 1), ctx.Queue()
    workers = []
    for w in range(procs):
        plan = Plan(
            str(daemon.socket),
            tuple(range(w, clients, procs)),
            clients,
            seconds,
            rate,
            args.recall_share,
            args.sessions,
            args.seed + (1 if rate is None else 2),
        )
        workers.append(ctx.Process(target=worker_main, args=(plan, barrier, results)))
    for p in workers:
        p.start()
    try:
        barrier.wait(timeout=120)
        metrics0 = daemon.metrics()
        cpu0, t0 = process_cpu_s(daemon.proc.pid), time.perf_counter()
        parts = [Samples(**results.get(timeout=seconds + 180)) for _ in workers]
        wall = time.perf_counter() - t0
        daemon_cpu = process_cpu_s(daemon.proc.pid) - cpu0
        metrics1 = daemon.metrics()
    finally:
        for p in workers:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
    elapsed = max(s.elapsed_s for s in parts)
    recall = sorted(x for s in parts for x in s.recall)
    remember = sorted(x for s in parts for x in s.remember)
    errors = sum(sum(s.errors.values()) for s in parts)
    out: dict[str, Any] = {
        "clients": clients,
        "procs": procs,
        "seconds": seconds,
        "offered_rate": rate,
        "elapsed_s": elapsed,
        "requests_per_s": (len(recall) + len(remember)) / elapsed,
        "recalls_per_s": len(recall) / elapsed,
        "remembers_per_s": len(remember) / elapsed,
        "recalls": len(recall),
        "remembers": len(remember),
    }
    for kind, values in (("recall", recall), ("remember", remember)):
        for pct in (50, 95, 99):
            out[f"{kind}_p{pct}_ms"] = percentile(values, pct)
        out[f"{kind}_max_ms"] = values[-1] if values else float("nan")
    out["recall_handler_ms"] = handler_ms(metrics0, metrics1, "POST", "/v1/retrieve")
    out["remember_handler_ms"] = handler_ms(metrics0, metrics1, "POST", "/v1/beads")
    out["errors"] = errors
    out["error_messages"] = [m for s in parts for m in s.error_messages][:5]
    out["daemon_cpu_pct"] = 100 * daemon_cpu / wall
    # What a request costs the daemon, whatever the machine's load does to latency: the
    # figure to compare between versions on a shared machine.
    served = len(recall) + len(remember)
    out["daemon_cpu_ms_per_request"] = 1000 * daemon_cpu / served if served else float("nan")
    out["clients_cpu_pct"] = 100 * sum(s.cpu_s for s in parts) / wall
    out["met"] = out["recall_p95_ms"] <= GOAL_P95_MS and errors == 0
    return out


# ---- report ---------------------------------------------------------------------------------

# key, label, unit, goal (<=)
ROWS: list[tuple[str, str, str, float | None]] = [
    ("requests_per_s", "throughput, all requests", "req/s", None),
    ("recalls_per_s", "  recall", "req/s", None),
    ("remembers_per_s", "  remember", "req/s", None),
    ("recall_p50_ms", "recall p50", "ms", None),
    ("recall_p95_ms", "recall p95", "ms", GOAL_P95_MS),
    ("recall_p99_ms", "recall p99", "ms", None),
    ("recall_max_ms", "recall max", "ms", None),
    ("remember_p50_ms", "remember p50", "ms", None),
    ("remember_p95_ms", "remember p95", "ms", None),
    ("remember_p99_ms", "remember p99", "ms", None),
    ("remember_max_ms", "remember max", "ms", None),
    ("recall_handler_ms", "recall, in the daemon's app, mean", "ms", None),
    ("remember_handler_ms", "remember, in the daemon's app, mean", "ms", None),
    ("errors", "errors", "", 0),
    ("daemon_cpu_pct", "daemon CPU (2 cores = 200)", "%", None),
    ("daemon_cpu_ms_per_request", "daemon CPU per request", "ms", None),
    ("clients_cpu_pct", "client processes CPU", "%", None),
    ("index_lag_after", "index lag at phase end", "ops", None),
    ("catch_up_s", "index catch-up after phase", "s", None),
]


def print_phase(title: str, phase: dict[str, Any]) -> None:
    print(f"\n{title}")
    print(f"{'figure':<36} {'value':>10} {'unit':<6} {'goal':>8}  met")
    print("-" * 68)
    for key, label, unit, goal in ROWS:
        value = phase[key]
        met = "-" if goal is None else ("yes" if value <= goal else "NO")
        goal_text = "" if goal is None else f"<= {goal:g}"
        text = f"{value:>10,}" if isinstance(value, int) else f"{value:>10,.1f}"
        print(f"{label:<36} {text} {unit:<6} {goal_text:>8}  {met}")
    print(f"goal: {GOAL}: met? {'yes' if phase['met'] else 'NO'}")
    for message in phase["error_messages"]:
        print(f"  error: {message}")


# ---- main -----------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5k beads, 8 clients, 3 s phases")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--beads", type=int, help="beads to build (default 100,000)")
    parser.add_argument("--sessions", type=int, help="sessions (default beads / 50)")
    parser.add_argument("--data-dir", type=Path, help="build here and keep it; reuse if built")
    parser.add_argument("--clients", type=int, help="concurrent clients (default 32)")
    parser.add_argument("--procs", type=int, default=4, help="client worker processes")
    parser.add_argument("--seconds", type=float, help="closed-loop phase length (default 30)")
    parser.add_argument("--rate", type=float, default=50.0, help="open-loop requests/s, total")
    parser.add_argument("--open-seconds", type=float, help="open-loop phase length (default 15)")
    parser.add_argument("--recall-share", type=float, default=0.8)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--extractor",
        default="rules",
        help="the daemon's extractor (rules, its default; none: no knowledge worker)",
    )
    args = parser.parse_args(argv)
    quick = args.quick
    args.beads = args.beads or (5_000 if quick else 100_000)
    args.sessions = args.sessions or max(1, args.beads // TURNS_PER_SESSION)
    args.clients = args.clients or (8 if quick else 32)
    args.seconds = args.seconds or (3.0 if quick else 30.0)
    args.open_seconds = args.open_seconds or (3.0 if quick else 15.0)
    return args


def prepare_data(args: argparse.Namespace, path: Path) -> dict[str, Any]:
    have = bead_count(path)
    if have >= args.beads:
        log(f"reusing {path}: {have:,} beads (>= {args.beads:,}); no build")
        return {"built": False, "beads_found": have}
    if have:
        raise SystemExit(f"{path} holds {have:,} beads, fewer than {args.beads:,}: use a new dir")
    log(f"building {args.beads:,} beads over {args.sessions:,} sessions in {path} ...")
    return {"built": True, **build(path, args.beads, args.sessions, args.seed)}


def run(args: argparse.Namespace) -> dict[str, Any]:
    tmp = None if args.data_dir else Path(tempfile.mkdtemp(prefix="chrysalis-load-", dir="/tmp"))
    data_dir = args.data_dir if tmp is None else tmp / "data"
    out: dict[str, Any] = {"beads": args.beads, "sessions": args.sessions, "goal": GOAL}
    daemon = None
    try:
        out["build"] = prepare_data(args, data_dir)
        log("starting the daemon (durable writes) ...")
        t0 = time.perf_counter()
        daemon = Daemon(data_dir, args.extractor)
        daemon.wait_ready()
        out["daemon_ready_s"] = time.perf_counter() - t0
        log(f"  daemon pid {daemon.proc.pid} ready in {out['daemon_ready_s']:.1f} s")

        for name, seconds, rate in [
            ("closed", args.seconds, None),
            ("open", args.open_seconds, args.rate),
        ]:
            log(f"{name} loop, {args.clients} clients, {seconds:g} s ...")
            phase = run_phase(daemon, args, seconds, rate)
            phase["index_lag_after"] = index_lag(daemon.metrics())
            t1 = time.perf_counter()
            daemon.wait_ready()
            phase["catch_up_s"] = time.perf_counter() - t1
            out[name] = phase
            log(
                f"  {phase['requests_per_s']:.1f} req/s, "
                f"recall p95 {phase['recall_p95_ms']:.1f} ms, errors {phase['errors']}"
            )

        log("stopping the daemon (SIGTERM) ...")
        t2 = time.perf_counter()
        out["daemon_exit_code"] = daemon.stop()
        out["daemon_stop_s"] = time.perf_counter() - t2
        if out["daemon_exit_code"] != 0:
            log(daemon.output())
    finally:
        if daemon is not None:
            daemon.close()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    env = {
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
    }
    if not args.json:
        print(f"python {env['python']}, {env['cpu_count']} CPUs, {env['platform']}")
        print(
            f"mode: {'quick' if args.quick else 'full'}, {args.beads:,} beads, "
            f"{args.clients} clients in {min(args.procs, args.clients)} processes\n",
            flush=True,
        )

    out = run(args)
    ok = out["daemon_exit_code"] == 0

    if args.json:
        print(json.dumps({"environment": env, "quick": args.quick, **out}, indent=2))
        return 0 if ok else 1

    build_info = out["build"]
    if build_info["built"]:
        print(
            f"build: {build_info['total_s']:.1f} s ({build_info['write_s']:.1f} s appending, "
            f"{build_info['index_s']:.1f} s indexing)"
        )
    else:
        print(f"build: reused a data dir holding {build_info['beads_found']:,} beads")
    print(f"daemon ready in {out['daemon_ready_s']:.1f} s")
    closed, open_ = out["closed"], out["open"]
    print_phase(
        f"closed loop: {closed['clients']} clients, no think time, "
        f"{closed['seconds']:g} s, {args.recall_share:.0%} recall",
        closed,
    )
    print_phase(
        f"open loop: {open_['offered_rate']:g} req/s offered over {open_['clients']} "
        f"clients, {open_['seconds']:g} s",
        open_,
    )
    print(
        f"\ndaemon stopped by SIGTERM in {out['daemon_stop_s']:.1f} s, "
        f"exit code {out['daemon_exit_code']} ({'ok' if ok else 'NOT 0'})"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
