"""Answering many (question, sample) pairs at a bounded concurrency.

A fixed pool of workers pulls from one iterator, so a 900-question run holds ``concurrency``
questions in memory, not 900 pending tasks. :meth:`Agent.answer` never raises for a question's
own failure, so one question cannot stop the others; cancelling the batch cancels every worker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable

from skillharness.agent.loop import Agent
from skillharness.agent.ports import TraceSink
from skillharness.agent.records import Prediction
from skillharness.data.questions import Question

__all__ = ["answer_all"]


async def answer_all(
    agent: Agent,
    work: Iterable[tuple[Question, int]],
    *,
    run_id: str,
    sink: TraceSink,
    concurrency: int,
    on_done: Callable[[Prediction], None] | None = None,
) -> list[Prediction]:
    """Answer every ``(question, sample_idx)`` in ``work``; return the predictions in finishing order.

    Args:
        agent: the agent (bundle, model, sources, config).
        work: the pairs to answer (a resume passes only the pairs not yet final).
        run_id: the run the predictions and traces belong to.
        sink: where steps and predictions are written as they happen (usually a RunLog).
        concurrency: questions in flight at once.
        on_done: called after each prediction is written (progress display, counters).
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    pending = iter(work)
    results: list[Prediction] = []

    async def worker() -> None:
        for question, sample_idx in pending:  # one shared iterator: each pair is taken once
            prediction = await agent.answer(question, run_id=run_id, sample_idx=sample_idx, sink=sink)
            results.append(prediction)
            if on_done is not None:
                on_done(prediction)

    async with asyncio.TaskGroup() as group:
        for index in range(concurrency):
            group.create_task(worker(), name=f"agent-worker-{index}")
    return results
