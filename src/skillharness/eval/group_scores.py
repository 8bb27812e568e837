"""Video-MME-v2's group score of the two bundles on the test pool, with intervals by video.

A group is one video's four questions in one sample (:mod:`skillharness.data.groups`), scored
from the agent's own correctness (as the accuracy rows). Infra errors are not answers: a group
with one is left out (and counted), as is a group the pool cut apart. The groups of both bundles
are paired by (video, sample). Intervals resample videos (each with all its groups): the mean
group score of each bundle, and the mean of the per-group differences.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from skillharness.data import Question, RuleInput, ScoredGroup, scored_groups
from skillharness.eval.holdout_report import GroupScoreArm, GroupScores
from skillharness.infer import cluster_bootstrap_interval
from skillharness.store import Prediction, PredictionStatus

__all__ = ["compare_group_scores"]


def _groups(
    questions: dict[str, Question], predictions: Iterable[Prediction], samples: int
) -> tuple[list[ScoredGroup], int]:
    """The complete groups' scores, and how many of the groups asked are not complete."""
    items = [
        RuleInput(questions[p.question_id], p.sample_idx, p.correct is True)
        for p in predictions
        if p.question_id in questions and p.status is not PredictionStatus.INFRA_ERROR
    ]
    scored, _ = scored_groups(items)
    asked = {(q.video_id, s) for q in questions.values() if q.group_type is not None for s in range(samples)}
    return scored, len(asked) - len(scored)


def _arm(scored: list[ScoredGroup], left_out: int, confidence: float) -> GroupScoreArm:
    if not scored:
        return GroupScoreArm(score=None, low=None, high=None, n_groups=0, left_out=left_out)
    values = [g.score for g in scored]
    low, high = cluster_bootstrap_interval(values, [g.video for g in scored], confidence)
    return GroupScoreArm(
        score=sum(values) / len(values), low=low, high=high, n_groups=len(values), left_out=left_out
    )


def compare_group_scores(
    questions: Sequence[Question],
    final: Iterable[Prediction],
    baseline: Iterable[Prediction],
    *,
    samples: int,
    confidence: float = 0.95,
) -> GroupScores | None:
    """Both bundles' group scores and the paired gain; None when no question carries a group."""
    by_id = {q.question_id: q for q in questions}
    if not any(q.group_type for q in questions):
        return None
    (f_groups, f_left), (b_groups, b_left) = _groups(by_id, final, samples), _groups(by_id, baseline, samples)
    f_by = {(g.video, g.sample): g.score for g in f_groups}
    b_by = {(g.video, g.sample): g.score for g in b_groups}
    paired = sorted(f_by.keys() & b_by.keys())
    diffs = [f_by[k] - b_by[k] for k in paired]
    low = high = gain = None
    if diffs:
        gain = sum(diffs) / len(diffs)
        low, high = cluster_bootstrap_interval(diffs, [video for video, _ in paired], confidence)
    return GroupScores(
        final=_arm(f_groups, f_left, confidence),
        baseline=_arm(b_groups, b_left, confidence),
        n_pairs=len(diffs),
        gain=gain,
        low=low,
        high=high,
    )
