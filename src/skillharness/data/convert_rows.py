"""One row of a questions file, read through an :class:`Adapter`, as one :class:`Question`.

The options end lettered ``A. `` … ``J. `` and the answer a letter, derived here once from
whatever form the file uses. Problems are collected (:class:`Problems`), never raised one by one:
:func:`~skillharness.data.convert.load_benchmark` raises them together.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from skillharness.data.adapter import Adapter, Source
from skillharness.data.loader import _parse_options as parse_option_list
from skillharness.data.questions import _OPTION_RE, OPTION_LETTERS, Question
from skillharness.util.model import validation_problems

__all__ = ["DEFAULT_DURATION", "Problems", "Row", "cell_text", "convert_row", "is_absent"]

# The duration group of a layout that has none: one stratum for the split, one row in reports.
DEFAULT_DURATION = "all"
_PREFIX_RE = re.compile(r"^\s*\(?([A-Za-z])\s*[.):]\s*(.*)$", re.DOTALL)
_MIN_OPTIONS = 2


@dataclass(frozen=True)
class Row:
    where: str  # "file: row N" for messages
    number: int
    stem: str  # the file's name without suffix (a folder layout's task)
    data: Mapping[str, Any]


@dataclass
class Problems:
    items: list[str] = field(default_factory=list)

    def add(self, where: str, name: str, message: str) -> None:
        self.items.append(f"{where}: field '{name}': {message}")


def _value(source: Source | None, row: Row, default: str = "") -> str:
    if source is None:
        return default
    if source.constant is not None:
        return source.constant
    if source.file_stem:
        return row.stem
    if source.template is not None:
        return source.template.format(
            **{name: cell_text(row.data.get(name)) for name in source.template_fields}
        )
    return cell_text(row.data.get(str(source.field)))


def is_absent(value: Any) -> bool:
    """No value: null, or NaN, which is how pandas writes an empty cell (``json.dump`` of a
    DataFrame's records prints ``NaN``): a row without a clip window is not a window [nan, nan]."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def cell_text(value: Any) -> str:
    # CSV and parquet hand back numbers for ids like 4010069381 or duration groups like 600;
    # an integral float (600.0) is the same group as 600.
    if is_absent(value):
        return ""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return str(int(value))
    return str(value)


def convert_row(
    row: Row, adapter: Adapter, answers: dict[str, Any] | None, problems: Problems, dropped: list[str]
) -> Question | None:
    missing = [name for name in adapter.required_fields if name not in row.data]
    qid = _value(adapter.question_id, row) if adapter.question_id else f"{row.stem}-{row.number}"
    where = f"{row.where} (question_id {qid})" if qid else row.where
    if missing:
        problems.items.append(
            f"{where}: missing field(s) {', '.join(missing)} (has {', '.join(row.data) or 'none'})"
        )
        return None
    if nested := _nested_ids(row, adapter):
        for name in nested:  # str(["a"]) would be an id "['a']" that names nothing the user wrote
            problems.add(where, name, f"a {type(row.data[name]).__name__}, where one value is expected")
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


def _nested_ids(row: Row, adapter: Adapter) -> list[str]:
    """The row's fields that name a question (its ids, task type, question) holding a list or an object."""
    given = (adapter.video_id, adapter.video_file, adapter.question_id, adapter.question, adapter.task_type)
    sources = [s for s in given if s is not None]
    fields = {s.field for s in sources if s.field is not None}
    fields |= {name for s in sources for name in s.template_fields}
    return sorted(name for name in fields if isinstance(row.data.get(name), list | dict))


def _raw_options(row: Row, adapter: Adapter) -> list[Any]:
    spec = adapter.options
    if spec.form == "columns":
        cells = [row.data.get(name) for name in spec.columns]
        present = [not is_absent(c) and cell_text(c).strip() not in spec.missing for c in cells]
        kept = len(present) - present[::-1].index(True) if any(present) else 0
        gaps = [name for name, here in zip(spec.columns[:kept], present[:kept], strict=True) if not here]
        if gaps:  # a row with fewer options leaves its last columns empty, never one in between
            raise ValueError(
                f"option column(s) {', '.join(gaps)} empty between filled ones: the options after it "
                "would move up a letter, and an answer given by index or letter would name another"
            )
        return cells[:kept]
    value = row.data.get(str(spec.field))
    if spec.form == "lines":
        if not isinstance(value, str):
            raise ValueError(f"expected text with one option per line, got {type(value).__name__}")
        return [line for line in value.splitlines() if line.strip()]
    if isinstance(value, list | tuple) and all(isinstance(v, int | float) for v in value):
        return list(value)  # numeric candidates (counts) are options too
    return list(parse_option_list(value))


def _options(
    row: Row, adapter: Adapter, where: str, problems: Problems
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
        letter, text = OPTION_LETTERS[index], cell_text(option).strip()
        if adapter.options.prefixed:
            match = _PREFIX_RE.match(text)
            if match is None or match.group(1).upper() != letter:
                message = f"must start with its letter {letter!r}, got {text!r}"
                problems.add(where, f"options[{index}]", message)
                return (), ()
            text = match.group(2).strip()
            canonical = _OPTION_RE.match(cell_text(option))
            # Already in the canonical "A. text" form: kept as written, so Video-MME loads as before.
            if canonical is not None and canonical.group(1) == letter:
                stored.append(cell_text(option))
                texts.append(text)
                continue
        texts.append(text)
        stored.append(f"{letter}. {text}")
    if adapter.duplicate_options == "error" and len(set(texts)) != len(texts):
        twice = sorted({t for t in texts if texts.count(t) > 1})
        problems.add(where, "options", f"duplicate option(s) {twice}")
        return (), ()
    return tuple(texts), tuple(stored)


def _answer(raw: Any, texts: tuple[str, ...], adapter: Adapter, where: str, problems: Problems) -> str | None:
    """The answer letter, from the form the file uses; None (and a problem) if it names no option."""
    form, letters = adapter.answer_form, OPTION_LETTERS[: len(texts)]
    if is_absent(raw) or (isinstance(raw, str) and not raw.strip()):
        kind = "null" if raw is None else "NaN" if isinstance(raw, float) else "empty"
        problems.add(where, "answer", f"no answer: the answer is {kind}")
        return None
    if form == "text":
        wanted = cell_text(raw).strip()
        hits = [i for i, text in enumerate(texts) if text == wanted]
        if len(hits) == 1:
            return letters[hits[0]]
        message = "matches no option" if not hits else f"matches {len(hits)} options (ambiguous)"
        problems.add(where, "answer", f"answer text {wanted!r} {message}")
        return None
    if form == "letter":
        letter = cell_text(raw).strip().strip("().").strip().upper()
        if letter in letters:
            return letter
        problems.add(where, "answer", f"answer {cell_text(raw)!r} is not among the option letters {letters}")
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


def _clip(row: Row, adapter: Adapter, where: str, problems: Problems) -> tuple[float | None, float | None]:
    spec = adapter.clip
    if spec is None:
        return None, None
    start, end = row.data.get(spec.start), row.data.get(spec.end)
    if all(is_absent(v) or (isinstance(v, str) and not v.strip()) for v in (start, end)):
        return None, None  # this row is about the whole video
    try:
        low, high = float(start), float(end)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        got = f"{spec.start}={start!r} {spec.end}={end!r}"
        problems.add(where, "clip", f"clip window needs two numbers, got {got}")
        return None, None
    if low < 0 or high <= low or not (math.isfinite(low) and math.isfinite(high)):
        message = (
            f"clip window [{low}, {high}] s: the start must be >= 0 and the end after it, "
            "both ends finite seconds"
        )
        problems.add(where, "clip", message)
        return None, None
    return low, high


def _group(row: Row, adapter: Adapter) -> dict[str, str | None]:
    # An empty cell is no value: a relevance group may leave its structure empty.
    if adapter.group is None:
        return {}
    kind = cell_text(row.data.get(adapter.group.type)).strip()
    structure = cell_text(row.data.get(adapter.group.structure)).strip()
    return {"group_type": kind or None, "group_structure": structure or None}


def _build(
    row: Row,
    adapter: Adapter,
    qid: str,
    where: str,
    options: tuple[str, ...],
    answer: str,
    clip: tuple[float | None, float | None],
    problems: Problems,
) -> Question | None:
    video_id = _value(adapter.video_id, row)
    field_name = adapter.question.field
    raw_task = _value(adapter.task_type, row)
    subtitle = adapter.subtitle
    offset = 0.0
    if subtitle is not None and subtitle.offset is not None:
        raw_offset = row.data.get(subtitle.offset)
        try:
            offset = 0.0 if is_absent(raw_offset) else float(raw_offset or 0.0)
            if not math.isfinite(offset):  # an offset of inf would shift every cue off the video
                raise ValueError(raw_offset)
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
        **_group(row, adapter),
    }
    try:
        return Question.model_validate(fields)
    except ValidationError as exc:
        for problem in validation_problems(exc):
            problems.add(where, ".".join(str(p) for p in problem.loc) or "row", problem.message)
        return None
