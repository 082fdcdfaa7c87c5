"""Which functions a test suite covers less than an earlier one, when files have moved between.

    .venv/bin/python bench/coverage_compare.py OLD.json OLD_ROOT NEW.json NEW_ROOT
    .venv/bin/python bench/coverage_compare.py ... --drop 0.25 --json   # the figures as JSON
    .venv/bin/python bench/coverage_compare.py --quick   # two tiny made-up trees (the suite's)

Each JSON file is a coverage.py JSON report (``--cov-report=json:FILE`` or ``coverage json``);
each ROOT is the checkout it measured, against which the report's relative paths resolve.
A per-file comparison says nothing when modules moved into folders, so the comparison is per
function: ``ast`` gives every function's and method's span (its qualified name, nested
functions as ``outer.inner``), and each statement line the report lists (executed or missing)
is billed to the innermost function that holds it. Module-level lines are left out: they run
on import.

An old function is matched to a new one by, in this order: the same code (its ``ast`` without
positions, so moving or re-commenting it does not matter); the same file stem and qualified
name, if unique on both sides; the same qualified name, if unique on both sides; else the new
function that shares most of its words (names, attributes, arguments, string constants), at
least ``SIMILAR`` (0.6) of them: a function renamed or lightly rewritten. An old function that
was covered and matches nothing is listed as gone (removed, or rewritten past recognition).

A function is listed as having lost coverage when the old run executed some of its lines and
the new one none, or when its covered share fell by at least ``--drop`` (0.25) and it lost at
least ``--min-lines`` (3) covered statements. Exit status 0 either way: this measures, it
does not judge.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
import tempfile
import textwrap
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

SIMILAR = 0.6  # share of words two functions must share to be one function renamed


@dataclass
class Function:
    """One function or method: where it is, and how many of its statements ran."""

    path: str  # as the coverage report names the file
    qualname: str
    line: int
    code: str  # ast.dump without positions: the same code wherever it moved
    executed: int = 0
    statements: int = 0

    @property
    def key(self) -> str:
        return f"{Path(self.path).stem}:{self.qualname}"

    @property
    def share(self) -> float:
        return self.executed / self.statements if self.statements else 0.0


@dataclass
class Lost:
    """An old function the new run covers less (``new`` is None when nothing matched)."""

    old: Function
    new: Function | None
    matched_by: str


def _spans(tree: ast.Module, path: str) -> list[tuple[Function, int, int]]:
    """Every function in ``tree`` with the first and last line of its body.

    The ``def`` line and the decorators belong to the enclosing scope: they run when it does.
    """
    found: list[tuple[Function, int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                first = child.body[0].lineno
                code = ast.dump(child, include_attributes=False)
                found.append(
                    (Function(path, name, child.lineno, code), first, child.end_lineno or first)
                )
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def functions(report: dict[str, Any], root: Path) -> list[Function]:
    """The functions of every file in a coverage JSON report, with their covered statements.

    Raises ``FileNotFoundError`` when a reported file is not under ``root``: the report and
    the checkout do not belong together.
    """
    files = report["files"]
    assert isinstance(files, dict)
    out: list[Function] = []
    for path, data in sorted(files.items()):
        source = (root / path).read_text(encoding="utf-8")
        spans = _spans(ast.parse(source, filename=path), path)
        executed = set(data["executed_lines"])
        for line in (*data["executed_lines"], *data["missing_lines"]):
            # the innermost span holding the line: the one that starts last
            holders = [(first, fn) for fn, first, last in spans if first <= line <= last]
            if not holders:
                continue  # module level
            fn = max(holders, key=lambda h: h[0])[1]
            fn.statements += 1
            fn.executed += line in executed
        out.extend(fn for fn, _, _ in spans)
    return out


def _unique(fns: list[Function], attr: str) -> dict[str, Function]:
    seen: dict[str, list[Function]] = {}
    for fn in fns:
        seen.setdefault(getattr(fn, attr), []).append(fn)
    return {k: v[0] for k, v in seen.items() if len(v) == 1}


def _words(code: str) -> frozenset[str]:
    """The names, attributes and constants a function's code uses: what survives a rename."""
    return frozenset(re.findall(r"(?:id|attr|arg|value)='([^']+)'", code))


def _similar(
    fn: Function, new: list[Function], words: dict[int, frozenset[str]]
) -> Function | None:
    """The new function sharing most of ``fn``'s words (Jaccard >= ``SIMILAR``), if any."""
    mine = _words(fn.code)
    best, score = None, SIMILAR
    for other in new:
        theirs = words[id(other)]
        if not mine or abs(len(theirs) - len(mine)) > len(mine):
            continue
        s = len(mine & theirs) / len(mine | theirs)
        if s >= score:
            best, score = other, s
    return best


