"""The keyword index on its own: filters, match_all, idempotent apply, forget, reopen, repair."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

import pytest

from chrysalis.core.errors import ClosedError
from chrysalis.core.models import Filters
from chrysalis.search import KeywordIndex

SECRET = "ZEBRAQUOKKA123"


def rows(n: int) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (
            f"bead:b{i}",
            f"status update number {i} about teas" + (" zucchini" if i % 10 == 7 else ""),
            {
                "session": f"s{i % 2}",
                "role": "user" if i % 4 else "assistant",
                "ts": float(i),
                "importance": i / n,
                "tags": ["garden"] if i % 3 == 0 else [],
            },
        )
        for i in range(n)
    ]


def keys(hits: list[Any]) -> set[str]:
    return {h.key for h in hits}


def index_bytes(path: Path) -> bytes:
    """Every file's bytes; a file a background merge removed meanwhile is skipped."""
    out = []
    for p in path.rglob("*"):
        with contextlib.suppress(FileNotFoundError, IsADirectoryError):
            out.append(p.read_bytes())
    return b"".join(out)


@pytest.fixture
def kw(tmp_path: Path) -> Any:
    index = KeywordIndex(tmp_path / "kw")
    index.apply([*rows(200), ("node:veg", "zucchini plants", {})], [], {"a": 201})
    yield index
    index.close()


def test_filters_pick_the_top_k_among_what_passes(kw: KeywordIndex) -> None:
    zucchini = {f"bead:b{i}" for i in range(7, 200, 10)}
    assert keys(kw.search("zucchini", 100)) == zucchini | {"node:veg"}
    assert keys(kw.search("zucchini", 100, Filters(session_id="s1"))) == zucchini | {"node:veg"}
    got = keys(kw.search("zucchini", 100, Filters(role="assistant", kinds=["bead"])))
    assert got == {k for k in zucchini if int(k[6:]) % 4 == 0}  # none: 7 mod 10 is odd
    assert got == set()
    got = keys(kw.search("zucchini", 100, Filters(tags=["garden"], kinds=["bead"])))
    assert got == {k for k in zucchini if int(k[6:]) % 3 == 0}
    got = keys(kw.search("zucchini", 10, Filters(since=100.0, until=130.0)))
    assert got == {"node:veg", "bead:b107", "bead:b117", "bead:b127"}  # bead filters pass nodes
    assert "node:veg" in keys(kw.search("zucchini", 100, Filters(min_importance=0.9)))
    assert keys(kw.search("zucchini", 100, Filters(min_importance=0.9, kinds=["bead"]))) == {
        f"bead:b{i}" for i in (187, 197)
    }
    assert keys(kw.search("zucchini", 5, Filters(kinds=["node"]))) == {"node:veg"}
    assert kw.search("the of and", 5) == []  # only stop words: kept, and nothing holds them


def test_scores_rank_rarer_words_higher(kw: KeywordIndex) -> None:
    hits = kw.search("teas zucchini", 5)
    assert hits[0].score >= hits[-1].score > 0
    assert all(h.key in {"node:veg"} | {f"bead:b{i}" for i in range(7, 200, 10)} for h in hits)


def test_match_all_is_stemmed_unbounded_and_beads_only(kw: KeywordIndex) -> None:
    assert len(kw.match_all("tea")) == 200  # "tea" finds "teas"
    assert set(kw.match_all("zucchini teas")) == {f"bead:b{i}" for i in range(7, 200, 10)}
    assert kw.match_all("zucchini plants") == []  # the node holds them: beads only
    assert kw.match_all("") == []


def test_apply_again_is_idempotent_and_reopens(tmp_path: Path) -> None:
    index = KeywordIndex(tmp_path / "kw")
    index.apply(rows(50), [], {"a": 50})
    index.apply(rows(50), [], {"a": 50})  # as after a crash before the caller saw it
    assert index.count() == 50 and index.size == 50
    assert len(index.match_all("status")) == 50
    index.apply([], ["bead:b3", "bead:b3"], {"a": 51})
    index.apply([], ["bead:b3"], {"a": 51})
    index.close()
    again = KeywordIndex(tmp_path / "kw")
    assert again.watermark() == {"a": 51} and again.count() == 49
    assert not again.has("bead:b3") and again.has("bead:b4")
    again.close()


