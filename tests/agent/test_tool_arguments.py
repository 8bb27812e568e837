"""Tool argument abuse becomes a tool-error message, never an exception or an over-budget decode."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_support import ScriptedModel, question, tool_reply

from skillharness.agent import Agent, PredictionStatus
from skillharness.agent.config import AgentConfig
from skillharness.agent.tools import ToolBox
from skillharness.agent.video import LocalVideos
from skillharness.data.questions import Question
from skillharness.llm.types import ToolCall
from skillharness.skills.bundle import Bundle
from skillharness.store import RunLog
from skillharness.video.types import Frame, FrameSet

HUGE = "9" * 400  # a JSON integer too large for a float
ENORMOUS = "9" * 5000  # past Python's integer-string conversion limit


class CountingFrames:
    """Frame source collaborator that records every request (the unit under test is the ToolBox)."""

    def __init__(self) -> None:
        self.requests: list[tuple[float, float, int]] = []

    async def duration_s(self, question: Question) -> float:
        return 10.0

    async def uniform(self, question: Question, count: int) -> FrameSet:
        raise AssertionError("not used")

    async def between(self, question: Question, start_s: float, end_s: float, count: int) -> FrameSet:
        self.requests.append((start_s, end_s, count))
        times = tuple(start_s + (i + 0.5) * (end_s - start_s) / count for i in range(count))
        frames = tuple(Frame(t, t, b"\xff\xd8jpeg", 8, 8) for t in times)
        return FrameSet(Path("v.mp4"), 10.0, times, frames)


class NoSubtitles:
    async def lines_at(self, question: Question, timestamps: object) -> tuple[str, ...]:
        return ()

    async def lines_between(self, question: Question, start_s: float, end_s: float) -> tuple[str, ...]:
        return ()


def _toolbox(frames: CountingFrames, used: int = 0) -> ToolBox:
    return ToolBox(
        question(),
        config=AgentConfig(max_frames=12, max_frames_per_call=5, initial_frames=4),
        offered=("get_frames", "get_subtitles", "submit_answer"),
        duration_s=10.0,
        frames=frames,
        subtitles=NoSubtitles(),
        frames_used=used,
    )


# (arguments, whether get_subtitles may accept them: it takes no count)
BAD_ARGUMENTS = [
    (f'{{"start_s": 0, "end_s": 5, "count": {HUGE}}}', True),
    (f'{{"start_s": 0, "end_s": 5, "count": {ENORMOUS}}}', False),
    (f'{{"start_s": 0, "end_s": {HUGE}, "count": 2}}', False),
    (f'{{"start_s": -{HUGE}, "end_s": 5, "count": 2}}', False),
    ('{"start_s": 0, "end_s": 5, "count": -1}', True),
    ('{"start_s": 0, "end_s": 5, "count": NaN}', True),
    ('{"start_s": 0, "end_s": 5, "count": Infinity}', True),
    ('{"start_s": 0, "end_s": 5, "count": 2.5}', True),
    ('{"start_s": 0, "end_s": 5, "count": true}', True),
    ('{"start_s": 0, "end_s": 5, "count": "many"}', True),
    ('{"start_s": 0, "end_s": 5}', True),
    ('{"start_s": 6, "end_s": 2, "count": 2}', False),
    ('{"start_s": 11, "end_s": 20, "count": 2}', False),
    ('{"start_s": "NaN", "end_s": 5, "count": 2}', False),
    ('{"end_s": 5, "count": 2}', False),
    ("[" * 100_000 + "]" * 100_000, False),
    ("not json", False),
    ("null", False),
]


@pytest.mark.parametrize(("arguments", "subtitles_ok"), BAD_ARGUMENTS)
@pytest.mark.parametrize("tool", ["get_frames", "get_subtitles"])
async def test_bad_tool_arguments_become_tool_errors(arguments: str, subtitles_ok: bool, tool: str) -> None:
    frames = CountingFrames()
    outcome = await _toolbox(frames).run(ToolCall(id="c1", name=tool, arguments=arguments))
    if tool == "get_subtitles" and subtitles_ok:
        assert outcome.error is None
        return
    assert outcome.error
    assert outcome.text.startswith("error:")
    assert frames.requests == []


async def test_frame_budget_holds_over_many_calls() -> None:
    frames = CountingFrames()
    box = _toolbox(frames, used=4)
    call = '{"start_s": 0, "end_s": 10, "count": 1000000}'
    texts = [(await box.run(ToolCall(id=f"c{i}", name="get_frames", arguments=call))).text for i in range(4)]
    assert [count for _, _, count in frames.requests] == [5, 3]  # per-call cap, then what is left
    assert box.frames_used == 12
    assert "budget exhausted" in texts[2]
    assert "budget exhausted" in texts[3]


@pytest.mark.parametrize("arguments", ["[" * 100_000 + "]" * 100_000, f'{{"answer": {ENORMOUS}}}'])
async def test_p0_4_an_absurd_submit_answer_is_a_parse_error_not_an_infra_error(
    arguments: str, default_bundle: Bundle, videos: LocalVideos, run_log: RunLog
) -> None:
    model = ScriptedModel({"q1": [tool_reply("submit_answer", arguments)]})
    agent = Agent(model, "sim-vl", default_bundle, videos, videos, AgentConfig(initial_frames=2, max_steps=2))
    prediction = await agent.answer(question("q1"), run_id="run-1", sample_idx=0, sink=run_log)
    assert prediction.status is PredictionStatus.PARSE_ERROR
