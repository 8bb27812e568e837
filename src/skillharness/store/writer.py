"""RunLog: the only writer of a run's rows.

``RunLog.open`` creates the run with its provenance (or, for a resume, checks that the stored
provenance is identical and writes nothing of it). Predictions and trace steps then go through one
writer task that commits them in FIFO order and in batches (everything queued, up to
``batch_size``), each batch one transaction of upserts keyed by the records' primary keys
(audit P2-3).

Ordering and durability:

- ``write_step`` queues the step and returns at once: it is committed with the next batch, at
  most ``_STEP_LINGER_S`` (20 ms) plus one commit later, so a running question's trace is visible
  while it runs (audit P0-2) without the question waiting for a commit per step. Queued steps
  wait that long only for an awaited record (a prediction) to share its transaction.
- ``write_prediction`` returns once its batch is committed. The writer is FIFO, so by then every
  step of the same question queued before it is committed too: **a stored prediction implies its
  trace steps are stored**. A resume relies on this when it skips finished questions.
- A failed batch is never swallowed. Awaited records of the batch get the error; for queued steps
  the error is kept per ``(question_id, sample_idx)`` and raised by that question's next
  ``write_step`` or ``write_prediction`` (a prediction already queued behind a failed step is not
  written and gets the error), so the agent turns it into an ``infra_error`` for that question.
  ``flush`` raises while any such error is unclaimed.
- A crash loses at most what is queued or in flight; a resume rewrites it idempotently.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from skillharness.errors import StoreError
from skillharness.store.config import StoreConfig
from skillharness.store.engine import StoreLocation, create_store_engine, parse_store_url
from skillharness.store.lease import Lease, LeaseLost
from skillharness.store.records import Prediction, RunInfo, RunProvenance, RunStatus, TraceStep
from skillharness.store.run_open import open_run_row, prepare_store
from skillharness.store.run_tables import RunTables

__all__ = ["RunLog"]

log = logging.getLogger(__name__)

_STOP = object()
# How long queued trace steps wait for an awaited record (a prediction, a flush) to share its
# transaction. Under load one arrives within a few milliseconds; a lone step still becomes visible
# this soon after it was written.
_STEP_LINGER_S = 0.02
_Record = Prediction | TraceStep
_QuestionKey = tuple[str, int]  # (question_id, sample_idx)
_Item = tuple[_Record | None, "asyncio.Future[None] | None"]  # (None, done) is a flush


async def _abandon(opening: asyncio.Future[str | None], tables: RunTables) -> None:
    """A cancelled open: its thread cannot be stopped, so wait for it, and if it took the run's
    lease, release it (the run ends ``interrupted``). Otherwise this process would hold a lease no
    writer renews or closes, and its own resume would be refused until the lease expired."""
    try:
        await opening
    except Exception:  # nothing was opened, so nothing is held
        return
    with contextlib.suppress(SQLAlchemyError, StoreError):  # an unreleased lease expires by itself
        await asyncio.to_thread(tables.finish, RunStatus.INTERRUPTED)


class RunLog:
    """Writes one run. Create with :meth:`open`; use as an async context manager.

    It satisfies the agent's ``TraceSink`` protocol (``write_step``, ``write_prediction``).
    """

    def __init__(
        self,
        engine: Engine,
        location: StoreLocation,
        provenance: RunProvenance,
        config: StoreConfig,
        *,
        owns_engine: bool = True,
        lease: Lease | None = None,
    ):
        self._tables = RunTables(engine, location, provenance.run_id, lease)
        self._owns_engine = owns_engine
        self.provenance = provenance
        self._batch_size = config.batch_size
        self._queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=config.queue_size)
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        # Awaited items (predictions, flushes, the stop) queued and not yet taken; set() wakes a linger.
        self._awaited = 0
        self._wake = asyncio.Event()
        # Errors of batches that held queued (not awaited) steps, until their question claims them.
        self._failed: dict[_QuestionKey, StoreError] = {}
        self.batches_written = 0
        self.records_written = 0
        self._heartbeat: asyncio.Task[None] | None = None
        self._renewal: asyncio.Future[None] | None = None
        self._heartbeat_s = config.lease_heartbeat_s
        self.lease_note: str | None = None  # why a lease left behind was void, when one was

    @property
    def run_id(self) -> str:
        return self.provenance.run_id

    @classmethod
    async def open(
        cls,
        config: StoreConfig | str,
        provenance: RunProvenance,
        *,
        resume: bool = False,
        settings: Mapping[str, Any] | None = None,
    ) -> RunLog:
        """Open the store (upgrading its schema if older) and create or resume the run.

        ``settings`` (dotted key → value, what ``provenance.config_hash`` hashes) are stored with a
        new run, so that a refused resume can name each setting that changed.

        Raises:
            StoreError: the run exists and ``resume`` is false; the stored provenance differs from
                ``provenance`` (the message names the fields, and the settings that differ); the
                store is newer than this code.
        """
        config = StoreConfig(url=config) if isinstance(config, str) else config
        location = parse_store_url(config.url)
        engine = create_store_engine(location, readonly=False, busy_timeout_s=config.busy_timeout_s)
        try:
            await asyncio.to_thread(prepare_store, engine, location)
            return await cls.on_engine(
                engine, location, config, provenance, resume=resume, owns_engine=True, settings=settings
            )
        except BaseException:
            engine.dispose()
            raise

    @classmethod
    async def on_engine(
        cls,
        engine: Engine,
        location: StoreLocation,
        config: StoreConfig,
        provenance: RunProvenance,
        *,
        resume: bool,
        owns_engine: bool,
        settings: Mapping[str, Any] | None = None,
    ) -> RunLog:
        """Create or resume the run on an engine whose store is already migrated (see RunStore)."""
        lease = Lease(provenance.run_id, config.lease_expiry_s, config.host or socket.gethostname())
        opening = asyncio.ensure_future(
            asyncio.to_thread(open_run_row, engine, location, provenance, resume, settings, lease)
        )
        try:
            note = await asyncio.shield(opening)
        except asyncio.CancelledError:
            await _abandon(opening, RunTables(engine, location, provenance.run_id, lease))
            raise
        run = cls(engine, location, provenance, config, owns_engine=owns_engine, lease=lease)
        run.lease_note = note
        run._task = asyncio.create_task(run._writer(), name=f"runlog-{provenance.run_id}")
        run._heartbeat = asyncio.create_task(run._keep_lease(), name=f"lease-{provenance.run_id}")
        return run

    async def _keep_lease(self) -> None:
        """The lease's heartbeat: renewed every ``store.lease_heartbeat_s`` until the run closes."""
        while True:
            await asyncio.sleep(self._heartbeat_s)
            # Shielded and kept: cancelling the heartbeat does not stop the thread, and a renewal
            # landing after close() released the lease would take it back (close waits for it).
            self._renewal = asyncio.ensure_future(asyncio.to_thread(self._tables.lease, "refresh"))
            try:
                await asyncio.shield(self._renewal)
            except LeaseLost as exc:  # renewing would steal it back from the writer that took it
                log.error("%s", exc)
                return
            except (SQLAlchemyError, StoreError) as exc:  # a missed heartbeat only shortens the lease
                log.warning("run %s: a lease heartbeat failed: %s", self.run_id, exc)

    async def write_step(self, step: TraceStep) -> None:
        """Queue one trace step for the next batch and return (it waits only when the queue is full).

        Raises:
            StoreError: the log is closed, or an earlier step of this question failed to be stored.
        """
        self._check(step)
        await self._queue.put((step, None))

    async def write_prediction(self, prediction: Prediction) -> None:
        """Upsert one prediction (and drop trace steps past its ``n_steps`` left by an earlier attempt).

        Returns once committed, and with it every step of the question queued before it.

        Raises:
            StoreError: the batch failed, or an earlier step of this question failed to be stored.
        """
        self._check(prediction)
        await self._submit(prediction)

    async def flush(self) -> None:
        """Wait until everything queued so far is committed.

        Raises:
            StoreError: a batch failed and its error was not yet claimed by its question.
        """
        self._check(None)
        await self._submit(None)
        if self._failed:
            keys = ", ".join(f"{q}#{s}" for q, s in sorted(self._failed))
            first = next(iter(self._failed.values()))
            raise StoreError(f"trace steps of {keys} were not stored: {first}") from first

    async def completed_keys(self) -> frozenset[tuple[str, int]]:
        """``(question_id, sample_idx)`` pairs stored as ``ok`` or ``parse_error``: a resume skips them."""
        return await asyncio.to_thread(self._tables.completed_keys)

    async def close(self, status: RunStatus = RunStatus.FINISHED) -> RunInfo:
        """Drain the writer, then record the end time, ``status`` and the counts.

        A cancelled close still finishes (then the cancellation is raised): a rollout whose sibling
        arm failed is cancelled while closing, and a close cut short would leave this live process
        holding the lease with nobody renewing or releasing it, so its own resume would be refused
        until the lease expired.
        """
        if self._closed:
            raise StoreError(f"run log {self.run_id} is already closed")
        self._closed = True
        closing = asyncio.ensure_future(self._close(status))
        try:
            return await asyncio.shield(closing)
        except asyncio.CancelledError:
            while not closing.done():
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.shield(closing)
            raise

    async def _close(self, status: RunStatus) -> RunInfo:
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            await asyncio.gather(self._heartbeat, return_exceptions=True)
        if self._renewal is not None:
            await asyncio.gather(self._renewal, return_exceptions=True)
        if self._task is not None:
            await self._queue.put(_STOP)
            self._awaited += 1
            self._wake.set()
            await self._task
        try:
            return await asyncio.to_thread(self._tables.finish, status)
        finally:
            if self._owns_engine:
                self._tables.engine.dispose()

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

    def _check(self, record: _Record | None) -> None:
        if self._closed or self._task is None or self._task.done():
            raise StoreError(f"run log {self.run_id} is closed")
        if record is None:
            return
        if record.run_id != self.run_id:
            raise StoreError(f"a record of run {record.run_id!r} was sent to the log of run {self.run_id!r}")
        error = self._claim(record)
        if error is not None:  # claimed once: the question's infra_error prediction may then be written
            raise error

    def _claim(self, record: _Record) -> StoreError | None:
        """The kept error of the record's question (forgotten now), naming the question."""
        question, sample = _question_key(record)
        error = self._failed.pop((question, sample), None)
        if error is None:
            return None
        claimed = StoreError(f"a trace step of {question}#{sample} was not stored: {error}")
        claimed.__cause__ = error
        return claimed

    async def _submit(self, record: _Record | None) -> None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        await self._queue.put((record, done))
        self._awaited += 1
        self._wake.set()
        await done

    async def _writer(self) -> None:
        stopping = False
        while not stopping:
            batch = [await self._queue.get()]
            await self._linger()
            while len(batch) < self._batch_size and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            self._awaited -= sum(1 for item in batch if item is _STOP or item[1] is not None)
            if self._awaited == 0:
                self._wake.clear()
            stopping = any(item is _STOP for item in batch)
            await self._commit([item for item in batch if item is not _STOP])
        while not self._queue.empty():  # submitted while closing: refuse rather than hang
            item = self._queue.get_nowait()
            if item is not _STOP and item[1] is not None:
                _settle(item[1], StoreError(f"run log {self.run_id} closed before this record was written"))

    async def _linger(self) -> None:
        """Give queued steps a moment to ride with the next awaited record; never delays one."""
        if self._awaited == 0 and self._queue.qsize() < self._batch_size:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(_STEP_LINGER_S):
                    await self._wake.wait()
        await asyncio.sleep(0)  # let records submitted in the same tick join this batch

    async def _commit(self, items: list[_Item]) -> None:
        """Write one batch; hand its outcome to its waiters, or keep it for its queued steps' questions."""
        items = [item for item in items if not self._refused(item)]
        records = [record for record, _ in items if record is not None]
        error: StoreError | None = None
        try:
            if records:
                await asyncio.to_thread(self._tables.write_batch, records)
                self.batches_written += 1
                self.records_written += len(records)
        except StoreError as exc:  # handed to every writer of this batch, not swallowed
            error = exc
        except Exception as exc:  # a bug below must not leave waiters hanging or pass silently
            error = StoreError(f"writing {len(records)} records to the run store failed: {exc!r}")
        awaited = {_question_key(r) for r, done in items if r is not None and done is not None}
        for record, done in items:
            if done is not None:
                _settle(done, error)
            elif error is not None and record is not None and _question_key(record) not in awaited:
                self._failed.setdefault(_question_key(record), error)

    def _refused(self, item: _Item) -> bool:
        """A prediction queued behind a failed step of its question is not written: it gets the error."""
        record, done = item
        if not isinstance(record, Prediction) or done is None:
            return False
        error = self._claim(record)
        if error is None:
            return False
        _settle(done, error)
        return True


def _question_key(record: _Record) -> _QuestionKey:
    return (record.question_id, record.sample_idx)


def _settle(done: asyncio.Future[None], error: BaseException | None) -> None:
    if done.done():  # its waiter was cancelled; the record was still handled
        return
    if error is None:
        done.set_result(None)
    else:
        done.set_exception(error)
