"""An adapter from the ``holdout`` run metric (written by the held-out evaluation) to the report.

The metric is read defensively, by the keys it has, because the report must render whatever an
evaluation stored:

- the headline reads ``value["test"]`` when it is an object, else ``value`` itself, and takes
  ``baseline`` and ``final`` (or ``trained``) scores from it; a score is an object with
  ``correct`` and ``n`` (the interval is recomputed) or with ``accuracy`` (and optionally
  ``low``/``high`` or ``ci_low``/``ci_high``), or a bare number;
- McNemar is the first key whose name contains ``mcnemar``, the paired difference the first of
  ``paired_difference``, ``difference``, ``diff``, ``gain``; the agreement flag the first key
  containing ``agree``;
- a typed :class:`HoldoutReport` (what ``skillharness eval`` stores) becomes one row per group
  (overall, task type, video duration) with one cell per arm and one for the paired gain, each
  carrying its interval by video, the per-question interval and the design effect; any other
  shape: every table of rows (an object of objects, or a list of objects) anywhere in the metric
  becomes :class:`HoldoutRow` s with its scalar cells flattened (``baseline.accuracy``).

Nothing is dropped: the page also shows the stored value as JSON.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import ValidationError

from skillharness.data import Pool
from skillharness.eval.holdout_report import ArmCell, GroupRow, HoldoutReport
from skillharness.eval.report.model import Headline, HoldoutRow, Score
from skillharness.infer import wilson

__all__ = ["holdout_headline", "holdout_rows", "read_score"]

_SCALAR = (str, int, float, bool, type(None))
_MAX_DEPTH = 5


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def read_score(label: str, value: Any, confidence: float = 0.95) -> Score | None:
    """A score from any of the shapes the module docstring lists; None when it is none of them."""
    if _num(value) is not None:
        return Score(label=label, correct=0, n=0, accuracy=_num(value), low=None, high=None)
    if not isinstance(value, dict):
        return None
    correct, n = _num(value.get("correct")), _num(value.get("n"))
    if correct is not None and n is not None and n > 0:
        low, high = wilson(int(correct), int(n), confidence)
        return Score(label=label, correct=int(correct), n=int(n), accuracy=correct / n, low=low, high=high)
    accuracy = _num(value.get("accuracy"))
    if accuracy is None:
        return None
    ci = (
        value.get("ci")
        if isinstance(value.get("ci"), list) and len(value.get("ci", [])) == 2
        else [None, None]
    )
    return Score(
        label=label,
        correct=int(correct or 0),
        n=int(n or 0),
        accuracy=accuracy,
        low=_num(value.get("low", value.get("ci_low", ci[0]))),
        high=_num(value.get("high", value.get("ci_high", ci[1]))),
    )


def _first(obj: dict[str, Any], names: tuple[str, ...] = (), contains: str = "") -> Any:
    for name in names:
        if name in obj:
            return obj[name]
    if contains:
        for key, value in obj.items():
            if contains in key.lower():
                return value
    return None


def _as_dict(value: Any, key: str) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if isinstance(v, _SCALAR)}
    return {key: value} if _num(value) is not None else None


def _arm(label: str, cell: ArmCell) -> Score | None:
    if cell.accuracy is None:
        return None
    return Score(
        label=label,
        correct=cell.correct,
        n=cell.n_samples,
        accuracy=cell.accuracy,
        low=cell.low,
        high=cell.high,
    )


def _typed_headline(report: HoldoutReport) -> Headline:
    """The headline of a holdout written by :mod:`skillharness.eval.holdout` (the usual case)."""
    row = report.overall
    paired = row.paired
    shown = {
        "gain": paired.gain,
        "low": paired.low,  # by video
        "high": paired.high,
        "per_question_low": paired.per_question_low,
        "per_question_high": paired.per_question_high,
        "design_effect": paired.design_effect,
    }
    gain = {k: v for k, v in shown.items() if v is not None}
    agreement = None
    if report.val is not None and report.val.holdout_gain is not None:
        agreement = "overfitting to val" if report.val.overfit else "holdout gain inside the val interval"
    return Headline(
        pool=Pool.TEST,
        baseline=_arm("baseline", row.baseline),
        final=_arm("final", row.final),
        gain=gain or None,
        mcnemar={
            "b": paired.wins,
            "c": paired.losses,
            "p": paired.p_per_question if paired.p_per_question is not None else paired.p_value,
            "p_by_video": paired.p_value,
        },
        agreement=agreement,
    )


def holdout_headline(value: Any, confidence: float = 0.95) -> Headline | None:
    """Baseline against final on the test pool, from a ``holdout`` metric; None when it has neither."""
    if not isinstance(value, dict):
        return None
    try:
        return _typed_headline(HoldoutReport.model_validate(value))
    except (ValidationError, IndexError):
        pass  # another shape (an older or hand-written metric): read it by its keys below
    pool = value["test"] if isinstance(value.get("test"), dict) else value
    baseline = read_score("baseline", pool.get("baseline"), confidence)
    final = read_score("final", _first(pool, ("final", "trained")), confidence)
    mcnemar = _first(pool, contains="mcnemar") or _first(value, contains="mcnemar")
    gain = _first(pool, ("paired_difference", "difference", "diff", "gain"))
    agreement = _first(pool, contains="agree")
    agreement = agreement if agreement is not None else _first(value, contains="agree")
    if baseline is None and final is None and mcnemar is None:
        return None
    gain_numbers = {k: v for k, v in (_as_dict(gain, "gain") or {}).items() if _num(v) is not None}
    for alias in ("diff", "difference", "delta", "value"):  # the page shows the "gain" key
        if "gain" not in gain_numbers and alias in gain_numbers:
            gain_numbers["gain"] = gain_numbers[alias]
    return Headline(
        pool=Pool.TEST,
        baseline=baseline,
        final=final,
        gain={k: float(v) for k, v in gain_numbers.items()} or None,
        mcnemar=_as_dict(mcnemar, "p"),
        agreement=None if agreement is None else str(agreement),
    )


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, _SCALAR):
        return {prefix or "value": value}
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if isinstance(v, (*_SCALAR, dict)):
                out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {}


def _is_row(value: dict[str, Any]) -> bool:
    """A row has a scalar field, or only objects of scalars (``{"baseline": {"correct": 3, ...}}``)."""
    if any(isinstance(v, _SCALAR) for v in value.values()):
        return True
    return bool(value) and all(
        isinstance(v, dict) and all(isinstance(x, _SCALAR) for x in v.values()) for v in value.values()
    )


def _with_intervals(cells: dict[str, Any], confidence: float) -> dict[str, Any]:
    """Cells plus ``<arm>.accuracy`` and ``<arm>.interval`` wherever ``<arm>.correct`` and ``.n`` exist."""
    out = dict(cells)
    for key in cells:
        if not key.endswith("correct"):
            continue
        prefix = key[: -len("correct")]
        score = read_score(
            prefix.rstrip("."), {"correct": cells[key], "n": cells.get(f"{prefix}n")}, confidence
        )
        if score is not None and score.low is not None and score.high is not None:
            out.setdefault(f"{prefix}accuracy", score.accuracy)
            out.setdefault(f"{prefix}interval", f"[{100 * score.low:.1f}%, {100 * score.high:.1f}%]")
    return out


_GROUP_TITLES = {"overall": "test pool", "task_type": "by task type", "duration": "by video duration"}


def _interval(value: float | None, cell: ArmCell | Any) -> dict[str, float | None]:
    """One arm's (or the gain's) value with its interval by video, per question, and design effect."""
    return {
        "value": value,
        "low": cell.low,
        "high": cell.high,
        "per_question_low": cell.per_question_low,
        "per_question_high": cell.per_question_high,
        "design_effect": cell.design_effect,
    }


def _typed_row(row: GroupRow) -> HoldoutRow:
    paired = row.paired
    cells: dict[str, Any] = {
        "questions (videos)": f"{paired.n_pairs} ({paired.n_videos})"
        if paired.n_videos is not None
        else paired.n_pairs,
        "baseline": _interval(row.baseline.accuracy, row.baseline),
        "final": _interval(row.final.accuracy, row.final),
        "gain": _interval(paired.gain, paired),
        "wins/losses": f"{paired.wins}/{paired.losses}",
        "p by video": paired.p_value,
        "p per question": paired.p_per_question,
    }
    if row.grouping != "overall":
        cells["p Holm"] = paired.p_holm
    if row.truth is not None:
        cells["sim truth gain"] = row.truth.gain
    return HoldoutRow(group=_GROUP_TITLES[row.grouping], label=row.label, cells=cells)


def _typed_rows(report: HoldoutReport) -> list[HoldoutRow]:
    rows = [_typed_row(row) for row in report.rows]
    if report.val is not None:
        cells = _flatten(report.val.model_dump(mode="json"))
        rows.append(HoldoutRow(group="val against holdout", label="val", cells=cells))
    return rows


def holdout_rows(
    value: Any, group: str = "holdout", depth: int = 0, confidence: float = 0.95
) -> list[HoldoutRow]:
    """The metric's tables as rows (group, label, cells): typed when it is a :class:`HoldoutReport`.

    Any other shape: every object with scalar fields, with its cells flattened.
    """
    if depth == 0 and isinstance(value, dict):
        try:
            return _typed_rows(HoldoutReport.model_validate(value))
        except ValidationError:
            pass  # another shape: read it by its keys below
    rows: list[HoldoutRow] = []
    if depth > _MAX_DEPTH:
        return rows
    items: list[tuple[str, Any]]
    if isinstance(value, list):
        items = [
            (str(v.get("label", v.get("task_type", v.get("name", i)))) if isinstance(v, dict) else str(i), v)
            for i, v in enumerate(value)
        ]
    elif isinstance(value, dict):
        items = [(str(k), v) for k, v in value.items()]
    else:
        return rows
    for label, child in items:
        if isinstance(child, dict) and _is_row(child):
            cells = _with_intervals(_flatten(child), confidence)
            rows.append(HoldoutRow(group=group, label=label, cells=cells))
        elif isinstance(child, dict | list):
            rows.extend(holdout_rows(child, f"{group}.{label}" if depth else label, depth + 1, confidence))
    return rows
