"""The comparison page: two runs' paired numbers, then their learning curves and accepted edits side by side.

One self-contained HTML file like the report (the same Jinja environment, filters and learning-curve
figure), written by ``skillharness compare --html PATH``. A side that is a training run shows its
curves and accepted edits as its report reads them; an eval or infer run has neither, and says so.
Both sides' curves get the same panels (the union of their task types), so they line up.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from skillharness import __version__
from skillharness.eval.compare_report import ComparedRun, RunComparison
from skillharness.eval.report.collect import collect_report
from skillharness.eval.report.model import GateView, ReportData
from skillharness.eval.report.plots import learning_curves_svg
from skillharness.eval.report.render import _environment, _write
from skillharness.store import RunKind, RunReader

__all__ = ["render_comparison", "write_comparison_page"]

_GROUPINGS = (("overall", "Overall"), ("task_type", "Per task type"), ("duration", "Per duration"))


@dataclass(frozen=True)
class _Side:
    """One run as the page shows it: its report data (training runs only), curves and accepted edits."""

    key: str  # "a" or "b": the element ids of its column
    run: ComparedRun
    data: ReportData | None
    curves_svg: str | None
    accepted: tuple[GateView, ...]


def _report_data(reader: RunReader, run: ComparedRun, confidence: float) -> ReportData | None:
    if run.kind != RunKind.TRAIN:
        return None
    return collect_report(reader, run.run_id, confidence=confidence)


def _side(key: str, run: ComparedRun, data: ReportData | None, task_types: list[str]) -> _Side:
    if data is None:
        return _Side(key, run, None, None, ())
    svg = learning_curves_svg(data.curves, data.epoch_ends, task_types) if data.curves else None
    return _Side(key, run, data, svg, tuple(g for g in data.gates if g.accepted))


def render_comparison(reader: RunReader, comparison: RunComparison) -> str:
    """The page's HTML: the comparison's tables, then both runs' curves and accepted edits."""
    runs = (comparison.a, comparison.b)
    data = [_report_data(reader, run, comparison.confidence) for run in runs]
    task_types = sorted({t for d in data if d is not None for t in d.task_types})
    sides = [_side(key, run, d, task_types) for key, run, d in zip("ab", runs, data, strict=True)]
    groupings = [(g, title, comparison.rows_of(g)) for g, title in _GROUPINGS]  # type: ignore[arg-type]
    return (
        _environment()
        .get_template("compare.html.j2")
        .render(
            c=comparison,
            sides=sides,
            groupings=[g for g in groupings if g[2]],
            generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
            package_version=__version__,
        )
    )


def write_comparison_page(reader: RunReader, comparison: RunComparison, out: Path | str) -> Path:
    """Write the comparison page to ``out`` atomically (readable by all, like the report)."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    _write(path, render_comparison(reader, comparison))
    return path
