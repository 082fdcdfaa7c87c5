from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chrysalis import InvalidInput, Memory, NotFound
from chrysalis.ingest.files import (
    Chunk,
    chunk,
    forget_source,
    ingest_path,
    ingest_text,
    iter_files,
    kind_of,
    read_text_file,
)
from tests.conftest import exchange

MARKDOWN = """\
---
title: front matter
# a YAML comment, not a heading
---

Intro paragraph before any heading.

# Guide

## Install

Run the installer.

```sh
# a shell comment, not a heading

make install
```

Setext heading
--------------

Text under the setext heading.

## Usage
Call it with zebrafish.
"""

PYTHON = '''\
"""Module docstring."""

import os

CONSTANT = 1


# The helper, with a comment right above it.
@decorator
@other(1)
def helper(x):
    return x


class Thing:
    """A thing."""

    def method(self):
        return os.sep

    def other(self):
        return 2

async def fetch():
    pass
if __name__ == "__main__":
    helper(1)
'''

GO = """\
// Package main greets.
package main

import "fmt"

// Greet says hello.
func Greet(name string) string {
\tx := 1

\treturn fmt.Sprintf("hi %s %d", name, x)
}
type T struct {
\tA int
}

/* A block comment
 * about main. */

func main() {
\tfmt.Println(Greet("x"))
}
"""


def spans(chunks: list[Chunk]) -> list[tuple[int, int]]:
    return [(c.start_line, c.end_line) for c in chunks]


def assert_well_formed(text: str, chunks: list[Chunk], max_chars: int) -> None:
    """In order, non-empty, within max_chars, text == its lines (unless a cut line), and
    every non-blank line covered exactly once."""
    lines = text.split("\n")
    covered: list[int] = []
    for c in chunks:
        assert c.text.strip() and len(c.text) <= max_chars
        assert 1 <= c.start_line <= c.end_line <= len(lines)
        whole = "\n".join(lines[c.start_line - 1 : c.end_line])
        if c.text != whole:  # a piece of one over-long line
            assert c.start_line == c.end_line and c.text in whole and len(whole) > max_chars
        elif covered:
            assert c.start_line > covered[-1]
        if not covered or covered[-1] != c.end_line:
            covered.extend(range(c.start_line, c.end_line + 1))
    nonblank = [i + 1 for i, line in enumerate(lines) if line.strip()]
    assert [i for i in covered if lines[i - 1].strip()] == nonblank


# ---- chunking -------------------------------------------------------------------------------


def test_markdown_splits_at_headings_not_in_fences_or_front_matter() -> None:
    chunks = chunk(MARKDOWN, "markdown")
    assert_well_formed(MARKDOWN, chunks, 1500)
    assert [(c.start_line, c.end_line, c.title) for c in chunks] == [
        (1, 6, None),  # front matter and intro
        (8, 18, "Guide > Install"),  # the heading-only "# Guide" goes with what follows
        (20, 23, "Guide > Setext heading"),
        (25, 26, "Guide > Usage"),
    ]
    assert "# a shell comment" in chunks[1].text and chunks[1].text.startswith("# Guide")


def test_markdown_big_section_splits_at_paragraphs_and_keeps_fences_whole() -> None:
    fence = "```\nline a\n\nline b\n```"
    paras = [f"Paragraph {i} " + "word " * 20 for i in range(6)]
    text = "# Big\n\n" + "\n\n".join([*paras[:3], fence, *paras[3:]]) + "\n"
    chunks = chunk(text, "markdown", max_chars=250)
    assert_well_formed(text, chunks, 250)
    assert len(chunks) > 1 and all(c.title == "Big" for c in chunks)
    assert chunks[0].text.startswith("# Big")
    assert any(fence in c.text for c in chunks)  # the blank line inside did not split it


