"""Read a questions file in the Video-MME layout, validating every row.

Formats: parquet (the official release), JSON (a list of rows), JSONL, CSV and TSV. In the
text formats ``options`` is a JSON list (``["A. x", "B. y", ...]``) or a Python-literal list.
All problems are collected and raised together in one :class:`DataError`, each naming the file,
the row and the field, so a user fixes a file in one pass instead of one error per run.
"""

from __future__ import annotations

import ast
import csv
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from skillharness.data.questions import VIDEO_MME, Benchmark, Question
from skillharness.errors import DataError
from skillharness.util.model import validation_problems

__all__ = ["MAX_REPORTED_PROBLEMS", "REQUIRED_COLUMNS", "json_error", "load_questions", "read_rows"]

REQUIRED_COLUMNS = (
    "video_id",
    "duration",
    "domain",
    "sub_category",
    "url",
    "videoID",
    "question_id",
    "task_type",
    "question",
    "options",
    "answer",
)
MAX_REPORTED_PROBLEMS = 50
# Spreadsheet exports often start with a UTF-8 byte-order mark; without "-sig" it would become part
# of the first column name (every row "missing video_id") or make the JSON unreadable.
_ENCODING = "utf-8-sig"
# json.loads recurses once per nesting level: a file nested deeper than the interpreter's stack
# (a runaway "[[[[..." from a broken export) raises RecursionError, not JSONDecodeError.
_JSON_ERRORS = (json.JSONDecodeError, UnicodeDecodeError, RecursionError)


def load_questions(path: Path | str, benchmark: Benchmark = VIDEO_MME) -> list[Question]:
    """Load and validate every row of ``path``; raise one DataError listing all problems."""
    source = Path(path)
    if not source.is_file():
        raise DataError(f"questions file not found: {source}", file=str(source))
    problems: list[str] = []
    questions: list[Question] = []
    first_row_of: dict[str, int] = {}
    for row_no, row in enumerate(read_rows(source), start=1):
        question = _validate_row(source, row_no, row, benchmark, problems)
        if question is None:
            continue
        if question.question_id in first_row_of:
            problems.append(
                f"{source}: row {row_no}: field 'question_id': duplicate {question.question_id!r} "
                f"(first seen at row {first_row_of[question.question_id]})"
            )
            continue
        first_row_of[question.question_id] = row_no
        questions.append(question)
    if not questions and not problems:
        problems.append(f"{source}: the file holds no questions")
    problems += _video_problems(source, questions, first_row_of)
    if problems:
        shown = problems[:MAX_REPORTED_PROBLEMS]
        more = len(problems) - len(shown)
        tail = f"\n  ... and {more} more" if more else ""
        raise DataError(
            f"{len(problems)} problem(s) in {source}:\n  " + "\n  ".join(shown) + tail,
            file=str(source),
            problems=problems,
        )
    return questions


def _video_problems(source: Path, questions: list[Question], row_of: Mapping[str, int]) -> list[str]:
    """Rows of one video that disagree on its file or its duration, and one file named by two videos.

    The split keeps a video's questions in one pool by ``video_id``, and the agent plays ``videoID``:
    a file behind two video ids could sit in two pools, a leak no later check would see."""
    first: dict[str, Question] = {}
    owner: dict[str, Question] = {}
    problems = []
    for q in questions:
        seen = first.setdefault(q.video_id, q)
        for field in ("videoID", "duration"):
            mine, theirs = getattr(q, field), getattr(seen, field)
            if mine != theirs:
                problems.append(
                    f"{source}: row {row_of[q.question_id]}: field {field!r}: {mine!r}, but row "
                    f"{row_of[seen.question_id]} of the same video {q.video_id!r} says {theirs!r}"
                )
        other = owner.setdefault(q.videoID, q)
        if other.video_id != q.video_id:
            problems.append(
                f"{source}: row {row_of[q.question_id]}: field 'videoID': {q.videoID!r} is also the file of "
                f"video {other.video_id!r} (row {row_of[other.question_id]}); one file must be one video, "
                "or the split could put it in two pools"
            )
    return problems


def _validate_row(
    source: Path, row_no: int, row: Mapping[str, Any], benchmark: Benchmark, problems: list[str]
) -> Question | None:
    where = f"{source}: row {row_no}"
    qid = row.get("question_id")
    if qid not in (None, ""):
        where += f" (question_id {qid})"
    missing = [col for col in REQUIRED_COLUMNS if col not in row]
    if missing:
        problems.append(f"{where}: missing column(s) {', '.join(missing)}")
        return None
    fields = {col: row[col] for col in REQUIRED_COLUMNS}
    try:
        fields["options"] = _parse_options(fields["options"])
    except ValueError as exc:
        problems.append(f"{where}: field 'options': {exc}")
        return None
    for col in ("video_id", "question_id", "videoID"):
        fields[col] = _as_text(fields[col])
    before = len(problems)
    question: Question | None = None
    try:
        question = Question.model_validate(fields)
    except ValidationError as exc:
        for problem in validation_problems(exc):
            field = ".".join(str(p) for p in problem.loc) or "row"
            problems.append(f"{where}: field '{field}': {problem.message}")
    # Checked on the raw fields too, so a row with several faults reports all of them at once.
    task_type, duration = fields["task_type"], fields["duration"]
    if isinstance(task_type, str) and task_type and task_type not in benchmark.task_types:
        problems.append(
            f"{where}: field 'task_type': unknown task type {task_type!r} "
            f"(benchmark {benchmark.name!r} knows {len(benchmark.task_types)})"
        )
    if isinstance(duration, str) and duration and duration not in benchmark.durations:
        problems.append(f"{where}: field 'duration': {duration!r} is not one of {list(benchmark.durations)}")
    return question if len(problems) == before else None


