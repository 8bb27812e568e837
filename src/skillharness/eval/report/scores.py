"""The val scores: baseline against final on val, per class, and McNemar on val pairs.

The val gain was selected on val (the gates drew val), so its headline carries the note
``selected on val (optimistic)``; the holdout's headline comes first.
"""

from __future__ import annotations

from typing import Any

from skillharness.data import Pool
from skillharness.eval.report.model import ClassScore, Headline, Score
from skillharness.infer import wilson
from skillharness.store import PredictionStatus, RunReader
from skillharness.train import VAL_GAIN_LABEL, describe_unselected

__all__ = ["score_of", "val_by_class", "val_headline", "val_mcnemar"]


def score_of(label: str, correct: int, n: int, confidence: float = 0.95) -> Score:
    """An accuracy with its Wilson interval (None fields when ``n`` is 0)."""
    if n <= 0:
        return Score(label=label, correct=correct, n=n, accuracy=None, low=None, high=None)
    low, high = wilson(correct, n, confidence)
    return Score(label=label, correct=correct, n=n, accuracy=correct / n, low=low, high=high)


def _run_score(reader: RunReader, run_id: str, label: str, confidence: float) -> Score | None:
    """First-sample accuracy of a stored run (infra errors are not answers: left out)."""
    rows = [
        p
        for p in reader.predictions(run_id)
        if p.sample_idx == 0 and p.status is not PredictionStatus.INFRA_ERROR
    ]
    if not rows:
        return None
    return score_of(label, sum(1 for p in rows if p.correct), len(rows), confidence)


def _first_answers(reader: RunReader, run_id: str) -> dict[str, bool]:
    """Per question, whether its lowest-index answered sample was right (infra errors left out)."""
    found: dict[str, tuple[int, bool]] = {}
    for p in reader.predictions(run_id):
        if p.status is PredictionStatus.INFRA_ERROR:
            continue
        if p.question_id not in found or p.sample_idx < found[p.question_id][0]:
            found[p.question_id] = (p.sample_idx, bool(p.correct))
    return {q: right for q, (_, right) in found.items()}


def val_mcnemar(reader: RunReader, run_id: str, final: dict[str, Any]) -> dict[str, Any] | None:
    """Exact two-sided McNemar of baseline against final on val, paired by question.

    It pairs the runs the val gain rests on (``final["val_runs"]``: both bundles at the reserved
    sample no gate or guard drew), never the epoch-end val scores, whose samples accepted the
    edits. A run that recorded no such runs has nothing to pair. The test by video is the val
    gain's ``p_value``.
    """
    runs = final.get("val_runs")
    if not isinstance(runs, dict) or not {"baseline", "final"} <= runs.keys():
        return None
    stored = {info.run_id for info in reader.children(run_id)}
    if not {runs["baseline"], runs["final"]} <= stored:
        return None
    before, after = _first_answers(reader, runs["baseline"]), _first_answers(reader, runs["final"])
    pairs = [(before[q], after[q]) for q in before.keys() & after.keys()]
    if not pairs:
        return None
    b = sum(1 for x, y in pairs if x and not y)  # right before, wrong after
    c = sum(1 for x, y in pairs if y and not x)
    from scipy.stats import binomtest  # deferred: scipy.stats is most of a command's start-up

    p = binomtest(c, b + c, 0.5).pvalue if b + c else 1.0
    return {"b": b, "c": c, "p": float(p), "pairs": len(pairs)}


def val_headline(reader: RunReader, run_id: str, metrics: dict[str, Any], confidence: float) -> Headline:
    scores = metrics.get("val_scores") or {}
    found: dict[str, Score | None] = {}
    for arm in ("baseline", "final"):
        value = scores.get(arm)
        found[arm] = (
            score_of(arm, int(value["correct"]), int(value["n"]), confidence)
            if isinstance(value, dict) and "correct" in value and "n" in value
            else None
        )
    if found["baseline"] is None:  # an unfinished run: its baseline child may exist already
        baseline_run = (metrics.get("final") or {}).get("baseline_run") or f"{run_id}.baseline"
        found["baseline"] = _run_score(reader, baseline_run, "baseline", confidence)
    gain = metrics.get("val_gain")
    final = metrics.get("final")
    mcnemar = val_mcnemar(reader, run_id, final) if isinstance(final, dict) else None
    if mcnemar is not None and isinstance(gain, dict) and _number(gain.get("p_value")):
        mcnemar["p_by_video"] = float(gain["p_value"])
    unselected = gain.get("unselected") if isinstance(gain, dict) else None
    unselected = unselected if isinstance(unselected, dict) else None
    return Headline(
        pool=Pool.VAL,
        note=VAL_GAIN_LABEL,
        baseline=found["baseline"],
        final=found["final"],
        gain={k: float(v) for k, v in gain.items() if _number(v)} if isinstance(gain, dict) else None,
        mcnemar=mcnemar,
        unselected=unselected,
        unselected_note=describe_unselected(unselected) if unselected else None,
    )


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def val_by_class(metrics: dict[str, Any], confidence: float) -> list[ClassScore]:
    """Per task type baseline and final on val, from ``val_scores`` (``per_class``: [correct, n])."""
    scores = metrics.get("val_scores") or {}
    per_arm = {arm: (scores.get(arm) or {}).get("per_class") or {} for arm in ("baseline", "final")}
    rows = []
    for task_type in sorted(set(per_arm["baseline"]) | set(per_arm["final"])):
        found: dict[str, Score | None] = {}
        for arm, table in per_arm.items():
            cell = table.get(task_type)
            ok = isinstance(cell, list | tuple) and len(cell) == 2
            found[arm] = score_of(arm, int(cell[0]), int(cell[1]), confidence) if ok else None
        rows.append(ClassScore(task_type=task_type, baseline=found["baseline"], final=found["final"]))
    return rows
