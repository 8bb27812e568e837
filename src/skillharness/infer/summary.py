"""Accuracy tables with Wilson intervals: overall, per task type, per duration.

Unparsed answers count as wrong and are reported as such. The official Video-MME scorer drops
them from the denominator, which flatters a model that fails to answer; we do not. Infra errors
are not answers at all: they are counted and shown, and kept out of the accuracy (a resume
retries them), so an outage cannot masquerade as a wrong answer (audit P1-4).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from scipy.stats import binomtest

__all__ = ["Cell", "Scored", "summarize", "wilson"]


@dataclass(frozen=True)
class Scored:
    """One prediction reduced to what the summary needs."""

    task_type: str
    duration: str
    status: str  # ok | parse_error | infra_error
    correct: bool


@dataclass(frozen=True)
class Cell:
    label: str
    n: int
    correct: int
    parse_errors: int
    infra_errors: int
    ci_low: float
    ci_high: float

    @property
    def accuracy(self) -> float:
        return self.correct / self.n if self.n else float("nan")

    @property
    def parse_rate(self) -> float:
        return self.parse_errors / self.n if self.n else float("nan")


def wilson(correct: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for ``correct`` successes in ``n`` trials (``(nan, nan)`` for n = 0)."""
    if n == 0:
        return float("nan"), float("nan")
    interval = binomtest(correct, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(interval.low), float(interval.high)


def _cell(label: str, rows: list[Scored], confidence: float) -> Cell:
    answered = [r for r in rows if r.status != "infra_error"]
    correct = sum(r.correct for r in answered)
    low, high = wilson(correct, len(answered), confidence)
    return Cell(
        label,
        len(answered),
        correct,
        sum(r.status == "parse_error" for r in answered),
        len(rows) - len(answered),
        low,
        high,
    )


def summarize(rows: Iterable[Scored], confidence: float = 0.95) -> dict[str, list[Cell]]:
    """Cells for ``overall``, ``task_type`` and ``duration`` groupings."""
    items = list(rows)
    by_task: dict[str, list[Scored]] = defaultdict(list)
    by_duration: dict[str, list[Scored]] = defaultdict(list)
    for row in items:
        by_task[row.task_type].append(row)
        by_duration[row.duration].append(row)
    order = {"short": 0, "medium": 1, "long": 2}
    return {
        "overall": [_cell("all", items, confidence)],
        "task_type": [_cell(t, by_task[t], confidence) for t in sorted(by_task)],
        "duration": [
            _cell(d, by_duration[d], confidence)
            for d in sorted(by_duration, key=lambda d: (order.get(d, 9), d))
        ],
    }
