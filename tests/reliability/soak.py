"""The soak harness: daemons as subprocesses syncing through one S3 bucket, a driver that writes
and syncs at random, chaos that SIGKILLs daemons and takes S3 away, the ledger of every
acknowledged write, the convergence phase and the checker.

A write is *acknowledged* when its call returned without an error: it must then be on every
replica at the end. A write whose call failed (the daemon was down, or died while answering)
is *unsure*: it may or may not have landed, and either is fine as long as every replica agrees.
"""

from __future__ import annotations

import contextlib
import json
import random
import signal
import socket
import subprocess
import threading
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from chrysalis.client import Client
from chrysalis.core.errors import ChrysalisError, DaemonNotRunning, NotFound, NotReady
from tests.daemon_process import DaemonProcess
from tests.remote_fixtures import S3Server

# Short intervals: the schedule itself pushes and pulls all the time; retries come soon.
SOAK_ENV = {
    "CHRYSALIS_PUSH_INTERVAL": "1",
    "CHRYSALIS_PULL_INTERVAL": "1",
    "CHRYSALIS_RETRY_MAX": "2",
    # Snapshots and compaction too, often: segments leave the remote while replicas die.
    "CHRYSALIS_SNAPSHOT_INTERVAL": "5",
    "CHRYSALIS_COMPACT_INTERVAL": "5",
    "CHRYSALIS_LOG_FORMAT": "json",
    "CHRYSALIS_EXTRACTOR": "rules",  # the default: knowledge ops replicate through the chaos
}
CALL_TIMEOUT = 30.0  # generous: two cores run three daemons, moto and the driver
SYNC_TIMEOUT = 90.0
READY_TIMEOUT = 90.0
NODE_POOL = 24
PREDICATES = ("knows", "uses", "likes", "owns")
TOPICS = ("harbour", "lantern", "orchard", "quartz", "meadow", "copper", "violin", "glacier")
# A failed call: the daemon is down, or died (or stalled) while answering. (httpx's own
# transport errors too: before e8e3080 a connection reset came through as one.)
GONE = (DaemonNotRunning, NotReady, httpx.TransportError)
DEFAULT = "default"  # the memory the routes without /v1/m/<name>/ serve


def unique_word(n: int) -> str:
    """A word no other bead holds (the porter stemmer leaves digits alone)."""
    return f"uq{n:06d}z"


# ---- the daemons ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Place:
    """Where one memory syncs: its remote URL and its sync key."""

    url: str
    key_file: Path


class Replica:
    """One daemon with its data dir, restartable; ``up`` is what the chaos thread last did.
    Its default memory syncs through ``home``; each of ``others`` is a ``[memories.NAME]``
    table of its config file, with a remote and key of its own."""

    def __init__(
        self, name: str, data_dir: Path, home: Place, others: dict[str, Place] | None = None
    ) -> None:
        self.name = name
        self.url = home.url
        self.key_args = ("--sync-key-file", str(home.key_file))
        config = data_dir.parent / f"{name}-config.toml"
        config.write_text(
            "".join(
                f'[memories.{m}]\nremote = "{p.url}"\nsync_key_file = "{p.key_file}"\n'
                for m, p in (others or {}).items()
            )
        )
        self.proc = DaemonProcess(data_dir, env={**SOAK_ENV, "CHRYSALIS_CONFIG": str(config)})
        self.up = False
        self.replica_id = ""
        self.starts = 0
        self._clients: dict[tuple[float, str], Client] = {}
        self._lock = threading.Lock()

    def start(self) -> None:
        self.proc.start("--remote", self.url, *self.key_args, wait=False)
        self.starts += 1
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            assert self.proc.proc is not None
            if self.proc.proc.poll() is not None:
                raise RuntimeError(
                    f"{self.name} exited {self.proc.proc.returncode} at start "
                    f"#{self.starts}:\n{tail(self.proc.output())}"
                )
            try:
                if self.call("ping", timeout=5.0):
                    break
            except GONE:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.name} not ready in {READY_TIMEOUT} s")
            time.sleep(0.05)
        self.up = True
        if not self.replica_id:
            self.replica_id = self.call("status")["replica_id"]

    def kill(self) -> int:
        self.up = False
        return self.proc.stop(signal.SIGKILL)

    def call(
        self,
        method: str,
        *args: Any,
        timeout: float = CALL_TIMEOUT,
        memory: str = DEFAULT,
        **kw: Any,
    ) -> Any:
        """One route in ``memory``, on a kept client per timeout and memory (a Client is
        thread-safe; making one costs ~30 ms, most of it an SSL context the Unix socket never
        uses)."""
        with self._lock:
            client = self._clients.get((timeout, memory))
            if client is None:
                client = Client(self.proc.socket, timeout=timeout, memory=memory)
                self._clients[timeout, memory] = client
        return getattr(client, method)(*args, **kw)

    def close(self) -> None:
        with self._lock:
            for client in self._clients.values():
                client.close()
            self._clients.clear()
        self.proc.close()

    def running(self) -> bool:
        return self.proc.proc is not None and self.proc.proc.poll() is None

    def error_lines(self) -> tuple[list[str], int]:
        """The daemon's log lines at level error (its log spans every start), and how many
        were the one known at shutdown: apscheduler logs the CancelledError of a job a SIGTERM
        caught on its thread (the thread still finishes before the memory closes)."""
        out, at_shutdown, stopping = [], 0, False
        for line in self.proc.output().splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                if "Traceback" in line:
                    out.append(line)
                continue
            msg = str(record.get("msg", ""))
            if msg.startswith("Started server process"):
                stopping = False
            elif msg == "Shutting down":
                stopping = True
            if record.get("level") not in ("error", "critical"):
                continue
            cancelled = str(record.get("exc", "")).endswith("CancelledError")
            if stopping and cancelled and record.get("logger") == "apscheduler.executors.default":
                at_shutdown += 1
                continue
            out.append(line)
        return out, at_shutdown


def tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.splitlines()[-lines:])


def start_s3(s3: S3Server) -> None:
    """Start moto again on its port; wait until the port is free to bind first (moto binds in
    a thread: a failed bind would leave its start() waiting forever)."""
    if s3.running:
        return
    deadline = time.monotonic() + 30.0
    while True:
        probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", s3.port))
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
        finally:
            probe.close()
    s3.start()


# ---- the ledger ----------------------------------------------------------------------------


@dataclass
class Written:
    content: str
    word: str
    by: str  # the daemon that acknowledged it


@dataclass
class Ledger:
    beads: dict[str, Written] = field(default_factory=dict)  # acknowledged
    unsure: set[str] = field(default_factory=set)  # remember failed: landed or not
    forgotten: set[str] = field(default_factory=set)  # acknowledged forgets
    unsure_forgets: set[str] = field(default_factory=set)
    nodes: set[str] = field(default_factory=set)
    edges: set[str] = field(default_factory=set)
    unexpected: list[str] = field(default_factory=list)  # errors no fault explains

    def alive(self) -> list[str]:
        """Acknowledged beads that must be everywhere (not forgotten, not maybe forgotten)."""
        gone = self.forgotten | self.unsure_forgets
        return [b for b in self.beads if b not in gone]


# ---- the driver ----------------------------------------------------------------------------


