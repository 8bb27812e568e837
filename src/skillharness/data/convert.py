"""Read a questions file (or folder) through an :class:`Adapter` into :class:`Question` records.

Every layout ends as the one internal record: options lettered ``A. `` … ``J. ``, the answer a
letter derived here, once, from whatever form the file uses. Like the Video-MME loader, all
problems are collected and raised together in one :class:`DataError` naming the file, the row and
the field, and nothing is returned half-loaded. A file that does not fit the adapter at all is
one problem, not one per row: the fields the adapter expects next to the fields the rows have.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from skillharness.data.adapter import Adapter, Source, builtin_adapters
from skillharness.data.loader import MAX_REPORTED_PROBLEMS, read_rows
from skillharness.data.loader import _parse_options as parse_option_list
from skillharness.data.questions import _OPTION_RE, OPTION_LETTERS, Benchmark, Question
from skillharness.errors import DataError
from skillharness.util.model import StrictModel, validation_problems

__all__ = ["DEFAULT_DURATION", "LoadedBenchmark", "load_benchmark"]

# The duration group of a layout that has none: one stratum for the split, one row in reports.
DEFAULT_DURATION = "all"
_PREFIX_RE = re.compile(r"^\s*\(?([A-Za-z])\s*[.):]\s*(.*)$", re.DOTALL)
_MIN_OPTIONS = 2
_KNOWN_SUFFIXES = (".json", ".jsonl", ".csv", ".tsv", ".parquet")


class LoadedBenchmark(StrictModel):
    """The questions of one file read through one adapter, with the vocabulary they use."""

    adapter: str
    benchmark: Benchmark
    questions: tuple[Question, ...]
    dropped: tuple[str, ...] = ()  # question ids left out for want of an answer (answers.missing: drop)


@dataclass(frozen=True)
class _Row:
    where: str  # "file: row N" for messages
    number: int
    stem: str  # the file's name without suffix (a folder layout's task)
    data: Mapping[str, Any]


@dataclass
class _Problems:
    items: list[str] = field(default_factory=list)

    def add(self, where: str, name: str, message: str) -> None:
        self.items.append(f"{where}: field '{name}': {message}")


def load_benchmark(
    path: Path | str, adapter: Adapter, answers_path: Path | str | None = None
) -> LoadedBenchmark:
    """Load every question of ``path`` through ``adapter``; raise one DataError listing all problems.

    ``answers_path`` overrides the adapter's answers file (resolved against the questions' folder).
    """
    source = Path(path)
    rows = _read_all(source, adapter)
    _check_fit(source, rows, adapter)
    answers = _read_answers(source, adapter, answers_path)
    problems = _Problems()
    questions: list[Question] = []
    dropped: list[str] = []
    first_row_of: dict[str, str] = {}
    for row in rows:
        question = _convert(row, adapter, answers, problems, dropped)
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
    if not questions and not problems.items:
        why = f" with an answer ({len(dropped)} left out without one)" if dropped else ""
        problems.items.append(f"{source}: the file holds no questions{why}")
    _raise_if_any(source, adapter, problems.items)
    return LoadedBenchmark(
        adapter=adapter.name, benchmark=benchmark, questions=tuple(questions), dropped=tuple(dropped)
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


def _read_all(source: Path, adapter: Adapter) -> list[_Row]:
    if adapter.format == "folder":
        if not source.is_dir():
            raise DataError(
                f"{source}: adapter {adapter.name!r} reads a folder of per-task files, not a file",
                file=str(source),
            )
        files = sorted({p for pattern in adapter.files for p in source.glob(pattern) if p.is_file()})
        if not files:
            raise DataError(
                f"{source}: no file matches {list(adapter.files)} (adapter {adapter.name!r})",
                file=str(source),
            )
        return [row for path in files for row in _rows_of(path, path.suffix.lower())]
    if source.is_dir():  # a per-task folder read as a single file: the benchmark is not set
        raise DataError(
            f"{source}: a folder, but adapter {adapter.name!r} reads one {adapter.format} file; a folder "
            "of per-task files needs its own adapter (data.benchmark / --benchmark, e.g. mvbench)",
            file=str(source),
            adapter=adapter.name,
        )
    if not source.is_file():
        raise DataError(f"questions file not found: {source}", file=str(source))
    # A known suffix wins (Video-MME ships parquet, copies come as JSON); the declared format reads
    # a file whose name does not say (a ".txt" export).
    suffix = source.suffix.lower()
    return list(_rows_of(source, suffix if suffix in _KNOWN_SUFFIXES else "." + adapter.format))


def _rows_of(path: Path, suffix: str) -> Iterable[_Row]:
    for number, data in enumerate(read_rows(path, suffix), start=1):
        yield _Row(f"{path}: row {number}", number, path.stem, data)


def _check_fit(source: Path, rows: list[_Row], adapter: Adapter) -> None:
    """One error when no row has the adapter's fields: the wrong adapter, or a file of another layout."""
    expected = adapter.required_fields
    if not rows or any(all(name in row.data for name in expected) for row in rows):
        return
    by_fields: dict[tuple[str, ...], list[int]] = {}
    for row in rows:
        by_fields.setdefault(tuple(row.data), []).append(row.number)
    lines = [
        f"expects fields: {', '.join(expected)}",
        *(_fields_line(numbers, found, expected) for found, numbers in list(by_fields.items())[:5]),
        _other_fits(adapter, rows[0]),
    ]
    raise DataError(
        f"{source} does not fit adapter {adapter.name!r} (no row has all its fields):\n  "
        + "\n  ".join(lines),
        file=str(source),
        adapter=adapter.name,
        expected=list(expected),
        found={", ".join(k): v for k, v in by_fields.items()},
    )


