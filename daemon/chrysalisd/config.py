"""The daemon's settings: defaults, then a TOML file, then ``CHRYSALIS_*`` variables, then flags.

pydantic-settings merges the layers (`load_settings`); platformdirs gives the default folders
(on Linux ``$XDG_DATA_HOME/chrysalis`` and ``$XDG_CONFIG_HOME/chrysalis/config.toml``). The
socket's default is the client's, `chrysalis.client.default_socket_path`, so both agree.

Validated once at start; a bad value fails with a message in plain words naming the key and
where it came from::

    CHRYSALIS_MAX_BODY_BYTES: expected a whole number (got 'lots')
    /home/me/.config/chrysalis/config.toml: unknown key 'embeder'; did you mean 'embedder'?
    /home/me/.config/chrysalis/config.toml: memories.team.remote: expected text (got 5)

An unknown ``CHRYSALIS_*`` variable is no error (the environment is shared with other tools)
but the daemon warns about it at start (`unknown_variables`).
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_core import ErrorDetails, PydanticCustomError
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from chrysalis.client import default_socket_path
from chrysalis.core.errors import InvalidInput
from chrysalis.core.limits import ID_PATTERN
from chrysalis.core.models import REPLICA_PATTERN
from chrysalis.core.validity import DEFAULT_FUNCTIONAL
from chrysalis.remotes import check_url

APP = "chrysalis"
ENV_PREFIX = "CHRYSALIS_"
SECRETS = {"zep_api_key"}  # never echoed in an error
# CHRYSALIS_* variables read elsewhere than the settings: the CLI's, fault injection (crash
# tests) and the test suite's own; with the settings' own, none of them is warned about.
OTHER_VARIABLES = frozenset({
    "CONFIG", "MEMORY", "FAULT", "SOAK_SEED", "SOAK_SECONDS", "TEST_MINIO_ENDPOINT",
    "TEST_MINIO_USER", "TEST_MINIO_PASSWORD", "UI_SCREENSHOTS", "SCHEMATHESIS_RANDOM",
    "PROPERTY_EXAMPLES", "KNOWLEDGE_EXAMPLES", "EVAL",
})  # fmt: skip


def default_data_dir() -> Path:
    return platformdirs.user_data_path(APP)


def check_data_dir(data_dir: Path) -> None:
    """Refuse a data dir whose parent folder is missing: a start makes the last folder
    only, so a mistyped ``--data-dir`` never creates a whole new path and an empty memory
    (as a ``file://`` remote is never created). The default's parents are made (a fresh
    machine may have no ``~/.local/share`` yet). Raises `InvalidInput` naming the parent."""
    path = data_dir.expanduser().absolute()
    if path.exists() or path == default_data_dir().absolute():
        return
    parent = path.parent
    if parent.is_dir():
        return
    if parent.exists():
        raise InvalidInput(f"data dir {path}: {parent} is not a folder")
    raise InvalidInput(
        f"data dir {path}: its parent folder {parent} does not exist (a start makes only the "
        f"last folder); check the path, or make it first: mkdir -p {parent}"
    )


def default_config_file() -> Path:
    return platformdirs.user_config_path(APP) / "config.toml"


class Settings(BaseSettings):
    """Everything the daemon can be told. Field ``x`` is ``x`` in TOML and ``CHRYSALIS_X``.

    `load_settings` reads the file and the variables; ``Settings(**values)`` alone takes only
    the defaults and ``values`` (nothing from the environment)."""

    model_config = SettingsConfigDict(extra="forbid", frozen=True, env_prefix=ENV_PREFIX)

    data_dir: Path = Field(default_factory=default_data_dir)
    socket: Path = Field(default_factory=default_socket_path)
    embedder: str = Field(
        "auto",
        description='"auto" (Ollama if it answers, else all-MiniLM-L6-v2 in numpy if its '
        'wheels are installed, else deterministic), "deterministic[:DIMS]", "ollama[:MODEL]", '
        '"minilm[:PATH]" or "sentence-transformers:PATH"; changing it and restarting re-embeds '
        "in the background while recall keeps the old vectors",
    )
    extractor: str = Field(
        "rules",
        description='knowledge from beads: "rules" (offline, deterministic), "ollama[:MODEL]" '
        'or "none"',
    )
    functional_predicates: list[str] = Field(
        default_factory=lambda: sorted(DEFAULT_FUNCTIONAL),
        description="predicates holding one value at a time: a new fact supersedes the old "
        "(a list in TOML; JSON or comma-separated in CHRYSALIS_FUNCTIONAL_PREDICATES)",
    )
    extract_calls_per_hour: int | None = Field(
        None, ge=1, description="extractor (model) calls allowed per hour; unset: no limit"
    )
    extract_tokens_per_hour: int | None = Field(
        None, ge=1, description="tokens the extractor's model may read and write per hour"
    )
    summary_after_s: float = Field(
        600.0,
        ge=0,
        description="seconds a session rests before it gets a summary bead (tag summary) made "
        "from its turns by the extractor (none: no summaries)",
    )
    replica_id: str | None = Field(None, pattern=REPLICA_PATTERN)
    durable: bool = Field(True, description="fsync every commit (off only for throwaway data)")
    secrets: Literal["redact", "refuse", "off"] = Field(
        "redact",
        description="a credential in incoming text: replace it with [REDACTED:<kind>] before "
        'it is stored ("redact"), answer 422 and store nothing ("refuse"), or store it ("off")',
    )
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    log_format: Literal["auto", "text", "json"] = Field(
        "auto",
        description='"auto": short text lines on a terminal, JSON lines elsewhere (a service, '
        'a file); "text" or "json" forces one',
    )
    max_body_bytes: int = Field(32 * 1024 * 1024, ge=1024, le=1024**3)
    shutdown_timeout: float = Field(5.0, gt=0, le=300, description="seconds for in-flight work")
    disk_check_interval: float = Field(60.0, gt=0, description="seconds between disk checks")
    min_free_disk_bytes: int = Field(512 * 1024 * 1024, ge=0)
    scrub_delay: float = Field(
        5.0, gt=0, le=3600,
        description="seconds after a forget before LMDB is compacted (the local scrub)",
    )  # fmt: skip
    remote: str | None = Field(
        None, description="where replicas meet: file:///shared/folder or s3://bucket/prefix"
    )
    sync_key_file: Path | None = Field(
        None, description="64 hex digits or a passphrase; encrypts everything sent to the remote"
    )
    push_interval: float = Field(60.0, gt=0, description="seconds between pushes")
    push_after_ops: int = Field(1000, ge=1, description="push early once this many ops wait")
    push_after_bytes: int = Field(4 << 20, ge=1, description="or once this much content waits")
    push_after_write: float = Field(
        5.0, ge=0,
        description="push this many seconds after a write, at most once per this many "
        "seconds (0: pushes keep to push_interval and the two above)",
    )  # fmt: skip
    pull_interval: float = Field(120.0, gt=0, description="seconds between pulls")
    snapshot_interval: float = Field(6 * 3600.0, gt=0, description="seconds between snapshots")
    compact_interval: float = Field(24 * 3600.0, gt=0, description="seconds between compactions")
    blob_grace: float = Field(
        3600.0, gt=0,
        description="seconds an unused remote blob stays after its last put (longer than any "
        "push takes: a laptop pushing the same content must not lose it)",
    )  # fmt: skip
    retry_max: float = Field(600.0, gt=0, description="longest wait between retries of a job")
    zep_url: str | None = Field(
        None, pattern=r"^https?://", description="a Zep server to mirror to"
    )
    zep_api_key: SecretStr | None = Field(None, description="Zep's API key (or zep_api_key_file)")
    zep_api_key_file: Path | None = Field(None, description="a file holding Zep's API key")
    zep_flavour: Literal["zep-python", "zep-cloud"] = Field(
        "zep-python",
        description='"zep-python": the 2.x SDK, v2 API (Zep Community Edition); "zep-cloud": '
        "the current SDK, v4 API (threads, graph), zep_url e.g. https://api.getzep.com/api/v4",
    )
    zep_user_id: str = Field(
        "chrysalis", pattern=ID_PATTERN,
        description="the memory's Zep user, its own: default's is chrysalis, a named memory's "
        "NAME@chrysalis; two memories never share one (refused)",
    )  # fmt: skip
    zep_push_interval: float = Field(60.0, gt=0, description="seconds between pushes to Zep")
    zep_pull_interval: float = Field(300.0, gt=0, description="seconds between fact pulls")
    zep_weak_score: float = Field(
        0.5, ge=0, description="ask Zep when the best local hit scores below this"
    )
    zep_budget_ms: float = Field(400.0, gt=0, le=10_000, description="time Zep gets in a recall")
    memories: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="named memories beside default, each a [memories.NAME] table of the "
        "settings a memory has of its own (remote, sync_key_file, zep_*, extractor, "
        "intervals...): see MEMORY_KEYS",
    )

    @field_validator("extractor")
    @classmethod
    def _extractor(cls, spec: str) -> str:
        """The spec's form only (nothing is started here): `make_extractor` accepts it."""
        name, colon, model = spec.strip().partition(":")
        if (name in ("rules", "none") and not colon) or (name == "ollama" and model.strip()):
            return spec.strip()
        if name == "ollama" and not colon:
            return "ollama"
        why = f"unknown extractor {spec!r}: use rules, ollama[:MODEL] or none"
        raise PydanticCustomError("extractor", "{why}", {"why": why})

    @field_validator("remote")
    @classmethod
    def _remote(cls, url: str | None) -> str | None:
        """The URL's form only (nothing is reached here): `open_remote` accepts it."""
        try:
            return None if url is None else check_url(url)
        except InvalidInput as exc:
            raise PydanticCustomError("remote", "{why}", {"why": exc.message}) from None

    @field_validator("functional_predicates", mode="before")
    @classmethod
    def _predicates(cls, value: Any) -> Any:
        if isinstance(value, str):  # a flag or a variable: "lives_in, works_at"
            value = value.split(",")
        if isinstance(value, list | tuple):
            names = [str(p).strip() for p in value]
            bad = [p for p in names if not p or any(c.isspace() for c in p) or len(p) > 128]
            if bad:
                why = f"{bad[0]!r} is not a predicate name (one word, like lives_in)"
                raise PydanticCustomError("predicate", "{why}", {"why": why})
            return sorted(set(names))
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The flags, then `load_settings`'s variables and file (the first that has a key
        wins); never a .env file or a secrets folder."""
        return (init_settings, *_LAYERS.get(()))


# ---- named memories (DESIGN §15) -------------------------------------------------------------

DEFAULT_MEMORY = "default"
# Checked with fullmatch, as is every name and id: with `match`, "$" lets a trailing newline
# through ("team\n" named a memory and made a folder with a newline in its name).
MEMORY_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
# Where a memory syncs and mirrors, and who it is: never inherited from the daemon's settings
# (a team memory must not push to the personal bucket, nor share its replica id).
OWN_KEYS = frozenset({
    "remote", "sync_key_file", "zep_url", "zep_api_key", "zep_api_key_file", "zep_user_id",
    "replica_id",
})  # fmt: skip
# What a memory's section may set; the rest is the daemon's (socket, logs, limits, data_dir).
MEMORY_KEYS = OWN_KEYS | {
    "embedder", "extractor", "functional_predicates", "extract_calls_per_hour",
    "extract_tokens_per_hour", "summary_after_s", "secrets", "scrub_delay", "push_interval",
    "push_after_ops", "push_after_bytes", "push_after_write", "pull_interval", "snapshot_interval",
    "compact_interval", "blob_grace", "zep_flavour", "zep_push_interval", "zep_pull_interval",
    "zep_weak_score", "zep_budget_ms",
}  # fmt: skip


def check_memory_name(name: str) -> str:
    """``name`` if it can name a memory (lower-case letters, digits, ``-``, ``_``; up to 32,
    a letter first); `InvalidInput` saying so otherwise."""
    if not isinstance(name, str) or not MEMORY_NAME.fullmatch(name):
        raise InvalidInput(
            f"{name!r} cannot name a memory: use up to 32 lower-case letters, digits, - or _, "
            "starting with a letter"
        )
    return name


def zep_user_of(name: str) -> str:
    """Memory ``name``'s Zep user unless it sets ``zep_user_id``: ``chrysalis`` for default
    (as before there were several), ``NAME@chrysalis`` for the others. A suffix, not a
    ``chrysalis-NAME`` prefix: Zep session ids are global and ours are ``<user>-<session>``,
    so ``chrysalis-team`` would name default's session ``team-x`` too; ``@`` is in no memory
    name, so ``NAME@chrysalis-`` starts the sessions of that memory alone."""
    return "chrysalis" if name == DEFAULT_MEMORY else f"{name}@chrysalis"


def memory_dir(data_dir: Path, name: str) -> Path:
    """Where memory ``name`` keeps its data: default in the data dir itself (as before
    there were several), the others in ``memories/<name>`` under it."""
    return data_dir if name == DEFAULT_MEMORY else data_dir / "memories" / name


def settings_for(base: Settings, name: str, section: Mapping[str, Any]) -> Settings:
    """The settings memory ``name`` runs with: the daemon's, less `OWN_KEYS`, with its
    ``section`` over them. `InvalidInput` naming the memory and the key when one is bad."""
    if name == DEFAULT_MEMORY:
        return base
    check_memory_name(name)
    unknown = sorted(set(section) - MEMORY_KEYS)
    if unknown:
        raise InvalidInput(
            f"memories.{name}: unknown key {unknown[0]!r}; a memory sets "
            f"{', '.join(sorted(MEMORY_KEYS))}"
        )
    values = {k: getattr(base, k) for k in Settings.model_fields if k not in OWN_KEYS}
    # A Zep user of its own: Zep serves a user's messages and derived facts to whoever asks
    # as that user, so a shared one would show this memory's text to the other memory.
    values["zep_user_id"] = zep_user_of(name)
    values.update(section, data_dir=memory_dir(base.data_dir, name), memories={})
    try:
        return Settings.model_validate(values)
    except ValidationError as exc:
        problems = [
            f"memories.{name}.{'.'.join(map(str, e['loc'])) or '?'}: {plain(e)}"
            for e in exc.errors(include_url=False)
        ]
        raise InvalidInput("invalid configuration: " + "; ".join(problems)) from None


# What a value should have been, in words, by pydantic's error type (``{x}``: its context).
_EXPECTED = {
    "int_parsing": "a whole number", "int_type": "a whole number",
    "int_from_float": "a whole number", "float_parsing": "a number", "float_type": "a number",
    "bool_parsing": "true or false", "bool_type": "true or false",
    "string_type": "text", "path_type": "a path (text)", "list_type": "a list",
    "dict_type": "a table", "greater_than": "a number above {gt}",
    "greater_than_equal": "a number of at least {ge}", "less_than": "a number below {lt}",
    "less_than_equal": "a number of at most {le}", "literal_error": "one of {expected}",
    "string_pattern_mismatch": "text of the form {pattern}",
    "extra_forbidden": "no such key (it is not a setting)",
}  # fmt: skip
_FORMS = {  # a pattern in words, by field
    "zep_url": "an http:// or https:// URL",
    "replica_id": "a replica id: 1 to 64 lower-case letters, digits, - or _",
    "zep_user_id": "an id: letters, digits, '.', '-', '_', ':' or '@'",
}


def plain(err: ErrorDetails) -> str:
    """A pydantic error in plain words: what was expected, and what came (a secret's value
    never shown): ``expected a number of seconds (got 'often')``."""
    key = str(err["loc"][-1]) if err["loc"] else ""
    context = err.get("ctx") or {}
    template = _EXPECTED.get(err["type"])
    if template is None:  # our own validators' errors are in words already
        words = err["msg"]
    else:
        words = "expected " + (
            _FORMS[key] if err["type"] == "string_pattern_mismatch" and key in _FORMS
            else template.format(**{k: _number(v) for k, v in context.items()})
        )  # fmt: skip
        field = Settings.model_fields.get(key)
        if "number" in words and field and (field.description or "").startswith("seconds"):
            words = words.replace("number", "number of seconds", 1)
    got = err.get("input")
    if isinstance(got, str | int | float | bool) and key not in SECRETS and repr(got) not in words:
        words += f" (got {got!r})"
    return words


def zep_api_key(settings: Settings) -> str:
    """The Zep API key from the setting or its file; `InvalidInput` naming what is missing."""
    if settings.zep_api_key is not None:
        return settings.zep_api_key.get_secret_value()
    if settings.zep_api_key_file is None:
        raise InvalidInput("zep_url is set but neither zep_api_key nor zep_api_key_file is")
    path = settings.zep_api_key_file.expanduser()
    try:
        key = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read zep_api_key_file {path}: {exc}") from None
    if not key:
        raise InvalidInput(f"zep_api_key_file {path} is empty")
    return key


class _Environment(EnvSettingsSource):
    """The ``CHRYSALIS_*`` variables of ``environ``, by their exact (upper-case) names."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        names = (ENV_PREFIX + key.upper() for key in settings_cls.model_fields)
        self.environ = {name: environ[name] for name in names if name in environ}
        super().__init__(settings_cls)

    def decode_complex_value(self, field_name: str, field: Any, value: Any) -> Any:
        """JSON, as pydantic-settings reads a list; else the text itself (a comma-separated
        list, split by the field's validator)."""
        try:
            return super().decode_complex_value(field_name, field, value)
        except ValueError:
            return value

    def _load_env_vars(self) -> Mapping[str, str | None]:
        # the base class reads os.environ; lower-cased as its (case-insensitive) lookup expects
        return {name.lower(): value for name, value in self.environ.items()}

    def origin(self, key: str) -> str | None:
        name = ENV_PREFIX + key.upper()
        return name if name in self.environ else None

    def source(self, key: str) -> str | None:
        name = self.origin(key)
        return None if name is None else f"env {name}"


