"""Bounded coverage check: the paired interval covers the oracle's gain in ≥ 90 % of seeded repetitions.

Each repetition evaluates the same two bundles on the same 48 test questions with another
sampling seed (temperature 1), so the agent's answers are fresh draws. The oracle's gain on those
questions is the quantity the paired interval estimates. The fuller study (more repetitions,
several effect sizes) belongs in a benchmark.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from eval_support import improved
from train_support import write_train_config

from bench_support import Bench
from skillharness.config import load_config
from skillharness.eval import run_holdout
from skillharness.sim import SimServer
from skillharness.skills import Bundle

REPETITIONS = 10


@pytest.mark.slow
async def test_paired_interval_covers_the_oracle_gain(
    tmp_path: Path, holdout_bench: Bench, holdout_sim: SimServer
) -> None:
    base = Bundle.load(holdout_bench.bundle)
    final = improved(base, holdout_sim)
    covered, half_widths, truths = 0, [], set()
    for rep in range(REPETITIONS):
        sampling = {"temperature": 1.0, "seed": 1000 + rep}
        config = load_config(
            write_train_config(tmp_path / f"r{rep}", holdout_bench, holdout_sim, agent={"sampling": sampling})
        )
        report = await run_holdout(config, final, base, train_run_id=None, purpose=f"coverage {rep}")
        paired, truth = report.overall.paired, report.overall.truth
        assert truth is not None
        assert paired.low is not None
        assert paired.high is not None
        covered += paired.low <= truth.gain <= paired.high
        half_widths.append((paired.high - paired.low) / 2)
        truths.add(round(truth.gain, 12))
    assert len(truths) == 1  # the same estimand every time: only the agent's draws change
    assert covered >= 0.9 * REPETITIONS
    # Not vacuous: on 48 paired questions the interval must be far narrower than the [-1, 1] range.
    assert sum(half_widths) / REPETITIONS < 0.2
