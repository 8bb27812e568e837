"""Video-MME-v2's group score in the report's holdout section, read from the stored ``holdout``.

Only a typed :class:`HoldoutReport` whose test questions carry groups has one; any other shape
shows nothing here (the stored JSON is shown in full below the tables anyway).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from skillharness.eval.holdout_report import GroupScores, HoldoutReport

__all__ = ["GroupScoreView", "holdout_group_scores"]


@dataclass(frozen=True)
class GroupScoreView:
    """The group score with the overall per-question accuracy it is read beside."""

    groups: GroupScores
    accuracy: Any  # the overall GroupRow: per-question accuracy of both bundles and the paired gain


def holdout_group_scores(value: Any) -> GroupScoreView | None:
    """The group score of a stored holdout metric; None when it has none."""
    if not isinstance(value, dict) or value.get("group_scores") is None:
        return None
    try:
        report = HoldoutReport.model_validate(value)
    except ValidationError:
        return None
    if report.group_scores is None or not report.rows_of("overall"):
        return None
    return GroupScoreView(report.group_scores, report.overall)
