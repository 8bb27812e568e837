"""The val gain reported at the end of training: both bundles on val samples no decision saw.

Every gate and guard of a run draws val samples, and the run's child runs share one cache salt,
so scoring the final bundle again at sample 0 would replay the very samples that accepted its
edits: the gain would be selected on its own noise (a winner's curse). At the end of training the
baseline (``v0000``) and the final bundle therefore answer each val question once at the sample
index the checkpoint's run-wide ``next_sample`` has reached: every gate and guard moved the counter
past each index it could use, so no decision drew it. The two are compared with the holdout's
paired statistics: clustered by video, with the per-question interval beside it.

At temperature 0 (or with a fixed request seed) a second sample replays the first, so there is
nothing fresh to draw: sample 0 is used and the result says ``fresh_samples: false``.

Either way the edits were chosen on val (the gates' questions, the epoch-end scores that kept a
version), so the gain is labelled :data:`VAL_GAIN_LABEL`; the holdout is the headline. Beside it,
``unselected`` is the same comparison on the val questions no gate or guard drew, with the
optimism between the two (``train/validate/unselected.py``), where the run left such questions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from skillharness.agent.records import Prediction
from skillharness.data import Pool
from skillharness.infer import clustered_paired
from skillharness.skills import Bundle
from skillharness.store import GateObservationRow, RunKind
from skillharness.train.state.context import TrainContext
from skillharness.train.state.draws import draw_temperature
from skillharness.train.validate.scoring import ValScore, score_predictions, val_run_suffix
from skillharness.train.validate.unselected import unselected_gain

__all__ = ["VAL_GAIN_LABEL", "FinalValScore", "final_sample", "final_val_score", "fresh_val_suffix"]

VAL_GAIN_LABEL = "selected on val (optimistic)"
CONFIDENCE = 0.95


@dataclass(frozen=True)
class FinalValScore:
    """Baseline and final on val at the reserved sample, their paired gain, and the runs holding them."""

    baseline: ValScore
    final: ValScore
    gain: dict[str, Any]  # the ``val_gain`` metric
    runs: dict[str, str]  # "baseline" / "final" -> child run id


def fresh_val_suffix(bundle: Bundle, sample: int) -> str:
    return f"val.fresh{sample}.{bundle.bundle_hash[:16]}"


def final_sample(ctx: TrainContext, next_sample: int) -> int:
    """The val sample the final score draws: ``next_sample`` when sampling, else 0 (a replay)."""
    return next_sample if draw_temperature(ctx.session.agent_config.sampling) > 0 else 0


def _gain(
    ctx: TrainContext, first: list[Prediction], second: list[Prediction], sample: int, drawn: set[str]
) -> dict[str, Any]:
    final = {p.question_id: p.correct for p in first if p.correct is not None}
    base = {p.question_id: p.correct for p in second if p.correct is not None}
    paired = [q for q in ctx.val_questions if q.question_id in final and q.question_id in base]
    estimate = clustered_paired(
        [float(final[q.question_id]) for q in paired],
        [float(base[q.question_id]) for q in paired],
        [q.video_id for q in paired],
        binary=True,
        confidence=CONFIDENCE,
    )
    label = {"selection": VAL_GAIN_LABEL, "fresh_samples": sample != 0, "sample_idx": sample}
    label["unselected"] = unselected_gain(
        ctx.val_questions,
        final,
        base,
        drawn,
        confidence=CONFIDENCE,
        seed=ctx.config.seed,
        with_replacement=sample != 0,
        reserved=ctx.reserved,
    )
    if estimate is None:  # no question answered by both: nothing is known
        return {"gain": 0.0, "low": -1.0, "high": 1.0, "n": 0.0, **label}
    return {
        "gain": estimate.value,
        "low": estimate.low,
        "high": estimate.high,
        "n": float(len(paired)),
        "method": estimate.method,
        "per_question_low": estimate.per_question_low,
        "per_question_high": estimate.per_question_high,
        "per_question_method": estimate.per_question_method,
        "design_effect": estimate.design_effect,
        "videos": estimate.n_clusters,
        "wins": estimate.wins,
        "losses": estimate.losses,
        "p_value": estimate.p_value,
        "p_per_question": estimate.p_per_question,
        "confidence": CONFIDENCE,
        **label,
    }


async def final_val_score(
    ctx: TrainContext,
    baseline: Bundle,
    final: Bundle,
    *,
    next_sample: int,
    check_stop: Callable[[], None] | None = None,
) -> FinalValScore:
    """Score ``baseline`` and ``final`` on val at ``next_sample``, the checkpoint's run-wide counter
    (child runs, resumable): an index no gate or guard of the run drew. ``check_stop`` (the
    budget) runs before each arm and about every stage's worth of draws."""
    sample = final_sample(ctx, next_sample)
    # Every gate's and guard's observations are in the ledger, a resumed invocation's included.
    drawn = {row.question_id for row in ctx.store.select(GateObservationRow, train_run_id=ctx.run_id)}
    draws = [(q, sample) for q in ctx.val_questions]
    task_type_of = {q.question_id: q.task_type for q in ctx.val_questions}
    predictions: dict[str, list[Prediction]] = {}
    runs: dict[str, str] = {}
    for arm, bundle in (("baseline", baseline), ("final", final)):
        suffix = fresh_val_suffix(bundle, sample) if sample else val_run_suffix(bundle)
        if check_stop is not None:
            check_stop()
        predictions[arm] = await ctx.rollout(
            bundle, draws, suffix, kind=RunKind.INFER, pool=Pool.VAL, check_stop=check_stop
        )
        runs[arm] = f"{ctx.run_id}.{suffix}"
    return FinalValScore(
        baseline=score_predictions(predictions["baseline"], task_type_of),
        final=score_predictions(predictions["final"], task_type_of),
        gain=_gain(ctx, predictions["final"], predictions["baseline"], sample, drawn),
        runs=runs,
    )
