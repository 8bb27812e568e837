"""The four scorers read the same answers differently; the export holds the raw responses."""

from __future__ import annotations

import pytest

from skillharness.agent import PredictionStatus, StepRole, TraceStep
from skillharness.data.questions import Question
from skillharness.infer.export import official_results
from skillharness.infer.scoring import Parser, ScoredAnswer, parser_gap, raw_answers, score_answers
from upstream_oracles import official_read


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
        _answer("002-2", "Answer: B", "B"),  # every current reference strips or ranks "Answer:"
        _answer("003-1", "", None, PredictionStatus.INFRA_ERROR),  # each reference's failure rule
        _answer("004-1", "<think>maybe A</think>B", "B"),  # only lmms-eval strips the reasoning
    ]
    scores = score_answers(answers)
    ours, lmms, vlm, official = (scores.overall(p) for p in Parser)
    assert (ours.n, ours.correct, ours.parse_errors, ours.infra_errors) == (5, 4, 1, 1)
    # lmms-eval and VLMEvalKit keep the failed request in the denominator, read as D and A.
    assert (lmms.n, lmms.correct, lmms.parse_errors) == (6, 3, 2)
    assert (vlm.n, vlm.correct, vlm.parse_errors) == (6, 2, 2)
    assert (official.n, official.correct, official.dropped) == (3, 2, 3)
    assert official.accuracy == pytest.approx(2 / 3)
    assert [c.label for c in scores.tables[Parser.OURS]["domain"]] == ["Knowledge"]
    assert [c.label for c in scores.tables[Parser.OURS]["sub_category"]] == ["Law"]


def test_item6_failed_requests_score_as_each_reference_scores_them() -> None:
    def failed(qid: str, answer: str) -> ScoredAnswer:
        return ScoredAnswer(_q(qid, answer), 0, PredictionStatus.INFRA_ERROR, None, "", "Connection error.")

    # lmms-eval v0.7.2 scores "[LMMS_EVAL_REQUEST_FAILED after 5 retries] Connection error.",
    # whose "FAILED " its ranked extractor reads as D; VLMEvalKit scores its fail_msg, read as A
    # (from "API"); the official script drops the empty response; ours leaves it out.
    on_d, on_a = failed("001-1", "D"), failed("002-1", "A")
    assert (on_d.reference_letter(Parser.LMMS_EVAL), on_d.reference_letter(Parser.VLMEVALKIT)) == ("D", "A")
    assert on_d.reference_letter(Parser.OFFICIAL) == ""
    scores = score_answers([on_d, on_a])
    counts = {p: (scores.overall(p).n, scores.overall(p).correct) for p in Parser}
    assert counts == {
        Parser.OURS: (0, 0),
        Parser.LMMS_EVAL: (2, 1),
        Parser.VLMEVALKIT: (2, 1),
        Parser.OFFICIAL: (0, 0),
    }
    # VLMEvalKit's API wrapper also turns an empty reply into its fail_msg.
    empty = ScoredAnswer(_q("003-1", "A"), 0, PredictionStatus.PARSE_ERROR, None, "")
    assert (empty.reference_letter(Parser.VLMEVALKIT), empty.reference_letter(Parser.LMMS_EVAL)) == ("A", "")
    # It strips the reply first: one of only spaces is empty, and scored as its fail_msg too.
    spaces = ScoredAnswer(_q("004-1", "A"), 0, PredictionStatus.PARSE_ERROR, None, "   ")
    assert spaces.reference_letter(Parser.VLMEVALKIT) == "A"
    assert spaces.reference_letter(Parser.LMMS_EVAL) == ""
    # A reply with text keeps it: only an empty one is replaced.
    assert (
        ScoredAnswer(_q("005-1", "B"), 0, PredictionStatus.OK, "B", "  B  ").reference_letter(
            Parser.VLMEVALKIT
        )
        == "B"
    )


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
    assert (first["duration"], first["domain"], first["sub_category"]) == (
        "short",
        "Knowledge",
        "Law",
    )
    assert [q["question_id"] for q in first["questions"]] == ["001-1", "001-2"]
    assert [q["response"] for q in first["questions"]] == ["The best answer is B", "dog"]
    assert first["questions"][0]["options"] == ["A. cat", "B. dog", "C. eel", "D. fox"]
    assert first["missing"] is False
    assert results[1]["missing"] is True  # its only question never got a final answer
    assert results[1]["questions"][0]["response"] == ""


# The keys of MME-Benchmarks/Video-MME evaluation/output_test_template.json at e9f6a2d.
TEMPLATE_VIDEO_KEYS = {"video_id", "duration", "domain", "sub_category", "questions"}
TEMPLATE_QUESTION_KEYS = {"question_id", "task_type", "question", "options", "answer", "response"}


def test_item4_export_has_the_current_template_keys_and_the_linked_script_reads_it() -> None:
    answers = [
        _answer("001-1", "Answer: B", "B"),  # the linked script strips "Answer:"
        _answer("001-2", "The correct option: B", "B"),  # and "The correct option"
        _answer("002-1", "dog", "B"),  # no capital A-D: not counted
        _answer("003-1", "A", "A"),
        _answer("004-1", "", None, PredictionStatus.INFRA_ERROR),
    ]
    results = official_results(answers)
    for video in results:
        assert set(video) == TEMPLATE_VIDEO_KEYS | {"missing"}  # missing: read with skip_missing
        for question in video["questions"]:
            assert set(question) == TEMPLATE_QUESTION_KEYS
    correct, answered = official_read(results, ["short"], skip_missing=True)
    official = score_answers(answers).overall(Parser.OFFICIAL)
    assert (official.correct, official.n) == (correct, answered) == (2, 3)


def test_item4_the_linked_script_fails_on_the_old_layout() -> None:
    old = [{"video_id": "001", "duration_category": "short", "missing": False, "questions": []}]
    with pytest.raises(KeyError, match="duration"):
        official_read(old, ["short"], skip_missing=True)
