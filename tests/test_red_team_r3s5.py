"""Red team of round 3 session 5: snapshots in parts, the typed-mention timeline, the S3
owner check reused for a second. Each test is an attack that worked before its fix."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from chrysalis import Memory
from chrysalis.remotes import RemoteUnavailable, open_remote
from chrysalis.remotes import s3 as s3_remote
from chrysalis.sync import Sync, snapshots
from chrysalis.sync.layout import snapshot_key
from chrysalis.sync.segment import Kind, decode, encode

Opener = Callable[..., Memory]

DAY = 86400.0
T0 = datetime(2025, 2, 3, 8, tzinfo=UTC).timestamp()
NOW = T0 + 300 * DAY


@pytest.fixture(autouse=True)
def small_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parts of ~3 KiB: a few hundred beads make several parts."""
    monkeypatch.setattr(snapshots, "PART_BYTES", 3 << 10)


def _folder(tmp_path: Path) -> str:
    root = tmp_path / "remote"
    root.mkdir()
    return f"file://{root}"


def _published(open_memory: Opener, url: str) -> tuple[Memory, Sync, str]:
    a = open_memory("a", replica_id="aaaa")
    sa = Sync(a, url)
    a.append_beads(
        {"content": f"entry {i}: the {['heron', 'kiln', 'quay'][i % 3]} log, row {i * 11}"}
        for i in range(200)
    )
    sa.push()
    snap = sa.snapshot()
    assert snap["written"] and snap["parts"] >= 3
    return a, sa, snap["key"]


# ---- the bucket's writer -----------------------------------------------------------------


@pytest.mark.parametrize("raw", [1 << 46, 1 << 62], ids=["64TiB", "4EiB"])
def test_a_manifest_claiming_huge_part_sizes_is_refused_before_the_map_grows(
    open_memory: Opener, tmp_path: Path, raw: int
) -> None:
    """Plaintext remote: the writer rewrites a manifest's ``raw`` (the bytes a part holds,
    which the joiner reserves map space for up front) to absurd sizes, the parts untouched.
    Before: the joiner grew its LMDB map to twice the claim (an unmapped lmdb error, or a
    map of tens of TiB kept). Now the entry is refused as no part, the join replays the
    segments and the map stays small."""
    url = _folder(tmp_path)
    a, _, key = _published(open_memory, url)
    remote = open_remote(url)
    manifest = decode(remote.get(key), kind=Kind.SNAPSHOT, object_key=key, key=None)
    manifest["parts"][0]["raw"] = raw
    remote.put(key, encode(Kind.SNAPSHOT, manifest, object_key=key, key=None))
    c = open_memory("c")
    sc = Sync(c, url)
    assert sc.pull()["snapshot"] is None
    rejected = {r["key"]: r["error"] for r in sc.status()["rejected"]}
    assert "part 0 is not described as a part" in rejected[key]
    assert c.state_digest() == a.state_digest()
    assert c.store.env.info()["map_size"] < 1 << 34


def test_many_parts_claiming_more_than_the_disk_holds_are_refused_before_any_is_read(
    open_memory: Opener, tmp_path: Path
) -> None:
    """Each entry within the cap, but so many that together they claim more than the disk
    has free: the reservation refuses the snapshot (nothing fetched, the map untouched)."""
    url = _folder(tmp_path)
    a, _, key = _published(open_memory, url)
    remote = open_remote(url)
    manifest = decode(remote.get(key), kind=Kind.SNAPSHOT, object_key=key, key=None)
    c = open_memory("c")
    many = c.store.free_bytes() // snapshots.PART_INFLATED + 2
    last = {**manifest["parts"][-1], "raw": snapshots.PART_INFLATED}
    manifest["parts"] += [last] * many
    remote.put(key, encode(Kind.SNAPSHOT, manifest, object_key=key, key=None))
    map_size = c.store.env.info()["map_size"]
    sc = Sync(c, url)
    assert sc.pull()["snapshot"] is None
    rejected = {r["key"]: r["error"] for r in sc.status()["rejected"]}
    assert "does not fit" in rejected[key] and "bytes free" in rejected[key]
    assert c.state_digest() == a.state_digest()
    assert c.store.env.info()["map_size"] < max(map_size, 1 << 34)


def test_a_manifest_understating_a_parts_rows_bytes_is_refused(
    open_memory: Opener, tmp_path: Path
) -> None:
    """The ``raw`` a manifest gives must be what the part holds: a part claiming 1 byte (the
    map then grows mid-load, the stream fetched all over again) is not the part named."""
    url = _folder(tmp_path)
    a, _, key = _published(open_memory, url)
    remote = open_remote(url)
    manifest = decode(remote.get(key), kind=Kind.SNAPSHOT, object_key=key, key=None)
    manifest["parts"][1]["raw"] = 1
    remote.put(key, encode(Kind.SNAPSHOT, manifest, object_key=key, key=None))
    c = open_memory("c")
    sc = Sync(c, url)
    assert sc.pull()["snapshot"] is None
    rejected = {r["key"]: r["error"] for r in sc.status()["rejected"]}
    assert "holds other rows than its manifest says" in rejected[key]
    assert c.state_digest() == a.state_digest()


