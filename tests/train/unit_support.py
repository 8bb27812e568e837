"""An in-process stand-in for :class:`TrainContext` at the seams of the loop's decisions.

The loop's bookkeeping (open a test, rebase it, decide it, record it) reads a handful of the
context's fields and writes rows: this fake holds exactly those, answers a val rollout from a
rule instead of a model, and keeps every row written. The unit tests built on it run in
milliseconds, beside the end-to-end runs over a simulator (test_open_candidates.py, test_merge.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from skillharness.data import Question
from skillharness.llm import SamplingParams
from skillharness.skills import Bundle, Edit, EditOp, EditSet, EditTarget, Refusal, Workspace, initial_bundle
from skillharness.train.config import TrainConfig
from skillharness.train.state.checkpoint import OpenCandidate
from skillharness.train.state.context import TrainContext
from skillharness.train.state.draws import draw_temperature
from skillharness.train.state.records import Candidate

COUNTING, OCR = "Counting Problem", "OCR Problems"
TRAINED = (COUNTING, OCR)
COUNTING_SKILL, OCR_SKILL = EditTarget.skill(COUNTING), EditTarget.skill(OCR)


def questions(task_type: str, n: int, prefix: str = "") -> list[Question]:
    tag = prefix or task_type.split()[0].lower()
    return [
        Question(
            video_id=f"{tag}{i:03d}",
            duration="short",
            videoID=f"v{tag}{i:03d}",
            question_id=f"{tag}{i:03d}-1",
            task_type=task_type,
            question=f"{task_type} question {i}?",
            options=("A. yes", "B. no"),
            answer="A",
        )
        for i in range(n)
    ]


@dataclass
class FakeStore:
    """Keeps every row upserted, in order."""

    rows: list[Any] = field(default_factory=list)

    async def aupsert(self, rows: Sequence[Any]) -> None:
        self.rows.extend(rows)

    def of(self, kind: type) -> list[Any]:
        return [r for r in self.rows if isinstance(r, kind)]


@dataclass(frozen=True)
class RolloutCall:
    bundle_hash: str
    suffix: str
    draws: int
    check_stop: Callable[[], None] | None


def _all_right(bundle: Bundle, question: Question) -> bool | None:
    return True


class FakeContext:
    """The fields of :class:`TrainContext` the decision seams read; ``right(bundle, question)`` answers
    each val draw (None: an infra error)."""

    def __init__(
        self,
        *,
        gate: Mapping[str, Any] | None = None,
        train: Mapping[str, Any] | None = None,
        val: Mapping[str, int] | None = None,
        temperature: float = 0.7,
        right: Callable[[Bundle, Question], bool | None] = _all_right,
    ) -> None:
        config = TrainConfig()
        gate_config = config.gate.model_copy(update=dict(gate or {}))
        self.config = config.model_copy(update={"gate": gate_config, **dict(train or {})})
        self.run_id = "t-unit"
        self.task_types = TRAINED
        sizes = val if val is not None else {COUNTING: 30, OCR: 30}
        self.val_questions = tuple(q for t, n in sizes.items() for q in questions(t, n))
        self.session = SimpleNamespace(
            agent_config=SimpleNamespace(sampling=SamplingParams(temperature=temperature), concurrency=8)
        )
        self.store = FakeStore()
        self.val_scores: dict[str, Any] = {}
        self.rollouts: list[RolloutCall] = []
        self.right = right

    @property
    def val_by_type(self) -> dict[str, tuple[Question, ...]]:
        grouped: dict[str, list[Question]] = {}
        for q in self.val_questions:
            grouped.setdefault(q.task_type, []).append(q)
        return {t: tuple(qs) for t, qs in sorted(grouped.items())}

    @property
    def temperature(self) -> float:
        return draw_temperature(self.session.agent_config.sampling)

    async def rollout(
        self,
        bundle: Bundle,
        draws: Sequence[tuple[Question, int]],
        suffix: str,
        *,
        kind: object,
        pool: object,
        check_stop: Callable[[], None] | None = None,
    ) -> list[Any]:
        self.rollouts.append(RolloutCall(bundle.bundle_hash, suffix, len(draws), check_stop))
        return [
            SimpleNamespace(question_id=q.question_id, correct=self.right(bundle, q), sample_idx=s)
            for q, s in draws
        ]

    def typed(self) -> TrainContext:
        return cast(TrainContext, self)


def workspace(tmp_path: Path) -> tuple[Workspace, Bundle]:
    ws = Workspace.create(tmp_path / "ws", initial_bundle(), reason="initial bundle")
    return ws, ws.load("v0000")


def body(bundle: Bundle, target: EditTarget) -> str:
    return bundle.skill(target.name or "").body if target.kind == "skill" else bundle.text_of(target)


def anchor(bundle: Bundle, target: EditTarget, nth: int = 0) -> str:
    """The ``nth`` non-blank line of the target's body that occurs there once."""
    text = body(bundle, target)
    lines = [line for line in text.splitlines() if line.strip() and text.count(line) == 1]
    return lines[nth]


def insert(target: EditTarget, anchor_line: str, *lines: str, op: EditOp = EditOp.INSERT_AFTER) -> Edit:
    return Edit(op=op, anchor=anchor_line, text="".join(f"\n- {line}" for line in lines))


def patch(*edits: Edit, rationale: str = "test") -> EditSet:
    return EditSet(skill_update_mode="patch", edits=edits, rationale=rationale)


def candidate(
    bundle: Bundle,
    target: EditTarget,
    edit_set: EditSet,
    *,
    evidence: frozenset[str] = frozenset(),
    reapply: bool = True,
    choice_detail: str = "",
) -> Candidate:
    applied = bundle.apply(target, edit_set)
    assert not isinstance(applied, Refusal), applied
    return Candidate(
        target,
        edit_set,
        applied,
        bundle.text_of(target),
        applied.text_of(target),
        choice="only",
        evidence_ids=evidence,
        reapply=reapply,
        choice_detail=choice_detail,
    )


def line_candidate(bundle: Bundle, target: EditTarget, *lines: str, nth: int = 0) -> Candidate:
    """A candidate inserting ``lines`` after the target's ``nth`` unique line."""
    return candidate(bundle, target, patch(insert(target, anchor(bundle, target, nth), *lines)))


def never() -> None:
    """A budget that never runs out."""


def open_test(
    key: int,
    target: EditTarget,
    edit_set: EditSet,
    *,
    wealth: float = 1.0,
    invalid: str = "",
    opened: tuple[int, int] = (1, 0),
    evidence: tuple[str, ...] = (),
) -> OpenCandidate:
    """An open test as the checkpoint keeps it (the hashes are stand-ins: no bundle is rebuilt)."""
    return OpenCandidate(
        key=key,
        target=target.label(),
        edit_set=json.loads(edit_set.model_dump_json()),
        evidence_ids=list(evidence),
        base_version="v0000",
        base_hash="base",
        bundle_hash=f"bundle {key}",
        alpha=0.05,
        n_max=48,
        first_sample=1,
        wealth=wealth,
        invalid=invalid,
        opened=opened,
    )
