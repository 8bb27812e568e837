"""``skillharness preflight`` as a user runs it: a table of checks, exit 0 or 2."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from preflight_support import FAST_RETRY, REACHABLE, UNREACHABLE, Bench, write_config

from cli_support import run_cli
from net_support import free_port
from skillharness.sim import SimServer
from skillharness.train.preflight.checks import CHECKS


@pytest.mark.slow
def test_good_setup_exits_0_with_a_table(tmp_path: Path, bench: Bench, shared_sim: SimServer) -> None:
    config = write_config(tmp_path, bench, shared_sim.base_url, shared_sim.model_name)
    result = run_cli("preflight", "--config", str(config))
    assert result.returncode == 0, result.stderr
    for check in CHECKS:
        assert check in result.stdout
    assert "fail" not in result.stdout
    assert "preflight passed" in result.stdout


@pytest.mark.slow
def test_every_problem_is_printed_and_exit_is_2(tmp_path: Path, bench: Bench, shared_sim: SimServer) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    config = write_config(
        tmp_path,
        bench,
        dead,
        shared_sim.model_name,
        train={"task_types": [*REACHABLE, UNREACHABLE]},
        eval={"run_holdout_eval": None},
        data={"pools_sha256": "f" * 64},
        llm={"retry": FAST_RETRY},
    )
    result = run_cli("preflight", "--config", str(config), "--timeout", "2")
    assert result.returncode == 2
    statuses = re.findall(r"^│ ([a-z ]+?)\s+│ (pass|fail|skip)\s+│", result.stdout, re.MULTILINE)
    # data (sha), eval and endpoint fail; the gate needs trusted pools, and the model names and the
    # run-sized request an answering endpoint, so they are skipped (not run), not failed.
    assert sorted(c for c, s in statuses if s == "fail") == ["data", "endpoint", "eval"]
    assert [c for c, s in statuses if s == "skip"] == ["gate", "model", "request"]
    out = " ".join(result.stdout.split())  # the table folds long messages over lines
    assert dead in out
    assert "eval.run_holdout_eval" in out
    assert "3 problem(s)" in result.stderr


@pytest.mark.slow
def test_unknown_pool_is_a_usage_error(tmp_path: Path, bench: Bench, shared_sim: SimServer) -> None:
    config = write_config(tmp_path, bench, shared_sim.base_url, shared_sim.model_name)
    result = run_cli("preflight", "--config", str(config), "--pool", "holdout")
    assert result.returncode == 2
    assert "pool must be one of" in result.stderr
