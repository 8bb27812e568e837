"""Training: the loop (rollout, diagnosis, evolution, validation, momentum, checkpoints), the
acceptance gate and the prompt templates. See docs/train.md.
"""

from skillharness.util.lazy import lazy_surface

# Imported when first read (util/lazy.py): `skillharness.config` needs only the config module.
__all__, __getattr__ = lazy_surface(
    __name__,
    {
        "skillharness.train.config": (
            "GateConfig",
            "TrainConfig",
        ),
        "skillharness.train.diagnose.casepack": ("build_case_packs",),
        "skillharness.train.diagnose.diagnoser": (
            "JUDGED",
            "DiagnosisReport",
            "run_waterfall",
        ),
        "skillharness.train.diagnose.summary": (
            "COLUMNS",
            "defect_confusion",
            "waterfall_table",
        ),
        "skillharness.train.evolve.prompts": ("render_evolve_prompts",),
        "skillharness.train.gate": (
            "MAX_OBSERVATIONS",
            "ClassPlan",
            "EProcessGate",
            "FixedNStandardError",
            "GateRule",
            "GuardPlan",
            "StrictlyBetterMinibatch",
            "coupled_discordance",
            "gate_alpha",
            "independent_discordance",
            "min_net_wins",
            "plan_classes",
            "plan_guard",
            "run_guarantee",
            "simulate",
            "sized_draws",
            "stage_ends",
            "threshold",
        ),
        "skillharness.train.loop.experiment": (
            "default_train_run_id",
            "open_training",
        ),
        "skillharness.train.loop.progress": ("TrainProgress", "decision_counts"),
        "skillharness.train.loop.training": (
            "RunEnded",
            "TrainOutcome",
            "TrainRequest",
            "ended_run",
            "run_folder",
            "run_training",
        ),
        "skillharness.train.preflight.checks": (
            "CheckStatus",
            "PreflightReport",
            "run_preflight",
        ),
        "skillharness.train.roles.prompt_specs": ("TEMPLATE_SPECS",),
        "skillharness.train.roles.templates": (
            "PromptTemplates",
            "RenderedPrompt",
            "check_templates",
            "load_templates",
            "packaged_prompts",
        ),
        "skillharness.train.state.budget": ("TrainingStopped",),
        "skillharness.train.state.caller": ("evolve_calls",),
        "skillharness.train.state.checkpoint": ("Checkpoint",),
        "skillharness.train.state.draws": ("gate_budget",),
        "skillharness.train.state.records": ("UNTESTED_LABELS", "Cause", "decision_label", "untested_calls"),
        "skillharness.train.validate.coverage": ("class_coverage", "include_hint"),
        "skillharness.train.validate.final_score": ("VAL_GAIN_LABEL",),
        "skillharness.train.validate.unselected": ("describe_unselected", "unselected_truth"),
    },
)
