"""Which config settings can change a run's answers: the run fingerprint's classification.

Every leaf setting of :class:`skillharness.config.Config` is classified here, once:

- ``ANSWER``: can change an answer of any run (model, sampling, agent limits, data, bundle);
- ``TRAIN``: can change what a training run does (``train.*``), but no inference answer;
- ``OPERATIONAL``: changes how a run executes or is reported, never an answer (where the store and
  cache live, concurrency, timeouts, retries, prices, report confidence).

A run's *settings* are the classified values that count for its kind, flattened to dotted keys
(``agent.samples``; a per-replica setting as the set of its values over the replicas,
``llm.endpoints.*.send_sample_idx``). Paths enter as the content of what they point
to (the questions and pools files' sha256, the bundle's hash), never as absolute paths, so moving
an experiment folder keeps resume working. The fingerprint is the hash of the settings; the
settings themselves are stored with the run so a refused resume can name what changed.

``tests/test_settings.py`` walks every field of ``Config`` and fails on one that is not
classified here, and on an entry here that names no field.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from skillharness.data import builtin_adapters
from skillharness.errors import ConfigError
from skillharness.infer import load_bundle
from skillharness.store import RunKind, content_hash, replica_neutral
from skillharness.util.atomic import sha256_file

__all__ = ["CLASSIFICATION", "PATH_CONTENT", "Scope", "config_leaves", "run_settings"]


class Scope(StrEnum):
    ANSWER = "answer"
    TRAIN = "train"
    OPERATIONAL = "operational"


_A, _T, _O = Scope.ANSWER, Scope.TRAIN, Scope.OPERATIONAL
# A ``*`` stands for any item of a list or any key of a mapping.
CLASSIFICATION: Mapping[str, Scope] = types.MappingProxyType(
    {
        # data: what is asked and what the agent sees
        "data.questions": _A,
        "data.pools": _A,
        "data.pools_sha256": _O,  # a check of data.pools, whose content is in the settings
        "data.videos_dir": _A,
        "data.subtitles_dir": _A,
        "data.benchmark": _A,  # the adapter: which questions and answers the file is read as
        # llm: who answers, and how replies are read
        "llm.model": _A,
        # Replicas are interchangeable: llm.model names the weights, and a resume may add or drop
        # replicas. Per-replica answer settings count as the set of their values (replica_neutral).
        "llm.endpoints.*.base_url": _O,
        "llm.endpoints.*.weight": _O,
        "llm.endpoints.*.api_key_env": _O,
        "llm.endpoints.*.max_in_flight": _O,
        "llm.endpoints.*.name": _O,
        "llm.endpoints.*.send_sample_idx": _A,  # the server seeds each sample from it
        # How frames reach the model: what it sees (one value over the replicas, LLMConfig checks).
        "llm.endpoints.*.media.transport": _A,
        "llm.endpoints.*.media.url_base": _A,  # the file the server decodes
        "llm.endpoints.*.media.fps": _A,
        "llm.tool_calls_in_content": _A,
        "llm.timeouts.connect_s": _O,
        "llm.timeouts.read_s": _O,
        "llm.timeouts.write_s": _O,
        "llm.timeouts.pool_s": _O,
        "llm.timeouts.total_s": _O,
        "llm.timeouts.probe_s": _O,
        "llm.retry.max_attempts": _O,
        "llm.retry.base_delay_s": _O,
        "llm.retry.max_delay_s": _O,
        "llm.retry.retry_after_cap_s": _O,
        "llm.retry.max_elapsed_s": _O,
        "llm.retry.budget_share": _O,
        "llm.retry.budget_window_s": _O,
        "llm.retry.budget_floor": _O,
        "llm.breaker.failure_threshold": _O,
        "llm.breaker.cooldown_s": _O,
        "llm.breaker.on_open": _O,
        "llm.breaker.wait_deadline_s": _O,
        "llm.prices.*.prompt_per_mtok": _O,
        "llm.prices.*.completion_per_mtok": _O,
        # cache: the salt decides which stored replies may be replayed; the rest is where and how long
        "cache.salt": _A,
        "cache.share_across_runs": _A,  # decides whether another run's samples are replayed
        "cache.enabled": _O,
        "cache.url": _O,
        "cache.ttl": _O,
        "cache.namespace": _O,
        "cache.flight_wait_s": _O,
        "store.url": _O,
        "store.batch_size": _O,
        "store.queue_size": _O,
        "store.busy_timeout_s": _O,
        "store.lease_expiry_s": _O,
        "store.lease_heartbeat_s": _O,
        "store.host": _O,
        # agent: the bundle and everything the agent is shown or allowed
        "agent.bundle": _A,
        "agent.initial_frames": _A,
        "agent.max_steps": _A,
        "agent.max_frames": _A,
        "agent.max_frames_per_call": _A,
        "agent.vision": _A,
        "agent.subtitles": _A,
        "agent.max_subtitle_chars": _A,
        "agent.trace_chars": _T,  # what a stored trace keeps: the judge reads it, no answer does
        "agent.samples": _A,
        "agent.concurrency": _O,
        "agent.sampling.temperature": _A,
        "agent.sampling.top_p": _A,
        "agent.sampling.top_k": _A,
        "agent.sampling.max_tokens": _A,
        "agent.sampling.seed": _A,
        "agent.sampling.presence_penalty": _A,
        "agent.sampling.frequency_penalty": _A,
        "agent.sampling.repetition_penalty": _A,
        "agent.sampling.stop": _A,
        "agent.seed_salt": _A,  # it picks the per_draw seeds, and so the sampled answers
        "agent.frames.longest_side": _A,
        "agent.frames.jpeg_quality": _A,
        "agent.frames.cache_dir": _O,
        "agent.frames.cache_enabled": _O,
        # train: every step's decisions
        "train.epochs": _T,
        "train.batch_size": _T,
        "train.early_stop_patience": _T,
        "train.task_types": _T,
        "train.skill_update_mode": _T,
        "train.prompts_dir": _T,
        "train.seed": _T,
        "train.ema_gamma": _T,
        "train.gate.alpha": _T,
        "train.gate.bet_cap": _T,
        "train.gate.n_max": _T,
        "train.gate.min_effect": _T,
        "train.gate.futility_z": _T,
        "train.gate.max_open": _T,
        "train.gate.merge_open": _T,
        "train.gate.share_incumbent": _T,
        "train.gate.merge_min_wealth": _T,
        "train.gate.merge_sizing": _T,
        "train.gate.merge_max_parts": _T,
        "train.gate.merge_credit": _T,
        "train.gate.bet_strategy": _T,
        "train.gate.first_stage": _T,
        "train.gate.stage_growth": _T,
        "train.gate.n_candidates": _T,
        "train.gate.alpha_spending": _T,
        "train.gate.mcnemar_alpha": _T,
        "train.gate.rule": _T,
        "train.gate.minibatch_size": _T,
        "train.gate.guard_draws": _T,
        "train.gate.guard_harm": _T,
        "train.gate.guard_power": _T,
        "train.gate.guard_clear": _T,
        "train.gate.guard_discordance": _T,
        "train.gate.guard_max_draws": _T,
        "train.infra_retries": _T,
        "train.diagnosis.min_excluded": _T,
        "train.gate.min_distinct": _T,
        "train.gate.reserve": _T,
        "train.diagnosis.max_excluded_share": _T,
        "train.diagnosis.enabled": _T,
        "train.diagnosis.judge_template": _T,
        "train.casepack.max_cases": _T,
        "train.evolve.candidates": _T,
        "train.evolve.rejected_memory": _T,
        "train.evolve.show_under_test": _T,
        "train.evolve.rank": _T,
        "train.evolve.rank_may_decline": _T,
        "train.evolve.rank_trial_tests": _T,
        "train.evolve.rank_trial_alpha": _T,
        "train.evolve.max_edits": _T,
        "train.evolve.max_body_chars": _T,
        "train.evolve.max_system_chars": _T,
        "train.momentum.enabled": _T,
        "train.momentum.gated": _T,
        "train.momentum.max_chars": _T,
        # A budget stops a run; it changes no step taken before, so a resume may raise it.
        "train.budget.max_calls": _O,
        "train.budget.max_cost": _O,
        "train.budget.max_wall_s": _O,
        "train.roles.*.model": _T,
        "train.roles.*.temperature": _T,
        "train.roles.*.top_p": _T,
        "train.roles.*.max_tokens": _T,
        "train.roles.*.seed": _T,
        # eval: whether a holdout is run, and how it is reported
        "eval.run_holdout_eval": _O,
        "eval.confidence": _O,
        "eval.samples": _O,  # eval runs record their own draws; no infer or train answer depends on it
        "eval.protocols": _O,  # transfer runs record their own protocol; no other answer depends on it
        "infer.max_infra_share": _O,
        "infer.max_refused_share": _O,
        "report.mlflow_uri": _O,
        "report.mlflow_experiment": _O,
        "agent.protocol": _A,
        "agent.protocol_frames": _A,
        "agent.protocol_bundle_slot": _A,
    }
)

# Path settings and how their target enters the settings (never the path itself).
PATH_CONTENT: Mapping[str, str] = types.MappingProxyType(
    {
        "data.questions": "file",
        "data.pools": "file",
        "data.benchmark": "adapter",  # a built-in name as itself, an adapter .yaml by its content
        "data.videos_dir": "listing",  # file names and sizes: hashing video bytes costs minutes
        "data.subtitles_dir": "folder",
        "agent.bundle": "bundle",
        "train.prompts_dir": "folder",
        "agent.frames.cache_dir": "none",
    }
)


def _nested_model(annotation: Any) -> tuple[bool, type[BaseModel]] | None:
    """``(many, model)`` when a field holds a model, or a list/tuple/mapping of models."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        found = [m for m in (_nested_model(a) for a in typing.get_args(annotation)) if m]
        return found[0] if found else None
    if origin in (list, tuple, dict):
        args = [a for a in typing.get_args(annotation) if a is not Ellipsis]
        inner = args[-1] if args else None
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            return True, inner
        return None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return False, annotation
    return None


