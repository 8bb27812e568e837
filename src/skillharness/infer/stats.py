"""The statistics of a paired comparison of two bundles: intervals, the exact McNemar test, Holm.

One home for what the holdout (``eval``) and the training run's val gain (``train``) both report;
:mod:`skillharness.infer.cluster` adds the video-clustered versions.

Both bundles answer the same test questions, so the comparison is *paired*: per question, the
final bundle's outcome and the baseline's. Pairing removes the between-question variance from
the difference, which is why the paired interval is much narrower than the two marginal ones.

- One sample per question: the marginal accuracies get Wilson intervals (shared with ``infer``),
  the difference Newcombe's square-and-add interval for paired proportions (Newcombe 1998,
  method 10). It is built from the two Wilson intervals with the estimated correlation of the
  pair, needs no resampling, and keeps its coverage for small n and accuracies near 0 or 1, where
  the Wald interval fails.
- Several samples per question: outcomes of one question are correlated (its difficulty is
  shared), so the unit of resampling is the question. Accuracy is the mean of the per-question
  means; its interval and the paired difference's come from a percentile bootstrap over
  questions (the same resampled questions for both bundles, which keeps the pairing).
- The exact McNemar test: under "no difference", a discordant question is equally likely to
  favour either bundle, so the count favouring the final bundle is Binomial(discordant, 1/2).
  With several samples a question is discordant when its two means differ (a sign test on
  questions); with one sample that is McNemar's test exactly.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from skillharness.infer.summary import wilson

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "PairedTable",
    "bootstrap_mean_interval",
    "holm_adjust",
    "mcnemar_exact",
    "newcombe_paired_interval",
]

BOOTSTRAP_RESAMPLES = 4000  # percentile tails of a 95 % interval rest on ~100 resamples each


@dataclass(frozen=True)
class PairedTable:
    """Paired binary outcomes of two arms (``first`` − ``second`` is the difference reported)."""

    both: int  # both arms right
    only_first: int  # the first arm right, the second wrong
    only_second: int
    neither: int

    @property
    def n(self) -> int:
        return self.both + self.only_first + self.only_second + self.neither

    @property
    def difference(self) -> float:
        return (self.only_first - self.only_second) / self.n if self.n else float("nan")


def _correlation(t: PairedTable) -> float:
    """Newcombe's phi: the pair's correlation, shrunk towards 0 by n/2 when it is positive.

    The shrinkage (his method 10) keeps the interval from collapsing on tables with few discordant
    pairs; a negative correlation is used as is, and an empty margin means no correlation.
    """
    margins = (
        t.both + t.only_first,
        t.only_second + t.neither,
        t.both + t.only_second,
        t.only_first + t.neither,
    )
    if min(margins) == 0:
        return 0.0
    cross = t.both * t.neither - t.only_first * t.only_second
    scale = math.sqrt(math.prod(float(m) for m in margins))
    if cross > t.n / 2:
        return (cross - t.n / 2) / scale
    if cross >= 0:
        return 0.0
    return cross / scale


def newcombe_paired_interval(table: PairedTable, confidence: float = 0.95) -> tuple[float, float]:
    """Newcombe's square-and-add interval for ``p_first − p_second`` (``(nan, nan)`` when n = 0)."""
    n = table.n
    if n == 0:
        return float("nan"), float("nan")
    p1 = (table.both + table.only_first) / n
    p2 = (table.both + table.only_second) / n
    l1, u1 = wilson(table.both + table.only_first, n, confidence)
    l2, u2 = wilson(table.both + table.only_second, n, confidence)
    phi = _correlation(table)
    below = (p1 - l1) ** 2 + (u2 - p2) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2)
    above = (p2 - l2) ** 2 + (u1 - p1) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1)
    d = table.difference
    return max(-1.0, d - math.sqrt(max(below, 0.0))), min(1.0, d + math.sqrt(max(above, 0.0)))


def mcnemar_exact(wins: int, losses: int) -> float:
    """Exact two-sided McNemar p-value from the discordant counts (1.0 with none)."""
    if wins + losses == 0:
        return 1.0
    from scipy.stats import binomtest  # deferred: scipy.stats is most of `infer`'s start-up time

    return float(binomtest(wins, wins + losses, 0.5, alternative="two-sided").pvalue)


def holm_adjust(p_values: Mapping[str, float]) -> dict[str, float]:
    """Holm's step-down adjusted p-values: reject a hypothesis when its adjusted p ≤ α.

    Controls the chance of any false rejection among the family at α, whatever the dependence.
    """
    ordered = sorted(p_values, key=p_values.__getitem__)
    m = len(ordered)
    adjusted: dict[str, float] = {}
    running = 0.0
    for rank, label in enumerate(ordered):
        running = max(running, min(1.0, (m - rank) * p_values[label]))
        adjusted[label] = running
    return {label: adjusted[label] for label in p_values}


def bootstrap_mean_interval(
    values: Sequence[float], confidence: float = 0.95, *, seed: int = 0, resamples: int = BOOTSTRAP_RESAMPLES
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` (one value per question).

    ``values`` are per-question means (of one arm) or per-question differences (of a pair); the
    bootstrap resamples questions, the unit that is independent. Seeded: the same data gives the
    same interval.
    """
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, data.size, size=(resamples, data.size))
    means = data[picks].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)
