"""A holdout report over Video-MME-v2-style groups, for the eval and report tests of the group score."""

from __future__ import annotations

from collections.abc import Sequence

from skillharness.data import Question
from skillharness.eval import HoldoutReport, compare_group_scores, compare_groups
from skillharness.store import Prediction


def group_report(
    questions: Sequence[Question],
    final: Sequence[Prediction],
    baseline: Sequence[Prediction],
    *,
    with_groups: bool = True,
) -> HoldoutReport:
    """A one-sample, temperature-0 holdout of ``final`` against ``baseline``, with its group score
    (or without, as a report from before group scores were kept)."""
    groups = compare_group_scores(questions, final, baseline, samples=1) if with_groups else None
    return HoldoutReport(
        eval_id="e",
        purpose="test",
        train_run_id=None,
        final_run_id="e.final",
        baseline_run_id="e.baseline",
        final_bundle_hash="f" * 64,
        baseline_bundle_hash="b" * 64,
        final_label="final",
        baseline_label="baseline",
        pools_sha256="0" * 64,
        confidence=0.95,
        samples=1,
        temperature=0.0,
        test_questions=len(questions),
        rows=tuple(compare_groups(questions, final, baseline, samples=1)),
        test_pool_runs=1,
        group_scores=groups,
    )
