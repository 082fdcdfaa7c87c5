"""Settings of the soak test (tests/reliability/test_soak.py).

``CHRYSALIS_SOAK_SECONDS`` (default 30: the whole test then takes about 55 seconds; 20 s was
too short for the tampering to show in status) and
``CHRYSALIS_SOAK_SEED`` (default: a fresh random seed, printed) always work. The flags
``--soak-seconds`` and ``--soak-seed`` work only when this directory is named on the command
line (``pytest tests/reliability --soak-seconds 1800``): pytest reads options from the conftest
files it loads at startup, and a plain ``pytest`` reaches this one only while collecting.
"""

from __future__ import annotations

import os
import random

import pytest

DEFAULT_SECONDS = 30.0


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("soak", "chrysalis soak test")
    group.addoption(
        "--soak-seconds",
        type=float,
        default=None,
        help="seconds of chaos in the soak test (or CHRYSALIS_SOAK_SECONDS; default 30)",
    )
    group.addoption(
        "--soak-seed",
        type=int,
        default=None,
        help="seed of the soak test's choices (or CHRYSALIS_SOAK_SEED; default random)",
    )


def _setting(config: pytest.Config, option: str, env: str) -> str | None:
    value = config.getoption(option, default=None)
    if value is not None:
        return str(value)
    return os.environ.get(env) or None


@pytest.fixture
def soak_seconds(request: pytest.FixtureRequest) -> float:
    value = _setting(request.config, "--soak-seconds", "CHRYSALIS_SOAK_SECONDS")
    return DEFAULT_SECONDS if value is None else float(value)


@pytest.fixture
def soak_seed(request: pytest.FixtureRequest) -> int:
    value = _setting(request.config, "--soak-seed", "CHRYSALIS_SOAK_SEED")
    return random.SystemRandom().randrange(1, 2**31) if value is None else int(value)
