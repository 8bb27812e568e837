"""The BaselineCache: the incumbent's samples, reused by every gate that pairs against them.

A sample is keyed by the incumbent's relevant-text hash for the question's task type, the
question, a hash of the sampling parameters and the sample index. After an accepted skill edit
only that class's key moves, so only its samples go stale; every other class keeps its own. The
cache lives in the store's ``baseline_samples`` table.

Whose samples a run may reuse follows ``cache.share_across_runs``, as the response cache does
(``skillharness.infer.cache_policy.reuse_salt``). A run whose scope is None shares the table with
every other such run on the store; any other scope (its run id by default when sampling, or
``cache.salt``) is mixed into the stored sampling hash, so the run reads back only samples
recorded under that scope. Run B never pairs its candidates against run A's incumbent samples
unless the config says runs may share.

An infrastructure failure is not a sample of the incumbent: it is never written (audit P1-4).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence

from skillharness.agent import Prediction, PredictionStatus
from skillharness.infer import Draw
from skillharness.skills import Bundle
from skillharness.store import BaselineSample, RunStore, content_hash

__all__ = ["BaselineCache"]


class BaselineCache:
    """Incumbent samples on one store under one sampling hash, in one scope (None: shared)."""

    def __init__(self, store: RunStore, sampling_hash: str, *, scope: str | None) -> None:
        self.store = store
        self.sampling_hash = (
            sampling_hash if scope is None else content_hash({"sampling_hash": sampling_hash, "scope": scope})
        )

    def lookup(self, incumbent: Bundle, draws: Iterable[Draw]) -> dict[tuple[str, int], BaselineSample]:
        """Cached samples of ``incumbent`` for ``draws``, by ``(question_id, sample_idx)``."""
        wanted = {(q.question_id, s): q.task_type for q, s in draws}
        found: dict[tuple[str, int], BaselineSample] = {}
        for task_type in sorted(set(wanted.values())):
            rows = self.store.select(
                BaselineSample,
                relevant_text_hash=incumbent.relevant_hash(task_type),
                sampling_hash=self.sampling_hash,
            )
            found.update(
                {(r.question_id, r.sample_idx): r for r in rows if (r.question_id, r.sample_idx) in wanted}
            )
        return found

    def record(self, incumbent: Bundle, draws: Sequence[Draw], predictions: Sequence[Prediction]) -> int:
        """Store the final (non-infra) predictions of ``draws``; returns how many were written."""
        samples = [
            BaselineSample(
                relevant_text_hash=incumbent.relevant_hash(q.task_type),
                question_id=q.question_id,
                sampling_hash=self.sampling_hash,
                sample_idx=s,
                correct=bool(p.correct),
                answer=p.answer,
                run_id=p.run_id,
            )
            for (q, s), p in zip(draws, predictions, strict=True)
            if p.status is not PredictionStatus.INFRA_ERROR and p.correct is not None
        ]
        self.store.upsert(samples)
        return len(samples)

    async def alookup(
        self, incumbent: Bundle, draws: Sequence[Draw]
    ) -> dict[tuple[str, int], BaselineSample]:
        """:meth:`lookup` off the event loop."""
        return await asyncio.to_thread(self.lookup, incumbent, draws)

    async def arecord(
        self, incumbent: Bundle, draws: Sequence[Draw], predictions: Sequence[Prediction]
    ) -> int:
        """:meth:`record` off the event loop."""
        return await asyncio.to_thread(self.record, incumbent, draws, predictions)
