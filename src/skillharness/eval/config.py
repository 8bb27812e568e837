"""The ``eval`` config section."""

from __future__ import annotations

from pydantic import Field

from skillharness.util.model import StrictModel


class EvalConfig(StrictModel):
    """Held-out evaluation. ``run_holdout_eval`` has no default: the user must decide."""

    run_holdout_eval: bool | None = Field(None, description="Must be set explicitly before training.")
    confidence: float = Field(0.95, gt=0, lt=1)