def _as_text(value: Any) -> Any:
    # CSV readers and parquet may hand back ints for ids like "001"; keep strings as they are.
    return str(value) if isinstance(value, int) else value


def _parse_options(value: Any) -> tuple[str, ...]:
    if hasattr(value, "tolist"):  # numpy arrays from parquet
        value = value.tolist()
    if isinstance(value, str):
        text = value.strip()
        try:
            value = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            try:
                value = ast.literal_eval(text)
            except (ValueError, SyntaxError, TypeError, RecursionError) as exc:
                raise ValueError(f"not a list of options: {text[:80]!r}") from exc
    if value is None:  # a CSV row shorter than its header leaves its last cells None
        raise ValueError("no value (an empty cell, or a row with fewer cells than the header)")
    if not isinstance(value, list | tuple) or not all(isinstance(o, str) for o in value):
        raise ValueError(f"expected a list of strings, got {type(value).__name__}")
    return tuple(value)


def read_rows(source: Path, suffix: str | None = None) -> Iterator[Mapping[str, Any]]:
    """Yield raw rows of ``source`` by its suffix (or the given one); unreadable files raise DataError."""
    suffix = suffix or source.suffix.lower()
    readers = {
        ".parquet": _parquet_rows,
        ".json": _json_rows,
        ".jsonl": _jsonl_rows,
        ".csv": _csv_rows,
        ".tsv": _tsv_rows,
    }
    reader = readers.get(suffix)
    if reader is None:
        raise DataError(
            f"{source}: unsupported questions format {suffix!r} (use .parquet, .json, .jsonl, .csv or .tsv)",
            file=str(source),
        )
    try:
        yield from reader(source)
    except (UnicodeDecodeError, csv.Error) as exc:  # raised mid-stream by the text readers
        raise DataError(
            f"{source}: unreadable as UTF-8 {suffix[1:].upper()}: {exc}", file=str(source)
        ) from exc


def _json_rows(source: Path) -> Iterable[Mapping[str, Any]]:
    try:
        data = json.loads(source.read_text(encoding=_ENCODING))
    except _JSON_ERRORS as exc:
        raise DataError(f"{source}: not valid JSON: {json_error(exc)}", file=str(source)) from exc
    if not isinstance(data, list):
        raise DataError(
            f"{source}: expected a JSON list of rows, got {type(data).__name__}", file=str(source)
        )
    for index, row in enumerate(data, start=1):
        if not isinstance(row, dict):
            raise DataError(
                f"{source}: row {index}: expected an object, got {type(row).__name__}",
                file=str(source),
                row=index,
            )
    return data


def _jsonl_rows(source: Path) -> Iterator[Mapping[str, Any]]:
    with source.open(encoding=_ENCODING) as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except _JSON_ERRORS as exc:
                raise DataError(
                    f"{source}: line {line_no}: not valid JSON: {json_error(exc)}",
                    file=str(source),
                    row=line_no,
                ) from exc
            if not isinstance(row, dict):
                raise DataError(
                    f"{source}: line {line_no}: expected an object", file=str(source), row=line_no
                )
            yield row


def json_error(exc: Exception) -> str:
    """What was wrong with a JSON text, in words (a RecursionError's own message names Python's stack)."""
    if isinstance(exc, RecursionError):
        return "nested too deeply (lists or objects inside each other thousands of levels down)"
    return str(exc)


def _csv_rows(source: Path) -> Iterator[Mapping[str, Any]]:
    yield from _delimited_rows(source, "\t" if source.suffix.lower() == ".tsv" else ",")


def _tsv_rows(source: Path) -> Iterator[Mapping[str, Any]]:
    # A TSV named .txt (an adapter's declared format) is still tab-separated.
    yield from _delimited_rows(source, "\t")


def _delimited_rows(source: Path, delimiter: str) -> Iterator[Mapping[str, Any]]:
    with source.open(encoding=_ENCODING, newline="") as handle:
        reader = csv.DictReader(handle, delimiter=delimiter)
        _check_header(source, reader.fieldnames or ())
        for row in reader:
            # DictReader files cells past the header under the key None, where no field reads them.
            if None in row:
                columns = len(reader.fieldnames or ())
                raise DataError(
                    f"{source}: line {reader.line_num}: {columns + len(row[None])} cells for {columns} "
                    "columns (an unquoted delimiter inside a cell?)",
                    file=str(source),
                    row=reader.line_num,
                )
            yield row


def _check_header(source: Path, names: Sequence[str]) -> None:
    # DictReader keeps the last of two columns with one name: the other's cells would vanish
    # unseen (a second "answer" column silently replacing the first). Unnamed columns (a
    # spreadsheet's trailing commas) hold nothing any adapter reads.
    twice = sorted({name for name in names if name.strip() and names.count(name) > 1})
    if twice:
        raise DataError(
            f"{source}: line 1 (the header): column(s) {', '.join(map(repr, twice))} named more than "
            "once; rename or remove the copies",
            file=str(source),
            row=1,
        )


def _parquet_rows(source: Path) -> Iterable[Mapping[str, Any]]:
    import pyarrow.parquet as pq  # imported lazily: pyarrow is slow to import

    try:
        table = pq.read_table(source)
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        raise DataError(f"{source}: not a readable parquet file: {exc}", file=str(source)) from exc
    return table.to_pylist()
