"""Opening a run in the store: the schema brought up to date, then the run's row created or resumed.

One transaction per open: the lease is taken first (a second writer is refused), then the run is
created with its provenance and settings, or, for a resume, checked against them (the refusal
names every setting that changed) and marked running again. A resume on other replicas of the
same model is accepted and the change recorded (``replica_changes``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Engine, select, update
from sqlalchemy.exc import SQLAlchemyError

from skillharness.errors import StoreError
from skillharness.store.engine import StoreLocation
from skillharness.store.initialise import ensure_initialised
from skillharness.store.lease import Lease
from skillharness.store.migrations import migrate
from skillharness.store.records import RunProvenance, RunStatus
from skillharness.store.rows import now_iso, provenance_of, provenance_row
from skillharness.store.run_settings import (
    check_same_run,
    read_settings,
    record_replica_change,
    write_settings,
)
from skillharness.store.schema import runs

__all__ = ["open_run_row", "prepare_store"]


def prepare_store(engine: Engine, location: StoreLocation) -> None:
    ensure_initialised(location)  # a new SQLite store appears whole or not at all
    migrate(engine, location.display)


def open_run_row(
    engine: Engine,
    location: StoreLocation,
    provenance: RunProvenance,
    resume: bool,
    settings: Mapping[str, Any] | None,
    lease: Lease | None = None,
) -> str | None:
    """Create or resume the run's row; returns why a lease left behind was void, if one was."""
    note = None
    try:
        with engine.begin() as conn:
            if lease is not None:
                note = lease.acquire(conn)  # before anything else: a second writer of this run is refused
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
                if settings is not None:
                    write_settings(conn, provenance.run_id, settings)
                return note
            if not resume:
                raise StoreError(
                    f"run {provenance.run_id!r} already exists in {location.display}; "
                    "resume it (--resume) or choose another run id",
                    run_id=provenance.run_id,
                )
            stored_settings = read_settings(conn, provenance.run_id)
            stored = provenance_of(row)
            check_same_run(stored, provenance, stored_settings, settings)
            # Replicas are interchangeable; a resume on others is recorded beside the provenance.
            record_replica_change(conn, provenance.run_id, stored.endpoints, provenance.endpoints)
            if stored_settings is None and settings is not None:  # a run from before settings were kept
                write_settings(conn, provenance.run_id, settings)
            # Only the mutable columns change; the provenance row stays as first written.
            conn.execute(
                update(runs)
                .where(runs.c.run_id == provenance.run_id)
                .values(status=RunStatus.RUNNING.value, ended_at=None)
            )
            return note
    except SQLAlchemyError as exc:
        raise StoreError(f"could not create run {provenance.run_id!r} in {location.display}: {exc}") from exc
