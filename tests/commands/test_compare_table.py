"""``skillharness compare``'s tables stay readable at 80 columns (and at 200): no number is cut."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from skillharness.commands.compare import print_comparison
from skillharness.eval import ArmCell, ComparedRun, CompareRow, PairedCell, RunComparison

_TASKS = ("Temporal Perception", "Counting Problem", "Action Reasoning", "Object Recognition")


def _arm(acc: float) -> ArmCell:
    return ArmCell(
        n_questions=300, n_samples=300, correct=int(300 * acc), accuracy=acc, low=acc - 0.0612,
        high=acc + 0.0587, method="cluster_bootstrap", per_question_low=acc - 0.05,
        per_question_high=acc + 0.05, per_question_method="wilson", design_effect=1.37, n_videos=100,
        parse_errors=7, infra_errors=1,
    )  # fmt: skip


def _row(grouping: str, label: str, k: int) -> CompareRow:
    paired = PairedCell(
        n_pairs=300 + k, gain=-0.0333 + k / 100, low=-0.1047 + k / 1000, high=0.0981,
        method="cluster_bootstrap",
        per_question_low=-0.0912, per_question_high=0.0876 - k / 1000, per_question_method="newcombe",
        design_effect=1.42, n_videos=100 + k, wins=23 + k, losses=31, p_value=0.000042 * (k + 1),
        p_per_question=0.4127, p_holm=0.0125 * (k + 1) if grouping == "task_type" else None,
    )  # fmt: skip
    return CompareRow(grouping=grouping, label=label, a=_arm(0.4891), b=_arm(0.4567 + k / 100), paired=paired)  # type: ignore[arg-type]


def _side(run_id: str) -> ComparedRun:
    return ComparedRun(
        run_id=run_id, kind="train", predictions_run_id=f"eval-{run_id}.final", eval_id=f"eval-{run_id}",
        label=f"{run_id} (v0007)", bundle_hash="b" * 64, pools_sha256="p" * 64, status="finished",
    )  # fmt: skip


def _comparison() -> RunComparison:
    rows = [_row("overall", "all", 0)]
    rows += [_row("task_type", task, k) for k, task in enumerate(_TASKS, 1)]
    rows += [_row("duration", d, k) for k, d in enumerate(("short", "medium", "long"), 1)]
    return RunComparison(
        a=_side("train-a"), b=_side("train-b"), pools_sha256="p" * 64, confidence=0.95, samples=1,
        questions=300, rows=tuple(rows), test_pool_runs=3,
    )  # fmt: skip


def _numbers(comparison: RunComparison) -> list[str]:
    """Every accuracy and difference with its interval, every count and p-value, as the table shows them."""
    out: list[str] = []
    for row in comparison.rows:
        for arm in (row.a, row.b):
            out.append(f"{100 * arm.accuracy:.1f} [{100 * arm.low:.1f}, {100 * arm.high:.1f}]")  # type: ignore[operator]
        d = row.paired
        out.append(f"{100 * d.gain:+.1f} [{100 * d.low:+.1f}, {100 * d.high:+.1f}]")  # type: ignore[operator]
        out.append(f"[{100 * d.per_question_low:+.1f}, {100 * d.per_question_high:+.1f}]")  # type: ignore[operator]
        out += [
            f"{d.design_effect:.2f}",
            f"{d.losses}/{d.wins}",
            f"{d.p_value:.1e}",
            f"{d.p_per_question:.3g}",
        ]
        out += [f"{d.p_holm:.3g}"] if d.p_holm is not None else []
    return out + list(_TASKS)


@pytest.mark.parametrize("width", [80, 200])
def test_compare_tables_keep_every_number_whole(width: int) -> None:
    comparison = _comparison()
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    print_comparison(console, comparison)
    text = console.export_text()
    assert "…" not in text
    assert all(len(line) <= width for line in text.splitlines())
    missing = [n for n in _numbers(comparison) if n not in text]
    assert not missing, (width, missing, text)
    if width == 80:  # too wide for one table: the label column is repeated in the continuation
        assert "Per task type (continued)" in text
        assert text.count("Temporal Perception") >= 2
