"""RunLog: the only writer of a run's rows.

``RunLog.open`` creates the run with its provenance (or, for a resume, checks that the stored
provenance is identical and writes nothing of it). Predictions and trace steps then go through one
writer task that commits them in batches, each batch one transaction of upserts keyed by the
records' primary keys (audit P2-3). A ``write_*`` call returns once its batch is committed, so
the agent's error boundary sees a failing store; a crash loses at most the batch in flight, and
a resume rewrites it idempotently.
"""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Any

from sqlalchemy import Connection, Engine, Table, delete, func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import SQLAlchemyError

from skillharness.errors import StoreError
from skillharness.store.config import StoreConfig
from skillharness.store.engine import StoreLocation, create_store_engine, parse_store_url
from skillharness.store.migrations import migrate
from skillharness.store.records import (
    Prediction,
    PredictionStatus,
    RunInfo,
    RunProvenance,
    RunStatus,
    TraceStep,
)
from skillharness.store.rows import now_iso, prediction_row, provenance_of, provenance_row, run_of, trace_row
from skillharness.store.schema import predictions, runs, traces

__all__ = ["RunLog"]

_STOP = object()
_Record = Prediction | TraceStep


class RunLog:
    """Writes one run. Create with :meth:`open`; use as an async context manager.

    It satisfies the agent's ``TraceSink`` protocol (``write_step``, ``write_prediction``).
    """

    def __init__(
        self, engine: Engine, location: StoreLocation, provenance: RunProvenance, config: StoreConfig
    ):
        self._engine = engine
        self._location = location
        self.provenance = provenance
        self._batch_size = config.batch_size
        self._queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=config.queue_size)
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self.batches_written = 0

    @property
    def run_id(self) -> str:
        return self.provenance.run_id

    @classmethod
    async def open(
        cls, config: StoreConfig | str, provenance: RunProvenance, *, resume: bool = False
    ) -> RunLog:
        """Open the store (upgrading its schema if older) and create or resume the run.

        Raises:
            StoreError: the run exists and ``resume`` is false; the stored provenance differs from
                ``provenance`` (the message names the fields); the store is newer than this code.
        """
        config = StoreConfig(url=config) if isinstance(config, str) else config
        location = parse_store_url(config.url)
        engine = create_store_engine(location, readonly=False, busy_timeout_s=config.busy_timeout_s)
        try:
            await asyncio.to_thread(_open_run, engine, location, provenance, resume)
        except BaseException:
            engine.dispose()
            raise
        log = cls(engine, location, provenance, config)
        log._task = asyncio.create_task(log._writer(), name=f"runlog-{provenance.run_id}")
        return log

    async def write_step(self, step: TraceStep) -> None:
        """Upsert one trace step; returns when it is committed."""
        await self._submit(step)

    async def write_prediction(self, prediction: Prediction) -> None:
        """Upsert one prediction (and drop trace steps past its ``n_steps`` left by an earlier attempt)."""
        await self._submit(prediction)

    async def flush(self) -> None:
        """Wait until everything submitted so far is committed."""
        await self._submit(None)

    async def completed_keys(self) -> frozenset[tuple[str, int]]:
        """``(question_id, sample_idx)`` pairs stored as ``ok`` or ``parse_error``: a resume skips them."""
        return await asyncio.to_thread(self._completed_keys)

    async def close(self, status: RunStatus = RunStatus.FINISHED) -> RunInfo:
        """Drain the writer, then record the end time, ``status`` and the counts."""
        if self._closed:
            raise StoreError(f"run log {self.run_id} is already closed")
        self._closed = True
        if self._task is not None:
            await self._queue.put(_STOP)
            await self._task
        try:
            return await asyncio.to_thread(self._finish, status)
        finally:
            self._engine.dispose()

    async def __aenter__(self) -> RunLog:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._closed:
            return
        if exc_type is None:
            status = RunStatus.FINISHED
        elif issubclass(exc_type, asyncio.CancelledError | KeyboardInterrupt):
            status = RunStatus.INTERRUPTED
        else:
            status = RunStatus.FAILED
        await self.close(status)

    async def _submit(self, record: _Record | None) -> None:
        if self._closed or self._task is None or self._task.done():
            raise StoreError(f"run log {self.run_id} is closed")
        if record is not None and record.run_id != self.run_id:
            raise StoreError(f"a record of run {record.run_id!r} was sent to the log of run {self.run_id!r}")
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        await self._queue.put((record, done))
        await done

    async def _writer(self) -> None:
        stopping = False
        while not stopping:
            batch = [await self._queue.get()]
            await asyncio.sleep(0)  # let records submitted in the same tick join this batch
            while len(batch) < self._batch_size and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            stopping = any(item is _STOP for item in batch)
            items = [item for item in batch if item is not _STOP]
            records = [record for record, _ in items if record is not None]
            error: BaseException | None = None
            try:
                if records:
                    await asyncio.to_thread(self._write_batch, records)
                    self.batches_written += 1
            except Exception as exc:  # handed to every waiter of this batch, not swallowed
                error = exc
            for _, done in items:
                _settle(done, error)
        while not self._queue.empty():  # submitted while closing: refuse rather than hang
            item = self._queue.get_nowait()
            if item is not _STOP:
                _settle(item[1], StoreError(f"run log {self.run_id} closed before this record was written"))

    def _write_batch(self, records: list[_Record]) -> None:
        now = now_iso()
        # Last write wins within a batch: one row per key (PostgreSQL refuses to touch a row twice).
        steps = {r.key: trace_row(r, now) for r in records if isinstance(r, TraceStep)}
        preds = {r.key: r for r in records if isinstance(r, Prediction)}
        try:
            with self._engine.begin() as conn:
                _upsert(conn, traces, list(steps.values()))
                _upsert(conn, predictions, [prediction_row(p, now) for p in preds.values()])
                for p in preds.values():
                    _trim_trace(conn, p)
        except SQLAlchemyError as exc:
            raise StoreError(
                f"writing {len(records)} records to the run store at {self._location.display} failed: {exc}"
            ) from exc

    def _completed_keys(self) -> frozenset[tuple[str, int]]:
        final = (PredictionStatus.OK.value, PredictionStatus.PARSE_ERROR.value)
        query = select(predictions.c.question_id, predictions.c.sample_idx).where(
            predictions.c.run_id == self.run_id, predictions.c.status.in_(final)
        )
        with self._engine.connect() as conn:
            return frozenset((row[0], row[1]) for row in conn.execute(query))

    def _finish(self, status: RunStatus) -> RunInfo:
        counts = (
            select(predictions.c.status, func.count())
            .where(predictions.c.run_id == self.run_id)
            .group_by(predictions.c.status)
        )
        try:
            with self._engine.begin() as conn:
                by_status = {row[0]: row[1] for row in conn.execute(counts)}
                conn.execute(
                    update(runs)
                    .where(runs.c.run_id == self.run_id)
                    .values(
                        status=status.value,
                        ended_at=now_iso(),
                        n_ok=by_status.get("ok", 0),
                        n_parse_error=by_status.get("parse_error", 0),
                        n_infra_error=by_status.get("infra_error", 0),
                    )
                )
                row = conn.execute(select(runs).where(runs.c.run_id == self.run_id)).mappings().one()
                return run_of(row)
        except SQLAlchemyError as exc:
            raise StoreError(f"could not close run {self.run_id}: {exc}") from exc