def _fields_line(numbers: list[int], found: tuple[str, ...], expected: tuple[str, ...]) -> str:
    verb = "has" if len(numbers) == 1 else "have"
    missing = ", ".join(name for name in expected if name not in found)
    return f"{_row_span(numbers)} {verb}: {', '.join(found) or '(none)'}; missing: {missing}"


def _other_fits(adapter: Adapter, row: _Row) -> str:
    """Which built-in adapters the first row would fit, so the error says what to try instead."""
    fits = [
        name
        for name, other in sorted(builtin_adapters().items())
        if name != adapter.name and all(f in row.data for f in other.required_fields)
    ]
    if fits:
        return f"the rows fit the built-in adapter(s): {', '.join(fits)} (--benchmark {fits[0]})"
    return "no built-in adapter fits either: describe the layout in an adapter YAML (docs/data.md)"


def _row_span(numbers: list[int]) -> str:
    if len(numbers) == 1:
        return f"row {numbers[0]}"
    shown = ", ".join(str(n) for n in numbers[:5])
    return f"rows {shown}{', …' if len(numbers) > 5 else ''} ({len(numbers)} rows)"


def _read_answers(source: Path, adapter: Adapter, override: Path | str | None) -> dict[str, Any] | None:
    spec = adapter.answers
    if spec is None:
        return None
    base = source if source.is_dir() else source.parent
    path = Path(override) if override is not None else base / spec.file
    if not path.is_file():
        raise DataError(f"answers file not found: {path} (adapter {adapter.name!r})", file=str(path))
    if spec.id_field is None:
        try:
            data = json.loads(path.read_text(encoding="utf-8-sig"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise DataError(f"{path}: not valid JSON: {exc}", file=str(path)) from exc
        if not isinstance(data, dict):
            raise DataError(
                f"{path}: expected a JSON object {{question id: answer}}, got {type(data).__name__}",
                file=str(path),
            )
        return {str(k): v for k, v in data.items()}
    found: dict[str, Any] = {}
    for number, row in enumerate(read_rows(path), start=1):
        if spec.id_field not in row or spec.answer_field not in row:
            raise DataError(
                f"{path}: row {number}: expects fields {spec.id_field}, {spec.answer_field}; "
                f"has {', '.join(row) or '(none)'}",
                file=str(path),
                row=number,
            )
        found[_text(row[spec.id_field])] = row[spec.answer_field]
    return found


def _value(source: Source | None, row: _Row, default: str = "") -> str:
    if source is None:
        return default
    if source.constant is not None:
        return source.constant
    if source.file_stem:
        return row.stem
    if source.template is not None:
        return source.template.format(**{name: _text(row.data.get(name)) for name in source.template_fields})
    return _text(row.data.get(str(source.field)))


def _text(value: Any) -> str:
    # CSV and parquet hand back numbers for ids like 4010069381 or duration groups like 600;
    # an integral float (600.0) is the same group as 600.
    if value is None:
        return ""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return str(int(value))
    return str(value)


def _convert(
    row: _Row, adapter: Adapter, answers: dict[str, Any] | None, problems: _Problems, dropped: list[str]
) -> Question | None:
    missing = [name for name in adapter.required_fields if name not in row.data]
    qid = _value(adapter.question_id, row) if adapter.question_id else f"{row.stem}-{row.number}"
    where = f"{row.where} (question_id {qid})" if qid else row.where
    if missing:
        problems.items.append(
            f"{where}: missing field(s) {', '.join(missing)} (has {', '.join(row.data) or 'none'})"
        )
        return None
    raw_answer = row.data.get(adapter.answer.field) if adapter.answer else None
    if answers is not None:
        if qid not in answers:
            if adapter.answers is not None and adapter.answers.missing == "drop":
                dropped.append(qid)
            else:
                problems.add(where, "answer", f"the answers file has no answer for question id {qid!r}")
            return None
        raw_answer = answers[qid]
    before = len(problems.items)
    texts, options = _options(row, adapter, where, problems)
    answer = _answer(raw_answer, texts, adapter, where, problems) if texts else None
    clip = _clip(row, adapter, where, problems)
    if len(problems.items) > before or answer is None:
        return None
    return _build(row, adapter, qid, where, options, answer, clip, problems)


def _raw_options(row: _Row, adapter: Adapter) -> list[Any]:
    spec = adapter.options
    if spec.form == "columns":
        cells = [row.data.get(name) for name in spec.columns]
        return [c for c in cells if c is not None and _text(c).strip() not in spec.missing]
    value = row.data.get(str(spec.field))
    if spec.form == "lines":
        if not isinstance(value, str):
            raise ValueError(f"expected text with one option per line, got {type(value).__name__}")
        return [line for line in value.splitlines() if line.strip()]
    if isinstance(value, list | tuple) and all(isinstance(v, int | float) for v in value):
        return list(value)  # numeric candidates (counts) are options too
    return list(parse_option_list(value))


def _options(
    row: _Row, adapter: Adapter, where: str, problems: _Problems
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The option texts (no prefix) and the options as stored (``"A. text"``); empty on a problem."""
    try:
        raw = _raw_options(row, adapter)
    except ValueError as exc:
        problems.add(where, "options", str(exc))
        return (), ()
    if not _MIN_OPTIONS <= len(raw) <= len(OPTION_LETTERS):
        wanted = f"{_MIN_OPTIONS} to {len(OPTION_LETTERS)}"
        problems.add(where, "options", f"{len(raw)} option(s); a question needs {wanted}")
        return (), ()
    texts: list[str] = []
    stored: list[str] = []
    for index, option in enumerate(raw):
        letter, text = OPTION_LETTERS[index], _text(option).strip()
        if adapter.options.prefixed:
            match = _PREFIX_RE.match(text)
            if match is None or match.group(1).upper() != letter:
                message = f"must start with its letter {letter!r}, got {text!r}"
                problems.add(where, f"options[{index}]", message)
                return (), ()
            text = match.group(2).strip()
            canonical = _OPTION_RE.match(_text(option))
            # Already in the canonical "A. text" form: kept as written, so Video-MME loads as before.
            if canonical is not None and canonical.group(1) == letter:
                stored.append(_text(option))
                texts.append(text)
                continue
        texts.append(text)
        stored.append(f"{letter}. {text}")
    if adapter.duplicate_options == "error" and len(set(texts)) != len(texts):
        twice = sorted({t for t in texts if texts.count(t) > 1})
        problems.add(where, "options", f"duplicate option(s) {twice}")
        return (), ()
    return tuple(texts), tuple(stored)


def _answer(
    raw: Any, texts: tuple[str, ...], adapter: Adapter, where: str, problems: _Problems
) -> str | None:
    """The answer letter, from the form the file uses; None (and a problem) if it names no option."""
    form, letters = adapter.answer_form, OPTION_LETTERS[: len(texts)]
    if form == "text":
        wanted = _text(raw).strip()
        hits = [i for i, text in enumerate(texts) if text == wanted]
        if len(hits) == 1:
            return letters[hits[0]]
        message = "matches no option" if not hits else f"matches {len(hits)} options (ambiguous)"
        problems.add(where, "answer", f"answer text {wanted!r} {message}")
        return None
    if form == "letter":
        letter = _text(raw).strip().strip("().").strip().upper()
        if letter in letters:
            return letter
        problems.add(where, "answer", f"answer {_text(raw)!r} is not among the option letters {letters}")
        return None
    base = 0 if form == "index0" else 1
    index = _as_index(raw)
    if index is None:
        problems.add(where, "answer", f"answer {raw!r} is not a whole number ({base}-based index)")
        return None
    if not base <= index < len(texts) + base:
        problems.add(
            where, "answer",
            f"answer index {index} is out of range for {len(texts)} options ({base}-based: "
            f"{base}..{len(texts) - 1 + base})",
        )  # fmt: skip
        return None
    return letters[index - base]


def _as_index(raw: Any) -> int | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float) and raw.is_integer():
        return int(raw)
    if isinstance(raw, str) and re.fullmatch(r"\s*-?\d+\s*", raw):
        return int(raw)
    return None


def _clip(row: _Row, adapter: Adapter, where: str, problems: _Problems) -> tuple[float | None, float | None]:
    spec = adapter.clip
    if spec is None:
        return None, None
    start, end = row.data.get(spec.start), row.data.get(spec.end)
    if start in (None, "") and end in (None, ""):
        return None, None  # this row is about the whole video
    try:
        low, high = float(start), float(end)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        got = f"{spec.start}={start!r} {spec.end}={end!r}"
        problems.add(where, "clip", f"clip window needs two numbers, got {got}")
        return None, None
    if low < 0 or high <= low or not (math.isfinite(low) and math.isfinite(high)):
        message = f"clip window [{low}, {high}] s: the start must be >= 0 and the end after it"
        problems.add(where, "clip", message)
        return None, None
    return low, high


def _build(
    row: _Row,
    adapter: Adapter,
    qid: str,
    where: str,
    options: tuple[str, ...],
    answer: str,
    clip: tuple[float | None, float | None],
    problems: _Problems,
) -> Question | None:
    video_id = _value(adapter.video_id, row)
    field_name = adapter.question.field
    raw_task = _value(adapter.task_type, row)
    subtitle = adapter.subtitle
    offset = 0.0
    if subtitle is not None and subtitle.offset is not None:
        try:
            offset = float(row.data.get(subtitle.offset) or 0.0)
        except (TypeError, ValueError):
            message = f"subtitle offset {row.data.get(subtitle.offset)!r} is not a number"
            problems.add(where, subtitle.offset, message)
            return None
    fields = {
        "video_id": video_id,
        "duration": _value(adapter.duration, row, DEFAULT_DURATION),
        "domain": _value(adapter.domain, row),
        "sub_category": _value(adapter.sub_category, row),
        "url": _value(adapter.url, row),
        "videoID": _value(adapter.video_file, row, video_id),
        "question_id": qid,
        "task_type": adapter.task_names.get(raw_task, raw_task),
        # A field's raw value, so a non-text question is a validation error as in the Video-MME loader.
        "question": row.data.get(field_name) if field_name else _value(adapter.question, row),
        "options": options,
        "answer": answer,
        "clip_start": clip[0],
        "clip_end": clip[1],
        "subtitle_path": (_value(subtitle.path, row) or None) if subtitle is not None else None,
        "subtitle_offset": offset,
    }
    try:
        return Question.model_validate(fields)
    except ValidationError as exc:
        for problem in validation_problems(exc):
            problems.add(where, ".".join(str(p) for p in problem.loc) or "row", problem.message)
        return None


def _vocabulary(
    adapter: Adapter, questions: list[Question], problems: _Problems, where_of: dict[str, str]
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
