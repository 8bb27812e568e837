"""``skillharness report``: one self-contained HTML page (and its JSON) of a training run."""

from __future__ import annotations

from pathlib import Path

import typer

from skillharness.config import load_config
from skillharness.eval import agent_path, build_report


def report(
    config: Path = typer.Option(..., "--config", help="The experiment's YAML (experiment.yaml)."),
    run_id: str = typer.Option(..., "--run", help="The training run to report."),
    out: Path | None = typer.Option(
        None, "--out", help="The HTML file to write (default: the run's folder/report.html)."
    ),
    oracle_url: str | None = typer.Option(
        None,
        "--oracle-url",
        help="A simulator's base URL: show its oracle's scored truth (the exact probability that the "
        "harness scores an answer right on this experiment's agent path).",
    ),
) -> None:
    """Read the store (read-only) and write the run's report page, with the same data as JSON."""
    settings = load_config(config)
    folder = config.resolve().parent / "runs" / run_id
    files = build_report(
        settings.store.url,
        run_id,
        out or folder / "report.html",
        gate=settings.train.gate,
        confidence=settings.eval.confidence,
        workspace=folder / "workspace",
        oracle_url=oracle_url,
        agent_path=agent_path(settings.agent),
        mlflow_uri=settings.report.mlflow_uri,
        mlflow_experiment=settings.report.mlflow_experiment,
    )
    typer.echo(f"report: {files.html}\ndata:   {files.json}")


def register(app: typer.Typer) -> None:
    app.command("report")(report)
