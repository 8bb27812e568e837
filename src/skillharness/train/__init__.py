"""Training: the loop (rollout, diagnosis, evolution, validation, momentum, checkpoints), the
acceptance gate and the prompt templates. See docs/train.md.
"""

from skillharness.train.config import GateConfig, TrainConfig
from skillharness.train.diagnose.casepack import build_case_packs
from skillharness.train.diagnose.diagnoser import JUDGED, DiagnosisReport, run_waterfall
from skillharness.train.diagnose.summary import COLUMNS, defect_confusion, waterfall_table
from skillharness.train.evolve.prompts import render_evolve_prompts
from skillharness.train.gate import (
    ClassPlan,
    EProcessGate,
    FixedNStandardError,
    GateRule,
    GuardPlan,
    StrictlyBetterMinibatch,
    coupled_discordance,
    gate_alpha,
    independent_discordance,
    min_net_wins,
    plan_classes,
    plan_guard,
    run_guarantee,
    simulate,
    sized_draws,
    stage_ends,
    threshold,
)
from skillharness.train.loop.experiment import default_train_run_id, open_training
from skillharness.train.loop.progress import TrainProgress
from skillharness.train.loop.training import (
    RunEnded,
    TrainOutcome,
    TrainRequest,
    ended_run,
    run_folder,
    run_training,
)
from skillharness.train.preflight.checks import CheckStatus, PreflightReport, run_preflight
from skillharness.train.roles.prompt_specs import TEMPLATE_SPECS
from skillharness.train.roles.templates import (
    PromptTemplates,
    RenderedPrompt,
    check_templates,
    load_templates,
    packaged_prompts,
)
from skillharness.train.state.budget import TrainingStopped
from skillharness.train.state.caller import evolve_calls
from skillharness.train.state.checkpoint import Checkpoint
from skillharness.train.state.draws import gate_budget
from skillharness.train.validate.coverage import class_coverage
from skillharness.train.validate.final_score import VAL_GAIN_LABEL

__all__ = [
    "COLUMNS",
    "JUDGED",
    "TEMPLATE_SPECS",
    "VAL_GAIN_LABEL",
    "CheckStatus",
    "Checkpoint",
    "ClassPlan",
    "DiagnosisReport",
    "EProcessGate",
    "FixedNStandardError",
    "GateConfig",
    "GateRule",
    "GuardPlan",
    "PreflightReport",
    "PromptTemplates",
    "RenderedPrompt",
    "RunEnded",
    "StrictlyBetterMinibatch",
    "TrainConfig",
    "TrainOutcome",
    "TrainProgress",
    "TrainRequest",
    "TrainingStopped",
    "build_case_packs",
    "check_templates",
    "class_coverage",
    "coupled_discordance",
    "default_train_run_id",
    "defect_confusion",
    "ended_run",
    "evolve_calls",
    "gate_alpha",
    "gate_budget",
    "independent_discordance",
    "load_templates",
    "min_net_wins",
    "open_training",
    "packaged_prompts",
    "plan_classes",
    "plan_guard",
    "render_evolve_prompts",
    "run_folder",
    "run_guarantee",
    "run_preflight",
    "run_training",
    "run_waterfall",
    "simulate",
    "sized_draws",
    "stage_ends",
    "threshold",
    "waterfall_table",
]
