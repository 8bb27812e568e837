"""The SQL of one open run: a batch of predictions and steps, the resume keys, the closing counts.

Synchronous, and called from worker threads by :class:`~skillharness.store.writer.RunLog`, which
owns the ordering (FIFO batches, who waits for which commit). Kept apart so that the writer reads
as the queue it is and this module as the statements it runs.
"""

from __future__ import annotations

import contextlib
from typing import Any

from sqlalchemy import Connection, Engine, Executable, Table, bindparam, delete, func, select, update
from sqlalchemy.exc import SQLAlchemyError

from skillharness.errors import StoreError
from skillharness.store.engine import StoreLocation
from skillharness.store.lease import Lease
from skillharness.store.records import Prediction, PredictionStatus, RunInfo, RunStatus, TraceStep
from skillharness.store.rows import now_iso, prediction_row, run_of, trace_row
from skillharness.store.schema import predictions, runs, traces
from skillharness.store.upsert import upsert_statement

__all__ = ["RunTables"]

# Drops steps past a prediction's last one: leftovers of an attempt a crash cut short. One
# statement for the whole batch, executed with one parameter set per prediction.
_TRIM = delete(traces).where(
    traces.c.run_id == bindparam("t_run_id"),
    traces.c.question_id == bindparam("t_question_id"),
    traces.c.sample_idx == bindparam("t_sample_idx"),
    traces.c.step_idx >= bindparam("t_n_steps"),
)


class RunTables:
    """The rows of run ``run_id`` on ``engine``: written in batches, counted when the run ends."""

    def __init__(self, engine: Engine, location: StoreLocation, run_id: str, lease: Lease | None) -> None:
        self.engine = engine
        self._location = location
        self._run_id = run_id
        self._lease = lease
        # Upsert statements, built once per (table, columns): building one costs more than running it.
        self._upserts: dict[tuple[str, tuple[str, ...]], Executable] = {}

    def lease(self, op: str) -> None:
        """Refresh or release the run's lease (``op``), in its own transaction."""
        if self._lease is None:
            return
        with self.engine.begin() as conn:
            getattr(self._lease, op)(conn)

    def write_batch(self, records: list[Prediction | TraceStep]) -> None:
        """Upsert ``records`` in one transaction (trimming steps past each prediction's last)."""
        now = now_iso()
        # Last write wins within a batch: one row per key (PostgreSQL refuses to touch a row twice).
        steps = {r.key: trace_row(r, now) for r in records if isinstance(r, TraceStep)}
        preds = {r.key: r for r in records if isinstance(r, Prediction)}
        try:
            with self.engine.begin() as conn:
                self._upsert(conn, traces, list(steps.values()))
                self._upsert(conn, predictions, [prediction_row(p, now) for p in preds.values()])
                if preds:
                    conn.execute(_TRIM, [_trim_params(p) for p in preds.values()])
        except SQLAlchemyError as exc:
            raise StoreError(
                f"writing {len(records)} records to the run store at {self._location.display} failed: {exc}"
            ) from exc

    def completed_keys(self) -> frozenset[tuple[str, int]]:
        """``(question_id, sample_idx)`` pairs stored as ``ok`` or ``parse_error``."""
        final = (PredictionStatus.OK.value, PredictionStatus.PARSE_ERROR.value)
        query = select(predictions.c.question_id, predictions.c.sample_idx).where(
            predictions.c.run_id == self._run_id, predictions.c.status.in_(final)
        )
        with self.engine.connect() as conn:
            return frozenset((row[0], row[1]) for row in conn.execute(query))

    def finish(self, status: RunStatus) -> RunInfo:
        """Release the lease, then record the end time, ``status`` and the counts per status."""
        with contextlib.suppress(SQLAlchemyError):  # an unreleased lease expires by itself
            self.lease("release")
        counts = (
            select(predictions.c.status, func.count())
            .where(predictions.c.run_id == self._run_id)
            .group_by(predictions.c.status)
        )
        try:
            with self.engine.begin() as conn:
                by_status = {row[0]: row[1] for row in conn.execute(counts)}
                conn.execute(
                    update(runs)
                    .where(runs.c.run_id == self._run_id)
                    .values(
                        status=status.value,
                        ended_at=now_iso(),
                        n_ok=by_status.get("ok", 0),
                        n_parse_error=by_status.get("parse_error", 0),
                        n_infra_error=by_status.get("infra_error", 0),
                    )
                )
                row = conn.execute(select(runs).where(runs.c.run_id == self._run_id)).mappings().one()
                return run_of(row)
        except SQLAlchemyError as exc:
            raise StoreError(f"could not close run {self._run_id}: {exc}") from exc

    def _upsert(self, conn: Connection, table: Table, rows: list[dict[str, Any]]) -> None:
        """One executemany of the table's upsert; the statement is built on first use only."""
        if not rows:
            return
        columns = tuple(rows[0])
        stmt = self._upserts.get((table.name, columns))
        if stmt is None:
            stmt = upsert_statement(conn.dialect.name, table, columns)
            self._upserts[(table.name, columns)] = stmt
        conn.execute(stmt, rows)


def _trim_params(prediction: Prediction) -> dict[str, Any]:
    return {
        "t_run_id": prediction.run_id,
        "t_question_id": prediction.question_id,
        "t_sample_idx": prediction.sample_idx,
        "t_n_steps": prediction.n_steps,
    }
