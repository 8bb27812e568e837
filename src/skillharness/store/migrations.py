"""Versioned schema upgrades of the run store.

The store records its layout version in the single-row ``schema_version`` table. Opening a store
for writing applies, in order and in one transaction, every step newer than its version; a new
store is built by the same steps from version 0, so there is one way to reach each layout. A
store whose version is newer than this code knows is refused with a :class:`StoreError` (a newer
skillharness wrote it; an older one must not guess at its meaning).

Each step is frozen history: never edit a released step, add a new one.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy import Connection, Engine, inspect, text
from sqlalchemy.exc import SQLAlchemyError

from skillharness.errors import StoreError
from skillharness.store import schema
from skillharness.store.engine import refuse_foreign_sqlite
from skillharness.store.schema import CURRENT_VERSION

# The provenance columns as version 2 knew them: its trigger step is frozen history.
_V2_PROVENANCE = (
    "run_id",
    "kind",
    "config_hash",
    "bundle_hash",
    "pools_sha256",
    "pool",
    "model",
    "endpoints",
    "sampling",
    "package_version",
    "started_at",
)

__all__ = ["STEPS", "check_known", "migrate", "stored_version"]

# Any fixed number: PostgreSQL sessions migrating the same database queue on this advisory lock.
_PG_LOCK_KEY = 0x5348_5354


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _v1_initial(conn: Connection) -> None:
    """Version 1: runs, predictions and traces with their primary keys."""
    conn.exec_driver_sql(
        "CREATE TABLE schema_version (id INTEGER NOT NULL PRIMARY KEY, version INTEGER NOT NULL,"
        " updated_at TEXT NOT NULL)"
    )
    conn.exec_driver_sql(
        "CREATE TABLE runs (run_id VARCHAR(200) NOT NULL PRIMARY KEY, kind VARCHAR(32) NOT NULL,"
        " config_hash VARCHAR(128) NOT NULL, bundle_hash VARCHAR(128) NOT NULL, pools_sha256 VARCHAR(128),"
        " pool VARCHAR(32), model VARCHAR(300) NOT NULL, endpoints TEXT NOT NULL, sampling TEXT NOT NULL,"
        " package_version VARCHAR(64) NOT NULL, started_at TEXT NOT NULL, ended_at TEXT,"
        " status VARCHAR(16) NOT NULL, n_ok INTEGER NOT NULL, n_parse_error INTEGER NOT NULL,"
        " n_infra_error INTEGER NOT NULL)"
    )
    conn.exec_driver_sql(
        "CREATE TABLE predictions (run_id VARCHAR(200) NOT NULL REFERENCES runs (run_id),"
        " question_id VARCHAR(200) NOT NULL, sample_idx INTEGER NOT NULL, task_type VARCHAR(100) NOT NULL,"
        " duration VARCHAR(32) NOT NULL, answer VARCHAR(8), correct BOOLEAN, status VARCHAR(16) NOT NULL,"
        " error_class VARCHAR(200), error_message TEXT, prompt_tokens INTEGER NOT NULL,"
        " completion_tokens INTEGER NOT NULL, latency_s FLOAT NOT NULL,"
        " cache_hit BOOLEAN NOT NULL, relevant_text_hash VARCHAR(128) NOT NULL, written_at TEXT NOT NULL,"
        " CONSTRAINT pk_predictions PRIMARY KEY (run_id, question_id, sample_idx))"
    )
    conn.exec_driver_sql(
        "CREATE TABLE traces (run_id VARCHAR(200) NOT NULL REFERENCES runs (run_id),"
        " question_id VARCHAR(200) NOT NULL, sample_idx INTEGER NOT NULL, step_idx INTEGER NOT NULL,"
        " role VARCHAR(16) NOT NULL, content TEXT NOT NULL, tool_name VARCHAR(200), tool_arguments TEXT,"
        " frames_shown TEXT NOT NULL, subtitles_shown TEXT NOT NULL, degraded BOOLEAN NOT NULL,"
        " error TEXT, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,"
        " latency_s FLOAT NOT NULL, cache_hit BOOLEAN NOT NULL, written_at TEXT NOT NULL,"
        " CONSTRAINT pk_traces PRIMARY KEY (run_id, question_id, sample_idx, step_idx))"
    )


def _v2_degraded_steps_and_immutable_provenance(conn: Connection) -> None:
    """Version 2: per-prediction degraded flag and step count, a status index, and a trigger that
    refuses any change to a run's provenance columns once written."""
    false = "false" if conn.dialect.name == "postgresql" else "0"
    conn.exec_driver_sql(f"ALTER TABLE predictions ADD COLUMN degraded BOOLEAN NOT NULL DEFAULT {false}")
    conn.exec_driver_sql("ALTER TABLE predictions ADD COLUMN n_steps INTEGER NOT NULL DEFAULT 0")
    conn.exec_driver_sql("CREATE INDEX ix_predictions_status ON predictions (run_id, status)")
    _provenance_trigger(conn, _V2_PROVENANCE)


