"""A gate's draw plan: which (question, sample index) pairs it observes, fixed by (seed, gate index).

The plan is a pure function of the run seed, the gate index, the drawable questions and the
sampling temperature, so an interrupted gate replays exactly the same draws (and reads back the
predictions it already stored). The two modes (see docs/gate.md, "Validity in both modes"):

- **temperature > 0**: each draw picks a question uniformly *with replacement* and gives it the
  next sample index of that question in this gate, counting from the gate's ``first_sample``.
  Every observation is a fresh, independent sample; the observations are i.i.d. and the claim is
  about expected accuracy on the val set. The training loop gives every gate a ``first_sample``
  past every index an earlier gate may have used (``DrawPlan.samples_end``, kept in the
  checkpoint), so a later gate never replays an earlier one's samples, not even for an identical
  candidate or an unchanged incumbent.
- **temperature 0**: a second sample of a question would replay the first (audit P1-1), so each
  question is drawn at most once, in a random order, and the budget is the number of distinct
  questions (capped at ``n_max``).

Sample indices are numbered per question from the gate's ``first_sample``: the checkpoint's
run-wide ``next_sample`` moves past every index a gate may use, so no two gates share a sample, and
the end-of-training val score draws at the counter's final value, which no decision saw (see
``train/validate/final_score.py``).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from skillharness.data import Question
from skillharness.errors import ConfigError
from skillharness.infer import Draw
from skillharness.llm import SamplingParams

__all__ = [
    "DrawPlan",
    "draw_temperature",
    "gate_budget",
    "plan_draws",
    "plan_guard_draws",
]


@dataclass(frozen=True)
class DrawPlan:
    """A gate's draws in order; the ladder consumes a prefix, skipped INFRA draws are replaced."""

    draws: tuple[Draw, ...]
    distinct: int  # distinct questions the claim rests on
    budget: int  # observation budget of the ladder (ties included, INFRA excluded)
    with_replacement: bool
    first_sample: int = 0  # the gate's first sample index (with replacement; else every index is 0)

    def samples_end(self, guard_draws: int) -> int:
        """The first sample index past every index this gate may use, its guard's included.

        The next gate starts there. With replacement, a question's indices run from
        ``first_sample`` up through its draws in the plan, and the guard continues after them for
        at most ``guard_draws`` more; without replacement every index is 0 and nothing is used up.
        """
        if not self.with_replacement or not self.draws:
            return self.first_sample
        return max(s for _, s in self.draws) + 1 + guard_draws


def draw_temperature(sampling: SamplingParams) -> float:
    """The temperature the draw plan assumes: 0 unless two sample indices are independent draws.

    An unset temperature is refused (:class:`ConfigError` naming ``agent.sampling.temperature``).

    With a fixed request ``seed`` a server answers every sample index of a prompt alike (it never
    sees the index; the simulator does the same), so such samples are replays: the gate then
    draws each question at most once, as at temperature 0. A ``per_draw`` seed is not fixed: each
    sample index of a question gets its own seed, so its samples are fresh draws.
    """
    if sampling.temperature is None:
        # The server's default is unknown: greedy to the gate, sampling to the cache. Refused
        # rather than guessed, since the two disagree on whether a second sample is a replay.
        raise ConfigError(
            "agent.sampling.temperature is not set: training needs it to know whether a second "
            "sample of a question is a fresh draw (set it, e.g. 0.7, or 0 for greedy answers)",
            key="agent.sampling.temperature",
        )
    if sampling.seed is not None and not sampling.per_draw:
        return 0.0
    return sampling.temperature


def gate_budget(distinct: int, *, temperature: float, n_max: int) -> int:
    """Observations a gate can use: ``n_max`` when sampling, else one per distinct question."""
    if distinct == 0:
        return 0
    return n_max if temperature > 0 else min(n_max, distinct)


def _rng(seed: int, gate_index: int, salt: str) -> np.random.Generator:
    # A stable hash: Python's hash() of a str changes between processes, a replay must not.
    digest = hashlib.sha256(f"{seed}\x00{gate_index}\x00{salt}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "big"))


def _ordered(questions: Iterable[Question]) -> list[Question]:
    # Sorted by id: the plan must not depend on the order the caller happened to list them in.
    return sorted({q.question_id: q for q in questions}.values(), key=lambda q: q.question_id)


def plan_draws(
    questions: Iterable[Question],
    *,
    seed: int,
    gate_index: int,
    temperature: float,
    n_max: int,
    spare: int | None = None,
    salt: str = "target",
    first_sample: int = 0,
) -> DrawPlan:
    """The gate's plan; with replacement it holds ``n_max + spare`` draws (spare replaces INFRA)
    whose sample indices count from ``first_sample``."""
    pool = _ordered(questions)
    budget = gate_budget(len(pool), temperature=temperature, n_max=n_max)
    if not pool:
        return DrawPlan((), 0, 0, temperature > 0, first_sample)
    rng = _rng(seed, gate_index, salt)
    if temperature <= 0:
        order = rng.permutation(len(pool))
        return DrawPlan(tuple((pool[i], 0) for i in order), len(pool), budget, False, first_sample)
    length = n_max + (n_max if spare is None else spare)
    picks = rng.integers(0, len(pool), size=length)
    seen: Counter[str] = Counter()
    draws: list[Draw] = []
    for i in picks:
        q = pool[int(i)]
        draws.append((q, first_sample + seen[q.question_id]))
        seen[q.question_id] += 1
    return DrawPlan(tuple(draws), len(pool), budget, True, first_sample)


def plan_guard_draws(
    questions: Iterable[Question],
    *,
    seed: int,
    gate_index: int,
    temperature: float,
    n: int,
    used: Sequence[Draw],
    label: str,
    first_sample: int = 0,
) -> tuple[Draw, ...]:
    """Up to ``n`` guard draws of one class, disjoint from the gate's ``used`` draws.

    The guard runs only after an accept, so it must not reuse the samples the accept rests on.
    With replacement, each question's sample indices continue after those of ``used`` (from the
    gate's ``first_sample`` for a question ``used`` lacks); at temperature 0 only questions not in
    ``used`` are drawn (fewer than ``n`` when few remain).
    """
    pool = _ordered(questions)
    if not pool or n <= 0:
        return ()
    rng = _rng(seed, gate_index, f"guard\x00{label}")
    if temperature <= 0:
        taken = {q.question_id for q, _ in used}
        fresh = [q for q in pool if q.question_id not in taken]
        order = rng.permutation(len(fresh))[:n]
        return tuple((fresh[i], 0) for i in order)
    next_idx: dict[str, int] = {}
    for q, s in used:
        next_idx[q.question_id] = max(next_idx.get(q.question_id, first_sample), s + 1)
    draws: list[Draw] = []
    for i in rng.integers(0, len(pool), size=n):
        q = pool[int(i)]
        s = next_idx.get(q.question_id, first_sample)
        draws.append((q, s))
        next_idx[q.question_id] = s + 1
    return tuple(draws)
