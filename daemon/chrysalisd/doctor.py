"""`chrysalis doctor`: checks that say what is wrong and what to do about it.

`daemon_checks` runs inside the daemon (``GET /v1/doctor``): the data dir, the indexes against
LMDB, the remote (reachable, writable, format, clock skew), the Zep mirror, the embedder
(Ollama), the knowledge extractor (failing, paused). `local_checks` runs in the CLI: the
socket and its directory, and whether a daemon answers at all. Each check is
``{"check", "status": ok|warn|error, "detail", "fix"}``.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING

from chrysalis.client.local_socket import who
from chrysalis.core.errors import ChrysalisError, FormatTampered

from .words import counted

if TYPE_CHECKING:
    from .state import Daemon

MAX_SKEW_S = 60.0  # HLCs absorb skew, but beyond this "recent" ordering and TTLs get odd


def check(name: str, status: str, detail: str, fix: str = "") -> dict[str, str]:
    return {"check": name, "status": status, "detail": detail, "fix": fix}


def _about(url: str, message: str) -> str:
    """``url: message``, the URL said once: a remote's errors often name it already."""
    return message if url in message else f"{url}: {message}"


def daemon_checks(daemon: Daemon) -> list[dict[str, str]]:
    out = [_data_dir(daemon), _indexes(daemon), _scrub(daemon), _embedder(daemon)]
    out.append(_knowledge(daemon))
    if daemon.sync is None:
        out.append(check("remote", "ok", "no remote configured (this laptop works alone)"))
    else:
        out += _remote(daemon)
    if daemon.mirror is not None:
        m = daemon.mirror.status()
        if m["consecutive_errors"]:
            out.append(
                check(
                    "zep", "warn",
                    f"{counted(m['consecutive_errors'], 'error')} in a row: {m['last_error']}",
                    "check zep_url and the API key; local memory is unaffected and pushes resume",
                )
            )  # fmt: skip
        elif m["earlier_users"]:
            earlier = ", ".join(m["earlier_users"])
            out.append(
                check(
                    "zep", "warn",
                    f"{m['kind']} at {m['url']} as Zep user {m['user_id']}; this memory was "
                    f"mirrored before as Zep user {earlier}, and what it sent then stays in "
                    "that user's sessions (where another memory using that user, like "
                    "default, may have met it)",
                    f"delete this memory's sessions of Zep user {earlier} in Zep (their "
                    f"messages carry chrysalis_origin {daemon.memory.replica_id}); it sends "
                    f"its beads again as {m['user_id']}",
                )
            )  # fmt: skip
        else:
            out.append(check("zep", "ok", f"{m['kind']} at {m['url']}, {m['pending_ops']} pending"))
    return out


def _data_dir(daemon: Daemon) -> dict[str, str]:
    path = daemon.memory.path
    mode = stat.S_IMODE(path.stat().st_mode)
    free = shutil.disk_usage(path).free
    floor = daemon.settings.min_free_disk_bytes
    if free < floor:
        return check(
            "data dir", "error", f"{path}: only {free >> 20} MiB free (floor {floor >> 20} MiB)",
            "free disk space; writes fail when the disk is full",
        )  # fmt: skip
    if mode & 0o077 and is_shared(path, path.stat()):
        from .config import default_data_dir  # here: the CLI's doctor starts without pydantic

        return check(
            "data dir", "warn", f"{path} is a shared directory (mode {mode:o}): other users "
            "can see and make files in the memory's folder",
            f"leave {path}'s mode alone (other users and programs need it); keep the memory in "
            f"a folder of its own: `chrysalis daemon --data-dir {default_data_dir()}` (the "
            "daemon makes a new data dir mode 700)",
        )  # fmt: skip
    if mode & 0o077:
        return check(
            "data dir", "warn", f"{path} is mode {mode:o}: other users can read the memory",
            f"chmod 700 {path}",
        )  # fmt: skip
    return check("data dir", "ok", f"{path}, {free >> 30} GiB free, mode {mode:o}")


