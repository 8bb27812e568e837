"""Preflight refuses an undecided ``eval.run_holdout_eval`` and says what each choice means."""

from __future__ import annotations

from pathlib import Path

import pytest
from train_support import write_train_config

from bench_support import Bench
from skillharness.config import load_config
from skillharness.sim import SimServer
from skillharness.train.preflight.checks import run_preflight


def test_an_undecided_holdout_is_refused_with_both_choices_explained(
    tmp_path: Path, holdout_bench: Bench, holdout_sim: SimServer
) -> None:
    config = load_config(
        write_train_config(tmp_path, holdout_bench, holdout_sim, eval={"run_holdout_eval": None})
    )
    report = run_preflight(config, endpoint_timeout_s=5.0)
    assert not report.ok
    [message] = [p.message for p in report.problems if p.check == "eval"]
    assert "eval.run_holdout_eval is not set" in message
    assert "true: when training ends, the final and the baseline bundle run on the test pool" in message
    assert "false: training never reads the test pool" in message
    assert "skillharness eval --run RUN" in message


@pytest.mark.parametrize(
    ("choice", "meaning"), [(True, "run on the test pool when training ends"), (False, "never reads")]
)
def test_a_decided_holdout_passes_and_says_what_was_chosen(
    tmp_path: Path, holdout_bench: Bench, holdout_sim: SimServer, choice: bool, meaning: str
) -> None:
    config = load_config(
        write_train_config(tmp_path, holdout_bench, holdout_sim, eval={"run_holdout_eval": choice})
    )
    report = run_preflight(config, endpoint_timeout_s=5.0)
    assert not [p for p in report.problems if p.check == "eval"]
    passed = {row.check: row.message for row in report.passed}
    assert meaning in passed["eval"]
