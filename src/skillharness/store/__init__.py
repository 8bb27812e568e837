"""The run store: runs with immutable provenance, predictions and traces, and the training ledger
(SQLite or PostgreSQL).

``RunStore`` is a process's writable handle (engine migrated once); ``RunLog`` is the one writer
of a run; ``RunReader`` reads and cannot write.
"""

from skillharness.store.config import StoreConfig
from skillharness.store.lease import writer_gone
from skillharness.store.ledger import (
    BaselineSample,
    DiagnosisRow,
    DualMetricRow,
    GateDecisionRow,
    GateObservationRow,
    LedgerRecord,
    LLMEventRow,
    RunMetric,
    TrainStepRow,
)
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
    run_id_problem,
)
from skillharness.store.run_settings import replica_neutral, settings_changes
from skillharness.store.runstore import RunStore
from skillharness.store.writer import RunLog

__all__ = [
    "BaselineSample",
    "DiagnosisRow",
    "DualMetricRow",
    "GateDecisionRow",
    "GateObservationRow",
    "LLMEventRow",
    "LedgerRecord",
    "Prediction",
    "PredictionStatus",
    "RunInfo",
    "RunKind",
    "RunLog",
    "RunMetric",
    "RunProvenance",
    "RunReader",
    "RunStatus",
    "RunStore",
    "StepRole",
    "StoreConfig",
    "TraceStep",
    "TrainStepRow",
    "content_hash",
    "replica_neutral",
    "run_id_problem",
    "settings_changes",
    "writer_gone",
]
