"""The ``train`` config section (the training loop lands in a later milestone)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from skillharness.util.model import StrictModel


class GateConfig(StrictModel):
    """The e-process gate (see docs/gate.md): bets, threshold, ladder and budget."""

    alpha: float = Field(
        0.05, gt=0, lt=1, description="Type-I error of one gate (false accept of a no-better edit)."
    )
    bet_cap: float = Field(
        0.5,
        gt=0,
        le=0.5,
        description="Bets stay in [0, bet_cap], so a win multiplies wealth by at most 1 + bet_cap.",
    )
    n_max: int = Field(
        64, ge=1, description="Largest number of paired observations (ties included) per gate."
    )
    bet_strategy: Literal["agrapa", "ons"] = Field(
        "agrapa",
        description="Predictable bet rule: 'agrapa' (plug-in Kelly bet) or 'ons' (online Newton step).",
    )
    first_stage: int = Field(8, ge=1, description="Observations in the ladder's first stage.")
    stage_growth: float = Field(
        2.0,
        ge=1.0,
        description="A ladder stage ends at ceil(previous end x stage_growth) observations, capped at n_max.",
    )
    n_candidates: int = Field(
        1,
        ge=1,
        description="Candidates tested on the same val data; the accept threshold is n_candidates / alpha.",
    )
    alpha_spending: Literal["none", "basel", "geometric"] = Field(
        "none",
        description=(
            "Per-run alpha spending over the run's gates k = 1, 2, ...: 'none' gives each gate alpha; "
            "'basel' gives alpha * 6 / (pi^2 k^2); 'geometric' gives alpha / 2^k. The last two bound the "
            "run's chance of any false accept by alpha."
        ),
    )
    mcnemar_alpha: float = Field(
        0.05,
        gt=0,
        lt=1,
        description="Level of the one-sided McNemar harm guard on untargeted classes (Holm over classes).",
    )


class TrainConfig(StrictModel):
    """Training: epochs of steps over the train pool; edits gated on val."""

    epochs: int = Field(3, ge=1)
    batch_size: int = Field(8, ge=1, description="Units per step.")
    early_stop_patience: int = Field(2, ge=1, description="Epochs (not steps) without improvement.")
    task_types: tuple[str, ...] | None = Field(None, description="Trained task types; default all non-micro.")
    skill_update_mode: str = Field("patch", pattern="^(patch|rewrite)$")
    prompts_dir: Path | None = Field(
        None,
        description=(
            "Folder of prompt templates used instead of the packaged ones; it must hold every template "
            "(copy the packaged folder and edit it; see docs/templates.md). None: the packaged templates."
        ),
    )
    seed: int = 0
    gate: GateConfig = Field(default_factory=GateConfig)
