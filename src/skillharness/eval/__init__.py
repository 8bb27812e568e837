"""Holdout evaluation: the final and the baseline bundle on the sealed test pool, with intervals.

Sits above training (the loop calls :func:`run_holdout` when it ends). The statistics are in
:mod:`skillharness.eval.stats`, the report records in :mod:`skillharness.eval.holdout_report`, the run-store
names read and written in :mod:`skillharness.eval.ledger`. Two runs' test-pool predictions are
compared in :mod:`skillharness.eval.compare` (records in :mod:`skillharness.eval.compare_report`,
the page in :mod:`skillharness.eval.compare_page`).
"""

from skillharness.util.lazy import lazy_surface

# Imported when first read (util/lazy.py): `skillharness.config` needs only the config module.
__all__, __getattr__ = lazy_surface(
    __name__,
    {
        "skillharness.eval.compare": ("compare_runs", "compared_run"),
        "skillharness.eval.compare_page": ("write_comparison_page",),
        "skillharness.eval.compare_report": ("CompareRow", "ComparedRun", "RunComparison"),
        "skillharness.eval.config": (
            "EvalConfig",
            "ReportConfig",
        ),
        "skillharness.eval.holdout": ("run_holdout",),
        "skillharness.eval.holdout_plan": (
            "Arm",
            "HoldoutSettings",
            "TestPool",
            "default_eval_id",
            "load_test_pool",
        ),
        "skillharness.eval.group_scores": ("compare_group_scores",),
        "skillharness.eval.transfer": ("check_eval_id", "check_transfers", "run_transfers", "under_protocol"),
        "skillharness.eval.holdout_report": (
            "ArmCell",
            "GroupRow",
            "GroupScoreArm",
            "GroupScores",
            "HoldoutReport",
            "PairedCell",
            "TruthCell",
            "ValHoldout",
        ),
        "skillharness.eval.ledger": (
            "EVAL_PURPOSE",
            "FINAL",
            "HOLDOUT",
            "TRANSFER",
            "VAL_GAIN",
            "EvalArm",
            "FinalBundleRef",
            "ValGain",
            "arm_run_id",
            "compare_val_holdout",
            "count_test_pool_runs",
            "evaluation_of",
            "final_ref",
            "holdout_of_final",
            "transfer_metric",
            "val_gain",
        ),
        "skillharness.eval.report": ("build_report",),
        "skillharness.eval.stats": (
            "PairedTable",
            "bootstrap_mean_interval",
            "holm_adjust",
            "mcnemar_exact",
            "newcombe_paired_interval",
        ),
        "skillharness.eval.tables": ("compare_groups",),
        "skillharness.eval.truth": (
            "SimTruth",
            "agent_path",
            "simulator_truth",
        ),
    },
)
