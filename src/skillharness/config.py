"""The one config: YAML file, then environment, then command-line flags.

Precedence (highest first): flags actually given on the command line, ``SKILLHARNESS_*``
environment variables (``SKILLHARNESS_LLM__MODEL=...``, ``__`` descends a level), the YAML file,
the defaults. Every section rejects unknown keys, and the error names the key, its path and
where it came from (file, variable or flag). Secrets are never config values: an endpoint names
the environment variable that holds its key (``api_key_env``), and the key is read at call time.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any, get_args

import yaml
from pydantic import BaseModel, Field, ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict
from pydantic_settings.exceptions import SettingsError

from skillharness.agent.config import AgentConfig
from skillharness.data.config import DataConfig
from skillharness.errors import ConfigError
from skillharness.eval.config import EvalConfig, ReportConfig
from skillharness.infer import InferConfig
from skillharness.llm.config import CacheConfig, LLMConfig
from skillharness.settings import run_settings
from skillharness.store import RunKind, StoreConfig, content_hash
from skillharness.train.config import TrainConfig
from skillharness.util import strict_yaml
from skillharness.util.model import validation_problems

__all__ = ["ENV_PREFIX", "Config", "flag_overrides", "load_config"]

ENV_PREFIX = "SKILLHARNESS_"
_NESTED = "__"
_SQLITE = "sqlite:///"  # sqlite:///relative/path, sqlite:////absolute/path
_yaml_data: ContextVar[dict[str, Any] | None] = ContextVar("_yaml_data", default=None)


class _YamlSource(PydanticBaseSettingsSource):
    """The parsed YAML of the current :func:`load_config` call (lowest-priority source)."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return (_yaml_data.get() or {}).get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(_yaml_data.get() or {})


class Config(BaseSettings):
    """Everything a user sets. See ``docs/config.md`` for every key."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter=_NESTED,
        extra="forbid",
        frozen=True,
        case_sensitive=False,
        # A variable set empty (``VAR=``) is unset, as a shell user means it, never an empty path
        # (the working folder); ``null`` is None, never a folder named ``null``.
        env_ignore_empty=True,
        env_parse_none_str="null",
    )

    data: DataConfig = Field(default_factory=DataConfig)
    llm: LLMConfig = Field(default_factory=LLMConfig)
    cache: CacheConfig = Field(default_factory=CacheConfig)
    store: StoreConfig = Field(default_factory=StoreConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    train: TrainConfig = Field(default_factory=TrainConfig)
    eval: EvalConfig = Field(default_factory=EvalConfig)
    infer: InferConfig = Field(default_factory=InferConfig)
    report: ReportConfig = Field(default_factory=ReportConfig)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Flags (init kwargs) beat the environment, which beats the file. No .env or secrets dir:
        # a secret must come from the environment named in the config, nowhere else.
        return init_settings, env_settings, _YamlSource(settings_cls)

    def for_run(self, run_id: str) -> Config:
        """This config as run ``run_id`` uses it: the agent's per-draw seed salt resolved (the run's
        id when unset), so the run's stored settings name the seeds it drew."""
        return self.with_agent(self.agent.for_run(run_id))

    def with_agent(self, agent: AgentConfig) -> Config:
        return self.model_copy(update={"agent": agent})

    def settings(self, kind: RunKind | str = RunKind.INFER) -> dict[str, Any]:
        """The settings that can change a ``kind`` run's result, by dotted key (no secrets).

        Classified in :mod:`skillharness.settings`: an infer, eval or gate run counts data, llm,
        agent and the bundle; a train run also ``train.*``. Paths count by their content.
        """
        return run_settings(self, kind)

    def fingerprint(self, kind: RunKind | str = RunKind.INFER) -> str:
        """sha256 of :meth:`settings` (run provenance; holds no secrets).

        Operational settings — where the store and cache live, concurrency, timeouts, retries,
        breaker, prices, report confidence — are left out, so a crashed run can be resumed with,
        say, lower concurrency or a larger budget, while a changed model, sampling or bundle content is
        refused.
        """
        return content_hash(self.settings(kind))


