"""``experiment init`` on a first experiment: split sized from the data, every flag checked before a
write, "next" only after preflight passed; and ``data synth``'s default output through init, train
and eval with no flag beyond the endpoint and the model."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from bench_support import Bench, StartSim
from cli_support import command_app, run_cli
from skillharness.commands import experiment
from skillharness.errors import ConfigError
from skillharness.sim import SimConfig, SimServer
from skillharness.train.config import GateConfig
from skillharness.train.loop.training import run_folder
from skillharness.train.state.checkpoint import Checkpoint, RunState

_APP = command_app(experiment.register)


def _args(bench: Bench, out: Path, sim: SimServer, *extra: str, videos: Path | None = None) -> list[str]:
    return [
        "experiment", "init",
        "--questions", str(bench.questions),
        "--videos", str(videos or bench.root / "videos"),
        "--endpoint", sim.base_url,
        "--model", sim.model_name,
        "--holdout",
        "--out", str(out),
        *extra,
    ]  # fmt: skip


def _cli(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd, env={**os.environ, "COLUMNS": "200", **env})


def _some_videos_missing(bench: Bench, folder: Path, missing: int) -> list[str]:
    """``folder`` with every video of ``bench`` linked in but the first ``missing``; their keys."""
    folder.mkdir()
    videos = sorted((bench.root / "videos").glob("*.mp4"))
    for video in videos[missing:]:
        (folder / video.name).symlink_to(video)
    return [video.stem for video in videos[:missing]]


def test_experiment_init_names_sizes_beyond_the_data_and_how_many_units_it_holds(
    bench: Bench, shared_sim: SimServer, tmp_path: Path
) -> None:
    result = CliRunner().invoke(_APP, _args(bench, tmp_path / "exp", shared_sim, "--sizes", "30,30,30"))
    assert isinstance(result.exception, ConfigError), result.output
    message = str(result.exception)
    assert "--sizes 30,30,30 asks for 90 video units" in message
    assert "hold only 12" in message  # the bench's 12 videos
    assert not (tmp_path / "exp").exists()


@pytest.mark.parametrize("flag", ["--model", "--videos"])
def test_experiment_init_checks_model_and_videos_before_writing_anything(
    bench: Bench, shared_sim: SimServer, tmp_path: Path, flag: str
) -> None:
    out = tmp_path / "exp"
    args = _args(bench, out, shared_sim, "--sizes", "4,4,4")
    if flag == "--model":
        args[args.index("--model") + 1] = "no-such-model"
        needles = ["--model 'no-such-model'", "does not serve it", shared_sim.model_name]
    else:
        missing = _some_videos_missing(bench, tmp_path / "videos", 7)
        args[args.index("--videos") + 1] = str(tmp_path / "videos")
        needles = ["--videos", "7 of the 12 videos", *missing[:5], "and 2 more"]
    result = CliRunner().invoke(_APP, args)
    assert isinstance(result.exception, ConfigError), result.output
    for needle in needles:
        assert needle in str(result.exception), needle
    assert result.exception.context["field"] == flag
    assert not out.exists()


@pytest.mark.slow
def test_experiment_init_rerun_with_the_fixed_model_needs_no_force(
    bench: Bench, shared_sim: SimServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLHARNESS_AGENT__FRAMES__CACHE_DIR", str(tmp_path / "frames"))
    monkeypatch.setenv("SKILLHARNESS_TRAIN__GATE__MIN_DISTINCT", "1")  # this bench's val is small
    out = tmp_path / "exp"
    wrong = _args(bench, out, shared_sim, "--sizes", "4,4,4")
    wrong[wrong.index("--model") + 1] = "sim-v1"  # a typo
    assert isinstance(CliRunner().invoke(_APP, wrong).exception, ConfigError)
    fixed = CliRunner().invoke(_APP, _args(bench, out, shared_sim, "--sizes", "4,4,4"))
    assert fixed.exit_code == 0, fixed.output
    assert (out / "experiment.yaml").is_file()
    assert "preflight passed" in fixed.output


def test_experiment_init_prints_next_only_when_preflight_passed(
    bench: Bench, shared_sim: SimServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """This bench's 1-4 val questions per class under train.gate.min_distinct's default (20): every
    class is micro, preflight fails, and init says what failed and what to change instead."""
    monkeypatch.setenv("SKILLHARNESS_AGENT__FRAMES__CACHE_DIR", str(tmp_path / "frames"))
    monkeypatch.setenv("COLUMNS", "200")
    result = CliRunner().invoke(_APP, _args(bench, tmp_path / "exp", shared_sim, "--sizes", "4,4,4"))
    assert isinstance(result.exception, ConfigError), result.output
    said = " ".join(result.output.split())
    assert "skillharness train --config" not in said
    assert "preflight failed" in said
    assert "- gate: no task type can be trained" in said
    assert "not ready to train" in said
    assert "skillharness preflight --config" in said


@pytest.mark.slow
def test_a_first_experiment_on_data_synth_runs_init_train_and_eval_with_the_defaults(
    synth_root: Path, sim_factory: StartSim, tmp_path: Path
) -> None:
    """The README's first experiment: `data synth`'s default 36 videos, the simulator over loopback,
    `experiment init` with no flag beyond the required ones, then `train` and `eval` as printed."""
    sim = sim_factory(SimConfig(seed=0), synth_root / "questions.json")
    frames = {"SKILLHARNESS_AGENT__FRAMES__CACHE_DIR": str(tmp_path / "frames")}
    init = _cli(
        "experiment", "init",
        "--questions", str(synth_root / "questions.json"),
        "--videos", str(synth_root / "videos"),
        "--endpoint", sim.base_url,
        "--model", sim.model_name,
        "--holdout",
        "--out", "exp1",
        cwd=tmp_path, **frames,
    )  # fmt: skip
    assert init.returncode == 0, init.stderr[-3000:] + init.stdout[-3000:]
    said = " ".join(init.stdout.split())
    assert "sizes (no --sizes given): train 9, val 18, test 9 of the 36 video units" in said
    default = GateConfig().min_distinct
    assert f"train.gate.min_distinct: 5 in experiment.yaml (lowered from {default})" in said
    assert "preflight passed" in said
    train_line = next(line for line in init.stdout.splitlines() if line.startswith("skillharness train "))
    eval_line = next(line for line in init.stdout.splitlines() if line.startswith("skillharness eval "))
    doc = yaml.safe_load((tmp_path / "exp1" / "experiment.yaml").read_text())
    assert doc["train"]["gate"]["min_distinct"] == 5
    assert (
        f"Lowered from {default} by `experiment init`" in (tmp_path / "exp1" / "experiment.yaml").read_text()
    )

    trained = _cli(*train_line.partition("#")[0].split()[1:], cwd=tmp_path, **frames)
    assert trained.returncode == 0, trained.stderr[-3000:] + trained.stdout[-3000:]
    state = Checkpoint.load(run_folder(tmp_path / "exp1", "r1")).state
    assert state in (RunState.FINISHED, RunState.STOPPED_EARLY)
    evaluated = _cli(*eval_line.partition("#")[0].split()[1:], cwd=tmp_path, **frames)
    assert evaluated.returncode == 0, evaluated.stderr[-3000:] + evaluated.stdout[-3000:]
    assert "27 test questions" in " ".join(evaluated.stdout.split())
