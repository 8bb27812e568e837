"""RunReader: read-only access to stored runs (audit P2-2).

It opens SQLite with ``mode=ro`` and ``query_only`` and PostgreSQL in read-only transactions, so
even SQL sent through its connection cannot write; and it has no method that writes. Reports,
``runs list/show`` and the diagnosis read through it.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import TracebackType
from typing import Any, TypeVar

from sqlalchemy import Engine, and_, func, or_, select
from sqlalchemy.exc import SQLAlchemyError

from skillharness.errors import StoreError, StoreNotInitialised, StoreOutdated
from skillharness.store.config import StoreConfig
from skillharness.store.engine import StoreLocation, create_store_engine, parse_store_url
from skillharness.store.ledger import LedgerRecord, select_records
from skillharness.store.migrations import check_known, stored_version
from skillharness.store.records import Prediction, PredictionStatus, RunInfo, StepRole, TraceStep
from skillharness.store.rows import prediction_of, run_of, trace_of
from skillharness.store.run_settings import read_replica_changes, read_settings
from skillharness.store.schema import CURRENT_VERSION, predictions, runs, traces

__all__ = ["RunReader"]

R = TypeVar("R", bound=LedgerRecord)


class RunReader:
    """Read-only view of a run store. Use as a context manager, or call :meth:`close`."""

    def __init__(self, config: StoreConfig | str) -> None:
        url = config if isinstance(config, str) else config.url
        self._location: StoreLocation = parse_store_url(url)
        self._engine: Engine = create_store_engine(self._location, readonly=True)
        try:
            self._check_version()
        except BaseException:
            self._engine.dispose()
            raise

    def _check_version(self) -> None:
        try:
            with self._engine.connect() as conn:
                version = stored_version(conn)
        except SQLAlchemyError as exc:
            raise StoreError(f"cannot read the run store at {self._location.display}: {exc}") from exc
        check_known(version, self._location.display)
        if version == 0:
            raise StoreNotInitialised(
                f"the run store at {self._location.display} is empty (not initialised): no run was "
                "ever recorded in it (a start-up may have been stopped before it created the store); "
                "start a run without --resume to create it",
                version=version,
            )
        if version < CURRENT_VERSION:
            raise StoreOutdated(
                f"the run store at {self._location.display} has schema version {version} (current: "
                f"{CURRENT_VERSION}); a reader never upgrades it: run any writing command "
                "(e.g. an infer run) once to upgrade it",
                version=version,
            )

    def __enter__(self) -> RunReader:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._engine.dispose()

    @property
    def engine(self) -> Engine:
        """The read-only engine, for ad-hoc queries (they cannot write either)."""
        return self._engine

    def runs(self) -> list[RunInfo]:
        """Every run, oldest first."""
        with self._engine.connect() as conn:
            rows = conn.execute(select(runs).order_by(runs.c.started_at, runs.c.run_id)).mappings()
            return [run_of(row) for row in rows]

    def run(self, run_id: str) -> RunInfo:
        """One run; StoreError naming the known runs when it does not exist."""
        with self._engine.connect() as conn:
            row = conn.execute(select(runs).where(runs.c.run_id == run_id)).mappings().first()
        if row is None:
            raise StoreError(f"no run {run_id!r} in {self._location.display}; {self._known()}", run_id=run_id)
        return run_of(row)

    def _known(self, shown: int = 10) -> str:
        """The runs a user started, the latest first: one training run has a hundred child runs
        (gate arms, rollouts), and listing them all buries the id the user meant."""
        everything = self.runs()
        started = [info.run_id for info in reversed(everything) if info.provenance.parent_run_id is None]
        if not started:
            return "the store holds no runs"
        more = f"; the latest {shown} of {len(started)}" if len(started) > shown else ""
        children = len(everything) - len(started)
        rest = f", besides {children} child runs of theirs" if children else ""
        return f"its runs: {', '.join(started[:shown])}{more}{rest} (`skillharness runs list` shows them all)"

    def settings(self, run_id: str) -> dict[str, Any] | None:
        """The run's stored settings (dotted key → value), or None for a run from before they were kept."""
        with self._engine.connect() as conn:
            return read_settings(conn, run_id)

    def replica_changes(self, run_id: str) -> list[dict[str, Any]]:
        """The run's resumes on other replicas of its model, oldest first (empty: none)."""
        with self._engine.connect() as conn:
            return read_replica_changes(conn, run_id)

    def predictions(self, run_id: str, *, status: PredictionStatus | None = None) -> list[Prediction]:
        """The run's predictions ordered by question and sample, optionally of one status."""
        query = select(predictions).where(predictions.c.run_id == run_id)
        if status is not None:
            query = query.where(predictions.c.status == status.value)
        query = query.order_by(predictions.c.question_id, predictions.c.sample_idx)
        with self._engine.connect() as conn:
            return [prediction_of(row) for row in conn.execute(query).mappings()]

    def status_counts(self, run_id: str) -> dict[PredictionStatus, int]:
        """How many predictions of each status the run has now."""
        query = (
            select(predictions.c.status, func.count())
            .where(predictions.c.run_id == run_id)
            .group_by(predictions.c.status)
        )
        with self._engine.connect() as conn:
            found = {row[0]: row[1] for row in conn.execute(query)}
        return {status: found.get(status.value, 0) for status in PredictionStatus}

    def trace(self, run_id: str, question_id: str, sample_idx: int = 0) -> list[TraceStep]:
        """One sample's trace steps, in order."""
        query = (
            select(traces)
            .where(
                traces.c.run_id == run_id,
                traces.c.question_id == question_id,
                traces.c.sample_idx == sample_idx,
            )
            .order_by(traces.c.step_idx)
        )
        with self._engine.connect() as conn:
            return [trace_of(row) for row in conn.execute(query).mappings()]

    def iter_traces(self, run_id: str, *, answers_via: str | None = None) -> Iterator[TraceStep]:
        """Every trace step of a run, ordered by question, sample and step.

        ``answers_via`` (a tool name): only the steps that can carry an answer, a plain assistant
        message or a call of that tool; a score read back after a run reads a third of the rows.
        """
        query = (
            select(traces)
            .where(traces.c.run_id == run_id)
            .order_by(traces.c.question_id, traces.c.sample_idx, traces.c.step_idx)
        )
        if answers_via is not None:
            query = query.where(
                or_(
                    and_(traces.c.role == StepRole.ASSISTANT.value, traces.c.tool_name.is_(None)),
                    and_(traces.c.role == StepRole.TOOL.value, traces.c.tool_name == answers_via),
                )
            )
        with self._engine.connect() as conn:
            for row in conn.execute(query).mappings():
                yield trace_of(row)

    def ledger(self, kind: type[R], **where: Any) -> list[R]:
        """Training-ledger records of ``kind`` (diagnoses, gate observations and decisions, ...)."""
        return select_records(self._engine, kind, **where)

    def children(self, parent_run_id: str) -> list[RunInfo]:
        """The runs recorded as serving ``parent_run_id`` (baseline, gate arms, evals), oldest first."""
        query = select(runs).where(runs.c.parent_run_id == parent_run_id).order_by(runs.c.started_at)
        with self._engine.connect() as conn:
            return [run_of(row) for row in conn.execute(query).mappings()]