class Driver:
    """Random writes, reads and syncs on random daemons believed up, one call at a time.
    Several drivers may run at once (threads) on one ledger: they share ``lock``."""

    ACTIONS: dict[str, int] = {
        "remember": 40,
        "remember_many": 10,
        "forget": 8,
        "node": 6,
        "edge": 5,
        "sync": 6,
        "cli_sync": 1,
        "read": 4,
    }

    def __init__(
        self,
        replicas: list[Replica],
        ledgers: dict[str, Ledger],
        rng: random.Random,
        stats: Counter[str],
        lock: threading.Lock,
        ids: Iterator[int],
    ) -> None:
        self.replicas = replicas
        self.ledgers = ledgers  # by memory: every daemon serves each of them
        self.memory = DEFAULT  # the memory of the action under way
        self.rng = rng
        self.stats = stats
        self.lock = lock
        self.ids = ids  # shared: bead numbers are unique across drivers
        self.error: str | None = None

    @property
    def ledger(self) -> Ledger:
        return self.ledgers[self.memory]

    def call(self, r: Replica, method: str, *args: Any, **kw: Any) -> Any:
        return r.call(method, *args, memory=self.memory, **kw)

    def run(self, seconds: float, stop: threading.Event) -> None:
        try:
            self._run(seconds, stop)
        except BaseException:
            self.error = traceback.format_exc()
            stop.set()

    def _run(self, seconds: float, stop: threading.Event) -> None:
        deadline = time.monotonic() + seconds
        names, weights = list(self.ACTIONS), list(self.ACTIONS.values())
        while time.monotonic() < deadline and not stop.is_set():
            live = [r for r in self.replicas if r.up]
            if self.rng.random() < 0.05:
                live = self.replicas  # now and then, whether it is up or not
            if not live:
                time.sleep(0.05)
                continue
            r = self.rng.choice(live)
            self.memory = self.rng.choice(list(self.ledgers))
            action = self.rng.choices(names, weights)[0]
            began = time.monotonic()
            getattr(self, action)(r)
            self.count("calls")
            self.count(f"n:{action}")
            self.count(f"ms:{action}", int((time.monotonic() - began) * 1000))
            if self.rng.random() < 0.3:
                time.sleep(self.rng.uniform(0.0, 0.02))

    def count(self, what: str, n: int = 1) -> None:
        with self.lock:
            self.stats[what] += n

    def _failed(self, r: Replica, what: str, exc: BaseException) -> None:
        if isinstance(exc, GONE):
            self.count(f"failed:{type(exc).__name__}")
        else:
            with self.lock:
                self.ledger.unexpected.append(
                    f"{r.name} {self.memory} {what}: {type(exc).__name__}: {exc}"
                )

    def _bead(self) -> tuple[str, str, str]:
        n = next(self.ids)
        word = unique_word(n)
        topic = " ".join(self.rng.choices(TOPICS, k=3))
        content = f"soak note {n} {word} about {topic}"
        if self.rng.random() < 0.01:
            content += " " + "blob " * 14_000  # over the blob threshold (64 KiB)
        return f"b{n:06d}", word, content

    def remember(self, r: Replica) -> None:
        bead_id, word, content = self._bead()
        try:
            bead = self.call(
                r, "remember", content, id=bead_id, session_id=f"s{self.rng.randrange(5)}"
            )
        except (ChrysalisError, httpx.HTTPError) as exc:
            with self.lock:
                self.ledger.unsure.add(bead_id)
            self._failed(r, f"remember {bead_id}", exc)
            return
        assert bead.id == bead_id
        with self.lock:
            self.ledger.beads[bead_id] = Written(content, word, r.name)
            self.stats["beads_acked"] += 1

    def remember_many(self, r: Replica) -> None:
        batch = [self._bead() for _ in range(self.rng.randint(2, 8))]
        rows = [{"id": b, "content": c, "tags": ["batch"]} for b, _, c in batch]
        try:
            beads = self.call(r, "remember_many", rows)
        except (ChrysalisError, httpx.HTTPError) as exc:
            with self.lock:
                self.ledger.unsure.update(b for b, _, _ in batch)
            self._failed(r, f"remember_many {batch[0][0]}..", exc)
            return
        assert [b.id for b in beads] == [b for b, _, _ in batch]
        with self.lock:
            for bead_id, word, content in batch:
                self.ledger.beads[bead_id] = Written(content, word, r.name)
            self.stats["beads_acked"] += len(batch)
            self.stats["batches_acked"] += 1

    def forget(self, r: Replica) -> None:
        with self.lock:
            candidates = self.ledger.alive()
            if not candidates:
                return
            recent = self.rng.random() < 0.7
            bead_id = self.rng.choice(candidates[-200:] if recent else candidates)
            self.ledger.unsure_forgets.add(bead_id)  # until it is acknowledged
        try:
            self.call(r, "forget", bead_id)
        except NotFound:
            with self.lock:
                self.ledger.unsure_forgets.discard(bead_id)
                self.stats["forget_not_here_yet"] += 1  # not pulled to that daemon yet
            return
        except (ChrysalisError, httpx.HTTPError) as exc:
            self._failed(r, f"forget {bead_id}", exc)
            return
        with self.lock:
            self.ledger.unsure_forgets.discard(bead_id)
            self.ledger.forgotten.add(bead_id)
            self.stats["forgets_acked"] += 1

    def node(self, r: Replica) -> None:
        node_id = f"n{self.rng.randrange(NODE_POOL):02d}"
        labels = self.rng.sample(TOPICS, 2)
        try:
            self.call(r, "add_node", node_id, "thing", name=f"thing {node_id} {labels[0]}",
                   labels=labels)  # fmt: skip
        except (ChrysalisError, httpx.HTTPError) as exc:
            self._failed(r, f"add_node {node_id}", exc)
            return
        with self.lock:
            self.ledger.nodes.add(node_id)
            self.stats["nodes_acked"] += 1

    def edge(self, r: Replica) -> None:
        with self.lock:
            nodes = sorted(self.ledger.nodes)
        if len(nodes) < 2:
            return
        source, target = self.rng.sample(nodes, 2)
        try:
            edge = self.call(r, "add_edge", source, target, self.rng.choice(PREDICATES),
                          weight=round(self.rng.random(), 3))  # fmt: skip
        except NotFound:
            self.count("edge_node_not_here_yet")
            return
        except (ChrysalisError, httpx.HTTPError) as exc:
            self._failed(r, f"add_edge {source}->{target}", exc)
            return
        with self.lock:
            self.ledger.edges.add(edge.id)
            self.stats["edges_acked"] += 1

    def sync(self, r: Replica) -> None:
        push, pull = self.rng.choice([(True, True), (True, False), (False, True)])
        snapshot = self.rng.random() < 0.1
        self.count("syncs")
        try:
            result = self.call(
                r, "sync", push=push, pull=pull, snapshot=snapshot, timeout=SYNC_TIMEOUT
            )
        except (ChrysalisError, httpx.HTTPError) as exc:
            self._failed(r, "sync", exc)
            return
        self.count("syncs_ok" if result["ok"] else "syncs_not_ok")
        for verb in ("push", "pull", "snapshot"):
            step = (result.get("remote") or {}).get(verb) or {}
            if step.get("ok") is False:
                self.count(f"sync_error:{verb} {step.get('code')}")

    def cli_sync(self, r: Replica) -> None:
        self.count("syncs")
        self.count("cli_syncs")
        try:
            how = self.rng.choice([(), ("--push",), ("--pull",)])
            out = r.proc.cli("--memory", self.memory, "sync", "--json", *how)
        except subprocess.TimeoutExpired:
            self.count("failed:cli_timeout")
            return
        self.count("syncs_ok" if out.returncode == 0 else "syncs_not_ok")

    def read(self, r: Replica) -> None:
        with self.lock:
            beads = list(self.ledger.beads.values())
        try:
            if self.rng.random() < 0.5 or not beads:
                self.call(r, "status")
            else:
                word = self.rng.choice(beads).word
                self.call(r, "recall", word, k=3, strategy=self.rng.choice(["keyword", "fusion"]))
        except (ChrysalisError, httpx.HTTPError) as exc:
            self._failed(r, "read", exc)


