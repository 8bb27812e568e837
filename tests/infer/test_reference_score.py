"""infer's lmms-eval score of a benchmark with its own task: the task's reading, then the
adapter's aggregation rule, each number with its interval."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillharness.agent import PredictionStatus
from skillharness.data import Question, RuleInput
from skillharness.infer import reference_score, wilson
from skillharness.infer.scoring import Parser, ScoredAnswer, score_answers


def _q(
    video: str, k: int, task: str = "Action Sequence", options: int = 4, answer: str = "C", **extra
) -> Question:
    return Question(
        video_id=video,
        duration="all",
        videoID=video,
        question_id=f"{video}-{k}",
        task_type=task,
        question=f"What happens {k}?",
        options=tuple(f"{'ABCDEFGH'[i]}. thing {i}" for i in range(options)),
        answer=answer,
        **extra,
    )


def _answer(question: Question, raw: str, status: PredictionStatus = PredictionStatus.OK) -> ScoredAnswer:
    return ScoredAnswer(question, 0, status, None, raw, "Connection error." if raw == "" else "")


def test_the_lmms_eval_column_reads_with_the_benchmarks_own_task() -> None:
    # MVBench's mcq_acc lower-cases the reply and takes the first standalone a-e: the article "a"
    # reads A. Video-MME's extractor (the column without a task) reads the bracketed C.
    answers = [_answer(_q("v1", 1), "It is a dog (C)")]
    assert score_answers(answers).overall(Parser.LMMS_EVAL).correct == 1
    assert score_answers(answers, benchmark="mvbench").overall(Parser.LMMS_EVAL).correct == 0
    assert score_answers(answers).reference is None  # Video-MME: its accuracy is the column itself


def test_mvbench_counts_only_replies_that_are_not_empty() -> None:
    # Right, right, wrong, empty, a reply that is only reasoning (empty once the tags are gone).
    replies = ["(C) thing 2", "C", "A", " ", "<think>C</think>"]
    answers = [_answer(_q(f"v{i}", 1), r) for i, r in enumerate(replies)]
    scores = score_answers(answers, benchmark="mvbench")
    ref = scores.reference
    assert ref is not None
    overall = ref.rows[0]
    assert (overall.label, overall.n) == ("all", 3)
    assert overall.value == pytest.approx(2 / 3)
    assert ref.shown(overall.value) == "66.7"  # mvbench_accuracy is 0-100
    assert scores.overall(Parser.LMMS_EVAL).accuracy == pytest.approx(2 / 5)  # the column: all in
    assert overall.low <= overall.value <= overall.high
    assert (ref.metric, ref.rule, ref.reported) == ("mvbench_accuracy", "answered_accuracy", "task_type")


def test_a_failed_request_is_a_reply_that_counts_as_upstream_scores_it() -> None:
    failed = _answer(_q("v9", 1), "", PredictionStatus.INFRA_ERROR)  # its failure text is not empty
    ref = score_answers([failed, _answer(_q("v1", 1), "C")], benchmark="mvbench").reference
    assert ref is not None
    assert ref.rows[0].n == 2


def test_videomme_v2_group_score_beside_its_accuracy() -> None:
    """Two groups. 001 (relevance) answers right, wrong, right, right: 9/16. 002 (logic chain)
    answers right, right, wrong, right: k = 2, 4/16. Group score (9 + 4) / 32 = 40.625 on the
    x100 scale; accuracy 6 / 8."""
    plan = {"001": ("relevance", None, "CACC"), "002": ("logic", "[1, 2, 3, 4]", "CCAC")}
    answers = [
        _answer(_q(video, k, "Temporal Reasoning", 8, group_type=kind, group_structure=shape), replies[k - 1])
        for video, (kind, shape, replies) in plan.items()
        for k in (1, 2, 3, 4)
    ]
    scores = score_answers(answers, benchmark="videomme_v2")
    ref = scores.reference
    assert ref is not None
    assert (ref.metric, ref.unit, ref.method) == ("videomme_v2_overall_score", "groups", "video bootstrap")
    assert ref.shown(ref.rows[0].value) == "40.6"
    assert ref.rows[0].n == 2
    assert [r.label for r in ref.rows] == ["all", "Temporal Reasoning"]
    assert scores.overall(Parser.LMMS_EVAL).accuracy == pytest.approx(6 / 8)


def test_a_plain_accuracy_keeps_the_wilson_interval_of_its_column() -> None:
    answers = [_answer(_q(f"v{i}", 1, options=5), "C" if i % 3 else "B") for i in range(30)]
    scores = score_answers(answers, benchmark="egoschema")
    ref = scores.reference
    assert ref is not None
    assert ref.method == "Wilson"
    cell = scores.overall(Parser.LMMS_EVAL)
    assert (ref.rows[0].low, ref.rows[0].high) == pytest.approx(wilson(cell.correct, cell.n))
    assert ref.shown(ref.rows[0].value) == f"{cell.correct / cell.n:.3f}"  # EgoSchema's score is 0-1


def test_longvideobench_rounds_as_upstream() -> None:
    answers = [_answer(_q(f"v{i}", 1, options=5), "C" if i % 3 else "B") for i in range(7)]
    ref = score_answers(answers, benchmark="longvideobench").reference
    assert ref is not None
    assert ref.shown(ref.rows[0].value) == f"{4 / 7:.5f}"


def _items(rights: list[list[bool]], rule_task: str = "T") -> list[RuleInput]:
    return [
        RuleInput(_q(f"v{video}", k, rule_task), 0, right)
        for video, answers in enumerate(rights)
        for k, right in enumerate(answers, start=1)
    ]


def test_the_bootstrap_resamples_videos_not_questions() -> None:
    # Ten videos of four questions each, all right or all wrong together: by video there are ten
    # independent units, not forty, and the interval is wider than if each question stood alone.
    together = [[i % 2 == 0] * 4 for i in range(10)]
    alone = [[i % 2 == 0] for i in range(10) for _ in range(4)]
    kw = {"task": "t", "metric": "m", "rule": "answered_accuracy"}
    clustered = reference_score(_items(together), **kw).rows[0]
    flat = reference_score(_items(alone), **kw).rows[0]
    assert clustered.value == flat.value == pytest.approx(0.5)
    assert clustered.high - clustered.low > flat.high - flat.low


def test_the_macro_bootstrap_keeps_every_task_type_in_every_resample() -> None:
    # Type a always right, b always wrong: every resample that keeps both types gives 0.5
    # exactly; a resample that lost one would give 0 or 1.
    items = [RuleInput(_q(f"a{i}", 1, "a"), 0, True) for i in range(3)]
    items += [RuleInput(_q(f"b{i}", 1, "b"), 0, False) for i in range(3)]
    row = reference_score(
        items, task="t", metric="m", rule="macro_task_accuracy", task_types=("a", "b")
    ).rows[0]
    assert (row.value, row.low, row.high) == (0.5, 0.5, 0.5)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(st.booleans(), min_size=1, max_size=4), min_size=1, max_size=15))
def test_bootstrap_intervals_are_seeded_and_inside_the_unit_range(rights: list[list[bool]]) -> None:
    kw = {"task": "t", "metric": "m", "rule": "answered_accuracy"}
    first, again = (
        reference_score(_items(rights), **kw).rows[0],
        reference_score(_items(rights), **kw).rows[0],
    )
    assert (first.low, first.high) == (again.low, again.high)
    assert 0.0 <= first.low <= first.high <= 1.0
