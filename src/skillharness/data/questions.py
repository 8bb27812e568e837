"""The Question record and the task-type vocabulary.

A question is one row of a questions file, in whatever layout its benchmark ships (an adapter,
``data/adapter.py``, maps each layout onto this one record). The model is benchmark-neutral: which
task types and duration labels are legal is a :class:`Benchmark` given to the loader, so another
benchmark only needs another vocabulary, not another model. A question has 2 to 10 options,
lettered ``A``-``J``; its answer is always a letter, whatever form the file used.
"""

from __future__ import annotations

import math
import re
from enum import StrEnum

from pydantic import Field, field_validator, model_validator

from skillharness.data.groups import GroupType, check_group
from skillharness.util.model import StrictModel

__all__ = ["OPTION_LETTERS", "VIDEO_MME", "Benchmark", "Question", "TaskType", "slugify"]

OPTION_LETTERS = ("A", "B", "C", "D", "E", "F", "G", "H", "I", "J")
_OPTION_RE = re.compile(r"^([A-Z])\.\s?(.*)$", re.DOTALL)


class TaskType(StrEnum):
    """The 12 Video-MME task types (the default vocabulary)."""

    TEMPORAL_PERCEPTION = "Temporal Perception"
    SPATIAL_PERCEPTION = "Spatial Perception"
    ATTRIBUTE_PERCEPTION = "Attribute Perception"
    ACTION_RECOGNITION = "Action Recognition"
    OBJECT_RECOGNITION = "Object Recognition"
    OCR_PROBLEMS = "OCR Problems"
    COUNTING_PROBLEM = "Counting Problem"
    TEMPORAL_REASONING = "Temporal Reasoning"
    SPATIAL_REASONING = "Spatial Reasoning"
    ACTION_REASONING = "Action Reasoning"
    OBJECT_REASONING = "Object Reasoning"
    INFORMATION_SYNOPSIS = "Information Synopsis"


def slugify(name: str) -> str:
    """File-system name of a task type: ``"OCR Problems"`` → ``"ocr_problems"``."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


class Benchmark(StrictModel):
    """The vocabulary a questions file is validated against."""

    name: str = "videomme"
    task_types: tuple[str, ...] = tuple(t.value for t in TaskType)
    durations: tuple[str, ...] = ("short", "medium", "long")


VIDEO_MME = Benchmark()


class Question(StrictModel):
    """One multiple-choice question about one video (the official Video-MME columns, plus a clip).

    The fields after ``answer`` are optional and absent from Video-MME, so its questions are
    unchanged: a clip window (seconds into the video; the question is about that stretch only),
    a subtitle file with the offset of its timestamps relative to the video, and Video-MME-v2's
    group: how the questions of one video are scored together (:mod:`skillharness.data.groups`).
    """

    video_id: str = Field(min_length=1)
    duration: str = Field(min_length=1)
    domain: str = ""
    sub_category: str = ""
    url: str = ""
    videoID: str = Field(min_length=1)  # noqa: N815 - the official column name
    question_id: str = Field(min_length=1)
    task_type: str = Field(min_length=1)
    question: str = Field(min_length=1)
    options: tuple[str, ...] = Field(min_length=2)
    answer: str = Field(min_length=1, max_length=1)
    clip_start: float | None = None
    clip_end: float | None = None
    subtitle_path: str | None = None
    subtitle_offset: float = 0.0
    group_type: GroupType | None = None
    group_structure: str | None = None  # a logic group's, e.g. "[1, [2, 3], 4]"

    @field_validator("video_id", "videoID", "question_id")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        # min_length lets "   " through: a CSV cell of spaces would be an id no pools.json entry
        # or video file name can be told apart from its neighbours by eye.
        if not value.strip():
            raise ValueError(f"{value!r} is blank (only whitespace)")
        return value

    @field_validator("answer", mode="before")
    @classmethod
    def _upper_answer(cls, value: object) -> object:
        # Before the length check, so a CSV cell like " c" is the letter "C", not a 2-char error.
        return value.strip().upper() if isinstance(value, str) else value

    @model_validator(mode="after")
    def _answer_among_options(self) -> Question:
        letters = self.letters
        if len(self.options) > len(OPTION_LETTERS):
            raise ValueError(
                f"at most {len(OPTION_LETTERS)} options (lettered {OPTION_LETTERS[0]}-{OPTION_LETTERS[-1]}), "
                f"got {len(self.options)}"
            )
        for index, option in enumerate(self.options):
            match = _OPTION_RE.match(option)
            if match is None or match.group(1) != OPTION_LETTERS[index]:
                raise ValueError(
                    f"options[{index}] must start with '{OPTION_LETTERS[index]}. ', got {option!r}"
                )
        if self.answer not in letters:
            raise ValueError(f"answer {self.answer!r} is not among the option letters {letters}")
        _check_clip(self.clip_start, self.clip_end)
        check_group(self.group_type, self.group_structure, self.question_id)
        return self

    @property
    def letters(self) -> tuple[str, ...]:
        """The option letters, in order (``("A", "B", "C", "D")`` for Video-MME)."""
        return OPTION_LETTERS[: len(self.options)]

    def option_text(self, letter: str) -> str:
        """The option text without its ``"A. "`` prefix."""
        match = _OPTION_RE.match(self.options[self.letters.index(letter)])
        return match.group(2) if match else ""

    @property
    def task_slug(self) -> str:
        return slugify(self.task_type)


def _check_clip(start: float | None, end: float | None) -> None:
    # A window with one end would be read as "to the end of the video" by one reader and "from
    # the start" by another; both ends or none keeps every reader on the same frames.
    if start is None and end is None:
        return
    if start is None or end is None:
        raise ValueError(f"a clip window needs both ends, got start={start} end={end}")
    if not (math.isfinite(start) and math.isfinite(end)):  # inf/NaN: no frame, cue or cache key
        raise ValueError(f"a clip window's ends must be finite seconds, got start={start} end={end}")
    if start < 0:
        raise ValueError(f"clip start {start} is negative")
    if end <= start:
        raise ValueError(f"clip end {end} is not after its start {start}")