def flag_overrides(flags: Mapping[str, Any]) -> dict[str, Any]:
    """Nest dotted flag values (``{"agent.concurrency": 8}``), dropping flags not given (None).

    A flag overrides the file only when the user typed it: typer options default to ``None``
    and are dropped here, so a default never masks a YAML value.
    """
    nested: dict[str, Any] = {}
    for dotted, value in flags.items():
        if value is None:
            continue
        *parents, leaf = dotted.split(".")
        node = nested
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return nested


def _read_yaml(path: Path) -> dict[str, Any]:
    if path.is_dir():
        raise ConfigError(f"{path}: is a folder; name the experiment's YAML file in it", file=str(path))
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}", file=str(path))
    try:
        data = strict_yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}", file=str(path)) from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path}: the top level must be a mapping of sections, got {type(data).__name__}", file=str(path)
        )
    odd = [key for key in data if not isinstance(key, str)]
    if odd:  # YAML allows `1:` or `null:` keys; they would otherwise fail deep inside pydantic
        raise ConfigError(f"{path}: section names must be text, got {odd!r}", file=str(path))
    return data


def _check_env_sections() -> None:
    sections = set(Config.model_fields)
    for name in os.environ:
        if name.upper().startswith(ENV_PREFIX):
            rest = name[len(ENV_PREFIX) :]
            head = rest.split(_NESTED)[0].lower()
            if head and head not in sections and "__" in rest:
                raise ConfigError(
                    f"environment variable {name}: unknown config section {head!r} "
                    f"(known: {', '.join(sorted(sections))})",
                    variable=name,
                )
            # SKILLHARNESS_TRAIN_EPOCHS would be read as nothing at all: a setting lost without a word.
            typo = next((sec for sec in sections if head.startswith(f"{sec}_") and _NESTED not in rest), None)
            if typo is not None:
                fixed = ENV_PREFIX + typo.upper() + _NESTED + rest[len(typo) + 1 :]
                raise ConfigError(
                    f"environment variable {name}: a section and its keys are joined by two underscores "
                    f"({fixed}); as it stands it sets nothing",
                    variable=name,
                )


def _has_path(data: Any, path: tuple[Any, ...]) -> bool:
    node = data
    for part in path:
        in_mapping = isinstance(node, Mapping) and part in node
        in_sequence = isinstance(node, list | tuple) and isinstance(part, int) and part < len(node)
        if in_mapping or in_sequence:
            node = node[part]
        else:
            return False
    return True


def _env_variable(loc: tuple[Any, ...]) -> str | None:
    """The set variable that supplies ``loc`` (itself, or a parent section given as JSON)."""
    present = {name.upper(): name for name in os.environ}
    for depth in range(len(loc), 0, -1):
        name = ENV_PREFIX + _NESTED.join(str(p).upper() for p in loc[:depth])
        if name in present:
            return present[name]
    return None


def _origin(loc: tuple[Any, ...], yaml_data: dict[str, Any], flags: dict[str, Any], path: Path | None) -> str:
    # Checked in the order the sources win: a variable overrides the file, so a bad value that
    # is set in both came from the variable.
    if _has_path(flags, loc):
        return "the command line"
    variable = _env_variable(loc)
    if variable is not None:
        return f"the environment ({variable})"
    if _has_path(yaml_data, loc):
        return str(path)
    return f"the environment ({_env_name(loc)})"


def _given(loc: tuple[Any, ...], yaml_data: dict[str, Any], flags: dict[str, Any]) -> tuple[Any, ...]:
    """``loc`` up to the deepest key a source gave: pydantic adds a union member's label to the path
    of a value none of its types took (``agent.sampling.seed.int``), which no file or variable names."""
    for depth in range(len(loc), 0, -1):
        head = loc[:depth]
        if (
            _has_path(flags, head)
            or _has_path(yaml_data, head)
            or (_env_variable(head) or "").upper() == _env_name(head)
        ):
            return head
    return loc


def _env_name(loc: tuple[Any, ...]) -> str:
    return ENV_PREFIX + _NESTED.join(str(p).upper() for p in loc)