def _indexes(daemon: Daemon) -> dict[str, str]:
    status = daemon.memory.indexer.status()
    behind = {k: v for k, v in status["behind"].items() if v}
    beads = daemon.counts()["beads"]
    if status.get("last_error"):
        return check(
            "indexes", "error", f"last index error: {status['last_error']}",
            "see the daemon log; `chrysalis doctor` again after a restart (indexes rebuild from "
            "LMDB when damaged)",
        )  # fmt: skip
    if behind:
        sw = status.get("switch")
        switching = (
            f" (switching embedder to {sw['to']['model']}: {sw['percent']}%; recall searches "
            f"{sw['searching']} until it is done)"
            if sw
            else ""
        )
        return check(
            "indexes", "warn", "catching up with LMDB: "
            + ", ".join(f"{index} {counted(n, 'op')} behind" for index, n in behind.items())
            + switching,
            "wait; if the number does not fall, check the embedder (Ollama) and the log",
        )  # fmt: skip
    keyword = status["keyword"]["items"]
    if keyword < beads:
        return check(
            "indexes", "error",
            f"keyword index holds {counted(keyword, 'item')} for {counted(beads, 'bead')}",
            "stop the daemon, delete the index files under the data dir (index/), start it: "
            "they are rebuilt from LMDB",
        )  # fmt: skip
    return check(
        "indexes",
        "ok",
        f"caught up with LMDB ({counted(beads, 'bead')}, {counted(keyword, 'keyword item')})",
    )


def _scrub(daemon: Daemon) -> dict[str, str]:
    scrub = daemon.memory.scrubber.status()
    if scrub["error"]:
        return check(
            "scrub", "error", f"forgotten text may remain on LMDB's freed pages: {scrub['error']}",
            "free disk space (the scrub writes a compacted copy as large as the live data); "
            "it retries by itself, and runs at every start while due",
        )  # fmt: skip
    if scrub["due"]:
        return check("scrub", "ok", "a forget is waiting for its scrub (within seconds)")
    return check("scrub", "ok", "no forgotten text left on LMDB's freed pages")


def _embedder(daemon: Daemon) -> dict[str, str]:
    setting = daemon.settings.embedder
    emb = daemon.memory.embedder
    if emb is None:
        return check("embedder", "ok", "none: keyword, recency and graph retrieval only")
    if emb.provider != "ollama" and not setting.startswith(("auto", "ollama")):
        return check("embedder", "ok", f"{emb.provider} {emb.model}")
    host = os.environ.get("OLLAMA_HOST", "http://127.0.0.1:11434")
    url = host if "://" in host else f"http://{host}"
    try:
        import httpx

        httpx.get(url.rstrip("/") + "/api/tags", timeout=1.0).raise_for_status()
    except Exception as exc:
        level = "error" if emb.provider == "ollama" else "ok"
        return check(
            "ollama", level, f"{url} does not answer ({type(exc).__name__}); using {emb.provider}",
            "start Ollama (`ollama serve`) or set embedder = \"deterministic\"",
        )  # fmt: skip
    return check("ollama", "ok", f"{url} answers; embedder {emb.provider} {emb.model}")


def _knowledge(daemon: Daemon) -> dict[str, str]:
    k = daemon.memory.knowledge.status()
    if k["extractor"] is None:
        return check("knowledge", "ok", "no extractor: beads only, no derived entities or facts")
    if k["last_error"] and k["paused_for_s"]:
        if "budget" in k["last_error"]:
            fix = (
                "wait for the hour to roll over, or raise extract_calls_per_hour / "
                "extract_tokens_per_hour; nothing is lost, extraction resumes where it stopped"
            )
        elif daemon.settings.extractor.startswith("ollama"):
            fix = (
                'start Ollama (`ollama serve`) and pull the model, or set extractor = "rules"; '
                "nothing is lost, extraction resumes where it stopped"
            )
        else:
            fix = "see the daemon log; extraction retries by itself and resumes where it stopped"
        return check(
            "knowledge", "warn",
            f"{k['extractor']} paused {k['paused_for_s']:.0f} s, "
            f"{counted(k['ops_behind'], 'op')} behind: {k['last_error']}", fix,
        )  # fmt: skip
    if k["last_error"]:
        return check(
            "knowledge", "warn", f"{k['extractor']}: last error {k['last_error']}",
            "see the daemon log; the worker retries by itself",
        )  # fmt: skip
    return check(
        "knowledge", "ok",
        f"{k['extractor']}, {counted(k['ops_behind'], 'op')} behind, "
        f"{counted(k['extracted'], 'bead')} extracted",
    )  # fmt: skip


