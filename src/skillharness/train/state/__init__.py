"""What every step of a run shares: its context, checkpoint, records, budget, draws and role caller."""

from __future__ import annotations

from skillharness.train.state.budget import StopGuard, TrainingStopped
from skillharness.train.state.caller import (
    RoleAnswer,
    RoleCaller,
    distinct_samples,
    evolve_calls,
    role_sampling,
)
from skillharness.train.state.checkpoint import (
    CHECKPOINT_FILE,
    CHECKPOINT_SCHEMA_VERSION,
    AcceptedEdit,
    Checkpoint,
    OpenCandidate,
    RetiredTarget,
    RunState,
    Spent,
)
from skillharness.train.state.context import TrainContext
from skillharness.train.state.draws import (
    DrawPlan,
    draw_temperature,
    gate_budget,
    plan_draws,
    plan_guard_draws,
)
from skillharness.train.state.outage import InfraOutage, check_infra
from skillharness.train.state.records import (
    Candidate,
    Case,
    CasePack,
    Cause,
    Diagnosis,
    GateOutcome,
    GateReason,
    Refused,
    RejectedEdit,
    Standing,
)
from skillharness.train.state.refusals import RefusalTally, RequestsRefused, check_refusals

__all__ = [
    "CHECKPOINT_FILE",
    "CHECKPOINT_SCHEMA_VERSION",
    "AcceptedEdit",
    "Candidate",
    "Case",
    "CasePack",
    "Cause",
    "Checkpoint",
    "Diagnosis",
    "DrawPlan",
    "GateOutcome",
    "GateReason",
    "InfraOutage",
    "OpenCandidate",
    "RefusalTally",
    "Refused",
    "RejectedEdit",
    "RequestsRefused",
    "RetiredTarget",
    "RoleAnswer",
    "RoleCaller",
    "RunState",
    "Spent",
    "Standing",
    "StopGuard",
    "TrainContext",
    "TrainingStopped",
    "check_infra",
    "check_refusals",
    "distinct_samples",
    "draw_temperature",
    "evolve_calls",
    "gate_budget",
    "plan_draws",
    "plan_guard_draws",
    "role_sampling",
]
