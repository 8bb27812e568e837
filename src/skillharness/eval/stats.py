"""The holdout's statistics, re-exported from their home in :mod:`skillharness.infer` (the
training run's val gain uses the same ones, and ``train`` sits below ``eval``)."""

from skillharness.infer import (
    BOOTSTRAP_RESAMPLES,
    PairedTable,
    bootstrap_mean_interval,
    holm_adjust,
    mcnemar_exact,
    newcombe_paired_interval,
)

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "PairedTable",
    "bootstrap_mean_interval",
    "holm_adjust",
    "mcnemar_exact",
    "newcombe_paired_interval",
]
