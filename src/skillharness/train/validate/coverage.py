"""Which task types a training run trains, and whether each one's gate can ever accept (audit P0-3).

The one home of *micro*: a class is micro when its claims would rest on fewer than
``train.gate.min_distinct`` distinct val questions (sampling with replacement draws more
observations, not more questions), when its gate is unreachable with the val questions it has
(acceptance needs at least ``min_wins`` drawable observations, see
:mod:`skillharness.train.gate.reachability`), or when the train pool holds none of its questions
(nothing to learn from). The split, ``experiment init``, preflight and the loop all print
:meth:`ClassCoverage.reason`. With ``train.task_types`` unset the run trains every class of the
questions file except the micro ones; a micro class named explicitly is trained, and its accepts
are reported apart (``micro_trained``).

The drawable observations depend on the sampling temperature (see :mod:`skillharness.train.state.draws`):
at temperature 0 each val question is drawn at most once, so the gate's budget is the class's
distinct val questions; above 0 draws are fresh samples with replacement and the budget is
``n_max``, whatever the class size. Either way the claim rests on ``val`` distinct questions,
and a class with fewer than ``gate.min_distinct`` is flagged: only the holdout can say whether
its accepts generalize.

:func:`plan_trained_classes` is the one rule for both preflight and the training loop: the loop
never trains a class preflight left out. Reachability here is the first gate's; with alpha
spending later gates need more wins, so each class also carries the last gate index at which it
can still accept, and the loop re-checks every target at the level of its own gate before
evolving it (:mod:`skillharness.train.validate.reach`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from skillharness.data.pools import FrozenPools
from skillharness.data.questions import Question
from skillharness.train.config import GateConfig, TrainConfig
from skillharness.train.gate import last_reachable_gate, reachability_for
from skillharness.train.state.draws import gate_budget
from skillharness.train.state.reserve import reserved_ids

__all__ = [
    "ClassCoverage",
    "TrainedClasses",
    "class_coverage",
    "include_hint",
    "plan_trained_classes",
    "trained_classes",
]


@dataclass(frozen=True)
class ClassCoverage:
    """One task type's questions in the train and val pools, against its gate's minimum."""

    task_type: str
    train: int
    val: int
    min_val: int  # fewest val questions with which the class's gate can accept at all
    reachable: bool  # the gate can accept with ``drawable`` observations
    drawable: int = 0  # the gate's observation budget (distinct val questions at temperature 0)
    few_distinct: bool = False  # fewer distinct val questions than gate.min_distinct
    last_gate: int | None = None  # last gate index that can still accept (None: every gate)

    min_distinct: int = 0  # train.gate.min_distinct

    @property
    def micro(self) -> bool:
        return not self.reachable or self.train == 0 or self.few_distinct

    def reason(self) -> str:
        """Why the class is micro ("" when it is not)."""
        reasons = []
        if self.few_distinct:
            reasons.append(
                f"{self.val} distinct val question(s) < train.gate.min_distinct={self.min_distinct}: "
                "too few for a claim about the class"
            )
        if not self.reachable:
            have = (
                f"{self.val} val question(s)"
                if self.val in (0, self.drawable)
                else f"a budget of {self.drawable} observation(s)"
            )
            reasons.append(f"{have} < {self.min_val} needed for its gate to accept")
        if self.train == 0:
            reasons.append("no train question to learn from")
        return "; ".join(reasons)


def include_hint(left_out: Sequence[ClassCoverage]) -> str:
    """How to train the micro classes ``left_out`` anyway, and what that risks ("" when none is
    left out only for its few distinct questions: an unreachable gate or an empty train pool needs
    another split, not a setting)."""
    few = [c for c in left_out if c.few_distinct and c.reachable and c.train > 0]
    if not few:
        return ""
    fewest = min(c.val for c in few)
    return (
        f"to train them anyway, set train.gate.min_distinct to {fewest} or name them in train.task_types; "
        f"the risk: an accept is then a claim about as few as {fewest} val questions, and an edit that "
        "wins on those can lose on the class's other questions (only the holdout can tell)"
    )


@dataclass(frozen=True)
class TrainedClasses:
    """The classes a run trains, the micro classes it leaves out, and names it does not know."""

    trained: tuple[ClassCoverage, ...]
    excluded_micro: tuple[ClassCoverage, ...]  # left out because train.task_types is unset
    unknown: tuple[str, ...]  # named in train.task_types but absent from the questions file
    explicit: bool  # train.task_types was set

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.task_type for c in self.trained)

    @property
    def micro_trained(self) -> tuple[str, ...]:
        """Micro classes trained because ``train.task_types`` names them: their accepts stand apart."""
        return tuple(c.task_type for c in self.trained if c.micro)


def class_coverage(
    questions: Sequence[Question], pools: FrozenPools, gate: GateConfig, temperature: float = 0.0
) -> dict[str, ClassCoverage]:
    """Coverage of every task type of ``questions`` (sorted by name) under ``pools`` and ``gate``.

    ``temperature`` is the agent's sampling temperature: it decides the gate's draw mode. The val
    counts leave out ``gate.reserve``'s questions, which no gate draws (``reserve.py``).
    """
    by_id = {q.question_id: q.task_type for q in questions}
    train = Counter(by_id[qid] for qid in pools.questions.get("train", ()) if qid in by_id)
    in_val = set(pools.questions.get("val", ()))
    reserved = reserved_ids((q for q in questions if q.question_id in in_val), gate.reserve)
    val = Counter(by_id[qid] for qid in in_val if qid in by_id and qid not in reserved)
    result = {}
    for task_type in sorted(set(by_id.values())):
        drawable = gate_budget(val[task_type], temperature=temperature, n_max=gate.n_max)
        reach = reachability_for(gate, drawable)
        result[task_type] = ClassCoverage(
            task_type,
            train[task_type],
            val[task_type],
            reach.min_wins,
            reach.reachable,
            drawable=reach.drawable,
            few_distinct=val[task_type] < gate.min_distinct,
            last_gate=last_reachable_gate(gate, drawable),
            min_distinct=gate.min_distinct,
        )
    return result


def trained_classes(train: TrainConfig, coverage: dict[str, ClassCoverage]) -> TrainedClasses:
    """``train.task_types`` (as given) or, when unset, every class of ``coverage`` that is not micro."""
    if train.task_types is not None:
        named = tuple(dict.fromkeys(train.task_types))
        return TrainedClasses(
            trained=tuple(coverage[t] for t in named if t in coverage),
            excluded_micro=(),
            unknown=tuple(t for t in named if t not in coverage),
            explicit=True,
        )
    return TrainedClasses(
        trained=tuple(c for c in coverage.values() if not c.micro),
        excluded_micro=tuple(c for c in coverage.values() if c.micro),
        unknown=(),
        explicit=False,
    )


def plan_trained_classes(
    questions: Sequence[Question], pools: FrozenPools, train: TrainConfig, temperature: float = 0.0
) -> TrainedClasses:
    """The classes a run trains: what preflight reports and what the loop evolves (audit P0-3).

    ``temperature`` is the draw temperature (:func:`skillharness.train.state.draws.draw_temperature`).
    """
    return trained_classes(train, class_coverage(questions, pools, train.gate, temperature))
