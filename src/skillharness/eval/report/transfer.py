"""The report's Transfer section: our agent's holdout gain beside the gain under each protocol run.

Read from the store: the training run's ``holdout`` metric (our agent) and its
``transfer.<protocol>`` metrics (eval/transfer.py), each the overall paired row of a
:class:`~skillharness.eval.holdout_report.HoldoutReport`.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from skillharness.eval.holdout_report import HoldoutReport
from skillharness.eval.ledger import HOLDOUT, TRANSFER
from skillharness.util.model import StrictModel

__all__ = ["TransferRow", "transfer_rows"]


class TransferRow(StrictModel):
    """One protocol's paired gain (final minus baseline) on the sealed test pool, in points."""

    protocol: str
    slot: str
    gain_pt: float | None
    low_pt: float | None
    high_pt: float | None
    p_value: float
    n_pairs: int
    eval_id: str
    truth_pt: float | None = None  # the simulator oracle's gain, when the eval ran against it


def _row(value: Any) -> TransferRow | None:
    try:
        report = HoldoutReport.model_validate(value)
    except ValidationError:
        return None  # an older or malformed record: the Holdout section shows it raw
    paired = report.overall.paired

    def pt(x: float | None) -> float | None:
        return None if x is None else round(100 * x, 1)

    protocol = "skillharness (our agent)" if report.protocol == "skillharness" else report.protocol
    return TransferRow(
        protocol=protocol,
        slot="—" if report.protocol == "skillharness" else report.bundle_slot,
        gain_pt=pt(paired.gain),
        low_pt=pt(paired.low),
        high_pt=pt(paired.high),
        p_value=paired.p_value,
        n_pairs=paired.n_pairs,
        eval_id=report.eval_id,
        truth_pt=None if report.overall.truth is None else pt(report.overall.truth.gain),
    )


def transfer_rows(metrics: dict[str, Any]) -> list[TransferRow]:
    """Our agent's row, then one per protocol run; empty when no protocol was run."""
    names = sorted(name for name in metrics if name.startswith(TRANSFER + "."))
    if not names:
        return []
    rows = [_row(metrics[name]) for name in ([HOLDOUT] if HOLDOUT in metrics else []) + names]
    return [row for row in rows if row is not None]
