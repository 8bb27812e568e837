"""Comparison rows from predictions: pairing, infra errors, parse errors, clustering, Holm."""

from __future__ import annotations

import math

import pytest

from skillharness.data import Question
from skillharness.eval import GroupRow, PairedTable, compare_groups, holm_adjust, newcombe_paired_interval
from skillharness.infer import wilson
from skillharness.store import Prediction, PredictionStatus

OK, PARSE, INFRA = PredictionStatus.OK, PredictionStatus.PARSE_ERROR, PredictionStatus.INFRA_ERROR


def _question(i: int, task_type: str, duration: str) -> Question:
    return Question(
        video_id=f"{i:03d}",
        duration=duration,
        videoID=f"vid{i:03d}",
        question_id=f"{i:03d}-1",
        task_type=task_type,
        question=f"Question {i}?",
        options=("A. one", "B. two", "C. three", "D. four"),
        answer="A",
    )


def _pred(run: str, q: Question, status: PredictionStatus, right: bool, sample: int = 0) -> Prediction:
    answer = None if status is not OK else ("A" if right else "B")
    # As the agent records it: correct decided when answered (unparsed is wrong), None for infra.
    correct = None if status is PredictionStatus.INFRA_ERROR else (status is OK and right)
    return Prediction(
        run_id=run,
        question_id=q.question_id,
        sample_idx=sample,
        status=status,
        answer=answer,
        correct=correct,
    )


QUESTIONS = [
    _question(i, "OCR Problems" if i < 6 else "Counting Problem", "short" if i % 2 else "long")
    for i in range(10)
]
# (final status, final right, baseline status, baseline right) per question
OUTCOMES = [
    (OK, True, OK, False),
    (OK, True, OK, True),
    (OK, True, PARSE, False),
    (OK, False, OK, False),
    (OK, True, OK, False),
    (INFRA, False, OK, True),  # not paired: the final bundle never answered it
    (OK, False, OK, True),
    (OK, True, OK, True),
    (PARSE, False, OK, False),
    (OK, True, OK, False),
]


def _rows() -> dict[tuple[str, str], GroupRow]:
    final = [_pred("f", q, fs, fr) for q, (fs, fr, _, _) in zip(QUESTIONS, OUTCOMES, strict=True)]
    base = [_pred("b", q, bs, br) for q, (_, _, bs, br) in zip(QUESTIONS, OUTCOMES, strict=True)]
    return {(r.grouping, r.label): r for r in compare_groups(QUESTIONS, final, base, samples=1)}


def test_overall_row_pairs_only_questions_both_answered() -> None:
    row = _rows()[("overall", "all")]
    # Paired: all but #5. Final right {0,1,2,4,7,9}, baseline right {1,6,7}: 4 wins, 1 loss.
    assert row.paired.n_pairs == 9
    assert (row.paired.wins, row.paired.losses) == (4, 1)
    assert row.paired.gain == pytest.approx((6 - 3) / 9)
    assert row.paired.method == "newcombe"
    assert row.paired.p_value == pytest.approx(_hand_two_sided(4, 1))


def _hand_two_sided(wins: int, losses: int) -> float:
    n = wins + losses
    return min(1.0, 2 * sum(math.comb(n, k) for k in range(min(wins, losses) + 1)) / 2**n)


def test_arms_exclude_infra_and_count_parse_errors_as_wrong() -> None:
    row = _rows()[("overall", "all")]
    assert (row.final.n_samples, row.final.correct, row.final.infra_errors, row.final.parse_errors) == (
        9,
        6,
        1,
        1,
    )
    assert (row.baseline.n_samples, row.baseline.correct, row.baseline.parse_errors) == (10, 4, 1)
    assert (row.final.low, row.final.high) == pytest.approx(wilson(6, 9))
    assert row.final.method == "wilson"
    assert row.baseline.parse_rate == pytest.approx(0.1)


