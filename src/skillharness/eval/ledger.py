"""What the eval layer reads from and writes to the run store, by ``RunMetric`` name.

Read (written by the training loop, under the training run's id):

- ``final``: ``{"workspace": path, "version": "v0003", "bundle_hash": ...}`` — the final bundle.
- ``val_gain``: ``{"gain": ..., "low": ..., "high": ...}`` — the epoch-end val score of the final
  bundle minus the baseline's, with its interval.

Written:

- ``holdout`` (under the training run and under the final arm's eval run): the
  :class:`~skillharness.eval.holdout_report.HoldoutReport`.
- ``eval_purpose`` (under each eval run): why the test pool was read, which arm, for which run.
- ``transfer.<protocol>`` (under the training run, when there is one, and the protocol's final
  arm run): the same report for both bundles asked under a reference protocol with the bundle in
  its slot (:mod:`skillharness.eval.transfer`).
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from skillharness.data import Pool
from skillharness.errors import ConfigError, StoreError
from skillharness.eval.holdout_report import ValHoldout
from skillharness.store import RunInfo, RunKind, RunMetric
from skillharness.util.model import describe_validation

__all__ = [
    "EVAL_PURPOSE",
    "FINAL",
    "HOLDOUT",
    "TRANSFER",
    "VAL_GAIN",
    "EvalArm",
    "FinalBundleRef",
    "ValGain",
    "arm_run_id",
    "compare_val_holdout",
    "count_test_pool_runs",
    "evaluation_of",
    "final_ref",
    "holdout_of_final",
    "transfer_metric",
    "val_gain",
]

FINAL = "final"
VAL_GAIN = "val_gain"
HOLDOUT = "holdout"
EVAL_PURPOSE = "eval_purpose"
TRANSFER = "transfer"


def transfer_metric(protocol: str) -> str:
    """The metric a protocol's transfer report is stored under: ``transfer.<protocol>``."""
    return f"{TRANSFER}.{protocol}"


class EvalArm(StrEnum):
    """The two sides of an evaluation, each its own run."""

    FINAL = "final"
    BASELINE = "baseline"


class _Lenient(BaseModel):
    # The training loop owns these values and may add fields; we read only the ones we name.
    model_config = ConfigDict(extra="ignore", frozen=True)


class FinalBundleRef(_Lenient):
    workspace: Path
    version: str
    bundle_hash: str


class ValGain(_Lenient):
    gain: float
    low: float
    high: float
    # The gain on val questions no gate drew and the optimism (train/validate/unselected.py).
    unselected: dict[str, Any] | None = None


def _one(metrics: list[RunMetric], run_id: str, name: str) -> RunMetric | None:
    found = [m for m in metrics if m.run_id == run_id and m.name == name]
    return found[0] if found else None


def final_ref(metrics: list[RunMetric], train_run_id: str) -> FinalBundleRef:
    """The training run's final bundle reference; ConfigError when the run has none (yet)."""
    metric = _one(metrics, train_run_id, FINAL)
    if metric is None:
        raise ConfigError(
            f"run {train_run_id!r} has no final bundle recorded (RunMetric {FINAL!r}): "
            "is it a training run, and did it finish? Evaluate a bundle folder with --bundle instead",
            run_id=train_run_id,
        )
    try:
        return FinalBundleRef.model_validate(metric.value)
    except ValidationError as exc:
        raise StoreError(
            f"run {train_run_id!r}: the recorded final bundle is malformed: {describe_validation(exc)}",
            run_id=train_run_id,
        ) from exc


def holdout_of_final(metrics: list[RunMetric], train_run_id: str) -> bool:
    """Whether the run's stored holdout measured its final bundle. An ``eval --run`` taken at a
    budget stop holds the holdout of that stop's incumbent; a run that went on and accepted more
    has a final bundle no holdout has read yet."""
    holdout, final = _one(metrics, train_run_id, HOLDOUT), _one(metrics, train_run_id, FINAL)
    if holdout is None or final is None or not isinstance(holdout.value, dict):
        return False
    return holdout.value.get("final_bundle_hash") == final_ref(metrics, train_run_id).bundle_hash


def val_gain(metrics: list[RunMetric], train_run_id: str) -> ValGain | None:
    """The val gain recorded at the end of training, when there is one."""
    metric = _one(metrics, train_run_id, VAL_GAIN)
    if metric is None:
        return None
    try:
        return ValGain.model_validate(metric.value)
    except ValidationError as exc:
        raise StoreError(f"run {train_run_id!r}: the recorded val gain is malformed: {exc}") from exc


def compare_val_holdout(
    val: ValGain,
    holdout_gain: float | None,
    *,
    val_truth: float | None = None,
    holdout_truth: float | None = None,
    unselected_truth: float | None = None,
) -> ValHoldout:
    """The val gain beside the holdout gain (``.overfit``: the latter lies outside the val interval)."""
    return ValHoldout(
        val_gain=val.gain,
        val_low=val.low,
        val_high=val.high,
        holdout_gain=holdout_gain,
        val_truth=val_truth,
        holdout_truth=holdout_truth,
        unselected=val.unselected,
        unselected_truth=unselected_truth,
    )


def arm_run_id(eval_id: str, arm: EvalArm) -> str:
    """The run that holds one arm of an evaluation: ``<eval id>.final`` or ``<eval id>.baseline``."""
    return f"{eval_id}.{arm}"


def evaluation_of(run_id: str) -> str:
    """The evaluation an arm's run belongs to (``run_id`` itself when it names no arm)."""
    stem, _, arm = run_id.rpartition(".")
    return stem if stem and arm in set(EvalArm) else run_id


def count_test_pool_runs(runs: list[RunInfo], pools_sha256: str) -> tuple[int, int]:
    """How often this split's (same ``pools.json``) test pool was read: ``(evaluations, other runs)``.

    An evaluation counts once, though each of its arms is a run. Other runs are ``infer --pool
    test`` runs: they read the holdout too, so they are counted and shown, not hidden.
    """
    on_test = [
        i for i in runs if i.provenance.pool == Pool.TEST and i.provenance.pools_sha256 == pools_sha256
    ]
    evals = {evaluation_of(i.provenance.run_id) for i in on_test if i.provenance.kind is RunKind.EVAL}
    others = sum(1 for i in on_test if i.provenance.kind is not RunKind.EVAL)
    return len(evals), others
