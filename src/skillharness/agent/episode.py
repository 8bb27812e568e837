"""The running state of one (question, sample): its requests, tokens, flags and trace steps.

Every ``*_step`` method hands its trace row to the sink before returning (the run store commits it
with its next batch), so the trace of a question that is still running (or that crashed) reaches
the store while it runs (audit P0-2).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from skillharness.agent.ports import TraceSink
from skillharness.agent.prompt import cap_text
from skillharness.agent.records import Prediction, PredictionStatus, StepRole, TraceStep
from skillharness.agent.refusal import REQUEST_REFUSED, refusal_message
from skillharness.agent.tools import ToolOutcome
from skillharness.data.questions import Question
from skillharness.llm.types import ChatRequest, ChatResponse, ToolCall

__all__ = ["REQUEST_REFUSED", "Episode", "Verdict"]


@dataclass(frozen=True)
class Verdict:
    """How the conversation ended, before it becomes a :class:`Prediction`."""

    status: PredictionStatus
    answer: str | None = None
    error_class: str | None = None
    error_message: str | None = None

    @classmethod
    def answered(cls, letter: str) -> Verdict:
        return cls(PredictionStatus.OK, letter)

    @classmethod
    def parse(cls, error_class: str, message: str) -> Verdict:
        return cls(PredictionStatus.PARSE_ERROR, None, error_class, message)

    @classmethod
    def refused(cls, exc: BaseException) -> Verdict:
        """The server refused what the request carried (a 400, 413, 422: its body size, images or
        max_tokens): no answer, neither right nor wrong (agent/refusal.py says why)."""
        return cls(PredictionStatus.INFRA_ERROR, None, REQUEST_REFUSED, refusal_message(exc))

    @classmethod
    def infra(cls, exc: BaseException) -> Verdict:
        return cls(PredictionStatus.INFRA_ERROR, None, type(exc).__name__, str(exc)[:2000] or repr(exc))


@dataclass
class Episode:
    """Mutable per-question state; only the agent loop touches it."""

    question: Question
    run_id: str
    sample_idx: int
    sink: TraceSink
    trace_chars: int
    started: float
    relevant_text_hash: str = ""
    duration_s: float = 0.0
    frames_used: int = 0
    degraded: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_turns: int = 0
    cached_turns: int = 0
    steps: int = 0
    requests: list[ChatRequest] = field(default_factory=list)
    # The request-level media settings of the episode's video (its first message's), sent with
    # every turn: the conversation re-sends that video each time (agent/transport.py).
    media_io_kwargs: dict[str, dict[str, Any]] | None = None

    async def _write(self, role: StepRole, content: str, **fields: Any) -> None:
        step = TraceStep(
            run_id=self.run_id,
            question_id=self.question.question_id,
            sample_idx=self.sample_idx,
            step_idx=self.steps,
            role=role,
            content=cap_text(content, self.trace_chars),
            **fields,
        )
        await self.sink.write_step(step)
        self.steps += 1

    async def first_step(
        self, message: dict[str, Any], *, frames_shown: tuple[float, ...], subtitles: tuple[str, ...]
    ) -> None:
        content = message["content"]
        text = content if isinstance(content, str) else content[0]["text"]
        await self._write(
            StepRole.USER, text, frames_shown=frames_shown, subtitles_shown=subtitles, degraded=self.degraded
        )

    async def model_step(self, response: ChatResponse, elapsed_s: float) -> None:
        self.prompt_tokens += response.usage.prompt_tokens
        self.completion_tokens += response.usage.completion_tokens
        self.model_turns += 1
        self.cached_turns += int(response.cache_hit)
        called = ", ".join(call.name for call in response.tool_calls)
        await self._write(
            StepRole.ASSISTANT,
            response.content or "",
            tool_name=called or None,
            prompt_tokens=response.usage.prompt_tokens,
            completion_tokens=response.usage.completion_tokens,
            latency_s=max(0.0, response.latency_s or elapsed_s),
            cache_hit=response.cache_hit,
        )

    async def tool_step(self, outcome: ToolOutcome) -> None:
        self.degraded |= outcome.degraded
        await self._write(
            StepRole.TOOL,
            outcome.text,
            tool_name=outcome.call.name,
            tool_arguments=outcome.call.arguments,
            frames_shown=outcome.frames_shown,
            subtitles_shown=outcome.subtitles_shown,
            degraded=outcome.degraded,
            error=outcome.error,
        )

    async def answer_step(self, call: ToolCall, verdict: Verdict) -> None:
        shown = (
            f"answer {verdict.answer}" if verdict.answer else f"unparseable answer: {verdict.error_message}"
        )
        await self._write(
            StepRole.TOOL,
            shown,
            tool_name=call.name,
            tool_arguments=call.arguments,
            error=None if verdict.answer else verdict.error_message,
        )

    def prediction(self, verdict: Verdict) -> Prediction:
        """The prediction for ``verdict`` with this episode's accounting."""
        correct = None
        if verdict.status is PredictionStatus.OK:
            correct = verdict.answer == self.question.answer
        elif verdict.status is PredictionStatus.PARSE_ERROR:
            correct = False  # unparsed counts as wrong, and is reported as such
        return Prediction(
            run_id=self.run_id,
            question_id=self.question.question_id,
            sample_idx=self.sample_idx,
            task_type=self.question.task_type,
            duration=self.question.duration,
            answer=verdict.answer,
            correct=correct,
            status=verdict.status,
            error_class=verdict.error_class,
            error_message=verdict.error_message,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            latency_s=max(0.0, time.monotonic() - self.started),
            cache_hit=self.model_turns > 0 and self.cached_turns == self.model_turns,
            degraded=self.degraded,
            n_steps=self.steps,
            relevant_text_hash=self.relevant_text_hash,
        )