# ---- the chaos -----------------------------------------------------------------------------


class Chaos(threading.Thread):
    """SIGKILLs daemons (restarting them after a short pause) and stops S3 for 1-5 s, at
    random, until told to stop. Leaves S3 up and every daemon running, whatever happens."""

    def __init__(
        self,
        replicas: list[Replica],
        s3: S3Server,
        rng: random.Random,
        stats: Counter[str],
        stop: threading.Event,
    ) -> None:
        super().__init__(name="soak-chaos", daemon=True)
        self.replicas = replicas
        self.s3 = s3
        self.rng = rng
        self.stats = stats
        self.stop_event = stop
        self.error: str | None = None
        self.kill_codes: Counter[int] = Counter()

    def run(self) -> None:
        try:
            while not self.stop_event.wait(self.rng.uniform(2.0, 6.0)):
                kind = self.rng.choices(
                    ["kill", "kill2", "outage", "outage+kill"], [55, 10, 25, 10]
                )[0]
                if kind == "kill":
                    self.kill_and_restart(1)
                elif kind == "kill2":
                    self.kill_and_restart(2)
                elif kind == "outage":
                    with self.outage():
                        time.sleep(self.rng.uniform(1.0, 5.0))
                else:
                    with self.outage():
                        time.sleep(self.rng.uniform(0.2, 1.5))
                        self.kill_and_restart(1)
        except BaseException:
            self.error = traceback.format_exc()
        finally:
            try:
                start_s3(self.s3)
                for r in self.replicas:
                    if not r.up:  # killed here, not restarted yet (an error came between)
                        r.start()
            except BaseException:
                self.error = (self.error or "") + traceback.format_exc()

    @contextlib.contextmanager
    def outage(self) -> Iterator[None]:
        self.s3.stop()
        self.stats["s3_outages"] += 1
        started = time.monotonic()
        try:
            yield
        finally:
            start_s3(self.s3)
            self.stats["s3_outage_ms"] += int((time.monotonic() - started) * 1000)

    def kill_and_restart(self, n: int) -> None:
        victims = self.rng.sample(self.replicas, n)
        for r in victims:
            self.kill_codes[r.kill()] += 1
            self.stats["kills"] += 1
        time.sleep(self.rng.uniform(0.1, 2.0))
        for r in victims:
            r.start()
            self.stats["restarts"] += 1


