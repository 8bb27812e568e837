"""Diagnosis: from a step's failures to case packs of diagnosed spans, per edit target."""

from __future__ import annotations

from skillharness.train.diagnose.casepack import build_case_packs
from skillharness.train.diagnose.diagnoser import (
    JUDGED,
    DiagnosisReport,
    JudgeIdentity,
    case_view,
    check_excluded_share,
    diagnose,
    diagnosis_fingerprint,
    run_waterfall,
)
from skillharness.train.diagnose.summary import COLUMNS, defect_confusion, waterfall_table
from skillharness.train.diagnose.trace_summary import summarize_trace, trace_spans, video_duration_s
from skillharness.train.diagnose.waterfall import (
    STEP_BUDGET_EXHAUSTED,
    c1_from_prediction,
    c2_from_trace,
    judge_finding,
)

__all__ = [
    "COLUMNS",
    "JUDGED",
    "STEP_BUDGET_EXHAUSTED",
    "DiagnosisReport",
    "JudgeIdentity",
    "build_case_packs",
    "c1_from_prediction",
    "c2_from_trace",
    "case_view",
    "check_excluded_share",
    "defect_confusion",
    "diagnose",
    "diagnosis_fingerprint",
    "judge_finding",
    "run_waterfall",
    "summarize_trace",
    "trace_spans",
    "video_duration_s",
    "waterfall_table",
]
