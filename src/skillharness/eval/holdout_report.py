"""The holdout report's records: what ``skillharness eval`` prints, ``--json`` emits and the store keeps.

One :class:`HoldoutReport` per evaluation, stored as the ``RunMetric`` named ``holdout`` (its
``model_dump(mode="json")``; :meth:`HoldoutReport.model_validate` reads it back).
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field

from skillharness.train import VAL_GAIN_LABEL
from skillharness.util.model import StrictModel

__all__ = [
    "ArmCell",
    "GroupRow",
    "GroupScoreArm",
    "GroupScores",
    "HoldoutReport",
    "PairedCell",
    "TruthCell",
    "ValHoldout",
]

Grouping = Literal["overall", "task_type", "duration"]


class ArmCell(StrictModel):
    """One bundle's accuracy on one group of test questions."""

    n_questions: int = Field(description="Questions with at least one answer (not an infra error).")
    n_samples: int = Field(description="Answers counted: ok and parse_error samples.")
    correct: int
    accuracy: float | None = Field(description="Mean of per-question accuracies (None: no answer).")
    low: float | None = Field(description="Interval by video (clustered; see per_question_* beside it).")
    high: float | None
    method: Literal["wilson", "bootstrap", "cluster_bootstrap"]
    per_question_low: float | None = Field(None, description="Interval if questions were independent.")
    per_question_high: float | None = None
    per_question_method: Literal["wilson", "bootstrap"] | None = None
    design_effect: float | None = Field(
        None, description="Clustered over per-question variance of the accuracy (1: videos cost nothing)."
    )
    n_videos: int | None = Field(None, description="Videos the answered questions come from.")
    parse_errors: int = Field(description="Unparsed answers; they count as wrong.")
    infra_errors: int = Field(description="Samples lost to the infrastructure; not answers, not counted.")

    @property
    def parse_rate(self) -> float | None:
        return self.parse_errors / self.n_samples if self.n_samples else None


class PairedCell(StrictModel):
    """The final bundle against the baseline on the questions both answered."""

    n_pairs: int
    gain: float | None = Field(description="Final minus baseline accuracy on the paired questions.")
    low: float | None = Field(description="Interval by video (clustered; see per_question_* beside it).")
    high: float | None
    method: Literal["newcombe", "bootstrap", "cluster_bootstrap"]
    per_question_low: float | None = Field(None, description="Interval if questions were independent.")
    per_question_high: float | None = None
    per_question_method: Literal["newcombe", "bootstrap"] | None = None
    design_effect: float | None = Field(
        None, description="Clustered over per-question variance of the gain (1: videos cost nothing)."
    )
    n_videos: int | None = Field(None, description="Videos the paired questions come from.")
    wins: int = Field(description="Discordant questions the final bundle did better on.")
    losses: int = Field(description="Discordant questions the baseline did better on.")
    p_value: float = Field(
        description="Two-sided paired test by video: the cluster sign-flip test (exact McNemar when no "
        "video holds two questions)."
    )
    p_per_question: float | None = Field(None, description="Exact two-sided McNemar on the questions.")
    p_holm: float | None = Field(
        None, description="p_value Holm-adjusted across task types (task-type rows only)."
    )


class TruthCell(StrictModel):
    """The simulator's oracle: the exact expected accuracies (simulator truth, never a measurement)."""

    final: float
    baseline: float

    @property
    def gain(self) -> float:
        return self.final - self.baseline


class GroupRow(StrictModel):
    grouping: Grouping
    label: str
    final: ArmCell
    baseline: ArmCell
    paired: PairedCell
    truth: TruthCell | None = None


class GroupScoreArm(StrictModel):
    """One bundle's mean group score (Video-MME-v2: a video's four questions scored together)."""

    score: float | None = Field(description="Mean group score, 0-1 (None: no complete group).")
    low: float | None = Field(description="Interval by video: groups resampled (cluster bootstrap).")
    high: float | None
    n_groups: int = Field(description="Complete groups scored: (video, sample) with every question answered.")
    left_out: int = Field(description="Groups missing an answer (an infra error) or a question (the pool).")


class GroupScores(StrictModel):
    """The group score of both bundles and its paired gain, beside the per-question accuracy."""

    final: GroupScoreArm
    baseline: GroupScoreArm
    n_pairs: int = Field(description="Groups complete in both bundles.")
    gain: float | None = Field(description="Final minus baseline mean group score on the paired groups.")
    low: float | None = Field(
        description="Interval by video (cluster bootstrap of the per-group differences)."
    )
    high: float | None
    method: Literal["cluster_bootstrap"] = "cluster_bootstrap"


class ValHoldout(StrictModel):
    """The val gain measured at the end of training against the holdout gain (the headline)."""

    selection: str = Field(
        VAL_GAIN_LABEL, description="The val gain was selected on val: an optimistic number, not a test."
    )
    val_gain: float
    val_low: float
    val_high: float
    holdout_gain: float | None
    val_truth: float | None = Field(None, description="The oracle's gain on the val pool (simulator).")
    holdout_truth: float | None = Field(None, description="The oracle's gain on the test pool (simulator).")
    unselected: dict[str, Any] | None = Field(
        None, description="The gain on val questions no gate drew and the val gain's optimism."
    )
    unselected_truth: float | None = Field(
        None, description="The oracle's gain on those questions, weighted as the estimate (simulator)."
    )

    @property
    def overfit(self) -> bool:
        """True when the holdout gain lies outside the val gain's interval."""
        if self.holdout_gain is None or math.isnan(self.holdout_gain):
            return False
        return not (self.val_low <= self.holdout_gain <= self.val_high)


class HoldoutReport(StrictModel):
    """Final against baseline on the test pool, with intervals, McNemar and the val comparison."""

    eval_id: str
    purpose: str
    train_run_id: str | None
    final_run_id: str
    baseline_run_id: str
    final_bundle_hash: str
    baseline_bundle_hash: str
    final_label: str = Field(description="Where the final bundle came from (workspace version or folder).")
    baseline_label: str
    pools_sha256: str
    confidence: float
    samples: int
    temperature: float | None
    test_questions: int
    rows: tuple[GroupRow, ...]
    test_pool_runs: int = Field(
        description="Evaluations of this split (same pools.json) on the test pool so far, this one included."
    )
    test_pool_other_runs: int = Field(0, description="Other runs (infer --pool test) that read it too.")
    val: ValHoldout | None = None
    simulator: bool = Field(False, description="The endpoint is the simulator (truth columns present).")
    group_scores: GroupScores | None = Field(
        None, description="Video-MME-v2's group score, when the test questions carry groups."
    )
    protocol: str = Field(
        "skillharness", description="Whose request both bundles were asked with (agent.protocol)."
    )
    bundle_slot: str = Field(
        "none",
        description="Where a reference protocol's request carried the bundle (agent.protocol_bundle_slot).",
    )

    def rows_of(self, grouping: Grouping) -> list[GroupRow]:
        return [row for row in self.rows if row.grouping == grouping]

    @property
    def overall(self) -> GroupRow:
        return self.rows_of("overall")[0]
