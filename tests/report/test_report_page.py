"""The report of a training run: every section, numbers equal to the store's, partial runs, size."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_html import Page, parse_page
from report_support import Written, build_training_store, finish_open, val_questions

from skillharness.errors import StoreError
from skillharness.eval.report import SECTIONS, ReportData, build_report
from skillharness.store import RunStatus
from skillharness.train.config import GateConfig


def _url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'runs.sqlite'}"


def _check_headline(page: Page, written: Written) -> None:
    b_correct, n = written.baseline
    f_correct, _ = written.final or (0, 0)
    assert float(page["val-baseline"].attrs["data-value"]) == pytest.approx(b_correct / n)
    assert f"{b_correct}/{n}" in page["val-baseline"].text
    assert float(page["val-final"].attrs["data-value"]) == pytest.approx(f_correct / n)
    assert f"{f_correct}/{n}" in page["val-final"].text
    # the test pool's headline comes from the stored holdout metric (9/20 and 13/20)
    assert float(page["test-baseline"].attrs["data-value"]) == pytest.approx(9 / 20)
    assert float(page["test-final"].attrs["data-value"]) == pytest.approx(13 / 20)
    assert "p=0.2188" in page["headline"].text
    # McNemar on val pairs the two fresh-sample val runs (final["val_runs"]), question by question
    pairs = zip(written.baseline_answers, written.final_answers, strict=True)
    flips = [(before[2], after[2]) for before, after in pairs]
    b = sum(1 for x, y in flips if x and not y)
    c = sum(1 for x, y in flips if y and not x)
    test_row, val_row = (r.find_all("td") for r in page["headline"].find_all("tr")[1:3])
    assert test_row[0].text.strip() == "test"  # the holdout is the headline: its row comes first
    assert val_row[0].text.strip() == "val selected on val (optimistic)"
    assert f"b={b} c={c}" in val_row[4].text
    assert f"pairs={n}" in val_row[4].text
    assert "p_by_video=0.5000" in val_row[4].text
    per_class = written.metrics["val_scores"]["final"]["per_class"]
    class_rows = page["val-by-class"].find_all("tr")[1:]
    assert [r.find_all("td")[0].text for r in class_rows] == sorted(per_class)
    for row in class_rows:
        correct, total = per_class[row.find_all("td")[0].text]
        assert float(row.find_all("td")[2].attrs["data-value"]) == pytest.approx(correct / total)
    alpha = written.metrics["alpha_spent"]["sum"]
    assert float(page["alpha-sum"].attrs["data-value"]) == pytest.approx(alpha)
    assert written.metrics["alpha_spent"]["bound"] in page["run-guarantee"].text
    assert page["pools-sha256"].text == "ab12" * 16


def _check_gates_and_edits(page: Page, written: Written) -> None:
    rows = page["gate-table"].find_all("tr")[1:]
    assert len(rows) == len(written.decisions) == 12
    for decision in written.decisions:
        row = page[f"gate-row-{decision.gate_index}"]
        cells = [c.text.strip() for c in row.find_all("td")]
        assert cells[3] == decision.target
        # A proposal refused before any draw is no failed test: it reads apart (issue 49 item 6).
        shown = "refused before testing" if decision.reason == "reject_invalid" else decision.reason
        assert cells[4] == shown
        assert int(cells[5]) == len(written.observations[decision.gate_index])
        edit = page[f"edit-{decision.gate_index}"]
        assert edit.attrs["data-reason"] == shown
        assert decision.rationale in edit.text
    accepted = [d for d in written.decisions if d.reason == "accept"]
    assert f"{len(accepted)} accepted" in page["gates"].text
    added = page[f"edit-{accepted[0].gate_index}"].find_all("div", cls="add")
    assert any(accepted[0].rationale in line.text for line in added)  # the diff shows the added rule


def _check_diagnosis_and_cost(page: Page, written: Written) -> None:
    assert int(page["gate-draws"].text) == sum(len(obs) for obs in written.observations.values())
    assert len(page["waterfall"].find_all("tr")) - 1 == len(written.steps)
    defects = sum(1 for d in written.diagnoses if d.cause == "defect")
    verdict_cells = page["verdicts"].find_all("td", cls="n")
    assert sum(int(c.text) for c in verdict_cells) == len(written.diagnoses) > defects
    agent = [
        r for r in page["overview"].find_all("tr") if r.find_all("td") and r.find_all("td")[0].text == "agent"
    ]
    assert agent[0].find_all("td")[1].text == "812"
    first_end = page["epoch-ends"].find_all("td", cls="n")[0].attrs["data-value"]
    assert first_end == str(written.metrics["epoch_end/001"]["accuracy"])


async def test_every_section_is_present_and_numbers_equal_the_store(tmp_path: Path) -> None:
    url = _url(tmp_path)
    written = await build_training_store(url, "train-a", val_questions(30), epochs=2, steps=2, draws=24)
    files = build_report(url, "train-a", tmp_path / "out" / "report.html", gate=GateConfig())
    page = parse_page(files.html.read_text())

    for ident, title in SECTIONS:
        assert page[ident].tag == "section"
        assert title in page[ident].text
    assert "partial-banner" not in page.by_id
    _check_headline(page, written)
    _check_gates_and_edits(page, written)
    _check_diagnosis_and_cost(page, written)

    data = ReportData.model_validate_json(files.json.read_text())
    assert files.json == files.html.with_suffix(".json")
    assert len(data.gates) == 12
    assert not data.partial
    val = next(h for h in data.headlines if h.pool == "val")
    assert val.baseline is not None
    assert val.baseline.correct == written.baseline[0]
    assert [p.draw_index for p in data.gates[0].path] == list(range(24))
    assert data.rollouts_by_purpose["rollout"] == 4 * 12
    assert json.loads(files.json.read_text())["run"]["run_id"] == "train-a"


async def test_a_run_in_progress_renders_and_says_it_is_partial(tmp_path: Path) -> None:
    url = _url(tmp_path)
    written = await build_training_store(
        url, "train-b", val_questions(18), epochs=2, steps=1, draws=8, status=RunStatus.RUNNING
    )
    try:
        files = build_report(url, "train-b", tmp_path / "report.html")
    finally:
        await finish_open(written)
    page = parse_page(files.html.read_text())
    banner = page["partial-banner"].text
    assert "run status is running" in banner
    assert "no final metric" in banner
    b_correct, n = written.baseline  # read from the baseline child run: no val_scores metric yet
    assert float(page["val-baseline"].attrs["data-value"]) == pytest.approx(b_correct / n)
    assert "not yet" in page["val-final"].text
    assert len(page["gate-table"].find_all("tr")) - 1 == len(written.decisions) == 6
    assert len(page["epoch-ends"].find_all("tr")) - 1 == 1  # the last epoch has not ended
    assert "No held-out evaluation" in page["holdout"].text
    assert ReportData.model_validate_json(files.json.read_text()).partial


async def test_an_interrupted_run_is_partial(tmp_path: Path) -> None:
    url = _url(tmp_path)
    await build_training_store(
        url, "train-c", val_questions(12), epochs=1, steps=1, status=RunStatus.INTERRUPTED
    )
    files = build_report(url, "train-c", tmp_path / "report.html")
    banner = parse_page(files.html.read_text())["partial-banner"].text
    assert "interrupted" in banner


async def test_a_three_epoch_report_stays_under_5_mb(tmp_path: Path) -> None:
    url = _url(tmp_path)
    written = await build_training_store(url, "train-d", val_questions(60), epochs=3, steps=6, draws=128)
    files = build_report(url, "train-d", tmp_path / "report.html", gate=GateConfig())
    size = files.html.stat().st_size
    assert len(written.decisions) == 54
    assert 100_000 < size < 5 * 1024 * 1024, size
    print(f"3 epochs x 6 steps, 54 decisions, 128 draws per gate: page {size / 1e6:.2f} MB")


def test_an_unknown_run_is_a_clear_error(tmp_path: Path) -> None:
    url = _url(tmp_path)
    from skillharness.store import RunStore

    RunStore.open(url).close()
    with pytest.raises(StoreError, match="no run 'nope'"):
        build_report(url, "nope", tmp_path / "report.html")
    assert not (tmp_path / "report.html").exists()
