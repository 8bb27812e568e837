"""run_holdout end to end against the simulator: the test pool only, eval runs, the stored report."""

from __future__ import annotations

from pathlib import Path

import pytest
from eval_support import asked_questions, improved
from train_support import write_train_config

from bench_support import Bench
from skillharness.config import load_config
from skillharness.data.pools import load_pools
from skillharness.errors import ConfigError
from skillharness.eval import EVAL_PURPOSE, HOLDOUT, HoldoutReport, run_holdout
from skillharness.sim import SimServer
from skillharness.skills import Bundle
from skillharness.store import RunKind, RunMetric, RunReader


def _pool(holdout_bench: Bench, name: str) -> list[str]:
    return list(load_pools(holdout_bench.pools).questions[name])


async def test_holdout_asks_only_the_test_pool_and_stores_its_report(
    tmp_path: Path, holdout_bench: Bench, holdout_sim: SimServer
) -> None:
    config = load_config(write_train_config(tmp_path, holdout_bench, holdout_sim))
    base = Bundle.load(holdout_bench.bundle)
    final = improved(base, holdout_sim)
    test_ids = _pool(holdout_bench, "test")
    with asked_questions(holdout_sim) as log:
        report = await run_holdout(config, final, base, train_run_id=None, purpose="test: end to end")
    # The simulator saw agent requests for every test question and for nothing else.
    assert set(log.asked) == set(test_ids)

    overall = report.overall
    assert overall.final.n_questions == overall.baseline.n_questions == overall.paired.n_pairs == 48
    # questions share videos: intervals by video, the per-question ones (Wilson, Newcombe) beside them
    assert overall.final.method == overall.paired.method == "cluster_bootstrap"
    assert overall.final.per_question_method == "wilson"
    assert overall.paired.per_question_method == "newcombe"
    assert overall.paired.low <= overall.paired.per_question_low <= overall.paired.gain
    assert overall.paired.gain <= overall.paired.per_question_high <= overall.paired.high
    assert overall.paired.design_effect is not None
    assert overall.final.correct == round(overall.final.accuracy * overall.final.n_samples)
    assert {r.label for r in report.rows_of("task_type")} == {
        q.task_type for q in holdout_sim.world.questions.values() if q.question_id in test_ids
    }
    assert report.test_pool_runs == 1  # one evaluation, though its two arms are two runs
    assert report.val is None  # no training run, no val gain to compare with

    # Simulator truth beside every number: the oracle's exact accuracies on the same questions.
    assert report.simulator
    effect = holdout_sim.oracle.edit_effect(base, final, test_ids)
    assert effect.delta > 0.15  # the fixture really improves the bundle
    assert overall.truth is not None
    assert (overall.truth.final, overall.truth.baseline) == pytest.approx((effect.after, effect.before))
    truth_by_type = holdout_sim.oracle.per_task_type(final, test_ids)
    for row in report.rows_of("task_type"):
        assert row.truth is not None
        assert row.truth.final == pytest.approx(truth_by_type[row.label])
    for row in report.rows_of("duration"):
        ids = [q for q in test_ids if holdout_sim.world.question(q).duration == row.label]
        assert row.truth is not None
        assert row.truth.baseline == pytest.approx(holdout_sim.oracle.expected_accuracy(base, ids))

    with RunReader(config.store) as reader:
        runs = {info.run_id: info.provenance for info in reader.runs()}
        for run_id, bundle in ((report.final_run_id, final), (report.baseline_run_id, base)):
            provenance = runs[run_id]
            assert provenance.kind is RunKind.EVAL
            assert provenance.pool == "test"
            assert provenance.pools_sha256 == holdout_bench.pools_sha256
            assert provenance.bundle_hash == bundle.bundle_hash
            assert {p.question_id for p in reader.predictions(run_id)} == set(test_ids)
            [purpose] = reader.ledger(RunMetric, run_id=run_id, name=EVAL_PURPOSE)
            assert purpose.value["purpose"] == "test: end to end"
        [stored] = reader.ledger(RunMetric, run_id=report.final_run_id, name=HOLDOUT)
    assert HoldoutReport.model_validate(stored.value) == report


async def test_a_resumed_evaluation_asks_nothing_again(
    tmp_path: Path, holdout_bench: Bench, holdout_sim: SimServer
) -> None:
    config = load_config(write_train_config(tmp_path, holdout_bench, holdout_sim))
    base = Bundle.load(holdout_bench.bundle)
    first = await run_holdout(
        config, improved(base, holdout_sim), base, train_run_id=None, purpose="first", eval_id="e1"
    )
    with asked_questions(holdout_sim) as log:
        again = await run_holdout(
            config, improved(base, holdout_sim), base, train_run_id=None, purpose="again", eval_id="e1"
        )
    assert not log.asked
    assert again.rows == first.rows
    assert again.test_pool_runs == 1  # the same evaluation (two arm runs), not a new read of the holdout


async def test_holdout_refuses_a_bad_eval_id_and_an_empty_purpose(
    tmp_path: Path, holdout_bench: Bench, holdout_sim: SimServer
) -> None:
    config = load_config(write_train_config(tmp_path, holdout_bench, holdout_sim))
    base = Bundle.load(holdout_bench.bundle)
    with pytest.raises(ConfigError, match="purpose"):
        await run_holdout(config, base, base, train_run_id=None, purpose="  ")
    with pytest.raises(ConfigError, match="invalid eval id"):
        await run_holdout(config, base, base, train_run_id=None, purpose="p", eval_id="bad id/with slash")
