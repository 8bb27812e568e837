"""Accuracy tables with Wilson intervals: overall, per task type, duration, domain and sub-category.

Unparsed answers count as wrong and are reported as such. The official Video-MME scorer drops
them from the denominator, which flatters a model that fails to answer; we do not (its number is
computed beside ours by :mod:`skillharness.infer.scoring`, where a row may be ``dropped``). Infra errors
are not answers at all: they are counted and shown, and kept out of the accuracy (a resume
retries them), so an outage cannot masquerade as a wrong answer (audit P1-4).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from statistics import NormalDist

__all__ = ["Cell", "Scored", "summarize", "wilson"]


@dataclass(frozen=True)
class Scored:
    """One prediction reduced to what the summary needs."""

    task_type: str
    duration: str
    status: str  # ok | parse_error | infra_error | dropped (a scorer that leaves it out)
    correct: bool
    domain: str = ""
    sub_category: str = ""


@dataclass(frozen=True)
class Cell:
    label: str
    n: int
    correct: int
    parse_errors: int
    infra_errors: int
    ci_low: float
    ci_high: float
    dropped: int = 0  # answers a scorer left out of the denominator (the official rule)

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
    # The closed form (scipy's binomtest(...).proportion_ci(method="wilson") gives the same to 1e-15;
    # a test pins it): importing scipy.stats cost most of `skillharness infer`'s start-up.
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    z2 = z * z
    centre = (correct + z2 / 2) / (n + z2)
    half = z / (n + z2) * math.sqrt(correct * (n - correct) / n + z2 / 4)
    return max(0.0, centre - half), min(1.0, centre + half)


def _cell(label: str, rows: list[Scored], confidence: float) -> Cell:
    answered = [r for r in rows if r.status in ("ok", "parse_error")]
    correct = sum(r.correct for r in answered)
    low, high = wilson(correct, len(answered), confidence)
    return Cell(
        label,
        len(answered),
        correct,
        sum(r.status == "parse_error" for r in answered),
        sum(r.status == "infra_error" for r in rows),
        low,
        high,
        sum(r.status == "dropped" for r in rows),
    )


_DURATION_ORDER = {"short": 0, "medium": 1, "long": 2}


def _grouped(items: list[Scored], field: str, confidence: float) -> list[Cell]:
    groups: dict[str, list[Scored]] = defaultdict(list)
    for row in items:
        groups[getattr(row, field)].append(row)
    return [
        _cell(label, groups[label], confidence)
        for label in sorted(groups, key=lambda d: (_DURATION_ORDER.get(d, 9), d))
    ]


def summarize(rows: Iterable[Scored], confidence: float = 0.95) -> dict[str, list[Cell]]:
    """Cells for ``overall``, ``task_type`` and ``duration``, and ``domain`` and ``sub_category``
    when the questions name them (the official Video-MME tables)."""
    items = list(rows)
    summary = {"overall": [_cell("all", items, confidence)]}
    for field in ("task_type", "duration", "domain", "sub_category"):
        if field in ("task_type", "duration") or any(getattr(row, field) for row in items):
            summary[field] = _grouped(items, field, confidence)
    return summary
