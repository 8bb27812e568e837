"""Four scores for every run: ours and the three reference scorers', each with its own rule.

They read the same stored answers four ways (versions in docs/protocols.md):

- **ours**: the strict normalizer's letter (``Prediction.answer``); unparsed counts as wrong; an
  infra error is no answer and is left out.
- **lmms_eval**: lmms-eval's extractor: the benchmark's own task's (``LmmsEvalTask.read``, the
  adapter's ``lmms_eval`` section) or, without one, Video-MME's (:func:`lmms_eval_letter`); ""
  counts as wrong and every answer stays in the denominator. A failed request stays too:
  lmms-eval scores its failure text (``[LMMS_EVAL_REQUEST_FAILED after 5 retries] <error>``), and
  so do we, with our error message. A benchmark with its own task also gets that task's metric
  by its aggregation rule (:mod:`skillharness.infer.reference_score`): ``RunScores.reference``.
- **vlmevalkit**: VLMEvalKit's extractor under its default ``exact_matching`` (unread counts as
  wrong). A failed request is its ``fail_msg`` ("Failed to obtain answer via API."), which its
  extractor reads as ``A`` (from "API"); we score it the same way.
- **official**: the linked script's extractor; "" is *dropped* from the denominator, and an infra
  error exports as an empty response, so it is dropped too.

The raw answer text is what the model wrote: a plain-text reply (the last assistant turn's
content, as the trace keeps it) or the ``answer`` value of its ``submit_answer`` call. When the
overall intervals of two scorers do not overlap, the parser, not the model, made the difference,
and :func:`parser_gap` says so.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from skillharness.agent import (
    LmmsEvalTask,
    PredictionStatus,
    StepRole,
    TraceStep,
    lmms_eval_letter,
    lmms_eval_task,
    official_letter,
    vlmevalkit_letter,
)
from skillharness.data.metric_rules import RuleInput
from skillharness.data.questions import Question
from skillharness.infer.reference_score import ReferenceScore, reference_score
from skillharness.infer.summary import Cell, Scored, summarize
from skillharness.llm.roles import TOOL_SUBMIT_ANSWER
from skillharness.store import RunReader, StoreConfig

__all__ = ["Parser", "RunScores", "ScoredAnswer", "parser_gap", "raw_answers", "score_answers", "score_run"]


class Parser(StrEnum):
    OURS = "ours"
    LMMS_EVAL = "lmms_eval"
    VLMEVALKIT = "vlmevalkit"
    OFFICIAL = "official"


# What each reference scores in place of a reply when the request failed after its retries:
# lmms-eval's chat wrapper (5 retries by default) and VLMEvalKit's API base class.
LMMS_EVAL_FAILURE_TEXT = "[LMMS_EVAL_REQUEST_FAILED after 5 retries] {error}"
VLMEVALKIT_FAIL_MSG = "Failed to obtain answer via API."


@dataclass(frozen=True)
class ScoredAnswer:
    """One final (question, sample) with everything the three parsers read."""

    question: Question
    sample_idx: int
    status: PredictionStatus
    ours: str | None  # the strict normalizer's letter
    raw: str  # the model's answer text ("" for none)
    error: str = ""  # the infra error's message, for lmms-eval's failure text

    def reference_letter(self, parser: Parser, task: LmmsEvalTask | None = None) -> str:
        """What ``parser``'s extractor reads, on the text that reference scores ("" when nothing);
        under lmms-eval, ``task`` is the benchmark's own task (None: the Video-MME one)."""
        letters = self.question.letters  # A-D for Video-MME, as the references read it
        if parser is Parser.LMMS_EVAL:
            text = self.scored_text(parser)
            return task.read(text, self.question) if task is not None else lmms_eval_letter(text, letters)
        if parser is Parser.VLMEVALKIT:
            return vlmevalkit_letter(self.scored_text(parser), letters)
        return official_letter(self.scored_text(parser), letters)

    def scored_text(self, parser: Parser) -> str:
        """The text ``parser``'s reference scores: the reply, or what it puts in place of none."""
        if self.status is not PredictionStatus.INFRA_ERROR:
            if parser is Parser.VLMEVALKIT:
                # VLMEvalKit's API wrapper strips the reply and turns an empty one (a reply of only
                # spaces too) into its fail_msg, which its extractor then reads like any reply.
                return self.raw.strip() or VLMEVALKIT_FAIL_MSG
            return self.raw
        if parser is Parser.LMMS_EVAL:
            preview = self.error.replace("\n", " ")[:200]
            return LMMS_EVAL_FAILURE_TEXT.format(error=preview)
        return VLMEVALKIT_FAIL_MSG if parser is Parser.VLMEVALKIT else ""


