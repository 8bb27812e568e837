"""Steps over the train pool: units stay whole, the order is fixed by (seed, epoch)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from skillharness.data import group_units
from skillharness.data.questions import Question
from skillharness.train.loop.batches import plan_steps


def _questions(videos: list[int]) -> list[Question]:
    out = []
    for i, v in enumerate(videos):
        out.append(
            Question(
                video_id=f"{v:03d}",
                duration="short",
                domain="Knowledge",
                sub_category="Humanity & History",
                url="https://example.invalid",
                videoID=f"vid{v}",
                question_id=f"{v:03d}-{i}",
                task_type="OCR Problems",
                question="Which?",
                options=("A. a", "B. b", "C. c", "D. d"),
                answer="A",
            )
        )
    return out


@given(st.lists(st.integers(0, 12), min_size=1, max_size=60), st.integers(1, 5), st.integers(0, 3))
def test_every_question_once_and_no_video_split(videos: list[int], batch: int, seed: int) -> None:
    questions = _questions(videos)
    steps = plan_steps(group_units(questions, "video"), batch, seed=seed, epoch=1)
    flat = [q.question_id for step in steps for q in step]
    assert sorted(flat) == sorted(q.question_id for q in questions)
    where = {}
    for index, step in enumerate(steps):
        assert len({q.videoID for q in step}) <= batch
        for q in step:
            assert where.setdefault(q.videoID, index) == index  # a video's questions share one step


def test_order_depends_on_seed_and_epoch_only() -> None:
    units = group_units(_questions(list(range(20))), "video")
    first = plan_steps(units, 3, seed=1, epoch=1)
    assert first == plan_steps(units, 3, seed=1, epoch=1)
    assert first != plan_steps(units, 3, seed=1, epoch=2)
    assert first != plan_steps(units, 3, seed=2, epoch=1)
    assert len(units) == 20
