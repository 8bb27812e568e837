"""The one home of *micro* (train/validate/coverage.py): each class's verdict and the words of its reason.

The pools here are built by hand: one class per size of val pool, three train questions each,
so each verdict can be read off the counts. With the gate's defaults (alpha 0.05, bet cap 1/2)
acceptance needs 8 wins; ``train.gate.min_distinct`` is 8 by default.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from skillharness.commands.split import micro_verdicts
from skillharness.data.loader import load_questions
from skillharness.data.pools import FrozenPools
from skillharness.data.questions import Question
from skillharness.data.split import Pool, SplitParams, make_split
from skillharness.train.config import GateConfig, TrainConfig
from skillharness.train.validate.coverage import class_coverage, plan_trained_classes, trained_classes

GATE = GateConfig()
FEW_REASON = (
    f"6 distinct val question(s) < train.gate.min_distinct={GATE.min_distinct}: "
    "too few for a claim about the class"
)
FEW = "Spatial Perception"  # 6 val questions: the case of the issue
ENOUGH = "Object Reasoning"  # 24 val questions
UNTRAINED = "Temporal Perception"  # 24 val questions, no train question


def _question(qid: str, task_type: str) -> Question:
    return Question(
        video_id=qid,
        duration="short",
        videoID=qid,
        question_id=qid,
        task_type=task_type,
        question=f"What happens in {qid}?",
        options=("A. One", "B. Two", "C. Three", "D. Four"),
        answer="A",
    )


def _pools(val: dict[str, int], train: dict[str, int]) -> tuple[list[Question], FrozenPools]:
    """Questions and question-unit pools holding ``val[t]`` val and ``train[t]`` train questions of t."""
    ids: dict[Pool, list[str]] = {Pool.TRAIN: [], Pool.VAL: []}
    questions = []
    for pool, counts in ((Pool.VAL, val), (Pool.TRAIN, train)):
        for task_type, n in counts.items():
            for i in range(n):
                questions.append(_question(f"{pool}-{task_type}-{i}", task_type))
                ids[pool].append(questions[-1].question_id)
    by_pool = {pool: tuple(ids.get(pool, ())) for pool in Pool}
    return questions, FrozenPools("question", by_pool, by_pool, "")


QUESTIONS, POOLS = _pools(val={FEW: 6, ENOUGH: 24, UNTRAINED: 24}, train={FEW: 3, ENOUGH: 3, UNTRAINED: 0})


def test_few_distinct_val_questions_are_micro_at_temperature_0_7() -> None:
    """Sampling with replacement gives the gate n_max draws, not more questions: still micro."""
    few = class_coverage(QUESTIONS, POOLS, GATE, temperature=0.7)[FEW]
    assert few.reachable, "at 0.7 the gate's budget is n_max: it can accept"
    assert few.micro
    assert few.reason() == FEW_REASON


def test_few_distinct_val_questions_at_temperature_0_give_both_reasons() -> None:
    few = class_coverage(QUESTIONS, POOLS, GATE, temperature=0.0)[FEW]
    assert few.micro
    assert not few.reachable
    assert few.reason() == f"{FEW_REASON}; 6 val question(s) < 8 needed for its gate to accept"


@pytest.mark.parametrize("temperature", [0.0, 0.7])
def test_enough_distinct_val_questions_reach_and_are_not_micro(temperature: float) -> None:
    enough = class_coverage(QUESTIONS, POOLS, GATE, temperature)[ENOUGH]
    assert enough.reachable
    assert not enough.few_distinct
    assert not enough.micro
    assert enough.reason() == ""


def test_an_unreachable_gate_is_micro_whatever_min_distinct_says() -> None:
    """With min_distinct lowered to 1 the rule left is reachability, which the temperature decides."""
    lenient = GATE.model_copy(update={"min_distinct": 1})
    greedy = class_coverage(QUESTIONS, POOLS, lenient, temperature=0.0)[FEW]
    assert greedy.micro
    assert greedy.reason() == "6 val question(s) < 8 needed for its gate to accept"
    assert not class_coverage(QUESTIONS, POOLS, lenient, temperature=0.7)[FEW].micro


def test_a_class_with_no_train_question_is_micro() -> None:
    untrained = class_coverage(QUESTIONS, POOLS, GATE, temperature=0.7)[UNTRAINED]
    assert untrained.micro
    assert untrained.reason() == "no train question to learn from"


def test_the_verdict_is_frozen() -> None:
    verdict = class_coverage(QUESTIONS, POOLS, GATE, temperature=0.7)[FEW]
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.few_distinct = False  # type: ignore[misc]


def test_unset_task_types_leave_micro_classes_out() -> None:
    plan = plan_trained_classes(QUESTIONS, POOLS, TrainConfig(), temperature=0.7)
    assert plan.names == (ENOUGH,)
    assert [c.task_type for c in plan.excluded_micro] == [FEW, UNTRAINED]
    assert plan.micro_trained == ()


def test_explicit_task_types_train_a_micro_class_and_set_it_apart() -> None:
    plan = plan_trained_classes(QUESTIONS, POOLS, TrainConfig(task_types=(FEW, ENOUGH)), temperature=0.7)
    assert plan.explicit
    assert plan.names == (FEW, ENOUGH)
    assert plan.excluded_micro == ()
    assert plan.micro_trained == (FEW,)  # its accepts are reported apart
    # The override trains the class; it does not change the verdict or its reason.
    assert (
        plan.trained[0]
        .reason()
        .startswith(f"6 distinct val question(s) < train.gate.min_distinct={GATE.min_distinct}")
    )


def test_trained_classes_reads_the_same_verdicts_it_is_given() -> None:
    coverage = class_coverage(QUESTIONS, POOLS, GATE, temperature=0.7)
    plan = trained_classes(TrainConfig(), coverage)
    assert {c.task_type for c in plan.excluded_micro} == {n for n, c in coverage.items() if c.micro}


def test_the_real_split_and_the_training_plan_agree_on_micro(videomme_questions_path: Path) -> None:
    """Video-MME, 90 val videos, temperature 0.7: Spatial Perception holds 6 val questions. Every
    class reaches its gate when sampling with replacement; the class is micro all the same, the
    split says so, and the training plan leaves it out for the same reason."""
    questions = load_questions(videomme_questions_path)
    split = make_split(questions, SplitParams(sizes=(210, 90, 600), unit="video", seed=0))
    verdicts = micro_verdicts(split, questions, GATE, 0.7)
    printed = verdicts.reasons
    pools = {pool: tuple(q for u in units for q in u.question_ids) for pool, units in split.pools.items()}
    frozen = FrozenPools("video", {p: tuple(u.id for u in us) for p, us in split.pools.items()}, pools, "")
    plan = plan_trained_classes(questions, frozen, TrainConfig(), temperature=0.7)
    assert {c.task_type: c.reason() for c in plan.excluded_micro} == printed
    assert printed[FEW] == FEW_REASON
    assert all(c.reachable for c in plan.excluded_micro)
    assert FEW not in plan.names
    # docs/data.md shows this report: it must be the report, word for word.
    documented = (Path(__file__).resolve().parents[2] / "docs/data.md").read_text()
    for name, reason in printed.items():
        assert f"    - {name}: {reason}\n" in documented, name
    assert f"    ({verdicts.hint})\n" in documented
    assert verdicts.hint.startswith("to train them anyway, set train.gate.min_distinct to ")


def test_a_90_question_val_pool_trains_with_the_defaults(videomme_questions_path: Path) -> None:
    """GEPA's setup (210/90/600 Video-MME questions): the defaults train some classes, each on at
    least min_distinct distinct val questions, and name the setting for the ones they leave out."""
    questions = load_questions(videomme_questions_path)
    split = make_split(questions, SplitParams(sizes=(210, 90, 600), unit="question", seed=0))
    pools = {pool: tuple(q for u in units for q in u.question_ids) for pool, units in split.pools.items()}
    frozen = FrozenPools("question", pools, pools, "")
    plan = plan_trained_classes(questions, frozen, TrainConfig(), temperature=0.7)
    assert plan.names, "a 90-question val pool must train with the defaults"
    assert all(c.val >= GATE.min_distinct for c in plan.trained)
    assert plan.excluded_micro
    verdicts = micro_verdicts(split, questions, GATE, 0.7)
    assert "set train.gate.min_distinct to" in verdicts.hint
    assert "name them in train.task_types" in verdicts.hint