def _remote(daemon: Daemon) -> list[dict[str, str]]:
    sync = daemon.sync
    assert sync is not None
    remote, url = sync.remote, sync.remote.url
    out = []
    try:
        fmt = sync._open()
    except FormatTampered as exc:
        return [
            check(
                "remote", "error", _about(url, exc.message),
                "run `chrysalis sync --repair-format` on a laptop that synced here before "
                "(it puts back the format it recorded, after checking its key opens the remote)",
            )
        ]  # fmt: skip
    except ChrysalisError as exc:
        return [
            check(
                "remote", "error", _about(url, exc.message),
                "check the URL, credentials (AWS_PROFILE / AWS_* / the folder is mounted) and "
                "the sync key",
            )
        ]  # fmt: skip
    out.append(
        check(
            "remote", "ok",
            f"{url}: format {fmt['format']}, {'encrypted' if fmt.get('encryption') else 'plain'}",
        )
    )  # fmt: skip
    probe = f"doctor/{daemon.memory.replica_id}-{secrets.token_hex(4)}"
    try:
        before = time.time()
        if not remote.put_if_absent(probe, b"probe"):
            raise ChrysalisError("a fresh probe name was taken: create-only puts do not work")
        after = time.time()
        listed = [o for o in remote.list(probe) if o.key == probe]
        remote.delete(probe)
    except ChrysalisError as exc:
        out.append(
            check(
                "remote write", "error", _about(url, exc.message),
                "give this laptop write access to the prefix (s3:PutObject, s3:DeleteObject, "
                "s3:ListBucket) or to the folder",
            )
        )  # fmt: skip
        return out
    out.append(check("remote write", "ok", "create-only put, list and delete work"))
    mtime = listed[0].mtime if listed else None
    if mtime is not None:
        skew = (before + after) / 2 - mtime
        if abs(skew) > MAX_SKEW_S:
            out.append(
                check(
                    "clock", "warn", f"this clock is {skew:+.0f} s off the remote's",
                    "turn on network time (timedatectl set-ntp true / System Settings)",
                )
            )  # fmt: skip
        else:
            out.append(check("clock", "ok", f"{skew:+.1f} s against the remote's clock"))
    status = sync.status()
    if status["stopped"]:
        out.append(
            check(
                "sync", "error", status["stopped"],
                "see docs/operations.md, 'Clone detected': keep one copy, move the other aside",
            )
        )  # fmt: skip
    elif status.get("gaps"):
        replica, gap = next(iter(status["gaps"].items()))
        out.append(
            check(
                "sync", "warn", f"ops {gap.get('from')}..{gap.get('to')} of {replica} are missing "
                "on the remote (deleted?)",
                "nothing to do while the origin runs: it puts them again when it next syncs, or "
                "a snapshot fills them; `chrysalis sync` on the origin hurries it",
            )
        )  # fmt: skip
    elif status.get("tampered"):
        first = status["tampered"][0]
        out.append(
            check(
                "sync", "warn",
                f"{counted(len(status['tampered']), 'object')} on the remote "
                f"{'was' if len(status['tampered']) == 1 else 'were'} not ours, "
                f"e.g. {first['key']}: {first['what']}",
                "someone with write access to the bucket changed it: they were replaced or "
                "ignored; review who can write to the bucket (docs/sync-protocol.md §14)",
            )
        )  # fmt: skip
    elif status["rejected"]:
        first = status["rejected"][0]
        out.append(
            check(
                "sync", "warn",
                f"{counted(len(status['rejected']), 'object')} rejected, e.g. {first['key']}: "
                f"{first['error']}",
                "another laptop wrote something this one cannot trust (a different sync key?); "
                "their other ops still apply",
            )
        )  # fmt: skip
    elif status["consecutive_errors"]:
        out.append(
            check(
                "sync", "warn", f"{counted(status['consecutive_errors'], 'error')} in a row: "
                f"{status['last_error']}",
                "the remote was unreachable; the op log keeps everything and retries with backoff",
            )
        )  # fmt: skip
    else:
        lag = max((p["lag"] for p in status["peers"]), default=0)
        out.append(
            check(
                "sync",
                "ok",
                f"{counted(len(status['peers']), 'peer')}, largest lag {counted(lag, 'op')}",
            )
        )
    return out


