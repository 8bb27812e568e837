"""The holdout evaluation: the final and the baseline bundle on the sealed test pool.

Each bundle is one run of kind ``eval`` on pool ``test`` (``<eval id>.final`` and
``<eval id>.baseline``), a child of the training run when there is one, and each records why it
read the test pool (``eval_purpose``). Both answer the same ``(question, sample)`` draws, so the
comparison is paired. The report is stored as the ``holdout`` metric (see
:mod:`skillharness.eval.ledger`) and returned.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from pydantic import ValidationError

from skillharness.data import Pool, Question, load_pool_questions
from skillharness.errors import ConfigError
from skillharness.eval.config import EvalConfig
from skillharness.eval.group_scores import compare_group_scores
from skillharness.eval.holdout_report import GroupRow, GroupScores, HoldoutReport
from skillharness.eval.ledger import (
    EVAL_PURPOSE,
    HOLDOUT,
    EvalArm,
    arm_run_id,
    compare_val_holdout,
    count_test_pool_runs,
    val_gain,
)
from skillharness.eval.tables import compare_groups
from skillharness.eval.truth import SimTruth, agent_path, simulator_truth
from skillharness.infer import (
    InferProgress,
    RunSession,
    check_agent_slot,
    inputs_hash,
    open_session,
    probe_endpoints,
    run_provenance,
)
from skillharness.infer.runner import InferSettings, check_media
from skillharness.skills import Bundle
from skillharness.store import (
    Prediction,
    RunKind,
    RunMetric,
    RunProvenance,
    RunReader,
    RunStore,
)
from skillharness.util.model import describe_validation

__all__ = ["Arm", "HoldoutSettings", "TestPool", "default_eval_id", "load_test_pool", "run_holdout"]


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


_SIDES = ("final", "baseline")


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
class _Plan:
    """One evaluation, resolved: its id, why, for which run, the two arms and their runs, the pool."""

    eval_id: str
    purpose: str
    train_run_id: str | None
    arms: tuple[Arm, Arm]  # final, baseline
    runs: tuple[RunProvenance, RunProvenance]
    pool: TestPool


def _plan(
    config: HoldoutSettings,
    final: Bundle | Arm,
    baseline: Bundle | Arm,
    train_run_id: str | None,
    purpose: str,
    eval_id: str | None,
) -> _Plan:
    if not purpose.strip():
        raise ConfigError("an eval needs a purpose: say why the test pool is read")
    arms = (_as_arm(final), _as_arm(baseline))
    pool = load_test_pool(config)
    check_media(config.data, pool.questions, subtitles=config.agent.subtitles)
    check_agent_slot(config.agent, config.data.benchmark)
    eval_id = eval_id or default_eval_id()
    try:
        runs = (
            _provenance(
                config, arm_run_id(eval_id, EvalArm.FINAL), arms[0].bundle, pool.pools_sha256, train_run_id
            ),
            _provenance(
                config, arm_run_id(eval_id, EvalArm.BASELINE), arms[1].bundle, pool.pools_sha256, train_run_id
            ),
        )
    except ValidationError as exc:
        raise ConfigError(f"invalid eval id {eval_id!r}: {describe_validation(exc, limit=1)}") from None
    return _Plan(eval_id, purpose, train_run_id, arms, runs, pool)


def _as_arm(side: Bundle | Arm) -> Arm:
    return side if isinstance(side, Arm) else Arm(side, side.source)


async def _roll_arms(
    session: RunSession, plan: _Plan, draws: Sequence[tuple[Question, int]], progress: InferProgress
) -> list[list[Prediction]]:
    done = 0
    for provenance in plan.runs:
        if await asyncio.to_thread(session.store.has_run, provenance.run_id):
            done += len(await asyncio.to_thread(session.store.final_predictions, provenance.run_id))
    progress.start(len(draws) * len(plan.arms), done)
    results = []
    for provenance, arm in zip(plan.runs, plan.arms, strict=True):
        async with await session.store.open_or_resume(provenance) as log:
            results.append(await session.rollout(arm.bundle, draws, log, on_done=progress.advance))
    return results


def _purposes(plan: _Plan) -> list[RunMetric]:
    return [
        RunMetric(
            run_id=run.run_id,
            name=EVAL_PURPOSE,
            value={
                "purpose": plan.purpose,
                "arm": side,
                "train_run_id": plan.train_run_id,
                "eval_id": plan.eval_id,
            },
        )
        for side, run in zip(_SIDES, plan.runs, strict=True)
    ]


def _with_truth(rows: list[GroupRow], truth: SimTruth | None) -> list[GroupRow]:
    if truth is None:
        return rows
    return [row.model_copy(update={"truth": truth.cells.get((row.grouping, row.label))}) for row in rows]


def _groups(rows: list[GroupRow], pool: TestPool) -> dict[tuple[str, str], list[str]]:
    key = {"overall": lambda q: "all", "task_type": lambda q: q.task_type, "duration": lambda q: q.duration}
    return {
        (row.grouping, row.label): [
            q.question_id for q in pool.questions if key[row.grouping](q) == row.label
        ]
        for row in rows
    }


def _uses(store: RunStore, pools_sha256: str) -> tuple[int, int]:
    with contextlib.closing(RunReader(store.config)) as reader:
        return count_test_pool_runs(reader.runs(), pools_sha256)


async def run_holdout(
    config: HoldoutSettings,
    final: Bundle | Arm,
    baseline: Bundle | Arm,
    *,
    train_run_id: str | None,
    purpose: str,
    eval_id: str | None = None,
    store: RunStore | None = None,
    progress: InferProgress | None = None,
    metric: str = HOLDOUT,
) -> HoldoutReport:
    """Roll ``final`` and ``baseline`` on the test pool as two eval runs and report the comparison.

    Args:
        config: the experiment's config (data, agent, llm, cache, store, eval sections).
        final: the bundle evaluated (or an :class:`Arm`: the bundle with a label for the report).
        baseline: the bundle it is compared with.
        train_run_id: the training run served (the runs' parent; the report is also stored under it).
        purpose: why the test pool is read (recorded with each run), e.g. "end of training".
        eval_id: names the evaluation (its runs are ``<eval_id>.final`` / ``.baseline``); an existing
            one is resumed. Default: a new id.
        store: an open store to reuse (the training loop's); default: opened from ``config.store``.
        progress: told the totals once, then each new prediction.
        metric: the report's name in the store (``transfer.<protocol>``: no val comparison).
    """
    plan = _plan(config, final, baseline, train_run_id, purpose, eval_id)
    # A dead endpoint or a model it does not serve stops us before either arm asks a question.
    await probe_endpoints(config.llm, {config.llm.model: "llm.model"})
    draws = [(q, s) for q in plan.pool.questions for s in range(config.eval.samples)]
    async with open_session(
        data=config.data,
        agent=config.agent.for_run(plan.eval_id),  # one per-draw seed salt for both arms: paired
        llm=config.llm,
        cache=config.cache,
        store=store or config.store,
        salt=plan.eval_id,
    ) as session:
        final_preds, base_preds = await _roll_arms(session, plan, draws, progress or InferProgress())
        await session.store.aupsert(_purposes(plan))
        rows = compare_groups(
            plan.pool.questions,
            final_preds,
            base_preds,
            samples=config.eval.samples,
            confidence=config.eval.confidence,
        )
        groups = compare_group_scores(
            plan.pool.questions,
            final_preds,
            base_preds,
            samples=config.eval.samples,
            confidence=config.eval.confidence,
        )
        report = await _report(config, session.store, plan, rows, groups, with_val=metric == HOLDOUT)
        value = report.model_dump(mode="json")
        stored_under = dict.fromkeys(filter(None, (plan.runs[0].run_id, train_run_id)))
        await session.store.aupsert([RunMetric(run_id=r, name=metric, value=value) for r in stored_under])
    return report


async def _report(
    config: HoldoutSettings,
    store: RunStore,
    plan: _Plan,
    rows: list[GroupRow],
    groups: GroupScores | None,
    *,
    with_val: bool,
) -> HoldoutReport:
    recorded = None
    if plan.train_run_id is not None and with_val:
        metrics = await asyncio.to_thread(store.select, RunMetric, run_id=plan.train_run_id)
        recorded = val_gain(metrics, plan.train_run_id)
    final, baseline = (arm.bundle for arm in plan.arms)
    val_ids = plan.pool.val_ids if recorded is not None else ()
    truth = await simulator_truth(
        config.llm.endpoints[0].base_url,
        final,
        baseline,
        _groups(rows, plan.pool),
        val_ids,
        agent_path(config.agent),
        recorded.unselected if recorded is not None else None,
    )
    rows = _with_truth(rows, truth)
    overall = rows[0]
    val = None
    if recorded is not None:
        val = compare_val_holdout(
            recorded,
            overall.paired.gain,
            val_truth=truth.val_gain if truth else None,
            holdout_truth=overall.truth.gain if overall.truth else None,
            unselected_truth=truth.unselected_gain if truth else None,
        )
    evals, others = await asyncio.to_thread(_uses, store, plan.pool.pools_sha256)
    return HoldoutReport(
        eval_id=plan.eval_id,
        purpose=plan.purpose,
        train_run_id=plan.train_run_id,
        final_run_id=plan.runs[0].run_id,
        baseline_run_id=plan.runs[1].run_id,
        final_bundle_hash=final.bundle_hash,
        baseline_bundle_hash=baseline.bundle_hash,
        final_label=plan.arms[0].label,
        baseline_label=plan.arms[1].label,
        pools_sha256=plan.pool.pools_sha256,
        confidence=config.eval.confidence,
        samples=config.eval.samples,
        temperature=config.agent.sampling.temperature,
        test_questions=len(plan.pool.questions),
        rows=tuple(rows),
        test_pool_runs=evals,
        test_pool_other_runs=others,
        val=val,
        simulator=truth is not None,
        group_scores=groups,
        protocol=config.agent.protocol.value,
        bundle_slot=config.agent.protocol_bundle_slot.value,
    )