class _TomlFile(TomlConfigSettingsSource):
    """A TOML file's table, refused whole if it cannot be read or names an unknown key."""

    def __init__(self, settings_cls: type[BaseSettings], path: Path) -> None:
        self.path = path
        if not path.is_file():  # the base class would skip it without a word
            try:
                path.open("rb").close()
            except OSError as exc:
                raise InvalidInput(f"cannot read config file {path}: {exc.strerror}") from None
        super().__init__(settings_cls, path)
        for key in self.toml_data:
            if key not in settings_cls.model_fields:
                close = difflib.get_close_matches(key, settings_cls.model_fields, n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                raise InvalidInput(f"{path}: unknown key {key!r}; {hint}known: {_known()}")

    def _read_file(self, file_path: Any) -> dict[str, Any]:
        try:
            return super()._read_file(file_path)
        except OSError as exc:
            raise InvalidInput(f"cannot read config file {self.path}: {exc.strerror}") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise InvalidInput(f"{self.path}: not valid TOML: {exc}") from None

    def origin(self, key: str) -> str | None:
        return f"{self.path}: {key}" if key in self.toml_data else None

    def source(self, key: str) -> str | None:
        return f"file {self.path}" if key in self.toml_data else None


# What `load_settings` layers under the flags, for the `Settings` it builds (none otherwise).
_LAYERS: ContextVar[tuple[_Environment | _TomlFile, ...]] = ContextVar("layers")


def load_settings(
    config_file: str | Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Merge defaults, the TOML file, ``CHRYSALIS_*`` variables and ``overrides`` (flags).

    The file is ``config_file``, else ``$CHRYSALIS_CONFIG``, else
    ``$XDG_CONFIG_HOME/chrysalis/config.toml`` if it exists. Each ``[memories.NAME]`` table
    is checked too. Raises `InvalidInput` naming each bad key, where it came from, and what
    was expected, in plain words.
    """
    return explain_settings(config_file, overrides, environ).settings


class Explained:
    """Settings and where each came from (`explain_settings`)."""

    def __init__(self, settings: Settings, file: Path | None, sources: dict[str, str]) -> None:
        self.settings = settings
        self.file = file  # the TOML file read, if any
        self.sources = sources  # key -> "default", "file PATH", "env CHRYSALIS_X", "flag --x"

    def memories(self) -> dict[str, Settings]:
        """Each ``[memories.NAME]`` table's effective settings (already checked)."""
        return {n: settings_for(self.settings, n, t) for n, t in self.settings.memories.items()}


def explain_settings(
    config_file: str | Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Explained:
    """`load_settings`, and where each setting came from."""
    environ = os.environ if environ is None else environ
    path = config_file or environ.get(ENV_PREFIX + "CONFIG")
    if path is None and default_config_file().exists():
        path = default_config_file()
    file = None if path is None else Path(path).expanduser()
    files = () if file is None else (_TomlFile(Settings, file),)
    layers = (_Environment(Settings, environ), *files)
    flags = {key: value for key, value in (overrides or {}).items() if value is not None}

    def origin(key: str) -> str | None:  # as an error names it
        found = f"--{key.replace('_', '-')}" if key in flags else None
        for layer in layers:
            found = found or layer.origin(key)
        return found

    token = _LAYERS.set(layers)
    try:
        settings = Settings(**flags)
    except ValidationError as exc:
        problems = []
        for err in exc.errors(include_url=False):
            key = str(err["loc"][0]) if err["loc"] else "?"
            problems.append(f"{origin(key) or key}: {plain(err)}")
        raise InvalidInput("invalid configuration: " + "; ".join(problems)) from None
    finally:
        _LAYERS.reset(token)
    sources = {}
    for key in Settings.model_fields:
        found = f"flag --{key.replace('_', '-')}" if key in flags else None
        for layer in layers:
            found = found or layer.source(key)
        sources[key] = found or "default"
    explained = Explained(settings, file, sources)
    try:  # the tables too, so a bad one is named with the file before anything starts
        explained.memories()
    except InvalidInput as exc:
        where = origin("memories") or "memories"
        at = where.removesuffix("memories").removesuffix(": ") or where
        message = exc.message.removeprefix("invalid configuration: ")
        raise InvalidInput(f"invalid configuration: {at}: {message}") from None
    return explained


def known_variables() -> frozenset[str]:
    """Every ``CHRYSALIS_*`` variable chrysalis reads."""
    names = {key.upper() for key in Settings.model_fields} | OTHER_VARIABLES
    return frozenset(ENV_PREFIX + name for name in names)


def unknown_variables(environ: Mapping[str, str]) -> list[str]:
    """A warning for each ``CHRYSALIS_*`` variable in ``environ`` that chrysalis does not
    read (a typo is otherwise silently ignored), with the closest known name if one is."""
    known = known_variables()
    out = []
    for name in sorted(n for n in environ if n.startswith(ENV_PREFIX) and n not in known):
        bare = [k.removeprefix(ENV_PREFIX) for k in known]  # the shared prefix is no likeness
        close = difflib.get_close_matches(name.removeprefix(ENV_PREFIX), bare, n=1, cutoff=0.8)
        hint = f"; did you mean {ENV_PREFIX}{close[0]}?" if close else ""
        out.append(f"{name} is set but is not a chrysalis setting: it is ignored{hint}")
    return out


def _number(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _known() -> str:
    return ", ".join(Settings.model_fields)
