"""Diagnosis: the waterfall over a rollout's wrong answers, judged once per fingerprint (SPEC 4.3.2).

C1 and C2 (:mod:`skillharness.train.diagnose.waterfall`) settle what the prediction and its stored trace
show; every other wrong answer goes to the C3 judge with a text-only summary of its trace (audit
P0-2). A judge call that failed or a reply that does not parse is ``judge_failed``: excluded now,
stored as a *retryable* row and judged again on the next call (P2-4). Judged cases are stored in
the ``diagnoses`` table under a fingerprint of the judge (model, sampling, template) and of what
it judged (the relevant-text hash of the bundle for the task type, the prediction's key), so the
same case under the same text is never judged twice, across resumes and runs (P2-3: upserts).
When infra, degraded and failed-judge cases pass ``train.diagnosis.max_excluded_share`` of the
wrong answers, :func:`diagnose` raises :class:`~skillharness.errors.ExcludedShareError`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from skillharness.agent import InvalidatingChatModel, Prediction, TraceStep
from skillharness.data.questions import Question
from skillharness.errors import DataError, ExcludedShareError
from skillharness.llm.types import SamplingParams
from skillharness.skills import Bundle, EditTarget
from skillharness.store import DiagnosisRow, content_hash
from skillharness.train.diagnose.trace_summary import summarize_trace, trace_spans, video_duration_s
from skillharness.train.diagnose.waterfall import Finding, c1_from_prediction, c2_from_trace, judge_finding
from skillharness.train.roles.prompt_specs import CaseView
from skillharness.train.roles.replies import JudgeReply, ReplyRefusal, parse_reply
from skillharness.train.state.caller import RoleCaller
from skillharness.train.state.context import TrainContext
from skillharness.train.state.records import Case, Cause, Diagnosis

__all__ = [
    "DiagnosisReport",
    "JudgeIdentity",
    "case_view",
    "check_excluded_share",
    "diagnose",
    "diagnosis_fingerprint",
    "run_waterfall",
]

JUDGED = (Cause.DEFECT, Cause.LAPSE, Cause.UNCERTAIN)  # a stored row with one of these is an answer
_UNJUDGED = "diagnosis disabled (train.diagnosis.enabled: false): every unsettled wrong answer is a defect"


@dataclass(frozen=True)
class JudgeIdentity:
    """Everything about the judge that can change its verdict: part of every C3 fingerprint."""

    template: str
    template_hash: str
    model: str
    sampling: SamplingParams

    @classmethod
    def of(cls, caller: RoleCaller, template: str) -> JudgeIdentity:
        role = caller.templates.spec(template).role
        return cls(
            template,
            caller.templates.template_hash(template),
            caller.model_for(role),
            caller.sampling_for(role),
        )


def diagnosis_fingerprint(
    prediction_key: tuple[str, str, int], relevant_hash: str, judge: JudgeIdentity | None
) -> str:
    """The ``diagnoses`` key of a case. ``judge`` is None for C1/C2 findings, which no judge made."""
    run_id, question_id, sample_idx = prediction_key
    judged = None
    if judge is not None:
        judged = {
            "template": judge.template,
            "template_hash": judge.template_hash,
            "model": judge.model,
            "sampling": judge.sampling.model_dump(mode="json"),
        }
    return content_hash(
        {
            "prediction": [run_id, question_id, sample_idx],
            "relevant_text_hash": relevant_hash,
            "judge": judged,
        }
    )


@dataclass(frozen=True)
class DiagnosisReport:
    """What a diagnosis made of a rollout's wrong answers."""

    diagnoses: tuple[Diagnosis, ...]
    counts: dict[str, int]  # by Cause value, plus "wrong"
    judge_calls: int
    fingerprint_hits: int

    @property
    def excluded(self) -> int:
        return sum(self.counts.get(cause.value, 0) for cause in Cause if cause.excluded)

    @property
    def excluded_share(self) -> float:
        wrong = self.counts.get("wrong", 0)
        return self.excluded / wrong if wrong else 0.0


