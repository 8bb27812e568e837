"""The two arms of a paired gate: incumbent and candidate answers for the same draws, as rows.

The incumbent's samples come from the BaselineCache when present, else they are drawn fresh (child run
``g<k>.inc``) and cached; the candidate's are always fresh (``g<k>.cand``). A side still INFRA after
the rollout's own re-asks makes the outcome INFRA. Every outcome is written as a
``GateObservationRow`` with the wealth after it.

A side the server refused (``RequestRefused``: its request was over a body, image or token limit)
makes the outcome INFRA too, never a loss: the gate must not learn the server's limit. The arms
count such draws (:attr:`Arms.refused`) for the decision's evidence.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from skillharness.agent import Prediction, refusal_of
from skillharness.data import Pool
from skillharness.infer import Draw, single_error
from skillharness.skills import Bundle
from skillharness.store import GateObservationRow, RunKind
from skillharness.train.gate import Ladder, PairedOutcome
from skillharness.train.state.context import TrainContext
from skillharness.train.validate.baseline_cache import BaselineCache

__all__ = ["GATE_POOL", "GUARD_DRAW_BASE", "Arms", "observation_rows", "paired_outcomes", "wealth_after"]

GATE_POOL = Pool.VAL
# Guard observations share the gate's table; their draw indexes start here, far past any target
# draw, so that a replay writes each to the same row whatever the number of target draws used.
GUARD_DRAW_BASE = 1_000_000


class Arms:
    """Paired outcomes of one gate: cached or fresh incumbent samples, fresh candidate samples."""

    def __init__(self, ctx: TrainContext, incumbent: Bundle, candidate: Bundle, gate_index: int) -> None:
        self.ctx = ctx
        self.incumbent = incumbent
        self.candidate = candidate
        self.prefix = f"g{gate_index:04d}"
        self.cache = BaselineCache(ctx.store, ctx.sampling_hash, scope=ctx.baseline_scope)
        # Draws a side of which the server refused: by arm, on both arms, and either (an INFRA outcome).
        self.refused = {"incumbent": 0, "candidate": 0, "both": 0, "draws": 0}
        self._refused_keys: dict[str, set[tuple[str, int]]] = {"incumbent": set(), "candidate": set()}

    def _note_refused(self, arm: str, predictions: Sequence[Prediction]) -> None:
        self._refused_keys[arm] |= {(p.question_id, p.sample_idx) for p in predictions if refusal_of(p)}

    def _count_refused(self, draws: Sequence[Draw]) -> None:
        for q, s in draws:
            inc, cand = ((q.question_id, s) in self._refused_keys[arm] for arm in ("incumbent", "candidate"))
            self.refused["incumbent"] += inc
            self.refused["candidate"] += cand
            self.refused["both"] += inc and cand
            self.refused["draws"] += inc or cand

    async def _incumbent(
        self, draws: Sequence[Draw], check_stop: Callable[[], None] | None
    ) -> list[bool | None]:
        cached = await self.cache.alookup(self.incumbent, draws)
        missing = list(
            {(q.question_id, s): (q, s) for q, s in draws if (q.question_id, s) not in cached}.values()
        )
        fresh: dict[tuple[str, int], bool | None] = {}
        if missing:
            predictions = await self.ctx.rollout(
                self.incumbent,
                missing,
                f"{self.prefix}.inc",
                kind=RunKind.GATE,
                pool=GATE_POOL,
                check_stop=check_stop,
            )
            await self.cache.arecord(self.incumbent, missing, predictions)
            self._note_refused("incumbent", predictions)
            fresh = {(p.question_id, p.sample_idx): p.correct for p in predictions}
        return [
            cached[key].correct if (key := (q.question_id, s)) in cached else fresh.get(key) for q, s in draws
        ]

    async def _candidate(
        self, draws: Sequence[Draw], check_stop: Callable[[], None] | None
    ) -> list[bool | None]:
        predictions = await self.ctx.rollout(
            self.candidate,
            draws,
            f"{self.prefix}.cand",
            kind=RunKind.GATE,
            pool=GATE_POOL,
            check_stop=check_stop,
        )
        self._note_refused("candidate", predictions)
        return [p.correct for p in predictions]

    async def outcomes(
        self, draws: Sequence[Draw], check_stop: Callable[[], None] | None = None
    ) -> list[PairedOutcome]:
        """One paired outcome per draw (each rollout has asked its INFRA draws again, see
        ``TrainContext.rollout``); a side still INFRA makes the outcome INFRA. With ``check_stop``
        (the budget) each arm is asked a stage's worth of draws at a time, checking in between."""
        # Both arms at once: a stage then waits on one slow tail (a retried draw), not on two.
        try:
            async with asyncio.TaskGroup() as group:
                inc_task = group.create_task(self._incumbent(draws, check_stop))
                cand_task = group.create_task(self._candidate(draws, check_stop))
        except BaseExceptionGroup as errors:
            raise single_error(errors) from None
        inc, cand = inc_task.result(), cand_task.result()
        self._count_refused(draws)
        return [PairedOutcome(c, i) for c, i in zip(cand, inc, strict=True)]


async def paired_outcomes(
    ctx: TrainContext, incumbent: Bundle, candidate: Bundle, draws: Sequence[Draw], *, gate_index: int
) -> list[PairedOutcome]:
    """Paired outcomes of ``draws`` exactly as a gate gets them (cache, fresh samples, INFRA retries).

    For other acceptance rules run on the same pipeline (``benchmarks/gate.py``); writes no ledger row.
    """
    return await Arms(ctx, incumbent, candidate, gate_index).outcomes(draws)


def observation_rows(
    ctx: TrainContext,
    gate_index: int,
    start: int,
    draws: Sequence[Draw],
    outcomes: Sequence[PairedOutcome],
    wealth: Sequence[tuple[float, float]],
    arm: str,
) -> list[GateObservationRow]:
    return [
        GateObservationRow(
            train_run_id=ctx.run_id,
            gate_index=gate_index,
            draw_index=start + i,
            question_id=q.question_id,
            task_type=q.task_type,
            sample_idx=s,
            arm=arm,
            candidate=None if o.candidate is None else int(o.candidate),
            incumbent=None if o.incumbent is None else int(o.incumbent),
            wealth=w,
            harm_wealth=h,
        )
        for i, ((q, s), o, (w, h)) in enumerate(zip(draws, outcomes, wealth, strict=True))
    ]


def wealth_after(ladder: Ladder, outcomes: Sequence[PairedOutcome], before: int) -> list[tuple[float, float]]:
    """Wealth after each outcome of a stage; an INFRA outcome leaves it where it was."""
    up, down = ladder.wealth_path()
    current = (up[before - 1], down[before - 1]) if before else (1.0, 1.0)
    out: list[tuple[float, float]] = []
    for o in outcomes:
        if o.d is not None:
            current = (up[before], down[before])
            before += 1
        out.append(current)
    return out
