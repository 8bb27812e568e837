"""GEPA 0.1.4 on a SimLab world: the adapter that runs our agent and our evolve role for it.

The peer runs under the rules our efficiency runs run under, so that its figures can stand beside
theirs:

- **World and split.** The same simulator world, split and initial bundle as our efficiency job
  of the setup and seed (``simlab.efficiency.prepare``: split seed = world seed). GEPA's trainset
  is our train pool, its valset our val pool; the truth is read on the test pool with ``Truth``
  (the oracle's expected accuracy), as our ``CurveObserver`` reads it.
- **Candidate.** The bundle's system prompt and each skill document (``"system"``,
  ``"skill:<slug>"``: our edit targets' labels), so GEPA's round-robin component selector cycles
  over them as over the modules of its own setups. The tool descriptions stay as they are.
- **Rollouts.** Our agent, through the same ``TrainContext.rollout`` our loop scores every draw
  with, against the world's simulator; a question scores 1 when its answer is right, else 0. The
  agent samples as its config says (temperature 0.7, no request seed: each draw independent), and
  every evaluation is a fresh draw (a new sample index per question), since GEPA evaluates afresh
  and keeps no evaluation cache by default.
- **Proposals.** Our evolve role (``train.evolve.evolve``: its template, schema, patch code and
  role settings) against the same simulated model. Its evidence is the minibatch's wrong answers
  where the component acted: a skill document sees its class's failures, the system prompt every
  failure (GEPA's reflective dataset is built per component from the traces it took part in). A
  component without such a failure gets no proposal, and GEPA skips the child, as it does when a
  module left no trace. GEPA has no judge, so no failure is sorted out as a lapse, and it keeps no
  memory of rejected edits, so none is shown.
- **Budget.** Every model call (agent turns and proposer calls; cache hits excluded), counted on
  the session as ``simlab.efficiency.budget_calls`` counts our loop's.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from gepa import EvaluationBatch

from skillharness.agent.records import Prediction, TraceStep
from skillharness.data import Pool
from skillharness.data.questions import Question
from skillharness.sim.oracle import BundleText
from skillharness.skills import Bundle, EditTarget
from skillharness.store import RunKind
from skillharness.train.diagnose.casepack import build_case_packs
from skillharness.train.diagnose.trace_summary import summarize_trace
from skillharness.train.evolve import evolve
from skillharness.train.state.context import TrainContext
from skillharness.train.state.records import Case, CasePack, Cause, Diagnosis, Refused

SYSTEM = EditTarget.system().label()
T = TypeVar("T")


def candidate_of(bundle: Bundle) -> dict[str, str]:
    """GEPA's candidate of ``bundle``: the system prompt and every skill document, by target label."""
    texts = {SYSTEM: bundle.system_prompt}
    texts.update({EditTarget.skill(slug).label(): doc.render() for slug, doc in bundle.skills.items()})
    return texts


def bundle_of(candidate: Mapping[str, str], tools: Mapping[str, str]) -> Bundle:
    """The bundle a candidate stands for, with ``tools`` (the descriptions GEPA does not edit)."""
    skills = {label.partition(":")[2]: text for label, text in candidate.items() if label != SYSTEM}
    text = BundleText(system_prompt=candidate[SYSTEM], skills=skills, tool_descriptions=dict(tools))
    return text.to_bundle(source="<gepa candidate>")


def acts_on(component: str, task_type: str) -> bool:
    """Whether ``component``'s text is in what the agent sees for a question of ``task_type``."""
    return component in (SYSTEM, EditTarget.skill(task_type).label())


@dataclass(frozen=True)
class Rollout:
    """One question of an evaluation and the prediction it got (GEPA's trajectory)."""

    question: Question
    prediction: Prediction


def _key(prediction: Prediction) -> str:
    return f"{prediction.run_id}/{prediction.question_id}/{prediction.sample_idx}"


def _feedback(rollout: Rollout) -> str:
    """What GEPA's own adapters tell the reflection model about a wrong answer."""
    given = rollout.prediction.answer or "no parseable answer"
    return f"The answer ({given}) is wrong; the correct answer is {rollout.question.answer}."


