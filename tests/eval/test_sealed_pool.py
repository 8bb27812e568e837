"""The test pool is sealed from training: the training context holds none of it and asks none of it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from eval_support import asked_questions
from train_support import train_context, write_train_config

from bench_support import Bench
from skillharness.data import Pool, Question
from skillharness.data.pools import load_pools
from skillharness.sim import SimServer
from skillharness.skills import Bundle
from skillharness.store import RunKind


async def test_a_training_context_holds_and_asks_no_test_question(
    tmp_path: Path, holdout_bench: Bench, holdout_sim: SimServer
) -> None:
    pools = load_pools(holdout_bench.pools).questions
    test_ids = set(pools[Pool.TEST])
    path = write_train_config(tmp_path, holdout_bench, holdout_sim)
    with asked_questions(holdout_sim) as log:
        async with train_context(path, run_id="train-sealed") as ctx:
            held: set[str] = set()
            for field in dataclasses.fields(ctx):
                value = getattr(ctx, field.name)
                if isinstance(value, tuple):  # questions, or units of questions
                    items = [m for v in value for m in (v if isinstance(v, tuple) else (v,))]
                    held |= {q.question_id for q in items if isinstance(q, Question)}
            assert held == set(pools[Pool.TRAIN]) | set(pools[Pool.VAL])
            bundle = ctx.session.agent_config.bundle
            assert bundle is not None
            initial = Bundle.load(bundle)
            for name, questions in (("train", ctx.train_questions), ("val", ctx.val_questions)):
                draws = [(q, 0) for q in questions]
                await ctx.rollout(initial, draws, f"sealed.{name}", kind=RunKind.GATE, pool=name)
    assert set(log.asked) == held
    assert not set(log.asked) & test_ids