# ---- the tampering ---------------------------------------------------------------------------


class Tamper(threading.Thread):
    """Someone with write access to the bucket but no sync key: deletes, replays, swaps and
    edits objects at random until told to stop. Leaves blobs alone (content-addressed: a
    damaged one is refused by name) and never touches the objects while S3 is down."""

    ACTIONS = {
        "delete_segment": 30,
        "replay_segment": 15,  # an older segment of a replica copied over a later name
        "swap_segments": 10,
        "edit_segment": 15,  # one byte flipped
        "forge_heartbeat": 15,  # plain JSON claiming everything applied, or retirement
        "delete_heartbeat": 5,
        "delete_snapshot": 5,
        "delete_format": 5,  # once, late: it stops every sync until the repair
    }

    def __init__(
        self,
        s3: S3Server,
        bucket: str,
        prefix: str,
        rng: random.Random,
        stats: Counter[str],
        stop: threading.Event,
    ) -> None:
        super().__init__(name="soak-tamper", daemon=True)
        self.s3, self.bucket, self.prefix = s3, bucket, prefix.rstrip("/") + "/"
        self.rng = rng
        self.stats = stats
        self.stop_event = stop
        self.error: str | None = None

    def run(self) -> None:
        try:
            while not self.stop_event.wait(self.rng.uniform(1.0, 3.0)):
                if not self.s3.running:
                    continue
                kind = self.rng.choices(list(self.ACTIONS), list(self.ACTIONS.values()))[0]
                with contextlib.suppress(Exception):  # S3 may go down under us: try again
                    if getattr(self, kind)():
                        self.stats[kind] += 1
        except BaseException:
            self.error = traceback.format_exc()

    def _keys(self, folder: str) -> list[str]:
        pages = self.s3.client().get_paginator("list_objects_v2")
        out = []
        for page in pages.paginate(Bucket=self.bucket, Prefix=self.prefix + folder):
            out += [o["Key"] for o in page.get("Contents", ())]
        return sorted(out)

    def _segments(self) -> dict[str, list[str]]:
        runs: dict[str, list[str]] = {}
        for key in self._keys("ops/"):
            runs.setdefault(key.split("/")[-2], []).append(key)
        return runs

    def _read(self, key: str) -> bytes:
        body: bytes = self.s3.client().get_object(Bucket=self.bucket, Key=key)["Body"].read()
        return body

    def _write(self, key: str, data: bytes) -> None:
        self.s3.client().put_object(Bucket=self.bucket, Key=key, Body=data)

    def _remove(self, key: str) -> None:
        self.s3.client().delete_object(Bucket=self.bucket, Key=key)

    def delete_segment(self) -> bool:
        keys = [k for run in self._segments().values() for k in run]
        if not keys:
            return False
        self._remove(self.rng.choice(keys))
        return True

    def replay_segment(self) -> bool:
        runs = [run for run in self._segments().values() if len(run) >= 2]
        if not runs:
            return False
        run = self.rng.choice(runs)
        old, later = sorted(self.rng.sample(run, 2))
        self._write(later, self._read(old))
        return True

    def swap_segments(self) -> bool:
        runs = [run for run in self._segments().values() if len(run) >= 2]
        if not runs:
            return False
        a, b = self.rng.sample(self.rng.choice(runs), 2)
        da, db = self._read(a), self._read(b)
        self._write(a, db)
        self._write(b, da)
        return True

    def edit_segment(self) -> bool:
        keys = [k for run in self._segments().values() for k in run]
        if not keys:
            return False
        key = self.rng.choice(keys)
        data = bytearray(self._read(key))
        at = self.rng.randrange(len(data))
        data[at] ^= 0xFF
        self._write(key, bytes(data))
        return True

    def forge_heartbeat(self) -> bool:
        keys = self._keys("replicas/")
        if not keys:
            return False
        key = self.rng.choice(keys)
        victim = key.rsplit("/", 1)[-1].removesuffix(".json")
        runs = self._segments()
        claim = {r: 10**9 for r in runs}
        forged = {"replica": victim, "host": "mallory", "generation": 1, "vv": claim,
                  "pushed": 10**9, "at": time.time()}  # fmt: skip
        if self.rng.random() < 0.5:
            forged["decommissioned"] = True
        self._write(key, json.dumps(forged).encode())
        return True

    def delete_heartbeat(self) -> bool:
        keys = self._keys("replicas/")
        if keys:
            self._remove(self.rng.choice(keys))
        return bool(keys)

    def delete_snapshot(self) -> bool:
        keys = self._keys("snapshots/")
        if keys:
            self._remove(self.rng.choice(keys))
        return bool(keys)

    def delete_format(self) -> bool:
        if self.stats["delete_format"] or sum(self.stats.values()) < 20:
            return False
        keys = [k for k in self._keys("format.json") if k.endswith("format.json")]
        if keys:
            self._remove(keys[0])
        return bool(keys)


