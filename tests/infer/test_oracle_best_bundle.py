"""The simulator's oracle-best bundle, run through the real agent, scores what the oracle says."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import pytest
from infer_support import PACED_WORLD, Bench, write_config

from skillharness.config import load_config
from skillharness.infer import load_job, run_inference
from skillharness.sim import BundleText, SimServer
from skillharness.skills import Bundle
from skillharness.store import PredictionStatus, RunReader

pytestmark = pytest.mark.sim_world(PACED_WORLD)

SAMPLES = 16


def _run(
    tmp_path: Path, bench: Bench, sim: SimServer, bundle: Bundle, run_id: str
) -> tuple[int, float, float]:
    """``(draws, correct, expected correct, its variance)`` of ``bundle`` over the val pool."""
    bundle.save(tmp_path / run_id)
    path = write_config(
        tmp_path / f"{run_id}.yaml",
        bench,
        sim,
        bundle=str(tmp_path / run_id),
        vision=False,
        samples=SAMPLES,
        sampling={"temperature": 0.7},
        concurrency=16,
    )
    config = load_config(path)
    job = load_job(config, pool="val", run_id=run_id, resume=False)
    asyncio.run(run_inference(job))
    with RunReader(config.store) as reader:
        rows = reader.predictions(run_id)
    answers = {q.question_id: q.answer for q in job.questions}
    assert len(rows) == len(job.questions) * SAMPLES
    assert not [p for p in rows if p.status is PredictionStatus.INFRA_ERROR]
    correct = sum(p.status is PredictionStatus.OK and p.answer == answers[p.question_id] for p in rows)
    draws = [q for q in job.questions for _ in range(SAMPLES)]
    initial = Bundle.load(bench.bundle)
    return (
        correct,
        [sim.oracle.question_accuracy(bundle, q) for q in draws],
        [sim.oracle.question_accuracy(initial, q) for q in draws],
    )


def test_the_oracle_best_bundle_scores_what_the_oracle_says_through_the_real_agent(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    initial = Bundle.load(bench.bundle)
    best_text = sim.oracle.best_bundle(initial)
    assert set(best_text.skills) == set(initial.skills), "one key per skill: the slug"
    best = best_text.to_bundle()
    assert BundleText.from_bundle(best) == best_text, "the bundle is exactly the text the oracle scored"
    correct, ps, initial_ps = _run(tmp_path, bench, sim, best, "best")
    expected, bound = sum(ps), 4 * math.sqrt(sum(p * (1 - p) for p in ps)) + 1
    # Four standard deviations of a sum of independent draws, plus one for rounding.
    assert abs(correct - expected) <= bound, (correct, expected, bound)
    # The test can fail: had the agent run the initial documents under the best bundle's name (the
    # slug/name mix-up), its expected score would lie outside the bound.
    assert expected - sum(initial_ps) > 2 * bound, (expected, sum(initial_ps), bound)
