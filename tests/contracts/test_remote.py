"""The Remote contract (chrysalis/remotes/__init__.py), run against every implementation.

Each contract test takes ``remote_url`` (parametrized over ``file`` and ``s3``) and opens a
fresh, empty remote with ``open_remote(remote_url())``. A few tests at the end are about one
kind only: the file remote's temporary files and URLs, the S3 remote's prefix and outages.
"""

from __future__ import annotations

import os
import random
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pytest

from chrysalis.core.errors import InvalidInput
from chrysalis.remotes import ObjectInfo, Remote, RemoteNotFound, RemoteUnavailable, open_remote
from tests.remote_fixtures import S3Server

MakeUrl = Callable[[], str]
Closer = Callable[[Remote], Remote]

BAD_KEYS = ["", "/abs", "a/../b", "a//b", "a\\b", "."]


@pytest.fixture
def closer() -> Iterator[Closer]:
    """Close every remote handed to it when the test ends (S3 remotes hold connections)."""
    opened: list[Remote] = []

    def keep(remote: Remote) -> Remote:
        opened.append(remote)
        return remote

    yield keep
    for remote in opened:
        remote.close()


def kind_of(request: pytest.FixtureRequest) -> str:
    return str(request.node.callspec.params["remote_url"])


def with_options(url: str, **options: str) -> str:
    """``url`` with some of its query options replaced."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    query.update(options)
    return urlunsplit(parts._replace(query=urlencode(query)))


def free_port() -> int:
    """A loopback port nothing listens on (bound once, then closed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def contents(remote: Remote) -> dict[str, bytes]:
    return {o.key: remote.get(o.key) for o in remote.list()}


# ---- get / put ---------------------------------------------------------------------------------


def test_get_of_a_missing_key_is_not_found(remote_url: MakeUrl, closer: Closer) -> None:
    r = closer(open_remote(remote_url()))
    with pytest.raises(RemoteNotFound, match=re.escape("no object ops/a/1.seg")):
        r.get("ops/a/1.seg")
    r.put("ops/a/2.seg", b"x")
    with pytest.raises(RemoteNotFound):
        r.get("ops/a/1.seg")  # a sibling existing does not make it found
    with pytest.raises(LookupError):  # RemoteNotFound is a LookupError too
        r.get("nothing")


def test_put_then_get_returns_the_exact_bytes(remote_url: MakeUrl, closer: Closer) -> None:
    r = closer(open_remote(remote_url()))
    objects = {
        "empty": b"",
        "binary": bytes(range(256)) + b"\0\0\r\n\0",
        "blobs/ab/5MiB": random.Random(7).randbytes(5 << 20),
    }
    for key, data in objects.items():
        r.put(key, data)
    for key, data in objects.items():
        assert r.get(key) == data, key
    assert r.list() == sorted(
        (ObjectInfo(k, len(v)) for k, v in objects.items()), key=lambda o: o.key
    )
    # another remote on the same URL sees the same objects
    again = closer(open_remote(r.url))
    for key, data in objects.items():
        assert again.get(key) == data, key


def test_put_overwrites_the_whole_object(remote_url: MakeUrl, closer: Closer) -> None:
    r = closer(open_remote(remote_url()))
    r.put("heartbeats/r1", b"a" * 10_000)
    r.put("heartbeats/r1", b"short")
    assert r.get("heartbeats/r1") == b"short"  # no tail of the longer old object
    r.put("heartbeats/r1", b"")
    assert r.get("heartbeats/r1") == b""
    assert r.list() == [ObjectInfo("heartbeats/r1", 0)]


# ---- put_if_absent -----------------------------------------------------------------------------


def test_put_if_absent_creates_once_and_leaves_the_winner(
    remote_url: MakeUrl, closer: Closer
) -> None:
    r = closer(open_remote(remote_url()))
    assert r.put_if_absent("format.json", b'{"v": 1}') is True
    assert r.put_if_absent("format.json", b'{"v": 2, "longer": true}') is False
    assert r.get("format.json") == b'{"v": 1}'
    assert r.put_if_absent("format.json", b"") is False
    assert r.get("format.json") == b'{"v": 1}'
    assert r.list() == [ObjectInfo("format.json", 8)]

    r.put("changed", b"1")  # an object written by put is taken too
    assert r.put_if_absent("changed", b"2") is False
    assert r.get("changed") == b"1"

    assert r.put_if_absent("ops/new/1.seg", b"") is True  # empty objects, new folders
    assert r.get("ops/new/1.seg") == b""


def test_racing_creators_exactly_one_wins(remote_url: MakeUrl, closer: Closer) -> None:
    url = remote_url()
    # two replicas, four threads each: racing inside one client and across clients
    replicas = [closer(open_remote(url)), closer(open_remote(url))]
    threads_n = 8
    barrier = threading.Barrier(threads_n)
    results: dict[int, bool] = {}
    errors: list[BaseException] = []

    def create(i: int) -> None:
        try:
            barrier.wait(timeout=10)
            results[i] = replicas[i % 2].put_if_absent("ops/r/1.seg", f"writer {i}".encode())
        except BaseException as exc:  # reported below, not lost in the thread
            errors.append(exc)

    threads = [threading.Thread(target=create, args=(i,)) for i in range(threads_n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors
    assert len(results) == threads_n
    winners = [i for i, won in results.items() if won]
    assert len(winners) == 1, results
    for replica in replicas:
        assert replica.get("ops/r/1.seg") == f"writer {winners[0]}".encode()
    assert replicas[0].list() == [ObjectInfo("ops/r/1.seg", len(f"writer {winners[0]}"))]


# ---- list --------------------------------------------------------------------------------------

LAYOUT = [
    "format.json",
    "heartbeats/r1",
    "ops/a/0001.seg",
    "ops/a/0002.seg",
    "ops/ab/x",
    "ops/b/y",
    "opsx",
    "snap/1",
]


def filled(remote: Remote) -> dict[str, int]:
    """Put LAYOUT in a shuffled order, each key with its own size; return key -> size."""
    sizes = {}
    order = LAYOUT[:]
    random.Random(3).shuffle(order)
    for n, key in enumerate(order):
        remote.put(key, key.encode() * (n + 1))
        sizes[key] = len(key) * (n + 1)
    return sizes


LISTINGS = {
    "": LAYOUT,
    "ops/a": ["ops/a/0001.seg", "ops/a/0002.seg", "ops/ab/x"],  # not a folder boundary
    "ops/a/": ["ops/a/0001.seg", "ops/a/0002.seg"],
    "ops/": ["ops/a/0001.seg", "ops/a/0002.seg", "ops/ab/x", "ops/b/y"],
    "ops": ["ops/a/0001.seg", "ops/a/0002.seg", "ops/ab/x", "ops/b/y", "opsx"],
    "ops/a/0001": ["ops/a/0001.seg"],  # a prefix inside the last name
    "ops/a/0001.seg": ["ops/a/0001.seg"],  # a whole key
    "ops/c/": [],
    "nothing": [],
}


def test_list_returns_the_keys_under_a_prefix_sorted_with_sizes(
    remote_url: MakeUrl, closer: Closer
) -> None:
    r = closer(open_remote(remote_url()))
    assert r.list() == []
    assert r.list("ops/") == []
    sizes = filled(r)
    for prefix, expected in LISTINGS.items():
        listed = r.list(prefix)
        assert listed == [ObjectInfo(k, sizes[k]) for k in expected], prefix
        assert [o.key for o in listed] == sorted(o.key for o in listed)

    # no valid key starts with these: a remote may refuse them or list nothing, never more
    for prefix in [*BAD_KEYS[1:], "../", "../ops", "ops/../"]:
        try:
            listed = r.list(prefix)
        except InvalidInput:
            continue
        assert listed == [], prefix


# ---- delete ------------------------------------------------------------------------------------


def test_delete_removes_and_a_missing_key_is_fine(remote_url: MakeUrl, closer: Closer) -> None:
    r = closer(open_remote(remote_url()))
    r.put("ops/a/1.seg", b"one")
    r.put("ops/a/2.seg", b"two")
    r.delete("ops/a/1.seg")
    with pytest.raises(RemoteNotFound):
        r.get("ops/a/1.seg")
    assert r.list() == [ObjectInfo("ops/a/2.seg", 3)]
    r.delete("ops/a/1.seg")  # again: not an error
    r.delete("never/was/here")
    assert r.get("ops/a/2.seg") == b"two"
    assert r.put_if_absent("ops/a/1.seg", b"again") is True  # the key is free once more
    assert r.get("ops/a/1.seg") == b"again"


def test_a_key_that_names_a_folder_or_sits_under_an_object_is_missing(
    remote_url: MakeUrl, closer: Closer, request: pytest.FixtureRequest
) -> None:
    r = closer(open_remote(remote_url()))
    r.put("ops/a/1.seg", b"1")
    r.put("snap/1", b"2")
    for key in ("ops/a", "snap/1/x"):  # "ops/a" is a folder on disk; "snap/1" is a file
        with pytest.raises(RemoteNotFound):
            r.get(key)
        r.delete(key)
    assert contents(r) == {"ops/a/1.seg": b"1", "snap/1": b"2"}


# ---- keys --------------------------------------------------------------------------------------


def test_invalid_keys_are_refused_by_every_verb_and_change_nothing(
    remote_url: MakeUrl, closer: Closer, request: pytest.FixtureRequest
) -> None:
    r = closer(open_remote(remote_url()))
    r.put("a/b", b"keep")
    r.put("b", b"keep too")
    before = contents(r)
    abs_existed = os.path.exists("/abs")
    if kind_of(request) == "file":
        root = Path(urlsplit(r.url).path)
        outside_before = sorted(p.name for p in root.parent.iterdir())
    verbs: dict[str, Callable[[str], object]] = {
        "get": r.get,
        "put": lambda key: r.put(key, b"evil"),
        "put_if_absent": lambda key: r.put_if_absent(key, b"evil"),
        "delete": r.delete,
    }
    for key in BAD_KEYS:
        for verb, call in verbs.items():
            with pytest.raises(InvalidInput, match="invalid remote key"):
                call(key)
            assert contents(r) == before, (verb, key)
    assert os.path.exists("/abs") == abs_existed
    if kind_of(request) == "file":
        assert sorted(p.name for p in root.parent.iterdir()) == outside_before
        assert sorted(p.name for p in root.iterdir()) == ["a", "b"]


# ---- requests ----------------------------------------------------------------------------------


def test_requests_are_counted_by_verb(remote_url: MakeUrl, closer: Closer) -> None:
    r = closer(open_remote(remote_url()))
    assert r.requests == Counter()
    r.put("k", b"1")
    r.put_if_absent("k", b"2")  # a create-only write is a put
    r.put_if_absent("k2", b"2")
    r.get("k")
    with pytest.raises(RemoteNotFound):
        r.get("missing")
    r.list()
    r.list("k")
    r.delete("k")
    assert r.requests == Counter({"put": 3, "get": 2, "list": 2, "delete": 1})
    other = closer(open_remote(r.url))
    assert other.requests == Counter()  # per remote, not global


# ---- unreachable -------------------------------------------------------------------------------


def unreachable(url: str, kind: str, request: pytest.FixtureRequest) -> str:
    """The same remote, made unreachable: a folder that is not there, or a dead endpoint."""
    if kind == "file":
        return url + "/not-mounted"
    request.getfixturevalue("s3_server")  # the fake credentials: fail on the network alone
    endpoint = f"http://127.0.0.1:{free_port()}"
    return with_options(url, endpoint_url=endpoint, timeout="1", retries="1")


def test_an_unreachable_remote_is_unavailable(
    remote_url: MakeUrl, closer: Closer, request: pytest.FixtureRequest
) -> None:
    kind = kind_of(request)
    url = unreachable(remote_url(), kind, request)
    r = closer(open_remote(url))
    calls: dict[str, Callable[[], object]] = {
        "get": lambda: r.get("ops/a/1.seg"),
        "put": lambda: r.put("heartbeats/r1", b"x"),
        "put_if_absent": lambda: r.put_if_absent("ops/a/1.seg", b"x"),
        "list": lambda: r.list("ops/"),
        "list all": lambda: r.list(),
    }
    for verb, call in calls.items():
        started = time.monotonic()
        with pytest.raises(RemoteUnavailable) as info:
            call()
        assert time.monotonic() - started < 5, verb
        if kind == "file":
            assert "does not exist" in str(info.value)
        else:
            assert "could not connect" in str(info.value).lower(), str(info.value)
    if kind == "file":
        assert not Path(urlsplit(url).path).exists()  # not silently created on the local disk


def test_delete_on_an_unreachable_remote_is_unavailable(
    remote_url: MakeUrl, closer: Closer, request: pytest.FixtureRequest
) -> None:
    kind = kind_of(request)
    url = unreachable(remote_url(), kind, request)
    r = closer(open_remote(url))
    with pytest.raises(RemoteUnavailable):
        r.delete("ops/a/1.seg")


def test_s3_bucket_that_does_not_exist_is_unavailable(s3_server: S3Server, closer: Closer) -> None:
    bucket = f"no-such-bucket-{os.getpid()}"
    r = closer(open_remote(s3_server.url(bucket)))
    calls: list[Callable[[], object]] = [
        lambda: r.get("k"),
        lambda: r.put("k", b"x"),
        lambda: r.put_if_absent("k", b"x"),
        lambda: r.list(),
        lambda: r.delete("k"),
    ]
    for call in calls:
        with pytest.raises(RemoteUnavailable, match=f"bucket '{bucket}' does not exist"):
            call()


def test_s3_outage_then_recovery(s3_server: S3Server, closer: Closer) -> None:
    bucket = s3_server.new_bucket()
    r = closer(open_remote(s3_server.url(bucket)))
    r.put("ops/a/1.seg", b"before the outage")
    s3_server.stop()
    try:
        for call in (
            lambda: r.get("ops/a/1.seg"),
            lambda: r.put("heartbeats/r1", b"x"),
            lambda: r.put_if_absent("ops/a/2.seg", b"x"),
            lambda: r.list(),
        ):
            started = time.monotonic()
            with pytest.raises(RemoteUnavailable):
                call()
            assert time.monotonic() - started < 10
    finally:
        s3_server.start()
    assert r.get("ops/a/1.seg") == b"before the outage"  # the same remote object recovers
    assert r.put_if_absent("ops/a/2.seg", b"after") is True
    assert r.list() == [ObjectInfo("ops/a/1.seg", 17), ObjectInfo("ops/a/2.seg", 5)]


# ---- file:// only ------------------------------------------------------------------------------


def test_file_writes_leave_no_temporary_files_and_list_hides_them(
    tmp_path: Path, closer: Closer
) -> None:
    root = tmp_path / "shared"
    root.mkdir()
    r = closer(open_remote(f"file://{root}"))
    r.put("heartbeats/r1", b"1")
    r.put("heartbeats/r1", b"22")
    assert r.put_if_absent("ops/a/1.seg", b"seg") is True
    assert r.put_if_absent("ops/a/1.seg", b"other") is False
    r.put("big", b"x" * (1 << 20))
    names = [p.name for p in root.rglob("*")]
    assert not [n for n in names if n.startswith(".tmp-")], names

    # a writer that crashed mid-write leaves its temporary file behind: never listed
    (root / ".tmp-0123456789ab-orphan").write_bytes(b"half")
    (root / "ops" / "a" / ".tmp-0123456789ab-2.seg").write_bytes(b"half")
    assert [o.key for o in r.list()] == ["big", "heartbeats/r1", "ops/a/1.seg"]
    assert [o.key for o in r.list("ops/a/")] == ["ops/a/1.seg"]
    assert r.get("ops/a/1.seg") == b"seg"


def test_open_remote_refuses_an_unknown_scheme() -> None:
    with pytest.raises(InvalidInput, match="unknown scheme 'ftp'") as info:
        open_remote("ftp://x")
    assert "file://" in str(info.value)
    assert "s3://" in str(info.value)
    with pytest.raises(InvalidInput, match="unknown scheme ''"):
        open_remote("/just/a/path")


@pytest.mark.parametrize("url", ["file://host/path", "file://server.example/share/x", "file://"])
def test_file_url_must_name_a_local_absolute_path(url: str) -> None:
    with pytest.raises(InvalidInput, match="expected file:///absolute/path"):
        open_remote(url)


def test_file_url_with_a_relative_path_is_rejected() -> None:
    with pytest.raises(InvalidInput):
        open_remote("file:relative/dir")


# ---- s3:// only --------------------------------------------------------------------------------


def bucket_keys(s3_server: S3Server, bucket: str) -> list[str]:
    reply = s3_server.client().list_objects_v2(Bucket=bucket)
    return sorted(o["Key"] for o in reply.get("Contents", ()))


def test_s3_url_prefix_is_honoured(s3_server: S3Server, closer: Closer) -> None:
    bucket = s3_server.new_bucket()
    team = closer(open_remote(s3_server.url(bucket, "team")))
    team.put("format.json", b"{}")
    team.put_if_absent("ops/a/1.seg", b"seg")
    nested = closer(open_remote(s3_server.url(bucket, "org/unit/")))
    nested.put("format.json", b"{}")
    assert bucket_keys(s3_server, bucket) == [
        "org/unit/format.json",
        "team/format.json",
        "team/ops/a/1.seg",
    ]
    assert [o.key for o in team.list()] == ["format.json", "ops/a/1.seg"]  # prefix stripped
    assert [o.key for o in nested.list()] == ["format.json"]


def test_s3_prefixes_do_not_see_each_other(s3_server: S3Server, closer: Closer) -> None:
    bucket = s3_server.new_bucket()
    team = closer(open_remote(s3_server.url(bucket, "team")))
    team2 = closer(open_remote(s3_server.url(bucket, "team2")))
    team.put("ops/a/1.seg", b"team's")
    team2.put("ops/b/1.seg", b"team2's")
    assert team.list() == [ObjectInfo("ops/a/1.seg", 6)]
    assert team.list("ops/") == [ObjectInfo("ops/a/1.seg", 6)]
    assert team2.list() == [ObjectInfo("ops/b/1.seg", 7)]
    with pytest.raises(RemoteNotFound):
        team.get("ops/b/1.seg")
    assert team2.put_if_absent("ops/a/1.seg", b"mine") is True  # a different namespace
    team2.delete("ops/b/1.seg")
    team.delete("ops/b/1.seg")
    assert team.get("ops/a/1.seg") == b"team's"
    assert bucket_keys(s3_server, bucket) == ["team/ops/a/1.seg", "team2/ops/a/1.seg"]


def test_s3_url_is_checked() -> None:
    with pytest.raises(InvalidInput, match="expected s3://bucket/prefix"):
        open_remote("s3:///prefix")
    with pytest.raises(InvalidInput, match="unknown option 'bogus'"):
        open_remote("s3://bucket/p?bogus=1")
    with pytest.raises(InvalidInput, match="timeout and retries must be numbers"):
        open_remote("s3://bucket/p?timeout=soon")
