"""The holdout statistics against reference values: published tables, scipy, hand-computed binomials."""

from __future__ import annotations

import math

import pytest
from scipy.stats import binomtest

from skillharness.eval import (
    PairedTable,
    bootstrap_mean_interval,
    holm_adjust,
    mcnemar_exact,
    newcombe_paired_interval,
)


def _wilson(k: int, n: int) -> tuple[float, float]:
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return ci.low, ci.high


def test_newcombe_matches_the_published_paired_example() -> None:
    # Complete response before/after consolidation therapy (Cavo et al. 2012), as tabulated in
    # Fagerland, Lydersen & Laake, "Statistical Analysis of Contingency Tables", ch. 8:
    # Newcombe square-and-add: estimate -0.0621, 95% CI -0.1186 to -0.0046.
    table = PairedTable(both=59, only_first=6, only_second=16, neither=80)
    low, high = newcombe_paired_interval(table)
    assert table.difference == pytest.approx(-0.0621, abs=5e-5)
    assert low == pytest.approx(-0.1186, abs=5e-5)
    assert high == pytest.approx(-0.0046, abs=5e-5)


def test_newcombe_without_correlation_is_square_and_add_of_two_wilson_intervals() -> None:
    # ad - bc = 0: Newcombe's phi is 0, so the interval is the plain square-and-add of the margins.
    table = PairedTable(both=12, only_first=9, only_second=4, neither=3)
    assert table.both * table.neither - table.only_first * table.only_second == 0
    n = table.n
    p1, p2 = 21 / n, 16 / n
    l1, u1 = _wilson(21, n)
    l2, u2 = _wilson(16, n)
    low, high = newcombe_paired_interval(table)
    assert low == pytest.approx(p1 - p2 - math.hypot(p1 - l1, u2 - p2), abs=1e-12)
    assert high == pytest.approx(p1 - p2 + math.hypot(p2 - l2, u1 - p1), abs=1e-12)


def test_positive_correlation_narrows_the_interval() -> None:
    # Same margins as above with many concordant pairs: pairing must make the interval narrower.
    loose = newcombe_paired_interval(PairedTable(12, 9, 4, 3))
    tight = newcombe_paired_interval(PairedTable(16, 5, 0, 7))
    assert tight[1] - tight[0] < loose[1] - loose[0]


def test_newcombe_is_antisymmetric_and_bounded() -> None:
    table = PairedTable(both=30, only_first=11, only_second=3, neither=6)
    swapped = PairedTable(both=30, only_first=3, only_second=11, neither=6)
    low, high = newcombe_paired_interval(table)
    s_low, s_high = newcombe_paired_interval(swapped)
    assert (low, high) == pytest.approx((-s_high, -s_low), abs=1e-12)
    assert low < table.difference < high
    all_wins = newcombe_paired_interval(PairedTable(0, 10, 0, 0))
    assert all_wins[1] == 1.0
    assert 0 < all_wins[0] < 1
    assert all(math.isnan(v) for v in newcombe_paired_interval(PairedTable(0, 0, 0, 0)))


def _hand_two_sided(wins: int, losses: int) -> float:
    """2 × the smaller tail of Binomial(wins + losses, 1/2), capped at 1 (exact McNemar)."""
    n = wins + losses
    tail = sum(math.comb(n, k) for k in range(min(wins, losses) + 1)) / 2**n
    return min(1.0, 2 * tail)


@pytest.mark.parametrize(("wins", "losses"), [(6, 16), (16, 6), (0, 9), (3, 4), (10, 10), (1, 0), (25, 9)])
def test_mcnemar_matches_hand_computed_exact_binomials(wins: int, losses: int) -> None:
    assert mcnemar_exact(wins, losses) == pytest.approx(_hand_two_sided(wins, losses), rel=1e-12)
    assert mcnemar_exact(wins, losses) == pytest.approx(binomtest(wins, wins + losses).pvalue, rel=1e-12)


def test_mcnemar_reference_values() -> None:
    assert mcnemar_exact(6, 16) == pytest.approx(0.052478790283203125, rel=1e-12)  # 2·Σ_{k≤6} C(22,k)/2^22
    assert mcnemar_exact(0, 9) == pytest.approx(2 / 512)
    assert mcnemar_exact(0, 0) == 1.0


def test_holm_adjusted_p_values() -> None:
    adjusted = holm_adjust({"a": 0.01, "b": 0.04, "c": 0.03, "d": 0.5})
    # sorted: a 0.01·4 = 0.04; c 0.03·3 = 0.09; b max(0.09, 0.04·2) = 0.09; d max(0.09, 0.5) = 0.5
    assert adjusted == pytest.approx({"a": 0.04, "b": 0.09, "c": 0.09, "d": 0.5})
    assert holm_adjust({"x": 0.7, "y": 0.6}) == {"x": 1.0, "y": 1.0}
    assert holm_adjust({}) == {}


def test_bootstrap_interval_is_seeded_and_sensible() -> None:
    values = [1.0] * 30 + [0.0] * 20
    first = bootstrap_mean_interval(values, seed=4)
    assert first == bootstrap_mean_interval(values, seed=4)
    low, high = first
    assert low < 0.6 < high
    wilson_low, wilson_high = _wilson(30, 50)  # binary values: close to the Wilson interval
    assert low == pytest.approx(wilson_low, abs=0.03)
    assert high == pytest.approx(wilson_high, abs=0.03)
    assert bootstrap_mean_interval([0.5] * 7) == (0.5, 0.5)
    assert all(math.isnan(v) for v in bootstrap_mean_interval([]))
