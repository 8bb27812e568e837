"""The train pool as steps: its units (see ``FrozenPools.units_of``) shuffled from the seed, then chunked."""

from __future__ import annotations

import random
from collections.abc import Sequence

from skillharness.data.questions import Question

__all__ = ["plan_steps"]


def plan_steps(
    units: Sequence[tuple[Question, ...]], batch_size: int, *, seed: int, epoch: int
) -> list[list[Question]]:
    """The epoch's steps: ``batch_size`` units each, in an order fixed by ``(seed, epoch)``.

    A unit is never split across steps: with the split's default unit, a step holds every question
    of each of its videos, so the diagnosis sees a video's questions side by side.
    """
    order = list(units)
    random.Random(f"steps:{seed}:{epoch}").shuffle(order)
    return [
        [q for unit in order[start : start + batch_size] for q in unit]
        for start in range(0, len(order), batch_size)
    ]