def _prefer(fn: Function, candidates: list[Function]) -> Function:
    """Of several new functions with ``fn``'s code, the one keeping its name, then its stem."""
    return max(candidates, key=lambda c: (c.qualname == fn.qualname, c.key == fn.key))


def compare(old: list[Function], new: list[Function], drop: float, min_lines: int) -> list[Lost]:
    """The old functions that ran and that the new run covers less, most statements lost first."""
    by_code: dict[str, list[Function]] = {}
    for fn in new:  # identical bodies (trivial properties) are common: keep them all
        by_code.setdefault(fn.code, []).append(fn)
    new_keys, old_keys = _unique(new, "key"), _unique(old, "key")
    new_names, old_names = _unique(new, "qualname"), _unique(old, "qualname")
    words = {id(fn): _words(fn.code) for fn in new}
    lost: list[Lost] = []
    for fn in old:
        if not fn.executed:
            continue
        match: Function | None
        if fn.code in by_code:
            match, how = _prefer(fn, by_code[fn.code]), "code"
        elif fn.key in old_keys and fn.key in new_keys:
            match, how = new_keys[fn.key], "stem+name"
        elif fn.qualname in old_names and fn.qualname in new_names:
            match, how = new_names[fn.qualname], "name"
        else:
            match, how = _similar(fn, new, words), "similar"
        if match is None:
            lost.append(Lost(fn, None, "none"))
            continue
        fewer = fn.executed - match.executed
        if match.executed == 0 or (fn.share - match.share >= drop and fewer >= min_lines):
            lost.append(Lost(fn, match, how))
    lost.sort(key=lambda x: (-(x.old.executed - (x.new.executed if x.new else 0)), x.old.key))
    return lost


def _totals(report: dict[str, Any]) -> tuple[int, int]:
    totals = report["totals"]
    assert isinstance(totals, dict)
    return int(totals["covered_lines"]), int(totals["num_statements"])


def run(
    old_json: Path, old_root: Path, new_json: Path, new_root: Path, drop: float, min_lines: int
) -> dict[str, Any]:
    """The comparison as a JSON-able dict: both totals, and the functions that lost coverage."""
    reports = [json.loads(p.read_text()) for p in (old_json, new_json)]
    old, new = functions(reports[0], old_root), functions(reports[1], new_root)
    lost = compare(old, new, drop, min_lines)
    return {
        "old": dict(zip(("covered", "statements"), _totals(reports[0]), strict=True)),
        "new": dict(zip(("covered", "statements"), _totals(reports[1]), strict=True)),
        "functions": {
            "old": len(old),
            "old_covered": sum(1 for f in old if f.executed),
            "new": len(new),
        },
        "lost": [
            {
                "old": {k: v for k, v in asdict(x.old).items() if k != "code"},
                "new": None
                if x.new is None
                else {k: v for k, v in asdict(x.new).items() if k != "code"},
                "matched_by": x.matched_by,
            }
            for x in lost
        ],
    }


def _print(result: dict[str, Any]) -> None:
    for side in ("old", "new"):
        t = result[side]
        assert isinstance(t, dict)
        share = 100 * t["covered"] / t["statements"]
        print(f"{side}: {t['covered']:,} of {t['statements']:,} statements ({share:.1f} %)")
    print(f"functions: {result['functions']}")
    lost = result["lost"]
    assert isinstance(lost, list)
    print(f"{len(lost)} functions covered less:")
    for x in lost:
        o, n = x["old"], x["new"]
        now = (
            "gone (no match)"
            if n is None
            else f"{n['executed']}/{n['statements']} at {n['path']}:{n['line']}"
        )
        was = f"{o['executed']}/{o['statements']}"
        print(f"  {o['path']}:{o['line']} {o['qualname']}: {was} -> {now} [{x['matched_by']}]")


# --quick: two made-up trees where every rule of the comparison has a case, and the answer
# is known from how they were made.
_OLD = {
    "pkg/store.py": """
        def put(x):
            return x

        class Store:
            def get(self, k):
                if k:
                    return k
                return None

            def drop(self, k):
                a = k
                b = a
                c = b
                d = c
                return d

        def helper():
            def inner():
                return 1
            return inner()
    """,
    "pkg/sync.py": """
        def push(a):
            return a

        def retired():
            return 0

        def tally(rows):
            total = 0
            for row in rows:
                total += row.weight
            return total
    """,
}
_NEW = {
    # moved into a folder, put's body edited (matches by stem+name), get re-indented by a
    # comment (matches by code), drop now half covered, helper's inner no longer reached
    "pkg/store/store.py": """
        def put(x):
            y = x
            return y

        class Store:
            # a comment the old file did not have
            def get(self, k):
                if k:
                    return k
                return None

            def drop(self, k):
                a = k
                b = a
                c = b
                d = c
                return d

        def helper():
            def inner():
                return 1
            return 2
    """,
    # renamed file: push keeps its name and code; retired is gone; tally is renamed weigh
    "pkg/sync/engine.py": """
        def push(a):
            return a

        def weigh(rows):
            total = 0
            for row in rows:
                total += row.weight
            return total
    """,
}