def _trim_trace(conn: Connection, prediction: Prediction) -> None:
    """Drop steps past the prediction's last one: leftovers of an attempt a crash cut short."""
    conn.execute(
        delete(traces).where(
            traces.c.run_id == prediction.run_id,
            traces.c.question_id == prediction.question_id,
            traces.c.sample_idx == prediction.sample_idx,
            traces.c.step_idx >= prediction.n_steps,
        )
    )


def _settle(done: asyncio.Future[None], error: BaseException | None) -> None:
    if done.done():  # its waiter was cancelled; the record was still handled
        return
    if error is None:
        done.set_result(None)
    else:
        done.set_exception(error)


def _upsert(conn: Connection, table: Table, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    stmt = insert(table)
    keys = [column.name for column in table.primary_key.columns]
    changes = {name: stmt.excluded[name] for name in rows[0] if name not in keys}
    conn.execute(stmt.on_conflict_do_update(index_elements=keys, set_=changes), rows)


def _open_run(engine: Engine, location: StoreLocation, provenance: RunProvenance, resume: bool) -> None:
    migrate(engine, location.display)
    try:
        with engine.begin() as conn:
            row = conn.execute(select(runs).where(runs.c.run_id == provenance.run_id)).mappings().first()
            if row is None:
                values = provenance_row(provenance) | {
                    "started_at": now_iso(),
                    "status": RunStatus.RUNNING.value,
                    "n_ok": 0,
                    "n_parse_error": 0,
                    "n_infra_error": 0,
                }
                conn.execute(runs.insert().values(**values))
                return
            if not resume:
                raise StoreError(
                    f"run {provenance.run_id!r} already exists in {location.display}; "
                    "resume it (--resume) or choose another run id",
                    run_id=provenance.run_id,
                )
            _check_same(provenance_of(row), provenance)
            # Only the mutable columns change; the provenance row stays as first written.
            conn.execute(
                update(runs)
                .where(runs.c.run_id == provenance.run_id)
                .values(status=RunStatus.RUNNING.value, ended_at=None)
            )
    except SQLAlchemyError as exc:
        raise StoreError(f"could not create run {provenance.run_id!r} in {location.display}: {exc}") from exc


def _check_same(stored: RunProvenance, given: RunProvenance) -> None:
    old, new = stored.model_dump(mode="json"), given.model_dump(mode="json")
    differing = [name for name in old if old[name] != new[name]]
    if differing:
        details = "; ".join(f"{name}: stored {old[name]!r}, now {new[name]!r}" for name in differing)
        raise StoreError(
            f"cannot resume run {stored.run_id!r}: its provenance differs ({details}); "
            "start a new run id for a different configuration",
            run_id=stored.run_id,
            fields=differing,
        )