def case_view(case: Case, *, trace_summary: str | None = None, judge_reason: str = "") -> CaseView:
    """A case as the prompts show it (text only: the trace summarised, no frames)."""
    q = case.question
    return CaseView(
        question_id=q.question_id,
        task_type=q.task_type,
        question=q.question,
        options=tuple(q.options),
        correct_answer=q.answer,
        agent_answer=case.prediction.answer,
        duration_s=video_duration_s(case.trace),
        trace_summary=trace_summary if trace_summary is not None else summarize_trace(case.trace),
        judge_reason=judge_reason,
    )


def _target_of(label: str | None) -> EditTarget | None:
    return None if label is None else EditTarget.parse(label)


def _row(fingerprint: str, diagnosis: Diagnosis) -> DiagnosisRow:
    p = diagnosis.case.prediction
    return DiagnosisRow(
        fingerprint=fingerprint,
        run_id=p.run_id,
        question_id=p.question_id,
        sample_idx=p.sample_idx,
        task_type=p.task_type or diagnosis.case.question.task_type,
        cause=diagnosis.cause.value,
        target=diagnosis.target.label() if diagnosis.target else None,
        reason=diagnosis.reason,
        retryable=diagnosis.cause is Cause.JUDGE_FAILED,
    )


@dataclass
class _Judging:
    """One waterfall pass: the context, the bundle and the judge, and what was spent."""

    ctx: TrainContext
    bundle: Bundle
    judge: JudgeIdentity
    stored: Mapping[str, DiagnosisRow]
    calls: int = 0
    hits: int = 0

    def variables(self, case: Case, summary: str) -> dict[str, object]:
        task_type = case.question.task_type
        values: dict[str, object] = {
            "case": case_view(case, trace_summary=summary),
            "document": self.bundle.skill(task_type).render(),
            "system_prompt": self.bundle.system_prompt,
            "tools": dict(self.bundle.tools),
        }
        if "spans" in self.ctx.caller.templates.spec(self.judge.template).variables:
            values["spans"] = trace_spans(case.trace)
        return values

    async def judge_case(self, case: Case, summary: str, fingerprint: str) -> Finding:
        row = self.stored.get(fingerprint)
        if row is not None and not row.retryable and row.cause in JUDGED:
            self.hits += 1
            return Finding(Cause(row.cause), _target_of(row.target), row.reason)
        self.calls += 1
        caller = self.ctx.caller
        answer = await caller.ask(self.judge.template, self.variables(case, summary))
        reply = parse_reply(JudgeReply, answer.text) if answer.text is not None else None
        if isinstance(reply, ReplyRefusal) and isinstance(caller.model, InvalidatingChatModel):
            # An unusable reply must not be replayed from the response cache when the case is retried.
            await caller.model.invalidate(caller.request(answer.prompt))
        return judge_finding(
            reply,
            error=answer.error,
            task_type=case.question.task_type,
            trace=case.trace,
            tools=tuple(self.bundle.tools),
        )


def _questions(ctx: TrainContext) -> dict[str, Question]:
    return {q.question_id: q for q in (*ctx.train_questions, *ctx.val_questions)}


def _cases(
    ctx: TrainContext,
    run_id: str,
    wrong: Sequence[Prediction],
    traces: Mapping[tuple[str, int], tuple[TraceStep, ...]],
) -> list[Case]:
    by_id = _questions(ctx)
    cases = []
    for p in wrong:
        question = by_id.get(p.question_id)
        if question is None:
            raise DataError(
                f"run {run_id!r} has a prediction for question {p.question_id!r}, which is in neither the "
                "train nor the val pool of this config (diagnosis never reads the sealed test pool)",
                run_id=run_id,
                question_id=p.question_id,
            )
        cases.append(Case(question, p, traces.get((p.question_id, p.sample_idx), ())))
    return cases


def _settle(cases: Sequence[Case], bundle: Bundle) -> tuple[dict[int, Diagnosis], list[DiagnosisRow]]:
    """C1 and C2 over ``cases``: what they settle (by index), and the rows to store for it."""
    tools = tuple(bundle.tools)
    settled: dict[int, Diagnosis] = {}
    rows: list[DiagnosisRow] = []
    for index, case in enumerate(cases):
        p = case.prediction
        finding = c1_from_prediction(p, case.trace) or c2_from_trace(p, case.trace, tools)
        if finding is None:
            continue
        d = Diagnosis(case, finding.cause, finding.target, finding.reason, summarize_trace(case.trace))
        settled[index] = d
        if finding.cause is not Cause.INFRA:  # infra is asked again, never diagnosed
            relevant = bundle.relevant_hash(case.question.task_type)
            rows.append(_row(diagnosis_fingerprint(p.key, relevant, None), d))
    return settled, rows


