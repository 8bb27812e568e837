"""The train pool as steps: units (all questions of a video) shuffled from the seed, then chunked."""

from __future__ import annotations

import random
from collections.abc import Sequence

from skillharness.data.questions import Question

__all__ = ["plan_steps", "units_of"]


def units_of(questions: Sequence[Question]) -> list[tuple[Question, ...]]:
    """Questions grouped by video (the default unit: no video is split across steps), in first-seen order."""
    grouped: dict[str, list[Question]] = {}
    for q in questions:
        grouped.setdefault(q.videoID, []).append(q)
    return [tuple(qs) for qs in grouped.values()]


def plan_steps(
    questions: Sequence[Question], batch_size: int, *, seed: int, epoch: int
) -> list[list[Question]]:
    """The epoch's steps: ``batch_size`` units each, in an order fixed by ``(seed, epoch)``."""
    units = units_of(questions)
    random.Random(f"steps:{seed}:{epoch}").shuffle(units)
    return [
        [q for unit in units[start : start + batch_size] for q in unit]
        for start in range(0, len(units), batch_size)
    ]
