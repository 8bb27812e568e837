"""``skillharness train``'s own flags, refused by name before anything is created: a run id the
store would refuse (it names folders: ``../x`` wrote outside the experiment, and the store's
refusal came as a traceback), a stop file that could never be created or is a folder; and every
resume command it prints repeats the ``--max-calls`` given (without it a resume had no limit)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_support import command_app, run_cli
from skillharness.commands.train import _resume_command, _resume_hint, register
from skillharness.config import Config
from skillharness.errors import ConfigError
from skillharness.train import TrainRequest

APP = command_app(register)


def _experiment(tmp_path: Path) -> Path:
    """An experiment folder whose YAML loads (the flags are checked before anything else is read)."""
    folder = tmp_path / "exp"
    folder.mkdir()
    config = folder / "experiment.yaml"
    config.write_text("store:\n  url: sqlite:///runs.sqlite\ncache:\n  url: sqlite:///cache.sqlite\n")
    return config


@pytest.mark.parametrize("run_id", ["../../escaped", "a/b", "x y", "-x", "", "r" * 153])
def test_a_run_id_the_store_refuses_is_refused_by_its_flag_before_anything_is_written(
    tmp_path: Path, run_id: str
) -> None:
    config = _experiment(tmp_path)
    for flag in ("--run-id", "--resume"):
        result = CliRunner().invoke(APP, ["train", "--config", str(config), "--skip-preflight", flag, run_id])
        assert isinstance(result.exception, ConfigError), result.output
        assert str(result.exception).startswith(f"invalid {flag} {run_id!r}: a run id is 1 to 152 letters")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["exp", "experiment.yaml"]


def test_an_invalid_run_id_prints_one_line_and_no_traceback(tmp_path: Path) -> None:
    config = _experiment(tmp_path)
    done = run_cli("train", "--config", str(config), "--skip-preflight", "--run-id", "../../escaped")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "invalid --run-id '../../escaped'" in " ".join(done.stderr.split())
    assert not (tmp_path / "escaped").exists()


@pytest.mark.parametrize(
    ("where", "said"),
    [
        ("nowhere/sub/STOP", "its folder {parent} does not exist"),
        ("a-file/STOP", "its folder {parent} is no folder"),
        ("a-folder", "is a folder"),
    ],
)
def test_a_stop_file_that_could_never_stop_the_run_is_refused(tmp_path: Path, where: str, said: str) -> None:
    config = _experiment(tmp_path)
    (tmp_path / "a-file").write_text("")
    (tmp_path / "a-folder").mkdir()
    stop = tmp_path / where
    args = ["train", "--config", str(config), "--skip-preflight", "--run-id", "r1", "--stop-file", str(stop)]
    result = CliRunner().invoke(APP, args)
    assert isinstance(result.exception, ConfigError), result.output
    assert str(result.exception).startswith(f"--stop-file {stop}")
    assert said.format(parent=stop.parent) in str(result.exception)
    assert not (config.parent / "runs").exists()


def test_every_resume_hint_repeats_the_max_calls_given(tmp_path: Path) -> None:
    config = tmp_path / "e.yaml"
    stop = tmp_path / "runs" / "r" / "STOP"
    request = TrainRequest(run_id="r", folder=stop.parent, stop_file=stop)
    resume = f"skillharness train --config {config} --resume r --max-calls 500"
    assert _resume_command(config, "r", 500) == resume
    assert _resume_command(config, "r", None) == resume.removesuffix(" --max-calls 500")
    assert _resume_hint(Config(), config, request, "interrupted", max_calls=500) == f"resume with: {resume}"
    assert _resume_hint(Config(), config, request, "stop_file", max_calls=500).endswith(resume)
    # The budget stop raises the limit instead of repeating it.
    limited = Config(train={"budget": {"max_calls": 500}})
    hint = _resume_hint(limited, config, request, "max_calls", max_calls=500)
    assert hint.endswith("--resume r --max-calls 1000")
    assert hint.count("--max-calls") == 1
