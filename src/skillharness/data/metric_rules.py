"""The aggregations reference evaluations apply to per-question scores, chosen by name.

A benchmark's adapter names its reference task's rule (``lmms_eval.metric.rule``); an unknown
name fails when the adapter loads. Each rule is a small pure function from the scored questions
to *parts*: per cluster (a video), what it adds to the numerator and the denominator of one
stratum's ratio. Every rule's score is then the same expression, the mean over its strata of
``Σ numerator / Σ denominator`` (a stratum with no denominator counts 0, as upstream's
``if total > 0 else 0``), so one interval method serves all of them
(:mod:`skillharness.infer.reference_score`).

Sources, lmms-eval ``cb45ac4d`` (v0.7.2): ``tasks/egoschema/utils.py``
(``egoschema_aggregate_score``), ``tasks/longvideobench/utils.py``
(``longvideobench_aggregate_results``), ``tasks/nextqa/nextqa_mc_test.yaml`` (``mean``),
``tasks/mvbench/utils.py`` (``mvbench_aggregate_results``), ``tasks/mlvu/utils.py``
(``mlvu_aggregate_results_dev``), ``tasks/videomme_v2/utils.py`` (``_compute_all_subscores``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from skillharness.data.groups import GROUP_SIZE, group_position, group_score
from skillharness.data.questions import Question
from skillharness.errors import DataError

__all__ = ["METRIC_RULES", "MetricRule", "Part", "Parts", "RuleInput", "ScoredGroup", "scored_groups"]

_ALL = "all"


@dataclass(frozen=True)
class RuleInput:
    """One (question, sample) as a reference's aggregation sees it."""

    question: Question
    sample: int
    correct: bool
    answered: bool = True  # the reply, after reasoning-tag stripping, is not empty


@dataclass(frozen=True)
class Part:
    """What one unit (a question, or a group) adds to one stratum's ratio."""

    stratum: str
    cluster: str  # the video: the unit an interval resamples
    label: str  # the task type it is reported under
    numerator: float
    denominator: float


@dataclass(frozen=True)
class Parts:
    parts: tuple[Part, ...]
    strata: tuple[str, ...]  # what the overall score averages over (a macro average: every listed type)
    left_out: int = 0  # units the rule could not score (a group missing a question)


@dataclass(frozen=True)
class MetricRule:
    """A named aggregation: its parts, what its denominator counts, and its interval."""

    name: str
    parts: Callable[[Sequence[RuleInput], tuple[str, ...]], Parts]
    unit: str
    interval: Literal["wilson", "video_bootstrap"]
    needs_task_types: bool = False


def _accuracy(items: Sequence[RuleInput], task_types: tuple[str, ...]) -> Parts:
    """Right / all (EgoSchema's ``score``, NExT-QA's ``exact_match``, LongVideoBench's ``lvb_acc``)."""
    parts = tuple(Part(_ALL, i.question.video_id, i.question.task_type, float(i.correct), 1.0) for i in items)
    return Parts(parts, (_ALL,))


def _answered_accuracy(items: Sequence[RuleInput], task_types: tuple[str, ...]) -> Parts:
    """Right / replies that are not empty (MVBench's ``mvbench_accuracy``)."""
    parts = tuple(
        Part(
            _ALL,
            i.question.video_id,
            i.question.task_type,
            float(i.correct and i.answered),
            float(i.answered),
        )
        for i in items
    )
    return Parts(parts, (_ALL,))


def _macro_task_accuracy(items: Sequence[RuleInput], task_types: tuple[str, ...]) -> Parts:
    """The mean of the listed task types' accuracies (MLVU's ``mlvu_percetion_score``)."""
    for i in items:
        if i.question.task_type not in task_types:
            raise DataError(
                f"question {i.question.question_id!r} has task type {i.question.task_type!r}, which the "
                f"macro average does not list ({', '.join(task_types)}); upstream fails on it too",
                question_id=i.question.question_id,
            )
    parts = tuple(
        Part(i.question.task_type, i.question.video_id, i.question.task_type, float(i.correct), 1.0)
        for i in items
    )
    return Parts(parts, task_types)


@dataclass(frozen=True)
class ScoredGroup:
    """One complete group's score in one sample, reported under its last question's task type."""

    video: str
    sample: int
    task_type: str
    score: float  # 0-1


def scored_groups(items: Sequence[RuleInput]) -> tuple[list[ScoredGroup], int]:
    """The score of every complete group, by (video, sample), and how many groups miss a question
    (a pool that cut a video's questions apart, or an answer left out)."""
    groups: dict[tuple[str, int], list[RuleInput]] = defaultdict(list)
    for i in items:
        if i.question.group_type is not None:
            groups[(i.question.video_id, i.sample)].append(i)
    scored = []
    for (video, sample), members in groups.items():
        if len(members) != GROUP_SIZE:
            continue
        members.sort(key=lambda m: group_position(m.question.question_id) or 0)
        first, last = members[0].question, members[-1].question
        score = group_score(str(first.group_type), first.group_structure, [m.correct for m in members])
        scored.append(ScoredGroup(video, sample, last.task_type, score))
    return scored, len(groups) - len(scored)


def _group_score(items: Sequence[RuleInput], task_types: tuple[str, ...]) -> Parts:
    """The mean group score over groups (Video-MME-v2's ``videomme_v2_overall_score``); a group
    is reported under its last question's task type, as upstream does."""
    scored, left_out = scored_groups(items)
    parts = tuple(Part(_ALL, g.video, g.task_type, g.score, 1.0) for g in scored)
    return Parts(parts, (_ALL,), left_out)


METRIC_RULES: dict[str, MetricRule] = {
    rule.name: rule
    for rule in (
        MetricRule("accuracy", _accuracy, "questions", "wilson"),
        MetricRule("answered_accuracy", _answered_accuracy, "answered questions", "video_bootstrap"),
        MetricRule(
            "macro_task_accuracy", _macro_task_accuracy, "questions", "video_bootstrap", needs_task_types=True
        ),
        MetricRule("group_score", _group_score, "groups", "video_bootstrap"),
    )
}