def test_task_type_rows_carry_holm_adjusted_p_values() -> None:
    rows = _rows()
    by_task = {label: r for (grouping, label), r in rows.items() if grouping == "task_type"}
    assert set(by_task) == {"OCR Problems", "Counting Problem"}
    expected = holm_adjust({label: r.paired.p_value for label, r in by_task.items()})
    assert {label: r.paired.p_holm for label, r in by_task.items()} == pytest.approx(expected)
    assert rows[("overall", "all")].paired.p_holm is None
    assert [label for (grouping, label) in rows if grouping == "duration"] == ["short", "long"]


def test_single_sample_gain_interval_is_newcombe_of_the_paired_table() -> None:
    row = _rows()[("overall", "all")]
    # Paired questions 0-4, 6-9: final right {0,1,2,4,7,9}, baseline right {1,6,7}.
    table = PairedTable(both=2, only_first=4, only_second=1, neither=2)
    assert table.n == row.paired.n_pairs
    assert (row.paired.low, row.paired.high) == pytest.approx(newcombe_paired_interval(table))
    assert (row.paired.wins, row.paired.losses) == (table.only_first, table.only_second)


def test_several_samples_use_question_means_and_the_bootstrap() -> None:
    qs = QUESTIONS[:4]
    final = [_pred("f", q, OK, right) for q in qs for right in (True, False)]  # each question 1/2
    final = [p.model_copy(update={"sample_idx": i % 2}) for i, p in enumerate(final)]
    base = [_pred("b", q, OK, i == 0, s) for i, q in enumerate(qs) for s in range(2)]  # q0: 1, others 0
    rows = {(r.grouping, r.label): r for r in compare_groups(qs, final, base, samples=2)}
    row = rows[("overall", "all")]
    assert row.final.method == row.paired.method == "bootstrap"
    assert row.final.accuracy == pytest.approx(0.5)
    assert row.baseline.accuracy == pytest.approx(0.25)
    # Question differences: -0.5, +0.5, +0.5, +0.5 -> a sign test with 3 wins and 1 loss.
    assert row.paired.gain == pytest.approx(0.25)
    assert (row.paired.wins, row.paired.losses) == (3, 1)
    assert row.paired.low <= 0.25 <= row.paired.high
    assert (row.final.low, row.final.high) == (0.5, 0.5)  # every question mean is 1/2


def test_item5_holdout_rows_are_by_video_with_the_per_question_intervals_beside() -> None:
    # 12 videos x 3 questions; within a video the three answers agree (one hard or easy video).
    questions = [
        q.model_copy(update={"video_id": f"v{i // 3:02d}", "question_id": f"{i:03d}-1"})
        for i, q in enumerate(_question(i, "OCR Problems", "short") for i in range(36))
    ]
    final_right = [i // 3 < 9 for i in range(36)]  # 9 of 12 videos right
    base_right = [i // 3 < 4 for i in range(36)]  # 4 of 12 videos right
    final = [_pred("f", q, OK, r) for q, r in zip(questions, final_right, strict=True)]
    base = [_pred("b", q, OK, r) for q, r in zip(questions, base_right, strict=True)]
    overall = compare_groups(questions, final, base, samples=1)[0]
    arm, paired = overall.final, overall.paired
    assert (arm.method, arm.per_question_method) == ("cluster_bootstrap", "wilson")
    assert (arm.per_question_low, arm.per_question_high) == pytest.approx(wilson(27, 36))
    assert arm.low < arm.per_question_low
    assert arm.high >= arm.per_question_high
    assert arm.design_effect == pytest.approx(3.0, rel=0.1)
    assert arm.n_videos == paired.n_videos == 12
    assert (paired.method, paired.per_question_method) == ("cluster_bootstrap", "newcombe")
    per_question = newcombe_paired_interval(PairedTable(both=12, only_first=15, only_second=0, neither=9))
    assert (paired.per_question_low, paired.per_question_high) == pytest.approx(per_question)
    assert paired.high - paired.low > per_question[1] - per_question[0]
    assert (paired.wins, paired.losses) == (15, 0)
    assert paired.p_per_question == pytest.approx(binom_two_sided(15))
    assert paired.p_value == pytest.approx(binom_two_sided(5))  # 5 videos better, not 15 questions


def binom_two_sided(k: int) -> float:
    """Exact two-sided sign test of k wins and no loss."""
    return min(1.0, 2 * 0.5**k)