def _provenance_trigger(conn: Connection, columns: tuple[str, ...]) -> None:
    """(Re)create the trigger that refuses any change to ``columns`` of a stored run."""
    if conn.dialect.name == "postgresql":
        old = ", ".join(f"OLD.{c}" for c in columns)
        new = ", ".join(f"NEW.{c}" for c in columns)
        conn.exec_driver_sql(
            "CREATE OR REPLACE FUNCTION skillharness_runs_provenance_immutable() RETURNS trigger AS $$"
            f" BEGIN IF ({new}) IS DISTINCT FROM ({old}) THEN"
            " RAISE EXCEPTION 'run provenance is immutable'; END IF;"
            " RETURN NEW; END $$ LANGUAGE plpgsql"
        )
        conn.exec_driver_sql(
            "CREATE TRIGGER runs_provenance_immutable BEFORE UPDATE ON runs FOR EACH ROW"
            " EXECUTE FUNCTION skillharness_runs_provenance_immutable()"
        )
    else:
        changed = " OR ".join(f"NEW.{c} IS NOT OLD.{c}" for c in columns)
        conn.exec_driver_sql(
            f"CREATE TRIGGER runs_provenance_immutable BEFORE UPDATE ON runs WHEN {changed}"
            " BEGIN SELECT RAISE(ABORT, 'run provenance is immutable'); END"
        )


_V3_TABLES = (
    (
        "CREATE TABLE diagnoses ( fingerprint VARCHAR(128) NOT NULL, run_id VARCHAR(200) NOT NULL, "
        "question_id VARCHAR(200) NOT NULL, sample_idx INTEGER NOT NULL, task_type VARCHAR(100) NOT "
        "NULL, cause VARCHAR(32) NOT NULL, target VARCHAR(200), reason TEXT NOT NULL, retryable "
        "BOOLEAN NOT NULL, written_at TEXT NOT NULL, PRIMARY KEY (fingerprint) )"
    ),
    (
        "CREATE TABLE gate_observations ( train_run_id VARCHAR(200) NOT NULL, gate_index INTEGER "
        "NOT NULL, draw_index INTEGER NOT NULL, question_id VARCHAR(200) NOT NULL, task_type "
        "VARCHAR(100) NOT NULL, sample_idx INTEGER NOT NULL, arm VARCHAR(16) NOT NULL, candidate "
        "INTEGER, incumbent INTEGER, wealth FLOAT NOT NULL, harm_wealth FLOAT NOT NULL, written_at "
        "TEXT NOT NULL, CONSTRAINT pk_gate_observations PRIMARY KEY (train_run_id, gate_index, "
        "draw_index) )"
    ),
    (
        "CREATE TABLE gate_decisions ( train_run_id VARCHAR(200) NOT NULL, gate_index INTEGER NOT "
        "NULL, epoch INTEGER NOT NULL, step INTEGER NOT NULL, target VARCHAR(200) NOT NULL, reason "
        "VARCHAR(32) NOT NULL, detail TEXT NOT NULL, evidence TEXT NOT NULL, version_before "
        "VARCHAR(32) NOT NULL, version_after VARCHAR(32), rationale TEXT NOT NULL, edits TEXT NOT "
        "NULL, document_before TEXT NOT NULL, document_after TEXT, written_at TEXT NOT NULL, "
        "CONSTRAINT pk_gate_decisions PRIMARY KEY (train_run_id, gate_index) )"
    ),
    (
        "CREATE TABLE dual_metric ( train_run_id VARCHAR(200) NOT NULL, epoch INTEGER NOT NULL, "
        "step INTEGER NOT NULL, target VARCHAR(200) NOT NULL, version VARCHAR(32) NOT NULL, "
        "target_correct INTEGER NOT NULL, target_n INTEGER NOT NULL, val_correct INTEGER NOT NULL, "
        "val_n INTEGER NOT NULL, ema TEXT NOT NULL, written_at TEXT NOT NULL, CONSTRAINT "
        "pk_dual_metric PRIMARY KEY (train_run_id, epoch, step, target) )"
    ),
    (
        "CREATE TABLE baseline_samples ( relevant_text_hash VARCHAR(128) NOT NULL, question_id "
        "VARCHAR(200) NOT NULL, sampling_hash VARCHAR(128) NOT NULL, sample_idx INTEGER NOT NULL, "
        "correct BOOLEAN NOT NULL, answer VARCHAR(8), run_id VARCHAR(200) NOT NULL, written_at TEXT "
        "NOT NULL, CONSTRAINT pk_baseline_samples PRIMARY KEY (relevant_text_hash, question_id, "
        "sampling_hash, sample_idx) )"
    ),
    (
        "CREATE TABLE train_steps ( train_run_id VARCHAR(200) NOT NULL, epoch INTEGER NOT NULL, "
        "step INTEGER NOT NULL, summary TEXT NOT NULL, written_at TEXT NOT NULL, CONSTRAINT "
        "pk_train_steps PRIMARY KEY (train_run_id, epoch, step) )"
    ),
    (
        "CREATE TABLE run_metrics ( run_id VARCHAR(200) NOT NULL, name VARCHAR(200) NOT NULL, value "
        "TEXT NOT NULL, written_at TEXT NOT NULL, CONSTRAINT pk_run_metrics PRIMARY KEY (run_id, "
        "name) )"
    ),
)


