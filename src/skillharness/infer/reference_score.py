"""A reference task's own score of a run, by its aggregation rule, with an interval.

The rule (``data.metric_rules``, named by the benchmark's adapter) turns the scored questions
into parts; the score is the mean over the rule's strata of ``Σ numerator / Σ denominator``.
Intervals:

- ``wilson``: plain accuracy (one stratum, one question per part), the Wilson interval over
  questions, as the accuracy columns beside it.
- ``video_bootstrap``: a percentile bootstrap that resamples videos (each with all its parts)
  within each stratum and recomputes the score, so a ratio with a random denominator (MVBench's
  answered questions), a macro average (MLVU's, whose strata are fixed by its task list) and a
  group score (Video-MME-v2's, one group per video) each keep their own form. Seeded: the same
  answers give the same interval.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from skillharness.data.metric_rules import METRIC_RULES, Part, RuleInput
from skillharness.infer.stats import BOOTSTRAP_RESAMPLES
from skillharness.infer.summary import wilson

__all__ = ["ReferenceRow", "ReferenceScore", "reference_score", "score_parts"]


@dataclass(frozen=True)
class ReferenceRow:
    """The score over one set of parts (``all``, or one task type), a fraction before scaling."""

    label: str
    value: float
    low: float
    high: float
    n: int  # units in the denominator: questions, answered questions or groups


@dataclass(frozen=True)
class ReferenceScore:
    """A reference task's metric over a run: overall first, then per task type."""

    task: str
    metric: str
    rule: str
    scale: float
    digits: int | None
    unit: str
    method: str
    reported: str  # "overall", or "task_type" when upstream reports each task type alone
    rows: tuple[ReferenceRow, ...]
    left_out: int = 0  # units the rule could not score (a group missing a question)

    def shown(self, value: float) -> str:
        """``value`` on the metric's own scale and rounding (``-`` when there is none)."""
        if value != value:
            return "-"
        digits = self.digits if self.digits is not None else (1 if self.scale >= 100 else 3)
        return f"{value * self.scale:.{digits}f}"


def _ratio(parts: Sequence[Part], strata: Sequence[str]) -> float:
    sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for p in parts:
        sums[p.stratum][0] += p.numerator
        sums[p.stratum][1] += p.denominator
    ratios = [sums[s][0] / sums[s][1] if sums[s][1] else 0.0 for s in strata]
    return sum(ratios) / len(ratios) if ratios else float("nan")


def _stratum_draws(parts: Sequence[Part], rng: np.random.Generator, resamples: int) -> np.ndarray:
    """The stratum's ratio on ``resamples`` resamples of its videos (0 where nothing is counted)."""
    index: dict[str, int] = {}
    ids = np.array([index.setdefault(p.cluster, len(index)) for p in parts], dtype=np.int64)
    num = np.bincount(ids, weights=[p.numerator for p in parts], minlength=len(index))
    den = np.bincount(ids, weights=[p.denominator for p in parts], minlength=len(index))
    picks = rng.integers(0, len(index), size=(resamples, len(index)))
    top, bottom = num[picks].sum(axis=1), den[picks].sum(axis=1)
    return np.divide(top, bottom, out=np.zeros(resamples), where=bottom > 0)


def _bootstrap(
    parts: Sequence[Part], strata: Sequence[str], confidence: float, resamples: int
) -> tuple[float, float]:
    rng = np.random.default_rng(0)
    draws = [
        _stratum_draws(mine, rng, resamples) if (mine := [p for p in parts if p.stratum == s]) else None
        for s in strata
    ]
    stacked = np.stack([d if d is not None else np.zeros(resamples) for d in draws])
    means = stacked.mean(axis=0)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


def score_parts(
    label: str,
    parts: Sequence[Part],
    strata: Sequence[str],
    interval: str,
    confidence: float = 0.95,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> ReferenceRow:
    """The score of ``parts`` over ``strata`` with its interval (``wilson`` or ``video_bootstrap``)."""
    n = round(sum(p.denominator for p in parts))
    if not parts or not strata:
        return ReferenceRow(label, float("nan"), float("nan"), float("nan"), n)
    value = _ratio(parts, strata)
    if interval == "wilson":
        low, high = wilson(round(sum(p.numerator for p in parts)), n, confidence)
    else:
        low, high = _bootstrap(parts, strata, confidence, resamples)
    return ReferenceRow(label, value, low, high, n)


def reference_score(
    items: Sequence[RuleInput],
    *,
    task: str,
    metric: str,
    rule: str,
    scale: float = 1.0,
    digits: int | None = None,
    task_types: tuple[str, ...] = (),
    reported: str = "overall",
    confidence: float = 0.95,
) -> ReferenceScore:
    """The named rule's score of ``items``, overall and per task type, each with its interval."""
    chosen = METRIC_RULES[rule]
    found = chosen.parts(items, task_types)
    rows = [score_parts("all", found.parts, found.strata, chosen.interval, confidence)]
    by_label: dict[str, list[Part]] = defaultdict(list)
    for part in found.parts:
        by_label[part.label].append(part)
    for label in sorted(by_label):
        mine = by_label[label]
        strata = sorted({p.stratum for p in mine})
        rows.append(score_parts(label, mine, strata, chosen.interval, confidence))
    method = "Wilson" if chosen.interval == "wilson" else "video bootstrap"
    return ReferenceScore(
        task=task,
        metric=metric,
        rule=rule,
        scale=scale,
        digits=digits,
        unit=chosen.unit,
        method=method,
        reported=reported,
        rows=tuple(rows),
        left_out=found.left_out,
    )
