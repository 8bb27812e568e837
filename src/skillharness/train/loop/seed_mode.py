"""A training run's draw mode: one seed per draw, unless an endpoint ignores the request seed.

Checked once, at the run's first start (two uncached calls per endpoint); a resume keeps the mode
the run started with, read from its stored settings, so it spends nothing and draws alike.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from skillharness.errors import StoreError
from skillharness.store import RunReader
from skillharness.train.loop.experiment import TrainSettings
from skillharness.train.preflight.probes import seed_ignored
from skillharness.train.state.checkpoint import CHECKPOINT_FILE

__all__ = ["checked_seed_mode", "stored_settings"]

_log = logging.getLogger(__name__)
_SEED_PROBE_TIMEOUT_S = 30.0


def stored_settings(folder: Path, resume: bool, run_id: str, config: TrainSettings) -> dict[str, Any] | None:
    """The settings the run was started with, when a resume continues a started run (else None)."""
    if not resume or not (folder / CHECKPOINT_FILE).exists():
        return None
    try:
        with RunReader(config.store.url) as reader:
            return reader.settings(run_id)
    except StoreError:  # killed before its run row was written: a first start
        return None


async def checked_seed_mode(config: TrainSettings, stored: dict[str, Any] | None = None) -> TrainSettings:
    """``config``, or with independent arms when an endpoint ignores the per-draw seed (said once).

    A started run keeps the mode it started with (``stored``: its settings), without asking again:
    a resume must not spend calls, nor change how its arms are drawn.
    """
    if not config.agent.sampling.per_draw:
        return config
    if stored is not None:
        fell_back = stored.get("agent.sampling.seed", "per_draw") is None
        return _independent(config) if fell_back else config
    ignoring = await seed_ignored(config.llm, config.agent.sampling, _SEED_PROBE_TIMEOUT_S)
    if not ignoring:
        return config
    _log.warning(
        "%s ignore(s) the request seed: training samples both arms of each draw independently "
        "(agent.sampling.seed: null), which needs about a third more draws",
        ", ".join(ignoring),
    )
    return _independent(config)


def _independent(config: TrainSettings) -> TrainSettings:
    sampling = config.agent.sampling.model_copy(update={"seed": None})
    return config.with_agent(config.agent.model_copy(update={"sampling": sampling, "seed_salt": ""}))
