"""The progress line keeps saying what the run waits for, even while nothing finishes."""

from __future__ import annotations

import io

from rich.console import Console

from skillharness.infer.progress import RichProgress


def test_the_progress_line_shows_the_breaker_wait_without_any_question_finishing() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=200)
    state = ["gpu-a ok"]
    with RichProgress(console, label="run-1") as progress:
        progress.breakers = lambda: state[0]
        progress.start(10, 0)
        state[0] = "gpu-a open, probe in 7s, 3 call(s) waiting, first gives up in 880s"
        progress._progress.refresh()
    assert "first gives up in 880s" in out.getvalue()
