"""Training: what the loop stands on so far — the acceptance gate and the prompt templates.

The loop itself (rollout, diagnosis, evolution, validation, momentum, checkpoints) is the next
milestone; :mod:`skillharness.train.gate` and :mod:`skillharness.train.templates` are complete.
"""

from skillharness.train.budget import TrainingStopped
from skillharness.train.config import GateConfig, TrainConfig
from skillharness.train.diagnose import JUDGED, DiagnosisReport, run_waterfall
from skillharness.train.diagnosis_summary import COLUMNS, defect_confusion, waterfall_table
from skillharness.train.draws import gate_budget
from skillharness.train.experiment import default_train_run_id, open_training
from skillharness.train.gate import (
    EProcessGate,
    FixedNStandardError,
    GateRule,
    StrictlyBetterMinibatch,
    min_net_wins,
    plan_classes,
    simulate,
    stage_ends,
)
from skillharness.train.preflight import CheckStatus, PreflightReport, run_preflight
from skillharness.train.progress import TrainProgress
from skillharness.train.prompt_specs import TEMPLATE_SPECS
from skillharness.train.templates import (
    PromptTemplates,
    RenderedPrompt,
    check_templates,
    load_templates,
    packaged_prompts,
)
from skillharness.train.training import TrainOutcome, TrainRequest, run_folder, run_training

__all__ = [
    "COLUMNS",
    "JUDGED",
    "TEMPLATE_SPECS",
    "CheckStatus",
    "DiagnosisReport",
    "EProcessGate",
    "FixedNStandardError",
    "GateConfig",
    "GateRule",
    "PreflightReport",
    "PromptTemplates",
    "RenderedPrompt",
    "StrictlyBetterMinibatch",
    "TrainConfig",
    "TrainOutcome",
    "TrainProgress",
    "TrainRequest",
    "TrainingStopped",
    "check_templates",
    "default_train_run_id",
    "defect_confusion",
    "gate_budget",
    "load_templates",
    "min_net_wins",
    "open_training",
    "packaged_prompts",
    "plan_classes",
    "run_folder",
    "run_preflight",
    "run_training",
    "run_waterfall",
    "simulate",
    "stage_ends",
    "waterfall_table",
]
