"""The report's data: one typed model of everything a training run left in the store.

The HTML page and the JSON file next to it are two renderings of one :class:`ReportData`, so a
script reading the JSON sees exactly the numbers the page shows.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from skillharness.eval.report.outages import OutageView
from skillharness.eval.report.transfer import TransferRow
from skillharness.util.model import StrictModel

__all__ = [
    "ClassScore",
    "CurvePoint",
    "DiagnosisCount",
    "DiffLine",
    "EpochEnd",
    "GateDraw",
    "GateView",
    "Headline",
    "HoldoutRow",
    "ReportData",
    "RoleUsage",
    "RunSummary",
    "Score",
    "StepView",
]


class RunSummary(StrictModel):
    """A stored run's provenance and counts, flattened for display."""

    run_id: str
    kind: str
    status: str
    pool: str | None
    model: str
    endpoints: tuple[str, ...]
    # Resumes on other replicas of the same model: time, replicas before and after, added, removed.
    replica_changes: tuple[dict[str, Any], ...] = ()
    pools_sha256: str | None
    bundle_hash: str
    config_hash: str
    package_version: str
    parent_run_id: str | None
    started_at: str
    ended_at: str | None
    wall_s: float | None
    n_ok: int
    n_parse_error: int
    n_infra_error: int


class Score(StrictModel):
    """An accuracy with its interval; ``sim_truth`` is the simulator oracle's exact value, if asked."""

    label: str
    correct: int
    n: int
    accuracy: float | None
    low: float | None
    high: float | None
    sim_truth: float | None = None


class Headline(StrictModel):
    """Baseline against final on one pool."""

    pool: str
    note: str | None = None  # how to read the pool's numbers, e.g. "selected on val (optimistic)"
    baseline: Score | None
    final: Score | None
    gain: dict[str, float] | None = None
    mcnemar: dict[str, Any] | None = None
    agreement: str | None = None  # the val/holdout agreement flag, as the holdout metric states it
    # Val only: the gain on val questions no gate drew (train/validate/unselected.py) and its line.
    unselected: dict[str, Any] | None = None
    unselected_note: str | None = None


class ClassScore(StrictModel):
    """Baseline against final on one task type of val."""

    task_type: str
    baseline: Score | None
    final: Score | None


class RoleUsage(StrictModel):
    role: str
    calls: float = 0
    cache_hits: float = 0
    errors: float = 0  # failed attempts, retried or not
    failed_calls: float = 0
    prompt_tokens: float = 0
    completion_tokens: float = 0
    cost: float = 0
    latency_s: float = 0


class CurvePoint(StrictModel):
    """The standing version after one decision (a ``dual_metric`` row)."""

    index: int  # position in decision order
    epoch: int
    step: int
    target: str
    version: str
    target_accuracy: float | None
    val_accuracy: float | None
    ema: dict[str, float]
    accepted: bool


class EpochEnd(StrictModel):
    epoch: int
    version: str
    correct: int
    n: int
    accuracy: float
    low: float | None
    high: float | None
    improved: bool
    per_class: dict[str, list[int]] = Field(default_factory=dict)


class GateDraw(StrictModel):
    draw_index: int
    question_id: str
    task_type: str
    arm: str
    candidate: int | None
    incumbent: int | None
    wealth: float
    harm_wealth: float


class DiffLine(StrictModel):
    """One line of a unified diff: ``kind`` is ctx, add, del or hunk; ``region`` the skill region."""

    kind: str
    text: str
    region: str = ""


class LineTruth(StrictModel):
    """One inserted line of an accepted edit and its true effect on val when added alone."""

    line: str
    delta: float


class GateView(StrictModel):
    """One candidate's fate, with the gate's evidence and the document diff."""

    gate_index: int
    epoch: int
    step: int
    target: str
    reason: str  # as people read it: a proposal refused before testing is labelled apart
    detail: str
    choice: str
    alpha: float
    threshold: float | None
    draws: int
    untested_calls: int = 0  # the evolve calls of a proposal that never reached a test
    wins: int
    losses: int
    ties: int
    infra: int
    final_wealth: float | None  # after the last observation drawn (a stage may run past the decision)
    final_harm_wealth: float | None
    decision_wealth: float | None = None  # at the observation the ladder decided on
    decided_at: int | None = None  # that observation's draw index (later ones are drawn lighter)
    distinct: int | None = None  # distinct val questions the decision rests on (its plan's)
    version_before: str
    version_after: str | None
    rationale: str
    edits: dict[str, Any]
    path: list[GateDraw]
    stage_ends: list[int]
    diff: list[DiffLine]
    document_before: str
    document_after: str | None
    sim_delta: float | None = None  # the oracle's true effect of the edit on val, if asked
    # Each line the accepted edit inserted, scored alone by the oracle (its effect on val): harm
    # is counted per line, so a useless line riding in a helpful set is seen.
    sim_lines: list[LineTruth] | None = None

    @property
    def harmful_lines(self) -> int:
        return sum(line.delta <= 0 for line in self.sim_lines or ())

    @property
    def accepted(self) -> bool:
        return self.reason == "accept"


class StepView(StrictModel):
    """A training step's summary (``train_steps``)."""

    epoch: int
    step: int
    questions: int
    correct: int
    waterfall: dict[str, int]
    judge_calls: int
    fingerprint_hits: int
    candidates: dict[str, str]


class DiagnosisCount(StrictModel):
    """How many diagnosed wrong answers of one rollout run, task type and judge verdict."""

    run_id: str
    task_type: str
    cause: str
    n: int


class HoldoutRow(StrictModel):
    """One row of the holdout table as the adapter reads it (cells are kept as they were stored)."""

    group: str
    label: str
    cells: dict[str, Any]


class ReportData(StrictModel):
    """Everything the page shows."""

    generated_at: str
    package_version: str
    store: str
    run: RunSummary
    children: list[RunSummary]
    partial: bool
    partial_reasons: list[str]
    final: dict[str, Any] | None
    headlines: list[Headline]
    val_by_class: list[ClassScore] = Field(default_factory=list)
    usage: list[RoleUsage]
    outages: OutageView = Field(default_factory=lambda: OutageView(attempts=[], timeline=[]))
    curves: list[CurvePoint]
    epoch_ends: list[EpochEnd]
    gates: list[GateView]
    alpha_spent: dict[str, Any] | None
    budget: dict[str, Any] | None = None  # {"spent": {calls, cost, wall_s}, "limits": {...}}: the run's
    steps: list[StepView]
    diagnoses: list[DiagnosisCount]
    holdout_raw: Any = None
    holdout_rows: list[HoldoutRow] = Field(default_factory=list)
    transfer: list[TransferRow] = Field(default_factory=list)  # empty: no protocol was run
    rollouts_by_purpose: dict[str, int]
    simulator_truth: bool = False
    judge_truth: dict[str, float | None] | None = None  # the judge's defect verdicts against the oracle
    task_types: list[str]
