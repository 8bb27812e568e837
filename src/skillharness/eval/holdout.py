"""The holdout evaluation: the final and the baseline bundle on the sealed test pool.

Each bundle is one run of kind ``eval`` on pool ``test`` (``<eval id>.final`` and
``<eval id>.baseline``), a child of the training run when there is one, and each records why it
read the test pool (``eval_purpose``). Both answer the same ``(question, sample)`` draws, so the
comparison is paired (what is read and why is planned in
:mod:`skillharness.eval.holdout_plan`). The report is stored as the ``holdout`` metric (see
:mod:`skillharness.eval.ledger`) and returned.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

from skillharness.data import Question
from skillharness.eval.group_scores import compare_group_scores
from skillharness.eval.holdout_plan import (
    Arm,
    HoldoutPlan,
    HoldoutSettings,
    TestPool,
    plan_holdout,
    purpose_metrics,
)
from skillharness.eval.holdout_report import GroupRow, GroupScores, HoldoutReport
from skillharness.eval.ledger import HOLDOUT, compare_val_holdout, count_test_pool_runs, val_gain
from skillharness.eval.tables import compare_groups
from skillharness.eval.truth import SimTruth, agent_path, simulator_truth
from skillharness.infer import InferProgress, RunSession, open_session, probe_endpoints
from skillharness.skills import Bundle
from skillharness.store import Prediction, RunMetric, RunReader, RunStore

__all__ = ["run_holdout"]


async def _roll_arms(
    session: RunSession, plan: HoldoutPlan, draws: Sequence[tuple[Question, int]], progress: InferProgress
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
    plan = plan_holdout(config, final, baseline, train_run_id, purpose, eval_id)
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
        await session.store.aupsert(purpose_metrics(plan))
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
    plan: HoldoutPlan,
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
