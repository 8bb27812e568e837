"""Three scores for every run: ours, lmms-eval's and the official Video-MME scorer's.

They read the same stored answers three ways:

- **ours**: the strict normalizer's letter (``Prediction.answer``); unparsed counts as wrong.
- **lmms_eval**: the reference extractor on the raw answer text; "" counts as wrong, every
  answer stays in the denominator (``videomme_process_results`` / ``videomme_aggregate_results``).
- **official**: the same extractor; "" is *dropped* from the denominator
  (``eval_your_results.py`` counts only extractions that are not empty).

The raw answer text is what the model wrote: a plain-text reply (the last assistant turn's
content, as the trace keeps it) or the ``answer`` value of its ``submit_answer`` call. Infra
errors are no answer under any parser. When the overall intervals of two scorers do not
overlap, the parser, not the model, made the difference, and :func:`parser_gap` says so.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from skillharness.agent import PredictionStatus, StepRole, TraceStep, extract_reference_letter
from skillharness.data.questions import Question
from skillharness.infer.summary import Cell, Scored, summarize
from skillharness.llm.roles import TOOL_SUBMIT_ANSWER
from skillharness.store import RunReader, StoreConfig

__all__ = ["Parser", "RunScores", "ScoredAnswer", "parser_gap", "raw_answers", "score_answers", "score_run"]


class Parser(StrEnum):
    OURS = "ours"
    LMMS_EVAL = "lmms_eval"
    OFFICIAL = "official"


@dataclass(frozen=True)
class ScoredAnswer:
    """One final (question, sample) with everything the three parsers read."""

    question: Question
    sample_idx: int
    status: PredictionStatus
    ours: str | None  # the strict normalizer's letter
    raw: str  # the model's answer text ("" for none)

    @property
    def reference_letter(self) -> str:
        """What the lmms-eval / official extractor reads ("" when nothing)."""
        return extract_reference_letter(self.raw)


@dataclass(frozen=True)
class RunScores:
    """Per parser, the summary tables (``overall``, ``duration``, ``task_type``, ...)."""

    tables: dict[Parser, dict[str, list[Cell]]]
    answers: tuple[ScoredAnswer, ...]

    def overall(self, parser: Parser) -> Cell:
        return self.tables[parser]["overall"][0]


def _answer_value(arguments: str | None) -> str:
    try:
        value = json.loads(arguments or "")
    except (ValueError, RecursionError):
        return arguments or ""
    if isinstance(value, dict) and "answer" in value:
        value = value["answer"]
    return value if isinstance(value, str) else json.dumps(value)


def raw_answers(steps: Iterable[TraceStep]) -> dict[tuple[str, int], str]:
    """The last answer text of every (question, sample) in a run's trace steps."""
    found: dict[tuple[str, int], str] = {}
    for step in steps:
        key = (step.question_id, step.sample_idx)
        if step.role is StepRole.ASSISTANT and step.tool_name is None:
            found[key] = step.content
        elif step.role is StepRole.TOOL and step.tool_name == TOOL_SUBMIT_ANSWER:
            found[key] = _answer_value(step.tool_arguments)
    return found


def _scored(answer: ScoredAnswer, parser: Parser) -> Scored:
    q = answer.question
    status = answer.status.value
    if parser is Parser.OURS or answer.status is PredictionStatus.INFRA_ERROR:
        correct = answer.status is PredictionStatus.OK and answer.ours == q.answer
    else:
        letter = answer.reference_letter
        correct = letter == q.answer
        unparsed = "dropped" if parser is Parser.OFFICIAL else "parse_error"
        status = "ok" if letter else unparsed
    return Scored(q.task_type, q.duration, status, correct, q.domain, q.sub_category)


def score_answers(answers: Sequence[ScoredAnswer], confidence: float = 0.95) -> RunScores:
    """The three parsers' tables over ``answers``."""
    tables = {parser: summarize([_scored(a, parser) for a in answers], confidence) for parser in Parser}
    return RunScores(tables, tuple(answers))


def score_run(
    store: StoreConfig | str, run_id: str, questions: Sequence[Question], confidence: float = 0.95
) -> RunScores:
    """Read a stored run's predictions and traces and score them three ways (read-only)."""
    by_id = {q.question_id: q for q in questions}
    with RunReader(store) as reader:
        predictions = reader.predictions(run_id)
        raws = raw_answers(reader.iter_traces(run_id))
    answers = [
        ScoredAnswer(
            by_id[p.question_id],
            p.sample_idx,
            p.status,
            p.answer,
            raws.get((p.question_id, p.sample_idx), ""),
        )
        for p in predictions
        if p.question_id in by_id
    ]
    return score_answers(answers, confidence)


def parser_gap(scores: RunScores) -> str | None:
    """A warning when two parsers' overall intervals do not overlap, else None."""
    cells = {parser: scores.overall(parser) for parser in Parser}
    apart = [
        (a, b)
        for i, a in enumerate(Parser)
        for b in list(Parser)[i + 1 :]
        if cells[a].n
        and cells[b].n
        and (cells[a].ci_high < cells[b].ci_low or cells[b].ci_high < cells[a].ci_low)
    ]
    if not apart:
        return None
    pairs = ", ".join(
        f"{a.value} {100 * cells[a].accuracy:.1f}% vs {b.value} {100 * cells[b].accuracy:.1f}%"
        for a, b in apart
    )
    return (
        f"the scores differ by more than their intervals ({pairs}): the same answers were read by "
        "different parsers, so the parser, not the model, made the difference"
    )
