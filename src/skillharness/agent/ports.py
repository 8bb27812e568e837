"""What the agent needs from its collaborators, as small structural protocols.

The agent sits below the store and the skills layer, so it names what it needs here and the
runner plugs in the real objects (the run store's writer, the skills bundle, the frame sampler)
or thin adapters around them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from skillharness.agent.records import Prediction, TraceStep
from skillharness.data.questions import Question
from skillharness.llm.types import ChatRequest, ChatResponse
from skillharness.video import FrameLayout
from skillharness.video.types import Frame, FrameSet

__all__ = [
    "BundleView",
    "FrameSource",
    "InvalidatingChatModel",
    "SkillText",
    "SubtitleSource",
    "TraceSink",
    "VideoFiles",
]


class SkillText(Protocol):
    """A skill document; the agent only needs its full text."""

    def render(self) -> str: ...


class BundleView(Protocol):
    """The agent's text, as :class:`skillharness.skills.Bundle` offers it."""

    @property
    def system_prompt(self) -> str: ...

    @property
    def tools(self) -> Mapping[str, str]:
        """Tool name → description (the descriptions evolve; names and schemas do not)."""
        ...

    def skill(self, task_type: str) -> SkillText:
        """The skill document (all regions) for ``task_type``."""
        ...

    def relevant_hash(self, task_type: str) -> str:
        """Hash of the text that can affect ``task_type`` (system + its skill + tool descriptions)."""
        ...


class FrameSource(Protocol):
    """The frames of a question's video. Failures of single frames come back in the FrameSet."""

    async def duration_s(self, question: Question) -> float: ...

    async def uniform(self, question: Question, count: int) -> FrameSet: ...

    async def between(self, question: Question, start_s: float, end_s: float, count: int) -> FrameSet: ...


@runtime_checkable
class VideoFiles(Protocol):
    """What a transport that sends the video itself needs (``video_frames``, ``video_url``): where
    a question's video file is, and which decoded frames a sampled set is."""

    @property
    def videos_dir(self) -> Path: ...

    def video_path(self, question: Question) -> Path: ...

    async def frame_indices(
        self, question: Question, frames: Sequence[Frame]
    ) -> tuple[FrameLayout, tuple[int, ...]]: ...


class SubtitleSource(Protocol):
    """Subtitle lines of a question's video, already formatted (e.g. ``"[12.0s] text"``).

    A video without subtitles returns ``()``: that is normal, not an error.
    """

    async def lines_at(self, question: Question, timestamps: Sequence[float]) -> tuple[str, ...]: ...

    async def lines_between(self, question: Question, start_s: float, end_s: float) -> tuple[str, ...]: ...


class TraceSink(Protocol):
    """Where the agent records what it does, as it does it (audit P0-2).

    ``write_step`` may return once the step is queued (the run store commits it with its next
    batch, moments later); ``write_prediction`` returns once the prediction is durable, and with it
    every step of the same question written before it. A failed write raises, at the latest from
    the question's ``write_prediction``, and the agent turns it into an ``infra_error`` for that
    question. Every write is an upsert on the record's key.
    """

    async def write_step(self, step: TraceStep) -> None: ...

    async def write_prediction(self, prediction: Prediction) -> None: ...


@runtime_checkable
class InvalidatingChatModel(Protocol):
    """A chat model with a response cache that can forget one request's response.

    The agent calls ``invalidate`` for every request of a question that ended in an infra error,
    so a resume asks the model again instead of replaying an episode that was not asked fairly. A
    parse error is model output and stays cached like an answer that parses (see agent/loop.py).
    Invalidating a request that is not cached is a no-op.
    """

    async def complete(self, request: ChatRequest) -> ChatResponse: ...

    async def invalidate(self, request: ChatRequest) -> None: ...
