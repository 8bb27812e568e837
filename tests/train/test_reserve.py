"""The val reserve (``train.gate.reserve``, issue 48 item 6): whole videos, the same in every tool,
left out of the counts every gate and preflight rests on."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from skillharness.commands.split import micro_verdicts, split_gate
from skillharness.data.pools import FrozenPools
from skillharness.data.questions import Question
from skillharness.data.split import SplitParams, make_split
from skillharness.train.config import GateConfig
from skillharness.train.preflight.gate_row import guard_summary, reserve_summary
from skillharness.train.state.reserve import reserved_ids
from skillharness.train.validate.coverage import class_coverage

TYPES = ("Counting Problem", "OCR Problems", "Action Reasoning")


def _questions(videos: int, per_video: int = 3, tag: str = "v") -> list[Question]:
    return [
        Question(
            question_id=f"{tag}{v:03d}-{k}",
            video_id=f"{tag}{v:03d}",
            videoID=f"{tag}{v:03d}",
            duration="short",
            task_type=TYPES[k % len(TYPES)],
            question="Which?",
            options=("A. a", "B. b", "C. c", "D. d"),
            answer="A",
        )
        for v in range(videos)
        for k in range(per_video)
    ]


def test_the_reserve_is_whole_videos_rounded_down() -> None:
    questions = _questions(30)
    held = reserved_ids(questions, 0.2)
    videos = {q.video_id for q in questions if q.question_id in held}
    assert len(videos) == 6
    assert held == {q.question_id for q in questions if q.video_id in videos}  # every question of each
    assert reserved_ids(questions, 0.0) == frozenset()
    assert reserved_ids(_questions(4), 0.2) == frozenset()  # 0.8 of a video is none


@settings(max_examples=50, deadline=None)
@given(
    videos=st.integers(min_value=1, max_value=60),
    small=st.floats(min_value=0.0, max_value=0.5),
    large=st.floats(min_value=0.0, max_value=0.5),
    order=st.randoms(use_true_random=False),
)
def test_the_reserve_depends_on_the_videos_only_and_grows_with_its_share(
    videos: int, small: float, large: float, order: random.Random
) -> None:
    """Any order of the same questions gives the same reserve (preflight, split verify and the loop
    list them differently), and a larger share keeps every video of a smaller one."""
    small, large = sorted((small, large))
    questions = _questions(videos)
    shuffled = list(questions)
    order.shuffle(shuffled)
    assert reserved_ids(shuffled, small) == reserved_ids(questions, small)
    assert reserved_ids(questions, small) <= reserved_ids(questions, large)


def test_coverage_counts_what_gates_can_draw() -> None:
    """Preflight, ``split verify`` and ``experiment init`` count each class through
    ``class_coverage``: with a reserve its val count is the questions outside it."""
    val = _questions(40)
    train = _questions(10, tag="t")
    pools = FrozenPools(
        "question",
        {},
        {"train": tuple(q.question_id for q in train), "val": tuple(q.question_id for q in val)},
        "",
    )
    gate = GateConfig(reserve=0.25, min_distinct=8)
    held = reserved_ids(val, 0.25)
    coverage = class_coverage([*train, *val], pools, gate)
    for task_type in TYPES:
        assert coverage[task_type].val == sum(
            1 for q in val if q.task_type == task_type and q.question_id not in held
        )
        assert coverage[task_type].val == 30  # 40 videos, 10 reserved, one question of each class per video
    plain = class_coverage([*train, *val], pools, GateConfig(min_distinct=8))
    assert all(plain[t].val == 40 for t in TYPES)
    assert "10 video(s), 30 question(s) no gate or guard draws" in reserve_summary(
        [*train, *val], pools, gate
    )
    assert reserve_summary([*train, *val], pools, GateConfig()) == ""
    # At temperature 0 the guard's fewest fresh questions per class leave the reserve out as well.
    small = GateConfig(reserve=0.25, guard_draws=35)
    assert "(as few as 30)" in guard_summary([*train, *val], pools, small, 0.0)


def test_a_reserve_above_half_of_val_is_refused() -> None:
    with pytest.raises(ValidationError, match="reserve"):
        GateConfig(reserve=0.6)


def test_split_judges_micro_classes_with_the_reserve_as_training_will() -> None:
    """``split --reserve``: a class at exactly min_distinct turns micro once a reserve takes some of
    its val videos, in the split's report as in preflight."""
    questions = _questions(24)
    split = make_split(questions, SplitParams(sizes=(8, 8, 8), unit="video", seed=1))
    plain = micro_verdicts(split, questions, split_gate(min_distinct=8), 0.0)
    reserved = micro_verdicts(split, questions, split_gate(min_distinct=8, reserve=0.25), 0.0)
    assert not plain.reasons
    assert set(reserved.reasons) == set(TYPES)
    assert all(
        "6 distinct val question(s) < train.gate.min_distinct=8" in r for r in reserved.reasons.values()
    )
