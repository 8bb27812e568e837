"""The run store: runs with immutable provenance, predictions and traces (SQLite or PostgreSQL).

``RunLog`` is the one writer of a run; ``RunReader`` reads and cannot write.
"""

from skillharness.store.config import StoreConfig
from skillharness.store.reader import RunReader
from skillharness.store.records import (
    Prediction,
    PredictionStatus,
    RunInfo,
    RunKind,
    RunProvenance,
    RunStatus,
    StepRole,
    TraceStep,
    content_hash,
)
from skillharness.store.writer import RunLog

__all__ = [
    "Prediction",
    "PredictionStatus",
    "RunInfo",
    "RunKind",
    "RunLog",
    "RunProvenance",
    "RunReader",
    "RunStatus",
    "StepRole",
    "StoreConfig",
    "TraceStep",
    "content_hash",
]
