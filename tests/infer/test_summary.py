"""The accuracy summary: parse errors are wrong answers, infra errors are not answers at all."""

from __future__ import annotations

import pytest
from scipy.stats import binomtest

from skillharness.infer.summary import Scored, summarize, wilson


def rows(task: str, duration: str, ok_right: int, ok_wrong: int, parse: int, infra: int) -> list[Scored]:
    return (
        [Scored(task, duration, "ok", True)] * ok_right
        + [Scored(task, duration, "ok", False)] * ok_wrong
        + [Scored(task, duration, "parse_error", False)] * parse
        + [Scored(task, duration, "infra_error", False)] * infra
    )


def test_p1_4_infra_errors_never_count_as_wrong() -> None:
    summary = summarize(rows("OCR Problems", "short", 6, 2, 0, 5))
    cell = summary["overall"][0]
    assert (cell.n, cell.correct, cell.infra_errors) == (8, 6, 5)
    assert cell.accuracy == pytest.approx(6 / 8), "an outage must not look like wrong answers"


def test_parse_errors_count_as_wrong_and_are_reported() -> None:
    cell = summarize(rows("OCR Problems", "short", 6, 2, 2, 0))["overall"][0]
    assert cell.n == 10
    assert cell.accuracy == pytest.approx(0.6), (
        "unlike the official scorer, unparsed answers stay in the denominator"
    )
    assert cell.parse_rate == pytest.approx(0.2)


def test_groupings_and_wilson_interval() -> None:
    summary = summarize(rows("A", "long", 3, 1, 0, 0) + rows("B", "short", 1, 3, 0, 0))
    assert [c.label for c in summary["task_type"]] == ["A", "B"]
    assert [c.label for c in summary["duration"]] == ["short", "long"]
    low, high = wilson(3, 4)
    expected = binomtest(3, 4).proportion_ci(confidence_level=0.95, method="wilson")
    assert (low, high) == pytest.approx((expected.low, expected.high))
    assert summary["task_type"][0].ci_low == pytest.approx(low)
    assert wilson(0, 0) != wilson(0, 0), "an empty cell has no interval (NaN)"


@pytest.mark.parametrize("confidence", [0.8, 0.9, 0.95, 0.99])
@pytest.mark.parametrize("n", [1, 2, 7, 40, 900])
def test_wilson_closed_form_matches_scipy(n: int, confidence: float) -> None:
    for correct in sorted({0, 1, n // 3, n // 2, n - 1, n}):
        expected = binomtest(correct, n).proportion_ci(confidence_level=confidence, method="wilson")
        got = wilson(correct, n, confidence)
        assert got == pytest.approx((expected.low, expected.high), abs=1e-12)
