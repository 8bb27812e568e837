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
    "baseline_samples",
    "diagnoses",
    "dual_metric",
    "gate_decisions",
    "gate_observations",
    "llm_events",
    "metadata",
    "predictions",
    "run_metrics",
    "runs",
    "schema_version",
    "traces",
    "train_steps",
]

CURRENT_VERSION = 4

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
    Column("status", String(32), nullable=False),
    Column("n_ok", Integer, nullable=False, default=0),
    Column("n_parse_error", Integer, nullable=False, default=0),
    Column("n_infra_error", Integer, nullable=False, default=0),
    Column("parent_run_id", String(200)),  # v3: a gate's, baseline's or eval's run names its training run
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
    "parent_run_id",
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
    Index("ix_predictions_relevant", "relevant_text_hash"),  # v3: BaselineCache and diagnosis joins
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


# --- v3: the training ledger ----------------------------------------------------------------
# Each table is keyed so that a resume upserts, never duplicates (audit P2-3). JSON columns are
# text; the record types in :mod:`skillharness.store.ledger` convert both ways.

diagnoses = Table(
    "diagnoses",
    metadata,
    Column("fingerprint", String(128), primary_key=True),  # judge model+sampling, template, skill, prediction
    Column("run_id", String(200), nullable=False),
    Column("question_id", String(200), nullable=False),
    Column("sample_idx", Integer, nullable=False),
    Column("task_type", String(100), nullable=False),
    Column("cause", String(32), nullable=False),
    Column("target", String(200)),
    Column("reason", Text, nullable=False),
    Column("retryable", Boolean, nullable=False),
    Column("written_at", Text, nullable=False),
)

gate_observations = Table(
    "gate_observations",
    metadata,
    Column("train_run_id", String(200), nullable=False),
    Column("gate_index", Integer, nullable=False),
    Column("draw_index", Integer, nullable=False),
    Column("question_id", String(200), nullable=False),
    Column("task_type", String(100), nullable=False),
    Column("sample_idx", Integer, nullable=False),
    Column("arm", String(16), nullable=False),  # "target" draws, or "guard" draws of an untargeted class
    Column("candidate", Integer),  # 1 correct, 0 wrong, NULL infra
    Column("incumbent", Integer),
    Column("wealth", Float, nullable=False),
    Column("harm_wealth", Float, nullable=False),
    Column("written_at", Text, nullable=False),
    PrimaryKeyConstraint("train_run_id", "gate_index", "draw_index", name="pk_gate_observations"),
)

gate_decisions = Table(
    "gate_decisions",
    metadata,
    Column("train_run_id", String(200), nullable=False),
    Column("gate_index", Integer, nullable=False),
    Column("epoch", Integer, nullable=False),
    Column("step", Integer, nullable=False),
    Column("target", String(200), nullable=False),
    Column("reason", String(32), nullable=False),
    Column("detail", Text, nullable=False),
    Column("evidence", Text, nullable=False),  # JSON: the ladder's Decision, guard result, alpha
    Column("version_before", String(32), nullable=False),
    Column("version_after", String(32)),
    Column("rationale", Text, nullable=False),
    Column("edits", Text, nullable=False),  # JSON: the edit set as proposed
    Column("document_before", Text, nullable=False),
    Column("document_after", Text),
    Column("written_at", Text, nullable=False),
    PrimaryKeyConstraint("train_run_id", "gate_index", name="pk_gate_decisions"),
)

dual_metric = Table(
    "dual_metric",
    metadata,
    Column("train_run_id", String(200), nullable=False),
    Column("epoch", Integer, nullable=False),
    Column("step", Integer, nullable=False),
    Column("target", String(200), nullable=False),
    Column("version", String(32), nullable=False),
    Column("target_correct", Integer, nullable=False),
    Column("target_n", Integer, nullable=False),
    Column("val_correct", Integer, nullable=False),
    Column("val_n", Integer, nullable=False),
    Column("ema", Text, nullable=False),  # JSON: gamma-EMA of per-class val accuracy after this step
    Column("written_at", Text, nullable=False),
    PrimaryKeyConstraint("train_run_id", "epoch", "step", "target", name="pk_dual_metric"),
)

baseline_samples = Table(
    "baseline_samples",
    metadata,
    Column("relevant_text_hash", String(128), nullable=False),
    Column("question_id", String(200), nullable=False),
    Column("sampling_hash", String(128), nullable=False),
    Column("sample_idx", Integer, nullable=False),
    Column("correct", Boolean, nullable=False),
    Column("answer", String(8)),
    Column("run_id", String(200), nullable=False),  # the run whose prediction it is
    Column("written_at", Text, nullable=False),
    PrimaryKeyConstraint(
        "relevant_text_hash", "question_id", "sampling_hash", "sample_idx", name="pk_baseline_samples"
    ),
)

train_steps = Table(
    "train_steps",
    metadata,
    Column("train_run_id", String(200), nullable=False),
    Column("epoch", Integer, nullable=False),
    Column("step", Integer, nullable=False),
    Column("summary", Text, nullable=False),  # JSON: waterfall counts, candidates, usage, version
    Column("written_at", Text, nullable=False),
    PrimaryKeyConstraint("train_run_id", "epoch", "step", name="pk_train_steps"),
)

run_metrics = Table(
    "run_metrics",
    metadata,
    Column("run_id", String(200), nullable=False),
    Column("name", String(200), nullable=False),
    Column("value", Text, nullable=False),  # JSON
    Column("written_at", Text, nullable=False),
    PrimaryKeyConstraint("run_id", "name", name="pk_run_metrics"),
)

# v4: a run's outages on the record: each failed model attempt (error class, replica, what the
# retry layer did next) and each breaker transition, with its time.
llm_events = Table(
    "llm_events",
    metadata,
    Column("run_id", String(200), nullable=False),
    Column("at", Text, nullable=False),  # ISO-8601 UTC with microseconds
    Column("seq", Integer, nullable=False),  # order within one process's events
    Column("event", String(16), nullable=False),  # attempt | breaker
    Column("endpoint", String(300), nullable=False),
    Column("kind", String(64), nullable=False),  # error class; for a breaker: its new state
    Column("detail", String(64), nullable=False),  # retried | failover | gave_up | fatal; breaker: old state
    Column("role", String(32), nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("written_at", Text, nullable=False),
    PrimaryKeyConstraint("run_id", "at", "seq", name="pk_llm_events"),
)
