"""The val gain on val questions no gate drew, and the optimism of the selected val gain (issue 48
item 6): post-stratified by class, bootstrapped by video, unavailable when nothing is left over."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from skillharness.data.questions import Question
from skillharness.train.validate.unselected import describe_unselected, unselected_gain, unselected_truth

A, B, C = "Counting Problem", "OCR Problems", "Action Reasoning"


def _q(qid: str, task_type: str, video: str) -> Question:
    return Question(
        question_id=qid,
        video_id=video,
        videoID=video,
        duration="short",
        task_type=task_type,
        question="Which?",
        options=("A. a", "B. b", "C. c", "D. d"),
        answer="A",
    )


def _class(task_type: str, n: int, tag: str) -> list[Question]:
    return [_q(f"{tag}{k:02d}", task_type, f"{tag}v{k // 2}") for k in range(n)]


def _answers(questions: list[Question], gain_ids: set[str]) -> tuple[dict[str, bool], dict[str, bool]]:
    """Final right and baseline wrong on ``gain_ids``; both right elsewhere."""
    final = {q.question_id: True for q in questions}
    base = {q.question_id: q.question_id not in gain_ids for q in questions}
    return final, base


def test_nothing_drawn_is_reported_unavailable_with_its_reason() -> None:
    questions = _class(A, 10, "a")
    final, base = _answers(questions, set())
    result = unselected_gain(questions, final, base, drawn=())
    assert result["available"] is False
    assert result["reason"] == "no gate drew a val question"
    assert result["undrawn"] == 10


def test_classes_drawn_to_the_last_question_leave_nothing_to_estimate() -> None:
    questions = _class(A, 6, "a") + _class(B, 6, "b")
    final, base = _answers(questions, {"a00"})
    drawn = [q.question_id for q in questions if q.task_type == A]  # B was never drawn
    result = unselected_gain(questions, final, base, drawn)
    assert result["available"] is False
    assert "every val question of the classes the gates drew from was drawn" in result["reason"]
    assert (result["selected_classes"], result["estimable_classes"]) == (1, 0)


def test_a_gain_only_on_drawn_questions_is_all_optimism() -> None:
    """Class A: the final bundle wins exactly the questions the gates drew (an edit fitted to them);
    class B was never drawn. On the covered classes the selected gain is 20 of 80 questions, the
    unselected one nothing: optimism 25 points, its interval above zero."""
    questions = _class(A, 40, "a") + _class(B, 40, "b")
    drawn = {f"a{k:02d}" for k in range(20)}
    final, base = _answers(questions, drawn)
    result = unselected_gain(questions, final, base, drawn, seed=3)
    assert result["available"] is True
    assert result["undrawn"] == 60
    assert (result["covered_classes"], result["covered_questions"]) == (2, 80)
    assert result["selected_gain"] == 0.25
    assert result["gain"] == 0.0
    assert result["optimism"] == 0.25
    assert 0.0 < result["optimism_low"] <= 0.25 <= result["optimism_high"]
    assert {c: v["size"] for c, v in result["covered"].items()} == {A: 40, B: 40}
    undrawn = [i for v in result["covered"].values() for i in v["undrawn"]]
    assert sorted(undrawn) == sorted(set(q.question_id for q in questions) - drawn)


def test_classes_weigh_by_their_val_size_not_by_what_was_left_undrawn() -> None:
    """A keeps 2 undrawn questions (both won), B keeps 18 (none won); both classes have 20 val
    questions. A plain mean over undrawn questions would read 2/20; per class it is (1 + 0) / 2."""
    a, b = _class(A, 20, "a"), _class(B, 20, "b")
    drawn = {q.question_id for q in a[2:]} | {q.question_id for q in b[18:]}
    final, base = _answers(a + b, {"a00", "a01"})
    result = unselected_gain(a + b, final, base, drawn)
    assert result["gain"] == 0.5
    assert result["selected_gain"] == 2 / 40


def test_a_fully_drawn_class_is_left_out_of_both_sides() -> None:
    """C's every question was drawn: it cannot be estimated, so its large selected gain is left out
    of the comparison too (it would otherwise read as optimism)."""
    a, c = _class(A, 10, "a"), _class(C, 4, "c")
    drawn = {"a00", "a01"} | {q.question_id for q in c}
    final, base = _answers(a + c, {q.question_id for q in c})
    result = unselected_gain(a + c, final, base, drawn)
    assert (result["covered_classes"], result["covered_questions"], result["val_questions"]) == (1, 10, 14)
    assert result["selected_gain"] == result["gain"] == result["optimism"] == 0.0


def test_unpaired_questions_are_not_counted() -> None:
    questions = _class(A, 10, "a")
    final, base = _answers(questions, {"a05"})
    del final["a09"]  # an infra error on the final side
    result = unselected_gain(questions, final, base, {"a00"})
    assert (result["val_questions"], result["undrawn"]) == (9, 8)


@settings(max_examples=40, deadline=None)
@given(
    wins=st.lists(st.booleans(), min_size=8, max_size=30),
    seed=st.integers(min_value=0, max_value=5),
)
def test_same_answers_on_drawn_and_undrawn_questions_mean_no_optimism(wins: list[bool], seed: int) -> None:
    """Each drawn question has an undrawn twin answered alike: the estimate cannot see optimism."""
    half = _class(A, len(wins), "d") + _class(A, len(wins), "u")
    gained = {f"{tag}{k:02d}" for k, w in enumerate(wins) if w for tag in ("d", "u")}
    final, base = _answers(half, gained)
    drawn = {f"d{k:02d}" for k in range(len(wins))}
    result = unselected_gain(half, final, base, drawn, seed=seed, resamples=200)
    assert abs(result["optimism"]) < 1e-12
    assert result["low"] <= result["gain"] <= result["high"]


def test_the_same_seed_gives_the_same_interval() -> None:
    questions = _class(A, 12, "a") + _class(B, 12, "b")
    drawn = {"a00", "a01", "a02", "b00"}
    final, base = _answers(questions, {"a00", "a03", "b05"})
    one = unselected_gain(questions, final, base, drawn, seed=7)
    two = unselected_gain(questions, final, base, drawn, seed=7)
    assert one == two
    assert one["low"] <= one["gain"] <= one["high"]


def test_the_truth_weighs_each_class_as_the_estimate_does() -> None:
    """An oracle that knows the gain of each question: the truth is the estimand, per class on its
    undrawn questions, weighted by the class's val size (not by how many were left undrawn)."""
    a, b = _class(A, 20, "a"), _class(B, 20, "b")
    drawn = {q.question_id for q in a[2:]} | {q.question_id for q in b[18:]}
    final, base = _answers(a + b, {"a00", "a01"})
    result = unselected_gain(a + b, final, base, drawn)
    true_gain = {q.question_id: (0.4 if q.task_type == A else 0.1) for q in a + b}

    def gain_on(ids: list[str]) -> float:
        return sum(true_gain[i] for i in ids) / len(ids)

    assert unselected_truth(result, gain_on) == (20 * 0.4 + 20 * 0.1) / 40
    unavailable = unselected_gain(a, *_answers(a, set()), drawn=())
    assert unselected_truth(unavailable, gain_on) is None


