"""Named simulator worlds for demos and tests.

The default world is the realistic one (three insights per task type, each worth a few points):
training there needs hundreds of paired draws per accept, as the benchmarks show. The *decisive*
world gives each task type one insight worth about forty points, so a gate decides within a few
dozen draws: the demo and the end-to-end tests can show a whole training run in seconds. Its
roles are the sure ones, too: a rank role that reads the candidates' worth exactly
(``evolve.rank_informativeness`` 1), independent samples and no decoys. With one insight per task
type it has no side effects (an insight lowers only the questions of its class that do not need it,
and there every question needs it).
"""

from __future__ import annotations

from skillharness.sim.config import EvolveConfig, LatencyConfig, SimConfig, WorldConfig

__all__ = ["decisive_world"]


def decisive_world(
    seed: int = 0,
    *,
    latency_s: float = 0.0,
    insight_rate: float = 0.5,
    harmful_rate: float = 0.2,
) -> SimConfig:
    """One decisive insight per task type; proposals useful with ``insight_rate``."""
    return SimConfig(
        seed=seed,
        latency=LatencyConfig(ttft_s=latency_s),
        world=WorldConfig(
            insights_per_task=1,
            needed_min=1,
            needed_max=1,
            base_min=0.25,
            base_max=0.40,
            gain_min=0.40,
            gain_max=0.50,
        ),
        evolve=EvolveConfig(
            insight_rate=insight_rate,
            harmful_rate=harmful_rate,
            rank_informativeness=1.0,
            sample_alike=0.0,
            decoy_rate=0.0,
        ),
    )
