"""RunStore: one process's handle on the run store, its engine created and migrated once.

The training loop opens thousands of runs' worth of rollouts in one process; each must not pay for
an engine and a migration. ``RunStore`` owns the engine, opens run logs on it, and reads and
writes the training ledger (:mod:`skillharness.store.ledger`) generically by record type.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, TypeVar

from sqlalchemy import Engine, select
from sqlalchemy.exc import SQLAlchemyError

from skillharness.errors import StoreError
from skillharness.store.config import StoreConfig
from skillharness.store.engine import StoreLocation, create_store_engine, parse_store_url
from skillharness.store.initialise import ensure_initialised
from skillharness.store.ledger import LedgerRecord, select_records
from skillharness.store.migrations import migrate
from skillharness.store.records import Prediction, PredictionStatus, RunProvenance, TraceStep
from skillharness.store.rows import now_iso, prediction_of, trace_of
from skillharness.store.schema import predictions, runs, traces
from skillharness.store.upsert import upsert_statement
from skillharness.store.writer import RunLog

__all__ = ["RunStore"]

R = TypeVar("R", bound=LedgerRecord)
_FINAL = (PredictionStatus.OK.value, PredictionStatus.PARSE_ERROR.value)


class RunStore:
    """A writable store. Open with :meth:`open`; close once at the end of the process's work."""

    def __init__(self, engine: Engine, location: StoreLocation, config: StoreConfig) -> None:
        self._engine = engine
        self._location = location
        self.config = config

    @classmethod
    def open(cls, config: StoreConfig | str) -> RunStore:
        """Create the engine and bring the store to the current schema (once per process)."""
        config = StoreConfig(url=config) if isinstance(config, str) else config
        location = parse_store_url(config.url)
        engine = create_store_engine(location, readonly=False, busy_timeout_s=config.busy_timeout_s)
        try:
            ensure_initialised(location)  # a new SQLite store appears whole or not at all
            migrate(engine, location.display)
        except BaseException:
            engine.dispose()
            raise
        return cls(engine, location, config)

    @property
    def display(self) -> str:
        return self._location.display

    async def open_run(
        self,
        provenance: RunProvenance,
        *,
        resume: bool = False,
        settings: Mapping[str, Any] | None = None,
    ) -> RunLog:
        """Create (or, with ``resume``, continue) one run and return its writer.

        ``settings`` are stored with a new run; a refused resume names those that differ.
        """
        return await RunLog.on_engine(
            self._engine,
            self._location,
            self.config,
            provenance,
            resume=resume,
            owns_engine=False,
            settings=settings,
        )

    async def open_or_resume(
        self, provenance: RunProvenance, *, settings: Mapping[str, Any] | None = None
    ) -> RunLog:
        """The run's writer, creating the run when it does not exist yet (children of a training run)."""
        return await self.open_run(
            provenance, resume=await asyncio.to_thread(self.has_run, provenance.run_id), settings=settings
        )

    def has_run(self, run_id: str) -> bool:
        with self._engine.connect() as conn:
            return conn.execute(select(runs.c.run_id).where(runs.c.run_id == run_id)).first() is not None

    def final_predictions(self, run_id: str) -> dict[tuple[str, int], Prediction]:
        """The run's ``ok`` and ``parse_error`` predictions by ``(question_id, sample_idx)``."""
        query = select(predictions).where(predictions.c.run_id == run_id, predictions.c.status.in_(_FINAL))
        with self._engine.connect() as conn:
            found = [prediction_of(row) for row in conn.execute(query).mappings()]
        return {(p.question_id, p.sample_idx): p for p in found}

    def traces(
        self, run_id: str, keys: Iterable[tuple[str, int]] | None = None
    ) -> dict[tuple[str, int], tuple[TraceStep, ...]]:
        """Trace steps of ``run_id`` by ``(question_id, sample_idx)``, in step order.

        ``keys`` limits the read to those samples (None: every sample of the run); a sample with no
        stored step is absent from the result.
        """
        query = select(traces).where(traces.c.run_id == run_id)
        wanted = None if keys is None else set(keys)
        if wanted is not None:
            query = query.where(traces.c.question_id.in_(sorted({qid for qid, _ in wanted})))
        query = query.order_by(traces.c.question_id, traces.c.sample_idx, traces.c.step_idx)
        found: dict[tuple[str, int], list[TraceStep]] = {}
        try:
            with self._engine.connect() as conn:
                for row in conn.execute(query).mappings():
                    key = (row["question_id"], row["sample_idx"])
                    if wanted is None or key in wanted:
                        found.setdefault(key, []).append(trace_of(row))
        except SQLAlchemyError as exc:
            raise StoreError(f"reading the traces of {run_id!r} failed: {exc}") from exc
        return {key: tuple(steps) for key, steps in found.items()}

    def upsert(self, records: Iterable[LedgerRecord]) -> None:
        """Write ledger records in one transaction; a record with a stored key replaces it."""
        by_table: dict[type[LedgerRecord], dict[tuple[Any, ...], dict[str, Any]]] = {}
        now = now_iso()
        for record in records:
            row = record.row(now)
            key = tuple(row[name] for name in record.key_columns())
            by_table.setdefault(type(record), {})[key] = row  # last write of a key wins
        if not by_table:
            return
        try:
            with self._engine.begin() as conn:
                for kind, rows in by_table.items():
                    values = list(rows.values())
                    conn.execute(upsert_statement(conn.dialect.name, kind.table, tuple(values[0])), values)
        except SQLAlchemyError as exc:
            raise StoreError(f"writing ledger records to {self.display} failed: {exc}") from exc

    async def aupsert(self, records: Sequence[LedgerRecord]) -> None:
        """:meth:`upsert` off the event loop."""
        await asyncio.to_thread(self.upsert, records)

    def select(self, kind: type[R], **where: Any) -> list[R]:
        """Every ``kind`` record whose columns equal ``where``, in primary-key order."""
        return select_records(self._engine, kind, **where)

    def close(self) -> None:
        self._engine.dispose()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