def _explain(
    exc: ValidationError, yaml_data: dict[str, Any], flags: dict[str, Any], path: Path | None
) -> str:
    lines = []
    for problem in validation_problems(exc):
        loc = _given(problem.loc, yaml_data, flags)
        dotted = ".".join(str(p) for p in loc)
        where = _origin(loc, yaml_data, flags, path)
        if problem.kind == "extra_forbidden":
            lines.append(f"unknown key {str(problem.loc[-1])!r} at {dotted} (in {where})")
        else:
            lines.append(f"{dotted}: {problem.message} (in {where})")
    return "invalid config:\n  " + "\n  ".join(lines)


def path_settings(model: type[BaseModel] = Config, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every setting typed as a path (``("agent", "frames", "cache_dir")``), found on the models.

    Read from the models, not listed by hand, so a new path setting is resolved like the others.
    """
    found: list[tuple[str, ...]] = []
    for name, field in model.model_fields.items():
        members = get_args(field.annotation) or (field.annotation,)
        if Path in members:
            found.append((*prefix, name))
        for member in members:
            if isinstance(member, type) and issubclass(member, BaseModel):
                found.extend(path_settings(member, (*prefix, name)))
    return found


def _resolve_relative(yaml_data: dict[str, Any], base: Path) -> dict[str, Any]:
    # Paths in a config file are relative to the file, so an experiment folder can move as a whole.
    resolved_data = dict(yaml_data)
    for keys in path_settings():
        resolved_data = _resolved_at(resolved_data, keys, base)
    # data.benchmark is a built-in adapter's name or an adapter file: only a file is a path.
    data = resolved_data.get("data")
    benchmark = data.get("benchmark") if isinstance(data, dict) else None
    if isinstance(benchmark, str) and benchmark.lower().endswith((".yaml", ".yml")):
        resolved_data = _resolved_at(resolved_data, ("data", "benchmark"), base)
    for section in ("store", "cache"):
        values = resolved_data.get(section)
        url = values.get("url") if isinstance(values, dict) else None
        if isinstance(url, str) and url.startswith(_SQLITE) and not url[len(_SQLITE) :].startswith("/"):
            resolved_data[section] = {**values, "url": _SQLITE + str((base / url[len(_SQLITE) :]).resolve())}
    return resolved_data


def _resolved_at(values: dict[str, Any], keys: tuple[str, ...], base: Path) -> dict[str, Any]:
    """``values`` with the path at ``keys`` made absolute against ``base`` (a copy; absent: unchanged)."""
    head, rest = keys[0], keys[1:]
    value = values.get(head)
    if rest:
        return {**values, head: _resolved_at(value, rest, base)} if isinstance(value, dict) else values
    if not isinstance(value, str) or not value:
        return values
    path = Path(value).expanduser()  # "~/videos" means the home folder, not <base>/~
    return {**values, head: str(path if path.is_absolute() else (base / path).resolve())}


def _not_json(exc: SettingsError) -> str:
    """What pydantic-settings' refusal of a variable's value means, naming the variable."""
    field = re.search(r'field "([^"]+)"', str(exc))
    section = (ENV_PREFIX + field.group(1)).upper() if field else ENV_PREFIX
    names = [n for n in os.environ if n.upper() == section or n.upper().startswith(section + _NESTED)]
    return (
        f"environment variable {' or '.join(sorted(names)) or '(unknown)'}: not valid JSON; a variable that "
        f"sets a whole section or a list must hold it as JSON ({exc})"
    )


def load_config(path: Path | str | None = None, flags: Mapping[str, Any] | None = None) -> Config:
    """Build the config from ``path`` (optional YAML), the environment and given ``flags``."""
    file_path = Path(path) if path is not None else None
    yaml_data = _resolve_relative(_read_yaml(file_path), file_path.parent) if file_path else {}
    overrides = flag_overrides(flags or {})
    _check_env_sections()
    token = _yaml_data.set(yaml_data)
    try:
        return Config(**overrides)
    except ValidationError as exc:
        raise ConfigError(_explain(exc, yaml_data, overrides, file_path), file=str(file_path)) from exc
    except SettingsError as exc:  # a variable holding a section (or list) that is not JSON
        raise ConfigError(_not_json(exc)) from exc
    finally:
        _yaml_data.reset(token)