def test_python_top_level_defs_with_decorators_and_comments() -> None:
    chunks = chunk(PYTHON, "python")
    assert_well_formed(PYTHON, chunks, 1500)
    assert [(c.start_line, c.end_line, c.title) for c in chunks] == [
        (1, 5, None),  # docstring, import, constant: module code grouped
        (8, 12, "helper"),  # comment and decorators stay with their def
        (15, 22, "Thing"),
        (24, 25, "fetch"),
        (26, 27, None),  # module code after a def, even without a blank line
    ]
    assert chunks[1].text.startswith("# The helper") and "@other(1)" in chunks[1].text


def test_python_class_too_big_splits_at_methods_and_bad_syntax_falls_back() -> None:
    chunks = chunk(PYTHON, "python", max_chars=60)
    assert_well_formed(PYTHON, chunks, 60)
    titled = {c.title: (c.start_line, c.end_line) for c in chunks if c.title}
    assert titled["Thing"] == (15, 16)  # header and docstring
    assert titled["Thing.method"] == (18, 19)
    assert titled["Thing.other"] == (21, 22)

    broken = "def ok():\n    return 1\n\ndef broken(:\n    pass\n"
    fallback = chunk(broken, "python")
    assert_well_formed(broken, fallback, 1500)
    assert spans(fallback) == [(1, 2), (4, 5)]  # the code splitter: "def" blocks


def test_code_splits_at_definitions_and_top_level_closing_braces() -> None:
    chunks = chunk(GO, "code")
    assert_well_formed(GO, chunks, 1500)
    assert [(c.start_line, c.end_line) for c in chunks] == [
        (1, 4),  # package comment, package, import
        (6, 11),  # comment + func; the blank line inside the body does not split it
        (12, 14),  # after a closing brace, even without a blank line
        (16, 21),  # a comment block stays with the definition after it
    ]
    assert chunks[1].title == "func Greet(name string) string {"


def test_text_paragraphs_pack_and_long_ones_split_at_lines() -> None:
    text = "First para,\nstill first.\n\n\nSecond para.\n\nThird para.\n"
    assert spans(chunk(text, "text")) == [(1, 7)]  # paragraphs are packed while they fit
    assert spans(chunk(text, "text", max_chars=25)) == [(1, 2), (5, 7)]
    assert [c.text for c in chunk(text, "text", max_chars=12)] == [
        "First para,",
        "still first.",
        "Second para.",
        "Third para.",
    ]

    long_para = "\n".join(f"line {i:02d} of a long paragraph" for i in range(20))
    pieces = chunk(long_para, "text", max_chars=100)
    assert_well_formed(long_para, pieces, 100)
    assert len(pieces) > 1
    assert all(p.text == "\n".join(long_para.split("\n")[p.start_line - 1 : p.end_line])
               for p in pieces)  # fmt: skip

    one_line = "word " * 100
    cut = chunk(one_line, "text", max_chars=64)
    assert_well_formed(one_line, cut, 64)
    assert all(c.start_line == c.end_line == 1 for c in cut)
    assert "".join(c.text for c in cut).split() == one_line.split()


def test_chunk_edge_cases() -> None:
    assert chunk("", "markdown") == [] and chunk("\n \n\t\n", "python") == []
    crlf = "# A\r\nx\r\n\r\n# B\r\ny\r\n"
    assert [(c.text, c.start_line) for c in chunk(crlf, "markdown")] == [
        ("# A\nx", 1),
        ("# B\ny", 4),
    ]
    with pytest.raises(InvalidInput, match="unknown kind"):
        chunk("x", "rst")
    with pytest.raises(InvalidInput, match="max_chars"):
        chunk("x", "text", max_chars=0)


_LINE = st.sampled_from(
    ["", "  ", "# Head", "## Sub", "text here", "def f():", "    return 1", "@deco", "}",
     "func x() {", "```", "---", "===", "class A:", "x" * 90, "// note", "end"]
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(_LINE, max_size=40), st.sampled_from(["markdown", "python", "code", "text"]),
       st.integers(min_value=8, max_value=200))  # fmt: skip
