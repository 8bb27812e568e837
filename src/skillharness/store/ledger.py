"""The training ledger's record types: one frozen model per table, registered by declaration.

A new record kind is one class here (its fields, its table, which fields are JSON); the store's
generic upsert and select then handle it. Rows are keyed by each table's primary key, so writing
a record again after a resume replaces it (audit P2-3).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar, Self, TypeVar

from sqlalchemy import Engine, Table, select
from sqlalchemy.exc import SQLAlchemyError

from skillharness.errors import StoreError
from skillharness.store import schema
from skillharness.util.model import StrictModel

__all__ = [
    "BaselineSample",
    "DiagnosisRow",
    "DualMetricRow",
    "GateDecisionRow",
    "GateObservationRow",
    "LLMEventRow",
    "LedgerRecord",
    "RunMetric",
    "TrainStepRow",
    "select_records",
]


class LedgerRecord(StrictModel):
    """A row of one ledger table. Subclasses set ``table`` and the names of their JSON fields."""

    table: ClassVar[Table]
    json_fields: ClassVar[tuple[str, ...]] = ()

    def row(self, written_at: str) -> dict[str, Any]:
        """The table row (JSON fields as text, the write time added)."""
        row = self.model_dump(mode="json")
        for name in self.json_fields:
            row[name] = json.dumps(row[name], sort_keys=True, ensure_ascii=False, allow_nan=False)
        row["written_at"] = written_at
        return {k: v.replace("\x00", "\ufffd") if isinstance(v, str) else v for k, v in row.items()}

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Self:
        """The record of a stored row."""
        data = {k: row[k] for k in cls.model_fields}
        for name in cls.json_fields:
            data[name] = json.loads(data[name])
        return cls.model_validate(data)

    @classmethod
    def key_columns(cls) -> tuple[str, ...]:
        return tuple(column.name for column in cls.table.primary_key.columns)


class DiagnosisRow(LedgerRecord):
    """One diagnosed wrong answer, under its fingerprint. ``retryable`` rows are not answers."""

    table: ClassVar[Table] = schema.diagnoses
    fingerprint: str
    run_id: str
    question_id: str
    sample_idx: int
    task_type: str
    cause: str
    target: str | None
    reason: str
    retryable: bool


class GateObservationRow(LedgerRecord):
    """One paired draw of a gate; ``None`` outcomes are infrastructure failures."""

    table: ClassVar[Table] = schema.gate_observations
    train_run_id: str
    gate_index: int
    draw_index: int
    question_id: str
    task_type: str
    sample_idx: int
    arm: str
    candidate: int | None
    incumbent: int | None
    wealth: float
    harm_wealth: float


class GateDecisionRow(LedgerRecord):
    """A candidate's fate: the decision, its evidence, and the documents before and after."""

    table: ClassVar[Table] = schema.gate_decisions
    json_fields: ClassVar[tuple[str, ...]] = ("evidence", "edits")
    train_run_id: str
    gate_index: int
    epoch: int
    step: int
    target: str
    reason: str
    detail: str
    evidence: dict[str, Any]
    version_before: str
    version_after: str | None
    rationale: str
    edits: dict[str, Any]
    document_before: str
    document_after: str | None


class DualMetricRow(LedgerRecord):
    """The standing version's accuracy on the target class and on all val, after a decision."""

    table: ClassVar[Table] = schema.dual_metric
    json_fields: ClassVar[tuple[str, ...]] = ("ema",)
    train_run_id: str
    epoch: int
    step: int
    target: str
    version: str
    target_correct: int
    target_n: int
    val_correct: int
    val_n: int
    ema: dict[str, float]


class BaselineSample(LedgerRecord):
    """One incumbent sample in the BaselineCache (never an infrastructure failure: audit P1-4)."""

    table: ClassVar[Table] = schema.baseline_samples
    relevant_text_hash: str
    question_id: str
    sampling_hash: str
    sample_idx: int
    correct: bool
    answer: str | None
    run_id: str


class TrainStepRow(LedgerRecord):
    """What one training step did (waterfall counts, candidates, usage), for reports."""

    table: ClassVar[Table] = schema.train_steps
    json_fields: ClassVar[tuple[str, ...]] = ("summary",)
    train_run_id: str
    epoch: int
    step: int
    summary: dict[str, Any]


class RunMetric(LedgerRecord):
    """A named JSON value of a run (epoch-end scores, alpha spent, holdout tables)."""

    table: ClassVar[Table] = schema.run_metrics
    json_fields: ClassVar[tuple[str, ...]] = ("value",)
    run_id: str
    name: str
    value: Any


class LLMEventRow(LedgerRecord):
    """One failed model attempt or breaker transition of a run (its outages on the record)."""

    table: ClassVar[Table] = schema.llm_events
    run_id: str
    at: str
    seq: int
    event: str  # attempt | breaker
    endpoint: str
    kind: str  # the error class; for a breaker, the state it entered
    detail: str  # what followed the attempt (retried, failover, gave_up, fatal); a breaker's old state
    role: str = ""
    attempt: int = 0


R = TypeVar("R", bound=LedgerRecord)


def select_records(engine: Engine, kind: type[R], **where: Any) -> list[R]:
    """Shared by the writer's store and the read-only reader: ledger rows as records."""
    table = kind.table
    unknown = [name for name in where if name not in table.c]
    if unknown:
        raise StoreError(f"{table.name} has no column(s) {unknown}")
    query = select(table).where(*(table.c[name] == value for name, value in where.items()))
    query = query.order_by(*table.primary_key.columns)
    try:
        with engine.connect() as conn:
            return [kind.of(row) for row in conn.execute(query).mappings()]
    except SQLAlchemyError as exc:
        raise StoreError(f"reading {table.name} failed: {exc}") from exc
