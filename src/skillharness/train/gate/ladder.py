"""The ladder: the e-process fed in stages of growing size, with a decision after each stage.

Acceptance and harm are checked at every observation (stopping at the first crossing is valid by
Ville's inequality); the futility stop ``reject_inertia`` is checked at stage ends. It fires when
``K_n * (1 + cap)^(budget - n) < threshold``: every factor is at most ``1 + cap`` whatever the
strategy and the outcomes, so this is a sound upper bound on any wealth still achievable, and the
stop never discards a gate that could still accept. At the budget the bound is ``K_n`` itself.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import IntEnum

import numpy as np
from numpy.typing import NDArray

from skillharness.errors import ConfigError, GateError
from skillharness.train.config import GateConfig
from skillharness.train.gate.bets import BetStrategy, make_bet_strategy
from skillharness.train.gate.eprocess import Outcome, WealthPaths, split_observations, wealth_paths
from skillharness.train.gate.reachability import Reachability, ensure_reachable

__all__ = ["Decision", "DecisionKind", "Ladder", "PathDecisions", "decide_paths", "stage_ends"]

# Relative slack (in log-wealth) in favour of continuing: the futility stop stays sound in floats.
_FUTILITY_SLACK = 1e-9


class DecisionKind(IntEnum):
    """What the gate concluded; ``CONTINUE`` asks the caller for the next stage."""

    CONTINUE = 0
    ACCEPT = 1
    REJECT_EVIDENCE = 2
    REJECT_INERTIA = 3

    @property
    def label(self) -> str:
        """Lower-case name, as used in logs and reports (``reject_inertia``)."""
        return self.name.lower()


@dataclass(frozen=True)
class Decision:
    """A gate decision with the evidence it rests on (counts are up to the decision point)."""

    kind: DecisionKind
    wealth: float
    harm_wealth: float
    threshold: float
    n: int
    wins: int
    losses: int
    ties: int
    infra: int
    stage: int
    next_request: int

    @property
    def terminal(self) -> bool:
        """True for every kind but ``CONTINUE``."""
        return self.kind is not DecisionKind.CONTINUE

    def to_record(self) -> dict[str, float | int | str]:
        """Plain JSON-ready fields for logs and the run store (``kind`` as its label)."""
        return {**self.__dict__, "kind": self.kind.label}


def stage_ends(first_stage: int, growth: float, budget: int) -> tuple[int, ...]:
    """Cumulative observation counts at which stages end: ``first, ceil(first*g), ...``, then ``budget``."""
    ends: list[int] = []
    end = min(first_stage, budget)
    while end < budget:
        ends.append(end)
        end = min(budget, max(end + 1, math.ceil(end * growth)))
    ends.append(budget)
    return tuple(ends)


@dataclass(frozen=True)
class PathDecisions:
    """Vectorized decisions: kind codes and the observation count each decision was taken at."""

    kinds: NDArray[np.int8]
    n_used: NDArray[np.int64]


def _first_crossing(wealth: NDArray[np.float64], thr: float, never: int) -> NDArray[np.int64]:
    """1-based observation index of the first crossing per run; ``never`` when none."""
    hit = wealth[:, 1:] >= thr
    first = np.argmax(hit, axis=1) + 1
    return np.where(hit.any(axis=1), first, never)


def decide_paths(
    paths: WealthPaths, checkpoints: Sequence[int], thr: float, cap: float, budget: int
) -> PathDecisions:
    """Decide every run from its wealth paths; stages end at ``checkpoints`` (observation counts).

    A run whose data end before any crossing or futile checkpoint gets ``CONTINUE``.
    """
    runs, n = paths.up.shape[0], paths.up.shape[1] - 1
    never = n + 1
    cross_up = _first_crossing(paths.up, thr, never)
    cross_down = _first_crossing(paths.down, thr, never)
    futile_at = np.full(runs, never, dtype=np.int64)
    with np.errstate(divide="ignore"):  # wealth that underflowed to 0 has log -inf: futile, as it should be
        log_up = np.log(paths.up)
    for end in sorted(checkpoints, reverse=True):
        if end > n:
            continue
        # In logs, so that long budgets cannot overflow (1.5^2000 is not a float).
        log_bound = log_up[:, end] + (budget - end) * math.log1p(cap)
        # The slack keeps a rounding error in the logs from stopping a gate that can still reach
        # the threshold exactly; at the budget nothing is left to draw, so the gate must end.
        futile = (log_bound < math.log(thr) - _FUTILITY_SLACK) | (end >= budget)
        futile_at = np.where(futile, end, futile_at)
    crossing = np.minimum(cross_up, cross_down)
    kinds = np.zeros(runs, dtype=np.int8)
    kinds[cross_up < np.minimum(cross_down, futile_at + 1)] = DecisionKind.ACCEPT
    kinds[cross_down < np.minimum(cross_up, futile_at + 1)] = DecisionKind.REJECT_EVIDENCE
    inertia = futile_at < crossing
    kinds[inertia] = DecisionKind.REJECT_INERTIA
    n_used = np.where(inertia, futile_at, np.where(crossing != never, crossing, n))
    return PathDecisions(kinds, n_used.astype(np.int64))


class Ladder:
    """One gate, fed stage by stage by the caller (the training loop).

    Construction checks reachability and raises ``ConfigError`` for a gate that could never accept,
    before anything is spent. ``feed`` takes a stage of outcomes (``PairedOutcome``, ``-1/0/+1``,
    or ``None``/``INFRA``, which are skipped and counted) and returns the decision after it.
    """

    def __init__(
        self,
        config: GateConfig,
        drawable: int,
        *,
        gate_index: int = 1,
        accepts: int = 0,
        label: str = "gate",
        strategy: BetStrategy | None = None,
    ) -> None:
        self.config = config
        self.reach: Reachability = ensure_reachable(
            config, drawable, gate_index=gate_index, accepts=accepts, label=label
        )
        self.budget = self.reach.drawable
        self.threshold = self.reach.threshold
        self.strategy = strategy or make_bet_strategy(config.bet_strategy, config.bet_cap)
        if self.strategy.cap > config.bet_cap:  # reachability and futility assume bets <= bet_cap
            raise ConfigError(
                f"strategy bet cap {self.strategy.cap} exceeds gate.bet_cap {config.bet_cap}",
                field="gate.bet_cap",
            )
        self.plan = stage_ends(config.first_stage, config.stage_growth, self.budget)
        self._observed: list[int] = []
        self._checkpoints: list[int] = []
        self._infra = 0
        self.decision: Decision | None = None

    @property
    def next_request(self) -> int:
        """Observations the next stage should bring (0 once the gate has decided)."""
        if self.decision is not None and self.decision.terminal:
            return 0
        return self._remaining_in_stage(len(self._observed))

    def _remaining_in_stage(self, n: int) -> int:
        return next((end for end in self.plan if end > n), self.budget) - n

    def feed(self, outcomes: Iterable[Outcome]) -> Decision:
        """Add one stage of outcomes and decide; observations past the budget are refused."""
        if self.decision is not None and self.decision.terminal:
            raise GateError(f"the gate already decided {self.decision.kind.label}; start a new gate")
        observed, infra = split_observations(outcomes)
        if not observed:
            # An outage: nothing was observed, so nothing can be decided. The gate stays where it
            # was and asks for the same stage again (the INFRA outcomes are only counted).
            self._infra += infra
            self.decision = self._undecided()
            return self.decision
        if len(self._observed) + len(observed) > self.budget:
            raise GateError(
                f"stage brings {len(observed)} observations but only "
                f"{self.budget - len(self._observed)} remain in the budget of {self.budget}",
                budget=self.budget,
            )
        self._observed.extend(observed)
        self._infra += infra
        self._checkpoints.append(len(self._observed))
        self.decision = self._decide()
        return self.decision

    def wealth_path(self) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """Wealth and harm wealth after each observation so far (the start, 1.0, excluded)."""
        if not self._observed:
            return (), ()
        paths = wealth_paths(np.asarray([self._observed], dtype=np.int8), self.strategy)
        return tuple(float(w) for w in paths.up[0, 1:]), tuple(float(w) for w in paths.down[0, 1:])

    def _undecided(self) -> Decision:
        if self.decision is not None:  # a CONTINUE: terminal decisions refuse more stages
            return replace(self.decision, infra=self._infra)
        return Decision(
            kind=DecisionKind.CONTINUE,
            wealth=1.0,
            harm_wealth=1.0,
            threshold=self.threshold,
            n=0,
            wins=0,
            losses=0,
            ties=0,
            infra=self._infra,
            stage=0,
            next_request=self._remaining_in_stage(0),
        )

    def _decide(self) -> Decision:
        d = np.asarray([self._observed], dtype=np.int8).reshape(1, -1)
        paths = wealth_paths(d, self.strategy)
        result = decide_paths(paths, self._checkpoints, self.threshold, self.config.bet_cap, self.budget)
        kind = DecisionKind(int(result.kinds[0]))
        n = int(result.n_used[0]) if kind is not DecisionKind.CONTINUE else d.shape[1]
        seen = d[0, :n]
        return Decision(
            kind=kind,
            wealth=float(paths.up[0, n]),
            harm_wealth=float(paths.down[0, n]),
            threshold=self.threshold,
            n=n,
            wins=int(np.count_nonzero(seen > 0)),
            losses=int(np.count_nonzero(seen < 0)),
            ties=int(np.count_nonzero(seen == 0)),
            infra=self._infra,
            stage=len(self._checkpoints),
            next_request=self._remaining_in_stage(n) if kind is DecisionKind.CONTINUE else 0,
        )
