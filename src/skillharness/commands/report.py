"""``skillharness report``: one self-contained HTML page (and its JSON) of a training run."""

from __future__ import annotations

from pathlib import Path

import typer

from skillharness.commands.folders import json_with_keys, output_file, text_with_marker
from skillharness.config import load_config
from skillharness.errors import ConfigError
from skillharness.eval import agent_path, build_report

# What an earlier report looks like, so that rerunning `report` replaces it and nothing else.
_OUR_PAGE = text_with_marker("<title>skillharness report: ")
_OUR_DATA = json_with_keys(("generated_at", "package_version", "run", "headlines"))


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
    force: bool = typer.Option(False, "--force", help="Replace files at --out that no report wrote."),
) -> None:
    """Read the store (read-only) and write the run's report page, with the same data as JSON."""
    settings = load_config(config)
    folder = config.resolve().parent / "runs" / run_id
    page = _page_path(out or folder / "report.html", force)
    files = build_report(
        settings.store.url,
        run_id,
        page,
        gate=settings.train.gate,
        confidence=settings.eval.confidence,
        workspace=_workspace(folder / "workspace"),
        oracle_url=oracle_url,
        agent_path=agent_path(settings.agent),
        mlflow_uri=settings.report.mlflow_uri,
        mlflow_experiment=settings.report.mlflow_experiment,
    )
    typer.echo(f"report: {files.html}\ndata:   {files.json}")


def _workspace(beside_config: Path) -> Path | None:
    """The run's workspace in this experiment's folder when it is there; else None, and the report
    reads the one the run's ``final`` metric recorded (a config kept or copied elsewhere, pointing
    at the same store, still finds the run's bundles for the simulator's truth)."""
    return beside_config if beside_config.is_dir() else None


def _page_path(page: Path, force: bool) -> Path:
    """``page`` and its JSON twin, each checked free to write (the twin is ``page`` with ``.json``)."""
    if page.suffix.lower() == ".json":
        raise ConfigError(
            f"--out {page}: names the page, whose data goes beside it as .json; name an .html file"
        )
    output_file(page, "--out", ours=_OUR_PAGE, force=force, has_force=True)
    output_file(
        page.with_suffix(".json"), "--out (its .json twin)", ours=_OUR_DATA, force=force, has_force=True
    )
    return page


def register(app: typer.Typer) -> None:
    app.command("report")(report)
