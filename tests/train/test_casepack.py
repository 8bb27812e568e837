"""Case packs: grouped by target, only evidence with a target, capped, deterministic."""

from __future__ import annotations

import random

import pytest

from skillharness.agent import Prediction, PredictionStatus
from skillharness.data.questions import Question
from skillharness.errors import ConfigError
from skillharness.skills import EditTarget
from skillharness.train.diagnose.casepack import build_case_packs
from skillharness.train.state.records import Case, Cause, Diagnosis


def _diagnosis(
    qid: str, cause: Cause, target: EditTarget | None, task_type: str = "OCR Problems"
) -> Diagnosis:
    question = Question(
        video_id="v1",
        videoID="vid1",
        duration="short",
        question_id=qid,
        task_type=task_type,
        question=f"What is shown in {qid}?",
        options=("A. x", "B. y", "C. z", "D. w"),
        answer="A",
    )
    prediction = Prediction(
        run_id="r",
        question_id=qid,
        task_type=task_type,
        status=PredictionStatus.OK,
        answer="B",
        correct=False,
    )
    return Diagnosis(Case(question, prediction, ()), cause, target, "reason")


SKILL = EditTarget.skill("OCR Problems")


def _mixed() -> list[Diagnosis]:
    out = [_diagnosis(f"d{i:02d}", Cause.DEFECT, SKILL) for i in range(12)]
    out += [
        _diagnosis(f"c{i}", Cause.DEFECT, EditTarget.skill("Counting Problem"), "Counting Problem")
        for i in range(2)
    ]
    out += [
        _diagnosis("f1", Cause.FORMAT, EditTarget.system()),
        _diagnosis("f2", Cause.DEFECT, EditTarget.system()),
    ]
    out += [_diagnosis("t1", Cause.TOOL, EditTarget.tool("get_frames"))]
    out += [_diagnosis("s1", Cause.FORMAT, EditTarget.tool("submit_answer"))]
    # Never packed: no target, or the wrong cause for a skill body.
    out += [_diagnosis("x1", Cause.LAPSE, None), _diagnosis("x2", Cause.UNCERTAIN, None)]
    out += [_diagnosis("x3", Cause.JUDGE_FAILED, None), _diagnosis("x4", Cause.DEGRADED, None)]
    out += [_diagnosis("x5", Cause.INFRA, None), _diagnosis("x6", Cause.TOOL, SKILL)]
    return out


def test_packs_by_target_with_only_targeted_evidence() -> None:
    packs = build_case_packs(_mixed(), max_cases=8, seed=1, salt="e1s1")
    labels = [p.target.label() for p in packs]
    assert labels == [
        "skill:counting_problem",
        "skill:ocr_problems",
        "system",
        "tools:get_frames",
        "tools:submit_answer",
    ]
    by_label = {p.target.label(): p for p in packs}
    assert len(by_label["skill:ocr_problems"].cases) == 8
    assert all(d.cause is Cause.DEFECT for d in by_label["skill:ocr_problems"].cases)
    assert by_label["system"].evidence_ids == frozenset({"f1", "f2"})
    packed = {qid for p in packs for qid in p.evidence_ids}
    assert not packed & {"x1", "x2", "x3", "x4", "x5", "x6"}


def test_choice_is_deterministic_from_seed_and_salt_not_input_order() -> None:
    diagnoses = _mixed()
    shuffled = diagnoses[:]
    random.Random(7).shuffle(shuffled)
    first = build_case_packs(diagnoses, max_cases=3, seed=1, salt="e1s1")
    again = build_case_packs(shuffled, max_cases=3, seed=1, salt="e1s1")
    assert [p.evidence_ids for p in first] == [p.evidence_ids for p in again]
    choices = {
        build_case_packs(diagnoses, max_cases=3, seed=seed, salt=salt)[1].evidence_ids
        for seed in range(4)
        for salt in ("a", "b")
    }
    assert len(choices) > 1  # seed and salt do choose


def test_max_cases_must_be_positive() -> None:
    with pytest.raises(ConfigError, match="max_cases"):
        build_case_packs(_mixed(), max_cases=0, seed=0, salt="")
