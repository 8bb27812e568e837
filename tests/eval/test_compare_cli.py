"""``skillharness compare RUN_A RUN_B`` as a user runs it: tables at 80 columns, --json, --html, refusals."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from compare_support import Experiment, chance, infer_run, training_run, write_experiment
from report_html import parse_page

from cli_support import run_cli
from skillharness.eval import RunComparison, compare_runs, load_test_pool
from skillharness.store import RunReader

# Piped output: rich lays tables out for 80 columns unless told otherwise.
PIPED = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}


@pytest.fixture(scope="module")
def exp(tmp_path_factory: pytest.TempPathFactory) -> Experiment:
    exp = write_experiment(tmp_path_factory.mktemp("compare-cli"))
    training_run(exp, "train-a", chance(0.45, seed=1))
    training_run(exp, "train-none", None)
    infer_run(exp, "infer-test", chance(0.7, seed=3))
    return exp


def _signed(value: float | None) -> str:
    assert value is not None
    return f"{100 * value:+.1f}"


@pytest.mark.slow
def test_compare_prints_fitting_tables_and_writes_json_and_page(exp: Experiment, tmp_path: Path) -> None:
    out, page = tmp_path / "out" / "compare.json", tmp_path / "out" / "compare.html"
    result = run_cli(
        "compare", "train-a", "infer-test", "--config", str(exp.config_path),
        "--json", str(out), "--html", str(page), env=PIPED,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    text = result.stdout
    shown_lines = [line for line in text.splitlines() if not line.startswith(("json: ", "page: "))]
    assert all(len(line) <= 80 for line in shown_lines), text  # a path printed last is as long as it is
    assert "…" not in text
    for expected in ("Overall", "Per task type", "McNemar", "p by video", "Holm p", "A = train-a"):
        assert expected in text
    written = RunComparison.model_validate_json(out.read_text())
    with RunReader(exp.config.store) as reader:
        assert written == compare_runs(reader, load_test_pool(exp.config), "train-a", "infer-test")
    d = written.overall.paired
    assert f"{_signed(d.gain)} [{_signed(d.low)}, {_signed(d.high)}]" in text
    assert f"{written.overall.mcnemar_b}/{written.overall.mcnemar_c}" in text
    shown = parse_page(page.read_text())
    assert shown["curves-a"].find_all("svg")
    assert "it trained nothing" in shown["curves-b"].text
    assert f"json: {out}" in text
    assert f"page: {page}" in text


@pytest.mark.slow
def test_compare_refuses_a_run_without_a_holdout_with_the_reason(exp: Experiment, tmp_path: Path) -> None:
    out = tmp_path / "compare.json"
    result = run_cli(
        "compare", "train-none", "train-a", "--config", str(exp.config_path), "--json", str(out), env=PIPED
    )
    assert result.returncode == 2
    assert "error: run 'train-none' is a training run with no holdout" in result.stderr
    assert "skillharness eval --config EXPERIMENT --run train-none" in result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists()


@pytest.mark.slow
def test_compare_replaces_its_own_outputs_and_refuses_any_other(exp: Experiment, tmp_path: Path) -> None:
    store = Path(str(exp.config.store.url).removeprefix("sqlite:///"))
    out, page = tmp_path / "c.json", tmp_path / "c.html"
    args = ("compare", "train-a", "infer-test", "--config", str(exp.config_path))
    assert run_cli(*args, "--json", str(out), "--html", str(page), env=PIPED).returncode == 0
    again = run_cli(*args, "--json", str(out), "--html", str(page), env=PIPED)
    assert again.returncode == 0, again.stderr  # a comparison replaces an earlier comparison

    before = store.read_bytes()
    for flag in ("--json", "--html"):
        refused = run_cli(*args, flag, str(store), env=PIPED)
        assert refused.returncode == 2
        assert f"error: {flag} {store}: exists and is not an earlier output of this command" in refused.stderr
        assert "Traceback" not in refused.stderr
        assert store.read_bytes() == before  # the run store is untouched
    folder = run_cli(*args, "--json", str(tmp_path), env=PIPED)
    assert folder.returncode == 2
    assert "is a folder; name a file" in folder.stderr
    other = tmp_path / "notes.json"
    other.write_text("[1, 2]")
    forced = run_cli(*args, "--json", str(other), "--force", env=PIPED)
    assert forced.returncode == 0, forced.stderr
    assert RunComparison.model_validate_json(other.read_text()).a.run_id == "train-a"