def test_the_line_gives_both_intervals_or_the_reason() -> None:
    questions = _class(A, 40, "a") + _class(B, 40, "b")
    drawn = {f"a{k:02d}" for k in range(20)}
    result = unselected_gain(questions, *_answers(questions, drawn), drawn)
    line = describe_unselected(result, truth=0.0)
    assert line.startswith("on the 60 val questions no gate drew (2 of 2 classes, weighing 80 of 80")
    assert "gain +0.0 pts [+0.0, +0.0] (scored truth +0.0)" in line
    assert (
        f"optimism of the val gain on those classes +25.0 pts [{100 * result['optimism_low']:+.1f}," in line
    )
    nothing = unselected_gain(questions, *_answers(questions, set()), drawn=())
    assert (
        describe_unselected(nothing)
        == "the val gain's optimism is not estimable: no gate drew a val question"
    )


def test_the_reason_names_sampling_with_replacement_and_the_reserve() -> None:
    questions = _class(A, 6, "a")
    drawn = [q.question_id for q in questions]
    result = unselected_gain(questions, *_answers(questions, set()), drawn, with_replacement=True)
    assert "above temperature 0 the gates draw with replacement" in result["reason"]
    assert result["reason"].endswith("set train.gate.reserve (e.g. 0.2) to hold val videos out of every gate")


def test_reserved_questions_are_counted_among_the_undrawn() -> None:
    questions = _class(A, 40, "a") + _class(B, 40, "b")
    drawn = {f"a{k:02d}" for k in range(20)}
    reserved = {"a30", "a31", "b00", "zz-not-val"}
    result = unselected_gain(questions, *_answers(questions, drawn), drawn, reserved=reserved)
    assert result["reserved"] == 3
    assert "no gate drew, the reserve's 3 among them (2 of 2 classes" in describe_unselected(result)
