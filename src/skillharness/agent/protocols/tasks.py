"""A benchmark's own lmms-eval task: the adapter's ``lmms_eval`` section, rendered by one path.

A benchmark's request is data (its adapter YAML: task name, prompt template, option form,
``max_new_tokens``, frame rule, extractor, metric); this module only fills the template and
looks up the named rules. A benchmark whose adapter has no section (Video-MME, or a layout of
your own) is asked with lmms-eval's Video-MME request, as before (:mod:`.prompts`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from skillharness.agent.protocols.extract import strip_reasoning
from skillharness.agent.protocols.frames import qwen_vl_indices
from skillharness.agent.protocols.task_extract import TASK_EXTRACTORS
from skillharness.data import Adapter, load_adapter
from skillharness.data.questions import Question
from skillharness.errors import ConfigError, DataError

__all__ = [
    "FRAME_RULES",
    "SUBTITLE_RULES",
    "LmmsEvalTask",
    "jsonl_words",
    "lmms_eval_task",
]


def jsonl_words(path: Path | None) -> str:
    """Video-MME-v2's subtitle text (``load_subtitle_v2``): the ``text`` of every line of the
    ``.jsonl`` file, joined by spaces, with no time or frame selection; no file gives ``""``."""
    if path is None or not path.is_file():
        return ""
    words: list[str] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if not line.strip():
            continue
        # Upstream swallows a broken file (no subtitles at all); here it is a data error.
        try:
            entry = json.loads(line.strip())
            word = entry["text"]
        except (json.JSONDecodeError, TypeError, KeyError) as exc:
            raise DataError(f"{path}:{number}: not a JSON line with a 'text' field", file=str(path)) from exc
        if not isinstance(word, str):
            raise DataError(f"{path}:{number}: 'text' is not a string", file=str(path))
        words.append(word)
    return " ".join(words)


FRAME_RULES: dict[str, Callable[[int, int], tuple[int, ...]]] = {"qwen_vl": qwen_vl_indices}
SUBTITLE_RULES: dict[str, Callable[[Path | None], str]] = {"jsonl_words": jsonl_words}


@dataclass(frozen=True)
class LmmsEvalTask:
    """A benchmark's lmms-eval task with its named rules resolved."""

    benchmark: str
    adapter: Adapter  # its lmms_eval section is set (lmms_eval_task checks)

    @property
    def spec(self):  # unannotated: its type (the adapter's section) is not in the data layer's API
        spec = self.adapter.lmms_eval
        if spec is None:  # only lmms_eval_task builds one, and never without a section
            raise ConfigError(f"benchmark {self.benchmark!r} describes no lmms-eval task")
        return spec

    def name(self, subtitles: bool) -> str:
        """The upstream task name of the variant asked."""
        return self.spec.subtitles.task if subtitles and self.spec.subtitles else self.spec.task

    def frame_indices(self, total_frames: int, count: int) -> tuple[int, ...]:
        return FRAME_RULES[self.spec.frames](total_frames, count)

    def asked(self, question: Question) -> Question:
        """The question as the reference sees it: without its clip window when it ignores it."""
        if self.spec.clip_window == "ignore" and question.clip_start is not None:
            return question.model_copy(update={"clip_start": None, "clip_end": None})
        return question

    def subtitle_text(self, path: Path | None) -> str:
        """The subtitle variant's text for the question's subtitle file."""
        if self.spec.subtitles is None:
            raise ConfigError(
                f"lmms-eval's {self.spec.task} has no subtitle variant; set agent.subtitles: false",
                benchmark=self.benchmark,
            )
        return SUBTITLE_RULES[self.spec.subtitles.rule](path)

    def text(self, question: Question, subtitles: str | None) -> str:
        """The task's ``doc_to_text`` for ``question``; ``subtitles`` None: the plain variant."""
        spec = self.spec
        options = spec.option_separator.join(
            spec.option.format(letter=letter, text=question.option_text(letter), option=option)
            for letter, option in zip(question.letters, question.options, strict=True)
        )
        block = ""
        if subtitles and spec.subtitles is not None:  # an empty text shows no block at all
            block = spec.subtitles.block.format(subtitles=subtitles)
        asked = question.question.strip() if spec.strip_question else question.question
        return spec.prompt.format(question=asked, options=options, subtitles=block)

    def replied(self, reply: str) -> bool:
        """Whether the reply, after the evaluator's reasoning-tag stripping, is not empty (the
        denominator of MVBench's answered-only accuracy)."""
        return strip_reasoning(reply) != ""

    def read(self, reply: str, question: Question) -> str:
        """The letter the task's own extractor reads from ``reply`` (``""``: none)."""
        spec = self.spec
        answers = {
            letter: (option.strip() if spec.answer_texts == "option" else question.option_text(letter))
            for letter, option in zip(question.letters, question.options, strict=True)
        }
        choices = spec.choices or question.letters
        return TASK_EXTRACTORS[spec.extractor](strip_reasoning(reply), choices, answers)


def _check_names(task: LmmsEvalTask) -> None:
    benchmark, spec = task.benchmark, task.spec
    named = [("frames", spec.frames, FRAME_RULES), ("extractor", spec.extractor, TASK_EXTRACTORS)]
    if spec.subtitles is not None:
        named.append(("subtitles.rule", spec.subtitles.rule, SUBTITLE_RULES))
    for key, value, known in named:
        if value not in known:
            choices = ", ".join(sorted(known))
            raise ConfigError(
                f"benchmark {benchmark!r}: lmms_eval.{key} {value!r} is not one of {choices}",
                benchmark=benchmark,
                key=f"lmms_eval.{key}",
            )


@cache
def lmms_eval_task(benchmark: str | None) -> LmmsEvalTask | None:
    """The benchmark's lmms-eval task (a built-in adapter's name or an adapter file), or None
    when its adapter describes none (then the Video-MME request is sent)."""
    if benchmark is None:
        return None
    adapter = load_adapter(benchmark)
    if adapter.lmms_eval is None:
        return None
    task = LmmsEvalTask(benchmark, adapter)
    _check_names(task)
    return task
