"""The harness's own agent loop and scoring, driven in-process against the simulated model.

Nothing here re-implements scoring: each episode runs :class:`skillharness.agent.Agent` (the real
loop: first message, tool turns, step limit, ``normalize_answer``), its requests become the exact
JSON bodies the HTTP client sends (:func:`skillharness.llm.client.request_body`), the simulator's
role is chosen by the harness's own ``role_of_request`` and answers through
:meth:`SimModel.respond`. Only the transport (SSE over a socket) and the video decoding are
skipped: frames are a few placeholder bytes the simulator never looks at, so thousands of
episodes take seconds, not minutes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skillharness.agent import Agent, AgentConfig, Prediction, TraceStep
from skillharness.data.questions import Question
from skillharness.llm import role_of_request
from skillharness.llm.client import request_body
from skillharness.llm.types import ChatRequest, ChatResponse, ToolCall, Usage
from skillharness.sim.model import SimModel
from skillharness.skills import Bundle
from skillharness.video.types import Frame, FrameSet

_SECONDS = {"short": 90.0, "medium": 600.0, "long": 2400.0}
_PIXELS = b"\xff\xd8placeholder\xff\xd9"  # the simulator never decodes an image


@dataclass
class InProcessSim:
    """A :class:`ChatModel` that hands the client's request body to the simulated model."""

    model: SimModel
    calls: int = 0

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        body = request_body(request)
        reply = self.model.respond(body, role_of_request(body))
        calls = tuple(ToolCall(id=c.id, name=c.name, arguments=c.arguments) for c in reply.tool_calls)
        return ChatResponse(
            content=reply.content,
            tool_calls=calls,
            finish_reason=reply.finish_reason,
            usage=Usage(prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens),
        )


def _frames(question: Question, times: Sequence[float]) -> FrameSet:
    frames = tuple(Frame(t, t, _PIXELS, 4, 4) for t in times)
    return FrameSet(Path(f"{question.videoID}.mp4"), _SECONDS[question.duration], tuple(times), frames)


class PlaceholderFrames:
    """Frames at the times asked, of a nominal duration per Video-MME duration label."""

    async def duration_s(self, question: Question) -> float:
        return _SECONDS[question.duration]

    async def uniform(self, question: Question, count: int) -> FrameSet:
        length = _SECONDS[question.duration]
        return _frames(question, [length * (i + 0.5) / count for i in range(count)])

    async def between(self, question: Question, start_s: float, end_s: float, count: int) -> FrameSet:
        step = (end_s - start_s) / count
        return _frames(question, [start_s + step * (i + 0.5) for i in range(count)])


class OneLineSubtitles:
    """One subtitle line wherever asked (words no insight or question holds)."""

    async def lines_at(self, question: Question, timestamps: Sequence[float]) -> tuple[str, ...]:
        return tuple(f"[{t:.1f}s] the music plays on" for t in timestamps[:1])

    async def lines_between(self, question: Question, start_s: float, end_s: float) -> tuple[str, ...]:
        return (f"[{start_s:.1f}s] the music plays on",)


@dataclass
class KeptPredictions:
    """A trace sink that keeps the predictions and drops the steps."""

    predictions: list[Prediction] = field(default_factory=list)

    async def write_step(self, step: TraceStep) -> None:
        return None

    async def write_prediction(self, prediction: Prediction) -> None:
        self.predictions.append(prediction)


def run_pool(
    model: SimModel, bundle: Bundle, questions: Sequence[Question], config: AgentConfig, run_id: str
) -> list[Prediction]:
    """One sample of every question answered by the harness's agent with ``bundle``."""
    agent = Agent(
        model=InProcessSim(model),
        model_name="sim-vl",
        bundle=bundle,
        frames=PlaceholderFrames(),
        subtitles=OneLineSubtitles() if config.subtitles else None,
        config=config,
    )
    sink = KeptPredictions()

    async def answer_all() -> None:
        for q in questions:
            await agent.answer(q, run_id=run_id, sample_idx=0, sink=sink)

    asyncio.run(answer_all())
    return sink.predictions
