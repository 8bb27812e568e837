"""Training: what the loop stands on so far — the acceptance gate and the prompt templates.

The loop itself (rollout, diagnosis, evolution, validation, momentum, checkpoints) is the next
milestone; :mod:`skillharness.train.gate` and :mod:`skillharness.train.templates` are complete.
"""

from skillharness.train.config import GateConfig, TrainConfig
from skillharness.train.gate import (
    EProcessGate,
    FixedNStandardError,
    GateRule,
    StrictlyBetterMinibatch,
    min_net_wins,
    plan_classes,
    simulate,
)
from skillharness.train.preflight import CheckStatus, PreflightReport, run_preflight
from skillharness.train.prompt_specs import TEMPLATE_SPECS
from skillharness.train.templates import (
    PromptTemplates,
    RenderedPrompt,
    check_templates,
    load_templates,
    packaged_prompts,
)

__all__ = [
    "TEMPLATE_SPECS",
    "CheckStatus",
    "EProcessGate",
    "FixedNStandardError",
    "GateConfig",
    "GateRule",
    "PreflightReport",
    "PromptTemplates",
    "RenderedPrompt",
    "StrictlyBetterMinibatch",
    "TrainConfig",
    "check_templates",
    "load_templates",
    "min_net_wins",
    "packaged_prompts",
    "plan_classes",
    "run_preflight",
    "simulate",
]
