"""Another local user takes the port of a service we talk to on 127.0.0.1 while the real one is
down (Ollama's 11434, a self-hosted Zep): before a byte of a memory's text goes there, the
listener's owner is checked (`chrysalis.net.loopback`), so the squatter receives nothing.

The squatter is a second real Unix user (`mallory`, as in test_socket_owner) running a plain TCP
server that records every byte it is sent."""

from __future__ import annotations

import logging
import os
import pwd
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from chrysalis import Memory
from chrysalis.core.errors import EmbedderUnavailable, ExtractorUnavailable, MirrorError
from chrysalis.extract.ollama import OllamaExtractor
from chrysalis.mirrors.zep import ZepMirror
from chrysalis.net.loopback import check_loopback_service, listener_uids, loopback_address
from chrysalis.search.embed import OllamaEmbedder, make_embedder
from tests.eventually import eventually

from .test_socket_owner import SYSTEM_PYTHON, as_user, mallory, shared

__all__ = ["mallory", "shared"]  # fixtures, used by name

# Listens on 127.0.0.1 (or the wildcard), writes its port, then one line per connection with
# the bytes that arrived. Stdlib only: it runs as the other user.
SQUATTER = r"""
import socket, sys
log, bind = sys.argv[1], sys.argv[2]
srv = socket.socket(socket.AF_INET6 if ":" in bind else socket.AF_INET)
srv.bind((bind, 0))
srv.listen(8)
with open(log, "a") as f:
    f.write(f"port {srv.getsockname()[1]}\n")
while True:
    conn, _ = srv.accept()
    conn.settimeout(3)
    data = b""
    try:
        while chunk := conn.recv(65536):
            data += chunk
    except OSError:
        pass
    conn.close()
    with open(log, "a") as f:
        f.write(f"got {len(data)}\n")
"""


class Squatter:
    def __init__(self, user: pwd.struct_passwd, log: Path, bind: str = "127.0.0.1") -> None:
        log.touch()
        os.chown(log, user.pw_uid, user.pw_gid)
        self.log = log
        self.proc = as_user(user, SYSTEM_PYTHON, "-I", "-c", SQUATTER, str(log), bind)

        def started() -> list[str]:
            assert self.proc.poll() is None, "the squatter did not start"
            return self.lines()

        eventually(started, timeout=20, what="the squatter to start", interval=0.02)
        self.port = int(self.lines()[0].split()[1])

    def lines(self) -> list[str]:
        return self.log.read_text().splitlines()

    def received(self) -> list[str]:
        return [line for line in self.lines() if line.startswith("got")]

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def squatter(mallory: pwd.struct_passwd, shared: Path) -> Iterator[Squatter]:
    s = Squatter(mallory, shared / "squatter.log")
    try:
        yield s
    finally:
        s.close()


def test_the_kernel_names_the_listener_of_a_loopback_port(
    squatter: Squatter,
    mallory: pwd.struct_passwd,
) -> None:
    assert listener_uids("127.0.0.1", squatter.port) == {mallory.pw_uid}
    assert listener_uids("localhost", squatter.port) == {mallory.pw_uid}
    with socket.socket() as ours:
        ours.bind(("127.0.0.1", 0))
        ours.listen()
        assert listener_uids("127.0.0.1", ours.getsockname()[1]) == {os.getuid()}
    with socket.socket() as idle:  # bound, not listening: nobody serves it
        idle.bind(("127.0.0.1", 0))
        assert listener_uids("127.0.0.1", idle.getsockname()[1]) == set()
    assert loopback_address("http://127.0.0.1:11434") == ("127.0.0.1", 11434)
    assert loopback_address("http://localhost") == ("localhost", 80)
    assert loopback_address("https://api.getzep.com") is None


def test_a_wildcard_and_an_ipv6_listener_are_found_too(
    mallory: pwd.struct_passwd,
    shared: Path,
) -> None:
    for bind, asked in [("0.0.0.0", "127.0.0.1"), ("::1", "::1"), ("::", "127.0.0.1")]:
        s = Squatter(mallory, shared / f"{bind.replace(':', '_')}.log", bind=bind)
        try:
            with pytest.raises(EmbedderUnavailable, match="another user"):
                OllamaEmbedder(
                    host=f"http://[{asked}]:{s.port}"
                    if ":" in asked
                    else f"http://{asked}:{s.port}"
                ).embed_query("where I live")
            assert s.received() == []
        finally:
            s.close()


def test_the_embedder_sends_no_text_to_another_users_port(squatter: Squatter) -> None:
    embedder = OllamaEmbedder(host=f"http://127.0.0.1:{squatter.port}", timeout=2)
    with pytest.raises(EmbedderUnavailable, match=r"another user \(chrysalis-mallory"):
        embedder.embed_documents(["the launch code is in the blue folder"])
    time.sleep(0.3)
    assert squatter.received() == []


def test_auto_falls_back_rather_than_send_to_a_squatter(
    squatter: Squatter, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{squatter.port}")
    with caplog.at_level(logging.WARNING):  # said once, as a log line (step 21, item 7)
        embedder = make_embedder("auto")
    assert embedder.provider in ("deterministic", "numpy-bert")  # the offline fallback
    assert any("another user" in r.getMessage() for r in caplog.records)
    assert squatter.received() == []


def test_the_extractor_sends_no_bead_to_another_users_port(
    squatter: Squatter, tmp_path: Path
) -> None:
    with Memory.open(tmp_path / "m", embedder="deterministic") as mem:
        bead = mem.append_bead("I moved to Reykjavik last spring", session_id="s")
        extractor = OllamaExtractor(host=f"http://127.0.0.1:{squatter.port}", timeout=2)
        with pytest.raises(ExtractorUnavailable, match="another user"):
            extractor.extract([bead])
    assert squatter.received() == []


def test_a_zep_mirror_on_a_squatted_port_sends_nothing(squatter: Squatter, tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m", embedder="deterministic") as mem:
        mem.append_bead("my passport number is in the drawer", session_id="s")
        mirror = ZepMirror(mem, f"http://127.0.0.1:{squatter.port}", "key", timeout=2)
        with pytest.raises(MirrorError, match="another user"):
            mirror.push()
        assert "another user" in (mirror.health.last_error or "")
    assert squatter.received() == []


def test_our_own_service_and_a_free_port_are_not_refused() -> None:
    with socket.socket() as ours:
        ours.bind(("127.0.0.1", 0))
        ours.listen()
        check_loopback_service(f"http://127.0.0.1:{ours.getsockname()[1]}", "Ollama")
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    check_loopback_service(f"http://127.0.0.1:{port}", "Ollama")  # nothing there: no refusal
    check_loopback_service("https://api.getzep.com", "Zep")  # not loopback: not a local user's


def test_an_s3_endpoint_on_a_squatted_port_gets_no_object(
    squatter: Squatter, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chrysalis.core.errors import RemoteUnavailable
    from chrysalis.remotes import open_remote

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")  # so boto3 would sign and send
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")

    remote = open_remote(f"s3://bucket/p?endpoint_url=http://127.0.0.1:{squatter.port}&retries=1")
    try:
        with pytest.raises(RemoteUnavailable, match="another user"):
            remote.put("segments/x", b"the op log in the clear")
        with pytest.raises(RemoteUnavailable, match="another user"):
            remote.list()
    finally:
        remote.close()
    assert squatter.received() == []
