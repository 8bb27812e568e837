"""Optional: log a report's run to MLflow (parameters, metrics per decision, the page itself).

MLflow is an optional dependency (``pip install 'skillharness[mlflow]'``), imported only when
``report.mlflow_uri`` is set. Each call logs one MLflow run named after the training run and
tagged with its id; the store stays the source of truth.
"""

from __future__ import annotations

import time
from typing import Any

from skillharness.data import slugify
from skillharness.errors import ConfigError
from skillharness.eval.report.model import ReportData
from skillharness.eval.report.render import ReportFiles

__all__ = ["log_to_mlflow", "tracker_metrics", "tracker_params"]

_BATCH = 1000  # MLflow's limit of metrics per log_batch call


def tracker_params(data: ReportData) -> dict[str, str]:
    """The run's provenance and outcome as MLflow parameters (strings)."""
    run, final = data.run, data.final or {}
    params: dict[str, Any] = {
        "run_id": run.run_id,
        "model": run.model,
        "config_hash": run.config_hash,
        "initial_bundle_hash": run.bundle_hash,
        "pools_sha256": run.pools_sha256 or "",
        "package_version": run.package_version,
        "status": run.status,
        "partial": data.partial,
        "final_version": final.get("version", ""),
        "stop_reason": final.get("stop_reason", ""),
    }
    return {k: str(v)[:500] for k, v in params.items()}


def tracker_metrics(data: ReportData) -> list[tuple[str, float, int]]:
    """(key, value, step) of every metric: per decision, per epoch end, and the headline."""
    out: list[tuple[str, float, int]] = []
    for point in data.curves:
        if point.val_accuracy is not None:
            out.append(("val_accuracy", point.val_accuracy, point.index))
        out.extend((f"ema/{slugify(t)}", v, point.index) for t, v in point.ema.items())
        out.append(("accepted", float(point.accepted), point.index))
    out.extend(("epoch_end/val_accuracy", end.accuracy, end.epoch) for end in data.epoch_ends)
    for gate in data.gates:
        out.append(("gate/draws", float(gate.draws), gate.gate_index))
        if gate.final_wealth is not None:
            out.append(("gate/wealth", gate.final_wealth, gate.gate_index))
    for headline in data.headlines:
        for arm in ("baseline", "final"):
            score = getattr(headline, arm)
            if score is not None and score.accuracy is not None:
                out.append((f"{headline.pool}/{arm}_accuracy", score.accuracy, 0))
    if data.alpha_spent and "sum" in data.alpha_spent:
        out.append(("alpha_spent", float(data.alpha_spent["sum"]), 0))
    return out


def log_to_mlflow(data: ReportData, files: ReportFiles, uri: str, *, experiment: str = "skillharness") -> str:
    """Log ``data`` and the report files as one MLflow run; returns the MLflow run id."""
    try:
        from mlflow.entities import Metric, Param, RunTag
        from mlflow.tracking import MlflowClient
    except ImportError as exc:
        raise ConfigError(
            "report.mlflow_uri is set but MLflow is not installed: pip install 'skillharness[mlflow]'"
        ) from exc
    client = MlflowClient(tracking_uri=uri)
    found = client.get_experiment_by_name(experiment)
    experiment_id = found.experiment_id if found is not None else client.create_experiment(experiment)
    run = client.create_run(experiment_id, run_name=data.run.run_id)
    mlflow_id = run.info.run_id
    stamp = int(time.time() * 1000)
    tags = [RunTag("skillharness.run_id", data.run.run_id), RunTag("skillharness.partial", str(data.partial))]
    params = [Param(k, v) for k, v in tracker_params(data).items()]
    client.log_batch(mlflow_id, params=params, tags=tags)
    metrics = [Metric(key, value, stamp, step) for key, value, step in tracker_metrics(data)]
    for start in range(0, len(metrics), _BATCH):
        client.log_batch(mlflow_id, metrics=metrics[start : start + _BATCH])
    client.log_artifact(mlflow_id, str(files.html))
    client.log_artifact(mlflow_id, str(files.json))
    client.set_terminated(mlflow_id, "FINISHED")
    return mlflow_id
