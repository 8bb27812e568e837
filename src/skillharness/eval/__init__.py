"""Holdout evaluation: the final and the baseline bundle on the sealed test pool, with intervals.

Sits above training (the loop calls :func:`run_holdout` when it ends). The statistics are in
:mod:`skillharness.eval.stats`, the report records in :mod:`skillharness.eval.holdout_report`, the run-store
names read and written in :mod:`skillharness.eval.ledger`.
"""

from skillharness.eval.config import EvalConfig, ReportConfig
from skillharness.eval.holdout import (
    Arm,
    HoldoutSettings,
    TestPool,
    default_eval_id,
    load_test_pool,
    run_holdout,
)
from skillharness.eval.holdout_report import (
    ArmCell,
    GroupRow,
    HoldoutReport,
    PairedCell,
    TruthCell,
    ValHoldout,
)
from skillharness.eval.ledger import (
    EVAL_PURPOSE,
    FINAL,
    HOLDOUT,
    VAL_GAIN,
    EvalArm,
    FinalBundleRef,
    ValGain,
    arm_run_id,
    compare_val_holdout,
    count_test_pool_runs,
    evaluation_of,
    final_ref,
    val_gain,
)
from skillharness.eval.report import build_report
from skillharness.eval.stats import (
    PairedTable,
    bootstrap_mean_interval,
    holm_adjust,
    mcnemar_exact,
    newcombe_paired_interval,
)
from skillharness.eval.tables import compare_groups
from skillharness.eval.truth import SimTruth, simulator_truth

__all__ = [
    "EVAL_PURPOSE",
    "FINAL",
    "HOLDOUT",
    "VAL_GAIN",
    "Arm",
    "ArmCell",
    "EvalArm",
    "EvalConfig",
    "FinalBundleRef",
    "GroupRow",
    "HoldoutReport",
    "HoldoutSettings",
    "PairedCell",
    "PairedTable",
    "ReportConfig",
    "SimTruth",
    "TestPool",
    "TruthCell",
    "ValGain",
    "ValHoldout",
    "arm_run_id",
    "bootstrap_mean_interval",
    "build_report",
    "compare_groups",
    "compare_val_holdout",
    "count_test_pool_runs",
    "default_eval_id",
    "evaluation_of",
    "final_ref",
    "holm_adjust",
    "load_test_pool",
    "mcnemar_exact",
    "newcombe_paired_interval",
    "run_holdout",
    "simulator_truth",
    "val_gain",
]
