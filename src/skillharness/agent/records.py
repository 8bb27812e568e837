"""The two records an agent run produces: one :class:`Prediction` per (question, sample) and one
:class:`TraceStep` per model turn or tool call.

They live in the agent layer because the agent produces them and the layering forbids the agent
from importing the store; :mod:`skillharness.store` persists exactly these objects (and re-exports
them), so there is one definition of each concept.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from skillharness.util.model import StrictModel

__all__ = ["Prediction", "PredictionStatus", "StepRole", "TraceStep"]


class PredictionStatus(StrEnum):
    """How a question ended.

    ``ok`` and ``parse_error`` are final (a parse error is the model's or the bundle's fault and
    counts as wrong: an unparseable answer); ``infra_error`` means the question could not be asked
    fairly (transport: connect, reset, timeout, 429, 5xx; or a request the server refused for its
    size, error class ``RequestRefused``, see :mod:`skillharness.agent.refusal`): it is excluded
    from scores and asked again on resume.
    """

    OK = "ok"
    PARSE_ERROR = "parse_error"
    INFRA_ERROR = "infra_error"


class StepRole(StrEnum):
    """Who produced a trace step."""

    USER = "user"  # the first message (question, options, uniform frames, subtitles)
    ASSISTANT = "assistant"  # one model turn
    TOOL = "tool"  # one executed tool call


class Prediction(StrictModel):
    """The outcome of one (run, question, sample). Primary key ``(run_id, question_id, sample_idx)``."""

    run_id: str = Field(min_length=1)
    question_id: str = Field(min_length=1)
    sample_idx: int = Field(0, ge=0)
    task_type: str = ""
    duration: str = ""
    answer: str | None = Field(None, description="The normalized option letter, or None.")
    correct: bool | None = Field(None, description="None for infra_error: never counted as wrong.")
    status: PredictionStatus
    error_class: str | None = None
    error_message: str | None = None
    prompt_tokens: int = Field(0, ge=0)
    completion_tokens: int = Field(0, ge=0)
    latency_s: float = Field(0.0, ge=0.0)
    cache_hit: bool = Field(False, description="True when every model turn was served from the cache.")
    degraded: bool = Field(False, description="Some frames could not be decoded.")
    n_steps: int = Field(0, ge=0, description="Trace steps written for this sample.")
    relevant_text_hash: str = ""

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.run_id, self.question_id, self.sample_idx)


class TraceStep(StrictModel):
    """One model turn or tool call. Primary key ``(run_id, question_id, sample_idx, step_idx)``."""

    run_id: str = Field(min_length=1)
    question_id: str = Field(min_length=1)
    sample_idx: int = Field(0, ge=0)
    step_idx: int = Field(ge=0)
    role: StepRole
    content: str = Field("", description="Summary of the text (capped), never image bytes.")
    tool_name: str | None = None
    tool_arguments: str | None = Field(None, description="The raw JSON arguments as the model sent them.")
    frames_shown: tuple[float, ...] = Field((), description="Timestamps (s) of the frames shown.")
    subtitles_shown: tuple[str, ...] = ()
    degraded: bool = False
    error: str | None = Field(None, description="A tool error or refusal, as shown to the model.")
    prompt_tokens: int = Field(0, ge=0)
    completion_tokens: int = Field(0, ge=0)
    latency_s: float = Field(0.0, ge=0.0)
    cache_hit: bool = False

    @property
    def key(self) -> tuple[str, str, int, int]:
        return (self.run_id, self.question_id, self.sample_idx, self.step_idx)
