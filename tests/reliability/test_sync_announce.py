"""A push whose segment landed but whose announcement failed must be announced by a later push.

Found by the soak's outages; reduced to two replicas on a folder remote that fails one ``put``.
At fb58324 (these tests failed there; e8e3080 fixed chrysalis/sync.py with a durable
"announced" cursor):

1. replica A pushes op 2: the segment is created and A's cursor moves to 2; then the store goes
   away before ``Sync.push`` writes the heartbeat and the ``changed`` marker (RemoteUnavailable);
2. the store comes back; the retry (the daemon's push job, 2 s later) returned at once: "nothing
   to send" (``_identity_checked`` was set and ``_waiting()`` False: the cursor already moved),
   so the heartbeat and ``changed`` were never rewritten;
3. replica B's scheduled pulls read ``changed``, found the token of its last complete pull, and
   skipped: B never saw op 2 while A stayed idle. Both statuses looked healthy: A had no pending
   ops (and no errors after its next pull), B showed A with lag 0 (A's stale heartbeat).

A SIGKILL between the heartbeat ``put`` and the ``changed`` ``put`` left the same state, and
there a restart did not help: the first push read the heartbeat, which already announced the
cursor (``announced < self.pushed()`` was False), so ``changed`` was not rewritten either.

B caught up only when A wrote again, when B restarted (it forgets the token) or when someone ran
``chrysalis sync`` (a forced pull). The soak's convergence phase forces its pulls, and its
replicas keep making ops (vectors of what they pull), so the soak itself does not trip on this.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from chrysalis import Memory
from chrysalis.core.errors import NotFound
from chrysalis.remotes import ObjectInfo, Remote, RemoteUnavailable, open_remote
from chrysalis.sync import Sync


class FailingPuts(Remote):
    """A real remote whose ``put`` of the keys in ``down`` fails as an outage would."""

    def __init__(self, inner: Remote) -> None:
        super().__init__(inner.url)
        self.inner = inner
        self.down: set[str] = set()

    def get(self, key: str) -> bytes:
        return self.inner.get(key)

    def put(self, key: str, data: bytes) -> None:
        if key in self.down:
            raise RemoteUnavailable(f"injected: put {key!r} failed")
        self.inner.put(key, data)

    def put_if_absent(self, key: str, data: bytes) -> bool:
        return self.inner.put_if_absent(key, data)

    def list(self, prefix: str = "") -> list[ObjectInfo]:
        return self.inner.list(prefix)

    def delete(self, key: str) -> None:
        self.inner.delete(key)


@pytest.mark.parametrize(
    ("failing", "restart"),
    [("changed", False), ("heartbeat", False), ("changed", True)],
    ids=["changed", "heartbeat", "changed-then-restart"],
)
def test_a_failed_announcement_is_announced_by_the_next_push(
    open_memory: Callable[..., Memory], tmp_path: Path, failing: str, restart: bool
) -> None:
    (tmp_path / "remote").mkdir()
    url = f"file://{tmp_path / 'remote'}"
    a, b = open_memory("a"), open_memory("b")
    remote = FailingPuts(open_remote(url))
    push_a, pull_b = Sync(a, remote), Sync(b, url)
    a.append_bead("before the outage", id="x1")
    push_a.push()
    pull_b.pull()
    assert b.get_bead("x1").content == "before the outage"

    a.append_bead("pushed as the store went away", id="x2")
    remote.down = {"changed" if failing == "changed" else f"replicas/{a.replica_id}.json"}
    with pytest.raises(RemoteUnavailable):
        push_a.push()  # the segment is there and the cursor moved; the announcement failed
    remote.down = set()
    if restart:  # a daemon killed between the heartbeat and the marker starts afresh
        push_a = Sync(a, remote)
    push_a.push()  # the schedule's retry, with the store back
    assert push_a.status()["pending_ops"] == 0  # A believes everything is out

    for _ in range(3):
        pull_b.pull()  # the schedule's pulls (not forced)
    try:
        b.get_bead("x2")
    except NotFound:
        lag = [p["lag"] for p in pull_b.status()["peers"]]
        raise AssertionError(f"b never pulled x2 (it shows a lag of {lag})") from None
    assert b.state_digest() == a.state_digest()
