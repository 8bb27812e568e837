"""The run's own estimate of how optimistic its val gain is: the gain on val questions no gate drew.

The gates chose the edits on the val questions they drew, so the final val gain is selected on its
own noise and on edits that fit those questions. A question that no gate or guard of the run drew
took no part in any decision: on it the final bundle is compared as on a fresh question of its
class. At temperature 0 a gate draws a random order of its class's questions and stops at a
prefix, so which questions are left over does not depend on how they are answered.

The comparison is made class by class and weighted by the classes' val sizes (post-stratified), on
the classes that keep at least one undrawn question; a class every question of which was drawn
(usually a small one, where selection weighs most) cannot be estimated and is left out, and the
result says how much of val it covers. Optimism is the selected gain on those classes minus the
unselected one; both intervals come from one bootstrap over videos (a video's questions move
together). With replacement (temperature above 0) the gates reach almost every question, so the
estimate is usually unavailable, and the result says why.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import numpy as np

from skillharness.data import Question
from skillharness.infer.stats import BOOTSTRAP_RESAMPLES

__all__ = ["UNSELECTED_METHOD", "describe_unselected", "unselected_gain", "unselected_truth"]

UNSELECTED_METHOD = "post-stratified by class, bootstrap by video"


def _class_estimates(
    weights: np.ndarray, diff: np.ndarray, every: np.ndarray, undrawn: np.ndarray
) -> np.ndarray:
    """Per row of ``weights`` (a question weight vector): [selected, unselected] over the classes
    (columns of the indicator matrices) that hold undrawn weight in that row."""
    size = weights @ every  # each class's (resampled) val size
    selected_sum = (weights * diff) @ every
    undrawn_size = weights @ undrawn
    unselected_sum = (weights * diff) @ undrawn
    covered = undrawn_size > 0
    share = np.where(covered, size, 0.0)
    total = share.sum(axis=1)
    class_gain = np.divide(unselected_sum, undrawn_size, out=np.zeros_like(size), where=covered)
    with np.errstate(invalid="ignore", divide="ignore"):
        selected = np.where(covered, selected_sum, 0.0).sum(axis=1) / total
        unselected = (class_gain * share).sum(axis=1) / total
    return np.stack([selected, unselected], axis=1)


def _unavailable(selected: bool, with_replacement: bool) -> str:
    if not selected:
        return "no gate drew a val question"
    reason = "every val question of the classes the gates drew from was drawn"
    if with_replacement:
        reason += " (above temperature 0 the gates draw with replacement and reach almost every question)"
    return reason + "; set train.gate.reserve (e.g. 0.2) to hold val videos out of every gate"


def _video_weights(paired: Sequence[Question], seed: int, resamples: int) -> np.ndarray:
    """Per bootstrap resample (row), each question's weight: how often its video was drawn."""
    videos = {v: k for k, v in enumerate(dict.fromkeys(q.video_id for q in paired))}
    picks = np.random.default_rng(seed).integers(0, len(videos), size=(resamples, len(videos)))
    per_video = np.zeros((resamples, len(videos)))
    np.add.at(per_video, (np.arange(resamples)[:, None], picks), 1.0)
    return per_video[:, [videos[q.video_id] for q in paired]]


def _estimate(
    paired: Sequence[Question],
    drawn: set[str],
    final: Mapping[str, bool],
    baseline: Mapping[str, bool],
    confidence: float,
    seed: int,
    resamples: int,
) -> dict[str, Any]:
    """The available estimate: point values, bootstrap intervals and the covered classes."""
    classes = sorted({q.task_type for q in paired})
    left = [q for q in paired if q.question_id not in drawn]
    column = {c: k for k, c in enumerate(classes)}
    every = np.zeros((len(paired), len(classes)))
    every[np.arange(len(paired)), [column[q.task_type] for q in paired]] = 1.0
    undrawn = every * np.array([q.question_id not in drawn for q in paired], dtype=float)[:, None]
    diff = np.array([float(final[q.question_id]) - float(baseline[q.question_id]) for q in paired])
    point = _class_estimates(np.ones((1, len(paired))), diff, every, undrawn)[0]

    draws = _class_estimates(_video_weights(paired, seed, resamples), diff, every, undrawn)
    tail = (1 - confidence) / 2
    low, high = np.nanquantile(draws[:, 1], [tail, 1 - tail])
    opt_low, opt_high = np.nanquantile(draws[:, 0] - draws[:, 1], [tail, 1 - tail])
    covered = [c for c in classes if undrawn[:, column[c]].any()]
    return {
        "available": True,
        "covered_classes": len(covered),
        "covered_questions": int(every[:, [column[c] for c in covered]].sum()),
        # What the oracle's truth of the estimate needs (eval/truth.py): per class, weight and questions.
        "covered": {
            c: {
                "size": int(every[:, column[c]].sum()),
                "undrawn": sorted(q.question_id for q in left if q.task_type == c),
            }
            for c in covered
        },
        "gain": float(point[1]),
        "low": float(low),
        "high": float(high),
        "selected_gain": float(point[0]),
        "optimism": float(point[0] - point[1]),
        "optimism_low": float(opt_low),
        "optimism_high": float(opt_high),
        "resamples": resamples,
    }


