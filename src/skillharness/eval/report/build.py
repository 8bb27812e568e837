"""From a store URL and a run id to the report files: read, optionally add truth, render, write."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from skillharness.eval.report.collect import collect_report
from skillharness.eval.report.oracle import add_simulator_truth
from skillharness.eval.report.render import ReportFiles, write_report
from skillharness.eval.report.tracker import log_to_mlflow
from skillharness.store import RunReader
from skillharness.train.config import GateConfig

__all__ = ["build_report"]


def _shown(url: str) -> str:
    """The store URL as the page may show it: never with a password."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "(store)"


def build_report(
    store_url: str,
    run_id: str,
    out: Path | str,
    *,
    gate: GateConfig | None = None,
    confidence: float = 0.95,
    workspace: Path | None = None,
    oracle_url: str | None = None,
    agent_path: Mapping[str, Any] | None = None,
    mlflow_uri: str | None = None,
    mlflow_experiment: str = "skillharness",
) -> ReportFiles:
    """Write the report of training run ``run_id`` to ``out`` (and ``out`` with ``.json``).

    The store is opened read-only. ``workspace`` (default: the one the run's ``final`` metric
    names) is only read when ``oracle_url`` asks for the simulator's scored truth, on the run's
    ``agent_path`` (``skillharness.eval.agent_path`` of its agent settings). With ``mlflow_uri`` the
    run and the files are also logged to MLflow (an optional dependency).
    """
    with RunReader(store_url) as reader:
        data = collect_report(reader, run_id, store=_shown(store_url), gate=gate, confidence=confidence)
        if oracle_url is not None:
            folder = workspace or Path(str((data.final or {}).get("workspace", "")))
            data = add_simulator_truth(data, reader, folder, oracle_url, agent_path)
    files = write_report(data, out)
    if mlflow_uri is not None:
        log_to_mlflow(data, files, mlflow_uri, experiment=mlflow_experiment)
    return files
