"""Answering many (question, sample) pairs at a bounded concurrency.

A fixed pool of workers pulls from one iterator, so a 900-question run holds about ``concurrency``
questions in memory, not 900 pending tasks. :meth:`Agent.answer` never raises for a question's
own failure, so one question cannot stop the others; cancelling the batch cancels every worker.

``concurrency`` bounds the conversations in progress (so the model calls), not the questions
waiting for their prediction to be committed: a few spare workers start the next conversation
meanwhile, so the model does not sit idle behind the store (a commit took 7-20 ms per question,
about 1 % of an infer run's time; docs/benchmarks.md, "infer_e2e").
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable

from skillharness.agent.loop import Agent
from skillharness.agent.ports import TraceSink
from skillharness.agent.records import Prediction, TraceStep
from skillharness.data.questions import Question

__all__ = ["answer_all"]

# Workers per turn beyond ``concurrency``: one spare for every four turns (at least one).
_TURNS_PER_SPARE = 4


class _Turn:
    """The sink one conversation writes to: its first prediction hands its turn to the next one,
    unless it is one that stops the batch (then no conversation starts behind it)."""

    def __init__(
        self, sink: TraceSink, turns: asyncio.Semaphore, stops: Callable[[Prediction], bool]
    ) -> None:
        self._sink = sink
        self._turns = turns
        self._stops = stops
        self._held = True

    async def write_step(self, step: TraceStep) -> None:
        await self._sink.write_step(step)

    async def write_prediction(self, prediction: Prediction) -> None:
        if not self._stops(prediction):
            self.hand_on()
        await self._sink.write_prediction(prediction)

    def hand_on(self) -> None:
        if self._held:
            self._held = False
            self._turns.release()


def _never(prediction: Prediction) -> bool:
    return False


async def answer_all(
    agent: Agent,
    work: Iterable[tuple[Question, int]],
    *,
    run_id: str,
    sink: TraceSink,
    concurrency: int,
    on_done: Callable[[Prediction], None] | None = None,
    stops: Callable[[Prediction], bool] | None = None,
) -> list[Prediction]:
    """Answer every ``(question, sample_idx)`` in ``work``; return the predictions in finishing order.

    Args:
        agent: the agent (bundle, model, sources, config).
        work: the pairs to answer (a resume passes only the pairs not yet final).
        run_id: the run the predictions and traces belong to.
        sink: where steps and predictions are written as they happen (usually a RunLog).
        concurrency: questions in flight at once.
        on_done: called after each prediction is written (progress display, counters); it may
            raise to stop the batch.
        stops: True for a prediction that will stop the batch (``on_done`` raises for it): it keeps
            its turn, so no other conversation starts while it is committed and checked.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    stopping = stops or _never
    pending = iter(work)
    results: list[Prediction] = []
    turns = asyncio.Semaphore(concurrency)

    async def worker() -> None:
        for question, sample_idx in pending:  # one shared iterator: each pair is taken once
            await turns.acquire()
            turn = _Turn(sink, turns, stopping)
            # Only on cancellation does answer raise: the batch is ending, so the turn stays taken.
            prediction = await agent.answer(question, run_id=run_id, sample_idx=sample_idx, sink=turn)
            results.append(prediction)
            if on_done is not None:
                on_done(prediction)
            turn.hand_on()  # already handed on unless it stops the batch and on_done did not stop it

    async with asyncio.TaskGroup() as group:
        for index in range(concurrency + max(1, concurrency // _TURNS_PER_SPARE)):
            group.create_task(worker(), name=f"agent-worker-{index}")
    return results
