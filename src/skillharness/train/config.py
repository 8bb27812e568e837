"""The ``train`` config section (the training loop lands in a later milestone)."""

from __future__ import annotations

from pydantic import Field

from skillharness.util.model import StrictModel


class GateConfig(StrictModel):
    """The e-process gate."""

    alpha: float = Field(0.05, gt=0, lt=1, description="Type-I error of one gate.")
    bet_cap: float = Field(0.5, gt=0, le=0.5, description="Largest bet; bets stay in [0, bet_cap].")
    n_max: int = Field(64, ge=1, description="Largest number of paired observations per gate.")


class TrainConfig(StrictModel):
    """Training: epochs of steps over the train pool; edits gated on val."""

    epochs: int = Field(3, ge=1)
    batch_size: int = Field(8, ge=1, description="Units per step.")
    early_stop_patience: int = Field(2, ge=1, description="Epochs (not steps) without improvement.")
    task_types: tuple[str, ...] | None = Field(None, description="Trained task types; default all non-micro.")
    skill_update_mode: str = Field("patch", pattern="^(patch|rewrite)$")
    seed: int = 0
    gate: GateConfig = Field(default_factory=GateConfig)
