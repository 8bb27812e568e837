"""A wide report for the layout tests: all 12 task types, long gate details, a typed holdout.

The holdout metric is a :class:`HoldoutReport` as the held-out evaluation stores it, with
intervals by video, the per-question intervals and the design effect on every row: the widest
cells the page has to fit.
"""

from __future__ import annotations

from report_support import Shape

from skillharness.data import TaskType
from skillharness.eval import HoldoutReport
from skillharness.eval.holdout_report import ArmCell, GroupRow, PairedCell, ValHoldout
from skillharness.infer import wilson
from skillharness.train import VAL_GAIN_LABEL

TWELVE = tuple(t.value for t in TaskType)


def long_detail(reason: str, draws: int) -> str:
    """A detail as long as the evolve step writes (it cuts at 600 characters), unbroken tokens first."""
    return (
        f"{reason}: edits[0].anchor=section:counting_repeated_objects_across_scene_cuts_and_camera_motion "
        f"not found in skill:counting_problem after {draws} draws at ladder stage 2 of 4 (bundle "
        + "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        + "); wealth stayed below 1/alpha while the harm process grew; the candidate rewrote the "
        "section and dropped the rule about re-checking the last frame; the next request would have "
        "been 48 draws, over the per-gate budget of 32."
    )


def _arm(correct: int, n: int, videos: int) -> ArmCell:
    low, high = wilson(correct, n)
    widen = 0.35 * (high - low)  # clustered by video: wider than the per-question interval
    return ArmCell(
        n_questions=n,
        n_samples=n,
        correct=correct,
        accuracy=correct / n,
        low=max(0.0, low - widen / 2),
        high=min(1.0, high + widen / 2),
        method="cluster_bootstrap",
        per_question_low=low,
        per_question_high=high,
        per_question_method="wilson",
        design_effect=1.8,
        n_videos=videos,
        parse_errors=1,
        infra_errors=0,
    )


def _row(grouping: str, label: str, base: int, final: int, n: int) -> GroupRow:
    gain = (final - base) / n
    return GroupRow(
        grouping=grouping,  # type: ignore[arg-type]
        label=label,
        final=_arm(final, n, n // 3),
        baseline=_arm(base, n, n // 3),
        paired=PairedCell(
            n_pairs=n,
            gain=gain,
            low=gain - 0.21,
            high=gain + 0.19,
            method="cluster_bootstrap",
            per_question_low=gain - 0.15,
            per_question_high=gain + 0.14,
            per_question_method="newcombe",
            design_effect=2.04,
            n_videos=n // 3,
            wins=max(final - base, 0) + 2,
            losses=2,
            p_value=0.3125,
            p_per_question=0.2188,
            p_holm=None if grouping == "overall" else 1.0,
        ),
    )


def typed_holdout(task_types: tuple[str, ...] = TWELVE) -> dict[str, object]:
    """The ``holdout`` metric of a 12-class evaluation, as ``skillharness eval`` stores it."""
    rows = [_row("overall", "all", 101, 117, 216)]
    rows += [_row("task_type", t, 8 + i % 3, 10 + i % 4, 18) for i, t in enumerate(task_types)]
    rows += [_row("duration", d, 50 + k, 58 + k, 108) for k, d in enumerate(("short", "long"))]
    report = HoldoutReport(
        eval_id="eval-wide",
        purpose="holdout",
        train_run_id="train-wide",
        final_run_id="eval-wide.final",
        baseline_run_id="eval-wide.baseline",
        final_bundle_hash="f" * 64,
        baseline_bundle_hash="b" * 64,
        final_label="workspace v0012",
        baseline_label="initial bundle",
        pools_sha256="ab12" * 16,
        confidence=0.95,
        samples=1,
        temperature=0.0,
        test_questions=216,
        rows=tuple(rows),
        test_pool_runs=1,
        val=ValHoldout(
            selection=VAL_GAIN_LABEL, val_gain=0.12, val_low=0.04, val_high=0.2, holdout_gain=16 / 216
        ),
    )
    return report.model_dump(mode="json")


WIDE = Shape(task_types=TWELVE, detail=long_detail, holdout=typed_holdout())
