"""Reading and chunking text for ingest: which files are text, what kind each is, and where a
text splits.

``chunk`` splits a text by kind: Markdown at headings, Python at top-level functions and
classes (``ast``), other code at blank-line-separated definitions and top-level closing
braces, plain text at paragraphs. A piece still over ``max_chars`` is split at paragraphs,
then at lines; only a single line over ``max_chars`` is ever cut. Pure but for reading files.
"""

from __future__ import annotations

import ast
import os
import re
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from chrysalis.core.errors import InvalidInput, NotFound
from chrysalis.ingest.encoding import SNIFF, NotText, binary_head, decode_text

KINDS = ("markdown", "python", "code", "text")
DEFAULT_MAX_CHARS = 1500
SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv"})
CHUNKER_VERSION = 1  # bump when chunk() changes: stored sources are then chunked again

_MARKDOWN_EXTS = frozenset({".md", ".markdown", ".mdown", ".mkd"})
_CODE_EXTS = frozenset(
    {
        ".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx", ".m", ".mm",
        ".cs", ".java", ".kt", ".kts", ".scala", ".groovy", ".gradle", ".swift",
        ".go", ".rs", ".zig", ".nim", ".d", ".dart",
        ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx", ".vue", ".svelte",
        ".rb", ".php", ".pl", ".pm", ".lua", ".r", ".jl", ".ex", ".exs", ".erl", ".hrl",
        ".hs", ".ml", ".mli", ".fs", ".fsx", ".clj", ".cljs", ".el", ".lisp", ".scm",
        ".sh", ".bash", ".zsh", ".fish", ".ps1", ".bat", ".cmd",
        ".sql", ".proto", ".graphql", ".tf", ".hcl", ".nix",
        ".pyi", ".pyx", ".cu", ".glsl", ".sol", ".v", ".sv", ".vhd",
        ".css", ".scss", ".sass", ".less", ".html", ".htm", ".xml",
        ".json", ".yaml", ".yml", ".toml", ".ini", ".cfg",
    }
)  # fmt: skip

