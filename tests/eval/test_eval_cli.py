"""``skillharness eval`` as a user runs it: a training run's final bundle, or any two bundles."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from eval_support import asked_questions, harmed, improved
from train_support import write_train_config

from bench_support import Bench
from cli_support import run_cli
from skillharness.commands.eval import eval_command
from skillharness.config import Config, load_config
from skillharness.data.pools import load_pools
from skillharness.errors import ConfigError, StoreError
from skillharness.eval import FINAL, HOLDOUT, VAL_GAIN, HoldoutReport, agent_path
from skillharness.sim import AgentPath, SimServer
from skillharness.skills import Bundle, EditRecord, EditTarget, VersionReason, Workspace
from skillharness.store import RunKind, RunMetric, RunProvenance, RunReader, RunStatus, RunStore

WIDE = {**os.environ, "COLUMNS": "250"}  # rich wraps tables to 80 columns when not on a terminal


async def _training_run(
    config: Config, run_id: str, bundle: Bundle, metrics: dict[str, Any], *, pools_sha256: str | None = None
) -> None:
    """A finished training run in the store with the metrics the loop writes (final, val_gain)."""
    assert config.data.pools is not None
    provenance = RunProvenance(
        run_id=run_id,
        kind=RunKind.TRAIN,
        config_hash="test",
        bundle_hash=bundle.bundle_hash,
        pools_sha256=pools_sha256 or load_pools(config.data.pools).sha256,
        pool="train",
        model=config.llm.model,
        endpoints=tuple(ep.base_url for ep in config.llm.endpoints),
        sampling=config.agent.sampling,
    )
    with RunStore.open(config.store) as store:
        log = await store.open_run(provenance)
        await log.close(RunStatus.FINISHED)
        store.upsert(RunMetric(run_id=run_id, name=name, value=value) for name, value in metrics.items())


def _trained(
    tmp_path: Path, holdout_bench: Bench, holdout_sim: SimServer, val: dict[str, float]
) -> tuple[Path, Bundle, Bundle]:
    path = write_train_config(tmp_path, holdout_bench, holdout_sim)
    config = load_config(path)
    base = Bundle.load(holdout_bench.bundle)
    final = improved(base, holdout_sim)
    workspace = Workspace.create(tmp_path / "workspace", base)
    version = workspace.commit(
        final, "v0000", EditRecord(target=EditTarget.system(), reason=VersionReason.MANUAL)
    )
    reference = {"workspace": str(workspace.path), "version": version, "bundle_hash": final.bundle_hash}
    asyncio.run(_training_run(config, "train-1", base, {FINAL: reference, VAL_GAIN: val}))
    return path, base, final


@pytest.mark.slow
def test_eval_of_a_training_run_flags_overfitting_and_prints_scored_truth(
    tmp_path: Path, holdout_bench: Bench, holdout_sim: SimServer
) -> None:
    # A val gain of 90 points cannot hold on test: the holdout gain lies outside its interval.
    path, base, final = _trained(
        tmp_path, holdout_bench, holdout_sim, {"gain": 0.9, "low": 0.85, "high": 0.95}
    )
    result = run_cli("eval", "--config", str(path), "--run", "train-1", env=WIDE)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for expected in ("Overall", "Per task type", "Per duration", "McNemar p", "Holm p", "scored truth"):
        assert expected in out
    assert "OVERFITTING TO VAL" in out
    assert "train-1 (v0001)" in out
    assert "train-1 (v0000)" in out

    with RunReader(load_config(path).store) as reader:
        [stored] = reader.ledger(RunMetric, run_id="train-1", name=HOLDOUT)
        children = reader.children("train-1")
    report = HoldoutReport.model_validate(stored.value)
    assert report.train_run_id == "train-1"
    assert report.final_bundle_hash == final.bundle_hash
    assert report.baseline_bundle_hash == base.bundle_hash
    assert report.test_pool_runs == 1  # one evaluation, though its two arms are two runs
    assert [c.run_id for c in children] == [report.final_run_id, report.baseline_run_id]
    assert {c.provenance.kind for c in children} == {RunKind.EVAL}
    assert report.val is not None
    assert report.val.overfit
    val_ids = list(load_pools(holdout_bench.pools).questions["val"])
    # The scored truth of the run's own agent path: what its measured accuracy estimates.
    run_path = AgentPath(**agent_path(load_config(path).agent))
    assert report.val.val_truth == holdout_sim.oracle.edit_effect(base, final, val_ids, run_path).delta
    assert report.overall.truth is not None
    assert report.val.holdout_truth == report.overall.truth.gain


@pytest.mark.slow
def test_eval_of_two_bundle_folders_with_several_samples(
    tmp_path: Path, holdout_bench: Bench, holdout_sim: SimServer
) -> None:
    path = write_train_config(
        tmp_path, holdout_bench, holdout_sim, eval={"run_holdout_eval": False, "samples": 2}
    )
    base = Bundle.load(holdout_bench.bundle)
    harmed(base).save(tmp_path / "harmed")
    with asked_questions(holdout_sim) as log:
        result = run_cli(
            "eval",
            "--config",
            str(path),
            "--bundle",
            str(tmp_path / "harmed"),
            "--against",
            str(holdout_bench.bundle),
            "--json",
        )
    assert result.returncode == 0, result.stderr
    assert set(log.asked) == set(load_pools(holdout_bench.pools).questions["test"])
    report = HoldoutReport.model_validate(json.loads(result.stdout))
    overall = report.overall
    assert report.samples == 2
    assert overall.final.n_samples == overall.baseline.n_samples == 96
    # the bench's videos hold several questions: intervals by video, the question bootstrap beside
    assert overall.final.method == overall.paired.method == "cluster_bootstrap"
    assert overall.final.per_question_method == overall.paired.per_question_method == "bootstrap"
    assert overall.paired.n_videos is not None
    assert overall.paired.n_videos < overall.paired.n_pairs
    assert overall.truth is not None
    assert overall.truth.gain < 0
    assert report.train_run_id is None
    assert report.test_pool_runs == 1  # one evaluation, though its two arms are two runs
    with RunReader(load_config(path).store) as reader:
        samples = {p.sample_idx for p in reader.predictions(report.final_run_id)}
    assert samples == {0, 1}


def _eval(path: Path, **options: Any) -> None:
    """The command in-process (its checks run before anything is asked)."""
    defaults = {
        "run": None,
        "bundle": None,
        "against": None,
        "purpose": None,
        "eval_id": None,
        "protocols": None,
        "as_json": True,
    }
    eval_command(config=path, **{**defaults, **options})


@pytest.mark.slow
def test_eval_usage_errors_name_the_problem(
    tmp_path: Path, holdout_bench: Bench, holdout_sim: SimServer
) -> None:
    path = write_train_config(tmp_path, holdout_bench, holdout_sim)
    neither = run_cli("eval", "--config", str(path))  # as a user sees it: one line, exit code 2
    assert neither.returncode == 2
    assert "--run TRAIN_RUN or --bundle DIR" in neither.stderr
    with pytest.raises(ConfigError, match="drop --bundle"):
        _eval(path, run="x", bundle=holdout_bench.bundle)
    asyncio.run(_training_run(load_config(path), "train-0", Bundle.load(holdout_bench.bundle), {}))
    with pytest.raises(ConfigError, match="no final bundle recorded"):
        _eval(path, run="train-0")
    other = "0" * 64
    asyncio.run(
        _training_run(load_config(path), "train-x", Bundle.load(holdout_bench.bundle), {}, pools_sha256=other)
    )
    with pytest.raises(ConfigError, match="trained on the split with pools sha256 000000000000"):
        _eval(path, run="train-x")
    with pytest.raises(StoreError, match=r"no run 'train-9'.*train-0"):
        _eval(path, run="train-9")
    with pytest.raises(ConfigError, match="not a bundle folder or workspace"):
        _eval(path, bundle=holdout_bench.bundle, against=str(holdout_bench.questions))


def test_an_interrupted_evaluation_names_its_id_to_finish_it(capsys: pytest.CaptureFixture[str]) -> None:
    """The generated id is printed nowhere else: without it, going on is a new read of the test pool."""
    import typer

    from skillharness.commands.eval import _resumable

    with pytest.raises(typer.Exit) as stopped, _resumable("eval-20261207T1-abc"):
        raise KeyboardInterrupt
    assert stopped.value.exit_code == 130
    assert "run the same command with --eval-id eval-20261207T1-abc" in capsys.readouterr().err


def test_an_eval_id_made_with_other_inputs_names_the_flag_not_a_run_id() -> None:
    """The store's refusal says "start a new run id"; an evaluation's runs are named by --eval-id."""
    from skillharness.commands.eval import _resumable
    from skillharness.errors import RunInputsChanged

    refusal = RunInputsChanged(
        "cannot resume run 'e1.final': x; start a new run id for a different configuration",
        differences="bundle_hash: stored 'aa', now 'bb'",
        run_id="e1.final",
    )
    with pytest.raises(ConfigError) as info, _resumable("e1"):
        raise refusal
    message = str(info.value)
    assert "--eval-id e1: an evaluation made with other inputs (its run 'e1.final': bundle_hash" in message
    assert "omit --eval-id for a new evaluation" in message
    assert "start a new run id" not in message
