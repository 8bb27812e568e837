"""``skillharness report`` with a config kept outside the run's experiment folder."""

from __future__ import annotations

from pathlib import Path

import yaml
from report_support import build_training_store
from typer.testing import CliRunner

from bench_support import Bench
from cli_support import command_app
from skillharness.commands import report as report_cmd
from skillharness.data.loader import load_questions
from skillharness.eval.report import ReportData
from skillharness.sim import SimServer


async def test_the_simulator_truth_reads_the_workspace_the_run_recorded(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    questions = load_questions(bench.questions)
    val = [(q.question_id, q.task_type) for q in questions[:12]]
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    workspace = tmp_path / "experiment" / "runs" / "train-w" / "workspace"
    await build_training_store(url, "train-w", val, epochs=1, steps=1, draws=8, workspace=workspace)
    # The same store read through a config in another folder (a copy, a shared store): it has no
    # runs/train-w/workspace of its own, and the run's final metric names where its bundles are.
    config = tmp_path / "elsewhere" / "experiment.yaml"
    config.parent.mkdir()
    config.write_text(yaml.safe_dump({"store": {"url": url}}))
    out = tmp_path / "r.html"
    args = ["report", "--config", str(config), "--run", "train-w", "--out", str(out)]
    done = CliRunner().invoke(command_app(report_cmd.register), [*args, "--oracle-url", sim.base_url])
    assert done.exception is None, done.output
    assert done.exit_code == 0, done.output
    data = ReportData.model_validate_json(out.with_suffix(".json").read_text())
    assert data.simulator_truth
    assert any(h.final is not None and h.final.sim_truth is not None for h in data.headlines)
