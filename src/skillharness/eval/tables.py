"""Per-group comparison rows of two bundles' predictions on the same questions.

Groups: overall, per task type, per duration. Infra errors are not answers (audit P1-4): they
leave a sample out, and a question is paired only when both bundles answered it at least once.
Unparsed answers count as wrong, as in ``infer``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from skillharness.data import Question
from skillharness.eval.holdout_report import ArmCell, GroupRow, PairedCell
from skillharness.eval.stats import (
    PairedTable,
    bootstrap_mean_interval,
    holm_adjust,
    mcnemar_exact,
    newcombe_paired_interval,
)
from skillharness.infer import wilson
from skillharness.store import Prediction, PredictionStatus

__all__ = ["Tally", "compare_groups", "tally"]

_DURATION_ORDER = {"short": 0, "medium": 1, "long": 2}


@dataclass(frozen=True)
class Tally:
    """One bundle's samples of one question."""

    answered: int = 0
    correct: int = 0
    parse_errors: int = 0
    infra_errors: int = 0

    @property
    def mean(self) -> float:
        return self.correct / self.answered

    def add(self, prediction: Prediction) -> Tally:
        if prediction.status is PredictionStatus.INFRA_ERROR:
            return Tally(self.answered, self.correct, self.parse_errors, self.infra_errors + 1)
        right = prediction.correct is True  # decided once, by the agent, when it answered
        parse = prediction.status is PredictionStatus.PARSE_ERROR
        return Tally(self.answered + 1, self.correct + right, self.parse_errors + parse, self.infra_errors)


def tally(questions: Sequence[Question], predictions: Iterable[Prediction]) -> dict[str, Tally]:
    """Per question id, the tally of its samples (questions without predictions get an empty one)."""
    tallies = {q.question_id: Tally() for q in questions}
    for p in predictions:
        if p.question_id in tallies:
            tallies[p.question_id] = tallies[p.question_id].add(p)
    return tallies


def _arm(tallies: list[Tally], clustered: bool, confidence: float) -> ArmCell:
    answered = [t for t in tallies if t.answered]
    n_samples = sum(t.answered for t in answered)
    correct = sum(t.correct for t in answered)
    if not answered:
        accuracy, low, high = None, None, None
    elif clustered:
        means = [t.mean for t in answered]
        accuracy = sum(means) / len(means)
        low, high = bootstrap_mean_interval(means, confidence)
    else:
        accuracy = correct / n_samples
        low, high = wilson(correct, n_samples, confidence)
    return ArmCell(
        n_questions=len(answered),
        n_samples=n_samples,
        correct=correct,
        accuracy=accuracy,
        low=low,
        high=high,
        method="bootstrap" if clustered else "wilson",
        parse_errors=sum(t.parse_errors for t in tallies),
        infra_errors=sum(t.infra_errors for t in tallies),
    )


def _paired(pairs: list[tuple[Tally, Tally]], clustered: bool, confidence: float) -> PairedCell:
    both = [(f, b) for f, b in pairs if f.answered and b.answered]
    diffs = [f.mean - b.mean for f, b in both]
    wins, losses = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
    gain = sum(diffs) / len(diffs) if diffs else None
    if not diffs:
        low, high = None, None
    elif clustered:
        low, high = bootstrap_mean_interval(diffs, confidence)
    else:
        right = [(f.correct > 0, b.correct > 0) for f, b in both]
        table = PairedTable(
            both=sum(f and b for f, b in right),
            only_first=sum(f and not b for f, b in right),
            only_second=sum(b and not f for f, b in right),
            neither=sum(not f and not b for f, b in right),
        )
        low, high = newcombe_paired_interval(table, confidence)
    return PairedCell(
        n_pairs=len(both),
        gain=gain,
        low=low,
        high=high,
        method="bootstrap" if clustered else "newcombe",
        wins=wins,
        losses=losses,
        p_value=mcnemar_exact(wins, losses),
    )


def _groups(questions: Sequence[Question], key: Callable[[Question], str]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = defaultdict(list)
    for q in questions:
        grouped[key(q)].append(q.question_id)
    return {label: grouped[label] for label in sorted(grouped, key=lambda g: (_DURATION_ORDER.get(g, 9), g))}


def compare_groups(
    questions: Sequence[Question],
    final: Iterable[Prediction],
    baseline: Iterable[Prediction],
    *,
    samples: int,
    confidence: float = 0.95,
) -> list[GroupRow]:
    """Overall, per-task-type and per-duration rows; task-type p-values Holm-adjusted together.

    ``samples`` > 1 switches every interval to the per-question bootstrap (see
    :mod:`skillharness.eval.stats`).
    """
    clustered = samples > 1
    tf, tb = tally(questions, final), tally(questions, baseline)

    def row(grouping: str, label: str, ids: list[str]) -> GroupRow:
        return GroupRow(
            grouping=grouping,  # type: ignore[arg-type]
            label=label,
            final=_arm([tf[i] for i in ids], clustered, confidence),
            baseline=_arm([tb[i] for i in ids], clustered, confidence),
            paired=_paired([(tf[i], tb[i]) for i in ids], clustered, confidence),
        )

    rows = [row("overall", "all", [q.question_id for q in questions])]
    by_task = [row("task_type", t, ids) for t, ids in _groups(questions, lambda q: q.task_type).items()]
    adjusted = holm_adjust({r.label: r.paired.p_value for r in by_task})
    by_task = [
        r.model_copy(update={"paired": r.paired.model_copy(update={"p_holm": adjusted[r.label]})})
        for r in by_task
    ]
    rows += by_task
    rows += [row("duration", d, ids) for d, ids in _groups(questions, lambda q: q.duration).items()]
    return rows
