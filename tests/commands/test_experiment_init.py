"""``skillharness experiment init``: from the files on disk to an experiment ``train`` accepts."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from bench_support import Bench
from cli_support import command_app, run_cli
from net_support import free_port
from skillharness.commands import experiment
from skillharness.config import load_config
from skillharness.data import DataConfig, Pool, load_pool_questions
from skillharness.data.adapter import ADAPTERS_DIR
from skillharness.errors import ConfigError
from skillharness.sim import SimServer
from skillharness.train.loop.experiment import trained_task_types
from skillharness.train.loop.training import run_folder
from skillharness.train.preflight.checks import run_preflight
from skillharness.train.state.checkpoint import Checkpoint, RunState

_APP = command_app(experiment.register)


def _args(bench: Bench, out: Path, base_url: str, model: str, *extra: str) -> list[str]:
    return [
        "experiment", "init",
        "--questions", str(bench.questions),
        "--videos", str(bench.root / "videos"),
        "--subtitles", str(bench.root / "subtitles"),
        "--endpoint", base_url,
        "--model", model,
        "--out", str(out),
        "--sizes", "4,4,4",
        "--min-val-per-class", "0",
        "--seed", "3",
        *extra,
    ]  # fmt: skip


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, env={**os.environ, "COLUMNS": "160", **env})


def _snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file init writes, with its bytes and mtime (the stores are the checks', not init's)."""
    return {
        str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.startswith(("runs.sqlite", "cache.sqlite"))
    }


# A short training run: one epoch, small gates, one candidate, a fixed small McNemar guard.
_SHORT_TRAIN = {
    "SKILLHARNESS_TRAIN__EPOCHS": "1",
    "SKILLHARNESS_TRAIN__BATCH_SIZE": "4",
    "SKILLHARNESS_TRAIN__GATE__N_MAX": "16",
    "SKILLHARNESS_TRAIN__GATE__GUARD_DRAWS": "4",
    "SKILLHARNESS_TRAIN__EVOLVE__CANDIDATES": "1",
}


@pytest.mark.slow
def test_experiment_init_sets_up_an_experiment_that_train_runs_and_a_rerun_writes_nothing(
    bench: Bench, sim: SimServer, tmp_path: Path
) -> None:
    out = tmp_path / "exp"
    # This bench's val pool holds 1-4 questions per class: micro under train.gate.min_distinct's
    # default (20), so every class would be left out. The test lowers it, as a user with such a
    # pool would after reading the split's report.
    frames = {
        "SKILLHARNESS_AGENT__FRAMES__CACHE_DIR": str(tmp_path / "frames"),
        "SKILLHARNESS_TRAIN__GATE__MIN_DISTINCT": "1",
    }
    first = _cli(*_args(bench, out, sim.base_url, sim.model_name, "--holdout"), **frames)
    assert first.returncode == 0, first.stderr[-3000:] + first.stdout[-3000:]
    said = " ".join(first.stdout.split())
    for needle in ("answers", "split: wrote", "preflight passed", "gate plan --manifest", "P(acc)"):
        assert needle in said, needle
    assert "skillharness train --config" in said
    assert "--resume r1" in said
    config_path = out / "experiment.yaml"
    doc = yaml.safe_load(config_path.read_text())
    assert doc["data"]["pools"] == "split/pools.json"
    assert doc["agent"]["bundle"] == "bundle"
    for key in ("questions", "videos_dir", "subtitles_dir"):
        assert not Path(doc["data"][key]).is_absolute(), key
    assert doc["store"]["url"] == "sqlite:///runs.sqlite"
    assert doc["eval"]["run_holdout_eval"] is True
    # The design a run trains with is written out (docs/benchmarks.md measured these defaults).
    design = doc["train"]["gate"]["merge_credit"], doc["train"]["momentum"]["enabled"]
    assert design == ("split", False)
    assert doc["train"]["evolve"] == {"candidates": 3, "rank": "auto"}
    # The comments are the models' descriptions, not a copy that can drift.
    text = config_path.read_text()
    assert f"# {DataConfig.model_fields['questions'].description}\n  questions:" in text
    config = load_config(config_path)
    assert config.data.questions == bench.questions.resolve()
    assert config.data.pools == out / "split" / "pools.json"
    assert config.data.pools_sha256 is not None

    before = _snapshot(out)
    again = _cli(*_args(bench, out, sim.base_url, sim.model_name, "--holdout"), **frames)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "nothing written" in " ".join(again.stdout.split())
    assert _snapshot(out) == before

    trained = _cli(
        "train", "--config", str(config_path), "--resume", "r1", "--run-id", "r1", **frames, **_SHORT_TRAIN
    )
    assert trained.returncode == 0, trained.stderr[-3000:] + trained.stdout[-3000:]
    assert Checkpoint.load(run_folder(out, "r1")).state is RunState.FINISHED
    assert "holdout" in trained.stdout


