"""The McNemar harm guard against scipy's exact binomial test."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import binomtest

from skillharness.errors import GateError
from skillharness.train.config import GateConfig
from skillharness.train.gate import (
    guard_draws_per_class,
    guard_power,
    guard_promise,
    guard_reach,
    harm_cleared,
    mcnemar_draws,
    mcnemar_guard,
    mcnemar_harm_p,
    mcnemar_power,
    plan_guard,
)


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


def test_item_6_the_old_guard_had_almost_no_power() -> None:
    """16 draws, Holm over 9 classes, discordance 0.3: a 20-point drop flagged 1.6 % of the time."""
    assert mcnemar_power(16, 0.20, 0.3, 0.05 / 9) == pytest.approx(0.016, abs=0.001)
    assert mcnemar_power(16, 0.30, 0.3, 0.05 / 9) < 0.08


def test_item_6_power_matches_a_simulation_of_the_exact_test() -> None:
    rng = np.random.default_rng(0)
    n, harm, discordance, level = 40, 0.2, 0.4, 0.01
    p_minus, p_plus = (discordance + harm) / 2, (discordance - harm) / 2
    outcomes = rng.choice(3, size=(4000, n), p=[p_minus, p_plus, 1 - discordance])
    losses, wins = (outcomes == 0).sum(axis=1), (outcomes == 1).sum(axis=1)
    flagged = np.mean([mcnemar_harm_p(int(w), int(lo)) <= level for w, lo in zip(wins, losses, strict=True)])
    assert mcnemar_power(n, harm, discordance, level) == pytest.approx(flagged, abs=0.025)


def test_item_6_sized_guard_reaches_the_stated_power() -> None:
    level = 0.05 / 12
    n = mcnemar_draws(0.15, 0.8, 0.3, level, limit=1000)
    assert n is not None
    assert mcnemar_power(n, 0.15, 0.3, level) >= 0.8
    assert mcnemar_power(n - 8, 0.15, 0.3, level) < 0.8
    assert mcnemar_draws(0.15, 0.8, 0.3, level, limit=n - 8) is None


def test_item_6_guard_plan_caps_the_cost_and_says_what_it_loses() -> None:
    sized = plan_guard(GateConfig(), {"A": None, "B": None, "C": 10})
    # Sized for the power plus what clearing may cost of it.
    assert sized.per_class == mcnemar_draws(0.2, 0.8 + 0.05, 0.3, 0.05 / 3, limit=256)
    assert sized.clear == 0.05
    assert [c.draws for c in sized.classes] == [sized.per_class, sized.per_class, 10]
    assert sized.classes[0].power >= 0.8
    assert sized.classes[0].detectable is not None
    assert sized.classes[0].detectable <= 0.2 + 0.005
    assert sized.classes[2].power < 0.2  # 10 questions at temperature 0: the guard is nearly blind
    assert sized.total_draws == 2 * sized.per_class + 10
    capped = plan_guard(GateConfig(guard_max_draws=40), {"A": None, "B": None})
    assert capped.sized is None
    assert capped.per_class == 40
    assert capped.classes[0].power < 0.8
    fixed = plan_guard(GateConfig(guard_draws=16), {"A": None})
    assert fixed.fixed
    assert fixed.per_class == 16


def _guarded_paths(
    share: float,
    n: int,
    *,
    runs: int,
    stage: int = 16,
    discordance: float = 0.3,
    planned: float = 0.3,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(cleared, flagged with clearing, flagged without)`` for ``runs`` paths of ``n`` draws of one
    class at ``discordance``, where a discordant pair is a loss with probability ``share``; looks
    every ``stage`` draws, at the default bound and planned drop (its bet picked at ``planned``),
    level 0.05 / 12."""
    gate = GateConfig()
    rng = np.random.default_rng(seed)
    level = 0.05 / 12
    discordant = rng.random((runs, n)) < discordance
    loss = discordant & (rng.random((runs, n)) < share)
    win = discordant & ~loss
    cleared = np.zeros(runs, bool)
    flagged_clearing = np.zeros(runs, bool)
    flagged_full = np.zeros(runs, bool)
    for i in range(runs):
        for end in range(stage, n + stage, stage):
            w, lo = int(win[i, :end].sum()), int(loss[i, :end].sum())
            ties = min(end, n) - w - lo
            if harm_cleared(w, lo, ties, harm=gate.guard_harm, discordance=planned, bound=gate.guard_clear):
                cleared[i] = True
                break
        full = mcnemar_harm_p(int(win[i].sum()), int(loss[i].sum())) <= level
        flagged_full[i] = full
        flagged_clearing[i] = full and not cleared[i]
    return cleared, flagged_clearing, flagged_full


