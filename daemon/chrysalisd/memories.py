"""Named memories: one daemon, one socket, one pool of workers, several memories (DESIGN §15).

``default`` is the data dir itself, as it was before there were several; a named memory is a
data dir of its own under ``<data_dir>/memories/<name>`` (its LMDB environment, op log,
indexes, replica id) with its own remote, sync key, schedule and Zep settings
(`config.settings_for`: where a memory syncs is never inherited from the daemon's settings).

A memory comes from a ``[memories.NAME]`` table of the TOML file, or is created at run time
(`Memories.create`, ``POST /v1/memories``): its section is then kept in the memory's
``memory.json`` (0600), so it is there again after a restart; a table in the file wins.
Routes address one as ``/v1/m/<name>/...`` (`route_memory` rewrites the path before routing);
the routes without the prefix mean ``default``, so nothing that worked before changes.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import threading
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from pathlib import Path
from typing import Any

from chrysalis.core.errors import (
    ChrysalisError,
    Conflict,
    InvalidInput,
    MemoryDropped,
    NotFound,
    Unavailable,
)
from chrysalis.core.models import RetrievalResult, RetrievedItem
from chrysalis.search import Retriever

from .config import DEFAULT_MEMORY, Settings, check_memory_name, memory_dir, settings_for
from .jobs import JobGroup, Jobs
from .state import Daemon, Figures, Metrics

log = logging.getLogger("chrysalisd")

SECTION_FILE = "memory.json"
PREFIX = "/v1/m/"
DROP_WAIT = 30.0  # seconds a drop waits for the requests still in the memory
MIRROR_RETRY = (1.0, 60.0)  # first and longest wait between tries to take an erased copy out of Zep
# What of a data dir is the memory's (the store, its blobs, its indexes): erased from the
# default's data dir, which also holds the other memories (and maybe the user's own files).
MEMORY_PARTS = ("lmdb", "blobs", "index")
_ROUTED = re.compile(r"^/v1/m/([^/]+)(/.*)?$")

# Opens the memory a name and its settings describe (server.open_memory); the registry
# closes what it returns.
Opener = Callable[[str, Settings, JobGroup, Metrics], Daemon]


def route_memory(scope: MutableMapping[str, Any]) -> None:
    """``/v1/m/<name>/rest`` becomes ``/v1/rest`` with the name in ``scope["state"]``; any
    other path is left as it is (it means default)."""
    found = _ROUTED.fullmatch(scope["path"])
    if found is None:
        return
    name, rest = found.group(1), found.group(2) or ""
    scope.setdefault("state", {})["memory"] = name
    scope["path"] = "/v1" + rest
    scope["raw_path"] = scope["path"].encode()


class Memories:
    """The daemon's memories by name, default first. Thread-safe."""

    def __init__(self, settings: Settings, opener: Opener, jobs: Jobs) -> None:
        self.settings = settings
        self.jobs = jobs
        self.metrics = Metrics()
        self._open = opener
        self._hosts: dict[str, Daemon] = {}
        self._lock = threading.RLock()
        self._closed = False  # the daemon is stopping: an erased memory is not opened again
        self._stopping = threading.Event()  # the same, for an erase waiting on its mirror
        self.metrics.registry.register(Figures(self.in_use))

    @classmethod
    def single(cls, daemon: Daemon) -> Memories:
        """A registry holding one memory as default (tests, the OpenAPI document)."""

        def refuse(*_: Any) -> Daemon:
            raise Conflict("this daemon serves one memory")

        jobs = daemon.jobs.all
        memories = cls(daemon.settings, refuse, jobs)
        memories.metrics = daemon.metrics
        memories._hosts[daemon.name] = daemon
        return memories

    def __iter__(self) -> Iterator[Daemon]:
        with self._lock:
            return iter(list(self._hosts.values()))

    @property
    def default(self) -> Daemon:
        return self.get(DEFAULT_MEMORY)

    def names(self) -> list[str]:
        with self._lock:
            return list(self._hosts)

    def get(self, name: str) -> Daemon:
        with self._lock:
            host = self._hosts.get(name)
        if host is None:
            raise NotFound(f"no memory {name!r}; `chrysalis memory ls` lists them")
        return host

    def acquire(self, name: str) -> Daemon:
        """Memory ``name``, in use until its `Daemon.done` (a drop waits for that): a request
        holds its memory from its first byte to its last. `NotFound` if there is none."""
        with self._lock:
            host = self.get(name)
            host.use()
        return host

    @contextlib.contextmanager
    def in_use(self, names: list[str] | None = None) -> Iterator[list[Daemon]]:
        """The memories ``names`` (all of them by default), held in use meanwhile."""
        with contextlib.ExitStack() as stack:
            hosts = []
            for name in dict.fromkeys(self.names() if names is None else names):
                try:
                    host = self.acquire(name)
                except NotFound:
                    if names is None:  # dropped since it was listed
                        continue
                    raise
                stack.callback(host.done)
                hosts.append(host)
            yield hosts

    def open_all(self) -> None:
        """Open default, then each memory of the file's tables and of the data dir;
        `InvalidInput` (nothing opened) when two would meet in Zep (`check_zep_users`)."""
        every = {DEFAULT_MEMORY: self.settings}
        for name, section in sorted(self._sections().items()):
            every[name] = settings_for(self.settings, name, section)
        check_zep_users(every)
        for name, settings in every.items():
            self._add(name, settings)

    def _sections(self) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = {}
        root = self.settings.data_dir.expanduser() / "memories"
        if root.is_dir():
            for path in sorted(root.iterdir()):
                if (path / SECTION_FILE).is_file():
                    found[path.name] = _read_section(path / SECTION_FILE)
        for name, section in self.settings.memories.items():
            found[name] = {**found.get(name, {}), **section}
        found.pop(DEFAULT_MEMORY, None)
        return found

    def _add(self, name: str, settings: Settings) -> Daemon:
        group = JobGroup(self.jobs, name, name == DEFAULT_MEMORY)
        host = self._open(name, settings, group, self.metrics)
        host.when_dropped = self.erase_dropped
        if host.mirror is not None:
            host.mirror.foreign = lambda: self._replicas(but=name)
        with self._lock:
            self._hosts[name] = host
        return host

    def _replicas(self, but: str) -> set[str]:
        """The replica ids of every memory but ``but``: each one's own and those it heard
        of (its other laptops)."""
        found: set[str] = set()
        for host in self:
            if host.name != but:
                found |= {host.memory.replica_id, *host.memory.version_vector()}
        return found

    def create(self, name: str, section: Mapping[str, Any]) -> Daemon:
        """A new memory ``name`` with ``section``'s settings, kept in its data dir.
        `Conflict` when it exists; `InvalidInput` (nothing made) when a setting is bad."""
        check_memory_name(name)
        if "zep_api_key" in section:  # memory.json is no place for a secret
            raise InvalidInput("give a memory's Zep key as zep_api_key_file, not zep_api_key")
        with self._lock:
            if name in self._hosts:
                raise Conflict(f"memory {name!r} exists; `chrysalis memory ls` lists them")
            settings = settings_for(self.settings, name, section)
            others = {n: h.settings for n, h in self._hosts.items()}
            check_zep_users({**others, name: settings}, Conflict)
            directory = memory_dir(self.settings.data_dir.expanduser(), name)
            if directory.exists():
                raise Conflict(f"{directory} exists; remove it or choose another name")
            directory.mkdir(mode=0o700, parents=True)
            try:
                _write_section(directory / SECTION_FILE, section)
                return self._add(name, settings)
            except BaseException:
                shutil.rmtree(directory, ignore_errors=True)
                raise

    def drop(self, name: str) -> dict[str, Any]:
        """Erase memory ``name`` everywhere: its remote first (a drop marker the other laptops
        read at their next sync, then every other object under the remote's prefix:
        `chrysalis.sync.drop`), then here (closed, its data dir deleted). Every item kind
        goes with it (beads, facts, nodes, persona, skills, vectors, derived items, the op
        history), and its Zep mirror takes out of Zep every session this laptop sent to
        (`Mirror.erase_all`; each other laptop does the same when it erases its copy). What
        was done, place by place (``zep``: gone, marked or kept, and why).

        `Unavailable` (nothing dropped, the memory serves on) when the remote cannot be
        opened or the marker cannot be written: dropping here alone would let the others
        push it all back into a memory made again under the same name and remote. The same
        when its Zep mirror does not answer: once the data dir is gone nothing here would
        know which sessions hold the memory's text. Zep is asked first, so it fails only if
        it stops answering in the moment between (the receipt then says ``pending``)."""
        check_memory_name(name)
        if name == DEFAULT_MEMORY:
            raise InvalidInput("the default memory cannot be dropped; forget its beads instead")
        with self._lock:
            host = self.get(name)
            if name in self.settings.memories:
                raise Conflict(
                    f"memory {name!r} is a [memories.{name}] table of the config file: "
                    "remove it there first"
                )
            del self._hosts[name]  # from here on, a request to it answers 404
        if not host.wait_unused(DROP_WAIT):
            with self._lock:
                self._hosts[name] = host
            raise Conflict(
                f"memory {name!r} still has requests running after {DROP_WAIT:g} s; nothing "
                "was dropped: try again"
            )
        host.jobs.remove_all(wait=True)
        receipt: dict[str, Any] = {"memory": name, "erased": host.counts()}
        receipt["remote"] = receipt["replicas"] = receipt["zep"] = None
        if host.mirror is not None:
            try:
                host.mirror.probe()
            except ChrysalisError as exc:
                close(host)
                self._add(name, host.settings)  # as it was: its jobs run again
                raise Unavailable(
                    f"memory {name!r} was not dropped: its Zep mirror {host.settings.zep_url} "
                    f"does not answer now ({exc.message}), and a drop takes the memory out "
                    "of Zep too; nothing changed, try again when Zep answers"
                ) from None
        peers: list[str] = []
        if host.sync is not None:
            try:
                receipt["remote"], receipt["replicas"], peers = _drop_remote(host)
            except ChrysalisError as exc:
                close(host)
                self._add(name, host.settings)  # as it was: its jobs run again
                raise Unavailable(
                    f"memory {name!r} was not dropped: its remote {host.settings.remote} "
                    f"cannot take the drop now ({exc.message}); nothing changed, try again"
                ) from None
        if host.mirror is not None:
            receipt["zep"] = _drop_mirror(host, peers)
        directory = host.memory.path
        close(host)
        shutil.rmtree(directory)
        receipt["data_dir"] = {"path": str(directory), "removed": not directory.exists()}
        log.info("memory %s dropped: %s", name, receipt["erased"])
        return receipt

    def erase_dropped(self, host: Daemon) -> None:
        """Erase this laptop's copy of a memory another laptop dropped (its sync found the
        drop marker and stopped: nothing was pushed back). A memory made at run time goes
        (like a drop, without the remote); default and a ``[memories.NAME]`` table of the
        config file are opened again empty (the config still names them). Its Zep mirror
        first takes out of Zep what this laptop sent there; while Zep does not answer the
        data dir stays (closed, requests answer 404) and it tries again, and if the daemon
        stops meanwhile, its next start reads the drop marker again and finishes."""
        name = host.name
        with self._lock:
            if self._hosts.get(name) is not host:
                return  # dropped or erased already
            del self._hosts[name]  # requests answer 404 meanwhile
        while not host.wait_unused(DROP_WAIT):
            log.warning("memory %s: waiting for its requests to end to erase it", name)
        host.jobs.remove_all(wait=True)
        directory = host.memory.path
        erased = host.counts()
        if host.mirror is not None and not self._erase_mirror(host):
            close(host)  # the daemon is stopping: the next start finishes the erase
            return
        close(host)
        if name == DEFAULT_MEMORY:  # the data dir itself: only the memory's own parts
            for part in MEMORY_PARTS:
                shutil.rmtree(directory / part, ignore_errors=True)
        else:
            shutil.rmtree(directory, ignore_errors=True)
        log.warning("memory %s erased here (dropped on another laptop): %s", name, erased)
        if (name == DEFAULT_MEMORY or name in self.settings.memories) and not self._closed:
            try:
                self._add(name, host.settings)
            except Exception:  # this thread's end: say it in the log, the daemon serves on
                log.exception("memory %s: cannot open it again, empty, after its erase", name)

    def _erase_mirror(self, host: Daemon) -> bool:
        """Take a dropped memory out of its mirror, trying again until it answers; False
        if the daemon stops first."""
        assert host.mirror is not None
        ours = set(host.memory.version_vector())
        wait, longest = MIRROR_RETRY
        while True:
            try:
                place = host.mirror.erase_all(ours)
            except ChrysalisError as exc:
                log.warning(
                    "memory %s: cannot take it out of Zep %s now (%s); its copy here is erased "
                    "once it can, trying again in %g s", host.name, host.settings.zep_url,
                    exc.message, wait,
                )  # fmt: skip
            else:
                log.warning("memory %s: taken out of zep %s: %s", host.name, place["url"],
                            place["why"])  # fmt: skip
                return True
            if self._stopping.wait(wait):
                return False
            wait = min(wait * 2, longest)

    def retrieve_across(
        self, names: list[str], query: str, *, k: int, token_budget: int | None, **ask: Any
    ) -> RetrievalResult:
        """One ranking over memories ``names``: each one's best ``k`` by score, fitted to
        ``k`` and the budget together; each item's provenance names its memory. Scores
        are comparable: each memory's signals are on the same [0, 1] scales."""
        items: list[RetrievedItem] = []
        notes: list[str] = []
        strategy = ask.get("strategy", "fusion")
        with self.in_use(names) as hosts:
            for host in hosts:
                result = host.retrieve(query, k=k, token_budget=token_budget, **ask)
                for item in result.items:
                    item.provenance["memory"] = host.name
                    items.append(item)
                notes += [f"{host.name}: {note}" for note in result.notes]
        items.sort(key=lambda i: -i.score)
        return Retriever.fit(query, strategy, items, k, token_budget, notes)

    def describe(self, name: str) -> dict[str, Any]:
        host = self.get(name)
        s = host.settings
        return {
            "name": name,
            "data_dir": str(host.memory.path),
            "replica_id": host.memory.replica_id,
            "remote": s.remote,
            "encrypted": s.sync_key_file is not None,
            "zep": s.zep_url,
            "beads": host.counts()["beads"],
            "from_config": name in self.settings.memories,
        }

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._stopping.set()
            hosts, self._hosts = list(self._hosts.values()), {}
        for host in reversed(hosts):
            close(host)