def test_experiment_init_refuses_to_replace_a_different_experiment_and_writes_nothing(
    bench: Bench, shared_sim: SimServer, tmp_path: Path
) -> None:
    out = tmp_path / "exp"
    out.mkdir()
    mine = "# my own experiment\neval: {run_holdout_eval: false}\n"
    (out / "experiment.yaml").write_text(mine)
    result = CliRunner().invoke(
        _APP, _args(bench, out, shared_sim.base_url, shared_sim.model_name, "--holdout")
    )
    assert isinstance(result.exception, ConfigError), result.output
    assert "experiment.yaml" in str(result.exception)
    assert "--force" in str(result.exception)
    assert (out / "experiment.yaml").read_text() == mine
    assert sorted(p.name for p in out.iterdir()) == ["experiment.yaml"]  # no split, no bundle


def test_force_backs_up_a_hand_edited_bundle_as_it_backs_up_the_split_and_the_yaml(
    bench: Bench, shared_sim: SimServer, tmp_path: Path
) -> None:
    """The bundle is the one file here nothing regenerates: --force copies it aside first."""
    out = tmp_path / "exp"
    args = _args(bench, out, shared_sim.base_url, shared_sim.model_name, "--holdout")
    CliRunner().invoke(_APP, args)  # written before its preflight (which this tiny split fails)
    system = out / "bundle" / "system.md"
    edited = system.read_text() + "My hand edit.\n"
    system.write_text(edited)
    refused = CliRunner().invoke(_APP, args)
    assert "a bundle to bundle.bak-<time>/" in str(refused.exception)
    forced = CliRunner().invoke(_APP, [*args, "--force"])
    assert "bundle: backed up" in forced.output
    (backup,) = tmp_path.joinpath("exp").glob("bundle.bak-*")
    assert (backup / "system.md").read_text() == edited
    assert system.read_text() != edited  # the initial bundle again


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"--questions": "missing.json"}, "--questions"),
        ({"--videos": "no-such-folder"}, "--videos"),
        ({"--subtitles": "no-such-folder"}, "--subtitles"),
        ({"--holdout": None}, "decide the holdout"),
    ],
)
def test_experiment_init_names_the_input_at_fault_before_writing(
    bench: Bench, shared_sim: SimServer, tmp_path: Path, change: dict[str, str | None], needle: str
) -> None:
    args = _args(bench, tmp_path / "exp", shared_sim.base_url, shared_sim.model_name, "--holdout")
    for flag, value in change.items():
        at = args.index(flag)
        if value is None:
            del args[at]
        else:
            args[at + 1] = str(tmp_path / value)
    result = CliRunner().invoke(_APP, args)
    assert isinstance(result.exception, ConfigError), result.output
    assert needle in str(result.exception)
    assert not (tmp_path / "exp").exists()


def test_experiment_init_names_an_endpoint_that_refuses_connections(bench: Bench, tmp_path: Path) -> None:
    # The default retry policy: a refused connection gets 3 quick attempts, not the whole policy.
    dead = f"http://127.0.0.1:{free_port()}/v1"
    result = CliRunner().invoke(_APP, _args(bench, tmp_path / "exp", dead, "m", "--no-holdout"))
    assert isinstance(result.exception, ConfigError), result.output
    message = str(result.exception)
    assert f"--endpoint {dead} does not answer" in message
    assert f"nothing accepts them at {dead}/models (3 attempts 0.5 s apart)" in message
    assert not (tmp_path / "exp").exists()


