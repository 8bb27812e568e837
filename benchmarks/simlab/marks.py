"""Reading one run at budget marks, and the statistics over seeds. Pure: no run, no file.

One run at the largest budget B stands for the runs at every smaller budget b: until a run given b
stops, it is the same run as the one given B, as long as the loop does not plan by its budget (the
``--separate-budgets`` flag runs each budget on its own to check that). A mark is read at the last
checkpoint at or before it (never after: a run's figure at b may not rest on calls past b), and
the calls actually spent by then are printed beside it.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from simlab.world import Point
from skillharness.errors import RunError

# A true effect within this of 0 is no effect: an edit of another class's text leaves the oracle's
# figures equal, and only float summation could make them differ.
NO_EFFECT = 1e-9


@dataclass(frozen=True)
class Accept:
    """One accepted edit: when it became the incumbent and what it truly did."""

    calls: int  # calls spent when its version first appeared on the curve
    effect_test: float  # oracle accuracy after minus before, on the test pool
    effect_val: float
    # The true test effect of each line it inserted, added alone (harm is counted per line).
    line_effects_test: tuple[float, ...] = ()


def accept_of(record: dict[str, Any]) -> Accept:
    """An :class:`Accept` from its stored record (``lines``: each inserted line's true effects)."""
    lines = tuple(float(line["effect_test"]) for line in record.get("lines", ()))
    return Accept(record["calls"], record["effect_test"], record["effect_val"], lines)


@dataclass(frozen=True)
class Reading:
    """What a run with call budget ``budget`` reports, read off a longer run's curve."""

    budget: int
    calls: int  # calls spent at the checkpoint read (at or before the budget), or at the run's end
    closure_test: float
    closure_val: float
    alpha_sum: float
    gates: int
    accepts: int
    harmful_test: int  # accepts with a true test effect <= 0: harmful or useless
    harmful_val: int
    end_reason: str
    unspent: float  # share of the budget left unspent at the end
    lines: int = 0  # lines the accepts inserted (0: a record from before lines were scored)
    harmful_lines: int = 0  # of those, lines with a true test effect <= 0 added alone


def point_at(points: Sequence[Point], budget: int) -> Point:
    """The incumbent a run holds at ``budget`` calls: the last checkpoint at or before ``budget``
    (the last point when the curve ends first). Before the first checkpoint it holds the initial
    bundle: a point of no closure at 0 calls."""
    if not points:
        raise RunError("the run recorded no checkpoint: there is nothing to read", budget=budget)
    before = [p for p in points if p.calls <= budget]
    if not before:
        return Point(0, "v0000", 0.0, 0.0, 0.0, 0)
    return before[-1]


def read_mark(
    points: Sequence[Point], accepts: Sequence[Accept], budget: int, *, end_reason: str, spent: int
) -> Reading:
    """The run given ``budget`` calls: its incumbent, the accepts made by then, and why it ended:
    ``max_calls`` when the curve reaches the budget, else the whole run's ``end_reason`` after
    ``spent`` calls."""
    point = point_at(points, budget)
    reached = points[-1].calls > budget or spent >= budget
    calls = point.calls if reached else spent
    made = [a for a in accepts if a.calls <= point.calls]
    return Reading(
        budget=budget,
        calls=calls,
        closure_test=point.closure_test,
        closure_val=point.closure_val,
        alpha_sum=point.alpha_spent,
        gates=point.gates,
        accepts=len(made),
        harmful_test=sum(a.effect_test <= NO_EFFECT for a in made),
        harmful_val=sum(a.effect_val <= NO_EFFECT for a in made),
        lines=sum(len(a.line_effects_test) for a in made),
        harmful_lines=sum(e <= NO_EFFECT for a in made for e in a.line_effects_test),
        end_reason="max_calls" if reached else end_reason,
        unspent=0.0 if reached else max(0, budget - calls) / budget,
    )


@dataclass(frozen=True)
class Spread:
    """Mean, sample standard deviation (0 for one value), min and max."""

    mean: float
    sd: float
    low: float
    high: float
    n: int


def spread(values: Sequence[float]) -> Spread:
    if not values:
        raise RunError("no values to summarize: every run of this row failed")
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return Spread(statistics.fmean(values), sd, min(values), max(values), len(values))


@dataclass(frozen=True)
class MarkSummary:
    """One setup at one budget, over its seeds."""

    budget: int
    closure: Spread  # test gap closure
    calls: Spread
    unspent: Spread
    accepts: int
    harmful_test: int
    harmful_val: int
    alpha_sum: float  # Σα over every gate of every seed: bounds the expected false accepts in all
    end_reasons: dict[str, int] = field(default_factory=dict)
    lines: int = 0
    harmful_lines: int = 0

    @property
    def harmful_share(self) -> float | None:
        """Harmful or useless lines among the inserted lines (per accept for records without lines)."""
        if self.lines:
            return self.harmful_lines / self.lines
        return self.harmful_test / self.accepts if self.accepts else None

    @property
    def calls_per_point(self) -> float | None:
        """Mean calls / (100 × mean test closure): None when no gap was closed."""
        return self.calls.mean / (100 * self.closure.mean) if self.closure.mean > 0 else None


def summarize(readings: Sequence[Reading]) -> MarkSummary:
    """``readings`` of one budget, one per seed."""
    budgets = {r.budget for r in readings}
    if len(budgets) != 1:
        raise RunError(f"a summary is of one budget, got {sorted(budgets)}", budgets=sorted(budgets))
    return MarkSummary(
        budget=budgets.pop(),
        closure=spread([r.closure_test for r in readings]),
        calls=spread([float(r.calls) for r in readings]),
        unspent=spread([r.unspent for r in readings]),
        accepts=sum(r.accepts for r in readings),
        harmful_test=sum(r.harmful_test for r in readings),
        harmful_val=sum(r.harmful_val for r in readings),
        alpha_sum=sum(r.alpha_sum for r in readings),
        end_reasons=dict(Counter(r.end_reason for r in readings)),
        lines=sum(r.lines for r in readings),
        harmful_lines=sum(r.harmful_lines for r in readings),
    )