def test_clearing_a_class_with_the_planned_drop_is_rarer_than_its_bound_and_keeps_the_power() -> None:
    """Ville: a class with the planned drop is ever cleared with probability at most the bound, so the
    guard, sized for the power plus the bound, still flags it with at least the stated power."""
    gate = GateConfig()
    per_class, _ = guard_draws_per_class(gate, 12)
    harmed_share = (0.3 + gate.guard_harm) / (2 * 0.3)
    cleared, flagged, _ = _guarded_paths(harmed_share, per_class, runs=2000)
    assert cleared.mean() <= 0.05
    assert flagged.mean() >= 0.8 - 0.02  # Monte Carlo error of 2,000 paths


def test_clearing_never_adds_a_harm_flag_and_stops_a_harmless_class_early() -> None:
    """With no drop (a loss share of 1/2) clearing stops most classes well before their size; on every
    path a class flagged with clearing is flagged without it, so the guard's level is unchanged."""
    per_class, _ = guard_draws_per_class(GateConfig(), 12)
    cleared, flagged_clearing, flagged_full = _guarded_paths(0.5, per_class, runs=1000, seed=1)
    assert cleared.mean() > 0.8
    assert not np.any(flagged_clearing & ~flagged_full)


@given(
    st.integers(0, 200), st.integers(0, 200), st.integers(0, 200), st.floats(0.05, 1.0), st.floats(0.01, 0.5)
)
def test_clearing_is_monotone_in_the_counts(
    wins: int, losses: int, ties: int, discordance: float, harm: float
) -> None:
    """One more win or tie never undoes a clearing, and one more loss never makes one."""
    kw = {"harm": harm, "discordance": discordance, "bound": 0.05}
    clears = harm_cleared(wins, losses, ties, **kw)
    if clears:
        assert harm_cleared(wins + 1, losses, ties, **kw)
        assert harm_cleared(wins, losses, ties + 1, **kw)
    if not clears:
        assert not harm_cleared(wins, losses + 1, ties, **kw)


def test_a_cleared_class_enters_holm_with_p_value_one() -> None:
    """Its counts stop at a time the data chose, so they give no exact p-value, and it is not flagged."""
    results = {r.label: r for r in mcnemar_guard({"A": (1, 12), "B": (1, 12)}, cleared={"B"})}
    assert results["A"].harmed
    assert (results["B"].p_value, results["B"].harmed) == (1.0, False)
    assert (results["B"].wins, results["B"].losses) == (1, 12)


def test_clearing_settings_are_checked() -> None:
    with pytest.raises(GateError, match="bound"):
        harm_cleared(3, 1, 4, harm=0.15, discordance=0.3, bound=1.0)
    with pytest.raises(ValueError, match="guard_clear"):
        GateConfig(guard_power=0.96, guard_clear=0.05)


def test_the_guards_promise_names_the_largest_discordance_its_power_holds_for() -> None:
    """The exact test's power falls with the discordance: a size keeps its power only up to the
    discordance it can see, and the promise says which."""
    gate, level = GateConfig(), 0.05 / 12
    reach = guard_reach(gate, 256, level)
    assert reach is not None
    assert 0.7 < reach < 0.8
    assert mcnemar_power(256, 0.2, reach, level) >= 0.85 > mcnemar_power(256, 0.2, reach + 0.01, level)
    assert guard_reach(gate, 48, level) is None  # 48 draws see no 20-point drop with P 0.85
    assert guard_reach(gate, 256, 0.05 / 2) == 1.0
    sized = guard_promise(gate, 256, 0.3, level)
    assert (sized.harm, sized.power, sized.discordance) == (0.2, 0.8, reach)
    assert "at most 0.74" in sized.describe()
    # A cap that binds at the run's discordance keeps only the power there, for no more discordance.
    capped = guard_promise(gate, 90, 0.3, level)
    assert capped.power == guard_power(gate, 90, 0.3, level) < 0.8
    assert capped.discordance == 0.3
    fixed = guard_promise(GateConfig(guard_draws=256), 256, 0.3, level)
    assert fixed.power == guard_power(gate, 256, 0.3, level)
    assert fixed.discordance == 0.3
    plan = plan_guard(gate, {"A": None, "B": 30})
    assert (plan.most, plan.promise) == (256, guard_promise(gate, 256, 0.3, 0.025))
    assert plan.classes[1].promise == guard_promise(gate, 30, 0.3, 0.025)


def test_clearing_holds_its_bound_for_a_harmed_class_at_a_larger_discordance_than_planned() -> None:
    """The bet is picked at 0.3, but a class with a 20-point drop at 0.6 (loss share 0.67, where the
    discordance-assuming rule cleared 53 %) is cleared with P <= the bound."""
    cleared, _, _ = _guarded_paths((0.6 + 0.2) / 1.2, 256, runs=1000, discordance=0.6, planned=0.3, seed=2)
    assert cleared.mean() <= 0.05
