"""Properties of the bets and wealth: positive wealth, bets in range and predictable."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from skillharness.train.gate import AGrapa, OnlineNewtonStep, wealth_paths

observations = st.lists(st.sampled_from([-1, 0, 1]), min_size=1, max_size=80)
caps = st.floats(min_value=0.01, max_value=0.5)
strategies = st.sampled_from([AGrapa, OnlineNewtonStep])


@settings(max_examples=200, deadline=None)
@given(d=observations, cap=caps, kind=strategies)
def test_wealth_never_negative_and_bets_stay_in_range(d: list[int], cap: float, kind: type) -> None:
    paths = wealth_paths(np.asarray([d], dtype=np.int8), kind(cap))
    assert (paths.up > 0).all()
    assert (paths.down > 0).all()
    for bets in (paths.bets_up, paths.bets_down):
        assert (bets >= 0).all()
        assert (bets <= cap + 1e-12).all()
    # No step can multiply wealth by more than 1 + cap (the bound reachability relies on).
    assert (paths.up[0, 1:] <= paths.up[0, :-1] * (1 + cap) + 1e-12).all()


@settings(max_examples=200, deadline=None)
@given(d=observations, other=observations, cut=st.integers(min_value=0, max_value=80), kind=strategies)
def test_bets_depend_only_on_the_past(d: list[int], other: list[int], cut: int, kind: type) -> None:
    cut = min(cut, len(d))
    changed = d[:cut] + other
    strategy = kind(0.5)
    a = wealth_paths(np.asarray([d], dtype=np.int8), strategy)
    b = wealth_paths(np.asarray([changed], dtype=np.int8), strategy)
    # The bet on observation t uses observations < t: bets up to and including index `cut` agree.
    k = min(cut + 1, len(d), len(changed))
    np.testing.assert_array_equal(a.bets_up[0, :k], b.bets_up[0, :k])
    np.testing.assert_array_equal(a.bets_down[0, :k], b.bets_down[0, :k])
    np.testing.assert_array_equal(a.up[0, : cut + 1], b.up[0, : cut + 1])


@settings(max_examples=100, deadline=None)
@given(d=observations, kind=strategies)
def test_ties_change_neither_wealth_nor_bets(d: list[int], kind: type) -> None:
    strategy = kind(0.5)
    with_ties = np.asarray([[x for v in d for x in (v, 0)]], dtype=np.int8)
    without = np.asarray([d], dtype=np.int8)
    a = wealth_paths(with_ties, strategy)
    b = wealth_paths(without, strategy)
    np.testing.assert_allclose(a.up[0, 2::2], b.up[0, 1:])
    np.testing.assert_allclose(a.bets_up[0, ::2], b.bets_up[0])


def test_row_batching_does_not_mix_runs() -> None:
    rng = np.random.default_rng(0)
    d = rng.choice(np.array([-1, 0, 1], dtype=np.int8), size=(20, 30))
    for strategy in (AGrapa(0.5), OnlineNewtonStep(0.5)):
        batch = wealth_paths(d, strategy)
        for i in range(20):
            single = wealth_paths(d[i : i + 1], strategy)
            np.testing.assert_allclose(batch.up[i], single.up[0])