def config_leaves(model: type[BaseModel], prefix: str = "") -> Iterator[str]:
    """Every leaf setting of ``model`` as a classification pattern (``llm.endpoints.*.base_url``)."""
    for name, field in model.model_fields.items():
        pattern = f"{prefix}{name}"
        nested = _nested_model(field.annotation)
        if nested is None:
            yield pattern
        else:
            many, inner = nested
            yield from config_leaves(inner, f"{pattern}.*." if many else f"{pattern}.")


def _counts(pattern: str, kind: RunKind) -> bool:
    """Whether ``pattern`` (a leaf, or a section standing for its leaves) counts for ``kind``."""
    scopes = {
        scope for leaf, scope in CLASSIFICATION.items() if leaf == pattern or leaf.startswith(pattern + ".")
    }
    if not scopes:
        raise ConfigError(f"config setting {pattern!r} is not classified in skillharness.settings")
    return Scope.ANSWER in scopes or (Scope.TRAIN in scopes and kind is RunKind.TRAIN)


def _flatten(
    model: type[BaseModel], values: Mapping[str, Any], pattern: str, path: str
) -> Iterator[tuple[str, str, Any]]:
    for name, field in model.model_fields.items():
        sub_pattern, sub_path, value = f"{pattern}{name}", f"{path}{name}", values.get(name)
        nested = _nested_model(field.annotation)
        if nested is None or not value:  # a leaf, or an empty/absent section
            yield sub_pattern, sub_path, value
            continue
        many, inner = nested
        if not many:
            yield from _flatten(inner, value, f"{sub_pattern}.", f"{sub_path}.")
            continue
        items = value.items() if isinstance(value, Mapping) else enumerate(value)
        for key, item in items:
            yield from _flatten(inner, item, f"{sub_pattern}.*.", f"{sub_path}.{key}.")


