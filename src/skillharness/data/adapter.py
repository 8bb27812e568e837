"""A benchmark's file layout, described as data: which field holds what, and in which form.

One :class:`Adapter` per layout, loaded from a few lines of YAML. The built-in ones ship in
``data/adapters/<name>.yaml``; a user's own layout is another YAML file with the same keys, no
Python. :func:`~skillharness.data.convert.load_benchmark` reads a questions file through an
adapter into :class:`~skillharness.data.questions.Question` records.
"""

from __future__ import annotations

import re
import string
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, ValidationError, field_validator, model_validator

from skillharness.data.reference_prompt import ReferenceMetric, ReferencePrompt, ReferenceSubtitles
from skillharness.errors import DataError
from skillharness.util import strict_yaml
from skillharness.util.model import StrictModel, describe_validation

__all__ = [
    "ADAPTERS_DIR",
    "Adapter",
    "AnswerSpec",
    "AnswersFile",
    "ClipSpec",
    "GroupSpec",
    "OptionsSpec",
    "ReferenceMetric",
    "ReferencePrompt",
    "ReferenceSubtitles",
    "Source",
    "SubtitleSpec",
    "builtin_adapters",
    "load_adapter",
]

ADAPTERS_DIR = Path(__file__).resolve().parent / "adapters"
_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
AnswerForm = Literal["letter", "index0", "index1", "text"]


class Source(StrictModel):
    """Where one value comes from: exactly one of a row field, a constant, a template over
    row fields (``"{video}_{qid}"``) or the name of the file the row is in (folder layouts)."""

    field: str | None = None
    constant: str | None = None
    template: str | None = None
    file_stem: bool = False

    @model_validator(mode="after")
    def _exactly_one(self) -> Source:
        given = (self.field, self.constant, self.template)
        if sum(v is not None for v in given) + self.file_stem != 1:
            raise ValueError("give exactly one of field, constant, template or file_stem: true")
        if self.template is not None:
            _check_template(self.template)
        return self

    @property
    def template_fields(self) -> tuple[str, ...]:
        if self.template is None:
            return ()
        return tuple(name for _, name, _, _ in string.Formatter().parse(self.template) if name)

    @property
    def fields(self) -> tuple[str, ...]:
        """The row fields this value needs."""
        return (self.field,) if self.field is not None else self.template_fields


def _check_template(template: str) -> None:
    # Only plain {field} slots: every value is text by then, so a format spec ({n:03d}) would fail
    # on every row at load instead of once, here.
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise ValueError(f"template {template!r}: {exc}") from exc
    names = [name for _, name, _, _ in parts if name is not None]
    if not names:
        raise ValueError(f"template {template!r} names no field (write {{field}})")
    if any(not name or spec or conv for _, name, spec, conv in parts if name is not None):
        raise ValueError(f"template {template!r}: use plain {{field}} slots, no format spec or conversion")


def _source(value: object) -> object:
    # Shorthand: a bare string is a field name, the common case in every layout.
    return {"field": value} if isinstance(value, str) else value


class OptionsSpec(StrictModel):
    """Where the options are and in which form.

    ``list``: one field holding a list (or a JSON / Python-literal list in a text cell);
    ``lines``: one text field, one option per line; ``columns``: one column per option, in order
    (a cell equal to one of ``missing`` means "no such option", so rows may have fewer).
    ``prefixed``: each option starts with its letter (``"A. "``, ``"(A) "``, ``"A) "``, ``"A:"``),
    which must match its position and is replaced by the canonical ``"A. "``.
    """

    form: Literal["list", "lines", "columns"] = "list"
    field: str | None = None
    columns: tuple[str, ...] = ()
    prefixed: bool = False
    missing: tuple[str, ...] = ("",)

    @model_validator(mode="after")
    def _where(self) -> OptionsSpec:
        if self.form == "columns" and len(self.columns) < 2:
            raise ValueError("form 'columns' needs at least two names in 'columns'")
        if self.form != "columns" and not self.field:
            raise ValueError(f"form {self.form!r} needs 'field'")
        return self

    @property
    def fields(self) -> tuple[str, ...]:
        return self.columns if self.form == "columns" else (str(self.field),)


class AnswerSpec(StrictModel):
    """Where the answer is and in which form: a letter, a 0- or 1-based index, or the option's text."""

    field: str
    form: AnswerForm = "letter"


class AnswersFile(StrictModel):
    """Answers kept apart from the questions, joined by question id.

    ``file`` is relative to the questions file's folder. Either a JSON object ``{id: answer}``
    (``id_field`` left out) or rows (any format the loader reads) with ``id_field`` and
    ``answer_field``. ``missing: drop`` leaves out questions without an answer (EgoSchema publishes
    answers for a subset only); the default ``error`` names them.
    """

    file: str = Field(min_length=1)
    id_field: str | None = None
    answer_field: str | None = None
    form: AnswerForm = "letter"
    missing: Literal["error", "drop"] = "error"

    @model_validator(mode="after")
    def _both_or_neither(self) -> AnswersFile:
        if (self.id_field is None) != (self.answer_field is None):
            raise ValueError("give both id_field and answer_field (rows), or neither (a JSON object)")
        return self


class ClipSpec(StrictModel):
    """Fields holding the seconds the question is about; a row without them is about the whole video."""

    start: str
    end: str


class GroupSpec(StrictModel):
    """Fields holding a question's group (Video-MME-v2): its scoring type (``relevance`` or
    ``logic``) and a logic group's structure (``"[1, [2, 3], 4]"``). A group is the questions of
    one video, ordered by the number after their question id's last ``-``
    (:mod:`skillharness.data.groups`)."""

    type: str = Field(min_length=1)
    structure: str = Field(min_length=1)


