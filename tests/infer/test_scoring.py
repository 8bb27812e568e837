"""The three scorers read the same answers differently; the export holds the raw responses."""

from __future__ import annotations

import pytest

from skillharness.agent import PredictionStatus, StepRole, TraceStep
from skillharness.data.questions import Question
from skillharness.infer.export import official_results
from skillharness.infer.scoring import Parser, ScoredAnswer, parser_gap, raw_answers, score_answers


def _q(qid: str, answer: str = "B", domain: str = "Knowledge", sub: str = "Law") -> Question:
    return Question(
        video_id=qid.split("-")[0],
        duration="short",
        domain=domain,
        sub_category=sub,
        videoID=f"vid{qid}",
        question_id=qid,
        task_type="OCR Problems",
        question="What is written?",
        options=("A. cat", "B. dog", "C. eel", "D. fox"),
        answer=answer,
    )


def _answer(
    qid: str, raw: str, ours: str | None, status: PredictionStatus = PredictionStatus.OK
) -> ScoredAnswer:
    return ScoredAnswer(_q(qid), 0, status, ours, raw)


def test_each_scorer_reads_the_same_answers_its_own_way() -> None:
    answers = [
        _answer("001-1", "B", "B"),  # right for all
        _answer("001-2", "dog", "B"),  # ours reads the option text; no capital A-D: dropped officially
        _answer("002-1", "I really cannot tell what it says.", None, PredictionStatus.PARSE_ERROR),
        _answer("002-2", "Answer: B", "B"),  # the reference reads the "A" of "Answer"
        _answer("003-1", "", None, PredictionStatus.INFRA_ERROR),  # no answer under any scorer
    ]
    scores = score_answers(answers)
    ours, lmms, official = (scores.overall(p) for p in Parser)
    assert (ours.n, ours.correct, ours.parse_errors, ours.infra_errors) == (4, 3, 1, 1)
    assert (lmms.n, lmms.correct, lmms.parse_errors) == (4, 1, 2)
    assert (official.n, official.correct, official.dropped) == (2, 1, 2)
    assert official.accuracy == pytest.approx(0.5)
    assert [c.label for c in scores.tables[Parser.OURS]["domain"]] == ["Knowledge"]
    assert [c.label for c in scores.tables[Parser.OURS]["sub_category"]] == ["Law"]


def test_a_parser_gap_is_named_only_when_the_intervals_part() -> None:
    same = score_answers([_answer(f"{i:03d}-1", "B", "B") for i in range(40)])
    assert parser_gap(same) is None
    # ours reads every option text; the reference extractor finds no capital in any of them
    apart = score_answers([_answer(f"{i:03d}-1", "dog", "B") for i in range(40)])
    message = parser_gap(apart)
    assert message is not None
    assert "the parser, not the model" in message


def _step(
    qid: str, idx: int, role: StepRole, content: str = "", tool: str | None = None, args: str | None = None
) -> TraceStep:
    return TraceStep(
        run_id="r",
        question_id=qid,
        sample_idx=0,
        step_idx=idx,
        role=role,
        content=content,
        tool_name=tool,
        tool_arguments=args,
    )


def test_raw_answers_are_the_last_text_or_submitted_value() -> None:
    steps = [
        _step("q1", 0, StepRole.USER, "question"),
        _step("q1", 1, StepRole.ASSISTANT, "The best answer is C"),
        _step("q2", 0, StepRole.USER, "question"),
        _step("q2", 1, StepRole.ASSISTANT, "", tool="submit_answer"),
        _step("q2", 2, StepRole.TOOL, "answer B", tool="submit_answer", args='{"answer": ["B"]}'),
    ]
    assert raw_answers(steps) == {("q1", 0): "The best answer is C", ("q2", 0): '["B"]'}


def test_official_export_groups_by_video_and_keeps_raw_responses() -> None:
    answers = [
        _answer("001-2", "dog", "B"),
        _answer("001-1", "The best answer is B", "B"),
        _answer("002-1", "B", None, PredictionStatus.INFRA_ERROR),
    ]
    results = official_results(answers)
    assert [v["video_id"] for v in results] == ["001", "002"]
    first = results[0]
    assert (first["duration_category"], first["video_category"], first["video_subcategory"]) == (
        "short",
        "Knowledge",
        "Law",
    )
    assert [q["question_id"] for q in first["questions"]] == ["001-1", "001-2"]
    assert [q["response"] for q in first["questions"]] == ["The best answer is B", "dog"]
    assert first["questions"][0]["choices"] == ["A. cat", "B. dog", "C. eel", "D. fox"]
    assert first["missing"] is False
    assert results[1]["missing"] is True  # its only question never got a final answer
    assert results[1]["questions"][0]["response"] == ""
