"""The values that flow between the training steps (SPEC section 4.3), one home each.

rollout → :class:`Case` (a wrong answer with its trace) → diagnose → :class:`Diagnosis` →
case packs → :class:`CasePack` → evolve → :class:`Candidate` or :class:`Refused` → validate →
:class:`GateOutcome`. Rejections are remembered per target as :class:`RejectedEdit`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import Field, model_validator

from skillharness.agent.records import Prediction, TraceStep
from skillharness.data.questions import Question
from skillharness.skills import Bundle, EditSet, EditTarget, RefusalReason
from skillharness.train.gate import Decision
from skillharness.train.roles.prompt_specs import EditSetView
from skillharness.util.model import StrictModel

__all__ = [
    "BEFORE_TESTING",
    "RANK_DECLINED",
    "UNTESTED_LABELS",
    "Candidate",
    "Case",
    "CasePack",
    "Cause",
    "Diagnosis",
    "GateOutcome",
    "GateReason",
    "Refused",
    "RejectedEdit",
    "Standing",
    "decision_label",
    "untested_calls",
]


class Cause(StrEnum):
    """Where the waterfall put a wrong answer. Only ``defect`` reaches a skill body (audit P1-5)."""

    INFRA = "infra"  # C1: excluded, asked again at the next rollout
    FORMAT = "format"  # C1: parse error → system prompt and submit_answer's description
    TOOL = "tool"  # C2: tool misuse or step budget exhausted → that tool's description
    DEGRADED = "degraded"  # C2: frames failed or degraded, promised subtitles missing → excluded
    DEFECT = "defect"  # C3: the instructions lack what the question needs
    LAPSE = "lapse"  # C3: the instructions cover it; the agent slipped (uncertain counts here)
    UNCERTAIN = "uncertain"  # C3 said so; treated as a lapse, counted apart
    JUDGE_FAILED = "judge_failed"  # C3 call failed or its reply did not parse → excluded, retried

    @property
    def excluded(self) -> bool:
        return self in (Cause.INFRA, Cause.DEGRADED, Cause.JUDGE_FAILED)


@dataclass(frozen=True)
class Case:
    """One wrong answer of a rollout, with the question and the stored trace it came from."""

    question: Question
    prediction: Prediction
    trace: tuple[TraceStep, ...]


@dataclass(frozen=True)
class Diagnosis:
    """A case and what the waterfall made of it. ``target`` is None for excluded causes and lapses."""

    case: Case
    cause: Cause
    target: EditTarget | None
    reason: str
    trace_summary: str = ""


@dataclass(frozen=True)
class CasePack:
    """The defects of one target, capped and chosen deterministically; the gate skips their questions."""

    target: EditTarget
    cases: tuple[Diagnosis, ...]

    @property
    def evidence_ids(self) -> frozenset[str]:
        return frozenset(d.case.question.question_id for d in self.cases)


@dataclass(frozen=True)
class Candidate:
    """A valid, applied edit set for one target: the bundle the gate will test."""

    target: EditTarget
    edit_set: EditSet
    bundle: Bundle
    document_before: str
    document_after: str
    # "only" | "first" (rank off) | "rank" | "rank_fallback" (rank failed: first valid taken) |
    # "trial_endorsed" / "trial_declined" (rank auto, during the rank trial: tested either way)
    choice: str
    evidence_ids: frozenset[str] = frozenset()
    choice_detail: str = ""  # the rank's reason, or why the rank fell back
    # A step's edit set is re-applied to the incumbent as it stands at its decision (an earlier
    # target may have moved it). Momentum and consolidation are whole updates built from the
    # incumbent they are gated against, with no edit list to re-apply: they are gated as built.
    reapply: bool = True


@dataclass(frozen=True)
class Refused:
    """No candidate for a target this step: every proposal was refused, the rank role declined
    them all, or none came back."""

    target: EditTarget
    reason: RefusalReason | str
    detail: str
    edit_set: EditSet | None = None
    document_before: str = ""
    calls: int = 0  # the evolve and rank calls it cost (counted beside the decisions it never reached)


# The evidence key of a decision whose proposal never reached a test (every proposal refused, the
# rank role declined them, momentum or consolidation failed): its value is the refusal's reason.
BEFORE_TESTING = "before_testing"
RANK_DECLINED = "rank_declined"


UNTESTED_LABELS = ("declined by rank", "refused before testing")


def untested_calls(evidence: Mapping[str, Any]) -> int:
    """The evolve and rank calls a proposal refused before testing cost (0 for a tested one)."""
    return int(evidence.get("evolve_calls", 0) or 0) if BEFORE_TESTING in evidence else 0


def decision_label(reason: str, evidence: Mapping[str, Any]) -> str:
    """What a stored decision was, for people: a proposal refused before any draw is no failed
    test (stored as ``reject_invalid``, which SPEC's five decisions name it), so it is shown apart,
    and a rank role's decline apart from a refused patch."""
    refused = evidence.get(BEFORE_TESTING)
    if refused is None:
        return reason
    return UNTESTED_LABELS[0] if refused == RANK_DECLINED else UNTESTED_LABELS[1]


class GateReason(StrEnum):
    """The five decisions a candidate can end with (SPEC section 4.3.6)."""

    ACCEPT = "accept"
    REJECT_EVIDENCE = "reject_evidence"
    REJECT_INERTIA = "reject_inertia"
    REJECT_GUARD = "reject_guard"
    REJECT_INVALID = "reject_invalid"


@dataclass(frozen=True)
class GateOutcome:
    """A validation's verdict and the evidence it rests on."""

    reason: GateReason
    detail: str
    decision: Decision | None = None  # the ladder's last decision (None: nothing was drawn)
    alpha: float = 0.0  # the alpha this gate spent
    guard: dict[str, Any] | None = None  # McNemar guard result, for system and tool edits
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def accepted(self) -> bool:
        return self.reason is GateReason.ACCEPT

    @property
    def next_sample(self) -> int | None:
        """Where the next gate's sample indices start (None: this gate planned no draws)."""
        samples = self.evidence.get("samples")
        return int(samples[1]) if samples else None


class Standing(StrEnum):
    """What a rejection says about the idea, as the next proposal is told it."""

    HARMFUL = "harmful"  # reject_evidence, or reject_guard (harm on another class): do not repeat
    UNPROVEN = "unproven"  # reject_inertia: too little evidence either way; may come back better targeted
    INVALID = "invalid"  # reject_invalid: the patcher refused its form, the idea was never tested


_STANDING = {
    GateReason.REJECT_EVIDENCE: Standing.HARMFUL,
    GateReason.REJECT_GUARD: Standing.HARMFUL,
    GateReason.REJECT_INERTIA: Standing.UNPROVEN,
    GateReason.REJECT_INVALID: Standing.INVALID,
}


class RejectedEdit(StrictModel):
    """A rejected edit set as remembered per target and shown to the next proposal.

    ``verdict`` and the evidence counts were added later: an entry of an older checkpoint has only
    ``outcome``, whose leading gate reason becomes its verdict on load (its counts stay unknown).
    """

    rationale: str
    edits_json: str
    outcome: str  # gate reason and a one-line detail
    verdict: GateReason | None = Field(
        None, description="The gate's reason; None only for an entry whose outcome names none."
    )
    wins: int | None = Field(
        None, ge=0, description="Paired observations the candidate won (None: nothing was drawn)."
    )
    losses: int | None = Field(None, ge=0, description="Paired observations the candidate lost.")
    n: int | None = Field(None, ge=0, description="Paired observations the verdict rests on.")

    @model_validator(mode="before")
    @classmethod
    def _verdict_from_outcome(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("verdict") is None:
            head = str(data.get("outcome", "")).split(":", 1)[0].strip()
            if head in _STANDING:  # a StrEnum key equals its value
                data = {**data, "verdict": head}
        return data

    @property
    def standing(self) -> Standing:
        """Harmful, unproven or invalid; an entry without a verdict counts as harmful (never retried)."""
        return _STANDING.get(self.verdict, Standing.HARMFUL) if self.verdict is not None else Standing.HARMFUL

    @property
    def evidence(self) -> str:
        """The counts the verdict rests on, in one line ("" when nothing was drawn)."""
        if self.n is None:
            return ""
        return f"{self.wins} wins, {self.losses} losses in {self.n} paired observations"

    def view(self) -> EditSetView:
        return EditSetView(
            rationale=self.rationale,
            edits_json=self.edits_json,
            outcome=self.outcome,
            standing=self.standing.value,
            evidence=self.evidence,
        )