# ---- convergence ---------------------------------------------------------------------------


def wait_indexed(r: Replica, deadline: float, memory: str = DEFAULT) -> dict[str, Any]:
    while True:
        status: dict[str, Any] = r.call("status", memory=memory)
        if not any(status["index"]["behind"].values()):
            return status
        if time.monotonic() > deadline:
            return status
        time.sleep(0.1)


def settled(statuses: list[dict[str, Any]]) -> bool:
    return (
        len({s["state_digest"] for s in statuses}) == 1
        and all(not any(s["index"]["behind"].values()) for s in statuses)
        and all(s["counts"]["pending_ops"] == 0 for s in statuses)
        and all(s["sync"]["remote"]["pending_ops"] == 0 for s in statuses)
        # a segment the tamperer damaged is reported until a pull sees that every op it held
        # arrived another way (pull.py, _forget_settled_rejections): one more round settles
        # it; one that stays means ops are missing, and convergence fails naming it
        and all(not s["sync"]["remote"]["rejected"] for s in statuses)
    )


def converge(
    replicas: list[Replica], bound: float, memory: str = DEFAULT
) -> tuple[float, int, list[dict[str, Any]]]:
    """Sync rounds of ``memory`` on every daemon (indexes caught up first: vectors are ops
    too) until the digests are equal, and equal again after one more round. Returns (seconds,
    rounds, the last statuses); AssertionError with every replica's state when ``bound`` runs
    out."""
    started = time.monotonic()
    deadline = started + bound
    previous: str | None = None
    rounds = 0
    while True:
        rounds += 1
        for r in replicas:
            wait_indexed(r, deadline, memory)
        results = [r.call("sync", timeout=SYNC_TIMEOUT, memory=memory) for r in replicas]
        statuses = [wait_indexed(r, deadline, memory) for r in replicas]
        if settled(statuses) and all(res["ok"] for res in results):
            digest = statuses[0]["state_digest"]
            if digest == previous:
                return time.monotonic() - started, rounds, statuses
            previous = digest
        else:
            previous = None
        # (Settled once: the round that confirms it runs even past the bound.)
        if time.monotonic() > deadline and previous is None:
            raise AssertionError(
                f"{memory}: no convergence in {bound:.0f} s ({rounds} rounds)\n"
                + describe(replicas, statuses, memory)
                + "\nlast sync results:\n"
                + "\n".join(json.dumps(res, default=str)[:2000] for res in results)
                + "\nunsettled: "  # last: a CI log cut in the middle keeps its tail
                + unsettled(replicas, statuses, results)
            )