def test_a_forget_leaves_no_file_holding_the_text(tmp_path: Path) -> None:
    index = KeywordIndex(tmp_path / "kw")
    for start in range(0, 600, 100):  # several commits: several segments
        batch = rows(600)[start : start + 100]
        index.apply(batch, [], {"a": start + 100})
        index.commit()
    index.apply([("bead:s", f"my password is {SECRET} now", {"role": "user"})], [], {"a": 601})
    index.commit()
    index.apply([("bead:s", f"my password is {SECRET} again", {"role": "user"})], [], {"a": 602})
    index.commit()
    assert index.has_text(SECRET) and SECRET.encode() in index_bytes(tmp_path / "kw")
    index.apply([], ["bead:s"], {"a": 603})
    assert not index.has_text(SECRET) and not index.has_text("again")
    assert SECRET.encode() not in index_bytes(tmp_path / "kw")
    assert index.count() == 600 and len(index.match_all("status")) == 600  # the rest stayed
    assert keys(index.search("zucchini", 100)) == {f"bead:b{i}" for i in range(7, 600, 10)}
    rewritten = Filters(tags=["garden"], session_id="s1", since=100.0, until=300.0)
    assert keys(index.search("zucchini", 100, rewritten)) == {
        f"bead:b{i}" for i in range(107, 300, 10) if i % 3 == 0
    }  # the fields came through the rewrite
    index.close()
    reopened = KeywordIndex(tmp_path / "kw")
    assert reopened.count() == 600 and not reopened.has_text(SECRET)
    reopened.close()


def test_a_damaged_directory_is_rebuilt(tmp_path: Path) -> None:
    index = KeywordIndex(tmp_path / "kw")
    index.apply(rows(20), [], {"a": 20})
    index.close()
    for f in (tmp_path / "kw").iterdir():
        if f.is_file():
            f.write_bytes(b"garbage" * 10)
    fresh, reset = KeywordIndex.open_or_reset(tmp_path / "kw")
    assert reset and fresh.count() == 0 and fresh.watermark() == {}
    fresh.apply(rows(5), [], {"a": 5})
    assert fresh.count() == 5
    fresh.close()
    again, reset = KeywordIndex.open_or_reset(tmp_path / "kw")
    assert not reset and again.count() == 5
    again.close()


def test_an_older_fts5_file_is_deleted(tmp_path: Path) -> None:
    from chrysalis import Memory

    index_dir = tmp_path / "m" / "index"
    index_dir.mkdir(parents=True)
    for suffix in ("", "-wal", "-shm"):
        (index_dir / f"keyword.sqlite{suffix}").write_bytes(SECRET.encode())
    with Memory.open(tmp_path / "m", sync=False) as mem:
        mem.append_bead("a note about zucchini")
        assert mem.retrieve("zucchini", k=1, strategy="keyword").items
    assert not list(index_dir.glob("keyword.sqlite*"))


def test_an_index_open_elsewhere_is_busy_not_damaged(tmp_path: Path) -> None:
    index = KeywordIndex(tmp_path / "kw")
    index.apply(rows(5), [], {"a": 5})
    with pytest.raises(RuntimeError, match="open elsewhere"):
        KeywordIndex.open_or_reset(tmp_path / "kw")
    assert index.count() == 5 and len(index.match_all("status")) == 5  # not wiped
    index.close()


def test_a_watermark_over_ops_that_change_nothing_is_saved_at_close(tmp_path: Path) -> None:
    index = KeywordIndex(tmp_path / "kw")
    index.apply([], ["bead:absent"], {"a": 7})  # no commit: nothing to write
    assert index.watermark() == {"a": 7} and index.count() == 0
    index.apply(rows(3), [], {"a": 10})
    index.apply([], [], {"a": 12})
    assert index.watermark() == {"a": 12} and index.count() == 3
    index.close()
    again = KeywordIndex(tmp_path / "kw")
    assert again.watermark() == {"a": 12} and again.count() == 3
    again.close()


def test_rows_not_yet_committed_are_searched_at_once(tmp_path: Path) -> None:
    """A commit fsyncs its files; rows wait for a batch, yet search, match_all and has find
    them at once (overlay.py), filters apply to them, and a new version hides the old."""
    index = KeywordIndex(tmp_path / "kw")
    index.apply(rows(50), [], {"a": 50})
    index.commit()
    index.apply(
        [("bead:b7", "now about kiwi only", {"session": "s1", "role": "user", "ts": 7.0}),
         ("bead:new", "fresh kiwi and zucchini", {"session": "s9", "role": "user", "ts": 99.0})],
        [], {"a": 52},
    )  # fmt: skip
    assert index._searcher.num_docs == 51  # not committed yet: 50 rows and the watermark's
    assert keys(index.search("kiwi", 10)) == {"bead:b7", "bead:new"}
    assert "bead:b7" not in keys(index.search("zucchini", 50))  # its old version is hidden
    assert "bead:new" in keys(index.search("zucchini", 50))
    assert keys(index.search("kiwi", 10, Filters(session_id="s9"))) == {"bead:new"}
    assert keys(index.search("kiwi", 10, Filters(kinds=["node"]))) == set()
    assert set(index.match_all("kiwi")) == {"bead:b7", "bead:new"}
    assert index.has("bead:new") and index.watermark() == {"a": 52}
    # a rare word in a pending row outranks a common one in committed rows
    assert index.search("kiwi status", 1)[0].key in {"bead:b7", "bead:new"}
    index.close()  # commits what waits
    reopened = KeywordIndex(tmp_path / "kw")
    assert keys(reopened.search("kiwi", 10)) == {"bead:b7", "bead:new"}
    assert reopened.watermark() == {"a": 52}
    reopened.close()


