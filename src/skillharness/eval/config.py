"""The ``eval`` config section."""

from __future__ import annotations

from pydantic import Field

from skillharness.util.model import StrictModel


class EvalConfig(StrictModel):
    """Held-out evaluation. ``run_holdout_eval`` has no default: the user must decide."""

    run_holdout_eval: bool | None = Field(None, description="Must be set explicitly before training.")
    confidence: float = Field(0.95, gt=0, lt=1)


class ReportConfig(StrictModel):
    """The ``report`` section: where ``skillharness report`` also logs the run (optional)."""

    mlflow_uri: str | None = Field(
        None, description="MLflow tracking URI; when set, the report logs params, metrics and itself there."
    )
    mlflow_experiment: str = Field("skillharness", min_length=1, description="The MLflow experiment name.")
