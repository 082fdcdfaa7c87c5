"""Running the daemon: the socket, its safety, logging, and the lifecycle.

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
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import stat
import sys
import time
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pythonjsonlogger.json
import uvicorn
from fastapi import FastAPI
from uvicorn.protocols.http.h11_impl import H11Protocol

from chrysalis import Memory
from chrysalis.client import default_socket_path
from chrysalis.errors import ChrysalisError, Conflict, Forbidden, InvalidInput
from chrysalis.extract.worker import Budget
from chrysalis.mirrors import Mirror
from chrysalis.remotes import open_remote
from chrysalis.sync import Sync
from chrysalis.transport import check_socket_owner, peer_uid, who

from .app import create_app
from .config import Settings, zep_api_key
from .jobs import JobGroup, Jobs
from .memories import Memories, close
from .state import Daemon, Metrics

log = logging.getLogger("chrysalisd")
MAX_SOCKET_PATH = 107  # sun_path is 108 bytes on Linux (104 on macOS), NUL included


# ---- logging -------------------------------------------------------------------------------


class JsonFormatter(pythonjsonlogger.json.JsonFormatter):
    """One JSON object per line: ts, level, logger, msg (and exc when there is one).

    Only those fields: whatever else a record carries (``extra=``, uvicorn's
    ``color_message``, a dict passed as the message) is left out, so a value handed to a
    logger that way, a secret included, never reaches the log."""

    FIELDS = ("ts", "level", "logger", "msg", "exc")

    def __init__(self) -> None:
        super().__init__(
            ["asctime", "levelname", "name", "message"],
            rename_fields={
                "asctime": "ts",
                "levelname": "level",
                "name": "logger",
                "message": "msg",
                "exc_info": "exc",
            },
            json_ensure_ascii=False,
        )

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")

    def process_log_record(self, log_data: dict[str, Any]) -> dict[str, Any]:
        log_data["level"] = str(log_data["level"]).lower()
        return {k: log_data[k] for k in self.FIELDS if k in log_data}


def configure_logging(settings: Settings) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if settings.log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(settings.log_level.upper())
    for quiet in ("faiss.loader", "apscheduler"):  # per-job and library-loading chatter
        logging.getLogger(quiet).setLevel(logging.WARNING)
    # chrysalis logs what it warns about (e.g. "Ollama is not answering"); other warnings go
    # through logging so stderr stays one JSON object per line.
    warnings.filterwarnings("ignore", message="embedder: ", category=RuntimeWarning)
    logging.captureWarnings(True)


# ---- the socket ----------------------------------------------------------------------------


def prepare_socket_dir(path: Path) -> None:
    """Make the socket's directory 0700 if we create it (and keep the default one 0700).
    Raises `Forbidden` when it is a symlink, not a directory, or another user's (root's is
    accepted: ``/tmp`` itself)."""
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
    if not stat.S_ISSOCK(st.st_mode):
        raise InvalidInput(f"{path} exists and is not a socket; remove it or choose another")
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
    raise Conflict(f"a daemon is already listening on {path}; stop it first (one per socket)")


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


class PeerCheckedProtocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, refusing connections from other users: their first bytes
    get a 403 and the connection is closed (answering after the read, so the refusal is not
    lost to a reset)."""

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
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """Like uvicorn's, without re-raising the signal afterwards: a SIGTERM that shut us
        down cleanly ends in exit status 0."""
        handled = (signal.SIGINT, signal.SIGTERM)
        original = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)


# ---- the lifecycle -------------------------------------------------------------------------


def run(settings: Settings) -> None:
    """Serve until SIGTERM or SIGINT. Raises `ChrysalisError` (with a message for people)
    when it cannot start."""
    path = settings.socket.expanduser().absolute()
    prepare_socket_dir(path)
    claim_socket_path(path)
    started = time.perf_counter()
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
            log_config=None,
            access_log=False,
            timeout_graceful_shutdown=max(1, round(settings.shutdown_timeout)),
            server_header=False,
            date_header=False,
        )
        server = _Server(config)
        memory = memories.default.memory
        embedder = memory.embedder
        log.info(
            "chrysalis daemon: replica %s, data %s, embedder %s, extractor %s, memories %s, "
            "listening on %s (%.0f ms)",
            memory.replica_id, memory.path, embedder.model if embedder else None,
            memory.knowledge.status()["extractor"], ", ".join(memories.names()), path,
            (time.perf_counter() - started) * 1000,
        )  # fmt: skip
        asyncio.run(_serve(server, sock, memories.jobs, app))
    finally:
        memories.close()
        if sock is not None:
            sock.close()
            with contextlib.suppress(OSError):
                if os.stat(path).st_ino == inode:
                    path.unlink()
    log.info("chrysalis daemon stopped cleanly")


def open_memory(name: str, settings: Settings, jobs: JobGroup, metrics: Metrics) -> Daemon:
    """Open memory ``name`` as its ``settings`` say, its jobs in ``jobs``: the store, and its
    remote and mirror when it has them."""
    memory = Memory.open(
        settings.data_dir.expanduser(),
        sync=settings.durable,
        replica_id=settings.replica_id,
        embedder=settings.embedder,
        scrub_delay=settings.scrub_delay,
        secrets=settings.secrets,
        extractor=settings.extractor,
        functional=settings.functional_predicates,
        extract_budget=Budget(settings.extract_calls_per_hour, settings.extract_tokens_per_hour),
        summary_after=settings.summary_after_s,
    )
    daemon = Daemon(settings, memory, jobs, name, metrics)
    try:
        daemon.jobs.add("disk", daemon.check_disk, settings.disk_check_interval)
        if settings.remote:
            remote = open_remote(settings.remote)
            key, grace = settings.sync_key_file, settings.blob_grace
            daemon.attach_sync(Sync(memory, remote, key_file=key, blob_grace=grace))
        if settings.zep_url:
            daemon.attach_mirror(open_mirror(memory, settings))
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


def main(settings: Settings) -> int:
    """`run` with errors as one line on stderr and an exit status (the CLI's entry)."""
    configure_logging(settings)
    try:
        run(settings)
    except ChrysalisError as exc:
        log.error("%s", exc.message)
        return 1
    return 0
