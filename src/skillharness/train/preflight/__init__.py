"""Preflight: everything a run needs, checked before it spends a call."""

from __future__ import annotations

from skillharness.train.preflight.checks import (
    CHECKS,
    CheckStatus,
    PreflightReport,
    run_preflight,
    run_preflight_async,
)
from skillharness.train.preflight.gate_row import spending_summary
from skillharness.train.preflight.probes import endpoint_problems, seed_ignored

__all__ = [
    "CHECKS",
    "CheckStatus",
    "PreflightReport",
    "endpoint_problems",
    "run_preflight",
    "run_preflight_async",
    "seed_ignored",
    "spending_summary",
]