def test_chunks_always_cover_every_nonblank_line_in_order(
    lines: list[str], kind: str, max_chars: int
) -> None:
    text = "\n".join(lines)
    assert_well_formed(text, chunk(text, kind, max_chars), max_chars)


def test_kind_of_and_binary_files(tmp_path: Path) -> None:
    assert [kind_of(n) for n in ("a.md", "B.MARKDOWN", "x.py", "y.go", "z.ts", "notes", "r.txt")] == [
        "markdown", "markdown", "python", "code", "code", "text", "text"
    ]  # fmt: skip
    nul = tmp_path / "image.png"
    nul.write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    latin = tmp_path / "latin1.txt"
    latin.write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(InvalidInput, match=r"image\.png: binary file"):
        read_text_file(nul)
    assert read_text_file(latin) == "caf\xe9"  # read as cp1252 (chrysalis.ingest.encoding)


# ---- ingesting ------------------------------------------------------------------------------


def test_ingest_file_beads_with_span_refs(
    open_memory: Callable[..., Memory], tmp_path: Path
) -> None:
    mem = open_memory("m")
    path = tmp_path / "guide.md"
    path.write_text(MARKDOWN)
    seen: list[tuple[int, int]] = []
    [res] = ingest_path(mem, path, progress=lambda d, t: seen.append((d, t)))
    source = str(path.resolve())
    assert (res.source, res.kind, res.chunks, res.added, res.unchanged, res.removed, res.skipped) == (
        source, "markdown", 4, 4, 0, 0, False
    )  # fmt: skip
    size = path.stat().st_size
    assert seen[0] == (0, size) and seen[-1] == (size, size)
    lines = MARKDOWN.split("\n")
    for bead_id in res.bead_ids:
        bead = mem.get_bead(bead_id)
        [ref] = bead.span_refs
        assert ref.path == source == bead.source
        assert bead.content == "\n".join(lines[ref.start_line - 1 : ref.end_line])
        assert bead.role == "note" and bead.tags == ["ingest", "markdown"]
        assert bead.session_id is not None and bead.session_id.startswith("ingest:")
        assert bead.session_id.endswith("guide.md")
    assert [b.id for b in mem.last_beads(10, session_id=bead.session_id)] == res.bead_ids


def test_reingest_unchanged_writes_nothing(
    open_memory: Callable[..., Memory], tmp_path: Path
) -> None:
    mem = open_memory("m")
    path = tmp_path / "mod.py"
    path.write_text(PYTHON)
    [first] = ingest_path(mem, path)
    vv = mem.version_vector()
    [again] = ingest_path(mem, path)
    assert again.skipped and (again.added, again.removed, again.unchanged) == (0, 0, first.chunks)
    assert again.bead_ids == first.bead_ids
    assert mem.version_vector() == vv
    # Other settings are other beads: the same text under another kind is chunked again.
    other = ingest_text(mem, PYTHON, source=str(path.resolve()), kind="text")
    assert not other.skipped and other.removed == first.chunks