def _v3_training_ledger(conn: Connection) -> None:
    """Version 3: the training ledger (diagnoses, gates, dual metric, BaselineCache, steps, metrics),
    ``runs.parent_run_id`` (immutable like the rest of the provenance) and an index on the
    predictions' relevant-text hash."""
    conn.exec_driver_sql("ALTER TABLE runs ADD COLUMN parent_run_id VARCHAR(200)")
    # "finished_with_errors" is longer than version 1's 16 characters (SQLite ignores lengths).
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql("ALTER TABLE runs ALTER COLUMN status TYPE VARCHAR(32)")
    conn.exec_driver_sql("CREATE INDEX ix_predictions_relevant ON predictions (relevant_text_hash)")
    for ddl in _V3_TABLES:
        conn.exec_driver_sql(ddl)
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql("DROP TRIGGER runs_provenance_immutable ON runs")
    else:
        conn.exec_driver_sql("DROP TRIGGER runs_provenance_immutable")
    _provenance_trigger(conn, (*_V2_PROVENANCE, "parent_run_id"))


def _v4_llm_events(conn: Connection) -> None:
    """Version 4: ``llm_events``, a run's failed model attempts and breaker transitions."""
    conn.exec_driver_sql(
        "CREATE TABLE llm_events ( run_id VARCHAR(200) NOT NULL, at TEXT NOT NULL, seq INTEGER NOT NULL, "
        "event VARCHAR(16) NOT NULL, endpoint VARCHAR(300) NOT NULL, kind VARCHAR(64) NOT NULL, "
        "detail VARCHAR(64) NOT NULL, role VARCHAR(32) NOT NULL, attempt INTEGER NOT NULL, "
        "written_at TEXT NOT NULL, CONSTRAINT pk_llm_events PRIMARY KEY (run_id, at, seq) )"
    )


# STEPS[i] upgrades a store from version i to version i + 1.
STEPS: tuple[Callable[[Connection], None], ...] = (
    _v1_initial,
    _v2_degraded_steps_and_immutable_provenance,
    _v3_training_ledger,
    _v4_llm_events,
)
if len(STEPS) != CURRENT_VERSION:  # a new table layout needs its upgrade step
    raise RuntimeError(f"schema.CURRENT_VERSION={CURRENT_VERSION} but {len(STEPS)} upgrade steps exist")


def stored_version(conn: Connection) -> int:
    """The store's layout version: 0 for an empty database; StoreError for a foreign one."""
    tables = {name for name in inspect(conn).get_table_names() if not name.startswith("sqlite_")}
    if schema.schema_version.name not in tables:
        if tables & {table.name for table in schema.metadata.sorted_tables}:
            raise StoreError(
                "this database has run-store tables but no schema_version table; it was not written "
                "by skillharness and will not be modified",
                tables=sorted(tables),
            )
        if conn.dialect.name == "sqlite":
            refuse_foreign_sqlite(tables)
        return 0
    row = conn.execute(text("SELECT version FROM schema_version WHERE id = 1")).first()
    if row is None:
        raise StoreError("the store's schema_version table is empty; the store is damaged")
    return int(row[0])


def check_known(version: int, url: str) -> None:
    """Refuse a store written by a newer skillharness."""
    if version > CURRENT_VERSION:
        raise StoreError(
            f"the run store at {url} has schema version {version}, newer than this skillharness "
            f"knows ({CURRENT_VERSION}); upgrade skillharness to open it",
            url=url,
            version=version,
        )


def migrate(engine: Engine, url: str, *, target: int = CURRENT_VERSION) -> int:
    """Bring the store to ``target`` (default: current) in one transaction; return the version before."""
    try:
        with engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK_KEY})
            before = stored_version(conn)
            check_known(before, url)
            for version in range(before, target):
                STEPS[version](conn)
            if target > before:
                _set_version(conn, target, first=before == 0)
            return before
    except SQLAlchemyError as exc:
        raise StoreError(f"could not open or upgrade the run store at {url}: {exc}", url=url) from exc


def _set_version(conn: Connection, version: int, *, first: bool) -> None:
    params = {"version": version, "now": _now()}
    if first:
        conn.execute(
            text("INSERT INTO schema_version (id, version, updated_at) VALUES (1, :version, :now)"), params
        )
    else:
        conn.execute(
            text("UPDATE schema_version SET version = :version, updated_at = :now WHERE id = 1"), params
        )
