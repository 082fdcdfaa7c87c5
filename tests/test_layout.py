"""The shape of the code: folders are layers, and the import contracts keep them so.

A module goes where its concern is, however long it is; `lint-imports` (run by .ci/run) holds
the direction between the folders, so the map is `ls chrysalis/`, not a page of docs.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "chrysalis"
# What stays at the package's root: the public API and the two objects that assemble the layers.
ROOT_MODULES = {"__init__.py", "memory.py", "replica.py", "schemas.py"}


def contracts() -> list[dict[str, object]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    return list(config["contracts"])


def test_only_the_api_lives_at_the_root_of_the_package() -> None:
    loose = {p.name for p in PACKAGE.glob("*.py")} - ROOT_MODULES
    assert loose == set(), f"put these in the folder of their layer: {sorted(loose)}"


def test_every_folder_is_a_layer_of_the_contract() -> None:
    (layered,) = [c for c in contracts() if c["type"] == "layers"]
    named = {
        name.strip()
        for layer in layered["layers"]  # type: ignore[attr-defined]
        for name in str(layer).replace(":", "|").split("|")
    }
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    # What agents import sits beside the engine, each held by a contract of its own: the client,
    # and the integrations built on it.
    assert folders - named == {"client", "integrations"}
    assert named - folders - {"memory", "replica"} == set()


def test_the_promises_are_configured() -> None:
    names = " / ".join(str(c["name"]) for c in contracts())
    for promise in ("layers", "pure core", "never imports the daemon", "client", "cycles"):
        assert promise in names


def test_every_folder_is_a_package_of_the_distribution() -> None:
    """`pip install .` (not editable, as deploy/ does) carries every folder of both packages."""
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    folders = {
        f"{top}.{d.name}"
        for top, base in (("chrysalis", PACKAGE), ("chrysalisd", ROOT / "daemon" / "chrysalisd"))
        for d in base.iterdir()
        if (d / "__init__.py").exists()
    }
    assert folders | {"chrysalis", "chrysalisd"} == listed
