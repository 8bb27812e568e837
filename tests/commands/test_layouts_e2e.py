"""Every built-in layout end to end, offline: ``data synth --layout`` -> ``experiment init
--benchmark`` -> ``split verify`` -> ``infer`` -> ``train`` against the simulator -> ``eval`` ->
``report``, each through the CLI as a user types it, with ``experiment init``'s defaults.

EgoSchema (five options, one task type) and MVBench (twenty tasks, clip windows inside longer
videos) are the issue's 5-option and 20-task benchmarks: their eval and infer tables are read at
80 columns (no line longer, no task name cut).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from cli_support import command_app
from skillharness.commands import data, experiment, infer, report, split, train
from skillharness.commands import eval as eval_commands
from skillharness.data import builtin_adapters
from skillharness.data.synth_layout import synthetic_questions
from skillharness.sim import SimConfig, SimServer
from skillharness.train.loop.training import run_folder
from skillharness.train.state.checkpoint import Checkpoint, RunState

pytestmark = pytest.mark.slow

_LAYOUTS = sorted(builtin_adapters())
# Enough videos for a split whose val pool holds a few questions of every task type (MVBench's
# twenty need the most); one question per video for EgoSchema, four for Video-MME-v2.
_VIDEOS = {"egoschema": 48, "mvbench": 80}
_DEFAULT_VIDEOS = 24
# The 5-option and 20-task benchmarks train with every default; the others one epoch.
_DEFAULTS = ("egoschema", "mvbench")
_WIDTH = 80
_APP = command_app(
    data.register, experiment.register, split.register, infer.register, train.register,
    eval_commands.register, report.register,
)  # fmt: skip


@dataclass(frozen=True)
class Layout:
    name: str
    root: Path
    questions: Path


@pytest.fixture(scope="module", params=_LAYOUTS)
def layout(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Layout:
    """One synthesised benchmark per layout, shared by the module's tests."""
    name = request.param
    root = tmp_path_factory.mktemp(f"synth-{name}") / "bench"
    videos = _VIDEOS.get(name, _DEFAULT_VIDEOS)
    made = _invoke("data", "synth", "--out", str(root), "--videos", str(videos), "--layout", name)
    assert made.exit_code == 0, made.output
    questions, written_as = synthetic_questions(root)
    assert written_as == name
    return Layout(name, root, questions)


def _invoke(*args: str, columns: int = 200) -> Result:
    result = CliRunner().invoke(_APP, list(args), env={"COLUMNS": str(columns)})
    if result.exit_code and result.exc_info and not isinstance(result.exception, SystemExit):
        # A crash, not a refusal: its traceback says where.
        raise AssertionError(f"{' '.join(args[:2])}: {result.output[-2000:]}") from result.exception
    return result


def _next_command(output: str, verb: str) -> list[str]:
    line = next(line for line in output.splitlines() if line.startswith(f"skillharness {verb} "))
    return line.partition("#")[0].split()[1:]


def _at_80(output: str, task_types: set[str]) -> None:
    """Every line fits 80 columns, and each task type named in the table is named whole."""
    long = [line for line in output.splitlines() if len(line) > _WIDTH]
    assert not long, long
    assert "…" not in output, output
    shown = {t for t in task_types if t in output}
    assert shown, output


def test_a_layout_runs_init_infer_train_eval_and_report(
    layout: Layout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SKILLHARNESS_AGENT__FRAMES__CACHE_DIR", str(tmp_path / "frames"))
    if layout.name not in _DEFAULTS:  # a few steps show the adapter works; the defaults, below
        monkeypatch.setenv("SKILLHARNESS_TRAIN__EPOCHS", "1")
    checked = _invoke("data", "check", "--benchmark", layout.name, str(layout.questions))
    assert checked.exit_code == 0, checked.output
    truth = json.loads((layout.root / "truth.json").read_text())
    task_types = {fact["task_type"] for fact in truth.values()}
    with SimServer(SimConfig(seed=0), questions=layout.questions, benchmark=layout.name) as sim:
        assert len(sim.world.questions) == len(truth)
        init = _invoke(
            "experiment", "init",
            "--questions", str(layout.questions),
            "--benchmark", layout.name,
            "--videos", str(layout.root / "videos"),
            "--subtitles", str(layout.root / "subtitles"),
            "--endpoint", sim.base_url,
            "--model", sim.model_name,
            "--holdout",
            "--out", "exp",
        )  # fmt: skip
        assert init.exit_code == 0, init.output
        assert "preflight passed" in init.output
        config = str(tmp_path / "exp" / "experiment.yaml")
        verified = _invoke("split", "verify", str(tmp_path / "exp" / "split"))
        assert verified.exit_code == 0, verified.output
        inferred = _invoke("infer", "--config", config, "--pool", "val", "--run-id", "base", columns=_WIDTH)
        assert inferred.exit_code == 0, inferred.output
        trained = _invoke(*_next_command(init.output, "train"))
        assert trained.exit_code == 0, trained.output
        run_id = re.search(r"--run-id (\S+)", " ".join(_next_command(init.output, "train")))
        run = run_id.group(1) if run_id else "r1"
        state = Checkpoint.load(run_folder(tmp_path / "exp", run)).state
        assert state in (RunState.FINISHED, RunState.STOPPED_EARLY)
        evaluated = _invoke(*_next_command(init.output, "eval"), columns=_WIDTH)
        assert evaluated.exit_code == 0, evaluated.output
        reported = _invoke("report", "--config", config, "--run", run, "--oracle-url", sim.base_url)
        assert reported.exit_code == 0, reported.output
    assert (tmp_path / "exp" / "runs" / run / "report.html").is_file()
    if layout.name in _DEFAULTS:
        _at_80(inferred.output, task_types)
        _at_80(evaluated.output, task_types)
