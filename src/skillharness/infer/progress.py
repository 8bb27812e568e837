"""What a person sees while a long inference runs: done/total, rate, cache hits, errors, breakers.

Two lines, each within the terminal's width: the bar with its counts and times, then the run's
health cut at the edge. On one line at 80 columns the health wrapped into five or more lines.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any

from rich.console import Console, RenderableType
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from skillharness.agent.records import Prediction, PredictionStatus

__all__ = ["InferProgress", "QuietProgress", "RichProgress", "short_name"]

# The widest label a progress line shows: a run id can be any length, the line cannot.
_LABEL_CHARS = 24


def short_name(name: str, width: int) -> str:
    """``name`` in at most ``width`` characters, cut at a word boundary (a space, ``-`` or ``.``)
    and marked with an ellipsis (``Attribute Perception`` → ``Attribute…``): a name cut mid-word
    reads as another word."""
    if len(name) <= width:
        return name
    head = name[: width - 1]
    if name[width - 1] not in " -.":  # the cut falls inside a word: drop that word
        ends = [head.rfind(mark) for mark in " -."]
        head = head[: max(ends)] if max(ends) > 0 else head
    return head.rstrip(" -.") + "…"


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


class _WithHealth(Progress):
    """The progress row, then the health on a line of its own, cut at the edge (not wrapped)."""

    def __init__(self, *columns: ProgressColumn, health: Callable[[], str], **options: Any) -> None:
        self._health = health  # before the base class, whose Live renders once at construction
        super().__init__(*columns, **options)

    def get_renderables(self) -> Iterable[RenderableType]:
        yield self.make_tasks_table(self.tasks)
        yield Text(f"  {self._health()}", no_wrap=True, overflow="ellipsis")


class RichProgress(InferProgress):
    """A live progress bar, the run's health on the line below."""

    def __init__(self, console: Console | None = None, label: str = "infer") -> None:
        super().__init__()
        self._progress = _WithHealth(
            TextColumn(f"[bold]{short_name(label, _LABEL_CHARS)}[/]", markup=True),
            BarColumn(bar_width=None),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            health=self.health,
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