def test_changed_file_replaces_only_changed_chunks(
    open_memory: Callable[..., Memory], tmp_path: Path
) -> None:
    mem = open_memory("m")
    path = tmp_path / "doc.md"
    v1 = "# One\n\nalpha text\n\n# Two\n\nbeta text\n\n# Three\n\ngamma text\n"
    path.write_text(v1)
    [r1] = ingest_path(mem, path)
    assert r1.chunks == 3
    v2 = v1.replace("gamma text", "delta text")  # same line count: earlier chunks stay put
    path.write_text(v2)
    [r2] = ingest_path(mem, path)
    assert (r2.chunks, r2.added, r2.unchanged, r2.removed, r2.skipped) == (3, 1, 2, 1, False)
    assert r2.bead_ids[:2] == r1.bead_ids[:2]
    with pytest.raises(NotFound, match="forgotten"):
        mem.get_bead(r1.bead_ids[2])
    assert mem.get_bead(r2.bead_ids[2]).content == "# Three\n\ndelta text"

    # A line inserted above moves the chunks below it: they get beads naming their new lines.
    v3 = v2.replace("alpha text", "alpha text\nmore alpha")
    path.write_text(v3)
    [r3] = ingest_path(mem, path)
    assert (r3.added, r3.unchanged, r3.removed) == (3, 0, 3)
    lines = v3.split("\n")
    for bead_id in r3.bead_ids:
        bead = mem.get_bead(bead_id)
        ref = bead.span_refs[0]
        assert bead.content == "\n".join(lines[ref.start_line - 1 : ref.end_line])

    # Back to an earlier version: forgotten ids are never reused, so new ones are made.
    path.write_text(v1)
    [r4] = ingest_path(mem, path)
    assert r4.added == 3 and not set(r4.bead_ids) & set(r1.bead_ids)
    assert [mem.get_bead(i).content for i in r4.bead_ids] == [
        "# One\n\nalpha text", "# Two\n\nbeta text", "# Three\n\ngamma text"
    ]  # fmt: skip
    assert len(list(mem.all_beads())) == 3

    gone = forget_source(mem, r4.source)
    assert gone.removed == 3 and list(mem.all_beads()) == []