@dataclass(frozen=True)
class RunScores:
    """Per parser, the summary tables (``overall``, ``duration``, ``task_type``, ...), and the
    benchmark's own lmms-eval metric when its adapter describes a task (``reference``)."""

    tables: dict[Parser, dict[str, list[Cell]]]
    answers: tuple[ScoredAnswer, ...]
    reference: ReferenceScore | None = None

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


def _scored(answer: ScoredAnswer, parser: Parser, task: LmmsEvalTask | None) -> Scored:
    q = answer.question
    status = answer.status.value
    if parser is Parser.OURS:
        correct = answer.status is PredictionStatus.OK and answer.ours == q.answer
    else:
        letter = answer.reference_letter(parser, task)
        correct = letter == q.answer
        unparsed = "dropped" if parser is Parser.OFFICIAL else "parse_error"
        status = "ok" if letter else unparsed
    return Scored(q.task_type, q.duration, status, correct, q.domain, q.sub_category)


def _reference(
    answers: Sequence[ScoredAnswer],
    scored: Sequence[Scored],
    task: LmmsEvalTask,
    confidence: float,
    subtitles: bool,
) -> ReferenceScore:
    """The task's metric over the answers as lmms-eval reads them (every answer in, as there)."""
    spec = task.spec
    items = [
        RuleInput(a.question, a.sample_idx, s.correct, task.replied(a.scored_text(Parser.LMMS_EVAL)))
        for a, s in zip(answers, scored, strict=True)
    ]
    return reference_score(
        items,
        task=task.name(subtitles),
        metric=spec.metric.name,
        rule=spec.metric.rule,
        scale=spec.metric.scale,
        digits=spec.metric.digits,
        task_types=spec.metric.task_types,
        reported=spec.metric.reported,
        confidence=confidence,
    )


def score_answers(
    answers: Sequence[ScoredAnswer],
    confidence: float = 0.95,
    benchmark: str | None = None,
    subtitles: bool = False,
) -> RunScores:
    """Every parser's tables over ``answers``; ``benchmark`` (``data.benchmark``) chooses
    lmms-eval's task, its reading and its metric (None, or no task in its adapter: Video-MME's),
    ``subtitles`` (``agent.subtitles``) the variant the metric is named after."""
    task = lmms_eval_task(benchmark)
    scored = {parser: [_scored(a, parser, task) for a in answers] for parser in Parser}
    tables = {parser: summarize(rows, confidence) for parser, rows in scored.items()}
    reference = _reference(answers, scored[Parser.LMMS_EVAL], task, confidence, subtitles) if task else None
    return RunScores(tables, tuple(answers), reference)


def score_run(
    store: StoreConfig | str,
    run_id: str,
    questions: Sequence[Question],
    confidence: float = 0.95,
    benchmark: str | None = None,
    subtitles: bool = False,
) -> RunScores:
    """Read a stored run's predictions and traces and score them every way (read-only)."""
    by_id = {q.question_id: q for q in questions}
    with RunReader(store) as reader:
        predictions = reader.predictions(run_id)
        raws = raw_answers(reader.iter_traces(run_id, answers_via=TOOL_SUBMIT_ANSWER))
    answers = [
        ScoredAnswer(
            by_id[p.question_id],
            p.sample_idx,
            p.status,
            p.answer,
            raws.get((p.question_id, p.sample_idx), ""),
            p.error_message or "",
        )
        for p in predictions
        if p.question_id in by_id
    ]
    return score_answers(answers, confidence, benchmark, subtitles)


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
