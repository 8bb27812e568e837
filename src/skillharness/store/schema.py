"""The run store's tables (SQLAlchemy 2 Core), at the current schema version.

These objects describe the *current* layout and are what queries are built from. Stores are
created and upgraded only by the ordered steps in :mod:`skillharness.store.migrations`; a test
checks that applying every step yields exactly these tables.

Timestamps are ISO-8601 UTC text (portable and exact on both SQLite and PostgreSQL); lists and
sampling parameters are JSON text.
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    false,
    text,
)

__all__ = [
    "CURRENT_VERSION",
    "PROVENANCE_COLUMNS",
    "metadata",
    "predictions",
    "runs",
    "schema_version",
    "traces",
]

CURRENT_VERSION = 2

metadata = MetaData()

schema_version = Table(
    "schema_version",
    metadata,
    Column("id", Integer, primary_key=True),  # always 1: a single-row table
    Column("version", Integer, nullable=False),
    Column("updated_at", Text, nullable=False),
)

runs = Table(
    "runs",
    metadata,
    Column("run_id", String(200), primary_key=True),
    Column("kind", String(32), nullable=False),
    Column("config_hash", String(128), nullable=False),
    Column("bundle_hash", String(128), nullable=False),
    Column("pools_sha256", String(128)),
    Column("pool", String(32)),
    Column("model", String(300), nullable=False),
    Column("endpoints", Text, nullable=False),
    Column("sampling", Text, nullable=False),
    Column("package_version", String(64), nullable=False),
    Column("started_at", Text, nullable=False),
    Column("ended_at", Text),
    Column("status", String(16), nullable=False),
    Column("n_ok", Integer, nullable=False, default=0),
    Column("n_parse_error", Integer, nullable=False, default=0),
    Column("n_infra_error", Integer, nullable=False, default=0),
)

# Written once when a run is created; a database trigger refuses any later change to them.
PROVENANCE_COLUMNS = (
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

predictions = Table(
    "predictions",
    metadata,
    Column("run_id", String(200), ForeignKey("runs.run_id"), nullable=False),
    Column("question_id", String(200), nullable=False),
    Column("sample_idx", Integer, nullable=False),
    Column("task_type", String(100), nullable=False),
    Column("duration", String(32), nullable=False),
    Column("answer", String(8)),
    Column("correct", Boolean),
    Column("status", String(16), nullable=False),
    Column("error_class", String(200)),
    Column("error_message", Text),
    Column("prompt_tokens", Integer, nullable=False),
    Column("completion_tokens", Integer, nullable=False),
    Column("latency_s", Float, nullable=False),
    Column("cache_hit", Boolean, nullable=False),
    Column("relevant_text_hash", String(128), nullable=False),
    Column("written_at", Text, nullable=False),
    Column("degraded", Boolean, nullable=False, server_default=false()),  # v2
    Column("n_steps", Integer, nullable=False, server_default=text("0")),  # v2
    PrimaryKeyConstraint("run_id", "question_id", "sample_idx", name="pk_predictions"),
    Index("ix_predictions_status", "run_id", "status"),  # v2: resume and reports filter on status
)

traces = Table(
    "traces",
    metadata,
    Column("run_id", String(200), ForeignKey("runs.run_id"), nullable=False),
    Column("question_id", String(200), nullable=False),
    Column("sample_idx", Integer, nullable=False),
    Column("step_idx", Integer, nullable=False),
    Column("role", String(16), nullable=False),
    Column("content", Text, nullable=False),
    Column("tool_name", String(200)),
    Column("tool_arguments", Text),
    Column("frames_shown", Text, nullable=False),
    Column("subtitles_shown", Text, nullable=False),
    Column("degraded", Boolean, nullable=False),
    Column("error", Text),
    Column("prompt_tokens", Integer, nullable=False),
    Column("completion_tokens", Integer, nullable=False),
    Column("latency_s", Float, nullable=False),
    Column("cache_hit", Boolean, nullable=False),
    Column("written_at", Text, nullable=False),
    PrimaryKeyConstraint("run_id", "question_id", "sample_idx", "step_idx", name="pk_traces"),
)
