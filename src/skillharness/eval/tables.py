"""Per-group comparison rows of two bundles' predictions on the same questions.

Groups: overall, per task type, per duration. Infra errors are not answers (audit P1-4): they
leave a sample out, and a question is paired only when both bundles answered it at least once.
Unparsed answers count as wrong, as in ``infer``. Questions of one video are a cluster: the
intervals and the paired test are by video, the per-question ones beside them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from skillharness.data import Question
from skillharness.eval.holdout_report import ArmCell, GroupRow, PairedCell
from skillharness.infer import clustered_accuracy, clustered_paired, holm_adjust
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


def _arm(tallies: list[tuple[Tally, str]], binary: bool, confidence: float) -> ArmCell:
    answered = [(t, video) for t, video in tallies if t.answered]
    estimate = clustered_accuracy(
        [t.mean for t, _ in answered], [v for _, v in answered], binary=binary, confidence=confidence
    )
    return ArmCell(
        n_questions=len(answered),
        n_samples=sum(t.answered for t, _ in answered),
        correct=sum(t.correct for t, _ in answered),
        accuracy=estimate.value if estimate else None,
        low=estimate.low if estimate else None,
        high=estimate.high if estimate else None,
        method=estimate.method if estimate else ("wilson" if binary else "bootstrap"),  # type: ignore[arg-type]
        per_question_low=estimate.per_question_low if estimate else None,
        per_question_high=estimate.per_question_high if estimate else None,
        per_question_method=estimate.per_question_method if estimate else None,  # type: ignore[arg-type]
        design_effect=estimate.design_effect if estimate else None,
        n_videos=estimate.n_clusters if estimate else 0,
        parse_errors=sum(t.parse_errors for t, _ in tallies),
        infra_errors=sum(t.infra_errors for t, _ in tallies),
    )


def _paired(pairs: list[tuple[Tally, Tally, str]], binary: bool, confidence: float) -> PairedCell:
    both = [(f, b, video) for f, b, video in pairs if f.answered and b.answered]
    estimate = clustered_paired(
        [f.mean for f, _, _ in both],
        [b.mean for _, b, _ in both],
        [v for _, _, v in both],
        binary=binary,
        confidence=confidence,
    )
    if estimate is None:
        return PairedCell(
            n_pairs=0,
            gain=None,
            low=None,
            high=None,
            method="newcombe" if binary else "bootstrap",
            n_videos=0,
            wins=0,
            losses=0,
            p_value=1.0,
            p_per_question=1.0,
        )
    return PairedCell(
        n_pairs=len(both),
        gain=estimate.value,
        low=estimate.low,
        high=estimate.high,
        method=estimate.method,  # type: ignore[arg-type]
        per_question_low=estimate.per_question_low,
        per_question_high=estimate.per_question_high,
        per_question_method=estimate.per_question_method,  # type: ignore[arg-type]
        design_effect=estimate.design_effect,
        n_videos=estimate.n_clusters,
        wins=estimate.wins,
        losses=estimate.losses,
        p_value=estimate.p_value,
        p_per_question=estimate.p_per_question,
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

    Intervals and the paired test are by video (questions of one video are correlated), with the
    per-question ones and the design effect beside them (see :mod:`skillharness.infer.cluster`).
    Per question, ``samples`` > 1 switches from Wilson / Newcombe to the question bootstrap.
    """
    binary = samples <= 1
    tf, tb = tally(questions, final), tally(questions, baseline)
    video = {q.question_id: q.video_id for q in questions}

    def row(grouping: str, label: str, ids: list[str]) -> GroupRow:
        return GroupRow(
            grouping=grouping,  # type: ignore[arg-type]
            label=label,
            final=_arm([(tf[i], video[i]) for i in ids], binary, confidence),
            baseline=_arm([(tb[i], video[i]) for i in ids], binary, confidence),
            paired=_paired([(tf[i], tb[i], video[i]) for i in ids], binary, confidence),
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