@pytest.mark.slow
def test_experiment_init_prints_the_micro_classes_preflight_leaves_out(
    bench: Bench, shared_sim: SimServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One experiment, one rule: the split's micro classes are preflight's, in the same words."""
    # min_distinct 2 on this bench's 1-4 val questions per class: some classes micro, some trained.
    monkeypatch.setenv("SKILLHARNESS_TRAIN__GATE__MIN_DISTINCT", "2")
    monkeypatch.setenv("SKILLHARNESS_AGENT__FRAMES__CACHE_DIR", str(tmp_path / "frames"))
    monkeypatch.setenv("COLUMNS", "400")  # one line per micro class
    out = tmp_path / "exp"
    result = CliRunner().invoke(
        _APP, _args(bench, out, shared_sim.base_url, shared_sim.model_name, "--holdout")
    )
    assert result.exit_code == 0, result.output
    said = result.output.partition("Micro classes")[2].partition("split: wrote")[0]
    printed = dict(re.findall(r"^  - ([^:\n]+): (.+)$", said, flags=re.MULTILINE))
    assert printed, result.output
    config = load_config(out / "experiment.yaml")
    report = run_preflight(config, endpoint_timeout_s=3.0)
    assert report.ok, report.problems
    gate = {r.check: r.message for r in report.passed}["gate"]
    left_out = "; ".join(f"{name}: {reason}" for name, reason in sorted(printed.items()))
    # The list ends where the hint naming the settings that include them begins, in both places.
    hint = "(to train them anyway, set train.gate.min_distinct"
    assert f"micro classes left out: {left_out} {hint}" in gate
    assert "to train them anyway, set train.gate.min_distinct" in " ".join(result.output.split())
    # The loop's plan, from the train and val pools, trains what preflight names and none of them.
    chosen, frozen = load_pool_questions(config.data, (Pool.TRAIN, Pool.VAL), purpose="training")
    loop = trained_task_types(config, (*chosen[Pool.TRAIN], *chosen[Pool.VAL]), frozen)
    assert loop.names
    assert not set(loop.names) & set(printed)
    names = ", ".join(f"{c.task_type} (val {c.val})" for c in loop.trained)
    assert gate.startswith(f"trained (all non-micro task types): {names};")


def test_experiment_init_writes_the_benchmark_and_names_an_unknown_one(
    bench: Bench, shared_sim: SimServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLHARNESS_AGENT__FRAMES__CACHE_DIR", str(tmp_path / "frames"))
    monkeypatch.setenv("SKILLHARNESS_TRAIN__GATE__MIN_DISTINCT", "1")  # this bench's val is small
    unknown = _args(bench, tmp_path / "bad", shared_sim.base_url, shared_sim.model_name, "--holdout")
    result = CliRunner().invoke(_APP, [*unknown, "--benchmark", "videomm"])
    assert isinstance(result.exception, ConfigError), result.output
    assert "--benchmark" in str(result.exception)
    assert "unknown benchmark 'videomm'" in str(result.exception)
    assert not (tmp_path / "bad").exists()
    # A user's adapter file (here Video-MME's layout under another name) is written relative to the
    # experiment, read back absolute, and recorded in the split's manifest.
    adapter = tmp_path / "adapters" / "mine.yaml"
    adapter.parent.mkdir()
    adapter.write_text((ADAPTERS_DIR / "videomme.yaml").read_text().replace("name: videomme", "name: mine"))
    out = tmp_path / "exp"
    args = _args(bench, out, shared_sim.base_url, shared_sim.model_name, "--holdout")
    result = CliRunner().invoke(_APP, [*args, "--benchmark", str(adapter)])
    assert result.exit_code == 0, result.output
    assert (
        yaml.safe_load((out / "experiment.yaml").read_text())["data"]["benchmark"] == "../adapters/mine.yaml"
    )
    assert load_config(out / "experiment.yaml").data.benchmark == str(adapter.resolve())
    manifest = (out / "split" / "split_manifest.json").read_text()
    assert f'"benchmark": "{adapter.resolve()}"' in manifest
