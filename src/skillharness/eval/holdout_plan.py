"""What a holdout evaluation is before it reads a question: its sealed pool, its two arms, its runs.

:func:`plan_holdout` resolves and checks everything a holdout needs (the split, the media, the
agent's slot, the eval id and each arm's run provenance) so that a bad input stops the eval before
either arm calls the model; :mod:`skillharness.eval.holdout` then rolls the plan and reports it.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from pydantic import ValidationError

from skillharness.data import Pool, Question, load_pool_questions
from skillharness.errors import ConfigError
from skillharness.eval.config import EvalConfig
from skillharness.eval.ledger import EVAL_PURPOSE, EvalArm, arm_run_id
from skillharness.infer import check_agent_slot, inputs_hash, run_provenance
from skillharness.infer.runner import InferSettings, check_media
from skillharness.skills import Bundle
from skillharness.store import RunKind, RunMetric, RunProvenance
from skillharness.util.model import describe_validation

__all__ = [
    "Arm",
    "HoldoutPlan",
    "HoldoutSettings",
    "TestPool",
    "default_eval_id",
    "load_test_pool",
    "plan_holdout",
    "purpose_metrics",
]


class HoldoutSettings(InferSettings, Protocol):
    """The config sections the holdout reads (``skillharness.config.Config`` is one)."""

    @property
    def eval(self) -> EvalConfig: ...


@dataclass(frozen=True)
class TestPool:
    """The sealed pool, read only here: its questions, the val ids (for the oracle) and the split hash."""

    questions: tuple[Question, ...]
    val_ids: tuple[str, ...]
    pools_sha256: str


@dataclass(frozen=True)
class Arm:
    """One side of the comparison: a bundle and a label saying where it came from."""

    bundle: Bundle
    label: str


_SIDES = (EvalArm.FINAL, EvalArm.BASELINE)  # the order of a plan's arms and runs


def default_eval_id() -> str:
    return f"eval-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(3)}"


def load_test_pool(config: HoldoutSettings) -> TestPool:
    """The test pool's questions (ConfigError without a split or with an empty test pool)."""
    chosen, frozen = load_pool_questions(config.data, (Pool.TEST,), purpose="the holdout")
    if not chosen[Pool.TEST]:
        raise ConfigError(f"{config.data.pools} has an empty test pool: there is nothing to hold out")
    return TestPool(chosen[Pool.TEST], tuple(frozen.questions.get(Pool.VAL, ())), frozen.sha256)


def _provenance(
    config: HoldoutSettings, run_id: str, bundle: Bundle, pools_sha256: str, parent: str | None
) -> RunProvenance:
    return run_provenance(
        run_id=run_id,
        kind=RunKind.EVAL,
        config_hash=inputs_hash(config.fingerprint(), config.data.questions),
        bundle_hash=bundle.bundle_hash,
        pool=Pool.TEST,
        pools_sha256=pools_sha256,
        llm=config.llm,
        agent=config.agent,
        parent_run_id=parent,
    )


@dataclass(frozen=True)
class HoldoutPlan:
    """One evaluation, resolved: its id, why, for which run, the two arms and their runs, the pool."""

    eval_id: str
    purpose: str
    train_run_id: str | None
    arms: tuple[Arm, Arm]  # final, baseline
    runs: tuple[RunProvenance, RunProvenance]
    pool: TestPool


def plan_holdout(
    config: HoldoutSettings,
    final: Bundle | Arm,
    baseline: Bundle | Arm,
    train_run_id: str | None,
    purpose: str,
    eval_id: str | None,
) -> HoldoutPlan:
    if not purpose.strip():
        raise ConfigError("an eval needs a purpose: say why the test pool is read")
    arms = (_as_arm(final), _as_arm(baseline))
    pool = load_test_pool(config)
    check_media(config.data, pool.questions, subtitles=config.agent.subtitles)
    check_agent_slot(config.agent, config.data.benchmark)
    eval_id = eval_id or default_eval_id()
    try:
        runs = tuple(
            _provenance(config, arm_run_id(eval_id, side), arm.bundle, pool.pools_sha256, train_run_id)
            for side, arm in zip(_SIDES, arms, strict=True)
        )
    except ValidationError as exc:
        raise ConfigError(f"invalid eval id {eval_id!r}: {describe_validation(exc, limit=1)}") from None
    return HoldoutPlan(eval_id, purpose, train_run_id, arms, (runs[0], runs[1]), pool)


def _as_arm(side: Bundle | Arm) -> Arm:
    return side if isinstance(side, Arm) else Arm(side, side.source)


def purpose_metrics(plan: HoldoutPlan) -> list[RunMetric]:
    return [
        RunMetric(
            run_id=run.run_id,
            name=EVAL_PURPOSE,
            value={
                "purpose": plan.purpose,
                "arm": side.value,
                "train_run_id": plan.train_run_id,
                "eval_id": plan.eval_id,
            },
        )
        for side, run in zip(_SIDES, plan.runs, strict=True)
    ]
