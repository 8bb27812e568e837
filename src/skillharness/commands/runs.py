"""``skillharness runs list|show``: read-only views of the run store."""

from __future__ import annotations

import typer
from rich.console import Console

from skillharness.commands.fit_table import Col, FitTable
from skillharness.config import load_config
from skillharness.store import RunInfo, RunMetric, RunReader, RunStatus, writer_gone

runs_app = typer.Typer(help="Inspect stored runs (read-only: the store is opened in read-only mode).")


def _reader(store: str | None, config: str | None) -> RunReader:
    settings = load_config(config, {"store.url": store})
    return RunReader(settings.store)


def _writer_gone(reader: RunReader, info: RunInfo) -> str | None:
    """Why a run stored as ``running`` has no live writer, or None (it runs, or it has ended)."""
    if info.status is not RunStatus.RUNNING:
        return None
    return writer_gone(info.run_id, reader.ledger(RunMetric, run_id=info.run_id))


@runs_app.command("list")
def list_runs(
    store: str | None = typer.Option(None, "--store", help="Store URL (default: the config's store.url)."),
    config: str | None = typer.Option(None, "--config", help="Experiment YAML."),
) -> None:
    """Every run with its kind, pool, status and prediction counts."""
    reader = _reader(store, config)
    try:
        columns = [Col("run", "left")]  # a run id is whole: it is typed back into other commands
        columns += [Col(column, "left") for column in ("kind", "pool", "status")]
        columns += [Col(column) for column in ("ok", "parse err", "infra err")]
        table = FitTable("runs", columns)
        for info in reader.runs():
            counts = {k.value: v for k, v in reader.status_counts(info.run_id).items()}
            table.add_row(
                info.run_id,
                info.provenance.kind.value,
                info.provenance.pool or "-",
                f"{info.status.value} (writer gone)" if _writer_gone(reader, info) else info.status.value,
                *(str(counts.get(key, 0)) for key in ("ok", "parse_error", "infra_error")),
            )
        table.print(Console())
    finally:
        reader.close()


@runs_app.command("show")
def show_run(
    run_id: str = typer.Argument(..., help="The run to show."),
    store: str | None = typer.Option(None, "--store", help="Store URL (default: the config's store.url)."),
    config: str | None = typer.Option(None, "--config", help="Experiment YAML."),
) -> None:
    """A run's provenance, replica changes and prediction counts; a training run's budget too
    (spent over every invocation against its limits)."""
    reader = _reader(store, config)
    try:
        info = reader.run(run_id)
        budget = reader.ledger(RunMetric, run_id=run_id, name="budget")
        console = Console()
        console.print_json(
            data={
                **info.model_dump(mode="json"),
                "replica_changes": reader.replica_changes(run_id),
                "status_counts": {k.value: v for k, v in reader.status_counts(run_id).items()},
                **({"budget": budget[0].value} if budget else {}),
                **({"writer_gone": gone} if (gone := _writer_gone(reader, info)) else {}),
            }
        )
    finally:
        reader.close()


def register(app: typer.Typer) -> None:
    app.add_typer(runs_app, name="runs")
