"""The daemon's settings: flags over CHRYSALIS_* variables over the TOML file over defaults,
and every bad value named with where it came from."""

from __future__ import annotations

from pathlib import Path

import pytest

from chrysalis.core.errors import InvalidInput
from chrysalisd.config import (
    Settings,
    default_config_file,
    default_data_dir,
    load_settings,
    unknown_variables,
)


@pytest.fixture(autouse=True)
def no_user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A config.toml in the real home must not change what these tests read."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def test_layers_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('embedder = "deterministic"\npull_interval = 7\nmax_body_bytes = 4096\n')
    env = {"CHRYSALIS_PULL_INTERVAL": "8", "CHRYSALIS_MAX_BODY_BYTES": "8192"}
    s = load_settings(cfg, {"max_body_bytes": 2048, "remote": None}, env)
    assert (s.embedder, s.pull_interval, s.max_body_bytes) == ("deterministic", 8.0, 2048)
    assert s.remote is None and s.push_interval == 60.0  # None flags and untold keys: defaults
    assert load_settings(None, None, {"CHRYSALIS_CONFIG": str(cfg)}).pull_interval == 7.0
    # exact names only, and nothing from the environment without load_settings
    assert load_settings(None, None, {"chrysalis_pull_interval": "9"}).pull_interval == 120.0
    monkeypatch.setenv("CHRYSALIS_PULL_INTERVAL", "9")
    assert Settings().pull_interval == 120.0


def test_bad_values_name_their_origin(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('max_body_bytes = "lots"\n')
    with pytest.raises(InvalidInput) as err:
        load_settings(cfg, {"shutdown_timeout": -1}, {"CHRYSALIS_LOG_LEVEL": "loud"})
    assert err.value.message.startswith("invalid configuration: ")
    assert f"{cfg}: max_body_bytes: expected a whole number (got 'lots')" in err.value.message
    assert (
        "CHRYSALIS_LOG_LEVEL: expected one of 'debug', 'info', 'warning' or 'error' (got 'loud')"
        in err.value.message
    )
    assert "--shutdown-timeout: expected a number of seconds above 0 (got -1)" in err.value.message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'push_interval = "often"\n',
            "{cfg}: push_interval: expected a number of seconds (got 'often')",
        ),
        ("durable = 3\n", "{cfg}: durable: expected true or false (got 3)"),
        ("[memories.team]\nremote = 5\n", "{cfg}: memories.team.remote: expected text (got 5)"),
        ('remote = "file:shared"\n', "{cfg}: remote: remote URL 'file:shared': expected file:///"),
        ('zep_url = "zep.local"\n', "{cfg}: zep_url: expected an http:// or https:// URL"),
        ("[memories.team]\nsocket = '/x'\n", "{cfg}: memories.team: unknown key 'socket'"),
    ],
)
def test_a_bad_value_is_named_in_plain_words(tmp_path: Path, text: str, message: str) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(text)
    with pytest.raises(InvalidInput) as err:
        load_settings(cfg, None, {})
    assert err.value.message.startswith("invalid configuration: " + message.format(cfg=cfg))
    assert "Input should" not in err.value.message


def test_unknown_variables_are_named_with_the_closest_one() -> None:
    environ = {"CHRYSALIS_EMBEDER": "x", "CHRYSALIS_SOCKET": "/s", "CHRYSALIS_MEMORY": "team",
               "CHRYSALIS_NOPE": "1", "OTHER": "1"}  # fmt: skip
    assert unknown_variables(environ) == [
        "CHRYSALIS_EMBEDER is set but is not a chrysalis setting: it is ignored; "
        "did you mean CHRYSALIS_EMBEDDER?",
        "CHRYSALIS_NOPE is set but is not a chrysalis setting: it is ignored",
    ]


def test_a_secret_is_never_echoed() -> None:
    with pytest.raises(InvalidInput) as err:
        load_settings(None, {"zep_api_key": 12345678}, {})
    assert "--zep-api-key" in err.value.message and "12345678" not in err.value.message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('embeder = "x"\n', "{cfg}: unknown key 'embeder'; did you mean 'embedder'? known: "),
        ("x = \n", "{cfg}: not valid TOML: Invalid value"),
        (None, "cannot read config file {cfg}: No such file or directory"),
    ],
)
def test_a_bad_file_is_refused_whole(tmp_path: Path, text: str | None, message: str) -> None:
    cfg = tmp_path / "c.toml"
    if text is not None:
        cfg.write_text(text)
    with pytest.raises(InvalidInput) as err:
        load_settings(cfg, None, {})
    assert err.value.message.startswith(message.format(cfg=cfg))


def test_default_folders_follow_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert default_data_dir() == tmp_path / "data" / "chrysalis"
    assert default_config_file() == tmp_path / "config" / "chrysalis" / "config.toml"
    default_config_file().parent.mkdir(parents=True)
    default_config_file().write_text("push_after_ops = 5\n")
    assert load_settings(None, None, {}).push_after_ops == 5
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_data_dir() == Path.home() / ".local" / "share" / "chrysalis"
