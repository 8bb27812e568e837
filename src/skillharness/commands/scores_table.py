"""The four scores of a run side by side, one table per grouping (``infer``'s report)."""

from __future__ import annotations

from rich.console import Console

from skillharness.commands.fit_table import Col, FitTable
from skillharness.infer import Parser, ReferenceScore, RunScores, parser_gap
from skillharness.infer.summary import Cell

__all__ = ["print_scores"]

_TITLES = {
    "overall": "Overall",
    "duration": "Per duration",
    "domain": "Per domain",
    "sub_category": "Per sub-category",
    "task_type": "Per task type",
}
_NAMES = {
    Parser.OURS: "ours",
    Parser.LMMS_EVAL: "lmms-eval",
    Parser.VLMEVALKIT: "vlmevalkit",
    Parser.OFFICIAL: "official",
}


def _pct(value: float) -> str:
    return "-" if value != value else f"{100 * value:.1f}"  # NaN (empty cell) prints as "-"


def _score(cell: Cell) -> str:
    return f"{_pct(cell.accuracy)} ({_pct(cell.ci_low)}–{_pct(cell.ci_high)})"


def print_scores(
    console: Console, scores: RunScores, counts: dict[str, int], title: str, confidence: float = 0.95
) -> None:
    """Ours, lmms-eval's and VLMEvalKit's (unparsed wrong) and the official (unparsed dropped)."""
    console.print(f"[bold]{title}[/]")
    ours = scores.tables[Parser.OURS]
    level = f"{100 * confidence:g}% CI"
    for grouping in _TITLES:
        if grouping not in ours:
            continue
        columns = [Col(grouping.replace("_", " "), justify="left", wrap=True), Col("n")]
        columns += [Col(f"{_NAMES[parser]} % ({level})") for parser in Parser]
        columns += [Col(name) for name in ("official n", "parse err %", "infra")]
        table = FitTable(_TITLES[grouping], columns, title_justify="left")
        rows = {parser: {c.label: c for c in scores.tables[parser][grouping]} for parser in Parser}
        for cell in ours[grouping]:
            official = rows[Parser.OFFICIAL][cell.label]
            table.add_row(
                cell.label,
                str(cell.n),
                *(_score(rows[parser][cell.label]) for parser in Parser),
                str(official.n),
                _pct(cell.parse_rate),
                str(cell.infra_errors),
            )
        table.print(console)
    statuses = ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"
    console.print(
        f"predictions by status: {statuses}. ours: our strict normalizer, unparsed counts as wrong, "
        "infra errors left out; lmms-eval and vlmevalkit: their extractors, unparsed counts as "
        "wrong and a failed request is scored as they score it (its failure text); official: its "
        "extractor, unparsed answers and infra errors are dropped from the denominator ('official "
        "n'). Resume the run to retry infra errors."
    )
    if (gap := parser_gap(scores)) is not None:
        console.print(f"[yellow]note:[/] {gap}")
    if scores.reference is not None:
        print_reference(console, scores.reference, scores.tables[Parser.LMMS_EVAL], level)


def print_reference(
    console: Console, reference: ReferenceScore, accuracy: dict[str, list[Cell]], level: str
) -> None:
    """The benchmark's own lmms-eval metric by its rule, beside lmms-eval's per-question accuracy."""
    r = reference
    columns = [Col("task type", justify="left", wrap=True), Col(f"n {r.unit}")]
    columns += [Col(f"{r.metric} ({level}, {r.method})"), Col(f"lmms-eval accuracy % ({level})")]
    table = FitTable(f"lmms-eval {r.task}: {r.metric} (rule {r.rule})", columns, title_justify="left")
    cells = {c.label: c for grouping in ("overall", "task_type") for c in accuracy.get(grouping, [])}
    for row in r.rows:
        value = f"{r.shown(row.value)} ({r.shown(row.low)}–{r.shown(row.high)})"
        beside = cells.get(row.label)
        table.add_row(row.label, str(row.n), value, _score(beside) if beside else "-")
    table.print(console)
    notes = [f"{r.metric} on lmms-eval's scale (×{r.scale:g}), read by the task's own extractor"]
    if r.reported == "task_type":
        notes.append(
            f"lmms-eval reports each task type's {r.metric} alone (one task per type, no aggregate): "
            "the 'all' row pools them, a number it does not print"
        )
    if r.left_out:
        notes.append(f"{r.left_out} group(s) missing a question left out (a group is scored whole)")
    console.print("; ".join(notes) + ".")
