"""``skillharness compare RUN_A RUN_B``: two runs on the same sealed test pool, B − A paired by question."""

from __future__ import annotations

import contextlib
from pathlib import Path

import typer
from rich.console import Console

from skillharness.commands.cells import ci, deff, p_value, pct, signed, with_ci
from skillharness.commands.fit_table import Col, FitTable
from skillharness.commands.folders import json_with_keys, output_file, text_with_marker
from skillharness.config import load_config
from skillharness.errors import ConfigError
from skillharness.eval import (
    ComparedRun,
    CompareRow,
    RunComparison,
    compare_runs,
    load_test_pool,
    write_comparison_page,
)
from skillharness.store import RunReader
from skillharness.util.atomic import atomic_write_text

_TITLES = {"overall": "Overall", "task_type": "Per task type", "duration": "Per duration"}

_RUN_A = typer.Argument(
    ..., metavar="RUN_A", help="The reference run: a training run with a holdout, or a test-pool run."
)
_RUN_B = typer.Argument(..., metavar="RUN_B", help="The run compared with it (B − A is reported).")
_CONFIG = typer.Option(..., "--config", help="Experiment YAML: its store and the split both runs read.")
_JSON = typer.Option(None, "--json", help="Also write the comparison as JSON to PATH (atomically).")
_HTML = typer.Option(
    None, "--html", help="Also write a page with both runs' learning curves and accepted edits."
)
_FORCE = typer.Option(False, "--force", help="Replace files at --json / --html that no comparison wrote.")
# What an earlier comparison looks like, so that rerunning `compare` replaces it and nothing else.
_OUR_PAGE = text_with_marker("<title>skillharness compare: ")
_OUR_DATA = json_with_keys(("a", "b", "pools_sha256", "rows"))


def _table(comparison: RunComparison, grouping: str, rows: list[CompareRow]) -> FitTable:
    """One row per group; at a narrow console the columns continue in a second table."""
    level = f"{100 * comparison.confidence:g}% CI"
    columns = [grouping.replace("_", " "), "n", "videos", f"A % [{level} by video]"]
    columns += [f"B % [{level} by video]", f"B−A pts [{level} by video]", "per question", "deff"]
    columns += ["McNemar b/c", "McNemar p", "p by video"]
    columns += ["Holm p"] if grouping == "task_type" else []
    table = FitTable(
        _TITLES[grouping],
        [Col(columns[0], justify="left", wrap=True), *(Col(name) for name in columns[1:])],
        title_justify="left",
    )
    for row in rows:
        a, b, d = row.a, row.b, row.paired
        cells = [row.label, str(d.n_pairs), "-" if d.n_videos is None else str(d.n_videos)]
        cells += [with_ci(pct(a.accuracy), a.low, a.high), with_ci(pct(b.accuracy), b.low, b.high)]
        cells += [with_ci(signed(d.gain), d.low, d.high, True)]
        cells += [ci(d.per_question_low, d.per_question_high, True), deff(d.design_effect)]
        cells += [f"{row.mcnemar_b}/{row.mcnemar_c}", p_value(d.p_per_question), p_value(d.p_value)]
        cells += [p_value(d.p_holm)] if grouping == "task_type" else []
        table.add_row(*cells)
    return table


def _side(name: str, run: ComparedRun) -> str:
    source = f"holdout {run.eval_id}: {run.predictions_run_id}" if run.eval_id else run.predictions_run_id
    return f"{name} = {run.run_id} ({run.kind}; {run.label}; predictions {source}, {run.status})"


def print_comparison(console: Console, comparison: RunComparison) -> None:
    """B against A on the test pool: the two runs, one table per grouping, then the notes."""
    console.print(_side("A", comparison.a), highlight=False)
    console.print(_side("B", comparison.b), highlight=False)
    console.print(
        f"B − A on {comparison.questions} test questions × {comparison.samples} sample(s), paired by "
        f"question; pools sha256 {comparison.pools_sha256[:12]}",
        highlight=False,
    )
    for grouping in _TITLES:
        rows = comparison.rows_of(grouping)  # type: ignore[arg-type]
        if rows:
            _table(comparison, grouping, rows).print(console)
    method = "question bootstrap" if comparison.samples > 1 else "Newcombe paired"
    console.print(
        "intervals by video (a video's questions are correlated): video bootstrap, never narrower than "
        f"the per-question one ({method}), shown beside B−A with the design effect (deff). McNemar: "
        "exact, two-sided; b = questions A did better on, c = questions B did better on. p by video: "
        "sign-flip test on videos; Holm (of p by video) across task types. Unparsed answers count as "
        "wrong; infra errors are left out."
    )
    other = f" and {comparison.test_pool_other_runs} infer run(s)" if comparison.test_pool_other_runs else ""
    console.print(
        f"the test pool of this split has been read by {comparison.test_pool_runs} evaluation(s){other}; "
        "choosing between runs by it is a decision taken on the test pool and wears it out."
    )


def compare_command(
    run_a: str = _RUN_A,
    run_b: str = _RUN_B,
    config: Path = _CONFIG,
    json_out: Path | None = _JSON,
    html: Path | None = _HTML,
    force: bool = _FORCE,
) -> None:
    """Compare two runs' predictions on the same sealed test pool: B − A by video, McNemar, per task type.

    A training run stands for its latest holdout (`skillharness eval --run`); an eval or `infer --pool
    test` run for itself. Runs on different splits, questions or samples are refused with the reason.
    """
    if json_out is not None and html is not None and json_out.resolve() == html.resolve():
        raise ConfigError(f"--json and --html name the same file {json_out}: the data would replace the page")
    if json_out is not None:
        output_file(json_out, "--json", ours=_OUR_DATA, force=force, has_force=True)
    if html is not None:
        output_file(html, "--html", ours=_OUR_PAGE, force=force, has_force=True)
    settings = load_config(config)
    pool = load_test_pool(settings)
    with contextlib.closing(RunReader(settings.store)) as reader:
        comparison = compare_runs(reader, pool, run_a, run_b, confidence=settings.eval.confidence)
        page = write_comparison_page(reader, comparison, html) if html is not None else None
    print_comparison(Console(), comparison)
    if json_out is not None:
        atomic_write_text(json_out, comparison.model_dump_json(indent=2))
        typer.echo(f"json: {json_out}")
    if page is not None:
        typer.echo(f"page: {page}")


def register(app: typer.Typer) -> None:
    app.command("compare")(compare_command)
