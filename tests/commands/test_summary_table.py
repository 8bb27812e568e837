"""The summary table names the confidence level its intervals were computed at."""

from __future__ import annotations

from rich.console import Console

from skillharness.commands.summary_table import print_summary
from skillharness.infer.summary import Scored, summarize


def _printed(confidence: float) -> str:
    rows = [Scored("OCR Problems", "short", "ok", i % 2 == 0) for i in range(10)]
    console = Console(record=True, width=160)
    print_summary(console, summarize(rows, confidence), {"ok": 10}, "run r", confidence)
    return console.export_text()


def test_the_ci_column_names_the_configured_level() -> None:
    assert "90% CI" in _printed(0.9)
    assert "95% CI" not in _printed(0.9)
    assert "99.5% CI" in _printed(0.995)
    assert "95% CI" in _printed(0.95)
