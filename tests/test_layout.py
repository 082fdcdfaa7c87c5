"""The shape of the code: few, well-named modules, none too long to read in one sitting."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 600


def test_no_module_is_over_600_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): n
        for folder in ("chrysalis", "daemon")
        for path in (ROOT / folder).rglob("*.py")
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}, f"split these by concern: {long}"


def test_the_layer_contracts_are_configured() -> None:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    names = " / ".join(c["name"] for c in config["contracts"])
    for promise in ("pure core", "never imports the daemon", "client", "cycles"):
        assert promise in names
