"""Statistics that respect the clustering of questions by video (Video-MME asks three per video).

Questions about one video share its footage, the frames sampled from it and the agent's reading
of them, so their outcomes are correlated; treating them as independent understates the variance
by the *design effect* (about ``1 + (m - 1) * rho`` for videos of ``m`` questions whose outcomes
correlate by ``rho``). The independent unit is the video, so:

- intervals come from a percentile **cluster bootstrap**: videos are resampled with replacement,
  each carrying all its questions, and the statistic is the mean over the resampled questions (a
  ratio estimator: videos may hold different numbers of questions). A paired difference is
  bootstrapped as one value per question (final minus baseline), which keeps the pairing.
- the paired test is a **cluster sign-flip (randomization) test**: if the two bundles are
  exchangeable, each video's summed difference is as likely to have either sign. With one
  question per video and one sample it is the exact McNemar test, to the digit.
- the **design effect** shown beside them is the cluster-robust variance of the mean over the
  per-question one (both sandwich estimates, so it is exactly 1 when no video holds two questions).

When no video holds two questions the clustered and the per-question analyses are the same, and
the per-question methods (Wilson, Newcombe, exact McNemar) are kept as the headline. A clustered
interval is never narrower than the per-question one (a percentile bootstrap over a handful of
videos understates its own spread).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from skillharness.infer.stats import (
    BOOTSTRAP_RESAMPLES,
    PairedTable,
    bootstrap_mean_interval,
    mcnemar_exact,
    newcombe_paired_interval,
)
from skillharness.infer.summary import wilson

__all__ = [
    "SIGN_FLIPS",
    "ClusteredMean",
    "ClusteredPaired",
    "cluster_bootstrap_interval",
    "cluster_sign_flip_test",
    "clustered_accuracy",
    "clustered_paired",
    "design_effect",
]

SIGN_FLIPS = 20_000  # Monte Carlo flips: the p-value's standard error is below 0.002 at p = 0.05
_EXACT_FLIPS = 16  # up to 2**16 sign patterns are enumerated: the p-value is then exact
CLUSTER_BOOTSTRAP = "cluster_bootstrap"


def _cluster_sums(values: np.ndarray, clusters: Sequence[Hashable]) -> tuple[np.ndarray, np.ndarray]:
    """Per cluster, the sum of its values and its number of values (clusters in first-seen order)."""
    index: dict[Hashable, int] = {}
    ids = np.fromiter((index.setdefault(c, len(index)) for c in clusters), dtype=np.int64, count=len(values))
    sums = np.bincount(ids, weights=values, minlength=len(index))
    counts = np.bincount(ids, minlength=len(index)).astype(float)
    return sums, counts


def cluster_bootstrap_interval(
    values: Sequence[float],
    clusters: Sequence[Hashable],
    confidence: float = 0.95,
    *,
    seed: int = 0,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> tuple[float, float]:
    """Percentile interval of the mean of ``values`` from resampling whole clusters (seeded).

    With one value per cluster it is :func:`bootstrap_mean_interval` exactly (same draws).
    """
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return float("nan"), float("nan")
    sums, counts = _cluster_sums(data, clusters)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, sums.size, size=(resamples, sums.size))
    means = sums[picks].sum(axis=1) / counts[picks].sum(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


def design_effect(values: Sequence[float], clusters: Sequence[Hashable]) -> float:
    """Cluster-robust over per-question variance of the mean (nan with < 2 clusters or no spread)."""
    data = np.asarray(values, dtype=float)
    n = data.size
    if n < 2:
        return float("nan")
    mean = float(data.mean())
    sums, counts = _cluster_sums(data, clusters)
    k = sums.size
    per_unit = n / (n - 1) * float(((data - mean) ** 2).sum())
    if k < 2 or per_unit <= 0:
        return float("nan")
    per_cluster = k / (k - 1) * float(((sums - mean * counts) ** 2).sum())
    return per_cluster / per_unit


def cluster_sign_flip_test(
    differences: Sequence[float], clusters: Sequence[Hashable], *, seed: int = 0, resamples: int = SIGN_FLIPS
) -> float:
    """Two-sided p-value of "no difference" from flipping the sign of each cluster's summed difference.

    Exact (every sign pattern) with at most 16 non-zero clusters, else a seeded Monte Carlo estimate
    that counts the observed pattern, so it is never 0.
    """
    sums, _ = _cluster_sums(np.asarray(differences, dtype=float), clusters)
    d = sums[np.abs(sums) > 1e-12]
    if d.size == 0:
        return 1.0
    observed = abs(float(d.sum())) - 1e-9 * max(1.0, float(np.abs(d).sum()))
    if d.size <= _EXACT_FLIPS:
        patterns = np.arange(2**d.size, dtype=np.int64)[:, None] >> np.arange(d.size) & 1
        return float((np.abs((1 - 2 * patterns) @ d) >= observed).mean())
    rng = np.random.default_rng(seed)
    hits, left = 0, resamples
    while left > 0:  # in chunks: a (resamples x clusters) matrix at once would be large
        size = min(left, 2000)
        signs = rng.integers(0, 2, size=(size, d.size)) * 2 - 1
        hits += int((np.abs(signs @ d) >= observed).sum())
        left -= size
    return (1 + hits) / (1 + resamples)


@dataclass(frozen=True)
class ClusteredMean:
    """A mean with its clustered interval and, beside it, the per-question one.

    ``low``/``high`` are by video (``method`` says how); with no video holding two questions they
    are the per-question interval itself.
    """

    value: float
    low: float
    high: float
    method: str
    per_question_low: float
    per_question_high: float
    per_question_method: str
    design_effect: float | None
    n_clusters: int


@dataclass(frozen=True)
class ClusteredPaired(ClusteredMean):
    """A paired difference (first minus second) with a clustered and a per-question test."""

    wins: int  # questions where the first arm did better
    losses: int
    p_value: float  # by video: the cluster sign-flip test (McNemar's when clusters are single)
    p_per_question: float  # exact McNemar (a sign test on questions with several samples)


def _finite(value: float) -> float | None:
    return value if np.isfinite(value) else None


def _clustered(
    values: list[float],
    clusters: Sequence[Hashable],
    per_question: tuple[float, float],
    method: str,
    confidence: float,
) -> ClusteredMean:
    n_clusters = len(set(clusters))
    if n_clusters == len(values):
        low, high, how = per_question[0], per_question[1], method
    else:
        # Never narrower than the per-question interval: with few videos the bootstrap's spread is
        # itself unreliable, and a negative within-video correlation is nothing to bank on.
        low, high = cluster_bootstrap_interval(values, clusters, confidence)
        low, high, how = min(low, per_question[0]), max(high, per_question[1]), CLUSTER_BOOTSTRAP
    return ClusteredMean(
        value=sum(values) / len(values),
        low=low,
        high=high,
        method=how,
        per_question_low=per_question[0],
        per_question_high=per_question[1],
        per_question_method=method,
        design_effect=_finite(design_effect(values, clusters)),
        n_clusters=n_clusters,
    )


def clustered_accuracy(
    values: Sequence[float], clusters: Sequence[Hashable], *, binary: bool, confidence: float = 0.95
) -> ClusteredMean | None:
    """Accuracy: the mean of per-question accuracies ``values`` (0/1 when ``binary``); None when empty.

    Per question: Wilson with one sample per question, else the question bootstrap.
    """
    data = [float(v) for v in values]
    if not data:
        return None
    if binary:
        per_question, method = wilson(round(sum(data)), len(data), confidence), "wilson"
    else:
        per_question, method = bootstrap_mean_interval(data, confidence), "bootstrap"
    return _clustered(data, clusters, per_question, method, confidence)


def clustered_paired(
    first: Sequence[float],
    second: Sequence[float],
    clusters: Sequence[Hashable],
    *,
    binary: bool,
    confidence: float = 0.95,
) -> ClusteredPaired | None:
    """First minus second on paired questions (per-question accuracies, 0/1 when ``binary``).

    Per question: Newcombe's paired interval with one sample per question, else the question
    bootstrap of the differences; the test is exact McNemar on the questions. By video: the cluster
    bootstrap and the cluster sign-flip test. None when there is no pair.
    """
    diffs = [float(f) - float(s) for f, s in zip(first, second, strict=True)]
    if not diffs:
        return None
    if binary:
        right = [(f > 0, s > 0) for f, s in zip(first, second, strict=True)]
        table = PairedTable(
            both=sum(f and s for f, s in right),
            only_first=sum(f and not s for f, s in right),
            only_second=sum(s and not f for f, s in right),
            neither=sum(not f and not s for f, s in right),
        )
        per_question, method = newcombe_paired_interval(table, confidence), "newcombe"
    else:
        per_question, method = bootstrap_mean_interval(diffs, confidence), "bootstrap"
    mean = _clustered(diffs, clusters, per_question, method, confidence)
    wins, losses = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
    p_question = mcnemar_exact(wins, losses)
    single = mean.n_clusters == len(diffs)
    return ClusteredPaired(
        **{f: getattr(mean, f) for f in ClusteredMean.__dataclass_fields__},
        wins=wins,
        losses=losses,
        p_value=p_question if single else cluster_sign_flip_test(diffs, clusters),
        p_per_question=p_question,
    )