def test_interrupted_ingest_leaves_no_stray_beads(
    open_memory: Callable[..., Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = open_memory("m")
    v1 = "# One\n\nalpha\n\n# Two\n\nbeta\n"
    r1 = ingest_text(mem, v1, source="doc.md")

    def crash(bead_id: str) -> None:
        raise RuntimeError("power cut")

    with monkeypatch.context() as m:  # v2's beads are in, v1's not yet forgotten: a crash
        m.setattr(mem, "forget", crash)
        with pytest.raises(RuntimeError):
            ingest_text(mem, v1.replace("beta", "gamma"), source="doc.md")
    assert len(list(mem.all_beads())) == 3
    again = ingest_text(mem, v1, source="doc.md")  # back to v1: not skipped, v2's bead goes
    assert not again.skipped and again.bead_ids == r1.bead_ids and again.removed == 1
    assert [b.id for b in mem.all_beads()] == r1.bead_ids
    assert ingest_text(mem, v1, source="doc.md").skipped


def test_directory_ingest_skips_hidden_binary_and_vendored(
    open_memory: Callable[..., Memory], tmp_path: Path
) -> None:
    mem = open_memory("m")
    root = tmp_path / "proj"
    files = {
        "README.md": "# Proj\n\nAbout.\n",
        "src/app.py": "def main():\n    return 0\n",
        "src/lib.rs": "fn f() {}\n",
        "src/z/notes.txt": "Notes.\n",
        ".hidden.md": "# secret\n",
        ".cache/x.md": "# cached\n",
        ".git/config": "[core]\n",
        "node_modules/pkg/index.js": "function x() {}\n",
        "src/__pycache__/app.txt": "junk\n",
        ".venv/lib/site.py": "x = 1\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "logo.png").write_bytes(b"\x89PNG\0\0")
    (root / "old.txt").write_bytes(b"caf\xe9 \x81\x8d")  # not UTF-8; 0x81 is no cp1252 letter
    skipped: list[tuple[str, str]] = []
    results = ingest_path(mem, root, on_skip=lambda p, why: skipped.append((p.name, why)))
    rel = [Path(r.source).relative_to(root.resolve()).as_posix() for r in results]
    assert rel == ["README.md", "src/app.py", "src/lib.rs", "src/z/notes.txt"]
    assert [r.kind for r in results] == ["markdown", "python", "code", "text"]
    assert skipped == [  # every one told, with why: a folder once, not each file in it
        (".cache", "hidden folder, not ingested"),
        (".git", "hidden folder, not ingested"),
        (".hidden.md", "hidden file, not ingested (ingest it by name if you mean it)"),
        (".venv", "hidden folder, not ingested"),
        ("node_modules", "vendored or generated folder, not ingested"),
        ("__pycache__", "vendored or generated folder, not ingested"),
        ("logo.png", "binary file (NUL byte at offset 4), not ingested"),
        ("old.txt", "not text: neither UTF-8 nor cp1252/Latin-1 (byte 0xe9 at offset 3), "
                    "not ingested"),
    ]  # fmt: skip
    assert [p.name for p in iter_files(root)] == ["README.md", "logo.png", "old.txt",
                                                  "app.py", "lib.rs", "notes.txt"]  # fmt: skip

    vv = mem.version_vector()
    assert all(r.skipped for r in ingest_path(mem, root))
    assert mem.version_vector() == vv

    (root / "src" / "lib.rs").unlink()  # gone from the directory: its beads go too
    again = ingest_path(mem, root)
    [dropped] = [r for r in again if r.source.endswith("lib.rs")]
    assert dropped.removed == 1 and dropped.chunks == 0
    with pytest.raises(NotFound):
        mem.get_bead(results[2].bead_ids[0])
    assert len(list(mem.all_beads())) == 3


def test_bad_inputs_are_refused_with_the_file_named(
    open_memory: Callable[..., Memory], tmp_path: Path
) -> None:
    mem = open_memory("m")
    blob = tmp_path / "data.bin"
    blob.write_bytes(b"abc\0def")
    with pytest.raises(InvalidInput, match=r"data\.bin: binary file \(NUL byte at offset 3\)"):
        ingest_path(mem, blob)
    with pytest.raises(NotFound, match=r"missing\.md"):
        ingest_path(mem, tmp_path / "missing.md")
    with pytest.raises(InvalidInput, match="session id"):
        ingest_text(mem, "x", source="s", session_id="has space")
    with pytest.raises(InvalidInput, match="source"):
        ingest_text(mem, "x", source="")
    assert mem.version_vector() == {}


def test_ingest_text_sessions_progress_and_empty(open_memory: Callable[..., Memory]) -> None:
    mem = open_memory("m")
    text = "\n\n".join(f"Paragraph number {i}. " + "filler " * 30 for i in range(40))
    calls: list[tuple[int, int]] = []
    res = ingest_text(mem, text, source="my notes/today (v2).txt", max_chars=400,
                      progress=lambda d, t: calls.append((d, t)))  # fmt: skip
    assert res.chunks == res.added > 1
    assert calls[0] == (0, res.chunks) and calls[-1] == (res.chunks, res.chunks)
    bead = mem.get_bead(res.bead_ids[0])
    assert bead.session_id == "ingest:my-notes-today-v2-.txt"
    assert bead.span_refs[0].path == "my notes/today (v2).txt"

    named = ingest_text(mem, "# T\n\nbody\n", source="doc.md", session_id="proj:docs")
    assert named.kind == "markdown" and mem.get_bead(named.bead_ids[0]).session_id == "proj:docs"

    emptied = ingest_text(mem, "  \n", source="doc.md", session_id="proj:docs")
    assert (emptied.chunks, emptied.removed) == (0, 1)
    long_source = "d/" * 200 + "f.txt"
    assert ingest_text(mem, "hello", source=long_source).added == 1


def test_two_replicas_ingesting_the_same_text_make_the_same_beads(
    open_memory: Callable[..., Memory],
) -> None:
    a, b = open_memory("a"), open_memory("b")
    ra = ingest_text(a, MARKDOWN, source="shared/guide.md")
    rb = ingest_text(b, MARKDOWN, source="shared/guide.md")
    assert ra.bead_ids == rb.bead_ids
    exchange(a, b)
    assert a.state_digest() == b.state_digest()
    assert len(list(a.all_beads())) == ra.chunks


def test_keyword_recall_finds_an_ingested_chunk(
    open_memory: Callable[..., Memory], tmp_path: Path
) -> None:
    mem = open_memory("m")
    path = tmp_path / "guide.md"
    path.write_text(MARKDOWN)
    [res] = ingest_path(mem, path)
    mem.wait_indexed(10)
    got = mem.retrieve("zebrafish", k=3, strategy="keyword")
    assert got.items and got.items[0].kind == "bead"
    bead = mem.get_bead(got.items[0].id)
    assert bead.id == res.bead_ids[-1] and "zebrafish" in bead.content
    assert got.items[0].provenance["source"] == str(path.resolve())
    [ref] = bead.span_refs
    assert (ref.path, ref.start_line, ref.end_line) == (str(path.resolve()), 25, 26)


def test_ingest_through_the_daemon_and_the_cli(tmp_path: Path) -> None:
    from tests.daemon_process import DaemonThread

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text(
        "# Setup\n\nInstall the quokka toolkit.\n\n# Use\n\nRun it daily.\n"
    )
    (docs / "tool.py").write_text("def quokka():\n    return 42\n\n\ndef wombat():\n    return 7\n")
    (docs / "blob.bin").write_bytes(b"\x00\x01binary")
    daemon = DaemonThread(tmp_path / "data").start()
    try:
        out = daemon.cli("ingest", str(docs), "--json")
        assert out.returncode == 0, out.stderr
        report = json.loads(out.stdout)
        assert report["added"] == report["chunks"] == 4 and report["removed"] == 0
        skipped = report["inputs"][0]["skipped_files"]
        assert [Path(s["path"]).name for s in skipped] == ["blob.bin"]
        again = daemon.cli("ingest", str(docs))
        assert again.returncode == 0 and "0 added, 4 unchanged, 0 removed" in again.stdout
        (docs / "tool.py").unlink()
        gone = json.loads(daemon.cli("ingest", str(docs), "--json").stdout)
        assert gone["removed"] == 2
        piped = daemon.cli("ingest", "-", "--source", "notes", input="Remember the quokka.\n")
        assert piped.returncode == 0 and "1 added" in piped.stdout
        hits = daemon.once("recall", "quokka toolkit", k=3, strategy="keyword").items
        assert hits and hits[0].provenance["source"] == str(docs / "guide.md")
        bead = daemon.once("get_bead", hits[0].id)
        assert bead.span_refs and bead.span_refs[0].path == str(docs / "guide.md")
        with daemon.client() as c, pytest.raises(InvalidInput, match="absolute"):
            c.ingest(path="docs/guide.md")  # refused by the route, naming the problem
    finally:
        daemon.close()


def test_a_symlink_planted_in_a_directory_does_not_pull_in_a_file_from_outside(
    open_memory: Callable[..., Memory], tmp_path: Path
) -> None:
    """A tree the owner ingests (a clone, an unpacked archive) may hold a link someone else
    put there, to ``~/.ssh`` or ``~/.aws``: its target is outside what the owner asked for,
    so it is skipped and said so; a link inside the tree is read as its target."""
    mem = open_memory("m")
    private = tmp_path / "home" / "vault.txt"
    private.parent.mkdir()
    private.write_text("the vault combination is thirty-one four fifteen\n")
    root = tmp_path / "clone"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "guide.md").write_text("# Guide\n\nHow to deploy.\n")
    (root / "notes.md").symlink_to(private)
    (root / "guide-link.md").symlink_to(root / "docs" / "guide.md")
    (root / "docs" / "up.md").symlink_to("../../home/vault.txt")  # relative, climbing out
    skipped: list[tuple[str, str]] = []
    results = ingest_path(mem, root, on_skip=lambda p, why: skipped.append((p.name, why)))
    assert sorted(n for n, _ in skipped) == ["notes.md", "up.md"]
    assert all("outside" in why for _, why in skipped)
    assert {Path(r.source).name for r in results} == {"guide.md"}  # the link read as its target
    assert not any("vault" in b.content for b in mem.all_beads())
