"""A diagnosis report as tables: the waterfall per task type, and the judge against a known truth.

The truth comparison needs, per question, whether the instructions really lacked something the
question needs (the simulator knows: ``/sim/oracle`` with ``missing``). It scores the cases the
judge gave a verdict (defect, lapse, uncertain); cases settled by C1/C2 or excluded never met the
judge, so they say nothing about it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from skillharness.train.diagnose.diagnoser import JUDGED, DiagnosisReport
from skillharness.train.state.records import Cause, Diagnosis

__all__ = ["COLUMNS", "DefectConfusion", "defect_confusion", "waterfall_table"]

# (column title, counts key) in the order the waterfall decides
COLUMNS: tuple[tuple[str, str], ...] = (
    ("wrong", "wrong"),
    ("infra", Cause.INFRA.value),
    ("parse", Cause.FORMAT.value),
    ("tool", Cause.TOOL.value),
    ("degraded", Cause.DEGRADED.value),
    ("defect", Cause.DEFECT.value),
    ("lapse", Cause.LAPSE.value),
    ("uncertain", Cause.UNCERTAIN.value),
    ("failed judge", Cause.JUDGE_FAILED.value),
)


def waterfall_table(report: DiagnosisReport) -> dict[str, dict[str, int]]:
    """Task type → counts (by column), plus ``"all"`` for the whole rollout."""
    table: dict[str, dict[str, int]] = {}
    for d in report.diagnoses:
        row = table.setdefault(d.case.question.task_type, {key: 0 for _, key in COLUMNS})
        row["wrong"] += 1
        row[d.cause.value] += 1
    ordered = {task_type: table[task_type] for task_type in sorted(table)}
    ordered["all"] = {key: report.counts.get(key, 0) for _, key in COLUMNS}
    return ordered


@dataclass(frozen=True)
class DefectConfusion:
    """The judge's ``defect`` against the truth, over the cases it gave a verdict."""

    true_positive: int
    false_positive: int
    false_negative: int
    true_negative: int

    @property
    def n(self) -> int:
        return self.true_positive + self.false_positive + self.false_negative + self.true_negative

    @property
    def precision(self) -> float | None:
        said = self.true_positive + self.false_positive
        return self.true_positive / said if said else None

    @property
    def recall(self) -> float | None:
        real = self.true_positive + self.false_negative
        return self.true_positive / real if real else None

    def as_dict(self) -> dict[str, float | int | None]:
        return {
            "n": self.n,
            "true_positive": self.true_positive,
            "false_positive": self.false_positive,
            "false_negative": self.false_negative,
            "true_negative": self.true_negative,
            "precision": self.precision,
            "recall": self.recall,
        }


def defect_confusion(diagnoses: Sequence[Diagnosis], missing: Mapping[str, Sequence[str]]) -> DefectConfusion:
    """Judge verdicts against the truth: a true defect is a question with a missing needed insight.

    ``missing`` maps question id → the needed insights its task type's skill lacks; questions
    absent from it are not scored.
    """
    tp = fp = fn = tn = 0
    for d in diagnoses:
        qid = d.case.question.question_id
        if d.cause not in JUDGED or qid not in missing:
            continue
        said, real = d.cause is Cause.DEFECT, bool(missing[qid])
        tp += said and real
        fp += said and not real
        fn += real and not said
        tn += not said and not real
    return DefectConfusion(tp, fp, fn, tn)