def check_zep_users(
    memories: Mapping[str, Settings], error: type[ChrysalisError] = InvalidInput
) -> None:
    """Refuse (``error``, naming both memories) two memories that mirror to Zep and would
    meet there: one ``zep_user_id`` (Zep serves a user's messages and the facts it derived
    to whoever asks as that user, so each memory's recall would show the other's text), or,
    with the zep-python flavour, users whose session ids can be the same (``<user>-<session>``:
    users ``a`` and ``a-b`` both name a session ``a-b-x``). Compared whatever their
    ``zep_url``: one server has many names (localhost, 127.0.0.1, a proxy), and nothing is lost
    by two users' ids differing."""
    mirrored = [(name, s) for name, s in memories.items() if s.zep_url]
    for i, (a, sa) in enumerate(mirrored):
        for b, sb in mirrored[i + 1 :]:
            ua, ub = sa.zep_user_id, sb.zep_user_id
            if ua == ub:
                raise error(
                    f"memories {a} and {b} would both be Zep user {ua!r} (zep_user_id): Zep "
                    "would give each one's text and facts to the other; give each memory its "
                    "own zep_user_id (unset, default's is chrysalis and a named memory's "
                    "NAME@chrysalis)"
                )
            short, long = sorted((ua, ub), key=len)
            if sa.zep_flavour == sb.zep_flavour == "zep-python" and long.startswith(short + "-"):
                raise error(
                    f"memories {a} and {b} would be Zep users {ua!r} and {ub!r}: Zep session "
                    f"ids are USER-SESSION, so a session of {short!r} can have the id of one "
                    f"of {long!r}'s and mix their text; choose a zep_user_id that does not "
                    f"start with {short + '-'!r}"
                )