def unsettled(
    replicas: list[Replica], statuses: list[dict[str, Any]], results: list[dict[str, Any]]
) -> str:
    """On one line, what `settled` found wrong, per replica."""
    digests = {r.name: s["state_digest"][:8] for r, s in zip(replicas, statuses, strict=True)}
    why = [] if len(set(digests.values())) == 1 else [f"digests {digests}"]
    for r, s, res in zip(replicas, statuses, results, strict=True):
        remote = s["sync"]["remote"]
        wrong = {
            "behind": {k: v for k, v in s["index"]["behind"].items() if v},
            "pending_ops": s["counts"]["pending_ops"],
            "unpushed": remote["pending_ops"],
            "rejected": [x.get("key") if isinstance(x, dict) else x for x in remote["rejected"]],
            "sync_failed": not res["ok"],
            "vv": s["version_vector"] if len(set(digests.values())) > 1 else None,
        }
        wrong = {k: v for k, v in wrong.items() if v}
        if wrong:
            why.append(f"{r.name}: {wrong}")
    return "; ".join(why) or "nothing (the bound ran out between two equal rounds)"


def describe(replicas: list[Replica], statuses: list[dict[str, Any]], memory: str) -> str:
    """Every replica's state, and which beads each one lacks that another has."""
    lines = []
    for r, s in zip(replicas, statuses, strict=True):
        remote = s["sync"]["remote"]
        lines.append(
            f"{r.name} ({s['replica_id']}): digest {s['state_digest'][:16]} counts {s['counts']} "
            f"behind {s['index']['behind']} vv {s['version_vector']}\n"
            f"    remote: pending {remote['pending_ops']} pushed {remote['pushed']} "
            f"errors {remote['consecutive_errors']} last_error {remote['last_error']!r} "
            f"stopped {remote['stopped']!r} rejected {remote['rejected']} gaps {remote['gaps']}"
        )
    try:
        beads = {r.name: {b["id"] for b in export(r, memory)["bead"]} for r in replicas}
    except Exception as exc:
        lines.append(f"(export failed: {exc})")
        return "\n".join(lines)
    union: set[str] = set().union(*beads.values())
    for name, have in beads.items():
        missing = sorted(union - have)
        if missing:
            lines.append(f"{name} lacks {len(missing)} beads: {missing[:20]}")
    return "\n".join(lines)


# ---- the checker ---------------------------------------------------------------------------


def export(r: Replica, memory: str = DEFAULT) -> dict[str, list[dict[str, Any]]]:
    """The export route's items by kind (a list: duplicates would show)."""
    out: dict[str, list[dict[str, Any]]] = {"bead": [], "node": [], "edge": [], "skill": []}
    for line in r.call("export", timeout=120.0, memory=memory).splitlines():
        obj = json.loads(line)
        if obj["kind"] != "header":
            out.setdefault(obj["kind"], []).append(obj["item"])
    return out


