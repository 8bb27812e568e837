"""Validation: a candidate's paired test against the incumbent, its guard, and the val scores."""

from __future__ import annotations

from skillharness.train.validate.arms import Arms, observation_rows, paired_outcomes, wealth_after
from skillharness.train.validate.baseline_cache import BaselineCache
from skillharness.train.validate.coverage import (
    ClassCoverage,
    TrainedClasses,
    class_coverage,
    plan_trained_classes,
    trained_classes,
)
from skillharness.train.validate.final_score import VAL_GAIN_LABEL, FinalValScore, final_val_score
from skillharness.train.validate.guard import guard_size
from skillharness.train.validate.paired_gate import (
    draw_plan,
    infra_outage,
    new_ladder,
    plan_evidence,
    validate,
    verdict,
)
from skillharness.train.validate.reach import Screened, screen_packs
from skillharness.train.validate.scope import GateScope, gate_scope
from skillharness.train.validate.scoring import ValScore, score_predictions, val_score

__all__ = [
    "VAL_GAIN_LABEL",
    "Arms",
    "BaselineCache",
    "ClassCoverage",
    "FinalValScore",
    "GateScope",
    "Screened",
    "TrainedClasses",
    "ValScore",
    "class_coverage",
    "draw_plan",
    "final_val_score",
    "gate_scope",
    "guard_size",
    "infra_outage",
    "new_ladder",
    "observation_rows",
    "paired_outcomes",
    "plan_evidence",
    "plan_trained_classes",
    "score_predictions",
    "screen_packs",
    "trained_classes",
    "val_score",
    "validate",
    "verdict",
    "wealth_after",
]