def unselected_gain(
    questions: Sequence[Question],
    final: Mapping[str, bool],
    baseline: Mapping[str, bool],
    drawn: Collection[str],
    *,
    confidence: float = 0.95,
    seed: int = 0,
    resamples: int = BOOTSTRAP_RESAMPLES,
    with_replacement: bool = False,
    reserved: Collection[str] = (),
) -> dict[str, Any]:
    """The final-minus-baseline gain on the val ``questions`` (those both arms answered) that no
    gate drew, beside the selected gain on the same classes and the optimism between them.

    ``available`` is false, with a ``reason``, when no class that a gate drew from keeps an undrawn
    question: then nothing in the run can tell its optimism apart (``with_replacement``: the gates
    drew with replacement, which the reason names as the likely cause). ``reserved``: the
    questions of ``train.gate.reserve``, undrawn by design; the result counts them.
    """
    paired = [q for q in questions if q.question_id in final and q.question_id in baseline]
    classes = sorted({q.task_type for q in paired})
    drawn_set = set(drawn)
    left = [q for q in paired if q.question_id not in drawn_set]
    selected_classes = {q.task_type for q in paired if q.question_id in drawn_set}
    estimable = selected_classes & {q.task_type for q in left}
    summary: dict[str, Any] = {
        "val_questions": len(paired),
        "undrawn": len(left),
        "reserved": len(set(reserved) & {q.question_id for q in left}),
        "classes": len(classes),
        "selected_classes": len(selected_classes),
        "estimable_classes": len(estimable),
        "confidence": confidence,
        "method": UNSELECTED_METHOD,
    }
    if not estimable:
        return summary | {
            "available": False,
            "reason": _unavailable(bool(selected_classes), with_replacement),
        }
    return summary | _estimate(paired, drawn_set, final, baseline, confidence, seed, resamples)


def unselected_truth(result: Mapping[str, Any], gain_on: Callable[[list[str]], float]) -> float | None:
    """What the estimate estimates, from an oracle: ``gain_on(question ids)`` (the true gain on
    those questions) on each covered class's undrawn questions, weighted as the estimate weighs it."""
    covered = result.get("covered") if result.get("available") else None
    if not covered:
        return None
    total = sum(c["size"] for c in covered.values())
    return sum(c["size"] * gain_on(list(c["undrawn"])) for c in covered.values()) / total


def _pts(value: float) -> str:
    return f"{100 * value:+.1f}"


def describe_unselected(result: Mapping[str, Any], truth: float | None = None) -> str:
    """One line for a person: the unselected gain and the optimism, or why there is none."""
    if not result.get("available"):
        return f"the val gain's optimism is not estimable: {result.get('reason', 'no estimate recorded')}"
    reserve = f", the reserve's {result['reserved']} among them" if result.get("reserved") else ""
    line = (
        f"on the {result['undrawn']} val questions no gate drew{reserve} ({result['covered_classes']} of "
        f"{result['classes']} classes, weighing {result['covered_questions']} of {result['val_questions']} "
        f"val questions): gain {_pts(result['gain'])} pts [{_pts(result['low'])}, {_pts(result['high'])}]"
    )
    if truth is not None:
        line += f" (scored truth {_pts(truth)})"
    return (
        f"{line}; optimism of the val gain on those classes {_pts(result['optimism'])} pts "
        f"[{_pts(result['optimism_low'])}, {_pts(result['optimism_high'])}]"
    )