def _drop_remote(host: Daemon) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """Drop a memory in its remote (`Sync.drop`): what was done there, the other laptops,
    each ``pending`` until its next sync, which erases its copy, and every replica id the
    remote knew. Raises when the remote cannot take the drop (nothing written)."""
    sync = host.sync
    assert sync is not None
    try:
        done = sync.drop()
    except MemoryDropped as exc:  # another laptop dropped it first: the remote is done
        return {"url": sync.remote.url, "ok": True, "already": exc.message}, [], []
    peers = done.pop("peers")
    me = host.memory.replica_id
    replicas = [
        {
            "replica": r,
            "state": "pending",
            "why": f"erases its copy at its next sync with {sync.remote.url} (it reads the "
            "drop marker there and pushes nothing back)",
        }
        for r, hb in sorted(peers.items())
        if r != me and not hb.get("decommissioned")
    ]
    return done, replicas, sorted(peers)


def _drop_mirror(host: Daemon, peers: list[str]) -> dict[str, Any]:
    """Take a dropped memory out of its mirror (`Mirror.erase_all`), for the receipt. It
    answered the probe a moment ago; if it fails now the receipt says ``pending``, naming
    what stays, since nothing here remembers it once the data dir is gone."""
    assert host.mirror is not None
    try:
        return host.mirror.erase_all({*host.memory.version_vector(), *peers})
    except ChrysalisError as exc:
        sessions = ", ".join(["default", *host.memory.sessions()])
        return {
            "kind": host.mirror.kind,
            "url": host.settings.zep_url,
            "user_id": host.settings.zep_user_id,
            "state": "pending",
            "why": f"Zep stopped answering during the drop ({exc.message}): the sessions of "
            f"Zep user {host.settings.zep_user_id} for this memory's sessions ({sessions}) "
            "may still hold its text; delete them in Zep",
            "sessions": [],
            "kept": [],
        }


def close(host: Daemon) -> None:
    host.replica.close()  # its remote, its mirror, then its memory


def _read_section(path: Path) -> dict[str, Any]:
    try:
        section = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"cannot read {path}: {exc}") from None
    if not isinstance(section, dict):
        raise InvalidInput(f"{path}: not a JSON object of settings")
    return section


def _write_section(path: Path, section: Mapping[str, Any]) -> None:
    data = json.dumps(dict(section), indent=2, default=str).encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
