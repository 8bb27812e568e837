"""``skillharness preflight``: every check a training run needs, with every problem listed."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from skillharness.commands.fit_table import Col, FitTable
from skillharness.config import load_config
from skillharness.errors import ConfigError
from skillharness.train.preflight.checks import CheckStatus, PreflightReport, run_preflight

_STYLE = {
    CheckStatus.PASS: "green",
    CheckStatus.WARN: "yellow",
    CheckStatus.FAIL: "bold red",
    CheckStatus.SKIP: "bold yellow",
}


def preflight(
    config: Path = typer.Option(..., "--config", help="Experiment YAML of the training run."),
    pool: str = typer.Option("val", "--pool", help="Pool whose videos are checked: train | val | test."),
    timeout: float | None = typer.Option(
        None, "--timeout", min=0.1, help="Seconds per endpoint probe attempt (default: llm.timeouts.probe_s)."
    ),
) -> None:
    """Check everything a training run needs; list every problem; exit 2 on any."""
    report = run_preflight(load_config(config), pool=pool, endpoint_timeout_s=timeout)
    console = Console()
    _table(report).print(console)
    if not report.ok:  # a check that could not run is not a pass either
        raise ConfigError(
            f"preflight found {len(report.problems)} problem(s) and {len(report.skipped)} check(s) it "
            "could not run; training would not start",
            problems=list(report.unverified()),
        )
    console.print("[green]preflight passed[/]: training can start")


def _table(report: PreflightReport) -> FitTable:
    columns = [Col("check", "left"), Col("status", "left"), Col("message", "left", wrap=True)]
    table = FitTable("preflight", columns, show_lines=True)
    for row in report.rows():
        style = _STYLE[row.status]
        table.add_row(row.check, f"[{style}]{row.status.value}[/]", escape(row.message))
    return table


def register(app: typer.Typer) -> None:
    app.command("preflight")(preflight)
