"""The rank trial (``train.evolve.rank: auto``): does this run's rank role tell edits apart?

Ranking pays only when the rank role reads a useful edit from a useless one better than chance,
and no one can say in advance how well a given model does. So the run measures it on its own
evidence, at the cost of one rank call per proposal while it lasts. During the trial each target
gets the greedy design (one proposal, tested as proposed), and the rank role is asked, beside it,
whether that proposal is worth a test. Its answer changes nothing about the test. When a test of
such a proposal closes, its effect estimate (the mean paired observation, in [-1, 1]) joins the
endorsed or the declined group. At ``rank_trial_tests`` closed tests, one one-sided Mann-Whitney
test asks whether the endorsed proposals did better. Below ``rank_trial_alpha`` the run ranks
from then on (``candidates`` proposals, the rank role choosing and declining); otherwise it stays
greedy and stops asking. One look, decided once, kept in the checkpoint: a resume continues the
same trial, and the verdict never flips back.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import StrEnum
from typing import Literal

from pydantic import Field

from skillharness.util.model import StrictModel

__all__ = [
    "TRIAL_DECLINED",
    "TRIAL_ENDORSED",
    "RankMode",
    "RankTrial",
    "judge_trial",
    "rank_mode",
    "trial_choice",
]

# A trial proposal's ``choice``: what the rank role said about it (it is tested either way).
TRIAL_ENDORSED = "trial_endorsed"
TRIAL_DECLINED = "trial_declined"


class RankMode(StrEnum):
    """How a step's proposals are made and chosen."""

    GREEDY = "greedy"  # ``candidates`` proposals, the first valid one tested (rank off)
    RANKED = "ranked"  # ``candidates`` proposals, the rank role chooses (and may decline)
    TRIAL = "trial"  # one proposal, tested as proposed; the rank role's opinion of it recorded
    ALONE = "alone"  # one proposal, tested as proposed: a trial that did not trust the rank role


class RankTrial(StrictModel):
    """The trial's evidence and verdict (``open`` until decided)."""

    endorsed: list[float] = Field(default_factory=list)  # closed tests' mean observation
    declined: list[float] = Field(default_factory=list)
    verdict: Literal["open", "trusted", "distrusted"] = "open"
    p_value: float | None = None

    @property
    def closed(self) -> int:
        return len(self.endorsed) + len(self.declined)

    def summary(self) -> dict[str, object]:
        """What a run's metrics and a benchmark record of the trial: its verdict and group sizes."""
        return {
            "verdict": self.verdict,
            "p_value": self.p_value,
            "endorsed": len(self.endorsed),
            "declined": len(self.declined),
        }

    def observe(self, choice: str, observed: Sequence[int]) -> RankTrial:
        """The trial with one more closed test of a trial proposal (none without observations:
        a test refused before its first draw says nothing about the proposal)."""
        if self.verdict != "open" or choice not in (TRIAL_ENDORSED, TRIAL_DECLINED) or not observed:
            return self
        effect = sum(observed) / len(observed)
        if choice == TRIAL_ENDORSED:
            return self.model_copy(update={"endorsed": [*self.endorsed, effect]})
        return self.model_copy(update={"declined": [*self.declined, effect]})


def trial_choice(endorsed: bool) -> str:
    return TRIAL_ENDORSED if endorsed else TRIAL_DECLINED


def judge_trial(trial: RankTrial, tests: int, alpha: float) -> RankTrial:
    """The trial decided once ``tests`` trial tests have closed (unchanged before, and after).

    A group with fewer than two tests cannot show a difference: a rank role that endorses (or
    declines) nearly everything is distrusted, which is what it has earned.
    """
    if trial.verdict != "open" or trial.closed < tests:
        return trial
    if len(trial.endorsed) < 2 or len(trial.declined) < 2:
        return trial.model_copy(update={"verdict": "distrusted"})
    from scipy.stats import mannwhitneyu  # deferred: scipy.stats is most of a command's start-up

    p = float(mannwhitneyu(trial.endorsed, trial.declined, alternative="greater").pvalue)
    p = 1.0 if math.isnan(p) else p
    return trial.model_copy(update={"verdict": "trusted" if p < alpha else "distrusted", "p_value": p})


def rank_mode(rank: bool | str, trial: RankTrial) -> RankMode:
    """The design a step uses: ``train.evolve.rank`` (true, false or ``auto``) and the trial."""
    if rank == "auto":
        return {"open": RankMode.TRIAL, "trusted": RankMode.RANKED}.get(trial.verdict, RankMode.ALONE)
    return RankMode.RANKED if rank else RankMode.GREEDY
