"""The guard's stated power and clearing bound hold whatever a harmed class's discordance, up to what
its most draws can see: simulated classes through the guard's own stages (each path one class of
the injected ``ask``, so a whole Monte Carlo run is one call), sized at a run's discordance 0.3."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

import numpy as np
import pytest

from skillharness.infer import Draw
from skillharness.train.config import GateConfig
from skillharness.train.gate import PairedOutcome, guard_promise, mcnemar_guard
from skillharness.train.validate.guard import StagedDraws, ask_in_stages, stage_rule

GATE = GateConfig()  # a 20-point drop, power 0.8, clearing bound 0.05, at most 256 draws
GUARDED = 12
LEVEL = GATE.mcnemar_alpha / GUARDED  # a lone harmed class among 12 must reach it under Holm
RUN_DISCORDANCE = 0.3
RULE = stage_rule(GATE, GUARDED, RUN_DISCORDANCE, GATE.guard_max_draws)
OUTCOMES = (PairedOutcome(True, False), PairedOutcome(False, True), PairedOutcome(True, True))


async def _simulate(
    discordance: float, harm: float, *, paths: int, seed: int
) -> tuple[StagedDraws, np.ndarray]:
    """``paths`` classes of ``guard_max_draws`` planned draws, each a loss with probability
    ``(discordance + harm) / 2`` and a win with ``(discordance - harm) / 2``; and which are flagged."""
    rng = np.random.default_rng(seed)
    p_win, p_loss = (discordance - harm) / 2, (discordance + harm) / 2
    kinds = rng.choice(3, size=(paths, GATE.guard_max_draws), p=[p_win, p_loss, 1 - p_win - p_loss])
    planned = {str(k): cast(list[Draw], [None] * GATE.guard_max_draws) for k in range(paths)}
    offsets = {str(k): k * GATE.guard_max_draws for k in range(paths)}

    async def ask(stage: Mapping[str, tuple[int, Sequence[Draw]]]) -> dict[str, list[PairedOutcome]]:
        return {
            t: [OUTCOMES[kinds[int(t), start - offsets[t] + i]] for i in range(len(d))]
            for t, (start, d) in stage.items()
        }

    staged = await ask_in_stages(ask, planned, RULE, lambda: None)
    cleared = staged.cleared
    # Each path alone under Holm at the level of one among 12 (what the guard's power is sized at).
    flagged = np.array(
        [
            mcnemar_guard({t: (c.wins, c.losses)}, alpha=LEVEL, cleared=cleared)[0].harmed
            for t, c in staged.tallies.items()
        ]
    )
    return staged, flagged


@pytest.mark.parametrize("discordance", [0.2, 0.3, 0.41, 0.5, 0.6, 0.7])
async def test_a_harmed_class_is_flagged_with_the_stated_power_and_rarely_cleared_at_any_discordance(
    discordance: float,
) -> None:
    """Sized at 0.3, a 20-point drop at a discordance up to 0.7 is still flagged with P >= 0.8 and
    cleared with P <= 0.05 (before: 0.65 and 0.43 power at 0.41 and 0.6, and cleared 53 % of the
    time at 0.6); the promise names the discordance it holds up to."""
    promise = guard_promise(GATE, GATE.guard_max_draws, RUN_DISCORDANCE, LEVEL)
    assert promise.power == GATE.guard_power
    assert promise.discordance >= 0.7
    paths = 1500
    staged, flagged = await _simulate(discordance, GATE.guard_harm, paths=paths, seed=int(discordance * 100))
    assert (
        len(staged.cleared) / paths <= GATE.guard_clear
    )  # Ville: at most the bound, however often looked at
    assert flagged.mean() >= GATE.guard_power - 0.025  # Monte Carlo error of 1,500 paths
    # More discordance, more draws: the class is sized by its own, up to the cap.
    assert np.mean(list(staged.asked.values())) <= GATE.guard_max_draws


async def test_a_harmless_class_is_cleared_early_and_never_flagged_more_often_than_the_level() -> None:
    staged, flagged = await _simulate(RUN_DISCORDANCE, 0.0, paths=1000, seed=7)
    assert len(staged.cleared) / 1000 > 0.8
    assert np.mean(list(staged.asked.values())) < 80  # the 112 draws its size asks at 0.3, or fewer
    assert flagged.mean() <= LEVEL + 0.005


async def test_a_class_with_more_discordance_draws_more_before_its_size_is_reached() -> None:
    """Its uncleared classes stop at their size: the wider class takes more draws, each at a stage's end."""
    narrow, _ = await _simulate(0.3, GATE.guard_harm, paths=200, seed=3)
    wide, _ = await _simulate(0.6, GATE.guard_harm, paths=200, seed=4)
    mean = {
        k: np.mean([n for t, n in s.asked.items() if s.stops[t] != "cleared"])
        for k, s in (("n", narrow), ("w", wide))
    }
    assert 96 < mean["n"] < 160 < mean["w"] <= GATE.guard_max_draws
    assert all(n % 16 == 0 for n in wide.asked.values())
