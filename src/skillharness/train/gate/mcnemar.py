"""McNemar harm guard: one exact test at the end of a gate, on classes the edit touches but does not target.

Only discordant pairs carry information. Under "the candidate is not worse on this class",
a discordant pair is a loss with probability at most 1/2, so the one-sided p-value for harm is
``P(Binomial(wins + losses, 1/2) >= losses)``. It is a fixed-sample test: run it once per gate,
never on growing data (repeated looks would inflate its error). Several classes are combined
with Holm's step-down procedure, which bounds the chance of any false harm flag by the level.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from scipy.stats import binom

from skillharness.errors import GateError

__all__ = ["McNemarResult", "mcnemar_guard", "mcnemar_harm_p"]


def mcnemar_harm_p(wins: int, losses: int) -> float:
    """Exact one-sided p-value that the candidate is worse, from discordant counts."""
    if wins < 0 or losses < 0:
        raise GateError(f"counts must be non-negative, got wins={wins}, losses={losses}")
    discordant = wins + losses
    if discordant == 0:
        return 1.0
    return float(binom.sf(losses - 1, discordant, 0.5))


@dataclass(frozen=True)
class McNemarResult:
    """The guard's verdict for one class."""

    label: str
    wins: int
    losses: int
    p_value: float
    harmed: bool


def mcnemar_guard(counts: Mapping[str, tuple[int, int]], alpha: float = 0.05) -> tuple[McNemarResult, ...]:
    """Test each class's ``(wins, losses)`` for harm; Holm-adjusted at level ``alpha``."""
    p_values = {label: mcnemar_harm_p(w, lo) for label, (w, lo) in counts.items()}
    harmed: set[str] = set()
    for rank, label in enumerate(sorted(p_values, key=p_values.__getitem__)):
        if p_values[label] > alpha / (len(p_values) - rank):
            break
        harmed.add(label)
    return tuple(
        McNemarResult(label, w, lo, p_values[label], label in harmed) for label, (w, lo) in counts.items()
    )
