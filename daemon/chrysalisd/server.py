"""Running the daemon: the socket, its safety, and the lifecycle (its log: `logs`).

- The socket is bound here, not by uvicorn (which chmods sockets it creates to 0666): under a
  0o177 umask, then chmod 0600, so no other user can connect even for an instant.
- Its directory is made 0700 when we create it (the default one is kept 0700); a directory
  that is a symlink or that another user owns is refused, as is a socket path that is a
  symlink or another user's (``/tmp/chrysalis-$UID`` could be planted on a shared host).
  The directory is checked and chmodded through a descriptor opened with O_NOFOLLOW, so what
  is checked is what is changed.
- Each connection's peer uid is read (SO_PEERCRED / LOCAL_PEERCRED, where the OS has it) and
  another user's connection gets a 403 and is closed.
- A socket file that exists is replaced only when nothing answers on it.
- SIGTERM / SIGINT: stop accepting, let in-flight requests finish (``shutdown_timeout``),
  stop the jobs, close the memory (indexes saved, LMDB synced), remove the socket, exit 0.
- A start that fails: one ``error:`` line, exit 2 for a malformed setting, 1 otherwise
  (`main`); the data dir and socket directory are removed if this start made them.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import os
import resource
import shutil
import signal
import socket
import stat
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import uvicorn
from fastapi import FastAPI
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from chrysalis import Memory, Replica
from chrysalis.client import default_socket_path
from chrysalis.client.local_socket import check_socket_owner, peer_uid, who
from chrysalis.core.errors import ChrysalisError, Conflict, Forbidden, InvalidInput
from chrysalis.extract.worker import Budget
from chrysalis.mirrors import Mirror

from .app import create_app
from .config import Settings, check_data_dir, unknown_variables, zep_api_key
from .jobs import JobGroup, Jobs
from .logs import JsonFormatter as JsonFormatter  # re-exported: it lived here
from .logs import configure_logging
from .memories import Memories, close
from .state import Daemon, Metrics

log = logging.getLogger("chrysalisd")
MAX_SOCKET_PATH = 107  # sun_path is 108 bytes on Linux (104 on macOS), NUL included


# ---- the socket ----------------------------------------------------------------------------


def prepare_socket_dir(path: Path) -> bool:
    """Make the socket's directory 0700 if we create it (and keep the default one 0700);
    True when this call created it. Raises `Forbidden` when it is a symlink, not a
    directory, or another user's (root's is accepted: ``/tmp`` itself)."""
    directory = path.parent
    is_default = directory == default_socket_path().parent and "CHRYSALIS_SOCKET" not in os.environ
    created = False
    try:
        directory.mkdir(mode=0o700, parents=True)
        created = True
    except FileExistsError:
        pass
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:  # ELOOP: a symlink; ENOTDIR: a file
        st = directory.lstat()
        what = "a symlink" if stat.S_ISLNK(st.st_mode) else "not a directory"
        raise Forbidden(
            f"the socket directory {directory} is {what}, owned by {who(st.st_uid)}: refusing "
            "to listen there; remove it or pass --socket"
        ) from exc
    try:
        st = os.fstat(fd)
        if st.st_uid != os.getuid() and st.st_uid != 0:
            raise Forbidden(
                f"the socket directory {directory} belongs to {who(st.st_uid)}, not you: "
                "refusing to listen there; remove it or pass --socket"
            )
        if (created or is_default) and stat.S_IMODE(st.st_mode) != 0o700:
            os.fchmod(fd, 0o700)  # mkdir's mode passes through the umask
    finally:
        os.close(fd)
    return created


def claim_socket_path(path: Path) -> None:
    """Make ``path`` free to bind: remove a stale socket, refuse a live one or a non-socket."""
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        raise InvalidInput(
            f"socket path {path} is {len(os.fsencode(path))} bytes; Unix sockets allow "
            f"{MAX_SOCKET_PATH}: choose a shorter --socket"
        )
    check_socket_owner(path, "refusing to listen there; remove it or pass --socket")
    try:
        st = path.lstat()
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(st.st_mode):  # a Conflict: the path is taken, not malformed
        raise Conflict(f"{path} exists and is not a socket; remove it or choose another")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(2.0)
    try:
        probe.connect(str(path))
    except (ConnectionRefusedError, FileNotFoundError):
        log.info("removing stale socket %s (nothing answers on it)", path)
        path.unlink(missing_ok=True)
        return
    except OSError as exc:  # a timeout: something is there but wedged; do not steal it
        raise Conflict(
            f"something holds {path} but does not answer ({exc}); stop it first"
        ) from None
    finally:
        probe.close()
    raise Conflict(
        f"a daemon is already listening on {path}; stop it first (one per socket): "
        f"chrysalis --socket {path} stop"
    )


def raise_fd_limit() -> None:
    """The soft limit on open files raised to the hard one (a systemd user unit starts at
    1,024): the inspector's listener is capped, but connections, indexes and LMDB share what
    is left. Leaves it as it is where the OS refuses."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else 65536  # macOS says "infinity"
    if soft != resource.RLIM_INFINITY and soft < wanted:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def bind_socket(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(str(path))
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(512)
    sock.setblocking(False)
    return sock


_REFUSED = json.dumps(
    {
        "error": {
            "code": "forbidden",
            "message": "this socket serves its owner only",
            "details": None,
        }
    }
).encode()


class PeerCheckedProtocol(HttpToolsProtocol):
    """uvicorn's HTTP/1.1 protocol, refusing connections from other users: their first bytes
    get a 403 and the connection is closed (answering after the read, so the refusal is not
    lost to a reset). On httptools, whose parser is C: h11's pure-Python one cost ~2 % more
    instructions per recall (docs/benchmarks.md, the load section)."""

    refused = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        uid = peer_uid(transport.get_extra_info("socket"))
        if uid is not None and uid != os.getuid():
            log.warning("refused a connection from uid %d", uid)
            self.refused = True

    def data_received(self, data: bytes) -> None:
        if not self.refused:
            super().data_received(data)
            return
        if not self.transport.is_closing():
            self.transport.write(
                b"HTTP/1.1 403 Forbidden\r\ncontent-type: application/json\r\n"
                b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(_REFUSED), _REFUSED)
            )
            self.transport.close()


