"""Conversions between records and table rows (one place, used by the writer and the reader)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from skillharness.llm.types import SamplingParams
from skillharness.store.records import Prediction, RunInfo, RunProvenance, TraceStep

__all__ = ["now_iso", "prediction_of", "prediction_row", "provenance_row", "run_of", "trace_of", "trace_row"]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _text_safe(row: dict[str, Any]) -> dict[str, Any]:
    # PostgreSQL text cannot hold NUL characters; model output sometimes does. Replace them so a
    # stray byte cannot turn a finished question into a store failure.
    return {k: v.replace("\x00", "\ufffd") if isinstance(v, str) else v for k, v in row.items()}


def prediction_row(prediction: Prediction, written_at: str) -> dict[str, Any]:
    row = prediction.model_dump(mode="json")
    row["written_at"] = written_at
    return _text_safe(row)


def trace_row(step: TraceStep, written_at: str) -> dict[str, Any]:
    row = step.model_dump(mode="json")
    row["frames_shown"] = json.dumps(row["frames_shown"])
    row["subtitles_shown"] = json.dumps(row["subtitles_shown"], ensure_ascii=False)
    row["written_at"] = written_at
    return _text_safe(row)


def provenance_row(provenance: RunProvenance) -> dict[str, Any]:
    row = provenance.model_dump(mode="json")
    row["endpoints"] = json.dumps(row["endpoints"])
    row["sampling"] = json.dumps(row["sampling"], sort_keys=True)
    return row


def prediction_of(row: Mapping[str, Any]) -> Prediction:
    data = {k: v for k, v in row.items() if k in Prediction.model_fields}
    return Prediction.model_validate(data)


def trace_of(row: Mapping[str, Any]) -> TraceStep:
    data = {k: v for k, v in row.items() if k in TraceStep.model_fields}
    data["frames_shown"] = tuple(json.loads(row["frames_shown"]))
    data["subtitles_shown"] = tuple(json.loads(row["subtitles_shown"]))
    return TraceStep.model_validate(data)


def provenance_of(row: Mapping[str, Any]) -> RunProvenance:
    data = {k: row[k] for k in RunProvenance.model_fields}
    data["endpoints"] = tuple(json.loads(row["endpoints"]))
    data["sampling"] = _stored_sampling(json.loads(row["sampling"]))
    return RunProvenance.model_validate(data)


def _stored_sampling(stored: dict[str, Any]) -> SamplingParams:
    """A run's sampling as it was recorded. A value a later version refuses (a temperature outside
    the API's range, whose run holds only refused requests) is read as written, not re-judged: one
    such run must not make every other run of the store unreadable."""
    try:
        return SamplingParams.model_validate(stored)
    except ValidationError:
        known = {k: v for k, v in stored.items() if k in SamplingParams.model_fields}
        if isinstance(known.get("stop"), list):
            known["stop"] = tuple(known["stop"])
        return SamplingParams.model_construct(**known)


def run_of(row: Mapping[str, Any]) -> RunInfo:
    return RunInfo(
        provenance=provenance_of(row),
        started_at=row["started_at"],
        ended_at=row["ended_at"],
        status=row["status"],
        n_ok=row["n_ok"],
        n_parse_error=row["n_parse_error"],
        n_infra_error=row["n_infra_error"],
    )
