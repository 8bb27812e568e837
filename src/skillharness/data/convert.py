"""Read a questions file (or folder) through an :class:`Adapter` into :class:`Question` records.

Every layout ends as the one internal record: options lettered ``A. `` … ``J. ``, the answer a
letter derived here, once, from whatever form the file uses. Like the Video-MME loader, all
problems are collected and raised together in one :class:`DataError` naming the file, the row and
the field, and nothing is returned half-loaded. A file that does not fit the adapter at all is
one problem, not one per row: the fields the adapter expects next to the fields the rows have.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from skillharness.data.adapter import Adapter
from skillharness.data.convert_read import check_fit, read_all_rows, read_answers
from skillharness.data.convert_rows import DEFAULT_DURATION, Problems, convert_row
from skillharness.data.groups import group_problems
from skillharness.data.loader import MAX_REPORTED_PROBLEMS
from skillharness.data.questions import Benchmark, Question
from skillharness.errors import DataError
from skillharness.util.model import StrictModel

__all__ = ["DEFAULT_DURATION", "LoadedBenchmark", "load_benchmark"]


class LoadedBenchmark(StrictModel):
    """The questions of one file read through one adapter, with the vocabulary they use."""

    adapter: str
    benchmark: Benchmark
    questions: tuple[Question, ...]
    dropped: tuple[str, ...] = ()  # question ids left out for want of an answer (answers.missing: drop)
    # The adapter's per-row fields (clip, subtitle) that no row has, by the key naming them: legal
    # (every question about its whole video), but most often a misspelt field name.
    unread_fields: dict[str, str] = Field(default_factory=dict)


def load_benchmark(
    path: Path | str, adapter: Adapter, answers_path: Path | str | None = None
) -> LoadedBenchmark:
    """Load every question of ``path`` through ``adapter``; raise one DataError listing all problems.

    ``answers_path`` overrides the adapter's answers file (resolved against the questions' folder).
    """
    source = Path(path)
    rows = read_all_rows(source, adapter)
    check_fit(source, rows, adapter)
    answers = read_answers(source, adapter, answers_path)
    problems = Problems()
    questions: list[Question] = []
    dropped: list[str] = []
    first_row_of: dict[str, str] = {}
    for row in rows:
        question = convert_row(row, adapter, answers, problems, dropped)
        if question is None:
            continue
        if question.question_id in first_row_of:
            problems.add(
                row.where, "question_id",
                f"duplicate {question.question_id!r} (first seen at {first_row_of[question.question_id]})",
            )  # fmt: skip
            continue
        first_row_of[question.question_id] = row.where
        questions.append(question)
    benchmark = _vocabulary(adapter, questions, problems, first_row_of)
    problems.items += [f"{source}: {problem}" for problem in group_problems(questions)]
    if not questions and not problems.items:
        why = f" with an answer ({len(dropped)} left out without one)" if dropped else ""
        problems.items.append(f"{source}: the file holds no questions{why}")
    _raise_if_any(source, adapter, problems.items)
    return LoadedBenchmark(
        adapter=adapter.name,
        benchmark=benchmark,
        questions=tuple(questions),
        dropped=tuple(dropped),
        unread_fields={
            name: key for name, key in adapter.per_row_fields.items() if not any(name in r.data for r in rows)
        },
    )


def _raise_if_any(source: Path, adapter: Adapter, problems: list[str]) -> None:
    if not problems:
        return
    shown = problems[:MAX_REPORTED_PROBLEMS]
    more = len(problems) - len(shown)
    tail = f"\n  ... and {more} more" if more else ""
    raise DataError(
        f"{len(problems)} problem(s) in {source} (adapter {adapter.name!r}):\n  " + "\n  ".join(shown) + tail,
        file=str(source),
        adapter=adapter.name,
        problems=problems,
    )


def _vocabulary(
    adapter: Adapter, questions: list[Question], problems: Problems, where_of: dict[str, str]
) -> Benchmark:
    """The adapter's fixed vocabulary (values outside it are row problems), or the file's own."""
    found_types = sorted({q.task_type for q in questions})
    found_durations = sorted({q.duration for q in questions})
    task_types = adapter.task_types or tuple(found_types)
    durations = adapter.durations or tuple(found_durations)
    for q in questions:
        where = f"{where_of[q.question_id]} (question_id {q.question_id})"
        if q.task_type not in task_types:
            problems.add(
                where, "task_type",
                f"unknown task type {q.task_type!r} (benchmark {adapter.name!r} knows {len(task_types)})",
            )  # fmt: skip
        if q.duration not in durations:
            problems.add(where, "duration", f"{q.duration!r} is not one of {list(durations)}")
    if not task_types or not durations:
        return Benchmark(name=adapter.name)
    return Benchmark(name=adapter.name, task_types=tuple(task_types), durations=tuple(durations))