class SubtitleSpec(StrictModel):
    """The subtitle file of a row (a field or a template) and, optionally, the field holding the
    offset of its timestamps in seconds."""

    path: Source
    offset: str | None = None

    @field_validator("path", mode="before")
    @classmethod
    def _shorthand(cls, value: object) -> object:
        return _source(value)


class Adapter(StrictModel):
    """One benchmark layout. Field names are the file's own; see docs/data.md for every key.

    ``task_types`` / ``durations`` fix the vocabulary (a value outside it is a row error); left
    empty, the vocabulary is what the file holds. ``task_names`` renames raw task values (file
    stems like ``action_sequence``) to the names reports show.
    """

    name: str
    description: str = ""
    format: Literal["json", "jsonl", "csv", "tsv", "parquet", "folder"]
    files: tuple[str, ...] = ("*.json",)
    video_id: Source
    video_file: Source | None = None
    question_id: Source | None = None
    question: Source
    task_type: Source
    task_names: dict[str, str] = Field(default_factory=dict)
    task_types: tuple[str, ...] = ()
    duration: Source | None = None
    durations: tuple[str, ...] = ()
    domain: Source | None = None
    sub_category: Source | None = None
    url: Source | None = None
    options: OptionsSpec
    answer: AnswerSpec | None = None
    answers: AnswersFile | None = None
    clip: ClipSpec | None = None
    subtitle: SubtitleSpec | None = None
    group: GroupSpec | None = None
    duplicate_options: Literal["error", "allow"] = "error"
    # lmms-eval's own task for this benchmark (docs/protocols.md); absent: its Video-MME request.
    lmms_eval: ReferencePrompt | None = None

    @field_validator(
        "video_id", "video_file", "question_id", "question", "task_type", "duration", "domain",
        "sub_category", "url", mode="before",
    )  # fmt: skip
    @classmethod
    def _shorthand(cls, value: object) -> object:
        return _source(value)

    @model_validator(mode="after")
    def _consistent(self) -> Adapter:
        if not _NAME_RE.match(self.name):
            raise ValueError(f"name {self.name!r}: use lower-case letters, digits, '-' and '_'")
        if self.answer is None and self.answers is None:
            raise ValueError("give 'answer' (a field of the row) or 'answers' (a separate file)")
        if self.answers is not None and self.answer is not None:
            raise ValueError("give 'answer' or 'answers', not both")
        if self.answers is not None and self.question_id is None:
            raise ValueError("'answers' joins by question id: give 'question_id'")
        stems = [s for s in self._sources() if s.file_stem]
        if stems and self.format != "folder":
            raise ValueError("file_stem: true needs format 'folder' (one file per task)")
        return self

    def _sources(self) -> list[Source]:
        optional = (self.video_file, self.question_id, self.duration, self.domain, self.sub_category)
        chosen = [self.video_id, self.question, self.task_type, *optional, self.url]
        return [s for s in chosen if s is not None]

    @property
    def answer_form(self) -> str:
        """The form the answers come in, from the row or the answers file."""
        if self.answer is not None:
            return self.answer.form
        return self.answers.form if self.answers is not None else "letter"

    @property
    def per_row_fields(self) -> dict[str, str]:
        """The row fields only some rows need (a clip window, a subtitle file), each with the
        adapter key that names it: a row without them is about the whole video, or unsubtitled."""
        named: dict[str, str] = {}
        if self.clip is not None:
            named |= {self.clip.start: "clip.start", self.clip.end: "clip.end"}
        if self.subtitle is not None:
            named |= dict.fromkeys(self.subtitle.path.fields, "subtitle.path")
            if self.subtitle.offset is not None:
                named[self.subtitle.offset] = "subtitle.offset"
        return named

    @property
    def required_fields(self) -> tuple[str, ...]:
        """Every row field a row must have, in a stable order (clip and subtitle are per row)."""
        names: list[str] = [f for s in self._sources() for f in s.fields]
        names += self.options.fields
        if self.answer is not None:
            names.append(self.answer.field)
        if self.group is not None:
            names += [self.group.type, self.group.structure]
        return tuple(dict.fromkeys(names))


@cache
def builtin_adapters() -> dict[str, Adapter]:
    """The adapters shipped with the package, by name."""
    found = {}
    for path in sorted(ADAPTERS_DIR.glob("*.yaml")):
        adapter = _read(path)
        found[adapter.name] = adapter
    return found


def load_adapter(name_or_path: str | Path) -> Adapter:
    """A built-in adapter by name, or the adapter described in a YAML file."""
    text = str(name_or_path)
    known = builtin_adapters()
    if text in known:
        return known[text]
    path = Path(text)
    if path.suffix.lower() in (".yaml", ".yml") or path.is_file():
        if path.is_dir():  # "not found" would send the user looking for a file that is there
            raise DataError(f"adapter file {path} is a folder; name the adapter's .yaml file", file=str(path))
        if not path.is_file():
            raise DataError(f"adapter file not found: {path}", file=str(path))
        return _read(path)
    raise DataError(
        f"unknown benchmark {text!r}: give one of {', '.join(sorted(known))} or an adapter .yaml file",
        benchmark=text,
    )


def _read(path: Path) -> Adapter:
    try:
        raw: Any = strict_yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: not valid YAML: {exc}", file=str(path)) from exc
    if not isinstance(raw, dict):
        raise DataError(f"{path}: expected a mapping of adapter keys", file=str(path))
    raw.setdefault("name", path.stem)
    try:
        return Adapter.model_validate(raw)
    except ValidationError as exc:
        raise DataError(f"{path}: invalid adapter: {describe_validation(exc)}", file=str(path)) from exc
