"""The ``eval`` config section."""

from __future__ import annotations

from pydantic import Field

from skillharness.agent.protocols.names import ProtocolName
from skillharness.util.model import StrictModel


class EvalConfig(StrictModel):
    """Held-out evaluation. ``run_holdout_eval`` has no default: the user must decide."""

    run_holdout_eval: bool | None = Field(
        None,
        description="Must be set explicitly before training. true: when training ends, the final and the "
        "baseline bundle run on the test pool and are reported with intervals and McNemar. false: training "
        "never reads the test pool; `skillharness eval` can still do it later.",
    )
    confidence: float = Field(0.95, gt=0, lt=1, description="Confidence level of every reported interval.")
    samples: int = Field(
        1,
        ge=1,
        description="Samples per test question at the configured temperature. Above 1, accuracy is the mean "
        "of per-question means and intervals come from a bootstrap over questions.",
    )
    protocols: list[ProtocolName] = Field(
        default_factory=list,
        description="Reference protocols the two bundles are also compared under on the test pool, each "
        "with the bundle in that protocol's own instruction slot (agent.protocol_bundle_slot: auto): "
        "the transfer of the gain (docs/eval.md). Empty: our agent only.",
    )


class ReportConfig(StrictModel):
    """The ``report`` section: where ``skillharness report`` also logs the run (optional)."""

    mlflow_uri: str | None = Field(
        None, description="MLflow tracking URI; when set, the report logs params, metrics and itself there."
    )
    mlflow_experiment: str = Field("skillharness", min_length=1, description="The MLflow experiment name.")
