"""Rendering of an inference summary as rich tables (shared by infer, runs show and demo)."""

from __future__ import annotations

from rich.console import Console

from skillharness.commands.fit_table import Col, FitTable
from skillharness.infer.summary import Cell

__all__ = ["print_summary"]

_TITLES = {
    "overall": "Overall",
    "task_type": "Per task type",
    "duration": "Per duration",
    "domain": "Per domain",
    "sub_category": "Per sub-category",
}


def _pct(value: float) -> str:
    return "-" if value != value else f"{100 * value:.1f}"  # NaN (empty cell) prints as "-"


def print_summary(
    console: Console,
    summary: dict[str, list[Cell]],
    counts: dict[str, int],
    title: str,
    confidence: float = 0.95,
) -> None:
    """One table per grouping, accuracy with its Wilson interval, parse failures counted as wrong.

    ``confidence`` is the level the intervals were computed at (it names the CI column).
    """
    console.print(f"[bold]{title}[/]")
    for grouping, cells in summary.items():
        names = ("n", "correct", "acc %", f"{100 * confidence:g}% CI", "parse err %", "infra")
        columns = [Col(grouping.replace("_", " "), justify="left", wrap=True), *(Col(n) for n in names)]
        table = FitTable(_TITLES.get(grouping, grouping), columns, title_justify="left")
        for cell in cells:
            table.add_row(
                cell.label,
                str(cell.n),
                str(cell.correct),
                _pct(cell.accuracy),
                f"{_pct(cell.ci_low)}–{_pct(cell.ci_high)}",
                _pct(cell.parse_rate),
                str(cell.infra_errors),
            )
        table.print(console)
    statuses = ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"
    console.print(
        f"predictions by status: {statuses}. Unparsed answers count as wrong; infra errors are not "
        "answers (resume the run to retry them)."
    )