class _Server(uvicorn.Server):
    stop: threading.Event | None = None  # set: stop as on SIGTERM (a daemon served on a thread)

    async def on_tick(self, counter: int) -> bool:
        return (self.stop is not None and self.stop.is_set()) or await super().on_tick(counter)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """Like uvicorn's, without re-raising the signal afterwards: a SIGTERM that shut us
        down cleanly ends in exit status 0. On a thread other than the main one (signals
        can only be handled there) it is stopped through `stop` instead."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        handled = (signal.SIGINT, signal.SIGTERM)
        original = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)


# ---- the lifecycle -------------------------------------------------------------------------


def run(settings: Settings, stop: threading.Event | None = None, *, freeze: bool = False) -> None:
    """Serve until SIGTERM or SIGINT, or until ``stop`` is set (how a daemon served on a
    thread of another program, e.g. a test's, is stopped). Raises `ChrysalisError` (with a
    message for people) when it cannot start, having removed the data dir and socket dir if
    this start made them (never one that was there before, nor anything in it). ``freeze``
    (a daemon in a process of its own: `main`) hides what start-up made from the cyclic
    garbage collector (`gc.freeze`), then turns the collector on (the `daemon` command starts
    with it off)."""
    path = settings.socket.expanduser().absolute()
    data_dir = settings.data_dir.expanduser().absolute()
    check_data_dir(data_dir)  # a mistyped --data-dir: refused, not a new empty memory
    made = _first_missing(data_dir)  # what this start creates, so a failed one can undo it
    socket_dir_made = prepare_socket_dir(path)
    serving: list[bool] = []  # set once it serves: a failure after that is no failed start
    try:
        claim_socket_path(path)
        _run(settings, path, serving, stop, freeze)
    finally:
        if not serving:
            if made is not None:
                shutil.rmtree(made, ignore_errors=True)
            if socket_dir_made:
                with contextlib.suppress(OSError):
                    path.parent.rmdir()  # only if empty
    log.info("chrysalis daemon stopped cleanly")


def _first_missing(path: Path) -> Path | None:
    """The outermost folder of ``path`` (itself included) that does not exist yet."""
    missing = None
    for folder in (path, *path.parents):
        if folder.exists():
            break
        missing = folder
    return missing


def _run(
    settings: Settings,
    path: Path,
    serving: list[bool],
    stop: threading.Event | None,
    freeze: bool = False,
) -> None:
    """Open the memories, bind, serve (``serving`` gets True when it starts to)."""
    started = time.perf_counter()
    raise_fd_limit()
    memories = Memories(settings, open_memory, Jobs(retry_max=settings.retry_max))
    sock: socket.socket | None = None
    try:
        memories.open_all()
        sock = bind_socket(path)
        inode = os.stat(path).st_ino
        app = create_app(memories)
        config = uvicorn.Config(
            app,
            http=PeerCheckedProtocol,
            lifespan="off",
            ws="none",  # nothing here speaks WebSocket: no upgrade is taken, no library loaded
            log_config=None,
            access_log=False,
            timeout_graceful_shutdown=max(1, round(settings.shutdown_timeout)),
            server_header=False,
            date_header=False,
            proxy_headers=False,  # no proxy in front of a Unix socket: nothing to trust
        )
        server = _Server(config)
        server.stop = stop
        memory = memories.default.memory
        embedder = memory.embedder
        log.info(
            "chrysalis daemon: replica %s, data %s, embedder %s, extractor %s, memories %s, "
            "listening on %s (%.0f ms)",
            memory.replica_id, memory.path, embedder.model if embedder else None,
            memory.knowledge.status()["extractor"], ", ".join(memories.names()), path,
            (time.perf_counter() - started) * 1000,
        )  # fmt: skip
        serving.append(True)
        if freeze:
            # What start-up made (modules, schemas, the indexes' id maps: ~100k-entry dicts
            # at 100k items) lives as long as the daemon; without this, every full collection
            # walks it again (at 100k, up to ~110 ms a pause; ~35 ms frozen: benchmarks.md).
            gc.collect()
            gc.freeze()
            gc.enable()  # the `daemon` command turns it off while the daemon starts
        asyncio.run(_serve(server, sock, memories.jobs, app))
    finally:
        memories.close()
        if sock is not None:
            sock.close()
            with contextlib.suppress(OSError):
                if os.stat(path).st_ino == inode:
                    path.unlink()


def open_memory(name: str, settings: Settings, jobs: JobGroup, metrics: Metrics) -> Daemon:
    """Open memory ``name`` as its ``settings`` say, its jobs in ``jobs``: its `Replica` (the
    store, and its remote and mirror when it has them), scheduled."""
    replica = Replica.open(
        settings.data_dir.expanduser(),
        remote=settings.remote or None,
        sync_key_file=settings.sync_key_file,
        blob_grace=settings.blob_grace,
        sync=settings.durable,
        min_free_bytes=settings.min_free_disk_bytes,
        replica_id=settings.replica_id,
        embedder=settings.embedder,
        scrub_delay=settings.scrub_delay,
        secrets=settings.secrets,
        extractor=settings.extractor,
        functional=settings.functional_predicates,
        extract_budget=Budget(settings.extract_calls_per_hour, settings.extract_tokens_per_hour),
        summary_after=settings.summary_after_s,
    )
    if settings.remote and settings.sync_key_file is None:  # often a misspelt variable: say it
        log.warning(
            "%sremote %s has no sync key (sync_key_file): what this laptop pushes "
            "there is not encrypted, readable by anyone who can read the remote",
            "" if name == "default" else f"memory {name}: ", settings.remote,
        )  # fmt: skip
    daemon = Daemon(settings, replica, jobs, name, metrics)
    try:
        daemon.jobs.add("disk", daemon.check_disk, settings.disk_check_interval)
        if replica.engine is not None:
            daemon.attach_sync(replica.engine)
        if settings.zep_url:
            daemon.attach_mirror(open_mirror(replica.memory, settings))
    except BaseException:
        daemon.jobs.remove_all()
        close(daemon)
        raise
    return daemon


def open_mirror(memory: Memory, settings: Settings) -> Mirror:
    """The Zep mirror the settings name (the SDK is imported only then)."""
    assert settings.zep_url is not None
    key, user = zep_api_key(settings), settings.zep_user_id
    if settings.zep_flavour == "zep-cloud":
        try:
            from chrysalis.mirrors.zep_cloud import ZepCloudMirror
        except ImportError:
            raise InvalidInput(
                "zep_flavour zep-cloud needs the zep-cloud package: "
                "pip install 'chrysalis-memory[zep-cloud]'"
            ) from None
        return ZepCloudMirror(memory, settings.zep_url, key, user_id=user)
    from chrysalis.mirrors.zep import ZepMirror

    return ZepMirror(memory, settings.zep_url, key, user_id=user)


async def _serve(server: _Server, sock: socket.socket, jobs: Jobs, app: FastAPI) -> None:
    jobs.start()
    try:
        await server.serve(sockets=[sock])
    finally:
        jobs.shutdown()
        inspector = getattr(app.state, "inspector", None)  # opened by `chrysalis ui`
        if inspector is not None:
            await inspector.close()


# How a start that fails ends: one plain line on stderr and one of these statuses (documented
# in docs/operations.md). Two, so a service manager can tell a setting to fix (restarting will
# not help: the unit's RestartPreventExitStatus=2) from a start that may work the next time.
EXIT_BAD_SETTING = 2  # a setting is malformed: InvalidInput, from the settings or at start
EXIT_FAILED = 1  # anything else: the data dir or socket in use, a file that cannot be read...


def main(
    settings: Settings,
    sources: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    """`run` for the CLI: 0 after a clean stop; a failed start as ``error: <message>`` on
    stderr (then ``hint: <key> came from <source>`` for the settings it names, from
    ``sources``) and `EXIT_BAD_SETTING` or `EXIT_FAILED`. Said once, as that plain line, in
    either log format: people, `chrysalis daemon --detach` and a service's journal read it
    (a JSON log does not repeat it as a record)."""
    configure_logging(settings.log_level, settings.log_format)
    for warning in unknown_variables(os.environ if environ is None else environ):
        log.warning("%s", warning)
    try:
        run(settings, freeze=True)
    except ChrysalisError as exc:
        status, message = (
            EXIT_BAD_SETTING if isinstance(exc, InvalidInput) else EXIT_FAILED,
            exc.message,
        )
    except OSError as exc:  # e.g. a data dir where we may not write
        status, message = EXIT_FAILED, f"cannot start: {exc}"
    else:
        return 0
    lines = [f"error: {message}"]
    for key in ("data_dir", "socket", "sync_key_file", "zep_api_key_file"):
        value = getattr(settings, key)
        forms = () if value is None else {str(value.expanduser()), str(value.absolute())}
        if sources and any(form in message for form in forms):
            lines.append(f"hint: {key} came from {sources.get(key, 'default')}")
    sys.stderr.write("\n".join(lines) + "\n")
    sys.stderr.flush()
    return status
