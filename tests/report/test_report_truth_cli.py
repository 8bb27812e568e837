"""Simulator truth beside the measured numbers (a real simulator over HTTP), and the command line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from report_html import parse_page
from report_support import build_training_store, val_questions
from typer.testing import CliRunner

from bench_support import Bench
from cli_support import command_app
from skillharness.commands import report as report_cmd
from skillharness.commands.demo_report import edit_scope, points
from skillharness.data import slugify
from skillharness.data.loader import load_questions
from skillharness.errors import ConfigError, StoreError
from skillharness.eval.report import ReportData, build_report
from skillharness.sim import SimServer
from skillharness.sim.oracle import BundleText
from skillharness.skills import Bundle, inserted_lines, with_line


async def test_simulator_truth_sits_beside_each_number(tmp_path: Path, bench: Bench, sim: SimServer) -> None:
    questions = load_questions(bench.questions)
    val = [(q.question_id, q.task_type) for q in questions[:30]]
    test = [(q.question_id, q.task_type) for q in questions[30:45]]
    workspace = tmp_path / "runs" / "train-s" / "workspace"
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    written = await build_training_store(
        url, "train-s", val, epochs=1, steps=2, draws=8, workspace=workspace, test=test
    )
    files = build_report(url, "train-s", tmp_path / "report.html", oracle_url=sim.base_url)
    data = ReportData.model_validate_json(files.json.read_text())

    assert data.simulator_truth
    final_version = written.metrics["final"]["version"]
    assert final_version != "v0000"  # the builder committed its accepted edits
    oracle = sim.oracle
    val_ids, test_ids = [q for q, _ in val], [q for q, _ in test]
    for headline, ids in zip(data.headlines, (test_ids, val_ids), strict=True):  # the holdout first
        assert headline.baseline is not None
        assert headline.final is not None
        base_truth = oracle.expected_accuracy(Bundle.load(workspace / "v0000"), ids)
        final_truth = oracle.expected_accuracy(Bundle.load(workspace / final_version), ids)
        assert headline.baseline.sim_truth == pytest.approx(base_truth)
        assert headline.final.sim_truth == pytest.approx(final_truth)
    for gate in (g for g in data.gates if g.accepted):
        assert gate.version_after is not None
        name = gate.target.split(":", 1)[1]
        ids = [q for q, t in val if slugify(t) == name]
        before, after = (
            Bundle.load(workspace / gate.version_before),
            Bundle.load(workspace / gate.version_after),
        )
        expected = oracle.edit_effect(before, after, ids).delta if ids else None
        assert gate.sim_delta == (pytest.approx(expected) if ids else None)
        assert edit_scope(sim, gate.target, val_ids) == ids  # the demo reads its truth on the same
        # Harm per line: each inserted line scored alone against the document it came into.
        lines = inserted_lines(gate.document_before, gate.document_after or "")
        assert [t.line for t in gate.sim_lines or ()] == (list(lines) if ids else [])
        for truth_of_line in gate.sim_lines or ():
            alone = BundleText.from_bundle(before)
            skills = {**alone.skills, name: with_line(gate.document_before, truth_of_line.line)}
            alone = alone.model_copy(update={"skills": skills})
            assert truth_of_line.delta == pytest.approx(oracle.edit_effect(before, alone, ids).delta)
    scored = [g for g in data.gates if g.accepted and g.sim_lines]
    assert scored, "no accepted edit inserted a line: per-line harm is untested"

    page = parse_page(files.html.read_text())
    truth = page["val-baseline"].find_all("span", cls="sim")
    assert float(truth[0].attrs["data-sim"]) == pytest.approx(data.headlines[1].baseline.sim_truth)
    assert "scored truth" in truth[0].text
    assert "true Δ (sim)" in page["gate-table"].text
    for gate in scored:  # one number and one unit for an edit's true effect, report and demo alike
        cells = [c.text.strip() for c in page[f"gate-row-{gate.gate_index}"].find_all("td")]
        assert cells[11].startswith(points(gate.sim_delta or 0.0))
    lines_total = sum(len(g.sim_lines or ()) for g in scored)
    assert f"of the {lines_total} lines the {len(scored)} accepted edit(s) inserted" in page["verdict"].text

    # The truth is scored on the run's agent path: with one turn and get_frames offered, every plan
    # starts with a tool call, so nothing is ever answered.
    one_turn = {"tools": True, "frames": True, "subtitles": True, "max_steps": 1, "bundle_in_prompt": True}
    files = build_report(url, "train-s", tmp_path / "one.html", oracle_url=sim.base_url, agent_path=one_turn)
    short = ReportData.model_validate_json(files.json.read_text())
    assert {h.final.sim_truth for h in short.headlines if h.final is not None} == {0.0}


async def _experiment_with_a_training_run(tmp_path: Path) -> Path:
    """A config whose SQLite store holds training run ``train-cli`` (and its children)."""
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    await build_training_store(url, "train-cli", val_questions(12), epochs=1, steps=1, draws=8)
    config = tmp_path / "experiment.yaml"
    config.write_text(yaml.safe_dump({"store": {"url": url}}))
    return config


async def test_report_command_writes_both_files(tmp_path: Path) -> None:
    config = await _experiment_with_a_training_run(tmp_path)
    out = tmp_path / "out" / "r.html"
    runner, app = CliRunner(), command_app(report_cmd.register)

    done = runner.invoke(app, ["report", "--config", str(config), "--run", "train-cli", "--out", str(out)])

    assert done.exit_code == 0, done.output
    assert str(out) in done.output
    assert out.is_file()
    assert ReportData.model_validate_json(out.with_suffix(".json").read_text()).run.run_id == "train-cli"
    default = runner.invoke(app, ["report", "--config", str(config), "--run", "train-cli"])
    assert default.exit_code == 0, default.output
    assert (tmp_path / "runs" / "train-cli" / "report.html").is_file()

    missing = runner.invoke(app, ["report", "--config", str(config), "--run", "nope"])
    assert isinstance(missing.exception, StoreError)  # cli.main prints it as one line, exit 2
    assert "no run 'nope'" in str(missing.exception)
    child = runner.invoke(app, ["report", "--config", str(config), "--run", "train-cli.baseline"])
    assert isinstance(child.exception, StoreError)
    assert "is an infer run, part of training run 'train-cli', not a training run" in str(child.exception)
    assert not (tmp_path / "runs" / "train-cli.baseline").exists()


async def test_report_replaces_its_own_files_and_refuses_any_other(tmp_path: Path) -> None:
    config = await _experiment_with_a_training_run(tmp_path)
    pools = tmp_path / "split" / "pools.json"
    pools.parent.mkdir()
    pools.write_text('{"train": [], "val": [], "test": []}')
    runner, app = CliRunner(), command_app(report_cmd.register)

    def report(*extra: str) -> Any:
        return runner.invoke(app, ["report", "--config", str(config), "--run", "train-cli", *extra])

    page = tmp_path / "r.html"
    assert report("--out", str(page)).exit_code == 0
    first = (page.stat().st_ino, page.with_suffix(".json").stat().st_ino)
    again = report("--out", str(page))  # a report replaces an earlier report
    assert again.exit_code == 0, again.output
    assert ReportData.model_validate_json(page.with_suffix(".json").read_text()).run.run_id == "train-cli"
    assert (page.stat().st_ino, page.with_suffix(".json").stat().st_ino) != first  # both written anew

    # The split's pools.json would be the page's JSON twin; the config would be the page itself.
    for out, victim in ((pools.with_suffix(".html"), pools), (config, config)):
        before = victim.read_bytes()
        refused = report("--out", str(out))
        assert isinstance(refused.exception, ConfigError), refused.output
        assert "is not an earlier output of this command" in str(refused.exception)
        assert "--force" in str(refused.exception)
        assert victim.read_bytes() == before
    twin = report("--out", str(tmp_path / "r.json"))
    assert isinstance(twin.exception, ConfigError)
    assert "name an .html file" in str(twin.exception)

    forced = report("--out", str(pools.with_suffix(".html")), "--force")
    assert forced.exit_code == 0, forced.output
    assert ReportData.model_validate_json(pools.read_text()).run.run_id == "train-cli"