def _folder_files(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*")):
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(root).parts):
            yield path


def _content(how: str, value: Any) -> Any:
    """What a path setting contributes: the content of its target, never the path."""
    if value is None or how == "none":
        return None
    if how == "adapter":  # a built-in adapter's name is its identity; a user's file counts by content
        if value in builtin_adapters():
            return value
        how = "file"
    path = Path(value)
    if not path.exists():
        return "missing"
    if how == "file" and path.is_dir():  # a per-task layout (MVBench's json/): every file in it
        how = "folder"
    if how == "file":
        return f"sha256:{sha256_file(path)}"
    if how == "bundle":
        return f"bundle:{load_bundle(path).bundle_hash}"
    if how == "listing":
        sizes = {p.name: p.stat().st_size for p in sorted(path.iterdir()) if p.is_file()}
        return f"listing:{content_hash(sizes)}"
    files = {str(p.relative_to(path)): sha256_file(p) for p in _folder_files(path)}
    return f"folder:{content_hash(files)}"


def run_settings(config: BaseModel, kind: RunKind | str = RunKind.INFER) -> dict[str, Any]:
    """The settings of ``config`` that count for a run of ``kind``, by dotted key.

    An ``infer``, ``eval`` or ``gate`` run counts the ``ANSWER`` settings; a ``train`` run also the
    ``TRAIN`` ones.
    """
    kind = RunKind(kind)
    settings: dict[str, Any] = {}
    for pattern, path, value in _flatten(type(config), config.model_dump(mode="json"), "", ""):
        if _counts(pattern, kind):
            settings[path] = _content(PATH_CONTENT[pattern], value) if pattern in PATH_CONTENT else value
    return replica_neutral(settings)
