"""A reference evaluation's own task for a benchmark, as data: an adapter's ``lmms_eval`` section.

Its prompt and option templates, the subtitle block, and how the reference aggregates its scores
(docs/protocols.md). Checked when the adapter loads, so a misspelt slot or rule fails there, not at
the first question asked.
"""

from __future__ import annotations

import string
from typing import Literal

from pydantic import Field, field_validator, model_validator

from skillharness.data.metric_rules import METRIC_RULES
from skillharness.util.model import StrictModel

__all__ = ["ReferenceMetric", "ReferencePrompt", "ReferenceSubtitles"]


def _slots(template: str, allowed: frozenset[str], what: str) -> str:
    # Plain {slot} names only, so a misspelt slot fails when the adapter loads, not at the first
    # question asked; a literal brace would be written {{ }}.
    try:
        names = [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
    except ValueError as exc:
        raise ValueError(f"{what} {template!r}: {exc}") from exc
    unknown = sorted(set(names) - allowed)
    if unknown:
        raise ValueError(f"{what} {template!r}: unknown slot(s) {unknown}; use {sorted(allowed)}")
    return template


class ReferenceSubtitles(StrictModel):
    """The reference task's subtitle variant: its name, the rule (by name) that turns the
    question's subtitle file into text, and the block the prompt's ``{subtitles}`` slot shows
    (nothing at all when that text is empty)."""

    task: str = Field(min_length=1)
    rule: str = Field(min_length=1)
    block: str

    @field_validator("block")
    @classmethod
    def _block_slots(cls, value: str) -> str:
        return _slots(value, frozenset({"subtitles"}), "block")


class ReferenceMetric(StrictModel):
    """How the reference task aggregates its per-question scores: ``rule`` by name (one of
    ``data.metric_rules.METRIC_RULES``), the scale it reports on (1 or 100), its rounding, the
    task types a macro average runs over, and whether upstream reports one number (``overall``)
    or one per task type (``task_type``: MVBench's sub-tasks, with no group aggregate)."""

    name: str = Field(min_length=1)
    rule: str = Field(min_length=1)
    scale: float = Field(1.0, gt=0)
    digits: int | None = Field(None, ge=0)
    task_types: tuple[str, ...] = ()
    reported: Literal["overall", "task_type"] = "overall"

    @field_validator("rule")
    @classmethod
    def _known_rule(cls, value: str) -> str:
        if value not in METRIC_RULES:
            raise ValueError(f"rule {value!r} is not one of {', '.join(sorted(METRIC_RULES))}")
        return value

    @model_validator(mode="after")
    def _task_types_when_needed(self) -> ReferenceMetric:
        if METRIC_RULES[self.rule].needs_task_types and not self.task_types:
            raise ValueError(f"rule {self.rule!r} averages over task types: list them in 'task_types'")
        return self


class ReferencePrompt(StrictModel):
    """A reference evaluation's own task for this benchmark, as data (docs/protocols.md).

    ``prompt`` has the slots ``{question}``, ``{options}`` and ``{subtitles}``; ``{options}`` is
    every option through ``option`` (slots ``{letter}``, ``{text}``: the option without its
    prefix, ``{option}``: the option as loaded) joined by ``option_separator``. ``frames``,
    ``extractor`` and ``subtitles.rule`` name small functions in ``agent.protocols``;
    ``choices`` are the letters the extractor searches (empty: the question's own), and
    ``answer_texts`` what it matches a reply's words against (the option's text or the whole
    lettered option). ``clip_window: ignore`` sends the whole video, as a reference that never
    reads the clip fields does.
    """

    task: str = Field(min_length=1)
    prompt: str
    option: str
    option_separator: str = ""
    strip_question: bool = False
    max_new_tokens: int = Field(ge=1)
    frames: str = "qwen_vl"
    clip_window: Literal["respect", "ignore"] = "respect"
    extractor: str = Field(min_length=1)
    choices: tuple[str, ...] = ()
    answer_texts: Literal["text", "option"] = "text"
    metric: ReferenceMetric
    subtitles: ReferenceSubtitles | None = None
    source_files: tuple[str, ...] = ()

    @field_validator("prompt")
    @classmethod
    def _prompt_slots(cls, value: str) -> str:
        return _slots(value, frozenset({"question", "options", "subtitles"}), "prompt")

    @field_validator("option")
    @classmethod
    def _option_slots(cls, value: str) -> str:
        return _slots(value, frozenset({"letter", "text", "option"}), "option")