def _report(tree: dict[str, str], root: Path, name: str, ran: dict[str, int]) -> Path:
    """Write ``tree`` under ``root`` and a coverage JSON report ``name`` of it, where function
    ``f`` executed its first ``ran[f]`` statements and a function not in ``ran`` none (module
    level lines, ``def`` and ``class`` lines included, always run)."""
    files = {}
    covered = total = 0
    for path, text in tree.items():
        source = textwrap.dedent(text).lstrip()
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(source)
        spans = _spans(ast.parse(source), path)
        seen: dict[str, int] = {}
        executed: list[int] = []
        missing: list[int] = []
        for node in sorted(ast.walk(ast.parse(source)), key=lambda n: getattr(n, "lineno", 0)):
            if not isinstance(node, ast.stmt):
                continue
            holders = [(first, fn) for fn, first, last in spans if first <= node.lineno <= last]
            if not holders:
                executed.append(node.lineno)
                continue
            inside = max(holders, key=lambda h: h[0])[1].qualname
            seen[inside] = seen.get(inside, 0) + 1
            (executed if seen[inside] <= ran.get(inside, 0) else missing).append(node.lineno)
        files[path] = {"executed_lines": sorted(executed), "missing_lines": sorted(missing)}
        covered += len(executed)
        total += len(executed) + len(missing)
    out = root / name
    out.write_text(
        json.dumps({"files": files, "totals": {"covered_lines": covered, "num_statements": total}})
    )
    return out


def _quick() -> dict[str, Any]:
    """Compare the made-up trees and check the answer; raises ``SystemExit(1)`` if wrong."""
    every = 99
    with tempfile.TemporaryDirectory() as tmp:
        old_root, new_root = Path(tmp, "old"), Path(tmp, "new")
        old_ran = dict.fromkeys(
            (
                "put",
                "Store.get",
                "Store.drop",
                "helper",
                "helper.inner",
                "push",
                "retired",
                "tally",
            ),
            every,
        )
        old_json = _report(_OLD, old_root, "old.json", old_ran)
        # inner and weigh (tally renamed) no longer reached; retired gone
        new_ran = dict.fromkeys(("put", "Store.get", "Store.drop", "helper", "push"), every)
        full = run(
            old_json, old_root, _report(_NEW, new_root, "all.json", new_ran), new_root, 0.25, 3
        )
        # drop: same code, 2 of its 5 statements (a share of 0.6 and 3 statements lost);
        # put: matched by stem+name, runs nothing; get: 1 of 3 (0.67 lost but only 2 statements)
        partial_ran = {**new_ran, "Store.drop": 2, "put": 0, "Store.get": 1}
        partial = run(
            old_json,
            old_root,
            _report(_NEW, new_root, "partial.json", partial_ran),
            new_root,
            0.25,
            3,
        )
    lost = {x["old"]["qualname"]: x for x in full["lost"]}
    drops = {x["old"]["qualname"]: x for x in partial["lost"]}
    got = {k: (x["matched_by"], x["new"] and x["new"]["executed"]) for k, x in lost.items()}
    dropped = {k: (x["matched_by"], x["new"] and x["new"]["executed"]) for k, x in drops.items()}
    want = {"helper.inner": ("code", 0), "retired": ("none", None), "tally": ("similar", 0)}
    want_dropped = {**want, "Store.drop": ("code", 2), "put": ("stem+name", 0)}
    if got != want or dropped != want_dropped:
        print(
            f"--quick: wrong answer: {got} (want {want}); {dropped} (want {want_dropped})",
            file=sys.stderr,
        )
        raise SystemExit(1)
    return full


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "paths", nargs="*", type=Path, metavar="OLD.json OLD_ROOT NEW.json NEW_ROOT"
    )
    parser.add_argument(
        "--drop", type=float, default=0.25, help="covered share lost to list a function (0.25)"
    )
    parser.add_argument(
        "--min-lines", type=int, default=3, help="covered statements lost to list a function (3)"
    )
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    parser.add_argument(
        "--quick", action="store_true", help="compare two tiny made-up trees and check the answer"
    )
    args = parser.parse_args()
    if args.quick:
        result = _quick()
    elif len(args.paths) == 4:
        old_json, old_root, new_json, new_root = args.paths
        result = run(old_json, old_root, new_json, new_root, args.drop, args.min_lines)
    else:
        parser.error("give OLD.json OLD_ROOT NEW.json NEW_ROOT, or --quick")
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print(result)


if __name__ == "__main__":
    main()
