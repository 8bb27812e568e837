"""Opening a training run: the config's pools, the session and the role caller, as a TrainContext.

The test pool's ids are dropped here, before anything training-related exists (a sealed holdout):
:class:`TrainContext` is built from the train and val questions only. The trained classes come
from :func:`skillharness.train.validate.coverage.plan_trained_classes`, the rule preflight reports with.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from skillharness.agent.config import AgentConfig
from skillharness.data import FrozenPools, Pool, load_pool_questions
from skillharness.data.questions import Question
from skillharness.errors import ConfigError, TemplateError
from skillharness.infer import inputs_hash, open_session, run_provenance
from skillharness.infer.runner import InferSettings, check_media
from skillharness.skills import Bundle
from skillharness.store import RunKind
from skillharness.train.config import TrainConfig
from skillharness.train.roles.templates import PromptTemplates, load_templates
from skillharness.train.state.caller import RoleCaller
from skillharness.train.state.context import TrainContext
from skillharness.train.state.draws import draw_temperature
from skillharness.train.validate.coverage import TrainedClasses, plan_trained_classes

__all__ = ["TrainSettings", "default_train_run_id", "open_training", "trained_task_types"]


class TrainSettings(InferSettings, Protocol):
    """The config sections training reads (``skillharness.config.Config`` is one)."""

    @property
    def train(self) -> TrainConfig: ...
    def fingerprint(self, kind: RunKind = RunKind.INFER) -> str: ...
    def settings(self, kind: RunKind = RunKind.INFER) -> dict[str, Any]: ...
    def for_run(self, run_id: str) -> TrainSettings: ...
    def with_agent(self, agent: AgentConfig) -> TrainSettings: ...


def default_train_run_id() -> str:
    return f"train-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(3)}"


def _pool_questions(
    config: TrainSettings,
) -> tuple[tuple[tuple[Question, ...], ...], tuple[Question, ...], FrozenPools]:
    """The train pool as units (a video's questions together), the val pool, and the frozen pools."""
    chosen, frozen = load_pool_questions(config.data, (Pool.TRAIN, Pool.VAL), purpose="training")
    return tuple(frozen.units_of(chosen[Pool.TRAIN])), chosen[Pool.VAL], frozen


def trained_task_types(
    config: TrainSettings, questions: tuple[Question, ...], pools: FrozenPools
) -> TrainedClasses:
    """The classes training edits, by preflight's rule: the configured ones, else the non-micro ones.

    ``questions`` are the train and val questions (the test pool stays sealed); a class with none
    of them is micro in preflight too, so both see the same trained classes.
    """
    temperature = draw_temperature(config.agent.sampling)
    classes = plan_trained_classes(questions, pools, config.train, temperature)
    if classes.unknown:
        raise ConfigError(
            "train.task_types names task types with no train or val question: " + ", ".join(classes.unknown),
            key="train.task_types",
        )
    return classes


def _templates(folder: Path | None) -> PromptTemplates:
    """The run's templates; a problem with a folder of the user's names the setting that chose it."""
    try:
        return load_templates(folder)
    except TemplateError as exc:
        if folder is None:
            raise
        raise TemplateError(f"train.prompts_dir: {exc}", **exc.context) from None


@contextlib.asynccontextmanager
async def open_training(
    config: TrainSettings, bundle: Bundle, *, run_id: str, kind: RunKind = RunKind.TRAIN
) -> AsyncIterator[TrainContext]:
    """A :class:`TrainContext` for ``run_id`` whose session stays open for the block."""
    train_units, val, pools = _pool_questions(config)
    classes = trained_task_types(config, (*(q for u in train_units for q in u), *val), pools)
    check_media(
        config.data, [q for unit in train_units for q in unit] + list(val), subtitles=config.agent.subtitles
    )
    templates = _templates(config.train.prompts_dir)
    provenance = run_provenance(
        run_id=run_id,
        kind=kind,
        config_hash=inputs_hash(config.fingerprint(RunKind.TRAIN), config.data.questions),
        bundle_hash=bundle.bundle_hash,
        pool=Pool.TRAIN,
        pools_sha256=pools.sha256,
        llm=config.llm,
        agent=config.agent,
    )
    async with open_session(
        data=config.data,
        agent=config.agent,
        llm=config.llm,
        cache=config.cache,
        store=config.store,
        salt=run_id,
    ) as session:
        caller = RoleCaller(session.stack, templates, config.llm.model, config.train.roles)
        yield TrainContext(
            run_id=run_id,
            config=config.train,
            session=session,
            caller=caller,
            train_units=train_units,
            val_questions=val,
            task_types=classes.names,
            micro_trained=classes.micro_trained,
            provenance=provenance,
            max_infra_share=config.infer.max_infra_share,
            max_refused_share=config.infer.max_refused_share,
        )
