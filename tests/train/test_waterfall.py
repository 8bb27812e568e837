"""The deterministic waterfall steps (C1, C2), the judge's reply mapping, and the trace summary."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from skillharness.agent import Prediction, PredictionStatus, StepRole, TraceStep
from skillharness.skills import EditTarget
from skillharness.train.diagnose.trace_summary import summarize_trace, trace_spans, video_duration_s
from skillharness.train.diagnose.waterfall import (
    STEP_BUDGET_EXHAUSTED,
    c1_from_prediction,
    c2_from_trace,
    judge_finding,
)
from skillharness.train.roles.replies import JudgeReply, parse_reply
from skillharness.train.state.records import Cause

TOOLS = ("get_frames", "get_subtitles", "submit_answer")


def _prediction(status: PredictionStatus = PredictionStatus.OK, **fields: object) -> Prediction:
    values: dict[str, object] = {
        "run_id": "r",
        "question_id": "q1",
        "task_type": "OCR Problems",
        "status": status,
        "answer": "B" if status is PredictionStatus.OK else None,
        "correct": None if status is PredictionStatus.INFRA_ERROR else False,
    }
    return Prediction.model_validate(values | fields)


def _step(index: int, role: StepRole, **fields: object) -> TraceStep:
    return TraceStep.model_validate(
        {"run_id": "r", "question_id": "q1", "step_idx": index, "role": role} | fields
    )


def _user(**fields: object) -> TraceStep:
    return _step(0, StepRole.USER, content="Question: ...\nVideo duration: 95.0s.\n", **fields)


def _tool(index: int, name: str, args: dict[str, object] | str, **fields: object) -> TraceStep:
    raw = args if isinstance(args, str) else json.dumps(args)
    return _step(index, StepRole.TOOL, tool_name=name, tool_arguments=raw, **fields)


def _frames(index: int, start: float = 10.0, **fields: object) -> TraceStep:
    return _tool(index, "get_frames", {"start_s": start, "end_s": start + 10, "count": 4}, **fields)


def test_c1_infra_is_excluded_and_never_passes_on() -> None:
    finding = c1_from_prediction(_prediction(PredictionStatus.INFRA_ERROR, error_class="DataError"), ())
    assert finding is not None
    assert finding.cause is Cause.INFRA
    assert finding.target is None


def test_c1_format_targets_submit_answer_when_called_else_the_system_prompt() -> None:
    parse = _prediction(
        PredictionStatus.PARSE_ERROR, error_class="AnswerParseError", error_message="two letters"
    )
    called = [_user(), _tool(1, "submit_answer", {"answer": "B, D"}, error="two letters")]
    via_tool = c1_from_prediction(parse, called)
    text_only = c1_from_prediction(parse, [_user(), _step(1, StepRole.ASSISTANT, content="I think B")])
    assert via_tool is not None
    assert text_only is not None
    assert (via_tool.cause, via_tool.target) == (Cause.FORMAT, EditTarget.tool("submit_answer"))
    assert (text_only.cause, text_only.target) == (Cause.FORMAT, EditTarget.system())


def test_c1_leaves_ok_answers_and_the_step_budget_to_later_steps() -> None:
    assert c1_from_prediction(_prediction(), [_user()]) is None
    budget = _prediction(PredictionStatus.PARSE_ERROR, error_class=STEP_BUDGET_EXHAUSTED)
    assert c1_from_prediction(budget, [_user()]) is None


def test_c2_step_budget_targets_the_tool_called_most() -> None:
    budget = _prediction(PredictionStatus.PARSE_ERROR, error_class=STEP_BUDGET_EXHAUSTED)
    trace = [
        _user(),
        _tool(1, "get_subtitles", {"start_s": 0, "end_s": 5}),
        _frames(2, 1),
        _frames(3, 2),
        _frames(4, 3),
    ]
    finding = c2_from_trace(budget, trace, TOOLS)
    assert finding is not None
    assert (finding.cause, finding.target) == (Cause.TOOL, EditTarget.tool("get_frames"))
    no_tools = c2_from_trace(budget, [_user()], TOOLS)
    assert no_tools is not None
    assert no_tools.target == EditTarget.system()


def test_c2_refused_and_repeated_calls_are_tool_evidence() -> None:
    refused = [_user(), _frames(1), _frames(2, 500.0, error="empty time range [500.0s, 95.0s]")]
    repeated = [_user(), _frames(1), _tool(2, "get_subtitles", {"end_s": 9, "start_s": 1}), _frames(3)]
    unknown = [_user(), _tool(1, "zoom", {"x": 1}, error="unknown or unavailable tool 'zoom'")]
    for trace, target in (
        (refused, EditTarget.tool("get_frames")),
        (repeated, EditTarget.tool("get_frames")),
        (unknown, EditTarget.system()),
    ):
        finding = c2_from_trace(_prediction(), trace, TOOLS)
        assert finding is not None
        assert (finding.cause, finding.target) == (Cause.TOOL, target)
    clean = [_user(), _frames(1), _frames(2, 30.0), _tool(3, "submit_answer", {"answer": "B"})]
    assert c2_from_trace(_prediction(), clean, TOOLS) is None


def test_c2_degraded_frames_and_failed_subtitle_reads_are_excluded() -> None:
    cases = [
        (_prediction(degraded=True), [_user(degraded=True)]),
        (_prediction(), [_user(), _frames(1, degraded=True, error="frames failed to decode at 12.0s")]),
        (
            _prediction(),
            [_user(), _tool(1, "get_subtitles", {"start_s": 0, "end_s": 5}, error="DataError: bad srt")],
        ),
    ]
    for prediction, trace in cases:
        finding = c2_from_trace(prediction, trace, TOOLS)
        assert finding is not None
        assert (finding.cause, finding.target) == (Cause.DEGRADED, None)


def test_judge_targets() -> None:
    trace = [_user(), _tool(1, "get_subtitles", {"start_s": 0, "end_s": 5})]

    def target(verdict: str, where: str) -> EditTarget | None:
        reply = JudgeReply(verdict=verdict, target=where, reason="r")  # type: ignore[arg-type]
        return judge_finding(reply, error=None, task_type="OCR Problems", trace=trace, tools=TOOLS).target

    assert target("defect", "skill") == EditTarget.skill("OCR Problems")
    assert target("defect", "system") == EditTarget.system()
    assert target("defect", "tools") == EditTarget.tool("get_subtitles")
    assert target("lapse", "skill") is None
    assert target("uncertain", "skill") is None
    no_tool = judge_finding(
        JudgeReply(verdict="defect", target="tools", reason="r"),
        error=None,
        task_type="X",
        trace=[],
        tools=TOOLS,
    )
    assert no_tool.target == EditTarget.system()


def test_a_failed_judge_call_is_judge_failed() -> None:
    finding = judge_finding(None, error="TransientLLMError: 503", task_type="X", trace=[], tools=TOOLS)
    assert (finding.cause, finding.target) == (Cause.JUDGE_FAILED, None)
    assert "503" in finding.reason


_SHAPES = st.one_of(
    st.text(max_size=300),
    st.just(""),
    st.just('{"verdict": "defective", "target": "skill", "reason": "x"}'),  # wrong enum value
    st.just('{"verdict": "defect", "target": "skill", "reason": "x", "extra": 1}'),  # extra key
    st.just('{"verdict": "defect", "target": "prompt", "reason": "x"}'),
    st.just('{"verdict": "defect"}'),
    st.just("[1, 2, 3]"),
    st.just("```json\n{not json}\n```"),
    st.dictionaries(
        st.sampled_from(["verdict", "target", "reason", "other"]),
        st.one_of(
            st.none(), st.integers(), st.text(max_size=20), st.sampled_from(["defect", "lapse", "skill"])
        ),
    ).map(json.dumps),
)


@settings(max_examples=300, deadline=None)
@given(raw=_SHAPES)
def test_any_judge_reply_gives_a_verdict_or_judge_failed_never_an_exception(raw: str) -> None:
    reply = parse_reply(JudgeReply, raw)
    finding = judge_finding(reply, error=None, task_type="OCR Problems", trace=[], tools=TOOLS)
    if isinstance(reply, JudgeReply):
        assert finding.cause.value == reply.verdict
    else:
        assert finding.cause is Cause.JUDGE_FAILED
        assert finding.target is None


def test_bad_shapes_are_judge_failed() -> None:
    for raw in (
        "",
        "not json at all",
        '{"verdict": "maybe", "target": "skill", "reason": "x"}',
        '{"verdict": "defect", "target": "skill", "reason": "x", "confidence": 0.9}',
    ):
        finding = judge_finding(
            parse_reply(JudgeReply, raw), error=None, task_type="X", trace=[], tools=TOOLS
        )
        assert finding.cause is Cause.JUDGE_FAILED, raw


def test_trace_summary_is_one_line_per_step_and_text_only() -> None:
    trace = [
        _user(frames_shown=(1.0, 2.0), subtitles_shown=("hello",)),
        _step(1, StepRole.ASSISTANT, content="Let me look\ncloser", tool_name="get_frames"),
        _frames(2, 40.0, frames_shown=(40.0, 50.0), content="2 frames from 40.0s-50.0s"),
        _tool(3, "submit_answer", {"answer": "B"}, content="answer B"),
    ]
    summary = summarize_trace(trace)
    lines = summary.splitlines()
    assert len(lines) == len(trace)
    assert lines[0] == "1. question shown (video 95.0s, 2 frames, 1 subtitle lines)"
    assert lines[1] == "2. model: Let me look / closer -> calls get_frames"
    assert lines[2] == "3. get_frames(count=4, end_s=50.0, start_s=40.0) -> 2 frames from 40.0s-50.0s"
    assert lines[3] == '4. submit_answer(answer="B") -> answer B'
    assert summarize_trace([]) == "(no steps were recorded)"
    assert video_duration_s(trace) == 95.0
    spans = trace_spans(trace)
    assert [(s.tool, s.start_s, s.end_s, s.detail) for s in spans] == [("get_frames", 40.0, 50.0, "2 frames")]
