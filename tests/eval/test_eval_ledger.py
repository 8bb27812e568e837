"""The run-store values the eval reads (final, val_gain), the val/holdout verdict and the test-pool count."""

from __future__ import annotations

import pytest

from skillharness.errors import ConfigError, StoreError
from skillharness.eval import (
    FINAL,
    HOLDOUT,
    VAL_GAIN,
    EvalArm,
    ValGain,
    arm_run_id,
    compare_val_holdout,
    count_test_pool_runs,
    evaluation_of,
    final_ref,
    holdout_of_final,
    val_gain,
)
from skillharness.llm.types import SamplingParams
from skillharness.store import RunInfo, RunKind, RunMetric, RunProvenance, RunStatus


@pytest.mark.parametrize(
    ("holdout", "overfit"),
    [(0.10, False), (0.02, False), (0.18, False), (0.019, True), (0.181, True), (-0.05, True), (None, False)],
)
def test_overfit_when_the_holdout_gain_lies_outside_the_val_interval(
    holdout: float | None, overfit: bool
) -> None:
    verdict = compare_val_holdout(
        ValGain(gain=0.1, low=0.02, high=0.18), holdout, val_truth=0.09, holdout_truth=0.08
    )
    assert verdict.overfit is overfit
    assert (verdict.val_gain, verdict.val_low, verdict.val_high, verdict.holdout_gain) == (
        0.1,
        0.02,
        0.18,
        holdout,
    )
    assert (verdict.val_truth, verdict.holdout_truth) == (0.09, 0.08)


def test_recorded_values_are_read_by_name_and_extra_fields_ignored() -> None:
    metrics = [
        RunMetric(
            run_id="t", name=FINAL, value={"workspace": "/w", "version": "v0003", "bundle_hash": "h", "x": 1}
        ),
        RunMetric(
            run_id="t", name=VAL_GAIN, value={"gain": 0.1, "low": 0.0, "high": 0.2, "confidence": 0.95}
        ),
        RunMetric(run_id="other", name=VAL_GAIN, value={"gain": 0.5, "low": 0.4, "high": 0.6}),
    ]
    ref = final_ref(metrics, "t")
    assert (str(ref.workspace), ref.version, ref.bundle_hash) == ("/w", "v0003", "h")
    assert val_gain(metrics, "t") == ValGain(gain=0.1, low=0.0, high=0.2)
    assert val_gain(metrics, "none") is None
    with pytest.raises(ConfigError, match="no final bundle recorded"):
        final_ref(metrics, "other")
    with pytest.raises(StoreError, match="malformed"):
        val_gain([RunMetric(run_id="t", name=VAL_GAIN, value={"gain": "high"})], "t")


def test_a_holdout_counts_as_the_runs_only_when_it_read_the_final_bundle() -> None:
    """An ``eval --run`` at a budget stop read that stop's incumbent; once the resumed run accepted
    more, its end-of-training holdout is still owed (``train --resume`` of the ended run runs it)."""
    final = RunMetric(
        run_id="t", name=FINAL, value={"workspace": "/w", "version": "v0004", "bundle_hash": "new"}
    )
    earlier = RunMetric(run_id="t", name=HOLDOUT, value={"final_bundle_hash": "old", "eval_id": "manual"})
    of_final = RunMetric(run_id="t", name=HOLDOUT, value={"final_bundle_hash": "new", "eval_id": "t.holdout"})
    assert not holdout_of_final([final, earlier], "t")
    assert holdout_of_final([final, of_final], "t")
    assert not holdout_of_final([final], "t")
    assert not holdout_of_final([of_final], "t")  # no final bundle recorded: nothing to have read


def _run(run_id: str, kind: RunKind, pool: str | None, pools: str | None) -> RunInfo:
    provenance = RunProvenance(
        run_id=run_id,
        kind=kind,
        config_hash="c",
        bundle_hash="b",
        pools_sha256=pools,
        pool=pool,
        model="m",
        endpoints=("http://127.0.0.1:1/v1",),
        sampling=SamplingParams(),
    )
    return RunInfo(
        provenance=provenance,
        started_at="2026-01-01T00:00:00Z",
        ended_at=None,
        status=RunStatus.FINISHED,
        n_ok=0,
        n_parse_error=0,
        n_infra_error=0,
    )


def test_test_pool_reads_are_counted_per_split() -> None:
    runs = [
        _run("e1.final", RunKind.EVAL, "test", "split-a"),
        _run("e1.baseline", RunKind.EVAL, "test", "split-a"),
        _run("e2.final", RunKind.EVAL, "test", "split-b"),  # another split: its own holdout
        _run("e3.final", RunKind.EVAL, "test", "split-a"),
        _run("e3.baseline", RunKind.EVAL, "test", "split-a"),
        _run("i1", RunKind.INFER, "test", "split-a"),  # infer --pool test reads it too
        _run("i2", RunKind.INFER, "val", "split-a"),
        _run("t1", RunKind.TRAIN, "train", "split-a"),
    ]
    assert count_test_pool_runs(runs, "split-a") == (2, 1)  # e1 and e3, each one evaluation of two runs
    assert count_test_pool_runs(runs, "split-b") == (1, 0)
    assert count_test_pool_runs(runs, "split-c") == (0, 0)


def test_an_arm_run_names_its_evaluation() -> None:
    assert [arm_run_id("e.1", arm) for arm in EvalArm] == ["e.1.final", "e.1.baseline"]
    assert {evaluation_of(arm_run_id("e.1", arm)) for arm in EvalArm} == {"e.1"}
    assert evaluation_of("infer-val-1") == "infer-val-1"
    assert evaluation_of("e.2.candidate") == "e.2.candidate"  # not an arm: the run is its own


def test_item3_holdout_prints_the_val_gain_as_selected_on_val() -> None:
    from skillharness.commands.eval_table import _val_line

    verdict = compare_val_holdout(ValGain(gain=0.19, low=0.13, high=0.26), 0.12)
    assert verdict.selection == "selected on val (optimistic)"
    assert "val gain (selected on val (optimistic)) +19.0 pts" in _val_line(verdict)
