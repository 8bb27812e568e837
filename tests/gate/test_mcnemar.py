"""The McNemar harm guard against scipy's exact binomial test."""

from __future__ import annotations

import pytest
from scipy.stats import binomtest

from skillharness.errors import GateError
from skillharness.train.gate import mcnemar_guard, mcnemar_harm_p


@pytest.mark.parametrize(
    ("wins", "losses"), [(0, 0), (0, 1), (3, 3), (2, 9), (9, 2), (0, 12), (17, 31), (40, 40)]
)
def test_harm_p_value_matches_scipy_binomtest(wins: int, losses: int) -> None:
    expected = (
        1.0 if wins + losses == 0 else binomtest(losses, wins + losses, 0.5, alternative="greater").pvalue
    )
    assert mcnemar_harm_p(wins, losses) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_refuted_mcnemar_guard_flags_only_a_clearly_harmed_class() -> None:
    results = {r.label: r for r in mcnemar_guard({"OCR": (1, 12), "Counting": (5, 6), "Action": (8, 2)})}
    assert results["OCR"].harmed
    assert not results["Counting"].harmed
    assert not results["Action"].harmed
    assert results["OCR"].p_value == pytest.approx(binomtest(12, 13, 0.5, alternative="greater").pvalue)


def test_holm_is_stricter_than_per_class_testing() -> None:
    # 9 losses of 11 discordant: p = P(Bin(11, 1/2) >= 9) = 67/2048 = 0.033, under 0.05 alone,
    # but not under Holm's first step 0.05 / 2 once a second class joins the family.
    alone = mcnemar_guard({"A": (2, 9)})
    family = mcnemar_guard({"A": (2, 9), "B": (3, 3)})
    assert alone[0].p_value == pytest.approx(67 / 2048)
    assert alone[0].harmed
    assert not family[0].harmed


def test_negative_counts_are_refused() -> None:
    with pytest.raises(GateError, match="non-negative"):
        mcnemar_harm_p(-1, 2)