def check(
    replicas: list[Replica],
    ledger: Ledger,
    statuses: list[dict[str, Any]],
    rng: random.Random,
    report: dict[str, Any],
    memory: str = DEFAULT,
) -> list[str]:
    """Every invariant the soak promises, in ``memory``; the list of what does not hold
    (empty: all hold)."""
    problems: list[str] = []

    def need(ok: bool, what: str) -> None:
        if not ok:
            problems.append(f"{memory}: {what}")

    need(len({s["state_digest"] for s in statuses}) == 1, "state digests differ")
    vvs = [s["version_vector"] for s in statuses]
    need(all(v == vvs[0] for v in vvs), f"version vectors differ: {vvs}")
    for r, s in zip(replicas, statuses, strict=True):
        remote = s["sync"]["remote"]
        need(remote["rejected"] == [], f"{r.name}: rejected objects {remote['rejected']}")
        need(remote["stopped"] is None, f"{r.name}: push stopped: {remote['stopped']}")
        need(remote["gaps"] == {}, f"{r.name}: gaps {remote['gaps']}")
        need(remote["pending_ops"] == 0, f"{r.name}: {remote['pending_ops']} ops not pushed")
        need(s["counts"]["pending_ops"] == 0, f"{r.name}: {s['counts']['pending_ops']} pending")
        need(not any(s["index"]["behind"].values()), f"{r.name}: behind {s['index']['behind']}")
        ops = sum(s["version_vector"].values())
        need(s["counts"]["ops"] == ops, f"{r.name}: {s['counts']['ops']} ops logged, vv {ops}")

    alive = set(ledger.alive())
    exports = {r.name: export(r, memory) for r in replicas}
    present: dict[str, set[str]] = {}
    for r, s in zip(replicas, statuses, strict=True):
        items = exports[r.name]
        ids = [b["id"] for b in items["bead"]]
        have = set(ids)
        present[r.name] = have
        dupes = [b for b, n in Counter(ids).items() if n > 1]
        need(not dupes, f"{r.name}: beads exported more than once: {dupes[:20]}")
        lost = sorted(alive - have)
        need(not lost, f"{r.name}: LOST {len(lost)} acknowledged beads: {lost[:20]}")
        back = sorted(ledger.forgotten & have)
        need(not back, f"{r.name}: {len(back)} forgotten beads still there: {back[:20]}")
        phantom = sorted(have - set(ledger.beads) - ledger.unsure)
        need(not phantom, f"{r.name}: beads nobody wrote: {phantom[:20]}")
        need(
            s["counts"]["beads"] == len(have),
            f"{r.name}: status counts {s['counts']['beads']} beads, export lists {len(have)}",
        )
        changed = [
            b["id"]
            for b in items["bead"]
            if b["id"] in ledger.beads and b["content"] != ledger.beads[b["id"]].content
        ]
        need(not changed, f"{r.name}: beads with other content: {changed[:20]}")
        nodes = {n["id"] for n in items["node"]}
        need(ledger.nodes <= nodes, f"{r.name}: lacks nodes {sorted(ledger.nodes - nodes)}")
        edges = {e["id"] for e in items["edge"]}
        need(ledger.edges <= edges, f"{r.name}: lacks edges {sorted(ledger.edges - edges)[:20]}")
    sets = list(present.values())
    need(all(p == sets[0] for p in sets), "replicas hold different beads")

    landed = sets[0] - alive
    report["beads_present"] = len(sets[0])
    report["beads_expected"] = f"{len(alive)} acked alive + {len(landed)} unsure that landed"
    need(
        all(s["counts"]["beads"] == len(alive) + len(landed) for s in statuses),
        "counts.beads is not acknowledged - forgotten + unsure that landed",
    )
    need(landed <= ledger.unsure | ledger.unsure_forgets, "beads present beyond the ledger")

    # Reads through the routes, on a sample (every bead when there are few).
    sample = sorted(alive) if len(alive) <= 150 else rng.sample(sorted(alive), 150)
    gone = sorted(ledger.forgotten)
    gone_sample = gone if len(gone) <= 50 else rng.sample(gone, 50)
    words = rng.sample(sample, min(25, len(sample)))
    for r in replicas:
        for bead_id in sample:
            try:
                content = r.call("get_bead", bead_id, memory=memory).content
            except NotFound:
                problems.append(f"{memory}: {r.name}: get_bead({bead_id}) not found")
                continue
            need(content == ledger.beads[bead_id].content, f"{r.name}: {bead_id} content differs")
        for bead_id in gone_sample:
            try:
                r.call("get_bead", bead_id, memory=memory)
                problems.append(f"{memory}: {r.name}: forgotten {bead_id} still readable")
            except NotFound:
                pass
        for bead_id in words:
            word = ledger.beads[bead_id].word
            items = r.call("recall", word, k=3, strategy="keyword", memory=memory).items
            need(
                bool(items) and items[0].id == bead_id,
                f"{r.name}: keyword recall of {ledger.beads[bead_id].word} gave "
                f"{[i.id for i in items]}, not {bead_id}",
            )
        for bead_id in gone_sample[:10]:
            word = ledger.beads[bead_id].word
            items = r.call("recall", word, k=3, strategy="keyword", memory=memory).items
            need(all(i.id != bead_id for i in items), f"{r.name}: recall finds forgotten {bead_id}")
    report["checked_reads"] = len(sample) + len(gone_sample)
    report["checked_recalls"] = len(words)
    return problems


def remote_summary(s3: S3Server, bucket: str) -> dict[str, int]:
    """What the bucket holds: segments, snapshots, blobs, and how many ops compaction removed
    (the ops before each replica's first remaining segment)."""
    out: Counter[str] = Counter()
    firsts: dict[str, int] = {}
    pages = s3.client().get_paginator("list_objects_v2").paginate(Bucket=bucket)
    for page in pages:
        for obj in page.get("Contents", ()):
            parts = obj["Key"].split("/")
            out[parts[1]] += 1
            if parts[1] == "ops" and len(parts) == 4:
                first = int(parts[3].removesuffix(".seg"), 16)
                firsts[parts[2]] = min(firsts.get(parts[2], first), first)
    out["compacted_ops"] = sum(first - 1 for first in firsts.values())
    return dict(out)