class SimAdapter:
    """GEPA's adapter over our agent and evolve role; every call goes through ``ctx``'s session.

    GEPA is synchronous and runs in a worker thread; each rollout or proposal is handed to the
    event loop that owns the session (``loop``), and the thread waits for it.
    """

    def __init__(
        self,
        ctx: TrainContext,
        loop: asyncio.AbstractEventLoop,
        tools: Mapping[str, str],
        count: Callable[[], int],
    ) -> None:
        self.ctx = ctx
        self.loop = loop
        self.tools = dict(tools)
        self.count = count
        self.val_ids = frozenset(q.question_id for q in ctx.val_questions)
        self.calls: Counter[str] = Counter()  # calls by where they went: val, minibatch, propose
        self.proposals: Counter[str] = Counter()  # proposed, refused, no_evidence
        self._samples: Counter[str] = Counter()
        self._evaluations = 0
        self._cases: dict[str, Case] = {}

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def _draws(self, batch: Sequence[Question]) -> list[tuple[Question, int]]:
        """A fresh sample index per question and evaluation: every evaluation draws anew."""
        draws = []
        for q in batch:
            draws.append((q, self._samples[q.question_id]))
            self._samples[q.question_id] += 1
        return draws

    def evaluate(
        self, batch: list[Question], candidate: dict[str, str], capture_traces: bool = False
    ) -> EvaluationBatch[Rollout, Prediction]:
        """Our agent on ``batch`` with the candidate's texts: 1.0 per right answer, else 0.0."""
        bundle = bundle_of(candidate, self.tools)
        on_val = all(q.question_id in self.val_ids for q in batch)
        self._evaluations += 1
        before = self.count()
        predictions = self._run(
            self.ctx.rollout(
                bundle,
                self._draws(batch),
                f"gepa{self._evaluations:05d}",
                kind=RunKind.INFER,
                pool=Pool.VAL if on_val else Pool.TRAIN,
            )
        )
        self.calls["val" if on_val else "minibatch"] += self.count() - before
        scores = [1.0 if p.correct else 0.0 for p in predictions]
        rollouts = [Rollout(q, p) for q, p in zip(batch, predictions, strict=True)]
        return EvaluationBatch(outputs=predictions, scores=scores, trajectories=rollouts)

    async def _traces(self, failed: Sequence[Rollout]) -> dict[str, tuple[TraceStep, ...]]:
        out: dict[str, tuple[TraceStep, ...]] = {}
        for run_id in sorted({r.prediction.run_id for r in failed}):
            keys = [
                (r.question.question_id, r.prediction.sample_idx)
                for r in failed
                if r.prediction.run_id == run_id
            ]
            found = await asyncio.to_thread(self.ctx.store.traces, run_id, keys)
            out.update({f"{run_id}/{qid}/{sample}": steps for (qid, sample), steps in found.items()})
        return out

    def make_reflective_dataset(
        self,
        candidate: dict[str, str],
        eval_batch: EvaluationBatch[Rollout, Prediction],
        components_to_update: list[str],
    ) -> dict[str, list[dict[str, Any]]]:
        """Per component, the minibatch's wrong answers to questions whose text it is part of."""
        failed = [r for r in eval_batch.trajectories or [] if r.prediction.correct is False]
        traces = self._run(self._traces(failed))
        self._cases = {
            _key(r.prediction): Case(r.question, r.prediction, traces.get(_key(r.prediction), ()))
            for r in failed
        }
        return {
            component: [
                {
                    "case": _key(r.prediction),
                    "Inputs": r.question.question,
                    "Generated Outputs": r.prediction.answer or "",
                    "Feedback": _feedback(r),
                }
                for r in failed
                if acts_on(component, r.question.task_type)
            ]
            for component in components_to_update
        }

    def _pack(self, target: EditTarget, records: Sequence[Mapping[str, Any]]) -> CasePack:
        """The records as our loop's case pack for ``target`` (its cap and deterministic choice)."""
        diagnoses = []
        for record in records:
            case = self._cases[record["case"]]
            diagnoses.append(
                Diagnosis(case, Cause.DEFECT, target, record["Feedback"], summarize_trace(case.trace))
            )
        config = self.ctx.config
        packs = build_case_packs(
            diagnoses, max_cases=config.casepack.max_cases, seed=config.seed, salt=f"gepa{self._evaluations}"
        )
        return packs[0]

    def propose_new_texts(
        self,
        candidate: dict[str, str],
        reflective_dataset: Mapping[str, Sequence[Mapping[str, Any]]],
        components_to_update: list[str],
    ) -> dict[str, str]:
        """Our evolve role's edit of each component, from its failures; none without evidence."""
        parent = bundle_of(candidate, self.tools)
        out: dict[str, str] = {}
        for component in components_to_update:
            records = reflective_dataset.get(component, ())
            if not records:
                self.proposals["no_evidence"] += 1
                continue
            target = EditTarget.parse(component)
            before = self.count()
            result = self._run(evolve(self.ctx, parent, self._pack(target, records), ()))
            self.calls["propose"] += self.count() - before
            if isinstance(result, Refused):
                self.proposals["refused"] += 1
                continue
            self.proposals["proposed"] += 1
            out[component] = result.bundle.text_of(target)
        return out
