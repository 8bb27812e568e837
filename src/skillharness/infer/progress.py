"""What a person sees while a long inference runs: done/total, rate, cache hits, errors, breakers."""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from skillharness.agent.records import Prediction, PredictionStatus

__all__ = ["InferProgress", "QuietProgress", "RichProgress"]


class InferProgress:
    """Counts what finished; the display, if any, is a subclass's business."""

    def __init__(self) -> None:
        self.total = 0
        self.done = 0
        self.cache_hits = 0
        self.parse_errors = 0
        self.infra_errors = 0
        self.breakers: Callable[[], str] = lambda: "-"

    def start(self, total: int, already_done: int) -> None:
        self.total, self.done = total, already_done

    def health(self) -> str:
        """The run's health on one line: cache hits, errors, and each endpoint's breaker."""
        return (
            f"cache {self.cache_hits} · parse err {self.parse_errors} · infra err {self.infra_errors} "
            f"· {self.breakers()}"
        )

    def advance(self, prediction: Prediction) -> None:
        self.done += 1
        self.cache_hits += prediction.cache_hit
        self.parse_errors += prediction.status is PredictionStatus.PARSE_ERROR
        self.infra_errors += prediction.status is PredictionStatus.INFRA_ERROR

    def __enter__(self) -> InferProgress:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        return None


class QuietProgress(InferProgress):
    """Counting only (tests, non-interactive callers)."""


class _LiveText(ProgressColumn):
    """A column re-rendered at every refresh, not only when a question finishes: while an
    endpoint's breaker is open nothing finishes, and the line must still say what it waits for."""

    def __init__(self, render: Callable[[], str]) -> None:
        super().__init__()
        self._render = render

    def render(self, task: Task) -> Text:
        return Text(self._render())


class RichProgress(InferProgress):
    """A live progress bar with the run's health on the same line."""

    def __init__(self, console: Console | None = None, label: str = "infer") -> None:
        super().__init__()
        self._progress = Progress(
            TextColumn(f"[bold]{label}[/]"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            _LiveText(self.health),
            console=console,
            transient=False,
        )
        self._task = self._progress.add_task(label, total=None, rate="")

    def start(self, total: int, already_done: int) -> None:
        super().start(total, already_done)
        self._progress.update(self._task, total=total, completed=already_done)

    def advance(self, prediction: Prediction) -> None:
        super().advance(prediction)
        task = self._progress.tasks[0]
        speed = task.speed or 0.0
        self._progress.update(self._task, advance=1, rate=f"{speed:.1f} q/s")

    def __enter__(self) -> RichProgress:
        self._progress.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._progress.stop()
