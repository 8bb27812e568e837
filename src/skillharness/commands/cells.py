"""The cells of the holdout and comparison tables: percentages, points, intervals, p-values."""

from __future__ import annotations

__all__ = ["ci", "deff", "p_value", "pct", "signed", "with_ci"]


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def signed(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:+.1f}"


def ci(low: float | None, high: float | None, points: bool = False) -> str:
    """An interval of accuracies, or with ``points`` of signed differences in points."""
    show = signed if points else pct
    return "-" if low is None or high is None else f"[{show(low)}, {show(high)}]"


def p_value(value: float | None) -> str:
    return "-" if value is None else (f"{value:.3g}" if value >= 0.001 else f"{value:.1e}")


def with_ci(value: str, low: float | None, high: float | None, points: bool = False) -> str:
    return f"{value} {ci(low, high, points)}"


def deff(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"
