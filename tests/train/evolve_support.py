"""Helpers of the evolution tests: a context on its own loop thread, case packs, model wrappers."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from collections.abc import Callable, Coroutine, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from train_support import train_context, write_train_config

from bench_support import make_bench
from skillharness.errors import TransientLLMError
from skillharness.llm.roles import Role
from skillharness.llm.types import ChatModel, ChatRequest, ChatResponse
from skillharness.sim import SimConfig, SimServer
from skillharness.sim.config import EvolveConfig as SimEvolveConfig
from skillharness.skills import Bundle, EditTarget
from skillharness.store import RunKind
from skillharness.train.state.context import TrainContext
from skillharness.train.state.records import Case, CasePack, Cause, Diagnosis

T = TypeVar("T")


class LoopThread:
    """An event loop in a daemon thread, so sync tests (and hypothesis) can share one context."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 120.0) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


class RecordingModel:
    """Passes every request on unchanged and keeps it (the request the simulator received)."""

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        return await self.inner.complete(request)

    def of_role(self, role: Role) -> list[ChatRequest]:
        return [r for r in self.requests if r.role is role]


Script = Callable[[ChatRequest], str | None]


class ScriptedModel:
    """Answers the scripted roles itself (None from a script: the call fails); others go on.

    The single collaborator of the unit under test that is replaced: a scripted evolve or rank
    reply, so a test can send exactly the reply it needs.
    """

    def __init__(self, inner: ChatModel, scripts: Mapping[Role, Script]) -> None:
        self.inner = inner
        self.scripts = dict(scripts)
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        script = self.scripts.get(request.role)
        if script is None:
            return await self.inner.complete(request)
        content = script(request)
        if content is None:
            raise TransientLLMError("scripted failure")
        return ChatResponse(content=content, finish_reason="stop")


def with_model(ctx: TrainContext, model: ChatModel, **config: Any) -> TrainContext:
    """``ctx`` whose role caller sends through ``model`` (and whose train config has ``config``)."""
    caller = dataclasses.replace(ctx.caller, model=model)
    train = ctx.config.model_copy(update=config) if config else ctx.config
    return dataclasses.replace(ctx, caller=caller, config=train)


def with_evolve(ctx: TrainContext, **evolve: Any) -> TrainContext:
    """``ctx`` with ``train.evolve`` fields replaced."""
    section = ctx.config.evolve.model_copy(update=evolve)
    return dataclasses.replace(ctx, config=ctx.config.model_copy(update={"evolve": section}))


def user_text(request: ChatRequest) -> str:
    return "\n".join(str(m.get("content", "")) for m in request.messages)


async def wrong_cases(ctx: TrainContext, bundle: Bundle, samples: int = 3) -> list[Case]:
    """The wrong answers of a rollout of ``bundle`` on the train pool (one case per question)."""
    draws = [(q, s) for q in ctx.train_questions for s in range(samples)]
    predictions = await ctx.rollout(bundle, draws, "evolve-test-rollout", kind=RunKind.TRAIN, pool="train")
    by_id = {q.question_id: q for q in ctx.train_questions}
    cases: dict[str, Case] = {}
    for p in predictions:
        if p.correct is False and p.question_id not in cases:
            cases[p.question_id] = Case(question=by_id[p.question_id], prediction=p, trace=())
    return list(cases.values())


def defect_pack(cases: list[Case], task_type: str, sim: SimServer, bundle: Bundle) -> CasePack:
    """A skill pack of the ``task_type`` cases whose question needs an insight the skill lacks."""
    world = sim.world
    chosen = []
    for case in cases:
        q = case.question
        if q.task_type != task_type:
            continue
        if not world.missing_insights(q, bundle.skill(q.task_type).render()):
            continue
        summary = f"1. get_frames(0.0, 10.0, 4) -> 4 frames\n2. submit_answer({case.prediction.answer})"
        chosen.append(
            Diagnosis(
                case=case,
                cause=Cause.DEFECT,
                target=EditTarget.skill(q.task_type),
                reason="The skill does not say how to approach this kind of question.",
                trace_summary=summary,
            )
        )
    return CasePack(target=EditTarget.skill(task_type), cases=tuple(chosen))


def best_task_type(cases: list[Case], sim: SimServer, bundle: Bundle) -> str:
    """The task type with the most wrong cases that need a missing insight (ties: alphabetical)."""
    counts: dict[str, int] = {}
    for case in cases:
        q = case.question
        if sim.world.missing_insights(q, bundle.skill(q.task_type).render()):
            counts[q.task_type] = counts.get(q.task_type, 0) + 1
    return min(counts, key=lambda t: (-counts[t], t))


@dataclass(frozen=True)
class Env:
    """A training context over a small bench and a simulator, with a defect pack of one task type."""

    runner: LoopThread
    sim: SimServer
    ctx: TrainContext
    bundle: Bundle
    cases: list[Case]
    task_type: str
    pack: CasePack


def evolve_env(base: Path) -> Iterator[Env]:
    """Build an :class:`Env` under ``base`` (a generator: use it as a module fixture's body)."""
    bench = make_bench(base / "bench")
    # Every proposed edit states an insight of the cases' task type: the oracle can tell its worth.
    sim_config = SimConfig(
        seed=3, evolve=SimEvolveConfig(insight_rate=1.0, harmful_rate=0.0, rank_informativeness=1.0)
    )
    with SimServer(sim_config, questions=bench.questions) as sim:
        runner = LoopThread()
        # The ranked design under test: three sampled candidates (at temperature 0 they would be one,
        # a server answers alike) and the rank role choosing among them or declining them all from
        # the first step (the defaults run the rank trial first, and ranking declines only when asked).
        sampling = {
            "roles": {"evolve": {"temperature": 0.7}},
            "evolve": {"candidates": 3, "rank": True, "rank_may_decline": True},
        }
        config = write_train_config(base / "exp", bench, sim, train=sampling)
        manager = train_context(config, run_id="evolve-test")
        ctx = runner.run(manager.__aenter__())
        try:
            bundle = Bundle.load(bench.bundle)
            cases = runner.run(wrong_cases(ctx, bundle))
            task_type = best_task_type(cases, sim, bundle)
            pack = defect_pack(cases, task_type, sim, bundle)
            yield Env(runner, sim, ctx, bundle, cases, task_type, pack)
        finally:
            runner.run(manager.__aexit__(None, None, None))
            runner.close()
