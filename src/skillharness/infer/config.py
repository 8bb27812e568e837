"""The ``infer`` config section: when a run that could not answer enough questions has failed."""

from __future__ import annotations

from pydantic import Field

from skillharness.util.model import StrictModel

__all__ = ["InferConfig"]


class InferConfig(StrictModel):
    """How a run judges its own outcome (operational: it never changes an answer)."""

    max_infra_share: float = Field(
        0.5,
        ge=0,
        le=1,
        description="A run whose share of infra_error answers exceeds this ends 'failed' (non-zero exit); "
        "below it, any infra error ends the run 'finished_with_errors'.",
    )
    max_refused_share: float = Field(
        0.1,
        ge=0,
        le=1,
        description="Requests the server refused for their size (HTTP 400/413/422: a body, image or "
        "max_tokens limit below the run's requests) are never scored; past this share of a run's answers "
        "an infer run ends 'failed', and a training run stops at the rollout that passes it.",
    )