# Directories other users and programs rely on: their mode is never ours to change.
SHARED_DIRS = frozenset({"/tmp", "/var/tmp", "/dev/shm"})


def is_shared(directory: Path, st: os.stat_result) -> bool:
    """Whether ``directory`` (``st`` its stat) is not this user's alone to chmod: ``/tmp``,
    ``/var/tmp``, ``/dev/shm``, a directory someone else owns, or a sticky world-writable one
    (what a shared ``/tmp`` looks like)."""
    sticky_open = st.st_mode & stat.S_ISVTX and st.st_mode & stat.S_IWOTH
    named = {str(directory), os.path.realpath(directory)} & SHARED_DIRS
    return bool(named or sticky_open or st.st_uid != os.getuid())


def private_socket() -> Path:
    """A socket path in a directory of this user's alone: ``$XDG_RUNTIME_DIR/chrysalis`` (a
    per-user 0700 tmpfs where there is one), else ``/tmp/chrysalis-$UID``; the daemon makes
    the ``chrysalis`` folder 0700 when it creates it."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) / "chrysalis" if runtime else Path(f"/tmp/chrysalis-{os.getuid()}")
    return base / "chrysalis.sock"


def local_checks(socket: Path) -> list[dict[str, str]]:
    """What the CLI can see without the daemon: the socket and its directory. A shared
    directory (`is_shared`) gets the advice to use a private one (`private_socket`), never
    to change its mode."""
    out = []
    directory = socket.parent
    if not directory.exists():
        return [
            check(
                "daemon", "error", f"{directory} does not exist: no daemon is running here",
                "start it: `chrysalis daemon` (or the systemd / launchd unit in deploy/)",
            )
        ]  # fmt: skip
    st = directory.stat()
    mode = stat.S_IMODE(st.st_mode)
    private = private_socket()
    move = (
        f"give the socket a private directory: `chrysalis --socket {private} daemon` (the "
        f"daemon makes {private.parent} mode 700)"
    )
    if st.st_uid not in (os.getuid(), 0):  # the daemon refuses it (server.prepare_socket_dir)
        fix = (
            "remove it (as its owner), or " + move
            if directory == private.parent
            else f"do not use it: {move}"
        )
        out.append(
            check("socket dir", "error", f"{directory} belongs to uid {st.st_uid}, not you", fix)
        )
    elif is_shared(directory, st):
        what = (
            "is a shared directory"
            if st.st_uid == os.getuid() or mode & stat.S_IWOTH
            else f"belongs to {who(st.st_uid)}, not you"
        )
        out.append(
            check(
                "socket dir", "warn", f"{directory} {what} (mode {mode:o}): other users can "
                "see the socket's name and make files beside it",
                f"leave {directory}'s mode alone (other users and programs need it); {move}",
            )
        )  # fmt: skip
    elif mode & 0o077:
        out.append(
            check("socket dir", "warn", f"{directory} is mode {mode:o}", f"chmod 700 {directory}")
        )
    else:
        out.append(check("socket dir", "ok", f"{directory}, mode {mode:o}"))
    if not socket.exists():
        out.append(
            check(
                "daemon", "error", f"no socket at {socket}: the daemon is not running",
                "start it: `chrysalis daemon` (or the systemd / launchd unit in deploy/)",
            )
        )  # fmt: skip
        return out
    smode = stat.S_IMODE(socket.stat().st_mode)
    if smode & 0o077:
        out.append(check("socket", "warn", f"{socket} is mode {smode:o}", f"chmod 600 {socket}"))
    else:
        out.append(check("socket", "ok", f"{socket}, mode {smode:o}"))
    return out