def test_a_forget_of_a_row_not_yet_committed_leaves_no_file_holding_it(tmp_path: Path) -> None:
    index = KeywordIndex(tmp_path / "kw")
    index.apply(rows(30), [], {"a": 30})
    index.commit()
    index.apply([("bead:s", f"my password is {SECRET}", {"role": "user"})], [], {"a": 31})
    assert index.has_text(SECRET) and index.has("bead:s")
    index.apply([], ["bead:s"], {"a": 32})
    assert not index.has("bead:s") and index.search(SECRET, 5) == []
    assert not index.has_text(SECRET)
    assert SECRET.encode() not in index_bytes(tmp_path / "kw")
    assert index.count() == 30
    index.close()


def test_a_batch_is_committed_once_it_is_large_or_old(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chrysalis.search import keyword

    index = KeywordIndex(tmp_path / "kw")
    monkeypatch.setattr(keyword, "COMMIT_ROWS", 20)
    index.apply(rows(10), [], {"a": 10})
    assert index._searcher.num_docs == 0  # waiting
    index.apply(rows(25)[10:], [], {"a": 25})
    assert index._searcher.num_docs == 26  # 25 rows and the watermark's document
    index.apply([("bead:x", "one more", {})], [], {"a": 26})
    index.commit_due()  # the worker's tick: the oldest has not waited a second yet
    assert index._searcher.num_docs == 26
    monkeypatch.setattr(keyword, "COMMIT_SECONDS", 0.0)
    index.commit_due()
    assert index._searcher.num_docs == 27
    index.apply([("bead:y", "and another", {})], [], {"a": 27})  # old at once: committed
    assert index._searcher.num_docs == 28
    index.close()


def test_rows_waiting_for_a_commit_survive_a_forget_of_other_text(tmp_path: Path) -> None:
    """Found by the soak: the forget's rewrite ends the writer to settle merges, which drops
    what it holds uncommitted; the rows waiting in the overlay were lost with it."""
    index = KeywordIndex(tmp_path / "kw")
    index.apply(rows(30), [], {"a": 30})
    index.commit()
    index.apply([("bead:w", "a waiting walrus", {"role": "user"})], [], {"a": 31})
    index.apply([], ["bead:b3"], {"a": 32})  # a forget of committed text
    assert keys(index.search("walrus", 5)) == {"bead:w"}
    index.close()
    reopened = KeywordIndex(tmp_path / "kw")
    assert keys(reopened.search("walrus", 5)) == {"bead:w"} and not reopened.has("bead:b3")
    reopened.close()


def test_searches_run_while_rows_are_written(tmp_path: Path) -> None:
    """Search reads the overlay without the index's lock (a commit holds it for an fsync):
    rows written meanwhile never break a search or hide a row that is there."""
    import threading

    index = KeywordIndex(tmp_path / "kw")
    index.apply(rows(20), [], {"a": 20})
    index.commit()
    errors: list[BaseException] = []
    done = threading.Event()

    def write() -> None:
        try:
            for i in range(300):
                index.apply([(f"bead:w{i}", f"walrus number {i}", {})], [], {"a": 21 + i})
        except BaseException as exc:  # handed to the test's thread
            errors.append(exc)
        finally:
            done.set()

    writer = threading.Thread(target=write)
    writer.start()
    searched = 0
    while not done.is_set() or searched < 50:
        assert len(index.search("zucchini", 5)) == 2  # b7 and b17, committed, always there
        index.search("walrus", 10)
        searched += 1
    writer.join()
    assert not errors
    assert len(index.search("walrus", 500)) == 300
    index.close()


def files_in(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if not p.is_dir())


def test_a_closed_index_leaves_its_directory_alone(tmp_path: Path) -> None:
    """Once close returns, nothing of tantivy's writes in the directory: a caller may remove
    it. (The binding's reader reloaded by itself half a second after the last commit, the
    one close makes too, and created .tantivy-meta.lock again in a directory being removed:
    "Directory not empty".)"""
    path = tmp_path / "kw"
    index = KeywordIndex(path)
    index.apply(rows(10), [], {"r": 10})  # fewer than a batch: close commits them
    index.close()
    for name in files_in(path):  # a removal part way: the lock files gone, meta.json not yet
        if name.endswith(".lock"):
            (path / name).unlink()
    left = files_in(path)
    for _ in range(30):  # tantivy's meta-file watcher polls every 0.5 s
        time.sleep(0.05)
        assert files_in(path) == left
    with pytest.raises(ClosedError):
        index.search("teas", 5)
    with pytest.raises(ClosedError):
        index.apply(rows(1), [], {"r": 11})
    index.close()  # a second close does nothing