async def run_waterfall(
    ctx: TrainContext, bundle: Bundle, run_id: str, predictions: Sequence[Prediction]
) -> DiagnosisReport:
    """The waterfall over the wrong ones of ``predictions`` (stores rows; never checks the share)."""
    wrong = [p for p in predictions if p.correct is not True]
    keys = [(p.question_id, p.sample_idx) for p in wrong]
    traces = await asyncio.to_thread(ctx.store.traces, run_id, keys) if keys else {}
    cases = _cases(ctx, run_id, wrong, traces)
    judge = JudgeIdentity.of(ctx.caller, ctx.config.diagnosis.judge_template)
    stored = await asyncio.to_thread(ctx.store.select, DiagnosisRow, run_id=run_id) if cases else []
    judging = _Judging(ctx, bundle, judge, {row.fingerprint: row for row in stored})
    limit = asyncio.Semaphore(max(1, ctx.session.agent_config.concurrency))
    settled, rows = _settle(cases, bundle)
    await ctx.store.aupsert(rows)

    async def judged(case: Case) -> Diagnosis:
        summary = summarize_trace(case.trace)
        if not ctx.config.diagnosis.enabled:  # the ablation: no judge, no row (nothing was judged)
            target = EditTarget.skill(case.question.task_type)
            return Diagnosis(case, Cause.DEFECT, target, _UNJUDGED, summary)
        fingerprint = diagnosis_fingerprint(
            case.prediction.key, bundle.relevant_hash(case.question.task_type), judge
        )
        async with limit:
            finding = await judging.judge_case(case, summary, fingerprint)
        diagnosis = Diagnosis(case, finding.cause, finding.target, finding.reason, summary)
        await ctx.store.aupsert([_row(fingerprint, diagnosis)])  # at once: a kill loses no verdict
        return diagnosis

    rest = [i for i in range(len(cases)) if i not in settled]
    settled.update(zip(rest, await asyncio.gather(*(judged(cases[i]) for i in rest)), strict=True))
    diagnoses = tuple(settled[i] for i in range(len(cases)))
    counts = {cause.value: 0 for cause in Cause} | {"wrong": len(wrong)}
    for d in diagnoses:
        counts[d.cause.value] += 1
    return DiagnosisReport(diagnoses, counts, judging.calls, judging.hits)


def check_excluded_share(report: DiagnosisReport, limit: float, min_excluded: int = 1) -> None:
    """Raise :class:`ExcludedShareError` (with the counts) when the excluded share passes ``limit``.

    Judged only from ``min_excluded`` excluded cases on: 2 of 5 wrong answers is 40 %, and says
    nothing a resume would not mend (infra errors were already asked again by the rollout).
    """
    if report.excluded >= min_excluded and report.excluded_share > limit:
        raise ExcludedShareError(
            f"diagnosis excluded {report.excluded} of {report.counts['wrong']} wrong answers "
            f"({report.excluded_share:.0%} > the limit {limit:.0%}): infra {report.counts['infra']}, "
            f"degraded {report.counts['degraded']}, failed judge {report.counts['judge_failed']}; "
            "a resume asks the failed ones again",
            counts=dict(report.counts),
            excluded=report.excluded,
            share=report.excluded_share,
            limit=limit,
        )


async def diagnose(
    ctx: TrainContext, bundle: Bundle, run_id: str, predictions: Sequence[Prediction]
) -> DiagnosisReport:
    """Diagnose the wrong answers of ``run_id`` (a rollout of ``bundle``); fail on thin evidence."""
    report = await run_waterfall(ctx, bundle, run_id, predictions)
    check_excluded_share(report, ctx.config.diagnosis.max_excluded_share, ctx.config.diagnosis.min_excluded)
    return report