def test_names_planted_after_ours_do_not_make_a_publish_delete_our_snapshots(
    open_memory: Opener, tmp_path: Path
) -> None:
    """The writer (no key needed: only names) plants objects under our snapshot prefix with
    HLCs beyond any we will reach. Before: a publish kept "the newest two" manifests by name
    (the planted ones) and deleted every snapshot of ours, the one just written included,
    while our heartbeat announced it; a new laptop found none to load. Our HLC only grows, so
    a name after the one we just wrote is not ours: it neither counts as kept nor is touched."""
    url = _folder(tmp_path)
    a, sa, first = _published(open_memory, url)
    remote = open_remote(url)
    planted = [snapshot_key("aaaa", (1 << 64) - n) for n in (1, 2)]
    for p in planted:
        remote.put(p, b"not a snapshot")
    a.append_beads({"content": f"later entry {i} about the quay"} for i in range(20))
    sa.push()
    fresh = sa.snapshot()["key"]
    names = {o.key for o in remote.list("snapshots/")}
    assert {first, fresh} <= names  # KEEP_SNAPSHOTS = 2 of ours, both kept
    c = open_memory("c")
    sc = Sync(c, url)
    assert sc.pull()["snapshot"] == fresh
    assert c.state_digest() == a.state_digest()


# ---- another local user on 127.0.0.1 ---------------------------------------------------


def test_a_failed_request_forgets_that_the_s3_port_was_ours(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The S3 server on 127.0.0.1 stops (a request fails): within the second the owner check
    is reused, another local user could bind the port and get the next requests. A failure
    now drops the remembered answer, so the next request asks /proc again first."""
    calls: list[float] = []

    def check(url: str, what: str, error: type[Exception]) -> None:
        calls.append(time.monotonic())

    monkeypatch.setattr(s3_remote, "check_loopback_service", check)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    # Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
    remote = s3_remote.S3Remote("s3://b/p?endpoint_url=http://127.0.0.1:9&retries=1&timeout=1")
    try:
        with pytest.raises(RemoteUnavailable):
            remote.get("format.json")
        assert len(calls) == 1
        with pytest.raises(RemoteUnavailable):
            remote.get("format.json")  # at once: well within OWNER_CHECKED_FOR
        assert len(calls) == 2
    finally:
        remote.close()


# ---- the text itself: the typed-mention timeline ---------------------------------------


CITIES = ["Tampere", "Reykjavik", "Bergen", "Kyoto"]


@pytest.fixture
def voices(open_memory: Opener) -> Memory:
    """The user's home told once; later, other voices say "home is X now" in the first
    person: a tool's output (a fetched page), a bead with another speaker (a group chat
    import), an ingested letter. The facts layer gives those to their speakers; the
    timeline has no speaker of its own and must not take them for the user's."""
    mem = open_memory(embedder="deterministic", extractor="rules", summary_after=None)
    mem.append_beads(
        [
            {"id": "u0", "content": "home base is Tampere now, the flat even has a sauna",
             "ts": T0, "session_id": "s0"},
            {"id": "t1", "role": "tool", "ts": T0 + 40 * DAY, "session_id": "s1",
             "content": "home base is Reykjavik now, the flat looks over the harbour"},
            {"id": "o2", "source": "Dana", "ts": T0 + 80 * DAY, "session_id": "s2",
             "content": "I live in Bergen now, my flat is tiny but warm"},
            {"id": "f3", "source": "letters/kyoto.txt", "ts": T0 + 120 * DAY,
             "session_id": "s3", "content": "I live in Kyoto now and my flat faces a temple"},
        ]
    )  # fmt: skip
    mem.wait_indexed(timeout=60)
    assert mem.wait_learned(timeout=60)
    return mem


def test_only_the_users_own_words_enter_the_timeline(voices: Memory) -> None:
    latest = voices.reader.latest_mentions("lives_in", NOW, 8)
    assert [b for _, b, _ in latest] == ["u0"], latest
    named = voices.reader.mentions_of(["t1", "o2", "f3"])
    assert all(not own for rows in named.values() for _, _, own in rows), named


def test_another_voice_is_not_pinned_as_where_the_user_lives(voices: Memory) -> None:
    from tests.test_context import _first

    ctx = voices.context("which city am I living in at the moment?", now=NOW)
    assert _first(ctx.text, CITIES) == "Tampere", ctx.text


@pytest.mark.parametrize(
    "text",
    [
        "pasted from the family chat\n[18:40] Noor: home base is Bergen now, the flat is cold",
        "Message from Ilse: I live in Bergen now, come and visit the flat",
        "His answer was: I live in Bergen now, in a flat by the harbour.",
        "Sample story for the class: I live in Kyoto now and my flat faces a temple",
    ],
    ids=["chat-log", "message-from", "answer-was", "sample-story"],
)
def test_a_pasted_message_in_the_users_bead_is_not_their_own_statement(text: str) -> None:
    from chrysalis.core.models import Bead
    from chrysalis.extract.rules import RulesExtractor

    got = RulesExtractor().extract([Bead(id="p1", content=text, ts=T0)])[0]
    assert [m for m in got.mentions if m.own] == [], got.mentions
