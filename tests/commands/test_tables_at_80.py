"""Every table the commands print stays readable at 80 columns (and at 200): no number is cut.

80 columns is a common terminal and rich's width when output is piped. A cell cut by rich ends
in "…"; a table split for the width repeats its label column, so every formatted number of the
data must still appear whole on one line.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from skillharness.commands.eval_table import print_holdout
from skillharness.commands.fit_table import Col, FitTable
from skillharness.commands.gate_tables import plan_table
from skillharness.commands.scores_table import print_reference
from skillharness.commands.summary_table import print_summary
from skillharness.eval import (
    ArmCell,
    GroupRow,
    GroupScoreArm,
    GroupScores,
    HoldoutReport,
    PairedCell,
    TruthCell,
)
from skillharness.infer import ReferenceRow, ReferenceScore
from skillharness.infer.summary import Scored, summarize

_WIDTHS = (80, 200)
_TASKS = ("Temporal Perception", "Counting Problem", "Action Reasoning", "Object Recognition")


def _rendered(render: Callable[[Console], None], width: int) -> str:
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    render(console)
    return console.export_text()


def _assert_readable(text: str, width: int, numbers: list[str]) -> None:
    assert "…" not in text
    assert all(len(line) <= width for line in text.splitlines())
    missing = [n for n in numbers if n not in text]
    assert not missing, (width, missing, text)


def _arm(acc: float, low: float, high: float) -> ArmCell:
    return ArmCell(
        n_questions=300, n_samples=300, correct=int(300 * acc), accuracy=acc, low=low,
        high=high, method="cluster_bootstrap", per_question_low=low + 0.01, per_question_high=high - 0.01,
        per_question_method="wilson", design_effect=1.37, n_videos=100, parse_errors=7, infra_errors=0,
    )  # fmt: skip


def _row(grouping: str, label: str, k: int) -> GroupRow:
    paired = PairedCell(
        n_pairs=300 + k, gain=-0.0333 + k / 100, low=-0.1047, high=0.0981, method="cluster_bootstrap",
        per_question_low=-0.0912, per_question_high=0.0876, per_question_method="newcombe",
        design_effect=1.42, n_videos=100 + k, wins=23 + k, losses=31, p_value=0.000042, p_per_question=0.4127,
        p_holm=0.0125 if grouping == "task_type" else None,
    )  # fmt: skip
    truth = TruthCell(final=0.6512, baseline=0.6039 + k / 1000)
    return GroupRow(
        grouping=grouping, label=label, final=_arm(0.4567 + k / 100, 0.3912, 0.5133),
        baseline=_arm(0.4891, 0.4255, 0.5478), paired=paired, truth=truth,
    )  # fmt: skip


def _report() -> HoldoutReport:
    rows = [_row("overall", "all", 0)]
    rows += [_row("task_type", task, k) for k, task in enumerate(_TASKS, 1)]
    rows += [_row("duration", d, k) for k, d in enumerate(("short", "medium", "long"), 1)]
    return HoldoutReport(
        eval_id="eval-1", purpose="final", train_run_id="train-1", final_run_id="f", baseline_run_id="b",
        final_bundle_hash="h1", baseline_bundle_hash="h0", final_label="v0007", baseline_label="v0000",
        pools_sha256="p", confidence=0.95, samples=1, temperature=0.0, test_questions=300, rows=tuple(rows),
        test_pool_runs=1, simulator=True,
    )  # fmt: skip


def _holdout_numbers(report: HoldoutReport) -> list[str]:
    """Every interval, p value and gain as the eval table formats it."""
    out: list[str] = []
    for row in report.rows:
        f, b, d = row.final, row.baseline, row.paired
        for arm in (f, b):
            out.append(f"{100 * arm.accuracy:.1f} [{100 * arm.low:.1f}, {100 * arm.high:.1f}]")  # type: ignore[operator]
        out.append(f"{100 * d.gain:+.1f} [{100 * d.low:+.1f}, {100 * d.high:+.1f}]")  # type: ignore[operator]
        out.append(f"[{100 * d.per_question_low:+.1f}, {100 * d.per_question_high:+.1f}]")  # type: ignore[operator]
        out += [
            f"{d.design_effect:.2f}",
            f"{d.wins}/{d.losses}",
            f"{d.p_value:.1e}",
            f"{d.p_per_question:.3g}",
        ]
        out += [f"{d.p_holm:.3g}"] if d.p_holm is not None else []
        t = row.truth
        assert t is not None
        out.append(f"{100 * t.final:.1f} / {100 * t.baseline:.1f} / {100 * t.gain:+.1f}")
    return out + list(_TASKS)


@pytest.mark.parametrize("width", _WIDTHS)
def test_holdout_tables_keep_every_number_whole(width: int) -> None:
    report = _report()
    text = _rendered(lambda console: print_holdout(console, report), width)
    _assert_readable(text, width, _holdout_numbers(report))
    if width == 80:  # too wide for one table: the label column is repeated in the continuation
        assert "Per task type (continued)" in text
        assert text.count("Temporal Perception") >= 2
    else:
        assert "(continued)" not in text


@pytest.mark.parametrize("width", _WIDTHS)
def test_group_score_table_keeps_every_number_whole(width: int) -> None:
    groups = GroupScores(
        final=GroupScoreArm(score=0.4213, low=0.3377, high=0.5102, n_groups=75, left_out=2),
        baseline=GroupScoreArm(score=0.3865, low=0.3031, high=0.4718, n_groups=75, left_out=1),
        n_pairs=74, gain=0.0348, low=-0.0411, high=0.1129,
    )  # fmt: skip
    report = _report().model_copy(update={"group_scores": groups})
    text = _rendered(lambda console: print_holdout(console, report), width)
    numbers = ["42.1 [33.8, 51.0]", "38.6 [30.3, 47.2]", "+3.5 [-4.1, +11.3]", "74 groups"]
    _assert_readable(text, width, numbers + _holdout_numbers(report))


@pytest.mark.parametrize("width", _WIDTHS)
def test_reference_score_table_keeps_every_number_whole(width: int) -> None:
    rows = [ReferenceRow("all", 0.4213, 0.3377, 0.5102, 800)]
    rows += [
        ReferenceRow(task, 0.3 + k / 20, 0.21 + k / 20, 0.41 + k / 20, 60 + k)
        for k, task in enumerate(_TASKS)
    ]
    reference = ReferenceScore(
        task="videomme_v2", metric="videomme_v2_overall_score", rule="group_score", scale=100, digits=None,
        unit="groups", method="video bootstrap", reported="overall", rows=tuple(rows), left_out=3,
    )  # fmt: skip
    accuracy = summarize(_scored(), 0.95)
    text = _rendered(lambda console: print_reference(console, reference, accuracy, "95% CI"), width)
    numbers = [
        f"{reference.shown(r.value)} ({reference.shown(r.low)}–{reference.shown(r.high)})" for r in rows
    ]
    numbers += [f"{100 * c.ci_low:.1f}–{100 * c.ci_high:.1f}" for c in accuracy["task_type"]]
    _assert_readable(text, width, numbers + list(_TASKS))


def _scored() -> list[Scored]:
    return [
        Scored(task, duration, "ok", i % 3 != 0)
        for task in _TASKS
        for duration in ("short", "long")
        for i in range(7)
    ]


@pytest.mark.parametrize("width", _WIDTHS)
def test_summary_table_keeps_every_number_whole(width: int) -> None:
    summary = summarize(_scored(), 0.95)
    text = _rendered(lambda console: print_summary(console, summary, {"ok": 56}, "run r"), width)
    numbers = [f"{100 * c.ci_low:.1f}–{100 * c.ci_high:.1f}" for cells in summary.values() for c in cells]
    _assert_readable(text, width, numbers + list(_TASKS))


@pytest.mark.parametrize("width", _WIDTHS)
def test_gate_plan_table_keeps_every_number_whole(width: int) -> None:
    from skillharness.train import plan_classes
    from skillharness.train.config import GateConfig

    distinct = dict.fromkeys(_TASKS, 40)
    deltas = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3)
    plans = plan_classes(distinct, GateConfig(), effects=deltas, discordance=0.3, runs=20, seed=1)
    table = plan_table("gate plan", plans, distinct, deltas, 10)
    text = _rendered(table.print, width)
    numbers = [f"{pw:.2f}" for p in plans for _, pw in p.power]
    _assert_readable(text, width, numbers + [f"Δ={d:g}" for d in deltas] + list(_TASKS))


@pytest.mark.parametrize("width", _WIDTHS)
def test_free_text_wraps_whole_and_numbers_stay_on_one_line(width: int) -> None:
    evidence = "gate accepted at wealth 24.31 after 118 draws; the skill now names the counting steps " * 2
    table = FitTable(
        "accepted edits", [Col("version", "left"), Col("evidence", "left", wrap=True), Col("effect")]
    )
    table.add_row("v0012", evidence, "+12.3% [-4.5, +28.9]")
    text = _rendered(table.print, width)
    _assert_readable(text, width, ["v0012", "+12.3% [-4.5, +28.9]", "24.31", "wealth"])
    words = re.findall(r"[a-z]+", " ".join(text.split()))
    assert "wea" not in words
    assert "weal" not in words


def test_no_command_builds_a_rich_table_of_its_own() -> None:
    """Every table goes through FitTable (the one home of the width rules)."""
    commands = Path(__file__).parents[2] / "src" / "skillharness" / "commands"
    own = [
        p.name
        for p in commands.glob("*.py")
        if p.name != "fit_table.py" and re.search(r"\bTable\(", p.read_text())
    ]
    assert own == []