# Markdown
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(?:={3,}|-{3,})[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")

# Other code: a block that starts (at column 0) with one of these words starts a new chunk.
_DEF_WORDS = (
    "function", "func", "fn", "def", "class", "struct", "impl", "trait", "interface", "enum",
    "union", "type", "typedef", "module", "mod", "namespace", "object", "fun", "const", "let",
    "var", "val", "public", "private", "protected", "internal", "export", "static", "async",
    "pub", "abstract", "final", "template", "sub", "proc", "record", "defmodule", "defn",
)  # fmt: skip
_DEF = re.compile(r"^(?:" + "|".join(_DEF_WORDS) + r")\b")
# Lines that may stand before a definition and belong to it: comments, attributes, decorators.
_COMMENT = re.compile(r"^\s*(?://|#(?:[ \t!]|$)|/\*|\*|--|;)")
_PREFIX = re.compile(r"^\s*(?://|#|/\*|\*|--|;|@|\[)")
# A top-level closing line: ``}``, ``};``, ``})``, ``end`` (Ruby, Lua), maybe a comment after.
_CLOSE = re.compile(r"^(?:\}|end\b)[\s;,)\]}]*(?:(?://|#|--).*)?$")


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of a text: lines ``start_line``..``end_line`` (1-based, inclusive).

    ``text`` is exactly those lines joined by ``\\n``, except for a piece of a single line
    longer than ``max_chars`` (then it is that piece). ``title`` is the Markdown heading path
    ("Guide > Install"), the Python qualified name, or a code definition's first line.
    """

    text: str
    start_line: int
    end_line: int
    title: str | None = None


def kind_of(path: str | os.PathLike[str]) -> str:
    """The chunking kind for a file name, by its extension."""
    ext = os.path.splitext(os.fspath(path))[1].lower()
    if ext in _MARKDOWN_EXTS:
        return "markdown"
    if ext == ".py":
        return "python"
    if ext in _CODE_EXTS:
        return "code"
    return "text"


def read_text(path: str | os.PathLike[str], *, follow: bool = True) -> tuple[str, str]:
    """A file's text and the encoding it was read in (`chrysalis.ingest.encoding`);
    `InvalidInput` naming the file when it is not text, or (``follow=False``) when it has
    become a symlink since it was checked."""
    try:
        return decode_text(_read_bytes(Path(path), follow))
    except NotText as exc:
        raise InvalidInput(f"{os.fspath(path)}: {exc.why}") from None


def read_text_file(path: str | os.PathLike[str], *, follow: bool = True) -> str:
    """A file's text (`read_text` without the encoding)."""
    return read_text(path, follow=follow)[0]


def _read_bytes(path: Path, follow: bool = True) -> bytes:
    flags = os.O_RDONLY | (0 if follow else os.O_NOFOLLOW)
    try:
        with open(os.open(path, flags), "rb") as f:
            head = f.read(SNIFF)
            if binary_head(head):
                return head  # binary: no need to read the rest
            return head + f.read()
    except FileNotFoundError:
        raise NotFound(f"no such file: {path}") from None
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot read ({exc.strerror or exc})") from None


def iter_files(
    root: str | os.PathLike[str], on_skip: Callable[[Path, str], None] | None = None
) -> Iterator[Path]:
    """The files under ``root`` that `ingest_path` considers, in sorted order: hidden files and
    folders (``.env``, ``.git``, ``.venv``: they often hold credentials or copies), and
    ``node_modules`` and ``__pycache__``, left out, each told to ``on_skip(path, why)`` (a
    folder once, not each file in it), as are links to folders (not followed) and what is not
    a regular file. Binary files are left out later, when read. ``root`` itself may be
    hidden."""
    base = Path(root)
    found: list[tuple[tuple[str, ...], Path]] = []
    skipped: list[tuple[tuple[str, ...], Path, str]] = []
    for dirpath, dirnames, filenames in os.walk(base):
        keep = []
        for d in dirnames:
            p = Path(dirpath, d)
            why = _skip_folder(p)
            if why is None:
                keep.append(d)
            else:
                skipped.append((p.relative_to(base).parts, p, why))
        dirnames[:] = keep
        for name in filenames:
            p = Path(dirpath, name)
            if name.startswith("."):
                said = "hidden file, not ingested (ingest it by name if you mean it)"
            elif p.is_file():
                found.append((p.relative_to(base).parts, p))
                continue
            else:
                said = "a link to nothing" if p.is_symlink() else "not a regular file, not ingested"
            skipped.append((p.relative_to(base).parts, p, said))
    if on_skip is not None:
        for _, p, why in sorted(skipped, key=lambda item: item[0]):
            on_skip(p, why)
    found.sort(key=lambda item: item[0])
    return (p for _, p in found)


def _skip_folder(path: Path) -> str | None:
    """Why `iter_files` does not go into the folder ``path``, or None."""
    if path.name.startswith("."):
        return "hidden folder, not ingested"
    if path.name in SKIP_DIRS:
        return "vendored or generated folder, not ingested"
    if path.is_symlink():
        return "a link to a folder, not followed"
    return None


# ---- chunking ---------------------------------------------------------------------------------


def _lines(text: str) -> list[str]:
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


class _Doc:
    """Lines with O(1) range sizes, and the splitting and packing every kind shares."""

    def __init__(self, lines: list[str], max_chars: int) -> None:
        self.lines = lines
        self.max = max_chars
        cum = [0]
        for line in lines:
            cum.append(cum[-1] + len(line) + 1)
        self.cum = cum

    def blank(self, i: int) -> bool:
        return not self.lines[i].strip()

    def size(self, s: int, e: int) -> int:
        return self.cum[e + 1] - self.cum[s] - 1

    def trim(self, s: int, e: int) -> tuple[int, int] | None:
        while s <= e and self.blank(s):
            s += 1
        while e >= s and self.blank(e):
            e -= 1
        return (s, e) if s <= e else None

    def chunk(self, s: int, e: int, title: str | None) -> Chunk:
        return Chunk("\n".join(self.lines[s : e + 1]), s + 1, e + 1, title)

    def paragraphs(self, s: int, e: int, fences: bool = False) -> list[tuple[int, int]]:
        """Blank-line-separated blocks of s..e; with ``fences``, a fenced code block
        (Markdown) is never split at its blank lines."""
        out: list[tuple[int, int]] = []
        start: int | None = None
        fence: str | None = None
        for i in range(s, e + 1):
            line = self.lines[i]
            if fences:
                m = _FENCE.match(line)
                if fence is None and m:
                    fence = m.group(1)
                elif fence is not None and m and _closes(fence, line):
                    fence = None
            if fence is None and self.blank(i):
                if start is not None:
                    out.append((start, i - 1))
                    start = None
            elif start is None:
                start = i
        if start is not None:
            t = self.trim(start, e)
            if t:
                out.append(t)
        return out

    def fit(self, s: int, e: int, title: str | None, fences: bool = False) -> list[Chunk]:
        """s..e as one chunk if it fits, else split at paragraphs, then lines."""
        t = self.trim(s, e)
        if t is None:
            return []
        s, e = t
        if self.size(s, e) <= self.max:
            return [self.chunk(s, e, title)]
        paras = self.paragraphs(s, e, fences)
        if len(paras) > 1:
            return self.pack(paras, title)
        return self.pack([(i, i) for i in range(s, e + 1) if not self.blank(i)], title)

    def pack(self, ranges: Sequence[tuple[int, int]], title: str | None) -> list[Chunk]:
        """Consecutive ranges packed greedily into chunks of at most max chars."""
        out: list[Chunk] = []
        cur: tuple[int, int] | None = None
        for a, b in ranges:
            if self.size(a, b) > self.max:
                if cur is not None:
                    out.append(self.chunk(*cur, title))
                    cur = None
                if a == b:
                    out.extend(Chunk(p, a + 1, a + 1, title) for p in _cut(self.lines[a], self.max))
                else:
                    out.extend(self.fit(a, b, title))
            elif cur is not None and self.size(cur[0], b) <= self.max:
                cur = (cur[0], b)
            else:
                if cur is not None:
                    out.append(self.chunk(*cur, title))
                cur = (a, b)
        if cur is not None:
            out.append(self.chunk(*cur, title))
        return out


def _closes(fence: str, line: str) -> bool:
    body = line.strip()
    return body.startswith(fence) and not body.strip(fence[0])


def _cut(line: str, max_chars: int) -> list[str]:
    """A line over max_chars in pieces, at a space in the second half of each window when
    there is one; whitespace-only pieces are dropped."""
    pieces: list[str] = []
    pos, n = 0, len(line)
    while pos < n:
        end = pos + max_chars
        if end < n:
            space = line.rfind(" ", pos + max_chars // 2, end)
            if space > pos:
                end = space + 1
        piece = line[pos:end]
        if piece.strip():
            pieces.append(piece)
        pos = end
    return pieces


def chunk(text: str, kind: str, max_chars: int = DEFAULT_MAX_CHARS) -> list[Chunk]:
    """Split ``text`` into chunks of at most ``max_chars`` on the natural boundaries of
    ``kind`` (one of `KINDS`). The chunks are in order, non-empty, never start or end with
    a blank line, and together hold every non-blank line."""
    if kind not in KINDS:
        raise InvalidInput(f"unknown kind {kind!r}: one of {', '.join(KINDS)}")
    if not isinstance(max_chars, int) or isinstance(max_chars, bool) or max_chars < 1:
        raise InvalidInput("max_chars must be a positive int")
    doc = _Doc(_lines(text), max_chars)
    if kind == "markdown":
        return _markdown(doc)
    if kind == "python":
        return _python(doc)
    if kind == "code":
        return _code(doc)
    return doc.pack(doc.paragraphs(0, len(doc.lines) - 1), None)


def _markdown(doc: _Doc) -> list[Chunk]:
    lines, n = doc.lines, len(doc.lines)
    heads: list[tuple[int, int, int, str]] = []  # (first line, last line, level, text)
    body_start = 0
    if n and lines[0].strip() == "---":  # YAML front matter: no headings inside
        for j in range(1, n):
            if lines[j].strip() in ("---", "..."):
                body_start = j + 1
                break
    fence: str | None = None
    for i in range(body_start, n):
        line = lines[i]
        m = _FENCE.match(line)
        if fence is not None:
            if m and _closes(fence, line):
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        atx = _ATX.match(line)
        if atx:
            heads.append((i, i, len(atx.group(1)), (atx.group(2) or "").strip()))
        elif (
            _SETEXT.match(line)
            and i >= 1
            and not doc.blank(i - 1)
            and (i == 1 or doc.blank(i - 2))
            and not (heads and heads[-1][1] == i - 1)
            and not _FENCE.match(lines[i - 1])
        ):
            level = 1 if line.strip().startswith("=") else 2
            heads.append((i - 1, i, level, lines[i - 1].strip()))

    out: list[Chunk] = []
    bounds = [h[0] for h in heads]
    if not heads or bounds[0] > 0:
        out.extend(doc.fit(0, (bounds[0] if heads else n) - 1, None, fences=True))
    stack: list[tuple[int, str]] = []
    carry: int | None = None  # start of heading-only sections merged into the next one
    for k, (first, last, level, title) in enumerate(heads):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        end = bounds[k + 1] - 1 if k + 1 < len(heads) else n - 1
        start = first if carry is None else carry
        body = doc.trim(last + 1, end)
        if body is None and k + 1 < len(heads) and doc.size(start, end) < doc.max // 2:
            carry = start  # a heading right above another: keep it with what follows
            continue
        carry = None
        path = " > ".join(t for _, t in stack if t) or None
        out.extend(doc.fit(start, end, path, fences=True))
    return out


def _python(doc: _Doc) -> list[Chunk]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for "\d" and the like
            tree = ast.parse("\n".join(doc.lines))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _code(doc)
    return _py_units(doc, tree.body, 0, len(doc.lines) - 1, "", None)


def _py_units(
    doc: _Doc, body: list[ast.stmt], lo: int, hi: int, prefix: str, gap_title: str | None
) -> list[Chunk]:
    """Each def/class in ``body`` (with its decorators and the comment block right above
    it) one unit; the statements between them grouped. A class too big for one chunk is
    split the same way, one level down."""
    out: list[Chunk] = []
    cursor = lo
    for node in body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
        while start - 1 >= cursor and doc.lines[start - 1].lstrip().startswith("#"):
            start -= 1
        end = (node.end_lineno or node.lineno) - 1
        if start > cursor:
            out.extend(doc.fit(cursor, start - 1, gap_title))
        name = prefix + node.name
        if isinstance(node, ast.ClassDef) and doc.size(start, end) > doc.max and node.body:
            out.extend(_py_units(doc, node.body, start, end, name + ".", name))
        else:
            out.extend(doc.fit(start, end, name))
        cursor = end + 1
    if cursor <= hi:
        out.extend(doc.fit(cursor, hi, gap_title))
    return out


def _code(doc: _Doc) -> list[Chunk]:
    lines = doc.lines
    units: list[tuple[int, int]] = []
    start: int | None = None
    last = -1
    after_blank = True
    closed = False  # the previous non-blank line closed a top-level block
    comments_only = True  # the current unit so far is comments/attributes only

    def starts_def(i: int) -> bool:
        while i < len(lines) and not doc.blank(i) and _PREFIX.match(lines[i]):
            i += 1
        return i < len(lines) and bool(_DEF.match(lines[i]))

    for i, line in enumerate(lines):
        if doc.blank(i):
            after_blank = True
            continue
        if start is None:
            start = i
        elif closed or (after_blank and not comments_only and starts_def(i)):
            units.append((start, last))
            start, comments_only = i, True
        closed = bool(_CLOSE.match(line))
        comments_only = comments_only and bool(_COMMENT.match(line))
        after_blank, last = False, i
    if start is not None:
        units.append((start, last))

    out: list[Chunk] = []
    for s, e in units:
        title = None
        for j in range(s, e + 1):
            if not _PREFIX.match(lines[j]):
                title = lines[j].strip()[:80] if _DEF.match(lines[j]) else None
                break
        out.extend(doc.fit(s, e, title))
    return out


# ---- ingesting --------------------------------------------------------------------------------
