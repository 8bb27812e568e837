"""Val accuracy of a bundle version: per class and overall, one sample per question.

Each bundle version is scored once, as a child run named by its hash, so the epoch-end score, the
``dual_metric`` rows and a resume all read the same predictions. Classes whose relevant text did
not change are answered from the run's cache and cost nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from skillharness.agent import refusal_of
from skillharness.agent.records import Prediction
from skillharness.data import Pool
from skillharness.infer.summary import wilson
from skillharness.skills import Bundle
from skillharness.store import RunKind
from skillharness.train.state.context import TrainContext

__all__ = ["ValScore", "score_predictions", "val_run_suffix", "val_score"]


@dataclass(frozen=True)
class ValScore:
    """Correct and scored (non-infra) answers per class; infra errors are in neither."""

    per_class: Mapping[str, tuple[int, int]]

    @property
    def correct(self) -> int:
        return sum(c for c, _ in self.per_class.values())

    @property
    def n(self) -> int:
        return sum(n for _, n in self.per_class.values())

    @property
    def accuracy(self) -> float:
        return self.correct / self.n if self.n else 0.0

    def class_accuracy(self, task_type: str) -> float:
        correct, n = self.per_class.get(task_type, (0, 0))
        return correct / n if n else 0.0

    def interval(self, confidence: float = 0.95) -> tuple[float, float]:
        return wilson(self.correct, self.n, confidence)


def score_predictions(predictions: list[Prediction], task_type_of: Mapping[str, str]) -> ValScore:
    per: dict[str, list[int]] = {}
    for p in predictions:
        if p.correct is None:  # infra: neither right nor wrong
            continue
        cell = per.setdefault(task_type_of[p.question_id], [0, 0])
        cell[0] += int(p.correct)
        cell[1] += 1
    return ValScore({t: (c, n) for t, (c, n) in sorted(per.items())})


def val_run_suffix(bundle: Bundle) -> str:
    return f"val.{bundle.bundle_hash[:16]}"


async def val_score(
    ctx: TrainContext,
    bundle: Bundle,
    *,
    run_suffix: str | None = None,
    check_stop: Callable[[], None] | None = None,
) -> ValScore:
    """Score ``bundle`` on the whole val pool (sample 0), as its own resumable child run
    (``check_stop``: the budget, checked about every stage's worth of draws)."""
    known = ctx.val_scores.get(bundle.bundle_hash)
    if known is not None:
        return known
    draws = [(q, 0) for q in ctx.val_questions]
    suffix = run_suffix or val_run_suffix(bundle)
    predictions = await ctx.rollout(
        bundle, draws, suffix, kind=RunKind.INFER, pool=Pool.VAL, check_stop=check_stop
    )
    score = score_predictions(predictions, {q.question_id: q.task_type for q in ctx.val_questions})
    # Infra errors are asked again next time; a refusal is not (the same limit refuses it again).
    if all(p.correct is not None or refusal_of(p) is not None for p in predictions):
        ctx.val_scores[bundle.bundle_hash] = score
    return score
